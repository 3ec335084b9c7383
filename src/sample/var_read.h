#pragma once
// Reading and writing a variable through the stores of a Ctx: var(), the converters that take
// a variable as an argument (add(txn.x), concat(,txn.x), strcmp(txn.x) ...), and the set-var
// and unset-var actions and converters.
#include "sample/context.h"
#include "sample/vars.h"

namespace sluice::sample {

// Fills `out` with the value of `r` (strings point into the store, or into the scratch for
// proc.* variables); false when the variable is not set or its scope is not here.
inline bool read_var(const VarRef& r, const Ctx& ctx, Sample& out) {
  VarStore* st = nullptr;
  switch (r.scope) {
    case Scope::kProc: return ProcVars::instance().get(r.id, out, ctx.sc());
    case Scope::kSess: st = ctx.sess_vars; break;
    case Scope::kTxn: st = ctx.txn_vars; break;
    case Scope::kReq: st = ctx.req_vars; break;
    case Scope::kRes: st = ctx.res_vars; break;
    case Scope::kCheck: st = ctx.check_vars; break;
    default: break;
  }
  if (!st) return false;
  const VarValue* v = st->get(r.id);
  if (!v) return false;
  out = v->sample();
  return true;
}

// The store of `r`'s scope in `ctx` (null for proc, which has its own, and for a scope that
// does not exist here).
inline VarStore* store_of(const VarRef& r, const Ctx& ctx) {
  switch (r.scope) {
    case Scope::kSess: return ctx.sess_vars;
    case Scope::kTxn: return ctx.txn_vars;
    case Scope::kReq: return ctx.req_vars;
    case Scope::kRes: return ctx.res_vars;
    case Scope::kCheck: return ctx.check_vars;
    default: return nullptr;
  }
}

// Stores `s` into `r` under the set-var conditions `conds`; false when refused or when the
// scope does not exist here.
inline bool write_var(const VarRef& r, const Ctx& ctx, const Sample& s, uint16_t conds = 0) {
  if (r.scope == Scope::kProc) return ProcVars::instance().set(r.id, s, conds);
  VarStore* st = store_of(r, ctx);
  return st && st->set(r.id, s, conds);
}

inline void unset_var(const VarRef& r, const Ctx& ctx) {
  if (r.scope == Scope::kProc) {
    ProcVars::instance().unset(r.id);
  } else if (VarStore* st = store_of(r, ctx)) {
    st->unset(r.id);
  }
}

// Reads `r` and casts it to `to`; false when unset or when the cast fails.
inline bool read_var_as(const VarRef& r, Type to, const Ctx& ctx, Sample& out) {
  return read_var(r, ctx, out) && cast(out, to, ctx.sc());
}

}  // namespace sluice::sample

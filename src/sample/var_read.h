#pragma once
// Reading a variable from the stores of a Ctx, for the converters that take a variable as an
// argument (add(txn.x), concat(,txn.x), strcmp(txn.x) ...), as var() reads it.
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
    default: break;
  }
  if (!st) return false;
  const VarValue* v = st->get(r.id);
  if (!v) return false;
  out = v->sample();
  return true;
}

// Reads `r` and casts it to `to`; false when unset or when the cast fails.
inline bool read_var_as(const VarRef& r, Type to, const Ctx& ctx, Sample& out) {
  return read_var(r, ctx, out) && cast(out, to, ctx.sc());
}

}  // namespace sluice::sample

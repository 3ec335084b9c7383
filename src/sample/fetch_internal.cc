// Internal-state fetches (HAProxy's section 7.3.2): constants, variables, the process.
#include "sample/tables.h"

namespace sluice::sample::tables {

namespace {

bool f_always_true(const Arg*, Sample& out, const Ctx&, FetchIter&) {
  out = Sample::boolean(true);
  return true;
}

bool f_always_false(const Arg*, Sample& out, const Ctx&, FetchIter&) {
  out = Sample::boolean(false);
  return true;
}

bool f_str(const Arg* a, Sample& out, const Ctx&, FetchIter&) {
  out = Sample::string(a[0].str, kConst);
  return true;
}

bool f_int(const Arg* a, Sample& out, const Ctx&, FetchIter&) {
  out = Sample::integer(a[0].sint);
  return true;
}

bool f_bool(const Arg* a, Sample& out, const Ctx&, FetchIter&) {
  out = Sample::boolean(a[0].sint != 0);
  return true;
}

// var(<name>[,<default>])
bool f_var(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  const VarRef& r = a[0].var;
  VarStore* st = nullptr;
  switch (r.scope) {
    case Scope::kProc:
      if (ProcVars::instance().get(r.id, out, ctx.sc())) return true;
      break;
    case Scope::kSess: st = ctx.sess_vars; break;
    case Scope::kTxn: st = ctx.txn_vars; break;
    case Scope::kReq: st = ctx.req_vars; break;
    case Scope::kRes: st = ctx.res_vars; break;
    default: break;
  }
  if (st) {
    if (const VarValue* v = st->get(r.id)) {
      out = v->sample();
      return true;
    }
  }
  if (a[1].given) {
    out = Sample::string(a[1].str, kConst);
    return true;
  }
  return false;
}

constexpr FetchDef kFetches[] = {
    {"always_false", f_always_false, no_args(), nullptr, Type::kBool, kUseInternal},
    {"always_true", f_always_true, no_args(), nullptr, Type::kBool, kUseInternal},
    {"bool", f_bool, args(1, ArgType::kSint), nullptr, Type::kBool, kUseInternal},
    {"int", f_int, args(1, ArgType::kSint), nullptr, Type::kSint, kUseInternal},
    {"str", f_str, args(1, ArgType::kStr), nullptr, Type::kStr, kUseInternal},
    {"var", f_var, args(1, ArgType::kVar, ArgType::kStr), nullptr, Type::kAny, kUseInternal},
};

}  // namespace

std::span<const FetchDef> internal_fetches() { return kFetches; }

}  // namespace sluice::sample::tables

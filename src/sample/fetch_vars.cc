// dump_all_vars([<scope>][,<prefix>][,<delimiter>]) (HAProxy's section 7.3.2): every variable
// of one scope as `name=value` items, as HAProxy 3.5 writes them:
//   - the scope is sess, txn (the default, also for an empty argument), req, res, proc or check
//     (which request rules never have: nothing); the prefix keeps the variables whose name after
//     the scope starts with it; the delimiter defaults to ", ";
//   - strings and methods are quoted, with '"', '\', CR, LF and backspace escaped and the value
//     ending at a NUL byte; binary values are upper-case hex; integers decimal; booleans true or
//     false; addresses as text;
//   - no variable gives an empty string. HAProxy lists them in the order of a tree keyed by a
//     per-process random hash of their names, i.e. in no order one can rely on; sluice lists
//     them in the order they were first set.
#include <string>
#include <string_view>

#include "sample/tables.h"
#include "sample/var_read.h"

namespace sluice::sample::tables {

namespace {

std::string check_dump(Arg* a, const ParseCtx& pc) {
  static constexpr struct {
    std::string_view name;
    Scope scope;
  } kScopes[] = {{"sess", Scope::kSess}, {"txn", Scope::kTxn},   {"req", Scope::kReq},
                 {"res", Scope::kRes},   {"proc", Scope::kProc}, {"check", Scope::kCheck}};
  std::string_view s = a[0].str.empty() ? std::string_view("txn") : std::string_view(a[0].str);
  bool found = false;
  for (const auto& k : kScopes) {
    if (s == k.name) {
      a[0].sint = static_cast<int64_t>(k.scope);
      found = true;
    }
  }
  if (!found)
    return "invalid scope '" + a[0].str + "', must be one of: sess, txn, req, res, proc";
  // The names the variables were interned in, not owned (they outlive the expression).
  VarNames* names = pc.var_names ? pc.var_names : &VarNames::global();
  a[0].obj = std::shared_ptr<const void>(std::shared_ptr<const void>(), names);
  return {};
}

void append_quoted(std::string& out, std::string_view v) {
  out += '"';
  for (char c : v) {
    if (c == '\0') break;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\r': out += "\\r"; break;
      case '\n': out += "\\n"; break;
      case '\b': out += "\\b"; break;
      default: out += c;
    }
  }
  out += '"';
}

void append_value(std::string& out, const VarValue& v) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  switch (v.type) {
    case Type::kStr:
    case Type::kMeth:
      append_quoted(out, v.data);
      break;
    case Type::kBin:
      for (char c : v.data) {
        auto b = static_cast<unsigned char>(c);
        out += kHex[b >> 4];
        out += kHex[b & 15];
      }
      break;
    case Type::kBool:
      out += v.sint ? "true" : "false";
      break;
    default:
      to_text(v.sample(), out);
      break;
  }
}

bool f_dump_all_vars(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  auto scope = static_cast<Scope>(a[0].sint);
  const auto* names = static_cast<const VarNames*>(a[0].obj.get());
  std::string_view prefix = a[1].str;
  std::string_view delim = a[2].str.empty() ? std::string_view(", ") : std::string_view(a[2].str);
  std::string& b = ctx.sc().next();
  bool first = true;
  auto add = [&](uint32_t id, const VarValue& v) {
    std::string_view full = names->name(id);
    std::size_t dot = full.find('.');
    std::string_view bare = dot == std::string_view::npos ? full : full.substr(dot + 1);
    if (bare.substr(0, prefix.size()) != prefix) return;
    if (!first) b += delim;
    first = false;
    b += full;
    b += '=';
    append_value(b, v);
  };
  if (scope == Scope::kProc) {
    ProcVars::instance().for_each(add);
  } else if (VarStore* st = store_of(VarRef{scope, 0}, ctx)) {
    st->for_each(add);
  }
  out = Sample::string(b);
  return true;
}

constexpr FetchDef kFetches[] = {
    {"dump_all_vars", f_dump_all_vars, args(0, ArgType::kStr, ArgType::kStr, ArgType::kStr),
     check_dump, Type::kStr, kUseInternal},
};

}  // namespace

std::span<const FetchDef> vars_fetches() { return kFetches; }

}  // namespace sluice::sample::tables

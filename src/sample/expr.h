#pragma once
// Sample expressions: `fetch[(args)][,converter[(args)]]...`, HAProxy's one rule language.
// Compiled once at parse time into an Expr (the fetch, its converters, their parsed arguments,
// the types checked); evaluated on a Ctx without allocating.
//
// Fetches and converters are tables of FetchDef / ConvDef (registry.cc gathers them from the
// fetch_*.cc and conv_*.cc files); adding one is adding a row and its function.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "sample/context.h"
#include "sample/sample.h"
#include "sample/vars.h"

namespace sluice::sample {

// Argument types (HAProxy's ARGT_*).
enum class ArgType : uint8_t {
  kNone,
  kStr,     // any text
  kSint,    // integer
  kVar,     // a variable name, `txn.x` (resolved to a VarRef)
  kBackend, // a backend name (checked by the parse context when it can)
  kServer,  // `[backend/]server`
  kFrontend,
  kRegex,   // compiled with the converter's or fetch's own check
  kMsk4,    // an IPv4 mask: `24` or `255.255.255.0`
  kMsk6,    // an IPv6 prefix length
  kIpv4,
  kIpv6,
  kTime,    // a duration with unit, in milliseconds
  kSize,    // a size with unit, in bytes
};
std::string_view arg_type_name(ArgType t);

// One parsed argument. Text arguments keep their text; integers, masks and addresses their
// value; `obj` is whatever a check function compiled (a regex, a table).
struct Arg {
  ArgType type = ArgType::kNone;
  bool given = false;          // false: an optional argument left out
  std::string str;
  int64_t sint = 0;
  in_addr v4{};
  in6_addr v6{};
  VarRef var;
  std::shared_ptr<const void> obj;
};

// How many arguments and of which types: `min` mandatory first, up to kMaxArgs.
constexpr int kMaxArgs = 5;
struct ArgSpec {
  uint8_t min = 0;
  uint8_t count = 0;
  ArgType types[kMaxArgs] = {};
};
// Helpers for the tables: args(), args(1, kStr), args(0, kStr, kSint) ...
constexpr ArgSpec no_args() { return {}; }
template <typename... T>
constexpr ArgSpec args(uint8_t min, T... t) {
  ArgSpec s;
  s.min = min;
  ArgType list[] = {t...};
  s.count = sizeof...(t);
  for (uint8_t i = 0; i < s.count; ++i) s.types[i] = list[i];
  return s;
}

// What a fetch keeps between the values of one multi-value fetch (hdr() in an ACL).
struct FetchIter {
  bool iterate = false;   // the caller wants every value (ACLs); else one value
  uint32_t pos = 0;       // the fetch's own cursor; 0 on the first call
  uint32_t aux = 0;
};

struct ParseCtx;
// A check run once the arguments are parsed: validates them (and may compile into Arg::obj).
// Returns an error text (HAProxy's) or empty.
using ArgCheck = std::string (*)(Arg* args, const ParseCtx& pc);

// A fetch: fills `out` and returns true, or false when it yields nothing. A multi-value
// fetch sets kNotLast on `out` while more follow and is called again with the same `it`.
using FetchFn = bool (*)(const Arg* args, Sample& out, const Ctx& ctx, FetchIter& it);
struct FetchDef {
  std::string_view name;
  FetchFn fn;
  ArgSpec spec;
  ArgCheck check;   // may be null
  Type out;
  uint32_t use;     // Use bits it reads
  // The default ACL match method (MatchMethod's name: "str", "int", "ip", "bool", "found",
  // "meth", "beg"...); empty: derived from `out`.
  std::string_view match = {};
};

// A converter: transforms `smp` in place (cast to `in` first); false: no sample.
using ConvFn = bool (*)(const Arg* args, Sample& smp, const Ctx& ctx);
struct ConvDef {
  std::string_view name;
  ConvFn fn;
  ArgSpec spec;
  ArgCheck check;   // may be null
  Type in;
  Type out;         // kAny: with `in` kAny, the input's type; else decided at run time
};

// Lookups over every table (registry.cc). Null when unknown.
const FetchDef* find_fetch(std::string_view name);
const ConvDef* find_conv(std::string_view name);
// Every fetch and converter name sluice provides, sorted (docs/config-compat.md's tables are
// checked against them).
std::vector<std::string_view> fetch_names();
std::vector<std::string_view> conv_names();
// HAProxy fetches and converters sluice does not provide, with why ("needs TLS", "needs stick
// tables"): refused with that reason instead of "unknown". Empty when not such a name.
std::string_view unsupported_fetch(std::string_view name);
std::string_view unsupported_conv(std::string_view name);

// The `acl(<name>[,<name>...])` fetch: the named ACLs of the proxy being parsed, ANDed, a `!`
// before a name negating it. ACLs belong to the rules module, which the sample module cannot
// see: it implements these interfaces, and while a proxy's lines are parsed its ACL registry
// is the parsing thread's resolver (AclResolverScope). As in HAProxy, an ACL must be declared
// before the line that names it.
class AclCall {
 public:
  virtual ~AclCall() = default;
  virtual bool eval(const Ctx& ctx) const = 0;
};
class AclResolver {
 public:
  virtual ~AclResolver() = default;
  // `names` as written ("is_a", "!is_b"), at most kMaxArgs. Null with *err (HAProxy's "ACL
  // 'x' not found") when one is unknown.
  virtual std::shared_ptr<const AclCall> resolve(const std::vector<std::string_view>& names,
                                                 std::string* err) const = 0;
};
// The parsing thread's resolver; null outside a proxy section (acl() then finds nothing).
const AclResolver* current_acl_resolver();
class AclResolverScope {
 public:
  explicit AclResolverScope(const AclResolver* r);
  ~AclResolverScope();
  AclResolverScope(const AclResolverScope&) = delete;
  AclResolverScope& operator=(const AclResolverScope&) = delete;

 private:
  const AclResolver* prev_;
};

// Where an expression is parsed.
struct ParseCtx {
  uint32_t avail = kAtAny;   // Use bits this place offers
  // Whether names given as arguments exist; null: not checked here.
  bool (*backend_exists)(const void* self, std::string_view name) = nullptr;
  bool (*server_exists)(const void* self, std::string_view backend, std::string_view server) = nullptr;
  bool (*frontend_exists)(const void* self, std::string_view name) = nullptr;
  const void* self = nullptr;
  // Variable names are interned here (vars.h); null: the process-wide registry.
  VarNames* var_names = nullptr;
};

class Expr {
 public:
  // Parses `text` from its start. Stops at the first character that cannot continue the
  // expression (end, blank, or `]` for a log format's `%[...]`) and says where in *end.
  // Errors are HAProxy's texts without location, e.g. "unknown fetch method 'foo'",
  // "unknown converter 'lowerx'", "converter 'add' cannot be applied",
  // "fetch method 'path' : expected ')' before '1)'".
  static base::Result<Expr> parse(std::string_view text, const ParseCtx& pc,
                                  std::size_t* end = nullptr);

  // Runs the fetch, then the converters, on `ctx`. False: no sample. With it.iterate the
  // caller loops while out.flags has kNotLast.
  bool eval(const Ctx& ctx, Sample& out, FetchIter& it) const;
  bool eval(const Ctx& ctx, Sample& out) const {
    FetchIter it;
    return eval(ctx, out, it);
  }
  // Evaluates and writes the result as text (appended); false when there is no sample.
  bool eval_text(const Ctx& ctx, std::string& out) const;

  Type type() const { return out_; }
  uint32_t use() const { return use_; }
  const FetchDef& fetch() const { return *fetch_; }
  bool has_converters() const { return !convs_.empty(); }
  const std::string& text() const { return text_; }
  // The name of the last step (the fetch, or the last converter), for callers' messages.
  std::string_view last_name() const;
  // The first fetch argument, for callers that special-case a fetch (hdr(name)).
  const Arg* fetch_args() const { return fargs_; }

 private:
  struct Step {
    const ConvDef* def = nullptr;
    Arg args[kMaxArgs];
  };
  const FetchDef* fetch_ = nullptr;
  Arg fargs_[kMaxArgs];
  std::vector<Step> convs_;
  Type out_ = Type::kStr;
  uint32_t use_ = 0;
  std::string text_;
};

// Parses one argument list `(a,b,...)` body for `spec` into `out` (exposed for tests and for
// actions that take HAProxy-style arguments). `what` names the owner in messages ("fetch
// method 'hdr'", "converter 'word'"). On error, *err_arg (when given) is the argument the
// message is about, as HAProxy's "invalid arg N" counts.
std::string parse_args(std::string_view text, const ArgSpec& spec, Arg* out,
                       std::string_view what, const ParseCtx& pc, int* err_arg = nullptr);

}  // namespace sluice::sample

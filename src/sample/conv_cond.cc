// when(<condition>[,<acl>[,<unused>]]) (HAProxy's section 7.3.1): the sample passes unchanged when the
// condition holds, else there is none. HAProxy's conditions are "stopping", "normal",
// "error", "forwarded", "toapplet", "processed" and "acl" (with an ACL name), each negated by
// a leading '!'. sluice knows "stopping" (the process is stopping) and "acl" (the ACL, resolved
// like the acl() fetch among those the proxy declared before); the others need the stream's
// error and forwarding state, which sample::Ctx does not carry: they are refused when the
// configuration is parsed, rather than answered wrongly.
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "sample/tables.h"

namespace sluice::sample::tables {

namespace {

constexpr int64_t kNegate = 1, kAcl = 2;   // a[0].sint once checked

std::string check_when(Arg* a, const ParseCtx&) {
  std::string_view c = a[0].str;
  bool neg = !c.empty() && c[0] == '!';
  if (neg) c.remove_prefix(1);
  static constexpr std::string_view kKnown[] = {"stopping",  "normal",    "error", "forwarded",
                                                "toapplet",  "processed", "acl"};
  bool known = false;
  for (auto k : kKnown) known = known || c == k;
  if (!known)
    return fmt::format(
        "expects a supported keyword among {{stopping,normal,error,forwarded,toapplet,processed,"
        "acl}} but got '{}'",
        c);
  if (c == "acl") {
    if (!a[1].given || a[1].str.empty())
      return "'acl' selector requires an extra argument with the ACL name";
    const AclResolver* r = current_acl_resolver();
    std::string err = fmt::format("ACL '{}' not found", a[1].str);
    // a plain name: unlike acl(), `!` is no negation here (HAProxy: "ACL '!x' not found")
    auto call = r && a[1].str[0] != '!' ? r->resolve({a[1].str}, &err) : nullptr;
    if (!call) return err;
    a[1].obj = std::move(call);
    a[0].sint = (neg ? kNegate : 0) | kAcl;
    return {};
  }
  if (c != "stopping") {
    std::string_view needs = c == "normal" || c == "error"
                                 ? "the stream's error state"
                                 : "the stream's forwarding state";
    return fmt::format("condition '{}' is not supported by sluice yet (it needs {})", c, needs);
  }
  a[0].sint = neg;
  return {};
}

bool c_when(const Arg* a, Sample&, const Ctx& ctx) {
  bool holds = (a[0].sint & kAcl) ? static_cast<const AclCall*>(a[1].obj.get())->eval(ctx)
                                  : ctx.env->stopping();
  return holds != ((a[0].sint & kNegate) != 0);
}

constexpr ConvDef kConvs[] = {
    {"when", c_when, args(1, ArgType::kStr, ArgType::kStr, ArgType::kStr), check_when, Type::kAny, Type::kAny},
};

}  // namespace

std::span<const ConvDef> cond_convs() { return kConvs; }

}  // namespace sluice::sample::tables

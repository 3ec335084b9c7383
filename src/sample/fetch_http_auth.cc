// The authentication fetches (HAProxy's section 7.3.6): http_auth(<userlist>),
// http_auth_group(<userlist>), http_auth_user, http_auth_pass, http_auth_type and
// http_auth_bearer([<header>]), on the request's first Authorization field (auth/userlist.h).
#include <fmt/format.h>

#include "auth/userlist.h"
#include "pattern/pattern.h"
#include "sample/fetch_http_util.h"
#include "sample/tables.h"

namespace sluice::sample::tables {

namespace {

using auth::Credentials;

// The first Authorization field's value; false when there is none.
bool authorization(const Ctx& ctx, std::string_view* out) {
  if (!ctx.req.headers) return false;
  for (const auto& h : *ctx.req.headers)
    if (http::iequals(h.name, "authorization")) {
      *out = h.value;
      return true;
    }
  return false;
}

// The request's credentials, parsed once per evaluation.
bool credentials(const Ctx& ctx, Credentials* c) {
  std::string_view v;
  if (!authorization(ctx, &v)) return false;
  *c = auth::parse_authorization(v);
  return c->method != Credentials::Method::kNone;
}

// The userlist named by the first argument: bound now, checked once every section is read
// (the userlist may come later in the files, as HAProxy allows).
template <int Which>
std::string check_userlist(Arg* a, const ParseCtx&) {
  static constexpr std::string_view kNames[] = {"http_auth", "http_auth_group"};
  std::string_view kw = kNames[Which];
  if (a[0].str.empty()) return fmt::format("missing userlist name in arg 1 of fetch keyword '{}'", kw);
  const auto& at = pattern::config_line();
  a[0].obj = auth::Registry::global().use(a[0].str, fmt::format("parsing [{}:{}]", at.file, at.line),
                                          fmt::format("arg 1 of fetch keyword '{}'", kw));
  return {};
}

const auth::Userlist& userlist(const Arg* a) { return *static_cast<const auth::Userlist*>(a[0].obj.get()); }

// Basic credentials that the userlist accepts: the user, else null. No sample at all (false)
// without Basic credentials.
bool checked_user(const Arg* a, const Ctx& ctx, const auth::User** user, std::string* name) {
  Credentials c;
  if (!credentials(ctx, &c) || c.method != Credentials::Method::kBasic) return false;
  *user = userlist(a).check(c.user, c.pass);
  if (name) *name = std::move(c.user);
  return true;
}

bool f_http_auth(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  const auth::User* u = nullptr;
  if (!checked_user(a, ctx, &u, nullptr)) return false;
  out = Sample::boolean(u != nullptr);
  return true;
}

// The user's name when the password is right (ACLs then test the groups it belongs to).
bool f_http_auth_group(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  const auth::User* u = nullptr;
  if (!checked_user(a, ctx, &u, nullptr) || !u) return false;
  out = Sample::string(u->name);
  return true;
}

bool f_http_auth_user(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  Credentials c;
  if (!credentials(ctx, &c) || c.method != Credentials::Method::kBasic) return false;
  std::string& b = thread_scratch().next();
  b = std::move(c.user);
  out = Sample::string(b);
  return true;
}

bool f_http_auth_pass(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  Credentials c;
  if (!credentials(ctx, &c) || c.method != Credentials::Method::kBasic) return false;
  std::string& b = thread_scratch().next();
  b = std::move(c.pass);
  out = Sample::string(b);
  return true;
}

bool f_http_auth_type(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  Credentials c;
  if (!credentials(ctx, &c)) return false;
  out = Sample::string(c.method == Credentials::Method::kBasic ? "Basic" : "Bearer");
  return true;
}

// The token of `Bearer <token>` in the Authorization field, or in the field named.
bool f_http_auth_bearer(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  std::string_view v;
  if (a[0].given && !a[0].str.empty()) {
    if (!httpx::header_occurrence(ctx.req.headers, a[0].str, true, 1, v)) return false;
  } else if (!authorization(ctx, &v)) {
    return false;
  }
  Credentials c = auth::parse_authorization(v);
  if (c.method != Credentials::Method::kBearer) return false;
  out = Sample::string(c.token);
  return true;
}

constexpr uint32_t kReq = kUseHttpReq;

constexpr FetchDef kFetches[] = {
    {"http_auth", f_http_auth, args(1, ArgType::kStr), check_userlist<0>, Type::kBool, kReq},
    {"http_auth_bearer", f_http_auth_bearer, args(0, ArgType::kStr), nullptr, Type::kStr, kReq},
    {"http_auth_group", f_http_auth_group, args(1, ArgType::kStr), check_userlist<1>, Type::kStr,
     kReq, "auth"},
    {"http_auth_pass", f_http_auth_pass, no_args(), nullptr, Type::kStr, kReq},
    {"http_auth_type", f_http_auth_type, no_args(), nullptr, Type::kStr, kReq},
    {"http_auth_user", f_http_auth_user, no_args(), nullptr, Type::kStr, kReq},
};

}  // namespace

std::span<const FetchDef> http_auth_fetches() { return kFetches; }

}  // namespace sluice::sample::tables

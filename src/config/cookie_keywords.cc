// Cookie-based server persistence: `cookie`, `dynamic-cookie-key`, `force-persist`,
// `ignore-persist`, and `capture cookie`, with HAProxy's messages. The runtime side is
// proxy/cookie.h.
#include <cstdio>

#include <fmt/format.h>

#include "config/proxy_keywords.h"
#include "rules/rules.h"

namespace sluice::config::proxy_kw {

namespace {

// maxidle / maxlife: a time in seconds by default, HAProxy's messages.
uint32_t cookie_time(const Line& l, std::size_t i, const char* what, const char* arg_name) {
  if (i + 1 >= l.args.size() || l.args[i + 1].empty())
    throw ConfigError{fmt::format("parsing [{}:{}]: '{}' expects <{}> in seconds as argument.",
                                  l.loc.file, l.loc.line, what, arg_name)};
  const std::string& v = l.args[i + 1];
  auto t = parse_time(v, TimeUnit::kS);
  switch (t.status) {
    case TimeValue::Status::kOverflow:
      throw ConfigError{fmt::format("parsing [{}:{}]: timer overflow in argument <{}> to <{}>, "
                                    "maximum value is 2147483647 s (~68 years).",
                                    l.loc.file, l.loc.line, v, what)};
    case TimeValue::Status::kUnderflow:
      throw ConfigError{fmt::format("parsing [{}:{}]: timer underflow in argument <{}> to <{}>, "
                                    "minimum non-null value is 1 s.", l.loc.file, l.loc.line, v, what)};
    case TimeValue::Status::kBadChar:
    case TimeValue::Status::kEmpty:
      throw ConfigError{fmt::format("parsing [{}:{}]: unexpected character '{}' in argument to <{}>.",
                                    l.loc.file, l.loc.line, t.bad, what)};
    case TimeValue::Status::kOk: break;
  }
  return t.value;
}

}  // namespace

// `cookie <name> [options]`: a later line replaces the whole setting, as in HAProxy.
void kw_cookie(Parser& p, Line& l) {
  ProxyConfig& px = p.cur_proxy().cfg;
  if (l.args.size() < 2 || l.args[1].empty())
    throw ConfigError{fmt::format("{}'{}' expects <cookie_name> as argument.", l.where, l.args[0])};
  CookieConfig c;
  c.loc = l.loc;
  c.name = l.args[1];
  int modes = 0;
  for (std::size_t i = 2; i < l.args.size(); ++i) {
    const std::string& o = l.args[i];
    if (o == "rewrite" || o == "insert" || o == "prefix") {
      const auto m = o == "rewrite" ? CookieConfig::Mode::kRewrite
                     : o == "insert" ? CookieConfig::Mode::kInsert : CookieConfig::Mode::kPrefix;
      if (c.mode != m) ++modes;
      c.mode = m;
    } else if (o == "indirect") {
      c.indirect = true;
    } else if (o == "nocache") {
      c.nocache = true;
    } else if (o == "postonly") {
      c.postonly = true;
    } else if (o == "preserve") {
      c.preserve = true;
    } else if (o == "httponly") {
      c.httponly = true;
    } else if (o == "secure") {
      c.secure = true;
    } else if (o == "dynamic") {
      c.dynamic = true;
    } else if (o == "domain") {
      if (i + 1 >= l.args.size() || l.args[i + 1].empty())
        throw ConfigError{fmt::format("parsing [{}:{}]: '{}' expects <domain> as argument.",
                                      l.loc.file, l.loc.line, o)};
      const std::string& d = l.args[++i];
      if (d.find('.', 1) == std::string::npos)
        p.warning(fmt::format("parsing [{}:{}]: domain '{}' contains no embedded dot, this "
                              "configuration may not work properly (see RFC6265#5.2.3).",
                              l.loc.file, l.loc.line, d));
      c.domain = c.domain.empty() ? d : c.domain + "; domain=" + d;
    } else if (o == "maxidle") {
      c.maxidle_s = cookie_time(l, i, "maxidle", "idletime");
      ++i;
    } else if (o == "maxlife") {
      c.maxlife_s = cookie_time(l, i, "maxlife", "lifetime");
      ++i;
    } else if (o == "attr") {
      if (i + 1 >= l.args.size() || l.args[i + 1].empty())
        throw ConfigError{fmt::format("parsing [{}:{}]: '{}' expects <value> as argument.",
                                      l.loc.file, l.loc.line, o)};
      const std::string& a = l.args[++i];
      for (unsigned char ch : a)
        if (ch < 0x20 || ch == 0x7f || ch == ';')
          throw ConfigError{fmt::format("parsing [{}:{}]: character '%x{:02X}' is not permitted in "
                                        "attribute value.", l.loc.file, l.loc.line, ch)};
      c.attrs = c.attrs.empty() ? a : c.attrs + "; " + a;
    } else {
      throw ConfigError{fmt::format("{}'{}' supports 'rewrite', 'insert', 'prefix', 'indirect', "
                                    "'nocache', 'postonly', 'domain', 'maxidle', 'dynamic', "
                                    "'maxlife' and 'attr' options.", l.where, l.args[0])};
    }
  }
  if (modes > 1)
    throw ConfigError{l.where + "cookie 'rewrite', 'insert' and 'prefix' modes are incompatible."};
  if (c.preserve && c.mode != CookieConfig::Mode::kInsert && !c.indirect)
    throw ConfigError{l.where + "cookie 'preserve' requires at least 'insert' or 'indirect'."};
  px.cookie = std::move(c);
}

void kw_dynamic_cookie_key(Parser& p, Line& l) {
  if (l.args.size() < 2 || l.args[1].empty())
    throw ConfigError{fmt::format("{}'{}' expects <secret_key> as argument.", l.where, l.args[0])};
  p.cur_proxy().cfg.dynamic_cookie_key = l.args[1];
}

// `force-persist | ignore-persist if|unless <cond>`.
void kw_persist_rule(Parser& p, Line& l) {
  ProxyConfig& px = p.cur_proxy().cfg;
  if (l.args.size() < 2 || (l.args[1] != "if" && l.args[1] != "unless"))
    throw ConfigError{fmt::format("{}'{}' requires either 'if' or 'unless' followed by a "
                                  "condition.", l.where, l.args[0])};
  auto c = rules::parse_condition(tail(l, 1), px.acls);
  if (!c.ok())
    throw ConfigError{fmt::format("{}error detected while parsing a '{}' rule : {}.", l.where,
                                  l.args[0], c.error().message)};
  PersistRuleConfig r;
  r.loc = l.loc;
  r.force = l.args[0] == "force-persist";
  r.cond = std::move(c.value());
  px.persist_rules.push_back(std::move(r));
}

// `capture cookie <name> len <n>`: one per frontend, the last line wins (HAProxy).
void capture_cookie(Parser& p, Line& l) {
  if (l.args.size() < 5 || l.args[2].empty() || l.args[4].empty())
    throw ConfigError{l.where + "'capture' expects 'cookie' <cookie_name> 'len' <len>."};
  no_extra(l, 5);
  ProxyConfig& px = p.cur_proxy().cfg;
  // HAProxy reads the length with atol(); sluice wants an integer (documented difference).
  auto n = parse_strict_int(l.args[4], 0, 1 << 30);
  if (!n)
    throw ConfigError{fmt::format("{}'capture cookie' : invalid length '{}', expects an integer.",
                                  l.where, l.args[4])};
  int len = static_cast<int>(*n);
  // tune.http.cookielen (63 by default) bounds it, with HAProxy's warning.
  const int max_len = p.global.tune_http_cookielen;
  if (len > max_len) {
    p.warning(fmt::format("truncating capture length to {} bytes for {} '{}'.", max_len,
                          Parser::type_word(px), px.name));
    len = max_len;
  }
  px.capture_cookie = l.args[2];
  px.capture_cookie_len = len;
  px.capture_cookie_loc = l.loc;
}

}  // namespace sluice::config::proxy_kw

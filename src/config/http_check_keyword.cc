// `http-check send` and `http-check expect`: the request and the verdict of HTTP health checks.
#include "config/proxy_keywords.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "base/regex.h"

namespace sluice::config::proxy_kw {

// http-check send [meth <m>] [uri <u>] [ver <v>] [hdr <name> <value>]... [body <s>]
// http-check expect [!] status <codes> | rstatus <regex> | string <text>
void kw_http_check(Parser& p, Line& l) {
  ProxyConfig& px = p.cur_proxy().cfg;
  HttpCheckConfig& hc = px.http_check;
  std::string sub = l.args.size() > 1 ? l.args[1] : "";
  if (sub == "send") {
    for (std::size_t i = 2; i < l.args.size();) {
      const std::string& o = l.args[i];
      std::size_t need = o == "hdr" ? 2 : 1;
      if (o != "meth" && o != "uri" && o != "ver" && o != "hdr" && o != "body")
        throw ConfigError{fmt::format("{}'http-check send' : unknown argument '{}' (expects 'meth', 'uri', 'ver', 'hdr' or 'body').", l.where, o)};
      if (i + need >= l.args.size())
        throw ConfigError{fmt::format("{}'http-check send' : '{}' expects {}.", l.where, o,
                                      o == "hdr" ? "<name> and <value> as arguments" : "a value")};
      const std::string& v = l.args[i + 1];
      if (o == "meth") {
        hc.method = v;
      } else if (o == "uri") {
        hc.uri = v;
      } else if (o == "ver") {
        hc.version = v;
      } else if (o == "hdr") {
        hc.headers.emplace_back(v, l.args[i + 2]);
      } else if (o == "body") {
        hc.body = v;
      } else {
        throw ConfigError{fmt::format("{}'http-check send' : unknown argument '{}' (expects 'meth', 'uri', 'ver', 'hdr' or 'body').", l.where, o)};
      }
      i += need + 1;
    }
    return;
  }
  if (sub == "expect") {
    std::size_t i = 2;
    bool negate = false;
    if (i < l.args.size() && l.args[i] == "!") {
      negate = true;
      ++i;
    }
    std::string what = i < l.args.size() ? l.args[i] : "";
    static const std::pair<std::string_view, HttpCheckConfig::Expect> kKinds[] = {
        {"status", HttpCheckConfig::Expect::kStatus},
        {"rstatus", HttpCheckConfig::Expect::kRstatus},
        {"string", HttpCheckConfig::Expect::kString}};
    const HttpCheckConfig::Expect* kind = nullptr;
    for (const auto& [n, k] : kKinds)
      if (what == n) kind = &k;
    if (!kind) {
      static constexpr std::string_view kOther[] = {"rstring", "hdr", "fhdr", "custom"};
      if (std::find(std::begin(kOther), std::end(kOther), what) != std::end(kOther))
        throw ConfigError{fmt::format("{}'http-check expect {}' is not supported by sluice yet.", l.where, what)};
      throw ConfigError{fmt::format("{}'http-check expect' : unknown match '{}' (expects 'status', 'rstatus' or 'string').", l.where, what)};
    }
    if (i + 1 >= l.args.size())
      throw ConfigError{fmt::format("{}'http-check expect {}' expects a pattern as argument.", l.where, what)};
    const std::string& arg = l.args[i + 1];
    if (*kind == HttpCheckConfig::Expect::kRstatus) {
      base::Regex re;
      std::string why;
      if (!re.compile(arg, &why))
        throw ConfigError{fmt::format("{}'http-check expect' : {}.", l.where, why)};
    }
    if (*kind == HttpCheckConfig::Expect::kStatus) {
      for (char c : arg)
        if (!(std::isdigit(static_cast<unsigned char>(c)) || c == ',' || c == '-'))
          throw ConfigError{fmt::format("{}'http-check expect status' : invalid status list '{}'.", l.where, arg)};
    }
    if (i + 2 < l.args.size())
      throw ConfigError{fmt::format("{}'http-check expect' : unexpected argument '{}' (options such as 'min-recv' and 'comment' are not supported by sluice yet).", l.where, l.args[i + 2])};
    hc.expect = *kind;
    hc.expect_negate = negate;
    hc.expect_arg = arg;
    return;
  }
  static constexpr std::string_view kOther[] = {"comment", "connect", "disable-on-404",
                                                "send-state", "set-var", "unset-var"};
  if (std::find(std::begin(kOther), std::end(kOther), sub) != std::end(kOther))
    throw ConfigError{fmt::format("{}'http-check {}' is not supported by sluice yet.", l.where, sub)};
  throw ConfigError{fmt::format("{}'http-check' : unknown keyword '{}' (expects 'send' or 'expect').", l.where, sub)};
}

}  // namespace sluice::config::proxy_kw

// HTTP features of a proxy: capture, the statistics page (stats), monitor-uri / monitor fail,
// http-reuse (errorfile and its kin: error_keywords.cc).
#include "config/proxy_keywords.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "http/http.h"
#include "rules/rules.h"

namespace sluice::config::proxy_kw {

namespace {

}  // namespace

// ---- capture request|response header, declare capture ----

void kw_capture(Parser& p, Line& l) {
  const std::string kind = l.args.size() > 1 ? l.args[1] : "";
  if (kind == "cookie") return capture_cookie(p, l);
  if (kind != "request" && kind != "response")
    throw ConfigError{l.where + "'capture' expects 'cookie' or 'request header' or 'response header'."};
  if (l.args.size() != 6 || l.args[2] != "header" || l.args[4] != "len")
    throw ConfigError{fmt::format("{}'capture {}' expects 'header' <header_name> 'len' <len>.",
                                  l.where, kind)};
  auto len = parse_strict_int(l.args[5], 1, 65535);
  if (!len)
    throw ConfigError{fmt::format("{}'capture {} header' : invalid length '{}', expects 1 to 65535.",
                                  l.where, kind, l.args[5])};
  ProxyConfig& px = p.cur_proxy().cfg;
  if (px.capture_request.empty() && px.capture_response.empty()) px.capture_loc = l.loc;
  (kind == "request" ? px.capture_request : px.capture_response)
      .push_back(CaptureConfig{l.args[3], static_cast<int>(*len)});
}

// `declare capture request|response len <n>`: a capture slot without a header, for the
// `capture ... id <n>` actions and the capture-req / capture-res converters. Frontends and
// listens only; words after the length are ignored, as HAProxy does.
void kw_declare(Parser& p, Line& l) {
  ProxyState& ps = p.cur_proxy();
  ProxyConfig& px = ps.cfg;
  if (ps.is_defaults) throw ConfigError{l.where + "'declare' not available in default section"};
  if (!(px.caps & ProxyConfig::kFrontend))
    throw ConfigError{l.where + "'declare' only available in frontend or listen section"};
  const std::string type = l.args.size() > 1 ? l.args[1] : "";
  if (type.empty())
    throw ConfigError{l.where + "'declare' needs a second keyword that specify the type of "
                                "declaration ('capture')"};
  if (type != "capture")
    throw ConfigError{fmt::format("{}unknown declaration type '{}' (supports 'capture')", l.where, type)};
  const std::string dir = l.args.size() > 2 ? l.args[2] : "";
  if (dir != "request" && dir != "response")
    throw ConfigError{l.where + "'declare capture' requires a direction ('request' or 'response')"};
  if (l.args.size() < 4 || l.args[3] != "len")
    throw ConfigError{l.where + "'declare capture' requires a capture length ('len')"};
  if (l.args.size() < 5 || l.args[4].empty())
    throw ConfigError{l.where + "'declare capture': 'len' requires a numeric value that "
                                "represents the capture length"};
  const std::string& v = l.args[4];
  std::size_t i = v[0] == '-' || v[0] == '+' ? 1 : 0;
  long long len = 0;
  bool digits = i < v.size();
  for (; i < v.size(); ++i) {
    if (v[i] < '0' || v[i] > '9' || len > 0x7fffffff) {
      digits = false;
      break;
    }
    len = len * 10 + (v[i] - '0');
  }
  if (!digits) throw ConfigError{fmt::format("{}'declare capture': cannot parse the length '{}'.", l.where, v)};
  if (v[0] == '-') len = -len;
  if (len <= 0 || len > 0x7fffffff) throw ConfigError{l.where + "length must be > 0"};
  if (px.capture_request.empty() && px.capture_response.empty()) px.capture_loc = l.loc;
  (dir == "request" ? px.capture_request : px.capture_response)
      .push_back(CaptureConfig{"", static_cast<int>(len)});
}

// ---- stats: the HTTP statistics page ----

void kw_stats(Parser& p, Line& l) {
  static constexpr std::string_view kExpects =
      "expects 'uri', 'realm', 'auth', 'scope', 'enable', 'refresh', 'hide-version', 'show-node', "
      "'show-desc' or 'show-legends'";
  StatsPageConfig& st = p.cur_proxy().cfg.stats;
  if (l.args.size() < 2)
    throw ConfigError{fmt::format("{}missing keyword in 'stats', {}.", l.where, kExpects)};
  const std::string& kw = l.args[1];
  const std::string arg = l.args.size() > 2 ? l.args[2] : "";
  auto enable = [&] {
    if (!st.enabled) st.loc = l.loc;
    st.enabled = true;
  };
  auto no_more = [&](std::size_t n) {
    if (l.args.size() > n)
      throw ConfigError{fmt::format("{}'stats {}' : unexpected extra argument '{}'.", l.where, kw,
                                    l.args[n])};
  };
  if (kw == "enable") {
    no_more(2);
    enable();
  } else if (kw == "uri") {
    if (arg.empty()) throw ConfigError{l.where + "'uri' needs an URI prefix."};
    no_more(3);
    st.uri = arg;
    enable();
  } else if (kw == "realm") {
    if (arg.empty()) throw ConfigError{l.where + "'realm' needs an realm name."};
    no_more(3);
    st.realm = arg;
    enable();
  } else if (kw == "refresh") {
    if (arg.empty()) throw ConfigError{l.where + "'refresh' needs a refresh delay."};
    auto t = parse_time(arg, TimeUnit::kS);
    check_time_range(l, t, arg, "stats refresh");
    if (t.status != TimeValue::Status::kOk)
      throw ConfigError{fmt::format("{}unexpected character '{}' in argument to stats refresh "
                                    "interval.", l.where, t.bad)};
    no_more(3);
    st.refresh_s = t.value;
    enable();
  } else if (kw == "auth") {
    if (arg.empty()) throw ConfigError{l.where + "'auth' needs a user:password account."};
    if (arg.find(':') == std::string::npos)
      throw ConfigError{fmt::format("{}'stats auth' : '{}' is not a user:password account.",
                                    l.where, arg)};
    no_more(3);
    st.auth.push_back(arg);
    enable();
  } else if (kw == "scope") {
    if (arg.empty()) throw ConfigError{l.where + "'scope' needs a proxy name."};
    no_more(3);
    st.scope.push_back(arg);
    enable();
  } else if (kw == "hide-version") {
    no_more(2);
    st.hide_version = true;
  } else if (kw == "show-legends") {
    no_more(2);
    st.show_legends = true;
  } else if (kw == "show-node") {
    no_more(3);
    st.show_node = true;
    st.node = arg;
  } else if (kw == "show-desc") {
    st.show_desc = true;
    st.desc.clear();
    for (std::size_t i = 2; i < l.args.size(); ++i) st.desc += (i > 2 ? " " : "") + l.args[i];
  } else if (kw == "admin") {
    if (p.cur_proxy().is_defaults)
      throw ConfigError{l.where + "'stats admin' not allowed in 'defaults' section."};
    if (l.args.size() < 4 || (arg != "if" && arg != "unless"))
      throw ConfigError{l.where + "'stats admin' requires either 'if' or 'unless' followed by a "
                                  "condition."};
    auto c = rules::parse_condition(tail(l, 2), p.cur_proxy().cfg.acls);
    if (!c.ok())
      throw ConfigError{fmt::format("{}error detected while parsing a 'stats admin' rule : {}.",
                                    l.where, c.error().message)};
    st.admin.push_back(std::move(c.value()));
    enable();
  } else if (kw == "http-request") {
    if (p.cur_proxy().is_defaults)
      throw ConfigError{l.where + "'stats' not allowed in 'defaults' section."};
    stats_http_request(p, l);
    enable();
  } else if (kw == "show-modules") {
    // The page shows no per-module statistics (sluice has no such modules): accepting the
    // line would promise columns that never come.
    throw ConfigError{fmt::format("{}'stats {}' is not supported yet.", l.where, kw)};
  } else if (kw == "socket" || kw == "timeout" || kw == "maxconn" || kw == "bind-process") {
    throw ConfigError{fmt::format("{}'stats {}' is only allowed in the 'global' section.",
                                  l.where, kw)};
  } else {
    throw ConfigError{fmt::format("{}unknown stats parameter '{}', {}.", l.where, kw, kExpects)};
  }
}

// ---- monitor-uri, monitor fail ----

void kw_monitor_uri(Parser& p, Line& l) {
  if (l.args.size() < 2 || l.args[1].empty())
    throw ConfigError{l.where + "'monitor-uri' expects an URI."};
  if (l.args.size() > 2)
    throw ConfigError{fmt::format("{}'monitor-uri' cannot handle unexpected argument '{}'.",
                                  l.where, l.args[2])};
  ProxyConfig& px = p.cur_proxy().cfg;
  px.monitor_uri = l.args[1];
  px.monitor_uri_loc = l.loc;
}

void kw_monitor(Parser& p, Line& l) {
  if (l.args.size() < 2 || l.args[1] != "fail")
    throw ConfigError{l.where + "'monitor' only supports 'fail'."};
  if (l.args.size() < 4 || (l.args[2] != "if" && l.args[2] != "unless"))
    throw ConfigError{l.where + "'monitor fail' requires either 'if' or 'unless' followed by a "
                                "condition."};
  ProxyConfig& px = p.cur_proxy().cfg;
  auto c = rules::parse_condition(tail(l, 2), px.acls);
  if (!c.ok())
    throw ConfigError{fmt::format("{}error detected while parsing a 'monitor fail' condition : {}.",
                                  l.where, c.error().message)};
  if (px.monitor_fail.empty()) px.monitor_fail_loc = l.loc;
  px.monitor_fail.push_back(std::move(c.value()));
}

void kw_http_reuse(Parser& p, Line& l) {
  static const std::pair<std::string_view, HttpReuse> kModes[] = {
      {"never", HttpReuse::kNever}, {"safe", HttpReuse::kSafe},
      {"aggressive", HttpReuse::kAggressive}, {"always", HttpReuse::kAlways}};
  std::string v = l.args.size() > 1 ? l.args[1] : "";
  for (const auto& [n, m] : kModes) {
    if (v == n) {
      no_extra(l, 2);
      p.cur_proxy().cfg.http_reuse = m;
      return;
    }
  }
  throw ConfigError{fmt::format("{}'{}' only supports 'never', 'safe', 'aggressive', 'always'", l.where, l.args[0])};
}

}  // namespace sluice::config::proxy_kw

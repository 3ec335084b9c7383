// `http-check`: the rules of HTTP health checks.
#include "config/proxy_keywords.h"

#include <fmt/format.h>


namespace sluice::config::proxy_kw {

// http-check comment|connect|send|expect|disable-on-404|send-state: the rules of `option
// httpchk` (check/rules.h), in px.http_check_rules; option httpchk's request line fills what a
// send does not say (app/checks_setup.cc builds the rule set).
void kw_http_check(Parser& p, Line& l) {
  ProxyConfig& px = p.cur_proxy().cfg;
  TcpCheckConfig& tc = px.http_check_rules;
  const std::string sub = l.args.size() > 1 ? l.args[1] : "";
  if (sub == "disable-on-404" || sub == "send-state") {
    if (l.args.size() > 2)
      throw ConfigError{fmt::format("{}'http-check' cannot handle unexpected argument '{}'.",
                                    l.where, l.args[2])};
    (sub == "disable-on-404" ? px.http_check.disable_on_404 : px.http_check.send_state) = true;
    return;
  }
  auto begin_own = [&] { begin_check_rule(tc, l); };
  check::CheckRule r;
  if (sub == "comment") {
    r = parse_check_comment(l, "http-check");
    begin_own();
  } else if (sub == "connect") {
    begin_own();   // first: the port expression goes into the section's own set
    r = parse_check_connect(p, tc, l, "http-check");
  } else if (sub == "send") {
    begin_own();
    r.kind = check::CheckRule::Kind::kSend;
    r.http = true;
    for (std::size_t i = 2; i < l.args.size(); ++i) {
      const std::string& o = l.args[i];
      const bool hdr = o == "hdr";
      if (o != "meth" && o != "uri" && o != "uri-lf" && o != "ver" && !hdr && o != "body" &&
          o != "body-lf" && o != "comment")
        throw ConfigError{fmt::format("{}'http-check send' : expects 'comment', 'meth', 'uri', "
                                      "'uri-lf', 'ver', 'hdr', 'body' or 'body-lf' but got '{}' as "
                                      "argument..", l.where, o)};
      if (i + (hdr ? 2 : 1) >= l.args.size() || l.args[i + 1].empty())
        throw ConfigError{fmt::format("{}'http-check send' : '{}' expects {} as argument..", l.where,
                                      o, hdr ? "<name> and <value>" : "a string")};
      const std::string& v = l.args[++i];
      if (o == "meth") r.method = v;
      else if (o == "uri") r.uri = v;
      else if (o == "uri-lf") r.fmt = add_check_format(tc, l, "http-check send", v);
      else if (o == "ver") r.version = v;
      else if (o == "body") r.body = v;
      else if (o == "body-lf") r.body_fmt = add_check_format(tc, l, "http-check send", v);
      else if (o == "comment") r.comment = v;
      else r.fields.push_back({v, "", add_check_format(tc, l, "http-check send", l.args[++i])});
    }
    // After an answer, another request needs its own connection (HTTP/1.0: the server closes).
    bool need_connect = false;
    for (const auto& prev : tc.rules) {
      if (prev.kind == check::CheckRule::Kind::kExpect) need_connect = true;
      if (prev.kind == check::CheckRule::Kind::kConnect) need_connect = false;
    }
    if (need_connect)
      throw ConfigError{fmt::format("{}'http-check send' : unable to add http-check send rule at "
                                    "step {} (missing connect rule)..", l.where, tc.rules.size())};
  } else if (sub == "expect") {
    begin_own();
    r = parse_check_expect(tc, l, true);
  } else if (rules::is_var_action(sub)) {
    begin_own();
    r = parse_check_var(tc, l, "http-check");
  } else {
    throw ConfigError{fmt::format("{}'http-check' only supports 'disable-on-404', 'send-state', "
                                  "'comment', 'connect', 'send', 'expect', 'set-var-fmt(*)', "
                                  "'set-var(*)', 'unset-var(*)'. but got '{}'", l.where, sub)};
  }
  push_check_rule(tc, std::move(r));
}

}  // namespace sluice::config::proxy_kw

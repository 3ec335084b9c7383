// ACLs and the rules that use them: acl, http-request / http-response, tcp-request and
// use_backend.
#include "config/proxy_keywords.h"

#include <fmt/format.h>

#include "rules/rules.h"

namespace sluice::config::proxy_kw {

namespace {

// acl / http-request / http-response: HAProxy allows them in named defaults sections only, with
// rules that its proxies inherit; sluice does not support rules in defaults yet.
void refuse_rules_in_defaults(Parser& p, const Line& l) {
  ProxyState& ps = p.cur_proxy();
  if (!ps.is_defaults) return;
  if (ps.defaults_name.empty())
    throw ConfigError{fmt::format("{}'{}' not allowed in anonymous 'defaults' section.", l.where, l.args[0])};
  throw ConfigError{fmt::format("{}'{}' in a 'defaults' section is not supported by sluice yet.", l.where, l.args[0])};
}

}  // namespace

void kw_acl(Parser& p, Line& l) {
  refuse_rules_in_defaults(p, l);
  auto r = p.cur_proxy().cfg.acls.parse_acl(tail(l, 1));
  if (!r.ok()) throw ConfigError{l.where + r.error().message};
}

namespace {

// An http-request / http-response / http-after-response rule from the words of `l` after
// `first`, with its proxy's messages; a bad rule aborts the whole load, as in HAProxy. The
// caller prints the rule's warnings (after its own).
rules::HttpRule proxy_http_rule(Parser& p, Line& l, std::size_t first, rules::RuleSide side,
                                const std::string& what) {
  ProxyConfig& px = p.cur_proxy().cfg;
  // Relative `file` paths are relative to the working directory, as in HAProxy.
  rules::RuleOwner owner{px.name, (px.caps & ProxyConfig::kFrontend) != 0,
                        (px.caps & ProxyConfig::kBackend) != 0};
  auto r = rules::parse_http_rule(tail(l, first), side, px.acls, "",
                                  px.type == "backend" ? "backend" : "frontend", owner);
  if (!r.ok()) {
    std::string msg = r.error().message;
    const std::string head = "error detected while parsing '";
    if (msg.rfind(head, 0) == 0)
      msg = fmt::format("error detected in {} '{}' while parsing '{}", Parser::type_word(px), px.name,
                        msg.substr(head.size()));
    p.fatal(l.where + msg);
    throw AbortLoad{};
  }
  std::string raw = payload_fetch_refusal(r.value().cond, fmt::format("an '{}' rule", what), px);
  if (!raw.empty()) throw ConfigError{l.where + raw};
  r.value().loc = rules::RuleLoc::at(l.loc.file, l.loc.line);
  // `capture <expr> len <n>` declares the frontend's next request capture slot.
  if (r.value().capture_len > 0) {
    if (px.capture_request.empty() && px.capture_response.empty()) px.capture_loc = l.loc;
    r.value().capture_id = static_cast<int>(px.capture_request.size());
    px.capture_request.push_back(CaptureConfig{"", r.value().capture_len});
  }
  return std::move(r.value());
}

void warn_after_final(Parser& p, const Line& l, const std::vector<rules::HttpRule>& list,
                      std::string_view what) {
  if (!list.empty() && list.back().is_final() && list.back().cond.empty())
    p.warning(fmt::format("{}previous '{}' action is final and has no condition attached, further "
                          "entries are NOOP.", l.where, what));
}

}  // namespace

void kw_http_rule(Parser& p, Line& l) {
  refuse_rules_in_defaults(p, l);
  ProxyConfig& px = p.cur_proxy().cfg;
  bool req = l.args[0] == "http-request";
  bool after = l.args[0] == "http-after-response";
  auto side = req ? rules::RuleSide::kRequest
                  : after ? rules::RuleSide::kAfterResponse : rules::RuleSide::kResponse;
  auto& list = req ? px.http_request_rules : after ? px.http_after_response_rules : px.http_response_rules;
  rules::HttpRule rule = proxy_http_rule(p, l, 1, side, l.args[0]);
  if (rule.action == rules::HttpRule::Action::kNormalizeUri && !p.global.expose_experimental)
    throw ConfigError{l.where + "'normalize-uri' action is experimental, must be allowed via a "
                                "global 'expose-experimental-directives'"};
  if (req && !px.redirect_rules.empty())
    p.warning(fmt::format("{}a 'http-request' rule placed after a 'redirect' rule will still be "
                          "processed before.", l.where));
  warn_after_final(p, l, list, l.args[0]);
  for (const auto& w : rule.warnings) p.warning(l.where + w);
  list.push_back(std::move(rule));
}

// `stats http-request <action> [if|unless <cond>]`: any http-request action, as HAProxy
// parses them, run on the requests the stats page claims.
void stats_http_request(Parser& p, Line& l) {
  auto& list = p.cur_proxy().cfg.stats.http_request;
  rules::HttpRule rule = proxy_http_rule(p, l, 2, rules::RuleSide::kRequest, "stats http-request");
  warn_after_final(p, l, list, "stats http-request");
  for (const auto& w : rule.warnings) p.warning(l.where + w);
  list.push_back(std::move(rule));
}

// `redirect location|prefix|scheme <to> [options] [if|unless <cond>]`.
void kw_redirect(Parser& p, Line& l) {
  ProxyState& ps = p.cur_proxy();
  if (ps.is_defaults)
    throw ConfigError{fmt::format("{}'redirect' not allowed in 'defaults' section.", l.where)};
  ProxyConfig& px = ps.cfg;
  auto r = rules::parse_redirect_rule(tail(l, 1), px.acls);
  if (!r.ok()) {
    std::string msg = r.error().message;
    const std::string head = "error detected while parsing ";
    if (msg.rfind(head, 0) == 0)
      msg = fmt::format("error detected in {} '{}' while parsing {}", Parser::type_word(px), px.name,
                        msg.substr(head.size()));
    throw ConfigError{l.where + msg};
  }
  std::string raw = payload_fetch_refusal(r.value().cond, "a 'redirect' rule", px);
  if (!raw.empty()) throw ConfigError{l.where + raw};
  r.value().loc = rules::RuleLoc::at(l.loc.file, l.loc.line);
  px.redirect_rules.push_back(std::move(r.value()));
}

// ---- tcp-request connection|session|content|inspect-delay, tcp-response content ----

namespace {

// `tcp-request|tcp-response inspect-delay <time>`.
uint32_t parse_inspect_delay(Parser& p, Line& l, const std::string& in) {
  const std::string kw = fmt::format("'{} inspect-delay'", l.args[0]);
  if (l.args.size() < 3 || l.args[2].empty())
    throw ConfigError{fmt::format("{}{} expects a positive delay in milliseconds, in {}", l.where,
                                  kw, in)};
  auto t = parse_time(l.args[2], TimeUnit::kMs);
  if (t.status == TimeValue::Status::kBadChar || t.status == TimeValue::Status::kEmpty)
    throw ConfigError{fmt::format("{}{} expects a positive delay in milliseconds, in {} "
                                  "(unexpected character '{}')", l.where, kw, in, t.bad)};
  check_time_range(l, t, l.args[2], l.args[0] + " inspect-delay");
  no_extra(l, 3);
  if (t.trailing) p.warning(time_trailing_warning(t.trailing, l.args[2]));
  return t.value;
}

// A rule of `stage` from args[2], appended to `list`.
void add_tcp_rule(Parser& p, Line& l, rules::TcpRuleStage stage, std::vector<TcpRuleConfig>& list) {
  ProxyConfig& px = p.cur_proxy().cfg;
  const std::string in = fmt::format("{} '{}'", Parser::type_word(px), px.name);
  auto r = rules::parse_tcp_rule(tail(l, 2), stage, px.acls, in, !(px.caps & kFe));
  if (!r.ok()) throw ConfigError{l.where + r.error().message};
  r.value().loc = rules::RuleLoc::at(l.loc.file, l.loc.line);
  // `capture <expr> len <n>` declares the frontend's next request capture slot, as
  // http-request capture does.
  if (r.value().action == rules::TcpRule::Action::kCapture) {
    if (px.capture_request.empty() && px.capture_response.empty()) px.capture_loc = l.loc;
    r.value().capture_id = static_cast<int>(px.capture_request.size());
    px.capture_request.push_back(CaptureConfig{"", r.value().capture_len});
  }
  list.push_back(TcpRuleConfig{l.loc, std::move(r.value())});
}

// Whether `list` has a rule of this section's own (not inherited from defaults).
bool has_own(const std::vector<TcpRuleConfig>& list) {
  for (const auto& r : list)
    if (!r.inherited) return true;
  return false;
}

}  // namespace

void kw_tcp_request(Parser& p, Line& l) {
  ProxyState& ps = p.cur_proxy();
  ProxyConfig& px = ps.cfg;
  const std::string in = fmt::format("{} '{}'", Parser::type_word(px), px.name);
  if (l.args.size() < 2 || l.args[1].empty())
    throw ConfigError{fmt::format("{}missing argument for 'tcp-request' in {}", l.where, in)};
  const std::string& stage = l.args[1];
  if (stage != "connection" && stage != "session" && stage != "content" && stage != "inspect-delay")
    throw ConfigError{fmt::format("{}'tcp-request' expects 'inspect-delay', 'connection', or "
                                  "'content' in {} (got '{}')", l.where, in, stage)};
  // HAProxy lets proxies inherit these from named defaults sections only.
  if (ps.is_defaults && ps.defaults_name.empty())
    throw ConfigError{fmt::format("{}tcp-request {} is not allowed in anonymous 'defaults' "
                                  "sections", l.where, stage)};
  if (!ps.is_defaults && !(px.caps & kFe) && (stage == "connection" || stage == "session"))
    throw ConfigError{fmt::format("{}tcp-request {} is not allowed because {} {} is not a "
                                  "frontend", l.where, stage, Parser::type_word(px), px.name)};
  if (stage == "inspect-delay") {
    px.tcp_inspect_delay_ms = parse_inspect_delay(p, l, in);
    return;
  }
  using rules::TcpRuleStage;
  if (stage == "connection") {
    add_tcp_rule(p, l, TcpRuleStage::kConnection, px.tcp_request_connection);
    // Connection rules always run first, whatever the order of the lines (HAProxy's warning).
    const char* later = has_own(px.tcp_request_session) ? "session"
                        : has_own(px.tcp_request_content) ? "content" : nullptr;
    if (later)
      p.warning(fmt::format("{}a 'tcp-request connection' rule placed after a 'tcp-request {}' "
                            "rule will still be processed before.", l.where, later));
  } else if (stage == "session") {
    add_tcp_rule(p, l, TcpRuleStage::kSession, px.tcp_request_session);
    if (has_own(px.tcp_request_content))
      p.warning(l.where + "a 'tcp-request session' rule placed after a 'tcp-request content' rule "
                          "will still be processed before.");
  } else {
    add_tcp_rule(p, l, TcpRuleStage::kContent, px.tcp_request_content);
  }
}

void kw_tcp_response(Parser& p, Line& l) {
  ProxyState& ps = p.cur_proxy();
  ProxyConfig& px = ps.cfg;
  const std::string in = fmt::format("{} '{}'", Parser::type_word(px), px.name);
  const std::string stage = l.args.size() > 1 ? l.args[1] : "";
  if (stage.empty())
    throw ConfigError{fmt::format("{}missing argument for 'tcp-response' in {}", l.where, in)};
  if (stage != "content" && stage != "inspect-delay")
    throw ConfigError{fmt::format("{}'tcp-response' expects 'inspect-delay' or 'content' in {} "
                                  "(got '{}')", l.where, in, stage)};
  if ((ps.is_defaults && ps.defaults_name.empty()) || (!ps.is_defaults && !(px.caps & kBe)))
    throw ConfigError{fmt::format("{}tcp-response {} is only allowed in 'backend' sections or "
                                  "'defaults' section with a name", l.where, stage)};
  if (stage == "inspect-delay") {
    px.tcp_response_inspect_delay_ms = parse_inspect_delay(p, l, in);
    return;
  }
  add_tcp_rule(p, l, rules::TcpRuleStage::kResponse, px.tcp_response_content);
}

namespace {

// A switching rule's target: a name, or (with '%') a log-format rendered per request, returned
// here. A format without a sample stays a name, which then names nothing ('%' is not allowed
// in names), reported with the text as written, as HAProxy does. `error` words a parse error.
template <typename ErrorText>
std::shared_ptr<const rules::ValueFormat> target_format(const std::string& name, uint32_t avail,
                                                        ErrorText error) {
  if (name.find('%') == std::string::npos) return nullptr;
  auto f = rules::ValueFormat::parse(name, avail);
  if (!f.ok()) throw ConfigError{error(f.error().message)};
  if (f.value().is_literal()) return nullptr;
  return std::make_shared<const rules::ValueFormat>(std::move(f.value()));
}

// The `if|unless <cond>` from args[2] of a switching rule, with the never-match warning
// naming the rule as `what`.
rules::Condition switching_condition(Parser& p, Line& l, const char* what) {
  auto c = rules::parse_condition(tail(l, 2), p.cur_proxy().cfg.acls);
  if (!c.ok())
    throw ConfigError{fmt::format("{}error detected while parsing switching rule : {}.", l.where,
                                  c.error().message)};
  std::string w = c.value().never_match_warning(what);
  if (!w.empty()) p.warning(l.where + w);
  return std::move(c.value());
}

}  // namespace

void kw_use_backend(Parser& p, Line& l) {
  ProxyConfig& px = p.cur_proxy().cfg;
  if (l.args.size() < 2 || l.args[1].empty())
    throw ConfigError{fmt::format("{}'{}' expects a backend name.", l.where, l.args[0])};
  UseBackendConfig ub;
  ub.loc = l.loc;
  ub.name = l.args[1];
  ub.dynamic = target_format(ub.name, sample::kAtHttpRequest, [&](const std::string& e) {
    return fmt::format("{}failed to parse use_backend rule '{}' : {}.", l.where, ub.name, e);
  });
  if (l.args.size() > 2) {
    if (l.args[2] != "if" && l.args[2] != "unless")
      throw ConfigError{fmt::format("{}unexpected keyword '{}' after switching rule, only 'if' and "
                                    "'unless' are allowed.", l.where, l.args[2])};
    ub.cond = switching_condition(p, l, "frontend use-backend rule");
  }
  px.use_backends.push_back(std::move(ub));
}

void kw_use_server(Parser& p, Line& l) {
  ProxyConfig& px = p.cur_proxy().cfg;
  if (l.args.size() < 2 || l.args[1].empty())
    throw ConfigError{fmt::format("{}'{}' expects a server name.", l.where, l.args[0])};
  if (l.args.size() < 3 || (l.args[2] != "if" && l.args[2] != "unless"))
    throw ConfigError{fmt::format("{}'{}' requires either 'if' or 'unless' followed by a "
                                  "condition.", l.where, l.args[0])};
  UseServerConfig us;
  us.loc = l.loc;
  us.name = l.args[1];
  us.dynamic = target_format(us.name, sample::kAtHttpRequest | sample::kUseBackend,
                             [&](const std::string& e) {
                               return fmt::format("Parsing [{}:{}]; use-server rule failed to "
                                                  "parse log-format '{}' : {}.",
                                                  l.loc.file, l.loc.line, us.name, e);
                             });
  us.cond = switching_condition(p, l, "backend use-server, balance or stick-match rule");
  px.use_servers.push_back(std::move(us));
}

}  // namespace sluice::config::proxy_kw

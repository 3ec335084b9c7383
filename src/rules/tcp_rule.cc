// `tcp-request connection|content` rules: accept and reject on layer-4 conditions.
#include <algorithm>

#include <fmt/format.h>

#include "rules/internal.h"

namespace sluice::rules {

namespace {

std::string_view stage_name(TcpRuleStage stage) {
  return stage == TcpRuleStage::kConnection ? "tcp-request connection" : "tcp-request content";
}

// HAProxy's other actions for these stages (2.6 and later); sluice refuses them as not
// supported yet instead of calling them unknown. Forms with arguments in parentheses
// (`set-var(x)`, `sc-inc-gpc(0,1)`) are matched on the name before '('.
constexpr std::string_view kHaproxyActions[] = {
    "attach-srv", "capture", "close", "do-log", "do-resolve", "expect-netscaler-cip",
    "expect-proxy", "sc-add-gpc", "sc-inc-gpc", "sc-inc-gpc0", "sc-inc-gpc1", "sc-set-gpt",
    "sc-set-gpt0", "send-spoe-group", "set-bandwidth-limit", "set-bc-mark", "set-bc-tos",
    "set-dst", "set-dst-port", "set-fc-mark", "set-fc-tos", "set-log-level", "set-mark",
    "set-nice", "set-priority-class", "set-priority-offset", "set-retries", "set-src",
    "set-src-port", "set-tos", "set-var", "set-var-fmt", "silent-drop", "switch-mode",
    "track-sc0", "track-sc1", "track-sc2", "unset-var", "use-service",
};

bool is_haproxy_action(std::string_view action) {
  std::string_view name = action.substr(0, action.find('('));
  if (name.starts_with("lua.") || name.starts_with("track-sc")) return true;
  return std::find(std::begin(kHaproxyActions), std::end(kHaproxyActions), name) !=
         std::end(kHaproxyActions);
}

bool layer4(detail::Fetch f) {
  using detail::Fetch;
  return f == Fetch::kSrc || f == Fetch::kSrcPort || f == Fetch::kDst || f == Fetch::kDstPort ||
         f == Fetch::kAlwaysTrue || f == Fetch::kAlwaysFalse;
}

// The criterion as written, without its arguments: "hdr" for "hdr(host) -i x".
std::string_view criterion(const AclTerm& t) {
  std::string_view w = t.text;
  return w.substr(0, std::min(w.find(' '), w.find('(')));
}

}  // namespace

base::Result<TcpRule> parse_tcp_rule(const std::vector<std::string>& words, TcpRuleStage stage,
                                     const AclRegistry& acls) {
  const std::string_view where = stage_name(stage);
  TcpRule r;
  std::string_view action = words.empty() ? std::string_view() : std::string_view(words[0]);
  if (action == "reject") {
    r.reject = true;
  } else if (action != "accept") {
    if (is_haproxy_action(action))
      return base::Error::text(fmt::format("'{} {}' is not supported by sluice yet.", where, action));
    return base::Error::text(fmt::format("'{}' expects 'accept' or 'reject' (the actions sluice "
                                         "supports) but got '{}'.", where, action));
  }
  if (words.size() > 1) {
    if (words[1] != "if" && words[1] != "unless")
      return base::Error::text(fmt::format("'{} {}' only accepts 'if' or 'unless' (got '{}').",
                                           where, action, words[1]));
    auto c = parse_condition(std::vector<std::string>(words.begin() + 1, words.end()), acls);
    if (!c.ok())
      return base::Error::text(fmt::format("error detected while parsing a '{} {}' condition : {}.",
                                           where, action, c.error().message));
    r.cond = std::move(c.value());
    auto l4 = check_layer4(r.cond, stage);
    if (!l4.ok()) return l4.error();
  }
  return r;
}

base::Result<void> check_layer4(const Condition& cond, TcpRuleStage stage) {
  for (const auto& g : cond.groups_)
    for (const auto& t : g) {
      // The predefined `HTTP` is always_true in sluice because HTTP rules only ever see HTTP
      // messages; at these stages it would have to look at the bytes received (HAProxy's
      // req.proto_http).
      if (t.acl->name == "HTTP" && is_predefined_acl("HTTP") && t.acl->terms.size() == 1 &&
          t.acl->terms[0]->fetch.fetch == detail::Fetch::kAlwaysTrue)
        return base::Error::text(fmt::format(
            "predefined acl 'HTTP' (fetch 'req.proto_http') is not available in '{}' rules in "
            "sluice yet.", stage_name(stage)));
      for (const auto& term : t.acl->terms) {
        if (layer4(term->fetch.fetch)) continue;
        if (stage == TcpRuleStage::kContent && detail::fetch_reads_payload(term->fetch.fetch))
          continue;
        std::string what = t.acl->name == "anonymous"
                               ? fmt::format("fetch '{}'", criterion(*term))
                               : fmt::format("acl '{}' uses fetch '{}', which", t.acl->name,
                                             criterion(*term));
        return base::Error::text(fmt::format(
            "{} is not available in '{}' rules in sluice yet (only src, src_port, dst, dst_port, "
            "always_true and always_false are{}).", what, stage_name(stage),
            stage == TcpRuleStage::kContent
                ? ", and req.len, req.ssl_sni and req.ssl_hello_type in TCP mode"
                : "; req.len, req.ssl_sni and req.ssl_hello_type need 'tcp-request content'"));
      }
    }
  return {};
}

bool uses_dst(const Condition& cond) {
  for (const auto& g : cond.groups_)
    for (const auto& t : g)
      for (const auto& term : t.acl->terms)
        if (term->fetch.fetch == detail::Fetch::kDst) return true;
  return false;
}

PayloadUse payload_fetch(const Condition& cond) {
  for (const auto& g : cond.groups_)
    for (const auto& t : g)
      for (const auto& term : t.acl->terms)
        if (detail::fetch_reads_payload(term->fetch.fetch))
          return {std::string(criterion(*term)), t.acl->name};
  return {};
}

TcpVerdict tcp_rules_verdict(const std::vector<TcpRule>& rules, const RequestView& v) {
  for (const auto& r : rules) {
    Match m = r.cond.eval_partial(v);
    if (m == Match::kMiss) return TcpVerdict::kWait;
    if (m == Match::kPass) return r.reject ? TcpVerdict::kReject : TcpVerdict::kAccept;
  }
  return TcpVerdict::kAccept;
}

bool tcp_rules_accept(const std::vector<TcpRule>& rules, const RequestView& v) {
  for (const auto& r : rules)
    if (r.cond.eval(v)) return !r.reject;
  return true;
}

}  // namespace sluice::rules

// `tcp-request connection|content` rules: accept and reject on layer-4 conditions.
#include <algorithm>

#include <fmt/format.h>

#include "rules/internal.h"
#include "sample/context.h"

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
  }
  return r;
}

std::vector<std::string> check_stage(const Condition& cond, TcpRuleStage stage) {
  const uint32_t avail = stage == TcpRuleStage::kConnection ? sample::kAtTcpConnection
                                                            : sample::kAtHttpRequest;
  // HAProxy's two checks, one warning at most: first an ACL none of whose terms can work
  // here, then an ACL some of whose terms cannot.
  auto bad = [&](const AclTerm& term) { return (term.expr.use() & ~avail) != 0; };
  const std::string where(stage_name(stage));
  for (const auto& g : cond.groups_)
    for (const auto& t : g) {
      const AclTerm* first_bad = nullptr;
      bool all_bad = !t.acl->terms.empty();
      for (const auto& term : t.acl->terms) {
        if (bad(*term)) {
          if (!first_bad) first_bad = term.get();
        } else {
          all_bad = false;
        }
      }
      if (!all_bad) continue;
      if (t.acl->name == "anonymous")
        return {fmt::format("anonymous acl will never match in '{}' because it uses keyword '{}' "
                            "which is incompatible with 'frontend {} rule'",
                            where, first_bad->keyword, where)};
      return {fmt::format("acl '{}' will never match in '{}' because it only involves keywords "
                          "that are incompatible with 'frontend {} rule'",
                          t.acl->name, where, where)};
    }
  for (const auto& g : cond.groups_)
    for (const auto& t : g)
      for (const auto& term : t.acl->terms) {
        if (!bad(*term)) continue;
        if (t.acl->name == "anonymous")
          return {fmt::format("anonymous acl involves keyword '{}' which is incompatible with "
                              "'frontend {} rule'",
                              term->keyword, where)};
        return {fmt::format("acl '{}' involves keyword '{}' which is incompatible with "
                            "'frontend {} rule'",
                            t.acl->name, term->keyword, where)};
      }
  return {};
}

namespace {
// Fetches that read the local address, which the caller may have to ask the kernel for.
bool reads_dst(std::string_view fetch) {
  return fetch == "dst" || fetch == "dst_is_local" || fetch == "fc_dst" ||
         fetch == "fc_dst_is_local" || fetch == "dst_conn";
}
}  // namespace

bool uses_dst(const Condition& cond) {
  for (const auto& g : cond.groups_)
    for (const auto& t : g)
      for (const auto& term : t.acl->terms)
        if (reads_dst(term->expr.fetch().name)) return true;
  return false;
}

PayloadUse payload_fetch(const Condition& cond) {
  for (const auto& g : cond.groups_)
    for (const auto& t : g)
      for (const auto& term : t.acl->terms)
        if (term->expr.use() & sample::kUseReqBuf) return {term->keyword, t.acl->name};
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

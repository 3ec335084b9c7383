// `tcp-request connection|session|content` and `tcp-response content` rules: parsing, the
// stage checks, and running a rule set.
#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "rules/internal.h"
#include "sample/captures.h"
#include "sample/context.h"

namespace sluice::rules {

namespace {

using Action = TcpRule::Action;

// HAProxy 3.5's actions for each stage, as its "expects ..." message lists them.
constexpr std::string_view kConnectionActions =
    "'accept', 'reject', 'capture', 'expect-proxy', 'expect-netscaler-cip', 'track-sc0' ... "
    "'track-sc2', 'sc-add-gpc(*)', 'sc-inc-gpc(*)', 'sc-inc-gpc0(*)', 'sc-inc-gpc1(*)', "
    "'sc-set-gpt(*)', 'sc-set-gpt0(*)', 'set-var-fmt(*)', 'set-var(*)', 'unset-var(*)', "
    "'do-log', 'set-dst', 'set-dst-port', 'set-fc-mark', 'set-fc-tos', 'set-mark', 'set-src', "
    "'set-src-port', 'set-tos', 'silent-drop'";
constexpr std::string_view kSessionActions =
    "'accept', 'reject', 'capture', 'expect-proxy', 'expect-netscaler-cip', 'track-sc0' ... "
    "'track-sc2', 'sc-add-gpc(*)', 'sc-inc-gpc(*)', 'sc-inc-gpc0(*)', 'sc-inc-gpc1(*)', "
    "'sc-set-gpt(*)', 'sc-set-gpt0(*)', 'set-var-fmt(*)', 'set-var(*)', 'unset-var(*)', "
    "'attach-srv', 'do-log', 'set-dst', 'set-dst-port', 'set-fc-mark', 'set-fc-tos', "
    "'set-mark', 'set-src', 'set-src-port', 'set-tos', 'silent-drop'";
constexpr std::string_view kContentActions =
    "'accept', 'reject', 'capture', 'expect-proxy', 'expect-netscaler-cip', 'track-sc0' ... "
    "'track-sc2', 'send-spoe-group', 'set-retries', 'set-log-level', 'set-nice', "
    "'switch-mode', 'use-service', 'sc-add-gpc(*)', 'sc-inc-gpc(*)', 'sc-inc-gpc0(*)', "
    "'sc-inc-gpc1(*)', 'sc-set-gpt(*)', 'sc-set-gpt0(*)', 'do-resolve(*)', 'set-var-fmt(*)', "
    "'set-var(*)', 'unset-var(*)', 'do-log', 'set-bc-mark', 'set-bc-tos', 'set-dst', "
    "'set-dst-port', 'set-fc-mark', 'set-fc-tos', 'set-mark', 'set-src', 'set-src-port', "
    "'set-tos', 'silent-drop', 'set-bandwidth-limit', 'set-priority-class', "
    "'set-priority-offset'";
constexpr std::string_view kResponseActions =
    "'accept', 'close', 'reject', 'send-spoe-group', 'set-log-level', 'set-nice', "
    "'sc-add-gpc(*)', 'sc-inc-gpc(*)', 'sc-inc-gpc0(*)', 'sc-inc-gpc1(*)', 'sc-set-gpt(*)', "
    "'sc-set-gpt0(*)', 'set-var-fmt(*)', 'set-var(*)', 'unset-var(*)', 'do-log', "
    "'set-fc-mark', 'set-fc-tos', 'set-mark', 'set-tos', 'silent-drop', 'set-bandwidth-limit'";

std::string_view stage_actions(TcpRuleStage stage) {
  switch (stage) {
    case TcpRuleStage::kConnection: return kConnectionActions;
    case TcpRuleStage::kSession: return kSessionActions;
    case TcpRuleStage::kContent: return kContentActions;
    case TcpRuleStage::kResponse: return kResponseActions;
  }
  return {};
}

// Whether HAProxy knows `action` at this stage (its list: 'x', 'x(*)' for x(...), track-scN).
bool haproxy_knows(TcpRuleStage stage, std::string_view action) {
  if (action.empty()) return false;
  std::string_view list = stage_actions(stage);
  if (action.starts_with("lua.")) return true;
  if (action == "track-sc0" || action == "track-sc1" || action == "track-sc2")
    return list.find("'track-sc0'") != std::string_view::npos;
  auto open = action.find('(');
  std::string quoted = open == std::string_view::npos
                           ? fmt::format("'{}'", action)
                           : fmt::format("'{}(*)'", action.substr(0, open));
  return list.find(quoted) != std::string_view::npos;
}

// What the actions sluice lacks need, for the refusal.
std::string_view what_it_needs(std::string_view action) {
  std::string_view name = action.substr(0, action.find('('));
  if (name.starts_with("track-sc") || name.starts_with("sc-")) return "stick tables";
  if (name.starts_with("lua.")) return "Lua";
  struct Need {
    std::string_view action, need;
  };
  static constexpr Need kNeeds[] = {
      {"expect-netscaler-cip", "NetScaler client IP insertion"},
      {"send-spoe-group", "SPOE"},
      {"set-retries", "per-stream retries"},
      {"set-log-level", "per-stream log levels"},
      {"do-log", "log steps"},
      {"set-nice", "a scheduler with priorities"},
      {"set-priority-class", "a queue with priorities"},
      {"set-priority-offset", "a queue with priorities"},
      {"switch-mode", "an upgrade from TCP to HTTP"},
      {"use-service", "services in TCP mode"},
      {"do-resolve", "DNS resolvers"},
      {"set-bc-mark", "socket marks"},
      {"set-fc-mark", "socket marks"},
      {"set-mark", "socket marks"},
      {"set-bc-tos", "socket TOS settings"},
      {"set-fc-tos", "socket TOS settings"},
      {"set-tos", "socket TOS settings"},
      {"set-bandwidth-limit", "bandwidth limitation filters"},
      {"attach-srv", "reverse HTTP"},
  };
  for (const auto& n : kNeeds)
    if (n.action == name) return n.need;
  return {};
}

struct Supported {
  std::string_view name;
  Action action;
};
constexpr Supported kSupported[] = {
    {"accept", Action::kAccept},        {"reject", Action::kReject},
    {"close", Action::kClose},          {"silent-drop", Action::kSilentDrop},
    {"set-src", Action::kSetSrc},       {"set-dst", Action::kSetDst},
    {"set-src-port", Action::kSetSrcPort}, {"set-dst-port", Action::kSetDstPort},
};

uint32_t stage_avail(TcpRuleStage stage, bool backend) {
  switch (stage) {
    case TcpRuleStage::kConnection: return sample::kAtTcpConnection;
    case TcpRuleStage::kSession: return sample::kAtTcpSession;
    case TcpRuleStage::kContent:
      return sample::kAtTcpContent | (backend ? sample::kUseBackend : 0u);
    case TcpRuleStage::kResponse: return sample::kAtTcpResponse;
  }
  return sample::kAtTcpConnection;
}

}  // namespace

namespace detail {
base::Result<uint8_t> parse_rst_ttl(const std::vector<std::string>& words, std::size_t* i) {
  const std::size_t at = *i + 1;
  if (at >= words.size() || words[at].empty()) return base::Error::text("missing rst-ttl value");
  const std::string& w = words[at];
  std::size_t digits = 0;
  unsigned long v = 0;
  while (digits < w.size() && w[digits] >= '0' && w[digits] <= '9') {
    if (v <= 1000) v = v * 10 + static_cast<unsigned long>(w[digits] - '0');
    ++digits;
  }
  if (digits < w.size())
    return base::Error::text(fmt::format("invalid character starting at '{}' (value 1-255 expected)",
                                         w.substr(digits)));
  if (v < 1 || v > 255) return base::Error::text("valid rst-ttl values are [1-255]");
  *i = at + 1;
  return static_cast<uint8_t>(v);
}
}  // namespace detail

std::string_view tcp_stage_name(TcpRuleStage stage) {
  switch (stage) {
    case TcpRuleStage::kConnection: return "tcp-request connection";
    case TcpRuleStage::kSession: return "tcp-request session";
    case TcpRuleStage::kContent: return "tcp-request content";
    case TcpRuleStage::kResponse: return "tcp-response content";
  }
  return {};
}

base::Result<TcpRule> parse_tcp_rule(const std::vector<std::string>& words, TcpRuleStage stage,
                                     const AclRegistry& acls, std::string_view in, bool backend) {
  const std::string_view where = tcp_stage_name(stage);
  const std::string in_text = in.empty() ? std::string() : fmt::format(" in {}", in);
  TcpRule r;
  std::string_view action = words.empty() ? std::string_view() : std::string_view(words[0]);
  if (!haproxy_knows(stage, action))
    return base::Error::text(fmt::format("'{}' expects {}{} (got '{}').", where,
                                         stage_actions(stage), in_text, action));
  const uint32_t avail = stage_avail(stage, backend);
  std::size_t i = 1;
  const Supported* sup = nullptr;
  for (const auto& s : kSupported)
    if (s.name == action) sup = &s;
  if (action == "capture" && stage != TcpRuleStage::kContent)
    return base::Error::text(fmt::format("'capture {}' is not allowed in '{}' rules{}",
                                         words.size() > 1 ? words[1] : "", where, in_text));
  // Connection rules run before sluice has a session to keep variables or a local address in.
  const bool session_less = stage == TcpRuleStage::kConnection &&
                            (is_var_action(action) || action == "set-dst" || action == "set-dst-port");
  if (session_less)
    return base::Error::text(fmt::format(
        "'{} {}' is not supported by sluice yet (connection rules run before the session "
        "exists: use 'tcp-request session').", where, action));
  if (action == "capture") {
    // capture <expr> len <n>: HAProxy names the action in front of each of its reasons.
    auto fail = [&](std::string_view why) {
      return base::Error::text(fmt::format("'{} capture' : {}", where, why));
    };
    if (backend) {
      // "backend 'be'" -> "proxy 'be'"
      std::string_view name = in.substr(in.find(' ') + 1);
      return fail(fmt::format("proxy {} has no frontend capability", name));
    }
    if (words.size() < 2 || words[1].empty() || detail::is_cond_word(words[1]))
      return fail("missing fetch method");
    std::size_t next = 0;
    auto e = detail::parse_rule_expr(words[1], avail, words[1], &next);
    if (!e.ok()) return fail(e.error().message);
    r.action = Action::kCapture;
    r.expr = std::move(e.value());
    if (words.size() < 3 || words[2] != "len") return fail("a positive 'len' argument is mandatory");
    // atoi(): "3x" is 3, nothing or "x" is 0.
    long long len = 0;
    const std::string_view n = words.size() > 3 ? std::string_view(words[3]) : std::string_view();
    for (std::size_t k = 0; k < n.size() && n[k] >= '0' && n[k] <= '9' && len <= INT32_MAX; ++k)
      len = len * 10 + (n[k] - '0');
    if (len <= 0 || len > INT32_MAX) return fail("length must be > 0");
    r.capture_len = static_cast<int>(len);
    i = words.size() > 3 ? 4 : 3;
  } else if (action == "expect-proxy") {
    // The connection starts with a PROXY protocol header (as `bind ... accept-proxy`).
    if (stage != TcpRuleStage::kConnection)
      return base::Error::text(fmt::format("'expect-proxy layer4' is not allowed in '{}' rules{}",
                                           where, in_text));
    const std::string_view layer = words.size() > 1 ? std::string_view(words[1]) : "";
    if (layer != "layer4")
      return base::Error::text(fmt::format("'{} expect-proxy' only supports 'layer4'{} (got '{}')",
                                           where, in_text, layer));
    r.action = Action::kExpectProxy;
    i = 2;
  } else if (is_var_action(action)) {
    r.action = Action::kVar;
    auto n = parse_var_action(words, avail, &r.var);
    if (!n.ok()) return n.error();
    i = n.value();
  } else if (!sup) {
    std::string_view need = what_it_needs(action);
    return base::Error::text(fmt::format("'{} {}' is not supported by sluice yet{}.", where,
                                         action,
                                         need.empty() ? "" : fmt::format(" (it needs {})", need)));
  } else {
    r.action = sup->action;
    if (r.action == Action::kSilentDrop && words.size() > 1 && words[1] == "rst-ttl") {
      auto ttl = detail::parse_rst_ttl(words, &i);
      if (!ttl.ok()) return ttl.error();
      r.rst_ttl = ttl.value();
    }
    if (r.action == Action::kSetSrc || r.action == Action::kSetDst ||
        r.action == Action::kSetSrcPort || r.action == Action::kSetDstPort) {
      auto e = parse_action_expr(words, avail);
      if (!e.ok()) return e.error();
      r.expr = std::move(e.value());
      i = 2;
    }
  }
  if (words.size() > i) {
    if (!detail::is_cond_word(words[i]))
      return base::Error::text(fmt::format("'{} {}' only accepts 'if' or 'unless'{} (got '{}')",
                                           where, action, in.empty() ? "" : "," + in_text,
                                           words[i]));
    auto c = parse_condition(std::vector<std::string>(words.begin() + static_cast<std::ptrdiff_t>(i),
                                                      words.end()),
                             acls);
    if (!c.ok())
      return base::Error::text(fmt::format("error detected while parsing a '{} {}' condition : {}.",
                                           where, action, c.error().message));
    r.cond = std::move(c.value());
  }
  return r;
}

std::vector<std::string> check_stage(const Condition& cond, TcpRuleStage stage,
                                     std::string_view section) {
  // HAProxy checks content rules against what an HTTP request offers (they may read it once
  // parsed), response rules against what a response offers.
  const uint32_t avail = stage == TcpRuleStage::kConnection ? sample::kAtTcpConnection
                         : stage == TcpRuleStage::kSession  ? sample::kAtTcpSession
                         : stage == TcpRuleStage::kContent  ? sample::kAtHttpRequest
                                                            : sample::kAtHttpResponse;
  // HAProxy's two checks, one warning at most: first an ACL none of whose terms can work
  // here, then an ACL some of whose terms cannot.
  auto bad = [&](const AclTerm& term) { return (term.expr.use() & ~avail) != 0; };
  const std::string where(tcp_stage_name(stage));
  const std::string rule = fmt::format("{} {} rule", section, where);
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
                            "which is incompatible with '{}'",
                            where, first_bad->keyword, rule)};
      return {fmt::format("acl '{}' will never match in '{}' because it only involves keywords "
                          "that are incompatible with '{}'",
                          t.acl->name, where, rule)};
    }
  for (const auto& g : cond.groups_)
    for (const auto& t : g)
      for (const auto& term : t.acl->terms) {
        if (!bad(*term)) continue;
        if (t.acl->name == "anonymous")
          return {fmt::format("anonymous acl involves keyword '{}' which is incompatible with "
                              "'{}'",
                              term->keyword, rule)};
        return {fmt::format("acl '{}' involves keyword '{}' which is incompatible with '{}'",
                            t.acl->name, term->keyword, rule)};
      }
  return {};
}

namespace {
// Fetches that read the local address, which the caller may have to ask the kernel for.
bool reads_dst(std::string_view fetch) {
  return fetch == "dst" || fetch == "dst_is_local" || fetch == "fc_dst" ||
         fetch == "fc_dst_is_local" || fetch == "dst_conn";
}
bool expr_reads_dst(const sample::Expr* e) { return e && reads_dst(e->fetch().name); }
}  // namespace

bool uses_dst(const Condition& cond) {
  for (const auto& g : cond.groups_)
    for (const auto& t : g)
      for (const auto& term : t.acl->terms)
        if (reads_dst(term->expr.fetch().name)) return true;
  return false;
}

bool uses_dst(const std::vector<TcpRule>& rules) {
  for (const auto& r : rules) {
    // A format may read it through any %[...]: asked of the kernel whenever there is one.
    if (uses_dst(r.cond) || expr_reads_dst(r.expr.get()) || expr_reads_dst(r.var.expr.get()) ||
        !r.var.fmt.is_literal() || r.action == Action::kSetDstPort)
      return true;
  }
  return false;
}

PayloadUse payload_fetch(const Condition& cond, uint32_t buffers) {
  for (const auto& g : cond.groups_)
    for (const auto& t : g)
      for (const auto& term : t.acl->terms)
        if (term->expr.use() & buffers) return {term->keyword, t.acl->name};
  return {};
}

PayloadUse payload_fetch(const std::vector<TcpRule>& rules, uint32_t buffers) {
  for (const auto& r : rules) {
    PayloadUse u = payload_fetch(r.cond, buffers);
    if (!u.fetch.empty()) return u;
    for (const sample::Expr* e : {r.expr.get(), r.var.expr.get()})
      if (e && (e->use() & buffers)) return {std::string(e->fetch().name), ""};
    PayloadUse in_fmt;
    r.var.fmt.for_each_expr([&](const sample::Expr& e) {
      if (in_fmt.fetch.empty() && (e.use() & buffers)) in_fmt = {std::string(e.fetch().name), ""};
    });
    if (!in_fmt.fetch.empty()) return in_fmt;
  }
  return {};
}

bool waits_for_content(const std::vector<TcpRule>& rules) {
  auto waits = [](const sample::Expr* e) {
    return e && ((e->use() & sample::kUseReqBuf) || e->fetch().name == "wait_end");
  };
  for (const auto& r : rules) {
    if (!payload_fetch(std::vector<TcpRule>{r}).fetch.empty()) return true;
    for (const auto& g : r.cond.groups_)
      for (const auto& t : g)
        for (const auto& term : t.acl->terms)
          if (waits(&term->expr)) return true;
  }
  return false;
}

namespace {

// set-src / set-dst: the address becomes the sample's, keeping the port where the family
// has one (HAProxy), else 0. A sample that is no address changes nothing.
void set_address(net::SocketAddress& a, const sample::Sample& in, const RequestView& v) {
  sample::Sample s = in;
  if (s.type != sample::Type::kIpv4 && s.type != sample::Type::kIpv6 &&
      !sample::cast(s, sample::Type::kIpv4, v.sc())) {
    s = in;
    if (!sample::cast(s, sample::Type::kIpv6, v.sc())) return;
  }
  const bool inet = a.family() == AF_INET || a.family() == AF_INET6;
  const uint16_t port = inet ? a.port() : 0;
  if (s.type == sample::Type::kIpv4) {
    a = net::SocketAddress::ipv4(ntohl(s.v4.s_addr), port);
    return;
  }
  sockaddr_in6 sin6{};
  sin6.sin6_family = AF_INET6;
  sin6.sin6_addr = s.v6;
  sin6.sin6_port = htons(port);
  a = net::SocketAddress::from_sockaddr(reinterpret_cast<const sockaddr*>(&sin6), sizeof sin6);
}

// set-src-port / set-dst-port: an address without a port becomes 0.0.0.0 first (HAProxy).
void set_port(net::SocketAddress& a, const sample::Sample& in, const RequestView& v) {
  sample::Sample s = in;
  if (!sample::cast(s, sample::Type::kSint, v.sc())) return;
  const auto port = static_cast<uint16_t>(s.sint);
  if (a.family() != AF_INET && a.family() != AF_INET6) a = net::SocketAddress::ipv4(0, 0);
  a.set_port(port);
}

void rewrite(const TcpRule& r, RequestView& v, const TcpAddrs& addrs) {
  const bool src = r.action == Action::kSetSrc || r.action == Action::kSetSrcPort;
  net::SocketAddress* target = src ? addrs.src : addrs.dst;
  if (!target) return;
  sample::Sample s;
  if (!r.expr->eval(v, s)) return;
  // The first change copies what the view saw into the session's storage.
  const net::SocketAddress* cur = src ? v.src : v.dst;
  if (cur != target) {
    if (cur) {
      *target = *cur;
    } else {
      *target = net::SocketAddress::ipv4(0, src ? 0 : v.dst_port);
    }
  }
  if (r.action == Action::kSetSrc || r.action == Action::kSetDst) {
    set_address(*target, s, v);
  } else {
    set_port(*target, s, v);
  }
  if (src) {
    v.src = target;
  } else {
    v.dst = target;
    v.dst_port = target->port();
  }
}

}  // namespace

TcpVerdict run_tcp_rules(const std::vector<TcpRule>& rules, RequestView& v, TcpAddrs addrs,
                         const RuleLoc** last) {
  for (const auto& r : rules) {
    if (!r.cond.empty()) {
      Match m = r.cond.eval_partial(v);
      if (m == Match::kMiss) return TcpVerdict::kWait;
      if (m == Match::kFail) continue;
    }
    if (last && r.is_final()) *last = &r.loc;
    switch (r.action) {
      case Action::kAccept: return TcpVerdict::kAccept;
      case Action::kReject: return TcpVerdict::kReject;
      case Action::kClose: return TcpVerdict::kClose;
      case Action::kSilentDrop:
        if (addrs.rst_ttl) *addrs.rst_ttl = r.rst_ttl;
        return TcpVerdict::kSilentDrop;
      case Action::kVar: r.var.run(v); break;
      case Action::kSetSrc:
      case Action::kSetDst:
      case Action::kSetSrcPort:
      case Action::kSetDstPort: rewrite(r, v, addrs); break;
      case Action::kExpectProxy:
        if (addrs.expect_proxy) *addrs.expect_proxy = true;
        break;
      case Action::kCapture: {
        sample::Sample smp;
        if (v.captures && r.expr->eval(v, smp) && sample::cast(smp, sample::Type::kStr, v.sc()))
          v.captures->set_req(r.capture_id, smp.str);
        break;
      }
    }
  }
  return TcpVerdict::kAccept;
}

TcpVerdict tcp_rules_verdict(const std::vector<TcpRule>& rules, const RequestView& v) {
  RequestView copy = v;
  return run_tcp_rules(rules, copy);
}

bool tcp_rules_accept(const std::vector<TcpRule>& rules, const RequestView& v) {
  TcpVerdict t = tcp_rules_verdict(rules, v);
  return t != TcpVerdict::kReject && t != TcpVerdict::kSilentDrop;
}

}  // namespace sluice::rules

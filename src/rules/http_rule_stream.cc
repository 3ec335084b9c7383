// Parsing of the HTTP rule actions that act on the stream rather than on the message:
// capture, set-log-level, set-timeout, set-src, set-src-port, set-dst and set-dst-port, with
// HAProxy 3.5's arguments and messages. apply.cc runs them.
#include <fmt/format.h>

#include "base/time_units.h"
#include "rules/internal.h"

namespace sluice::rules::detail {

namespace {

using Action = HttpRule::Action;

bool is_cond(const std::string& w) { return w == "if" || w == "unless"; }

// HAProxy's syslog level names, in level order.
constexpr std::string_view kLevels[] = {"emerg",   "alert",  "crit", "err",
                                        "warning", "notice", "info", "debug"};

// atoi(): leading blanks, a sign, digits; anything after is ignored.
long long atoi_like(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  bool neg = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
  long long v = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9' && v < (1LL << 40); ++i) v = v * 10 + (s[i] - '0');
  return neg ? -v : v;
}

// A capture id: a decimal number, nothing else.
bool parse_id(std::string_view s, int* out) {
  if (s.empty() || s.size() > 9) return false;
  int v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
    v = v * 10 + (ch - '0');
  }
  *out = v;
  return true;
}

// capture <expr> len <n> | id <n> (http-request); capture <expr> id <n> (the response sides).
base::Result<std::size_t> parse_capture(const StreamActionCtx& c, HttpRule& r) {
  const auto& w = c.words;
  const bool req = c.side == RuleSide::kRequest;
  const char* usage = req ? "expects <expression> [ 'len' <length> | id <idx> ]"
                          : "expects <expression> id <idx>";
  // HAProxy wants three words, none of them a condition, before anything else.
  for (std::size_t k = 1; k <= 3; ++k)
    if (k >= w.size() || w[k].empty() || is_cond(w[k])) return base::Error::text(usage);
  std::size_t next = 0;
  auto e = parse_rule_expr(w[1], c.avail, w[1], &next);
  if (!e.ok()) return e.error();
  r.expr = std::move(e.value());
  const std::string& kw = w[2];
  if (req && kw == "len") {
    if (!c.owner.frontend)
      return base::Error::text(fmt::format("proxy '{}' has no frontend capability", c.owner.name));
    long long len = atoi_like(w[3]);
    if (len <= 0 || len > 0x7fffffff) return base::Error::text("length must be > 0");
    r.capture_len = static_cast<int>(len);
    return std::size_t{4};
  }
  if (kw != "id")
    return base::Error::text(req ? fmt::format("expects 'len' or 'id', found '{}'", kw)
                                 : fmt::format("expects 'id', found '{}'", kw));
  if (!parse_id(w[3], &r.capture_id))
    return base::Error::text(fmt::format("cannot parse id '{}'", w[3]));
  return std::size_t{4};
}

// set-log-level <level>|silent
base::Result<std::size_t> parse_log_level(const StreamActionCtx& c, HttpRule& r) {
  const auto& w = c.words;
  const char* usage = "expects exactly 1 argument (log level name or 'silent')";
  if (w.size() < 2 || w[1].empty()) return base::Error::text(usage);
  if (w[1] == "silent") {
    r.log_level = -1;
    return std::size_t{2};
  }
  for (std::size_t k = 0; k < std::size(kLevels); ++k)
    if (w[1] == kLevels[k]) {
      r.log_level = static_cast<int8_t>(k + 1);
      return std::size_t{2};
    }
  return base::Error::text(usage);
}

// set-timeout client|server|tunnel <time>|<expr>. A word that starts like a time is one; else
// it is an expression, and when it is not one either HAProxy names the time's bad character.
base::Result<std::size_t> parse_set_timeout(const StreamActionCtx& c, HttpRule& r) {
  const auto& w = c.words;
  if (w.size() < 3 || w[1].empty() || w[2].empty() || is_cond(w[1]) || is_cond(w[2]))
    return base::Error::text("expects exactly 2 arguments");
  const std::string& which = w[1];
  if (which == "client") {
    r.timeout_kind = StreamEdit::kClient;
    if (!c.owner.frontend)
      return base::Error::text(fmt::format("'{}' has no frontend capability", c.owner.name));
  } else if (which == "server" || which == "tunnel") {
    r.timeout_kind = which == "server" ? StreamEdit::kServer : StreamEdit::kTunnel;
    if (!c.owner.backend)
      return base::Error::text(fmt::format("'{}' has no backend capability", c.owner.name));
  } else if (which == "connect" || which == "queue" || which == "tarpit") {
    return base::Error::text(
        fmt::format("'set-timeout {}' is not supported by sluice yet (only 'client', 'server' and "
                    "'tunnel' are)", which));
  } else {
    return base::Error::text(fmt::format(
        "'set-timeout' rule supports 'client'/'connect'/'queue'/'server'/'tarpit'/'tunnel' (got '{}')",
        which));
  }
  const std::string& v = w[2];
  base::TimeValue t = base::parse_time(v, base::TimeUnit::kMs);
  using S = base::TimeValue::Status;
  if (t.status == S::kOverflow)
    return base::Error::text(fmt::format(
        "timer overflow in argument '{}' to rule 'set-timeout {}' (maximum value is 2147483647 "
        "ms or ~24.8 days)", v, which));
  if (t.status == S::kUnderflow)
    return base::Error::text(fmt::format(
        "timer underflow in argument '{}' to rule 'set-timeout {}' (minimum value is 1 ms)", v,
        which));
  if (t.status == S::kBadChar || t.trailing) {
    // Any fetch may stand here: HAProxy does not check where this expression runs.
    std::size_t next = 0;
    auto e = parse_rule_expr(v, sample::kAtAny, v, &next);
    if (!e.ok())
      return base::Error::text(fmt::format("unexpected character '{}' in rule 'set-timeout {}'",
                                           t.trailing ? t.trailing : t.bad, which));
    r.expr = std::move(e.value());
    return std::size_t{3};
  }
  if (t.value == 0)
    return base::Error::text(fmt::format("null value is not valid for a 'set-timeout {}' rule", which));
  r.timeout_ms = t.value;
  return std::size_t{3};
}

}  // namespace

base::Result<std::shared_ptr<const sample::Expr>> parse_rule_expr(std::string_view text,
                                                                  uint32_t avail,
                                                                  std::string_view shown,
                                                                  std::size_t* next) {
  sample::ParseCtx pc;
  pc.avail = avail;
  std::size_t end = 0;
  auto e = sample::Expr::parse(text, pc, &end);
  if (!e.ok()) {
    const std::string& m = e.error().message;
    // HAProxy's words for a fetch this place does not have.
    if (m.starts_with("sample fetch <")) {
      auto p = m.find("needs '");
      std::string what = p == std::string::npos ? "" : m.substr(p + 7, m.find('\'', p + 7) - p - 7);
      return base::Error::text(fmt::format(
          "fetch method '{}' extracts information from '{}', none of which is available here",
          shown, what));
    }
    return e.error();
  }
  if (end != text.size())
    return base::Error::text(fmt::format("unexpected characters '{}' after sample expression '{}'",
                                         text.substr(end), text.substr(0, end)));
  *next = end;
  return std::make_shared<const sample::Expr>(std::move(e.value()));
}

bool is_stream_action(std::string_view name, RuleSide side) {
  if (name == "set-log-level" || name == "capture") return true;
  if (name == "set-timeout") return side != RuleSide::kAfterResponse;
  return side == RuleSide::kRequest &&
         (name == "set-src" || name == "set-src-port" || name == "set-dst" || name == "set-dst-port");
}

base::Result<std::size_t> parse_stream_action(const StreamActionCtx& c, HttpRule& r) {
  const std::string& name = c.words[0];
  if (name == "capture") {
    r.action = Action::kCapture;
    return parse_capture(c, r);
  }
  if (name == "set-log-level") {
    r.action = Action::kSetLogLevel;
    return parse_log_level(c, r);
  }
  if (name == "set-timeout") {
    r.action = Action::kSetTimeout;
    return parse_set_timeout(c, r);
  }
  r.action = name == "set-src"        ? Action::kSetSrc
             : name == "set-src-port" ? Action::kSetSrcPort
             : name == "set-dst"      ? Action::kSetDst
                                      : Action::kSetDstPort;
  if (c.words.size() < 2 || c.words[1].empty() || is_cond(c.words[1]))
    return base::Error::text("missing fetch method");
  std::size_t next = 0;
  auto e = parse_rule_expr(c.words[1], c.avail, c.words[1], &next);
  if (!e.ok()) return e.error();
  r.expr = std::move(e.value());
  return std::size_t{2};
}

}  // namespace sluice::rules::detail

#include "check/rules.h"

#include <cstring>

#include <fmt/format.h>

#include "base/strings.h"

namespace sluice::check {

bool RuleSet::starts_with_connect() const {
  for (const CheckRule& r : rules) {
    if (r.kind == CheckRule::Kind::kComment) continue;
    return r.kind == CheckRule::Kind::kConnect;
  }
  return false;
}

bool decode_hex(std::string_view hex, std::string* out) {
  if (hex.size() % 2 != 0) return false;
  out->clear();
  out->reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int hi = base::hex_value(hex[i]), lo = base::hex_value(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
  }
  return true;
}

namespace {
// rbinary's regex runs on the bytes written in upper-case hexadecimal, as HAProxy dumps them.
std::string hex_dump(std::string_view in) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(in.size() * 2);
  for (unsigned char c : in) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}
}  // namespace

ExpectVerdict evaluate_expect(const CheckRule& r, std::string_view in, bool last,
                              std::string_view rendered) {
  using M = CheckRule::Match;
  // min-recv: too little to judge while more may come.
  if (r.min_recv >= 0 && in.size() < static_cast<std::size_t>(r.min_recv) && !last)
    return ExpectVerdict::kWait;
  bool found = false;
  switch (r.match) {
    case M::kString:
    case M::kBinary: found = in.find(r.bytes) != std::string_view::npos; break;
    case M::kStringLf: found = in.find(rendered) != std::string_view::npos; break;
    case M::kBinaryLf: {
      std::string want;
      found = decode_hex(rendered, &want) && in.find(want) != std::string_view::npos;
      break;
    }
    case M::kRstring: found = r.re && r.re->search(in); break;
    case M::kRbinary: found = r.re && r.re->search(hex_dump(in)); break;
  }
  if (found) return r.negate ? ExpectVerdict::kFail : ExpectVerdict::kPass;
  // Not there yet: more may still bring it (or, negated, bring it and fail).
  if (!last) return ExpectVerdict::kWait;
  return r.negate ? ExpectVerdict::kPass : ExpectVerdict::kFail;
}

std::string expect_failure_text(const CheckRule& r, int step, std::string_view rendered) {
  using M = CheckRule::Match;
  std::string what;
  switch (r.match) {
    case M::kString: what = fmt::format("'{}'", r.pattern); break;
    case M::kStringLf: what = fmt::format("'{}'", rendered); break;
    case M::kRstring: what = "(regex)"; break;
    case M::kBinary:
    case M::kBinaryLf: what = "(binary)"; break;
    case M::kRbinary: what = "(binary regex)"; break;
  }
  std::string t = fmt::format("TCPCHK {} content {} at step {}",
                              r.negate ? "matched unwanted" : "did not match", what, step);
  if (!r.comment.empty()) t += " comment: " + r.comment;
  return t;
}

std::string step_text(const CheckRule& r) {
  using M = CheckRule::Match;
  switch (r.kind) {
    case CheckRule::Kind::kConnect: {
      std::string t = "connect";
      if (r.has_addr) t += " addr " + r.addr.host_string();
      if (r.port) t += fmt::format(" port {}", r.port);
      return t;
    }
    case CheckRule::Kind::kSend: return "send";
    case CheckRule::Kind::kComment: return "comment";
    case CheckRule::Kind::kExpect: break;
  }
  const char* kind = "string";
  switch (r.match) {
    case M::kString: kind = "string"; break;
    case M::kRstring: kind = "rstring"; break;
    case M::kBinary: kind = "binary"; break;
    case M::kRbinary: kind = "rbinary"; break;
    case M::kStringLf: kind = "string-lf"; break;
    case M::kBinaryLf: kind = "binary-lf"; break;
  }
  return fmt::format("expect {}{} '{}'", r.negate ? "! " : "", kind, r.pattern);
}

std::string errno_report(int err) {
  const char* name = strerrorname_np(err);
  char buf[128];
  const char* text = strerror_r(err, buf, sizeof buf);   // GNU: the message, maybe not in buf
  if (!name) return text;
  return fmt::format("{} returned by OS ({})", name, text);
}

}  // namespace sluice::check

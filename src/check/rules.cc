#include "check/rules.h"

#include <cstring>

#include <fmt/format.h>

#include "base/strings.h"

namespace sluice::check {

bool RuleSet::starts_with_connect() const {
  for (const CheckRule& r : rules) {
    if (r.kind == CheckRule::Kind::kComment || r.kind == CheckRule::Kind::kSetVar ||
        r.kind == CheckRule::Kind::kUnsetVar)
      continue;
    return r.kind == CheckRule::Kind::kConnect;
  }
  return false;
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
      found = base::hex_decode(rendered, &want) && in.find(want) != std::string_view::npos;
      break;
    }
    case M::kRstring: found = r.re && r.re->search(in); break;
    case M::kRbinary: found = r.re && r.re->search(hex_dump(in)); break;
    case M::kMysqlGreeting:
    case M::kMysqlReply:
    case M::kLdapBind: return evaluate_custom(r, in, last).verdict;
    default: {   // http-check's: see evaluate_http_expect()
      HttpOutcome o;
      return evaluate_http_expect(r, in, last, "GET", rendered, &o);
    }
  }
  if (found) return r.negate ? ExpectVerdict::kFail : ExpectVerdict::kPass;
  // Not there yet: more may still bring it (or, negated, bring it and fail).
  if (!last) return ExpectVerdict::kWait;
  return r.negate ? ExpectVerdict::kPass : ExpectVerdict::kFail;
}

bool is_custom(const CheckRule& r) {
  using M = CheckRule::Match;
  return r.kind == CheckRule::Kind::kExpect &&
         (r.match == M::kMysqlGreeting || r.match == M::kMysqlReply || r.match == M::kLdapBind);
}

namespace {
// A text field of a protocol packet, up to its NUL (or its end).
std::string c_text(std::string_view s) { return std::string(s.substr(0, s.find('\0'))); }

CustomOutcome fail(lb::CheckStatus st, int code, std::string info) {
  CustomOutcome o;
  o.verdict = ExpectVerdict::kFail;
  o.status = st;
  o.code = code;
  o.info = std::move(info);
  return o;
}

// One MySQL packet at the start of `in`: its payload, or kWait / a failure.
bool mysql_packet(std::string_view in, bool last, std::string_view* payload, CustomOutcome* out) {
  if (in.size() < 4) {
    *out = last ? fail(lb::CheckStatus::kL7Rsp, -1, "") : CustomOutcome{};
    return false;
  }
  const auto* u = reinterpret_cast<const unsigned char*>(in.data());
  const std::size_t len = u[0] | (u[1] << 8) | (static_cast<std::size_t>(u[2]) << 16);
  if (in.size() < 4 + len) {
    *out = last ? fail(lb::CheckStatus::kL7Rsp, -1, "") : CustomOutcome{};
    return false;
  }
  *payload = in.substr(4, len);
  return true;
}
}  // namespace

CustomOutcome evaluate_custom(const CheckRule& r, std::string_view in, bool last) {
  using M = CheckRule::Match;
  CustomOutcome o;
  if (r.match == M::kMysqlGreeting || r.match == M::kMysqlReply) {
    std::string_view p;
    if (!mysql_packet(in, last, &p, &o)) return o;
    if (p.empty()) return fail(lb::CheckStatus::kL7Rsp, -1, "");
    const auto* u = reinterpret_cast<const unsigned char*>(p.data());
    // An error packet: 0xff, its code (little-endian), its message.
    if (u[0] == 0xff) {
      const int code = p.size() >= 3 ? (u[1] | (u[2] << 8)) : 0;
      return fail(lb::CheckStatus::kL7Sts, code, p.size() > 3 ? c_text(p.substr(3)) : "");
    }
    o.verdict = ExpectVerdict::kPass;
    if (r.match == M::kMysqlGreeting) o.info = c_text(p.substr(1));   // the server's version
    return o;
  }
  // LDAP: an LDAPMessage (0x30, a BER length), its message id, a bind response (0x61), its
  // result code: 0 passes ("Success"), another is the check's code.
  if (in.size() < 2 && !last) return o;
  const auto* u = reinterpret_cast<const unsigned char*>(in.data());
  std::size_t at = 0;
  auto next = [&](std::size_t n) { return at + n <= in.size(); };
  if (!next(2) || u[0] != 0x30) return fail(lb::CheckStatus::kL7Rsp, -1, "Not LDAPv3 protocol");
  at = 1;
  std::size_t len = u[at++];
  if (len & 0x80) {
    const std::size_t n = len & 0x7f;
    if (n == 0 || n > 4 || !next(n)) return last || n == 0 || n > 4 ? fail(lb::CheckStatus::kL7Rsp, -1, "Not LDAPv3 protocol") : o;
    len = 0;
    for (std::size_t i = 0; i < n; ++i) len = (len << 8) | u[at++];
  }
  if (!next(len)) return last ? fail(lb::CheckStatus::kL7Rsp, -1, "Not LDAPv3 protocol") : o;
  // message id 1, then the bind response and its result code (an ENUMERATED).
  if (!next(3) || u[at] != 0x02 || u[at + 1] != 0x01 || u[at + 2] != 0x01)
    return fail(lb::CheckStatus::kL7Rsp, -1, "Not LDAPv3 protocol");
  at += 3;
  if (!next(2) || u[at] != 0x61) return fail(lb::CheckStatus::kL7Rsp, -1, "Not LDAPv3 protocol");
  at += 2;
  if (!next(3) || u[at] != 0x0a || u[at + 1] != 0x01)
    return fail(lb::CheckStatus::kL7Rsp, -1, "Not LDAPv3 protocol");
  const int code = u[at + 2];
  if (code != 0)
    return fail(lb::CheckStatus::kL7Sts, code,
                "See RFC: http://tools.ietf.org/html/rfc4511#section-4.1.9");
  o.verdict = ExpectVerdict::kPass;
  o.info = "Success";
  return o;
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
    case M::kMysqlGreeting:
    case M::kMysqlReply:
    case M::kLdapBind: what = "(custom)"; break;
    default: what = fmt::format("'{}'", r.pattern); break;
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
    case CheckRule::Kind::kSetVar:
    case CheckRule::Kind::kUnsetVar: return "action";   // never waits, never named in a failure
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
    case M::kMysqlGreeting:
    case M::kMysqlReply:
    case M::kLdapBind: kind = "custom"; break;
    case M::kStatus: kind = "status"; break;
    case M::kRstatus: kind = "rstatus"; break;
    case M::kHdr: kind = "hdr"; break;
    case M::kFhdr: kind = "fhdr"; break;
    case M::kBody: kind = "string"; break;
    case M::kRbody: kind = "rstring"; break;
    case M::kBodyLf: kind = "string-lf"; break;
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

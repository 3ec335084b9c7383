// The converters that read HTTP header values (HAProxy's section 7.3.1): the rfc7239_* ones on
// a `Forwarded` header (RFC 7239) and `date` on an HTTP date. HAProxy's rules, checked
// against HAProxy 3.5:
//   - a Forwarded value is one forwarded-element: `for`, `by`, `host` and `proto` parameters
//     (lower case, each at most once) separated by ';' with no blanks; a ',' or anything else
//     makes it invalid, except that once all four are read the rest is not looked at;
//   - `proto` is "http" or "https"; `host` is letters, digits and dots, or quoted, that or an
//     IPv6 address in brackets, with an optional port; `for` and `by` are nodes: an IPv4
//     address, "unknown" or an obfuscated "_name", and only quoted a bracketed IPv6 address
//     and a ":port" (1 to 65535, or "_name");
//   - rfc7239_n2nn / rfc7239_n2np read a node as the inside of quotes, and ignore what follows;
//     rfc7239_nn / rfc7239_np go the other way, writing a sample as a node name or port.
//   - `date` reads IMF-fixdate, RFC 850 (two-digit years up to 60 are 20xx) and asctime dates
//     (names case-sensitive, weekday unchecked, fields unchecked, trailing text ignored), and
//     answers the seconds since the epoch as HAProxy's own arithmetic does: a year before
//     1970 wraps through 32 bits.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include <arpa/inet.h>

#include "sample/tables.h"

namespace sluice::sample::tables {

namespace {

enum FwdField : uint8_t { kFwdProto = 1, kFwdHost = 2, kFwdFor = 4, kFwdBy = 8, kFwdAll = 15 };

bool fwd_alnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool fwd_obf(char c) { return fwd_alnum(c) || c == '.' || c == '_' || c == '-'; }
bool fwd_digit(char c) { return c >= '0' && c <= '9'; }
bool fwd_hex(char c) {
  return fwd_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// IPv4 as inet_pton reads it: four decimal parts, no leading zeros.
bool fwd_ipv4(std::string_view s, in_addr* out) {
  uint32_t v = 0;
  int parts = 0;
  std::size_t i = 0;
  while (parts < 4) {
    if (i >= s.size() || !fwd_digit(s[i])) return false;
    std::size_t start = i;
    unsigned n = 0;
    while (i < s.size() && fwd_digit(s[i]) && i - start < 4) n = n * 10 + (s[i++] - '0');
    if (n > 255 || (i - start > 1 && s[start] == '0')) return false;
    v = v << 8 | n;
    ++parts;
    if (parts < 4) {
      if (i >= s.size() || s[i] != '.') return false;
      ++i;
    }
  }
  if (i != s.size()) return false;
  out->s_addr = htonl(v);
  return true;
}

// A cursor over the value.
struct FwdIn {
  std::string_view s;
  std::size_t p = 0;
  bool end() const { return p >= s.size(); }
  char peek() const { return p < s.size() ? s[p] : '\0'; }
  bool take(std::string_view w) {
    if (s.substr(p, w.size()) != w) return false;
    p += w.size();
    return true;
  }
};

// A port: 1 to 5 digits worth 1 to 65535; *port its value.
bool fwd_port(FwdIn& in, int64_t* port) {
  std::size_t start = in.p;
  int64_t v = 0;
  while (!in.end() && fwd_digit(in.peek()) && in.p - start < 6) v = v * 10 + (in.s[in.p++] - '0');
  std::size_t n = in.p - start;
  if (n == 0 || n > 5 || v < 1 || v > 65535) return false;
  *port = v;
  return true;
}

// "[" IPv6 "]" at the cursor.
bool fwd_ipv6(FwdIn& in, in6_addr* out) {
  if (in.peek() != '[') return false;
  std::size_t start = ++in.p;
  while (!in.end() && (fwd_hex(in.peek()) || in.peek() == ':')) ++in.p;
  std::size_t len = in.p - start;
  if (in.peek() != ']' || len == 0 || len >= INET6_ADDRSTRLEN) return false;
  char buf[INET6_ADDRSTRLEN];
  std::memcpy(buf, in.s.data() + start, len);
  buf[len] = 0;
  if (inet_pton(AF_INET6, buf, out) != 1) return false;
  ++in.p;
  return true;
}

// A node (RFC 7239 section 6) and what it is made of.
struct FwdNode {
  enum Kind : uint8_t { kV4, kV6, kName } kind = kName;   // kName: "unknown" or "_obf"
  in_addr v4{};
  in6_addr v6{};
  std::string_view name;
  bool has_port = false;
  int64_t port = 0;             // numeric port
  std::string_view obf_port;    // "_port"
  std::string_view raw;         // the node's text, without quotes
};

// A node at the cursor; `quoted`: inside quotes, where IPv6 and ports are allowed.
bool fwd_node(FwdIn& in, bool quoted, FwdNode* n) {
  std::size_t start = in.p;
  if (in.peek() == '[') {
    if (!quoted || !fwd_ipv6(in, &n->v6)) return false;
    n->kind = FwdNode::kV6;
  } else if (in.take("unknown")) {
    n->kind = FwdNode::kName;
    n->name = in.s.substr(start, 7);
  } else if (in.peek() == '_') {
    ++in.p;
    while (!in.end() && fwd_obf(in.peek())) ++in.p;
    if (in.p - start < 2) return false;
    n->kind = FwdNode::kName;
    n->name = in.s.substr(start, in.p - start);
  } else {
    while (!in.end() && (fwd_digit(in.peek()) || in.peek() == '.')) ++in.p;
    if (!fwd_ipv4(in.s.substr(start, in.p - start), &n->v4)) return false;
    n->kind = FwdNode::kV4;
  }
  if (quoted && in.peek() == ':') {
    ++in.p;
    n->has_port = true;
    if (in.peek() == '_') {
      std::size_t ps = in.p++;
      while (!in.end() && fwd_obf(in.peek())) ++in.p;
      if (in.p - ps < 2) return false;
      n->obf_port = in.s.substr(ps, in.p - ps);
    } else if (!fwd_port(in, &n->port)) {
      return false;
    }
  }
  n->raw = in.s.substr(start, in.p - start);
  return true;
}

// A node parameter's value: a bare node or a quoted one.
bool fwd_node_value(FwdIn& in, FwdNode* n) {
  bool quoted = in.peek() == '"';
  if (quoted) ++in.p;
  if (!fwd_node(in, quoted, n)) return false;
  return !quoted || in.take("\"");
}

bool fwd_host_value(FwdIn& in, std::string_view* host) {
  bool quoted = in.peek() == '"';
  if (quoted) ++in.p;
  std::size_t start = in.p;
  if (in.peek() == '[') {
    in6_addr v6;
    if (!quoted || !fwd_ipv6(in, &v6)) return false;
  } else {
    while (!in.end() && (fwd_alnum(in.peek()) || in.peek() == '.')) ++in.p;
    if (in.p == start) return false;
  }
  if (quoted && in.peek() == ':') {
    ++in.p;
    int64_t port;
    if (!fwd_port(in, &port)) return false;
  }
  *host = in.s.substr(start, in.p - start);
  return !quoted || in.take("\"");
}

struct Forwarded {
  uint8_t seen = 0;
  bool https = false;
  std::string_view host;
  FwdNode nfor, nby;
};

// Validates a Forwarded value; 0 when invalid, else the FwdField bits it has.
uint8_t fwd_parse(std::string_view v, Forwarded* f) {
  FwdIn in{v};
  while (true) {
    if (in.end()) return 0;   // a parameter was expected
    if (!(f->seen & kFwdProto) && in.take("proto=")) {
      if (in.take("https")) f->https = true;
      else if (!in.take("http")) return 0;
      f->seen |= kFwdProto;
    } else if (!(f->seen & kFwdHost) && in.take("host=")) {
      if (!fwd_host_value(in, &f->host)) return 0;
      f->seen |= kFwdHost;
    } else if (!(f->seen & kFwdFor) && in.take("for=")) {
      if (!fwd_node_value(in, &f->nfor)) return 0;
      f->seen |= kFwdFor;
    } else if (!(f->seen & kFwdBy) && in.take("by=")) {
      if (!fwd_node_value(in, &f->nby)) return 0;
      f->seen |= kFwdBy;
    } else {
      return 0;
    }
    if (f->seen == kFwdAll || in.end()) return f->seen;
    if (!in.take(";")) return 0;
  }
}

bool c_7239_is_valid(const Arg*, Sample& s, const Ctx&) {
  Forwarded f;
  s = Sample::boolean(fwd_parse(s.str, &f) != 0);
  return true;
}

bool c_7239_field(const Arg* a, Sample& s, const Ctx&) {
  std::string_view name = a[0].str;
  uint8_t field = name == "proto" ? kFwdProto
                  : name == "host" ? kFwdHost
                  : name == "for"  ? kFwdFor
                  : name == "by"   ? kFwdBy
                                   : 0;
  Forwarded f;
  if (!(fwd_parse(s.str, &f) & field)) return false;
  std::string_view out = field == kFwdProto ? std::string_view(f.https ? "https" : "http")
                         : field == kFwdHost ? f.host
                         : field == kFwdFor  ? f.nfor.raw
                                             : f.nby.raw;
  s.type = Type::kStr;
  s.str = out;
  if (field == kFwdProto) s.flags |= kConst;
  return true;
}

bool c_7239_n2nn(const Arg*, Sample& s, const Ctx&) {
  FwdIn in{s.str};
  FwdNode n;
  if (!fwd_node(in, true, &n)) return false;
  if (n.kind == FwdNode::kV4) {
    s.type = Type::kIpv4;
    s.v4 = n.v4;
  } else if (n.kind == FwdNode::kV6) {
    s.type = Type::kIpv6;
    s.v6 = n.v6;
  } else {
    s.type = Type::kStr;
    s.str = n.name;
  }
  return true;
}

bool c_7239_n2np(const Arg*, Sample& s, const Ctx&) {
  FwdIn in{s.str};
  FwdNode n;
  if (!fwd_node(in, true, &n) || !n.has_port) return false;
  if (!n.obf_port.empty()) {
    s.type = Type::kStr;
    s.str = n.obf_port;
  } else {
    s = Sample::integer(n.port);
  }
  return true;
}

// --- date ---

struct HttpDate {
  int64_t mday = 0, mon = 0, year = 0, hour = 0, min = 0, sec = 0;
};

struct DateIn {
  std::string_view s;
  std::size_t p = 0;
  bool ch(char c) {
    if (p >= s.size() || s[p] != c) return false;
    ++p;
    return true;
  }
  bool digits(int n, int64_t* v) {
    for (int i = 0; i < n; ++i) {
      if (p >= s.size() || s[p] < '0' || s[p] > '9') return false;
      *v = *v * 10 + (s[p++] - '0');
    }
    return true;
  }
  // One of `names`, at least `min` long: its index, or -1.
  template <std::size_t N>
  int name(const char* const (&names)[N]) {
    for (std::size_t i = 0; i < N; ++i) {
      std::size_t n = std::strlen(names[i]);
      if (s.substr(p, n) == names[i]) {
        p += n;
        return static_cast<int>(i);
      }
    }
    return -1;
  }
  bool time(HttpDate* d) {
    return digits(2, &d->hour) && ch(':') && digits(2, &d->min) && ch(':') && digits(2, &d->sec);
  }
};

constexpr const char* kLongDays[] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                     "Friday", "Saturday", "Sunday"};
// IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT".
bool date_imf(std::string_view s, HttpDate* d) {
  DateIn in{s};
  if (in.name(kDayNames) < 0 || !in.ch(',') || !in.ch(' ') || !in.digits(2, &d->mday) ||
      !in.ch(' '))
    return false;
  int m = in.name(kMonthNames);
  if (m < 0) return false;
  d->mon = m;
  return in.ch(' ') && in.digits(4, &d->year) && in.ch(' ') && in.time(d) && in.ch(' ') &&
         in.ch('G') && in.ch('M') && in.ch('T');
}

// RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT" (a four-digit year is read too).
bool date_rfc850(std::string_view s, HttpDate* d) {
  DateIn in{s};
  if (in.name(kLongDays) < 0 || !in.ch(',') || !in.ch(' ') || !in.digits(2, &d->mday) ||
      !in.ch('-'))
    return false;
  int m = in.name(kMonthNames);
  if (m < 0) return false;
  d->mon = m;
  if (!in.ch('-') || !in.digits(2, &d->year)) return false;
  if (in.ch(' ')) {
    if (d->year <= 60) d->year += 100;
    d->year += 1900;
  } else if (!in.digits(2, &d->year) || !in.ch(' ')) {
    return false;
  }
  return in.time(d) && in.ch(' ') && in.ch('G') && in.ch('M') && in.ch('T');
}

// asctime: "Sun Nov  6 08:49:37 1994".
bool date_asctime(std::string_view s, HttpDate* d) {
  DateIn in{s};
  if (in.name(kDayNames) < 0 || !in.ch(' ')) return false;
  int m = in.name(kMonthNames);
  if (m < 0 || !in.ch(' ')) return false;
  d->mon = m;
  if (in.ch(' ')) {
    if (!in.digits(1, &d->mday)) return false;
  } else if (!in.digits(2, &d->mday)) {
    return false;
  }
  return in.ch(' ') && in.time(d) && in.ch(' ') && in.digits(4, &d->year);
}

// Days from 1970-01-01 to January 1st of `y` (proleptic Gregorian).
int64_t days_to_year(int64_t y) {
  auto leaps = [](int64_t yr) {   // leap years in [1, yr]
    return yr / 4 - yr / 100 + yr / 400;
  };
  int64_t before = y - 1;
  int64_t leaps_before = before >= 0 ? leaps(before) : -1;   // year 0 is a leap year
  return (y - 1970) * 365 + leaps_before - leaps(1969);
}

bool c_date(const Arg*, Sample& s, const Ctx&) {
  HttpDate d;
  bool ok = date_imf(s.str, &d);
  if (!ok) ok = date_rfc850(s.str, &(d = HttpDate{}));
  if (!ok) ok = date_asctime(s.str, &(d = HttpDate{}));
  if (!ok) return false;
  static constexpr int kYday[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
  int64_t y = d.year;
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  int64_t yday = kYday[d.mon] + (leap && d.mon > 1 ? 1 : 0) + d.mday - 1;
  // The years' days wrap through an unsigned 32-bit count, as HAProxy's do.
  auto ydays = static_cast<uint32_t>(days_to_year(y));
  int64_t t = static_cast<int64_t>(ydays) * 86400 + yday * 86400 + d.hour * 3600 + d.min * 60 +
              d.sec;
  s = Sample::integer(t);
  return true;
}

// rfc7239_nn / rfc7239_np: a sample written as a Forwarded node name / node port. Addresses
// as they are (IPv6 in brackets), integers (np) as unsigned 32-bit decimals, anything else as
// text that must be an obfuscated identifier's characters, written "_" + text; else nothing.
bool obfuscated_text(Sample& s, const Ctx& ctx, std::string& out) {
  if (!cast(s, Type::kStr, ctx.sc()) || s.str.empty()) return false;
  for (char c : s.str)
    if (!fwd_obf(c)) return false;
  out += '_';
  out += s.str;
  return true;
}

bool c_7239_nn(const Arg*, Sample& s, const Ctx& ctx) {
  Sample in = s;
  std::string& b = ctx.sc().next();
  if (in.type == Type::kIpv4) {
    to_text(in, b);
  } else if (in.type == Type::kIpv6) {
    b += '[';
    to_text(in, b);
    b += ']';
  } else if (!obfuscated_text(in, ctx, b)) {
    return false;
  }
  s = Sample::string(b);
  return true;
}

bool c_7239_np(const Arg*, Sample& s, const Ctx& ctx) {
  Sample in = s;
  std::string& b = ctx.sc().next();
  if (in.type == Type::kSint) {
    b += std::to_string(static_cast<uint32_t>(in.sint));
  } else if (!obfuscated_text(in, ctx, b)) {
    return false;
  }
  s = Sample::string(b);
  return true;
}

constexpr ConvDef kConvs[] = {
    {"rfc7239_nn", c_7239_nn, no_args(), nullptr, Type::kAny, Type::kStr},
    {"rfc7239_np", c_7239_np, no_args(), nullptr, Type::kAny, Type::kStr},
    {"date", c_date, no_args(), nullptr, Type::kStr, Type::kSint},
    {"rfc7239_field", c_7239_field, args(1, ArgType::kStr), nullptr, Type::kStr, Type::kStr},
    {"rfc7239_is_valid", c_7239_is_valid, no_args(), nullptr, Type::kStr, Type::kBool},
    {"rfc7239_n2nn", c_7239_n2nn, no_args(), nullptr, Type::kStr, Type::kAny},
    {"rfc7239_n2np", c_7239_n2np, no_args(), nullptr, Type::kStr, Type::kAny},
};

}  // namespace

std::span<const ConvDef> rfc7239_convs() { return kConvs; }

}  // namespace sluice::sample::tables

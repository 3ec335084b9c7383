// Sample types and HAProxy's implicit casts.
#include "sample/sample.h"

#include <arpa/inet.h>

#include <cstring>

#include <fmt/format.h>

#include "sample/context.h"

namespace sluice::sample {

std::string_view type_name(Type t) {
  switch (t) {
    case Type::kAny: return "any";
    case Type::kBool: return "boolean";
    case Type::kSint: return "integer";
    case Type::kIpv4: return "ipv4";
    case Type::kIpv6: return "ipv6";
    case Type::kStr: return "string";
    case Type::kBin: return "binary";
    case Type::kMeth: return "method";
  }
  return "?";
}

namespace {
constexpr std::string_view kMethods[] = {"OPTIONS", "GET", "HEAD", "POST",
                                         "PUT", "DELETE", "TRACE", "CONNECT"};
}  // namespace

Method method_of(std::string_view text) {
  for (std::size_t i = 0; i < std::size(kMethods); ++i)
    if (text == kMethods[i]) return static_cast<Method>(i);
  return Method::kOther;
}

std::string_view method_name(Method m) {
  auto i = static_cast<std::size_t>(m);
  return i < std::size(kMethods) ? kMethods[i] : std::string_view();
}

Scratch& thread_scratch() {
  thread_local Scratch s;
  return s;
}

int64_t leading_int(std::string_view s) {
  std::size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
  int64_t v = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    if (v > (INT64_MAX - 9) / 10) break;
    v = v * 10 + (s[i] - '0');
  }
  return neg ? -v : v;
}

bool can_cast(Type from, Type to) {
  if (from == to || to == Type::kAny) return true;
  switch (from) {
    case Type::kBool:
    case Type::kSint:
      return to == Type::kBool || to == Type::kSint || to == Type::kStr || to == Type::kIpv4 ||
             to == Type::kIpv6 || to == Type::kBin;
    case Type::kIpv4:
      return to == Type::kSint || to == Type::kIpv6 || to == Type::kStr || to == Type::kBin;
    case Type::kIpv6:
      return to == Type::kIpv4 || to == Type::kStr || to == Type::kBin;
    case Type::kStr:
      return true;
    case Type::kBin:
      return to == Type::kStr;
    case Type::kMeth:
      return to == Type::kStr || to == Type::kBin;
    case Type::kAny:
      return true;   // known only at run time
  }
  return false;
}

namespace {

bool str_to_ipv4(std::string_view s, in_addr* out) {
  char buf[INET_ADDRSTRLEN];
  if (s.empty() || s.size() >= sizeof(buf)) return false;
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = 0;
  return inet_pton(AF_INET, buf, out) == 1;
}

bool str_to_ipv6(std::string_view s, in6_addr* out) {
  char buf[INET6_ADDRSTRLEN];
  if (s.empty() || s.size() >= sizeof(buf)) return false;
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = 0;
  return inet_pton(AF_INET6, buf, out) == 1;
}

void v4_to_v6(const in_addr& a, in6_addr* out) {
  std::memset(out, 0, sizeof(*out));
  out->s6_addr[10] = 0xff;
  out->s6_addr[11] = 0xff;
  std::memcpy(&out->s6_addr[12], &a, 4);
}

bool v6_to_v4(const in6_addr& a, in_addr* out) {
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  static constexpr uint8_t kCompat[12] = {};
  if (std::memcmp(a.s6_addr, kMapped, 12) != 0 && std::memcmp(a.s6_addr, kCompat, 12) != 0)
    return false;
  std::memcpy(out, &a.s6_addr[12], 4);
  return true;
}

void append_int(std::string& out, int64_t v) { fmt::format_to(std::back_inserter(out), "{}", v); }

}  // namespace

bool cast(Sample& s, Type to, Scratch& sc) {
  if (s.type == to || to == Type::kAny) return true;
  switch (s.type) {
    case Type::kBool:
    case Type::kSint:
      switch (to) {
        case Type::kBool: s.sint = s.sint != 0; break;
        case Type::kSint: break;
        case Type::kStr: {
          std::string& b = sc.next();
          append_int(b, s.sint);
          s.str = b;
          s.flags &= ~kConst;
          break;
        }
        case Type::kBin: {
          // HAProxy's c_int2bin: the 64-bit value in network order (8 bytes).
          std::string& b = sc.next();
          auto v = static_cast<uint64_t>(s.sint);
          for (int i = 7; i >= 0; --i) b += static_cast<char>((v >> (i * 8)) & 0xff);
          s.str = b;
          s.flags &= ~kConst;
          break;
        }
        case Type::kIpv4: s.v4.s_addr = htonl(static_cast<uint32_t>(s.sint)); break;
        case Type::kIpv6: {
          in_addr a;
          a.s_addr = htonl(static_cast<uint32_t>(s.sint));
          v4_to_v6(a, &s.v6);
          break;
        }
        default: return false;
      }
      break;
    case Type::kIpv4:
      switch (to) {
        case Type::kSint: s.sint = ntohl(s.v4.s_addr); break;
        case Type::kIpv6: v4_to_v6(s.v4, &s.v6); break;
        case Type::kStr: {
          std::string& b = sc.next();
          char buf[INET_ADDRSTRLEN];
          inet_ntop(AF_INET, &s.v4, buf, sizeof(buf));
          b = buf;
          s.str = b;
          s.flags &= ~kConst;
          break;
        }
        case Type::kBin: {
          std::string& b = sc.next();
          b.assign(reinterpret_cast<const char*>(&s.v4), 4);
          s.str = b;
          s.flags &= ~kConst;
          break;
        }
        default: return false;
      }
      break;
    case Type::kIpv6:
      switch (to) {
        case Type::kIpv4:
          if (!v6_to_v4(s.v6, &s.v4)) return false;
          break;
        case Type::kStr: {
          std::string& b = sc.next();
          char buf[INET6_ADDRSTRLEN];
          inet_ntop(AF_INET6, &s.v6, buf, sizeof(buf));
          b = buf;
          s.str = b;
          s.flags &= ~kConst;
          break;
        }
        case Type::kBin: {
          std::string& b = sc.next();
          b.assign(reinterpret_cast<const char*>(&s.v6), 16);
          s.str = b;
          s.flags &= ~kConst;
          break;
        }
        default: return false;
      }
      break;
    case Type::kStr:
      switch (to) {
        case Type::kBool:
        case Type::kSint: {
          // HAProxy's c_str2int: the leading integer (none: 0); only an empty string fails.
          std::string_view v = s.str;
          if (v.empty()) return false;
          s.sint = leading_int(v);
          if (to == Type::kBool) s.sint = s.sint != 0;
          break;
        }
        case Type::kIpv4:
          if (!str_to_ipv4(s.str, &s.v4)) return false;
          break;
        case Type::kIpv6:
          if (!str_to_ipv6(s.str, &s.v6)) return false;
          break;
        case Type::kBin: break;
        case Type::kMeth: s.sint = static_cast<int64_t>(method_of(s.str)); break;
        default: return false;
      }
      break;
    case Type::kBin:
      if (to != Type::kStr) return false;
      break;
    case Type::kMeth:
      if (to != Type::kStr && to != Type::kBin) return false;
      break;
    case Type::kAny:
      return false;
  }
  s.type = to;
  return true;
}

bool to_text(const Sample& s, std::string& out) {
  switch (s.type) {
    case Type::kStr:
    case Type::kBin:
    case Type::kMeth:
      out.append(s.str);
      return true;
    case Type::kBool:
    case Type::kSint:
      append_int(out, s.sint);
      return true;
    case Type::kIpv4: {
      char buf[INET_ADDRSTRLEN];
      inet_ntop(AF_INET, &s.v4, buf, sizeof(buf));
      out.append(buf);
      return true;
    }
    case Type::kIpv6: {
      char buf[INET6_ADDRSTRLEN];
      inet_ntop(AF_INET6, &s.v6, buf, sizeof(buf));
      out.append(buf);
      return true;
    }
    case Type::kAny:
      break;
  }
  return false;
}

std::string_view use_name(uint32_t bits) {
  static constexpr std::string_view kNames[] = {
      "internal state", "L4 client session", "L5 client session", "request buffer",
      "HTTP request headers", "HTTP request body", "backend", "server", "response buffer",
      "HTTP response headers", "HTTP response body", "transaction end",
      "request buffer statistics", "response buffer statistics", "transaction statistics",
      "HTTP request", "HTTP request headers", "server address", "server-side connection",
      "HTTP response"};
  for (std::size_t i = 0; i < std::size(kNames); ++i)
    if (bits & (1u << i)) return kNames[i];
  return "nothing";
}

namespace detail {
const Env kNullEnv;
}

}  // namespace sluice::sample

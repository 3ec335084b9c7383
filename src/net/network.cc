// IPv4 and IPv6 networks: HAProxy's address patterns (`a.b.c.d/n`, `a.b.c.d/m.m.m.m`, `v6/n`).
#include "net/network.h"

#include <arpa/inet.h>

#include <cstring>

#include <fmt/format.h>

namespace sluice::net {

namespace {

bool parse_prefix_len(std::string_view s, int max, int* out) {
  if (s.empty() || s.size() > 3) return false;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v > max) return false;
  *out = v;
  return true;
}

// A dotted mask must be contiguous ones then zeros; returns the prefix length or -1.
int mask_to_prefix(const uint8_t m[4]) {
  uint32_t v = (uint32_t{m[0]} << 24) | (uint32_t{m[1]} << 16) | (uint32_t{m[2]} << 8) | m[3];
  int n = 0;
  while (n < 32 && (v & (0x80000000u >> n))) ++n;
  uint32_t expect = n == 0 ? 0 : ~uint32_t{0} << (32 - n);
  return v == expect ? n : -1;
}

void apply_prefix(uint8_t* bytes, int len, int prefix) {
  for (int i = 0; i < len; ++i) {
    int keep = prefix - i * 8;
    if (keep >= 8) continue;
    bytes[i] = keep <= 0 ? 0 : static_cast<uint8_t>(bytes[i] & (0xFF << (8 - keep)));
  }
}

bool prefix_equal(const uint8_t* a, const uint8_t* b, int prefix) {
  int full = prefix / 8;
  if (std::memcmp(a, b, static_cast<std::size_t>(full)) != 0) return false;
  int rest = prefix % 8;
  if (rest == 0) return true;
  uint8_t m = static_cast<uint8_t>(0xFF << (8 - rest));
  return (a[full] & m) == (b[full] & m);
}

constexpr uint8_t kV4Mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};

}  // namespace

bool Network::contains_v4(const in_addr& a) const {
  uint8_t buf[4];
  std::memcpy(buf, &a, 4);
  if (family == AF_INET) return prefix_equal(buf, bytes, prefix);
  if (family != AF_INET6) return false;
  // An IPv4 client against an IPv6 network: compare as ::ffff:a.b.c.d (HAProxy).
  uint8_t mapped[16];
  std::memcpy(mapped, kV4Mapped, 12);
  std::memcpy(mapped + 12, buf, 4);
  return prefix_equal(mapped, bytes, prefix);
}

bool Network::contains_v6(const in6_addr& a) const {
  const uint8_t* buf = a.s6_addr;
  if (family == AF_INET6) return prefix_equal(buf, bytes, prefix);
  if (family != AF_INET) return false;
  if (std::memcmp(buf, kV4Mapped, 12) != 0) return false;
  return prefix_equal(buf + 12, bytes, prefix);
}

bool Network::contains(const net::SocketAddress& a) const {
  if (a.family() == AF_INET) return contains_v4(reinterpret_cast<const sockaddr_in*>(a.sa())->sin_addr);
  if (a.family() == AF_INET6) return contains_v6(reinterpret_cast<const sockaddr_in6*>(a.sa())->sin6_addr);
  return false;
}

base::Result<Network> parse_network(std::string_view text) {
  Network n;
  std::string addr(text);
  std::string mask;
  auto slash = text.find('/');
  if (slash != std::string_view::npos) {
    addr = std::string(text.substr(0, slash));
    mask = std::string(text.substr(slash + 1));
  }
  auto bad = [&] {
    return base::Error::text(fmt::format("'{}' is not a valid IPv4 or IPv6 address", text));
  };
  if (addr.find(':') != std::string::npos) {
    in6_addr a6{};
    if (inet_pton(AF_INET6, addr.c_str(), &a6) != 1) return bad();
    n.family = AF_INET6;
    std::memcpy(n.bytes, &a6, 16);
    n.prefix = 128;
    if (slash != std::string_view::npos && !parse_prefix_len(mask, 128, &n.prefix)) return bad();
    apply_prefix(n.bytes, 16, n.prefix);
    return n;
  }
  in_addr a4{};
  if (inet_pton(AF_INET, addr.c_str(), &a4) != 1) return bad();
  n.family = AF_INET;
  std::memcpy(n.bytes, &a4, 4);
  n.prefix = 32;
  if (slash != std::string_view::npos) {
    if (mask.find('.') != std::string::npos) {
      in_addr m4{};
      if (inet_pton(AF_INET, mask.c_str(), &m4) != 1) return bad();
      uint8_t mb[4];
      std::memcpy(mb, &m4, 4);
      n.prefix = mask_to_prefix(mb);
      if (n.prefix < 0)
        return base::Error::text(fmt::format("'{}': non-contiguous netmasks are not supported by sluice yet", text));
    } else if (!parse_prefix_len(mask, 32, &n.prefix)) {
      return bad();
    }
  }
  apply_prefix(n.bytes, 4, n.prefix);
  return n;
}

}  // namespace sluice::net

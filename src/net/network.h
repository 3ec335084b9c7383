#pragma once
// IPv4 and IPv6 networks as HAProxy's ACL and map patterns write them. Pure values; any thread.
#include <cstdint>
#include <string_view>

#include "base/result.h"
#include "net/address.h"

namespace sluice::net {

// An IPv4 or IPv6 network, `a.b.c.d[/n]` or `a.b.c.d/m.m.m.m` or `v6[/n]`; a bare address is a
// host network.
struct Network {
  int family = 0;          // AF_INET or AF_INET6
  uint8_t bytes[16] = {};  // network order
  int prefix = 0;          // bits
  // False for UNIX addresses; an IPv4 address and an IPv6 network (or the reverse) compare
  // through the IPv4-mapped form ::ffff:a.b.c.d, as HAProxy does.
  bool contains(const net::SocketAddress& a) const;
  bool contains_v4(const in_addr& a) const;
  bool contains_v6(const in6_addr& a) const;
};
base::Result<Network> parse_network(std::string_view text);

}  // namespace sluice::net

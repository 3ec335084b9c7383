#include "lb/server.h"

namespace sluice::lb {

net::SocketAddress Server::target(const net::SocketAddress& client_dst) const {
  // Copy out under the guard: the published object may be replaced by `set server addr` on
  // another thread at any time, and is freed only once no hazard slot names it.
  auto e = endpoint_.read();
  net::SocketAddress a = e->addr;
  if (!e->port_mapped) return a;
  int port = static_cast<int>(client_dst.port()) + e->port_offset;
  a.set_port(static_cast<uint16_t>(port & 0xffff));
  return a;
}

}  // namespace sluice::lb

#include "lb/server.h"

namespace sluice::lb {

net::SocketAddress Server::target(const net::SocketAddress& client_dst) const {
  if (!s_.port_mapped) return s_.addr;
  net::SocketAddress a = s_.addr;
  int port = static_cast<int>(client_dst.port()) + s_.port_offset;
  a.set_port(static_cast<uint16_t>(port & 0xffff));
  return a;
}

}  // namespace sluice::lb

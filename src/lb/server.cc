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

void Server::analyze_slow(Hana h) {
  // HAProxy's table: what each observation means at each `observe` level (0 nothing, 1 an
  // error, 2 a success). Layer 4 watches connections only; layer 7 takes a connection that
  // failed as an error too, and a connection that succeeded as no news.
  static constexpr uint8_t kL4[] = {2, 1, 0, 0, 0, 0, 0, 0, 0};
  static constexpr uint8_t kL7[] = {0, 1, 2, 1, 1, 1, 1, 1, 1};
  const uint8_t v = (s_.observe == Observe::kLayer4 ? kL4 : kL7)[static_cast<int>(h)];
  if (v == 0) return;
  if (v == 2) {
    // Read first: a stream of successes does not write the shared line.
    if (errors_.load(std::memory_order_relaxed) != 0) errors_.store(0, std::memory_order_relaxed);
    return;
  }
  if (errors_.fetch_add(1, std::memory_order_relaxed) + 1 < s_.error_limit) return;
  // Only the thread that takes the count back reports it, however many reached the limit.
  const int seen = errors_.exchange(0, std::memory_order_relaxed);
  if (seen >= s_.error_limit) analyzer_->on_errors(*this, seen, h);
}

}  // namespace sluice::lb

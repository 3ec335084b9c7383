#pragma once
// A backend server as the runtime sees it. Identity and configuration are immutable after
// start-up; the connection count is an atomic because every worker's sessions use the server;
// traffic counters are per thread (see stats/counters.h).
//
// Administrative state (this issue: static, from the configuration):
//
//        configuration `disabled`           (later: CLI `set server ... state`)
//   READY --------------------------> MAINT
//
// Operational state follows health checks (a later issue); until then a server that is not
// in maintenance is UP ("no check" in `show stat`).
#include <atomic>
#include <cstdint>
#include <string>

#include "net/address.h"

namespace sluice::lb {

struct ServerSettings {
  std::string name;
  int id = 0;
  net::SocketAddress addr;
  bool port_mapped = false;   // no port in the configuration: use the client's destination port
  int port_offset = 0;
  int weight = 1;
  int maxconn = 0;            // 0 = unlimited
  bool backup = false;
  bool disabled = false;
};

class Server {
 public:
  Server(ServerSettings settings, int index)
      : s_(std::move(settings)), index_(index), weight_(s_.weight) {}

  const ServerSettings& settings() const { return s_; }
  const std::string& name() const { return s_.name; }
  int index() const { return index_; }   // position in its backend, 0-based
  int weight() const { return weight_; }

  // Usable for new connections: not in maintenance and weight > 0. Any thread.
  bool usable() const { return !s_.disabled && weight_ > 0; }

  // Takes a connection slot unless the server is at its maxconn. Any thread.
  bool try_acquire() {
    int cur = conns_.fetch_add(1, std::memory_order_relaxed) + 1;
    if (s_.maxconn > 0 && cur > s_.maxconn) {
      conns_.fetch_sub(1, std::memory_order_relaxed);
      return false;
    }
    return true;
  }
  // Gives back a slot taken with try_acquire. Any thread.
  void release() { conns_.fetch_sub(1, std::memory_order_relaxed); }
  int current_conns() const { return conns_.load(std::memory_order_relaxed); }

  // The address to connect to for a client that connected to `client_dst`.
  net::SocketAddress target(const net::SocketAddress& client_dst) const;

 private:
  ServerSettings s_;
  int index_;
  int weight_;
  std::atomic<int> conns_{0};
};

}  // namespace sluice::lb

#pragma once
// The persistence cookie of each server of a backend, as the stats socket changes it at run
// time: `set dynamic-cookie-key backend`, `enable|disable dynamic-cookie backend`, and
// `set server addr` (a dynamic cookie is computed from the server's address and port).
//
// HAProxy's rules (srv_set_dyncookie, measured on 3.5): a server with its own `cookie <value>`
// never changes; another gets XXH64(key, address, port) whenever the key, the dynamic flag or
// its address changes while the backend is dynamic and has a key; `disable` empties the
// values of the servers without their own cookie (their old cookies no longer persist);
// changing the key of a backend that is not dynamic changes nothing until `enable`.
//
// Readers never lock: the values are an immutable snapshot (base::Published, hazard domain
// kCookies) that each command replaces. Until the first command changes a value, changed()
// is false and the data path keeps reading the values built with the configuration
// (CookieSettings::server_cookies, equal to the first snapshot): a backend that the CLI
// never touches pays one load of a flag, no hazard read.
#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/published.h"
#include "net/address.h"

namespace sluice::proxy {

struct CookieValues {
  std::vector<std::string> values;   // per server index; "" none
};

// HAProxy's dynamic cookie of a server at `addr` (its address and port): "" unless IPv4/IPv6.
std::string dynamic_cookie(std::string_view key, const net::SocketAddress& addr);

class CookieTable {
 public:
  using Guard = base::Published<CookieValues>::Guard;
  struct Server {
    std::string configured;     // its own `cookie <value>`; "" none
    net::SocketAddress addr;    // where it connects (no family: not resolved)
  };
  // `dynamic`: `cookie ... dynamic`; `key`: `dynamic-cookie-key` ("" none).
  CookieTable(std::vector<Server> servers, std::string key, bool dynamic);
  CookieTable(const CookieTable&) = delete;
  CookieTable& operator=(const CookieTable&) = delete;

  // Whether a command changed the values since start-up. Any thread.
  bool changed() const { return changed_.load(std::memory_order_acquire); }
  // The current values. Any thread that holds no other kCookies Guard.
  Guard read() const { return snap_.read(); }
  // A copy of server `i`'s current value ("" none or out of range). Same rule as read().
  std::string value(std::size_t i) const;
  std::size_t size() const { return size_; }

  // Writers: any thread, serialized here; each publishes the new values.
  void set_key(std::string key);                                  // set dynamic-cookie-key
  void set_dynamic(bool on);                                      // enable|disable dynamic-cookie
  void set_addr(std::size_t i, const net::SocketAddress& addr);   // set server addr

 private:
  void recompute(std::size_t i);   // srv_set_dyncookie; mu_ held
  void publish();                  // mu_ held

  std::mutex mu_;
  std::vector<Server> servers_;          // mu_
  std::string key_;                      // mu_
  bool dynamic_;                         // mu_
  std::vector<std::string> values_;      // mu_: what the next snapshot holds
  const std::size_t size_;
  base::Published<CookieValues> snap_;
  std::atomic<bool> changed_{false};
};

}  // namespace sluice::proxy

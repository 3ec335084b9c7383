#pragma once
// Socket addresses and HAProxy's address syntax (configuration spec section 4).
// Parsing is pure (no sockets opened, except `getaddrinfo` for host names on bind lines);
// config uses it to turn words into addresses, net uses the result to open sockets.
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace sluice::net {

// A concrete socket address (IPv4, IPv6 or UNIX path). Plain value; any thread.
struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t len = 0;

  int family() const { return storage.ss_family; }
  const sockaddr* sa() const { return reinterpret_cast<const sockaddr*>(&storage); }
  sockaddr* sa() { return reinterpret_cast<sockaddr*>(&storage); }
  uint16_t port() const;          // 0 for UNIX
  void set_port(uint16_t port);   // no-op for UNIX
  bool is_any() const;            // 0.0.0.0 or ::

  // "127.0.0.1:80", "[::1]:80", "unix:/path" (for logs and `addr` columns: see to_stat_string).
  std::string to_string() const;
  // "127.0.0.1" / "::1" / the path, without the port.
  std::string host_string() const;

  static SocketAddress ipv4(uint32_t host_order_ip, uint16_t port);
  static SocketAddress from_sockaddr(const sockaddr* sa, socklen_t len);
  static base::Result<SocketAddress> unix_path(std::string_view path);
};

bool operator==(const SocketAddress& a, const SocketAddress& b);

// One listening endpoint as written on a `bind` (or `stats socket`) line, after expansion of
// comma lists and port ranges: `bind :8000-8002,127.0.0.1:9000` gives four of these.
struct ListenAddress {
  enum class Kind { kInet, kUnix, kInheritedFd };
  Kind kind = Kind::kInet;
  SocketAddress addr;   // kInet and kUnix
  int fd = -1;          // kInheritedFd: an already listening socket inherited from the parent
  std::string text;     // the item as written, e.g. "127.0.0.1:8000-8002", for messages
};

// Parses the address argument of `bind` / `stats socket`: `:port`, `addr:port`, `[v6]:port`,
// `ipv4@`, `ipv6@`, `unix@path`, `/path`, `fd@N`, comma-separated lists and port ranges
// `a-b` (one ListenAddress per port). A port is mandatory and must be 1..65535.
// The error message is HAProxy's reason text, e.g. "missing port specification in '127.0.0.1'",
// "invalid port '0'", "invalid port range '18092-18090'".
base::Result<std::vector<ListenAddress>> parse_bind_address(std::string_view text);

// A `server` address: `addr[:port]`, `[v6][:port]`, `ipv4@`, `ipv6@`, `unix@path`, `/path`.
// A missing port, ':' or ':0' means "use the client's destination port" (port_mapped, with
// port_offset from `:+N` / `:-N`). Host names are resolved now (first result).
// `host[:port]` or `[v6][:port]` as the address parsers split it: the last ':' separates the
// port, so an unbracketed "::1" is host ":" and port 1 (as in HAProxy).
struct HostPort {
  std::string host;
  std::string port;
  bool has_port = false;
  bool bracketed = false;
  bool bad_brackets = false;
};
HostPort split_host_port(std::string_view s);

struct ServerAddress {
  SocketAddress addr;
  bool port_mapped = false;
  int port_offset = 0;
};
base::Result<ServerAddress> parse_server_address(std::string_view text);
// An IPv4 or IPv6 literal alone ("10.0.0.1", "::1"; no brackets, no port, no name): its address
// with port 0. False for anything else.
bool parse_ip_literal(std::string_view text, SocketAddress* out);

// A `log` target address: `addr[:port]` (UDP, default port 514), `udp@`, `unix@path`,
// `/path` (UNIX datagram). stdout/stderr are handled by the caller.
base::Result<SocketAddress> parse_log_address(std::string_view text);

// Host name resolution used by the three parsers above: `family` is AF_INET, AF_INET6 or
// AF_UNSPEC; returns false when the name does not resolve. The default uses getaddrinfo (first
// result). Tests and the fuzzer install a resolver that never touches the network, because a
// lookup of a random name can block for seconds. Main thread only.
using HostResolver = std::function<bool(const std::string& host, int family, SocketAddress* out)>;
void set_host_resolver(HostResolver resolver);   // an empty function restores getaddrinfo

// The longest UNIX socket path accepted on a `bind` line: sun_path less room for the
// ".<pid>.tmp" suffix used while binding atomically (HAProxy keeps the same margin).
inline constexpr std::size_t kMaxBindUnixPath = 97;

}  // namespace sluice::net

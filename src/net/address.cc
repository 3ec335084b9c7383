#include "net/address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include <fmt/format.h>

namespace sluice::net {

namespace {

HostResolver& resolver_slot() {
  static HostResolver r;
  return r;
}

bool resolve_with_getaddrinfo(const std::string& host, int family, SocketAddress* out) {
  addrinfo hints{};
  hints.ai_family = family;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) return false;
  *out = SocketAddress::from_sockaddr(res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  return true;
}

bool resolve_host(const std::string& host, int family, SocketAddress* out) {
  if (resolver_slot()) return resolver_slot()(host, family, out);
  return resolve_with_getaddrinfo(host, family, out);
}

base::Error err(std::string msg) { return base::Error::text(std::move(msg)); }

// Which kind of socket a prefix asks for, and what the rest of the word is.
struct Prefixed {
  int family = AF_UNSPEC;   // AF_INET, AF_INET6, AF_UNIX or AF_UNSPEC (decide from the address)
  bool dgram = false;
  bool fd = false;
  bool unsupported = false; // abns@, sockpair@, mptcp@, rhttp@: HAProxy has them, sluice not yet
  std::string prefix;
  std::string_view rest;
};

Prefixed split_prefix(std::string_view text, bool default_dgram) {
  Prefixed p;
  p.dgram = default_dgram;
  p.rest = text;
  if (p.rest.starts_with("stream+")) {
    p.dgram = false;
    p.rest.remove_prefix(7);
  } else if (p.rest.starts_with("dgram+")) {
    p.dgram = true;
    p.rest.remove_prefix(6);
  } else if (p.rest.starts_with("quic+")) {
    p.dgram = true;
    p.rest.remove_prefix(5);
  }
  auto at = p.rest.find('@');
  if (at == std::string_view::npos) {
    if (p.rest.starts_with("/")) p.family = AF_UNIX;
    return p;
  }
  std::string_view pre = p.rest.substr(0, at);
  static constexpr struct {
    std::string_view name;
    int family;
    int dgram;   // -1 keep, 0 stream, 1 dgram
    bool fd;
    bool unsupported;
  } kPrefixes[] = {
      {"ipv4", AF_INET, -1, false, false},   {"ipv6", AF_INET6, -1, false, false},
      {"ip", AF_UNSPEC, -1, false, false},   {"unix", AF_UNIX, -1, false, false},
      {"uxst", AF_UNIX, 0, false, false},    {"uxdg", AF_UNIX, 1, false, false},
      {"tcp", AF_UNSPEC, 0, false, false},   {"tcp4", AF_INET, 0, false, false},
      {"tcp6", AF_INET6, 0, false, false},   {"udp", AF_UNSPEC, 1, false, false},
      {"udp4", AF_INET, 1, false, false},    {"udp6", AF_INET6, 1, false, false},
      {"quic4", AF_INET, 1, false, false},   {"quic6", AF_INET6, 1, false, false},
      {"fd", AF_UNSPEC, -1, true, false},    {"abns", AF_UNIX, -1, false, true},
      {"abnsz", AF_UNIX, -1, false, true},   {"sockpair", AF_UNSPEC, -1, false, true},
      {"mptcp", AF_UNSPEC, 0, false, true},  {"mptcp4", AF_INET, 0, false, true},
      {"mptcp6", AF_INET6, 0, false, true},  {"rhttp", AF_UNSPEC, 0, false, true},
  };
  for (const auto& k : kPrefixes) {
    if (k.name != pre) continue;
    p.family = k.family;
    if (k.dgram >= 0) p.dgram = k.dgram == 1;
    p.fd = k.fd;
    p.unsupported = k.unsupported;
    p.prefix = std::string(pre);
    p.rest.remove_prefix(at + 1);
    return p;
  }
  // Not a known prefix: an '@' may legitimately appear in nothing else, so let the address
  // parser report it as an invalid address.
  return p;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// A port number as written: digits only, at most 65535. Returns -1 when invalid.
long parse_port_number(std::string_view s) {
  if (!all_digits(s) || s.size() > 6) return -1;
  long v = 0;
  for (char c : s) v = v * 10 + (c - '0');
  return v > 65535 ? -1 : v;
}

// Turns a host part into an address (port 0). family AF_UNSPEC tries IPv4 then IPv6 then DNS.
bool host_to_address(const std::string& host, int family, SocketAddress* out) {
  if (host.empty() || host == "*") {
    if (family == AF_INET6) {
      sockaddr_in6 sin6{};
      sin6.sin6_family = AF_INET6;
      sin6.sin6_addr = in6addr_any;
      *out = SocketAddress::from_sockaddr(reinterpret_cast<sockaddr*>(&sin6), sizeof sin6);
    } else {
      *out = SocketAddress::ipv4(INADDR_ANY, 0);
    }
    return true;
  }
  if (family != AF_INET6) {
    in_addr a4{};
    if (inet_pton(AF_INET, host.c_str(), &a4) == 1) {
      *out = SocketAddress::ipv4(ntohl(a4.s_addr), 0);
      return true;
    }
  }
  if (family != AF_INET) {
    in6_addr a6{};
    if (inet_pton(AF_INET6, host.c_str(), &a6) == 1) {
      sockaddr_in6 sin6{};
      sin6.sin6_family = AF_INET6;
      sin6.sin6_addr = a6;
      *out = SocketAddress::from_sockaddr(reinterpret_cast<sockaddr*>(&sin6), sizeof sin6);
      return true;
    }
  }
  // Never ask the resolver for something that cannot be a host name (":" from "::1").
  for (char c : host)
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_'))
      return false;
  return resolve_host(host, family, out);
}

base::Result<SocketAddress> unix_address(std::string_view path, std::string_view whole,
                                         std::size_t max_len) {
  if (path.empty()) return err(fmt::format("empty socket path in '{}'", whole));
  if (path.size() > max_len) return err(fmt::format("socket path '{}' too long (max {})", path, max_len));
  return SocketAddress::unix_path(path);
}

// fd@N on a bind line: the descriptor must already be a listening stream socket (inherited
// from a parent process or a supervisor), since sluice will only call accept() on it.
base::Result<int> check_inherited_fd(std::string_view num) {
  if (!all_digits(num) || num.size() > 9)
    return err(fmt::format("cannot use file descriptor '{}' : Bad file descriptor.", num));
  int fd = std::stoi(std::string(num));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    int e = errno;
    return err(fmt::format("cannot use file descriptor '{}' : {}.", num, std::strerror(e)));
  }
  if (!S_ISSOCK(st.st_mode))
    return err(fmt::format("cannot use file descriptor '{}' : {}.", num, std::strerror(ENOTSOCK)));
  int type = 0;
  socklen_t len = sizeof type;
  int listening = 0;
  socklen_t llen = sizeof listening;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM ||
      getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &llen) != 0 || !listening)
    return err(fmt::format("cannot use file descriptor '{}' : not a listening stream socket.", num));
  return fd;
}

base::Result<std::vector<ListenAddress>> parse_one_bind(std::string_view item) {
  Prefixed p = split_prefix(item, false);
  if (p.unsupported)
    return err(fmt::format("'{}@' addresses are not supported by sluice in '{}'", p.prefix, item));
  if (p.dgram) return err(fmt::format("dgram-type address not acceptable in '{}'", item));
  std::vector<ListenAddress> out;
  if (p.fd) {
    auto fd = check_inherited_fd(p.rest);
    if (!fd.ok()) return fd.error();
    ListenAddress la;
    la.kind = ListenAddress::Kind::kInheritedFd;
    la.fd = fd.value();
    la.text = std::string(item);
    out.push_back(std::move(la));
    return out;
  }
  if (p.family == AF_UNIX) {
    auto a = unix_address(p.rest, item, kMaxBindUnixPath);
    if (!a.ok()) return a.error();
    ListenAddress la;
    la.kind = ListenAddress::Kind::kUnix;
    la.addr = a.value();
    la.text = std::string(item);
    out.push_back(std::move(la));
    return out;
  }
  HostPort hp = split_host_port(p.rest);
  if (hp.bad_brackets) return err(fmt::format("invalid address: '{}' in '{}'", p.rest, item));
  if (!hp.has_port || hp.port.empty())
    return err(fmt::format("missing port specification in '{}'", item));
  long lo = 0, hi = 0;
  std::string_view ps = hp.port;
  if (ps[0] == '+' || ps[0] == '-') return err(fmt::format("port offset not permitted here in '{}'", item));
  auto dash = ps.find('-');
  std::string_view a = ps.substr(0, dash);
  std::string_view b = dash == std::string_view::npos ? a : ps.substr(dash + 1);
  for (std::string_view part : {a, b})
    for (char c : part)
      if (c < '0' || c > '9')
        return err(fmt::format("invalid character '{}' in port number '{}' in '{}'", c, ps, item));
  lo = parse_port_number(a);
  hi = parse_port_number(b);
  if (lo < 0 || b.empty()) return err(fmt::format("invalid port '{}'", ps));
  if (hi < 0) return err(fmt::format("invalid port '{}'", b));
  if (dash != std::string_view::npos) {
    if (lo == 0 || hi < lo) return err(fmt::format("invalid port range '{}'", ps));
  } else if (lo == 0) {
    return err(fmt::format("invalid port '{}'", ps));
  }
  SocketAddress base_addr;
  if (!host_to_address(hp.host, p.family, &base_addr))
    return err(fmt::format("invalid address: '{}' in '{}'", hp.host, item));
  for (long port = lo; port <= hi; ++port) {
    ListenAddress la;
    la.kind = ListenAddress::Kind::kInet;
    la.addr = base_addr;
    la.addr.set_port(static_cast<uint16_t>(port));
    la.text = std::string(item);
    out.push_back(std::move(la));
  }
  return out;
}

}  // namespace

// Splits "host:port", "[v6]:port", "[v6]" or "host". has_port tells whether a ':' was seen.
HostPort split_host_port(std::string_view s) {
  HostPort hp;
  if (s.starts_with("[")) {
    auto close = s.find(']');
    if (close == std::string_view::npos) {
      hp.bad_brackets = true;
      return hp;
    }
    hp.bracketed = true;
    hp.host = std::string(s.substr(1, close - 1));
    std::string_view rest = s.substr(close + 1);
    if (rest.empty()) return hp;
    if (rest[0] != ':') {
      hp.bad_brackets = true;
      return hp;
    }
    hp.has_port = true;
    hp.port = std::string(rest.substr(1));
    return hp;
  }
  // The last ':' separates the port, so an unbracketed "::1" is host ":" and port 1 (as in
  // HAProxy); ":::80" is "::" port 80.
  auto colon = s.rfind(':');
  if (colon == std::string_view::npos) {
    hp.host = std::string(s);
    return hp;
  }
  hp.has_port = true;
  hp.host = std::string(s.substr(0, colon));
  hp.port = std::string(s.substr(colon + 1));
  return hp;
}

void set_host_resolver(HostResolver resolver) { resolver_slot() = std::move(resolver); }

uint16_t SocketAddress::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
  if (family() == AF_INET6)
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
  return 0;
}

void SocketAddress::set_port(uint16_t p) {
  if (family() == AF_INET) reinterpret_cast<sockaddr_in*>(&storage)->sin_port = htons(p);
  if (family() == AF_INET6) reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port = htons(p);
}

bool SocketAddress::is_any() const {
  if (family() == AF_INET)
    return reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr.s_addr == htonl(INADDR_ANY);
  if (family() == AF_INET6) {
    const auto* a = &reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr;
    return IN6_IS_ADDR_UNSPECIFIED(a);
  }
  return false;
}

std::string SocketAddress::host_string() const {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr, buf, sizeof buf);
    return buf;
  }
  if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr, buf,
              sizeof buf);
    return buf;
  }
  if (family() == AF_UNIX) {
    const auto* sun = reinterpret_cast<const sockaddr_un*>(&storage);
    std::size_t max = len > offsetof(sockaddr_un, sun_path) ? len - offsetof(sockaddr_un, sun_path)
                                                            : 0;
    return std::string(sun->sun_path, strnlen(sun->sun_path, std::min(max, sizeof sun->sun_path)));
  }
  return {};
}

std::string SocketAddress::to_string() const {
  if (family() == AF_INET) return fmt::format("{}:{}", host_string(), port());
  if (family() == AF_INET6) return fmt::format("[{}]:{}", host_string(), port());
  if (family() == AF_UNIX) return "unix:" + host_string();
  return {};
}

SocketAddress SocketAddress::ipv4(uint32_t host_order_ip, uint16_t p) {
  SocketAddress a;
  auto* sin = reinterpret_cast<sockaddr_in*>(&a.storage);
  sin->sin_family = AF_INET;
  sin->sin_addr.s_addr = htonl(host_order_ip);
  sin->sin_port = htons(p);
  a.len = sizeof(sockaddr_in);
  return a;
}

SocketAddress SocketAddress::from_sockaddr(const sockaddr* sa, socklen_t l) {
  SocketAddress a;
  if (l > sizeof a.storage) l = sizeof a.storage;
  std::memcpy(&a.storage, sa, l);
  a.len = l;
  return a;
}

base::Result<SocketAddress> SocketAddress::unix_path(std::string_view path) {
  SocketAddress a;
  auto* sun = reinterpret_cast<sockaddr_un*>(&a.storage);
  if (path.size() >= sizeof sun->sun_path)
    return err(fmt::format("socket path '{}' too long (max {})", path, sizeof sun->sun_path - 1));
  sun->sun_family = AF_UNIX;
  std::memcpy(sun->sun_path, path.data(), path.size());
  a.len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() + 1);
  return a;
}

bool operator==(const SocketAddress& a, const SocketAddress& b) {
  if (a.family() != b.family()) return false;
  if (a.family() == AF_INET) {
    const auto* x = reinterpret_cast<const sockaddr_in*>(&a.storage);
    const auto* y = reinterpret_cast<const sockaddr_in*>(&b.storage);
    return x->sin_addr.s_addr == y->sin_addr.s_addr && x->sin_port == y->sin_port;
  }
  if (a.family() == AF_INET6) {
    const auto* x = reinterpret_cast<const sockaddr_in6*>(&a.storage);
    const auto* y = reinterpret_cast<const sockaddr_in6*>(&b.storage);
    return std::memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr) == 0 &&
           x->sin6_port == y->sin6_port && x->sin6_scope_id == y->sin6_scope_id;
  }
  if (a.family() == AF_UNIX) return a.host_string() == b.host_string();
  return a.len == b.len;
}

base::Result<std::vector<ListenAddress>> parse_bind_address(std::string_view text) {
  std::vector<ListenAddress> all;
  std::size_t start = 0;
  while (true) {
    auto comma = text.find(',', start);
    std::string_view item = text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    auto one = parse_one_bind(item);
    if (!one.ok()) return one.error();
    for (auto& la : one.value()) all.push_back(std::move(la));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return all;
}

bool parse_ip_literal(std::string_view text, SocketAddress* out) {
  const std::string s(text);
  sockaddr_in v4{};
  if (inet_pton(AF_INET, s.c_str(), &v4.sin_addr) == 1) {
    v4.sin_family = AF_INET;
    *out = SocketAddress::from_sockaddr(reinterpret_cast<const sockaddr*>(&v4), sizeof v4);
    return true;
  }
  sockaddr_in6 v6{};
  if (inet_pton(AF_INET6, s.c_str(), &v6.sin6_addr) == 1) {
    v6.sin6_family = AF_INET6;
    *out = SocketAddress::from_sockaddr(reinterpret_cast<const sockaddr*>(&v6), sizeof v6);
    return true;
  }
  return false;
}

base::Result<ServerAddress> parse_server_address(std::string_view text) {
  Prefixed p = split_prefix(text, false);
  if (p.fd) return err(fmt::format("a file descriptor is not acceptable here in '{}'", text));
  if (p.unsupported)
    return err(fmt::format("'{}@' addresses are not supported by sluice in '{}'", p.prefix, text));
  if (p.dgram) return err("unsupported transport for server address in 'tcp' backend.");
  ServerAddress out;
  if (p.family == AF_UNIX) {
    auto a = unix_address(p.rest, text, sizeof(sockaddr_un{}.sun_path) - 1);
    if (!a.ok()) return a.error();
    out.addr = a.value();
    return out;
  }
  HostPort hp = split_host_port(p.rest);
  if (hp.bad_brackets) return err(fmt::format("invalid address: '{}' in '{}'", p.rest, text));
  long port = 0;
  if (!hp.has_port || hp.port.empty()) {
    out.port_mapped = true;
  } else {
    std::string_view ps = hp.port;
    bool offset = ps[0] == '+' || ps[0] == '-';
    std::string_view digits = offset ? ps.substr(1) : ps;
    if (digits.find('-') != std::string_view::npos)
      return err(fmt::format("port range not permitted here in '{}'", text));
    for (char c : digits)
      if (c < '0' || c > '9')
        return err(fmt::format("invalid character '{}' in port number '{}' in '{}'", c, ps, text));
    port = parse_port_number(digits);
    if (port < 0) return err(fmt::format("invalid port '{}'", ps));
    if (offset) {
      out.port_mapped = true;
      out.port_offset = ps[0] == '-' ? -static_cast<int>(port) : static_cast<int>(port);
      port = 0;
    } else if (port == 0) {
      out.port_mapped = true;
    }
  }
  SocketAddress a;
  if (!host_to_address(hp.host, p.family, &a))
    return err(fmt::format("could not resolve address '{}'.", hp.host));
  a.set_port(static_cast<uint16_t>(port));
  out.addr = a;
  return out;
}

base::Result<SocketAddress> parse_log_address(std::string_view text) {
  // Logs are datagrams unless a stream prefix says otherwise; sluice only sends datagrams.
  Prefixed p = split_prefix(text, true);
  if (p.fd) return err(fmt::format("'fd@' log targets are not supported by sluice in '{}'", text));
  if (p.unsupported)
    return err(fmt::format("'{}@' addresses are not supported by sluice in '{}'", p.prefix, text));
  if (!p.dgram) return err(fmt::format("stream log targets are not supported by sluice in '{}'", text));
  if (p.family == AF_UNIX) return unix_address(p.rest, text, sizeof(sockaddr_un{}.sun_path) - 1);
  HostPort hp = split_host_port(p.rest);
  if (hp.bad_brackets) return err(fmt::format("invalid address: '{}' in '{}'", p.rest, text));
  long port = 514;
  if (hp.has_port && !hp.port.empty()) {
    for (char c : hp.port)
      if (c < '0' || c > '9')
        return err(fmt::format("invalid character '{}' in port number '{}' in '{}'", c, hp.port, text));
    port = parse_port_number(hp.port);
    if (port < 0) return err(fmt::format("invalid port '{}'", hp.port));
    if (port == 0) port = 514;
  }
  SocketAddress a;
  if (!host_to_address(hp.host, p.family, &a))
    return err(fmt::format("invalid address: '{}' in '{}'", hp.host, text));
  a.set_port(static_cast<uint16_t>(port));
  return a;
}

}  // namespace sluice::net

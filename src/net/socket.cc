#include "net/socket.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>

namespace sluice::net {

namespace {

base::Error sys_error(const char* what, int err) {
  base::Error e = base::Error::from_errno(what, err);
  return e;
}

base::Result<int> adopt_inherited(int fd) {
  int type = 0;
  socklen_t len = sizeof type;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0) return sys_error("getsockopt", errno);
  if (type != SOCK_STREAM) return sys_error("inherited socket", ENOTSOCK);
  int listening = 0;
  len = sizeof listening;
  if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening)
    return sys_error("inherited socket is not listening", EINVAL);
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) return sys_error("fcntl", errno);
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  return fd;
}

}  // namespace

base::Result<int> open_listener(const ListenAddress& addr, const ListenOptions& options) {
  if (addr.kind == ListenAddress::Kind::kInheritedFd) return adopt_inherited(addr.fd);

  const SocketAddress& sa = addr.addr;
  int fd = socket(sa.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return sys_error("cannot create listening socket", errno);
  auto fail = [&](const char* what) -> base::Result<int> {
    int err = errno;
    close(fd);
    return sys_error(what, err);
  };

  if (sa.family() == AF_UNIX) {
    const auto* un = reinterpret_cast<const sockaddr_un*>(&sa.storage);
    std::string path = un->sun_path;
    std::string tmp = path + "." + std::to_string(getpid()) + ".tmp";
    auto tmp_addr = SocketAddress::unix_path(tmp);
    if (!tmp_addr.ok()) {
      close(fd);
      return tmp_addr.error();
    }
    unlink(tmp.c_str());
    if (bind(fd, tmp_addr->sa(), tmp_addr->len) != 0) return fail("cannot bind UNIX socket");
    if (options.unix_mode >= 0 && chmod(tmp.c_str(), static_cast<mode_t>(options.unix_mode)) != 0) {
      int err = errno;
      unlink(tmp.c_str());
      close(fd);
      return sys_error("cannot change UNIX socket mode", err);
    }
    if (listen(fd, options.backlog) != 0) {
      int err = errno;
      unlink(tmp.c_str());
      close(fd);
      return sys_error("cannot listen to UNIX socket", err);
    }
    if (rename(tmp.c_str(), path.c_str()) != 0) {
      int err = errno;
      unlink(tmp.c_str());
      close(fd);
      return sys_error("cannot rename UNIX socket into place", err);
    }
    return fd;
  }

  int one = 1;
  // SO_REUSEADDR lets a restarted process bind while old connections sit in TIME_WAIT.
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  // SO_REUSEPORT: several sockets (shards) may then share the address and the kernel hashes
  // each incoming connection (by 4-tuple) onto one of them. A second *process* can only join
  // if it has the same effective uid, so this does not open the port to other users.
  if (options.reuseport) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  if (sa.family() == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  if (bind(fd, sa.sa(), sa.len) != 0) return fail("cannot bind socket");
  if (listen(fd, options.backlog) != 0) return fail("cannot listen to socket");
  return fd;
}

void apply_keepalive(int fd, const TcpKeepalive& ka) {
  if (!ka.on) return;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  if (ka.count > 0) setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &ka.count, sizeof ka.count);
  if (ka.idle_s > 0) setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &ka.idle_s, sizeof ka.idle_s);
  if (ka.interval_s > 0)
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &ka.interval_s, sizeof ka.interval_s);
}

void set_socket_buffers(int fd, int rcvbuf, int sndbuf) {
  if (rcvbuf > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  if (sndbuf > 0) setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
}

base::Result<int> connect_nonblocking(const SocketAddress& to, bool* in_progress,
                                      const ConnectOptions& options) {
  int fd = socket(to.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    base::Error e = base::Error::from_errno("socket", errno, base::Side::kInternal, false);
    return e;
  }
  if (to.family() != AF_UNIX) {
    // Relayed data is usually already coalesced by the peer; Nagle would only add latency to
    // the last segment of each burst.
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (options.defer_ack) setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &one, sizeof one);
    apply_keepalive(fd, options.keepalive);
  }
  // Before connect(): the receive buffer sets the window scale the SYN announces.
  if (options.rcvbuf > 0 || options.sndbuf > 0) set_socket_buffers(fd, options.rcvbuf, options.sndbuf);
  if (connect(fd, to.sa(), to.len) == 0) {
    *in_progress = false;
    return fd;
  }
  int err = errno;
  if (err == EINPROGRESS) {
    *in_progress = true;
    return fd;
  }
  close(fd);
  bool local = err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
  return base::Error::from_errno("connect", err, base::Side::kServer, !local);
}

int pending_socket_error(int fd) {
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
  return err;
}

const char* proto_name(const SocketAddress& addr) {
  switch (addr.family()) {
    case AF_INET: return "tcpv4";
    case AF_INET6: return "tcpv6";
    case AF_UNIX: return "unix_stream";
    default: return "unknown";
  }
}

void close_with_reset(int fd) {
  struct linger lg {};
  lg.l_onoff = 1;
  lg.l_linger = 0;
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
  close(fd);
}

void silence_close(int fd, int rst_ttl) {
  int one = 1;
  // What the client sent is acknowledged first: data still waiting for a delayed ACK would be
  // sent again after the close (its retransmission timer, 200 ms and up), and the kernel would
  // answer that with the very reset the client must not see.
  (void)setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
  if (rst_ttl == 0 && setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &one, sizeof one) == 0) return;
  int ttl = rst_ttl ? rst_ttl : 1;
  // An IPv6 socket may carry IPv4 (mapped addresses): both options, whichever applies.
  (void)setsockopt(fd, IPPROTO_IP, IP_TTL, &ttl, sizeof ttl);
  (void)setsockopt(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &ttl, sizeof ttl);
}

bool local_address(int fd, SocketAddress* out) {
  out->len = sizeof out->storage;
  return getsockname(fd, out->sa(), &out->len) == 0;
}

bool is_unix_socket(int fd) {
  int domain = 0;
  socklen_t len = sizeof domain;
  return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 && domain == AF_UNIX;
}

void pause_listening(int fd) {
  if (fd >= 0 && !is_unix_socket(fd)) shutdown(fd, SHUT_RD);
}

void resume_listening(int fd, int backlog) {
  if (fd >= 0 && !is_unix_socket(fd)) listen(fd, backlog);
}

void stop_listening(int fd) {
  if (fd >= 0) shutdown(fd, SHUT_RDWR);
}

void release_listener(int fd) {
  if (fd < 0) return;
  int spare = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (spare < 0) spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (spare < 0) return;   // out of descriptors: the reference goes with the process
  dup3(spare, fd, O_CLOEXEC);
  close(spare);
}

void set_nodelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void set_fastopen(int fd, int qlen) {
  setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN, &qlen, sizeof qlen);
}

void set_quickack_off(int fd) {
  int zero = 0;
  setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &zero, sizeof zero);
}

void close_socket(int fd) {
  if (fd >= 0) close(fd);
}

DatagramSender::~DatagramSender() {
  for (int fd : {udp4_, udp6_, unix_}) close_socket(fd);
}

bool DatagramSender::send_to(const SocketAddress& to, const char* data, std::size_t len) {
  int family = to.family();
  int* slot = family == AF_INET ? &udp4_ : family == AF_INET6 ? &udp6_ : &unix_;
  if (*slot < 0) *slot = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  return *slot >= 0 && sendto(*slot, data, len, MSG_DONTWAIT | MSG_NOSIGNAL, to.sa(), to.len) >= 0;
}

}  // namespace sluice::net

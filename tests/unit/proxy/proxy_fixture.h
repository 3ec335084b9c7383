#pragma once
// In-process proxy tests on loopback: ports the kernel picks, servers played by the test on
// listening sockets, and a Worker that is never started (the test's thread drives its loop
// through support/cpp/loop_runner.h, so every wait is bounded by RunLimits).
//
// - LoopbackPort, server_at(): a server address that accepts or refuses (backend_leg_test).
// - UnansweredPort: a server address where a connect() stays pending (`timeout connect`).
// - make_small(), unsent_bytes(), Outgoing, pattern(), ProxyHarness::run_until_held(): sockets
//   that hold little and bulk transfers, for tests of backpressure (a peer that stops reading).
// - Peer: one end of a connection held by the test (a client, or a connection a test server
//   accepted): what it received, whether the other side closed.
// - ProxyHarness: a Process with one `listen` section (frontend and backend in one proxy)
//   bound to 127.0.0.1, and a Worker whose loop the test runs: connections to the listener are
//   accepted by the worker's own accept path (Worker::prepare_loop(), then ListenerWatch ->
//   accept_from() -> start_session()), as they are in a running process.
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proxy/process.h"
#include "proxy/worker.h"
#include "support/cpp/loop_runner.h"

namespace sluice::proxy::fixture {

constexpr uint32_t kLoopback = 0x7f000001;

// A TCP socket bound to 127.0.0.1 on a port the kernel picks: listening (connects succeed) or
// not (connects are refused, and no other socket can take the port meanwhile).
class LoopbackPort {
 public:
  explicit LoopbackPort(bool listening, int backlog = 16) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(kLoopback);
    socklen_t len = sizeof a;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        (listening && ::listen(fd_, backlog) != 0) ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      return;
    port_ = ntohs(a.sin_port);
  }
  ~LoopbackPort() {
    if (fd_ >= 0) ::close(fd_);
  }
  LoopbackPort(const LoopbackPort&) = delete;
  LoopbackPort& operator=(const LoopbackPort&) = delete;

  uint16_t port() const { return port_; }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

// Makes `fd` a socket that holds little: buffers of `rcvbuf` and `sndbuf` bytes (SO_RCVBUF,
// SO_SNDBUF; 0 leaves one as it is: the kernel doubles what it is given, applies a floor and
// stops growing it on its own), segments of at most kSmallSegment bytes (TCP_MAXSEG: the MSS it
// announces, which the proxy's end of the connection then sends with; on loopback the MSS is
// otherwise 64 KiB, and the kernel sizes a send buffer from ten of them) and no Nagle delay
// (TCP_NODELAY: a stall is the peer's window, never a segment held back). A listening socket
// passes all of it to the connections it accepts; a client sets it before connect().
constexpr int kSmallSegment = 1024;
inline bool make_small(int fd, int rcvbuf, int sndbuf) {
  const int mss = kSmallSegment, one = 1;
  if (rcvbuf > 0 && ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf) != 0)
    return false;
  if (sndbuf > 0 && ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf) != 0)
    return false;
  return ::setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof mss) == 0 &&
         ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0;
}
// Socket buffers of a connected `fd`, raised so that a transfer held back by small ones can
// finish quickly (0 leaves one as it is).
inline bool set_socket_buffers(int fd, int rcvbuf, int sndbuf) {
  if (rcvbuf > 0 && ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf) != 0)
    return false;
  return sndbuf <= 0 || ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf) == 0;
}
// Bytes `fd` holds that it has not sent: its peer's receive window is closed. -1 on failure.
// Linux (SIOCOUTQNSD).
inline int unsent_bytes(int fd) {
  int n = 0;
  return ::ioctl(fd, SIOCOUTQNSD, &n) == 0 ? n : -1;
}

// `n` bytes that do not repeat with a short period (a lost, doubled or reordered piece of a
// bulk transfer does not compare equal), printable so that a failure message stays readable.
inline std::string pattern(std::size_t n, uint32_t seed) {
  std::string out(n, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (std::size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    out[i] = static_cast<char>('!' + (x >> 24) % 94);
  }
  return out;
}

inline lb::ServerSettings server_at(const std::string& name, int id, uint16_t port,
                                    int maxconn = 0) {
  lb::ServerSettings s;
  s.name = name;
  s.id = id;
  s.weight = 1;
  s.maxconn = maxconn;
  s.addr = net::SocketAddress::ipv4(kLoopback, port);
  return s;
}

// One end of a stream connection, non-blocking, owned by the test. Move-only.
class Peer {
 public:
  Peer() = default;
  explicit Peer(int fd) : fd_(fd) {}
  Peer(Peer&& o) noexcept
      : in(std::move(o.in)), eof(o.eof), error(o.error), fd_(std::exchange(o.fd_, -1)) {}
  Peer& operator=(Peer&& o) noexcept {
    if (this != &o) {
      close();
      in = std::move(o.in);
      eof = o.eof;
      error = o.error;
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;
  ~Peer() { close(); }

  int fd() const { return fd_; }
  bool open() const { return fd_ >= 0; }

  // Appends to `in` what the socket holds now; notes the other side's FIN (eof) or error.
  void poll() {
    if (fd_ < 0 || eof) return;
    char buf[4096];
    for (;;) {
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n > 0) {
        in.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n == 0) {
        eof = true;
      } else if (errno == EINTR) {
        continue;
      } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
        eof = true;
        error = errno;
      }
      return;
    }
  }
  // A slow reader: appends to `in` at most `max` of the bytes the socket holds now.
  void poll_some(std::size_t max) {
    if (fd_ < 0 || eof) return;
    char buf[4096];
    const std::size_t want = max < sizeof buf ? max : sizeof buf;
    ssize_t n = ::recv(fd_, buf, want, 0);
    if (n > 0) {
      in.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0) {
      eof = true;
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      eof = true;
      error = errno;
    }
  }
  // Sends all of `bytes` (small test messages: the socket buffer takes them at once).
  bool send(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }
  // Sends what the socket takes now of `bytes` (none once it is full). Returns the bytes sent.
  std::size_t send_some(std::string_view bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      sent += static_cast<std::size_t>(n);
    }
    return sent;
  }
  void shutdown_write() {
    if (fd_ >= 0) ::shutdown(fd_, SHUT_WR);
  }
  void close() {
    if (fd_ >= 0) ::close(std::exchange(fd_, -1));
  }
  // What arrived so far, cleared.
  std::string take() { return std::exchange(in, std::string()); }

  std::string in;   // received, not yet taken
  bool eof = false;
  int error = 0;    // errno of a failed read (ECONNRESET...), 0 for a FIN

 private:
  int fd_ = -1;
};

// A bulk transfer from the test: `data`, sent in pieces as fast as the socket takes them.
struct Outgoing {
  std::string data;
  std::size_t at = 0;   // sent so far

  // Sends what `p` takes now; true when a byte went.
  bool push(Peer& p) {
    std::size_t n = p.send_some(std::string_view(data).substr(at));
    at += n;
    return n > 0;
  }
};

// A client of 127.0.0.1:`port`: a blocking connect (on loopback it completes as soon as the
// listener's backlog takes it), then non-blocking. Not open() on failure. `small`: a socket
// that holds little (make_small() with `rcvbuf`, `sndbuf`).
inline Peer connect_client(uint16_t port, bool small = false, int rcvbuf = 0, int sndbuf = 0) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Peer();
  if (small && !make_small(fd, rcvbuf, sndbuf)) {
    ::close(fd);
    return Peer();
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(kLoopback);
  a.sin_port = htons(port);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
    ::close(fd);
    return Peer();
  }
  return Peer(fd);
}

// A server address that never answers a connect(): a listener with no backlog whose one place
// is taken by a connection nobody accepts. The kernel drops the SYNs that follow, so a
// connect() there stays pending until the one who made it gives up.
class UnansweredPort {
 public:
  UnansweredPort() : listener_(true, 0) {
    if (listener_.port() != 0) filler_ = connect_client(listener_.port());
  }
  // 0 when the port could not be set up.
  uint16_t port() const { return filler_.open() ? listener_.port() : 0; }

 private:
  LoopbackPort listener_;
  Peer filler_;
};

inline uint16_t local_port(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) return 0;
  return ntohs(a.sin_port);
}

class ProxyHarness {
 public:
  ProxyHarness() = default;
  ProxyHarness(const ProxyHarness&) = delete;
  ProxyHarness& operator=(const ProxyHarness&) = delete;
  ~ProxyHarness() { drain(); }

  // A `listen` section named "px" in mode http (`http`) or tcp, bound to 127.0.0.1 on a port the
  // kernel picks, with `servers`; `tune` adjusts the settings (timeouts...) before the proxy is
  // added. `clock` (optional) is what the worker's loop reads. False if binding failed.
  bool build(bool http, std::vector<lb::ServerSettings> servers,
             const std::function<void(ProxySettings&)>& tune = {},
             base::ClockSource clock = {}) {
    ProcessSettings ps;
    ps.reuseport = false;   // one socket, and no reuseport program to attach
    process_ = std::make_unique<Process>(std::move(ps));
    ProxySettings p;
    p.name = "px";
    p.type = "listen";
    p.frontend = true;
    p.backend = true;
    p.http = http;
    p.servers = std::move(servers);
    p.balance.kind = lb::BalanceKind::kRoundRobin;
    p.retries = 0;
    BindSettings b;
    b.text = "127.0.0.1:0";
    b.file = "test";
    b.line = 1;
    b.backlog = 64;
    net::ListenAddress a;
    a.kind = net::ListenAddress::Kind::kInet;
    a.addr = net::SocketAddress::ipv4(kLoopback, 0);
    a.text = b.text;
    b.addrs.push_back(a);
    p.binds.push_back(std::move(b));
    if (tune) tune(p);
    px_ = &process_->add_proxy(std::move(p));
    if (!process_->bind_all().ok() || process_->listeners().size() != 1) return false;
    port_ = local_port(process_->listeners()[0]->fd);
    worker_ = std::make_unique<Worker>(*process_, 0, clock);
    worker_->prepare_loop();
    return port_ != 0;
  }

  Worker& w() { return *worker_; }
  core::EventLoop& loop() { return worker_->loop(); }
  Proxy& px() { return *px_; }
  uint16_t port() const { return port_; }
  lb::Server& srv(int i) { return *px_->backend->servers()[static_cast<std::size_t>(i)]; }
  stats::TrafficCounters& fc() { return worker_->fe_counters(px_->index); }
  stats::TrafficCounters& bc() { return worker_->be_counters(px_->index); }

  // Runs the worker's loop until `done()` (bounded by `limits`).
  test::RunResult run_until(const std::function<bool()>& done, test::RunLimits limits = {}) {
    return test::run_until(loop(), done, limits);
  }
  // Runs the loop until `p` received `n` bytes or more, or its other side closed.
  test::RunResult read_at_least(Peer& p, std::size_t n) {
    return run_until([&] {
      p.poll();
      return p.in.size() >= n || p.eof;
    });
  }
  // Runs the loop until `p` sees the other side's FIN (or an error).
  test::RunResult read_to_eof(Peer& p) {
    return run_until([&] {
      p.poll();
      return p.eof;
    });
  }
  // Runs the loop until the test server on `port` accepted a connection (the proxy's).
  Peer accept_from(const LoopbackPort& port) {
    int fd = -1;
    test::RunResult r = run_until([&] {
      fd = ::accept4(port.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      return fd >= 0;
    });
    return r.done() ? Peer(fd) : Peer();
  }
  // Whether the test server on `port` has a connection waiting, now.
  static bool has_pending_accept(const LoopbackPort& port) {
    int fd = ::accept4(port.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return false;
    ::close(fd);
    return true;
  }

  // Runs the loop while `push()` gives `from` more to send, until `from` is held back: it has
  // bytes its peer's window does not take (unsent_bytes()) and `read` (what the proxy read from
  // it) stayed the same for `quiet_turns` turns in a row, each waiting up to 1 ms for events.
  // (Without the first condition a sender whose bytes all left and wait for a delayed
  // acknowledgement looks held too, while the proxy still reads everything it gets.)
  test::RunResult run_until_held(const Peer& from, const std::function<void()>& push,
                                 const stats::LocalCounter& read, int quiet_turns = 30) {
    int quiet = 0;
    uint64_t seen = read.get();
    return run_until(
        [&] {
          push();
          const bool moved = read.get() != seen;
          seen = read.get();
          quiet = moved || unsent_bytes(from.fd()) <= 0 ? 0 : quiet + 1;
          return quiet >= quiet_turns;
        },
        test::RunLimits{.max_iterations = 20000, .deadline_ms = 10000, .max_wait_ms = 1});
  }

  // A soft stop (SIGUSR1) as Process::soft_stop() makes it, for the one worker of the harness,
  // which the process does not know (it never started): the listener's count of threads still
  // to drain it, `stopping`, then the worker's request, which runs on the loop's next turn.
  // The loop stops itself once the worker holds no session (run_until() then says "stopped"
  // unless its condition holds too).
  void soft_stop() {
    process_->soft_stop();
    worker_->request_soft_stop();
  }
  // What Process::server_slot_freed() asks of every worker when a server slot frees while
  // sessions wait in the backend's queue. The harness's worker is not among the process's
  // workers, so a test that frees a slot asks it itself; the retry runs on the next turn.
  void dequeue() { worker_->request_dequeue(); }

  // After the test closed its sockets: runs the loop until the worker holds no session and no
  // idle server connection, and what they left was freed. True when that happened in time.
  bool drain() {
    if (!worker_) return true;
    test::RunResult r = run_until(
        [&] { return worker_->sessions() == 0 && worker_->idle_conns() == 0; });
    test::run_turns(loop(), 2);   // the deferred frees
    return r.done();
  }

 private:
  // Destroyed in this order: the worker (its loop) before the process it reads.
  std::unique_ptr<Process> process_;
  Proxy* px_ = nullptr;
  std::unique_ptr<Worker> worker_;
  uint16_t port_ = 0;
};

}  // namespace sluice::proxy::fixture

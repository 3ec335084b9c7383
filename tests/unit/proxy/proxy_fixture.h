#pragma once
// In-process proxy tests on loopback: ports the kernel picks, servers played by the test on
// listening sockets, and a Worker that is never started (the test's thread drives its loop
// through support/cpp/loop_runner.h, so every wait is bounded by RunLimits).
//
// - LoopbackPort, server_at(): a server address that accepts or refuses (backend_leg_test).
// - Peer: one end of a connection held by the test (a client, or a connection a test server
//   accepted): what it received, whether the other side closed.
// - ProxyHarness: a Process with one `listen` section (frontend and backend in one proxy)
//   bound to 127.0.0.1, and a Worker whose loop the test runs: connections to the listener are
//   accepted by the worker's own accept path (Worker::prepare_loop(), then ListenerWatch ->
//   accept_from() -> start_session()), as they are in a running process.
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
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
  explicit LoopbackPort(bool listening) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(kLoopback);
    socklen_t len = sizeof a;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        (listening && ::listen(fd_, 16) != 0) ||
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

// A client of 127.0.0.1:`port`: a blocking connect (on loopback it completes as soon as the
// listener's backlog takes it), then non-blocking. Not open() on failure.
inline Peer connect_client(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Peer();
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

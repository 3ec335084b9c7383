#pragma once
// A connection's byte stream as the layers above see it: read into and write from their
// buffers, pass a FIN on, close, and learn what readiness the event loop reported. The proxy
// never makes a socket system call or reads event-loop bits itself: a transport does.
//
// One implementation, RawTransport: a TCP or UNIX stream socket, which may carry a TLS
// connection (net/tls.h) once its handshake is done: then recv() decrypts and send() encrypts,
// and nothing above the transport changes. A plain connection pays one test of a null
// pointer per call for it.
//
// Thread rule: a transport belongs to the worker that owns its connection (worker-local).
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "core/event_loop.h"

struct ssl_st;

namespace sluice::net {

// The readiness the event loop reported for one descriptor, decoded here. It keeps the loop's
// bits and answers each question with one test, as the code that read the bits itself did.
class Readiness {
 public:
  explicit Readiness(uint32_t events) : e_(events) {}
  // Bytes, a FIN, a hang-up or an error are there to be read.
  bool readable() const { return e_ & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR); }
  // Room to write, or an error that a write would report.
  bool writable() const { return e_ & (EPOLLOUT | EPOLLHUP | EPOLLERR); }
  // The peer's FIN (or a hang-up, or an error): reads will end.
  bool peer_closed() const { return e_ & (EPOLLRDHUP | EPOLLHUP | EPOLLERR); }
  // Both directions are shut (also after a reset).
  bool hangup() const { return e_ & EPOLLHUP; }
  // A reset, or a failed connect.
  bool error() const { return e_ & EPOLLERR; }
  // A hang-up or an error.
  bool hangup_or_error() const { return e_ & (EPOLLHUP | EPOLLERR); }

 private:
  uint32_t e_;
};

// The event loop's bits of one event, decoded.
inline Readiness decode_readiness(uint32_t events) { return Readiness(events); }

// Registers a listening socket: level-triggered, for connections to accept. `exclusive`
// (EPOLLEXCLUSIVE): when several threads watch the socket, one connection wakes one of them,
// not all. False when the loop refused (errno says why). Worker-local.
bool watch_listener(core::EventLoop& loop, int fd, core::IoHandler* h, bool exclusive);

enum class IoStatus : uint8_t {
  kOk,      // `n` bytes moved
  kAgain,   // nothing can move now (empty or full, or interrupted): wait for readiness
  kEof,     // the peer's FIN (reads only)
  kError,   // `err` says why; the connection is unusable
};

struct IoResult {
  std::size_t n = 0;
  IoStatus status = IoStatus::kOk;
  int err = 0;   // errno, with kError
};

// How a connection ends. The states of a transport and the calls behind each edge:
//
//   open --send(.., more = true)--> open, bytes held back (MSG_MORE)
//   open, held back --send(.., more = false)--> open (what was held leaves with these bytes)
//   open [held back] --shutdown_write()--> write side shut (the FIN leaves, with held bytes);
//     recv() goes on until kEof
//   any but closed --close(mode)--> closed (fd() -1; close() again does nothing):
//     kFin        close()                           a FIN, or a reset if input is unread
//     kPushedFin  shutdown(SHUT_WR) if bytes are held back, then close()
//     kReset      SO_LINGER 0, close()               a reset, held bytes lost
//     kPushReset  TCP_NODELAY if bytes are held back (pushes them, no FIN), then as kReset
enum class CloseMode : uint8_t {
  kFin,        // close(): bytes held back by `more` leave with the FIN, unless unread input
               // is left, which turns the close into a reset (for a peer whose FIN was read)
  kPushedFin,  // bytes held back are pushed with the FIN (shutdown) before the close, so that
               // unread input cannot drop them: a reset may follow, after them (bytes still
               // queued behind a full peer window are lost to that reset all the same)
  kReset,      // SO_LINGER 0: a reset, nothing left in TIME_WAIT here
  kPushReset,  // bytes held back are pushed (without a FIN), then a reset
};

class Transport {
 public:
  virtual ~Transport() = default;

  // The descriptor, for the address lookups of rules and `show sess`; -1 once closed.
  virtual int fd() const = 0;
  bool open() const { return fd() >= 0; }

  // Registers with `loop` once, edge-triggered, for both directions; `h` gets the events.
  // False when the loop refused (errno says why).
  virtual bool watch(core::EventLoop& loop, core::IoHandler* h) = 0;

  // Reads up to `room` bytes into `dst`.
  virtual IoResult recv(char* dst, std::size_t room) = 0;
  // Writes up to `len` bytes. `more`: further bytes or the FIN follow at once, so these may be
  // held back to leave with them in one segment (MSG_MORE).
  virtual IoResult send(const char* src, std::size_t len, bool more) = 0;
  // Writes the `n` pieces in order, as one write of their bytes (a head and the body buffers
  // behind it leave in one system call). As send() otherwise.
  virtual IoResult sendv(const iovec* parts, int n, bool more) = 0;
  // Passes the FIN on (with whatever `more` held back); reads go on.
  virtual void shutdown_write() = 0;
  // Whether at least one byte waits to be read, without taking it.
  virtual bool input_pending() = 0;
  // After a non-blocking connect reported readiness: the connect's error, 0 when it succeeded.
  // It reads and clears the socket's error: ask once, before any recv() or send(), which
  // would otherwise take the error themselves.
  virtual int connect_error() = 0;
  // Closes the connection (also leaves the event loop). Idempotent.
  virtual void close(CloseMode mode) = 0;
};

// A TCP or UNIX stream socket, used as it is.
//
// What every connection calls (adopt, watch, recv, send, sendv, shutdown_write, a plain close,
// the destructor) is defined here: the class is final, so a caller holding a RawTransport
// calls these directly and the compiler inlines them, and a connection costs what it cost when
// the proxy made the system calls itself. Out of line, the rare ones: the closes that push held
// bytes or reset (close_slow), input_pending(), connect_error().
class RawTransport final : public Transport {
 public:
  RawTransport() = default;
  explicit RawTransport(int fd) : fd_(fd) {}
  ~RawTransport() override {
    if (tls_) [[unlikely]] drop_tls();
    if (fd_ >= 0) ::close(fd_);
  }
  RawTransport(const RawTransport&) = delete;
  RawTransport& operator=(const RawTransport&) = delete;

  // Takes ownership of `fd` (closing any descriptor held before).
  void adopt(int fd) {
    if (tls_) [[unlikely]] drop_tls();
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
    held_ = false;
    watched_ = false;
  }
  // From now on the socket's bytes are this TLS connection's (its handshake done), which the
  // transport owns and frees with the connection.
  void set_tls(ssl_st* s) { tls_ = s; }
  // The socket is already in the loop with watch()'s events, for a handler that is going
  // away (the TLS handshake's): watch() then only points it at the new one, one system call
  // instead of a removal and an addition.
  void set_watched() { watched_ = true; }
  ssl_st* tls() const { return tls_; }

  int fd() const override { return fd_; }
  bool watch(core::EventLoop& loop, core::IoHandler* h) override {
    // Edge-triggered, both directions, registered once and never modified: the owner
    // remembers readiness itself and stops calling recv/send at EAGAIN.
    constexpr uint32_t kEvents = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    if (watched_) [[unlikely]] return loop.modify(fd_, kEvents, h);
    return loop.add(fd_, kEvents, h);
  }
  IoResult recv(char* dst, std::size_t room) override {
    if (room == 0) return {0, IoStatus::kOk, 0};   // recv() would say 0, read as a FIN
    if (tls_) [[unlikely]] return tls_recv(dst, room);
    ssize_t n = ::recv(fd_, dst, room, 0);
    if (n > 0) return {static_cast<std::size_t>(n), IoStatus::kOk, 0};
    if (n == 0) return {0, IoStatus::kEof, 0};
    return failed(errno);
  }
  IoResult send(const char* src, std::size_t len, bool more) override {
    if (len == 0) return {0, IoStatus::kOk, 0};   // nothing to move is no broken pipe
    if (tls_) [[unlikely]] return tls_send(src, len);
    ssize_t n = ::send(fd_, src, len, more ? MSG_NOSIGNAL | MSG_MORE : MSG_NOSIGNAL);
    if (n > 0) {
      held_ = more;
      return {static_cast<std::size_t>(n), IoStatus::kOk, 0};
    }
    return failed(n < 0 ? errno : EPIPE);
  }
  IoResult sendv(const iovec* parts, int n, bool more) override {
    if (n == 1) return send(static_cast<const char*>(parts[0].iov_base), parts[0].iov_len, more);
    if (tls_) [[unlikely]] return tls_sendv(parts, n);
    msghdr m{};
    m.msg_iov = const_cast<iovec*>(parts);
    m.msg_iovlen = static_cast<std::size_t>(n);
    ssize_t r = ::sendmsg(fd_, &m, more ? MSG_NOSIGNAL | MSG_MORE : MSG_NOSIGNAL);
    if (r > 0) {
      held_ = more;
      return {static_cast<std::size_t>(r), IoStatus::kOk, 0};
    }
    return failed(r < 0 ? errno : EPIPE);
  }
  void shutdown_write() override {
    if (fd_ < 0) return;
    if (tls_) [[unlikely]] tls_close_notify();
    ::shutdown(fd_, SHUT_WR);
    held_ = false;
  }
  bool input_pending() override;
  int connect_error() override;
  void close(CloseMode mode) override {
    if (fd_ < 0) return;
    if (tls_) [[unlikely]] {
      // A clean end says close_notify first; a reset says nothing more.
      if (mode == CloseMode::kFin || mode == CloseMode::kPushedFin) tls_close_notify();
      drop_tls();
    }
    // A plain close, or a pushed one with nothing held back, is one close(): the common end
    // of every connection. The others set options first (close_slow).
    if (mode == CloseMode::kFin || (mode == CloseMode::kPushedFin && !held_)) {
      ::close(fd_);
    } else {
      close_slow(mode);
    }
    fd_ = -1;
    held_ = false;
  }

 private:
  static IoResult failed(int err) {
    if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR) return {0, IoStatus::kAgain, 0};
    return {0, IoStatus::kError, err};
  }
  // The closes that do more than close(): the shutdown, TCP_NODELAY or SO_LINGER that `mode`
  // needs, then the close. close() clears fd_ and held_ after it.
  void close_slow(CloseMode mode);
  // The TLS connection's side of the calls (transport.cc, with net/tls.h).
  IoResult tls_recv(char* dst, std::size_t room);
  IoResult tls_send(const char* src, std::size_t len);
  IoResult tls_sendv(const iovec* parts, int n);
  void tls_close_notify();
  void drop_tls();

  int fd_ = -1;
  bool held_ = false;   // the last send() had `more`: bytes may wait for the FIN or a push
  bool watched_ = false;   // set_watched()
  ssl_st* tls_ = nullptr;
};

// Reads and drops what the peer already sent (at most 64 KiB), before a close that refuses
// it: a close over unread bytes would be a reset instead of a FIN.
inline void discard_input(Transport& t) {
  char scratch[4096];
  for (int i = 0; i < 16 && t.recv(scratch, sizeof scratch).status == IoStatus::kOk; ++i) {
  }
}

}  // namespace sluice::net

#pragma once
// The backend leg: the server side of a session, TCP or HTTP, up to a connected server socket.
// It picks a server of the backend (and another one on a redispatch), holds that server's
// connection slot (maxconn), waits in the backend's queue when every usable server is full,
// opens the non-blocking connection through net, records its completion or failure, decides
// retries and redispatches, keeps the timings of the log (queued, connect attempt, connected)
// and counts all of that on the backend and the server. Each session owns one, by value; what
// the session does with the connection once it is there stays the session's own (HTTP: the
// idle pool and `http-reuse never` private connections; TCP: the relay), and so do its one
// timer (the leg only says when its deadline is: deadline()) and its log line.
//
// Thread rule: worker-local, as the session that owns it. Nothing here takes a lock; the only
// shared state it touches is the backend's queue counts and the servers' slots (atomics).
//
// States (state()) and the function behind each edge:
//
//             pick()            connect() / reuse()            connected()
//   kIdle -----------> kPicked -----------------> kConnecting -------------> kConnected
//     |                 ^   ^                       |    |   ^
//     | pick(): kFull,  |   |   fail(): retry now   |    |   | connect(), once due
//     | enter_queue()   |   +-----------------------+    |   |
//     v                 |   (the same server, or a       |   |
//   kQueued ------------+    redispatch to another)      |   |
//     |  take_queued_slot()          fail(): retry later |   |
//     |                                                  v   |
//     |                                                kRetryWait
//     | fail(queue timeout)
//     +-------------------> kFailed <--- fail(): give up (retries exhausted: econ counted)
//
//   any state --release()--> kIdle, detached: the slot and the backend's session count given
//   back. fail() is called from kConnecting (refused, reset, `timeout connect`), from kPicked
//   or kRetryWait when connect() itself failed, or from kQueued (`timeout queue`).
//
// A session reaches the leg once its backend is known (attach()); HTTP attaches and releases
// once per transaction (reset() clears the timings and retries between two), TCP once.
#include <cerrno>
#include <cstdint>
#include <new>
#include <string>

#include "lb/server.h"
#include "log/conn_error.h"
#include "log/termination.h"
#include "net/address.h"
#include "net/socket.h"
#include "net/socks4.h"
#include "proxy/process.h"
#include "proxy/worker.h"
#include "stats/counters.h"

namespace sluice::proxy {

// Why a connection to a server could not be had: a value, read by the retry decision.
struct ConnectError {
  enum class Side : uint8_t {
    kServer,   // the server refused, reset or did not answer in time
    kLocal,    // this side: no socket, descriptor or memory, the loop refused it
    kQueue,    // no slot came before `timeout queue`
  };
  Side side = Side::kServer;
  int err = 0;             // errno
  bool timeout = false;    // `timeout connect` or `timeout queue` expired
  bool retryable = true;   // another attempt may succeed (every connect failure, as HAProxy)
  // bc_err when it is not the errno's (a SOCKS4 proxy's refusal).
  log::ConnError code = log::ConnError::kNone;

  static ConnectError server(int err) { return {Side::kServer, err, false, true, {}}; }
  static ConnectError local(int err) { return {Side::kLocal, err, false, true, {}}; }
  static ConnectError connect_timeout() { return {Side::kServer, ETIMEDOUT, true, true, {}}; }
  static ConnectError queue_timeout() { return {Side::kQueue, ETIMEDOUT, true, false, {}}; }
  // The server's SOCKS4 proxy did not let the connection through (net/socks4.h).
  static ConnectError socks4(const net::socks4::Handshake& h) {
    static constexpr log::ConnError kCodes[] = {
        log::ConnError::kNone, log::ConnError::kSocks4Send, log::ConnError::kSocks4Recv,
        log::ConnError::kSocks4Deny, log::ConnError::kSocks4Abort};
    return {Side::kServer, h.sys_errno(), false, true, kCodes[static_cast<int>(h.failure())]};
  }

  // The TLS handshake with the server failed (proxy/server_tls.h).
  static ConnectError tls(log::ConnError code, int err) {
    return {Side::kServer, err, false, true, code};
  }

  // How a session that gives up on it ends: a server timeout in the queue (sQ), a server
  // timeout while connecting (sC), or the server's refusal while connecting (SC).
  log::Termination term() const {
    using log::Cause;
    using log::FinalState;
    if (side == Side::kQueue) return {Cause::kServerTimeout, FinalState::kQueue};
    return {timeout ? Cause::kServerTimeout : Cause::kServerClose, FinalState::kConnect};
  }
};

class BackendLeg {
 public:
  enum class State : uint8_t {
    kIdle, kQueued, kPicked, kConnecting, kRetryWait, kConnected, kFailed
  };
  enum class PickResult : uint8_t {
    kPicked,   // a server's slot is held: connect() (or reuse())
    kFull,     // every usable server is at its maxconn: enter_queue()
    kNone,     // no usable server at all
  };
  enum class ConnectStatus : uint8_t { kInProgress, kConnected, kFailed };
  // What fail() decided.
  enum class RetryAction : uint8_t {
    kGiveUp,   // no more attempts: the session ends or answers (term() of the error)
    kNow,      // connect() again now (the same server, or the one a redispatch chose)
    kLater,    // connect() again at retry_due_ms() (the turn-around after a refusal)
  };

  // `owner` is the session queued in the worker's backend queue; `client` feeds `balance
  // source`; `local_port` is the listener's, for servers without a port.
  BackendLeg(Worker& w, Session& owner, const net::SocketAddress& client, uint16_t local_port)
      : w_(w), owner_(owner), client_(client), local_port_(local_port) {}
  BackendLeg(const BackendLeg&) = delete;
  BackendLeg& operator=(const BackendLeg&) = delete;
  // The stream's destination port changed (`http-request set-dst-port`).
  void set_local_port(uint16_t port) { local_port_ = port; }

  // The session goes to `be`: it counts there (be_conns, stot, smax, session rate).
  void attach(Proxy& be);
  // Picks a server for a new request (retries and redispatch start afresh). `key`: what
  // `balance uri` / `balance hdr()` hash (HTTP; null in TCP mode), read again by a redispatch,
  // so it must stay until release().
  PickResult pick(const std::string* key);
  // kFull: waits in the backend's queue (counted: queued, queued_max) and in the worker's list
  // of queued sessions, which calls the owner's retry_from_queue() when a slot frees. True when
  // a slot is taken at once after all: one may have been freed between the failed pick and the
  // count, by a thread that saw no queue then. The leg is then kPicked, and the session
  // connects as after a pick.
  [[nodiscard]] bool enter_queue();
  // Queued: tries to take a slot now; on success the leg leaves the queue (kPicked).
  bool take_queued_slot();
  // Leaves the queue, when queued (the session ends or answers meanwhile). Idempotent.
  void leave_queue() {
    if (state_ == State::kQueued) unqueue();
  }

  // Starts a connection to the picked server (counted: connect) through net, non-blocking;
  // `*fd` is the new socket, for the session's transport, which registers it with the loop.
  // kConnected: the connect succeeded at once; the session then calls connected().
  ConnectStatus connect(const net::ConnectOptions& opts, int* fd, ConnectError* err);
  // The session uses an idle connection to the picked server it already has (counted: reuse);
  // it calls connected() next.
  void reuse();
  void connected() {
    mark_connected();
    srv_->analyze(lb::Hana::kL4Ok);   // `observe`
  }
  // The connection was up but failed at once (its first write): Tc is logged, and `observe`
  // is told nothing good.
  void mark_connected() {
    t_connected_ms_ = w_.loop().now_ms();
    state_ = State::kConnected;
  }
  // The attempt failed, or the queue wait expired: counts it and decides what comes next (see
  // RetryAction). Every attempt but the last is a retry (wretr) or, when `option redispatch`
  // says so, a move to another server (wredis); giving up counts econ.
  RetryAction fail(const ConnectError& e);

  // The leg's next deadline: `timeout queue` while queued, `timeout connect` while connecting,
  // the due time of a retry while waiting for it; 0 otherwise (or without such timeout).
  uint64_t deadline() const;
  bool queue_expired(uint64_t now) const;
  bool connect_expired(uint64_t now) const;
  uint64_t retry_due_ms() const { return t_connect_ms_; }

  // Gives the server slot back (and tells the queues a slot is free) and the backend's session
  // count; the leg is detached (kIdle). The timings and retries stay for the log until reset().
  void release();
  // Between two HTTP transactions: timings, retries and redispatch cleared.
  void reset();

  State state() const { return state_; }
  Proxy* backend() const { return be_; }
  // The server picked (connected, connecting or waiting to), null before the first pick and
  // after release().
  lb::Server* server() const { return srv_; }
  int server_global() const { return be_->server_base + srv_->index(); }
  // The destination port of server(), when it has no port of its own (the stream's, with its
  // offset, as Server::target() maps it); 0 for a server with a fixed port. What tells its
  // connections apart: its address is the same for all.
  uint16_t mapped_port() const {
    const lb::ServerSettings& ss = srv_->settings();
    return ss.port_mapped ? static_cast<uint16_t>((local_port_ + ss.port_offset) & 0xffff) : 0;
  }
  // This worker's counters of server(), which must be set.
  stats::TrafficCounters& server_counters() const { return w_.srv_counters(server_global()); }
  int retries() const { return retries_; }
  bool redispatched() const { return redispatched_; }   // the log's "+" before the retries
  // Where the last connection attempt went (%si:%sp); null when none was made. A reused idle
  // connection goes where its server is: worked out when asked.
  const net::SocketAddress* target() const {
    if (!has_target_ && reused_ && srv_) {
      new (&target_.a) net::SocketAddress(srv_->target(net::SocketAddress::ipv4(0, local_port_)));
      has_target_ = true;
    }
    return has_target_ ? &target_.a : nullptr;
  }
  // use-server: the server the next pick() takes (null: the algorithm picks). A retry with
  // redispatch leaves it for the algorithm's choice. Cleared by release().
  void force(lb::Server* s) { forced_ = s; }
  // option prefer-last-server: the next pick takes this server when it is usable and has
  // room, before the algorithm (not counted as load balanced). Cleared by the pick and by
  // release().
  void prefer(lb::Server* s) { preferred_ = s; }
  // Where it came from (%bi:%bp): asked of the kernel at each connect only when wanted.
  void keep_source(bool on) { keep_source_ = on; }
  const net::SocketAddress* source() const { return has_source_ ? &source_.a : nullptr; }
  // Loop clock, 0 when not reached: entering the queue, the current connect attempt (while
  // waiting for a retry: its due time), the connection being up.
  uint64_t queued_ms() const { return t_queued_ms_; }
  uint64_t connect_ms() const { return t_connect_ms_; }
  uint64_t connected_ms() const { return t_connected_ms_; }

  // bc_err: HAProxy's error code of the server connection. The last attempt's when it failed
  // on an error (a connect timeout reports none, as in HAProxy), 0 while one is up without an
  // error, nothing before any attempt. `note_error()`: the connection failed later (a read or a
  // write, errno).
  bool error_code(int64_t* out) const {
    if (err_ != kNoErr) {
      *out = static_cast<int64_t>(err_);
      return true;
    }
    if (!t_connected_ms_) return false;
    *out = 0;
    return true;
  }
  [[gnu::cold]] void note_error(int err);

 private:
  static constexpr uint8_t kNoErr = 0xff;
  // take_server() with this leg's context; `redispatch` prefers another server than srv_.
  bool take(bool redispatch);
  // What connect() reports for net's error: out of line, as it is rare.
  static ConnectError connect_failure(const base::Error& e);
  void unqueue();

  Worker& w_;
  Session& owner_;
  const net::SocketAddress& client_;
  // An address written before it is read (has_target_, has_source_ say so): left unset by
  // the constructor, which would otherwise clear 136 bytes for each per connection.
  union Addr {
    Addr() : none(0) {}
    char none;
    net::SocketAddress a;
  };
  mutable Addr target_;   // the last connect's destination (the log's %si:%sp)
  mutable bool has_target_ = false;
  bool reused_ = false;                 // the last attempt took an idle connection
  Addr source_;           // its local address (%bi:%bp), when keep_source_
  bool has_source_ = false;
  bool keep_source_ = false;
  Proxy* be_ = nullptr;
  lb::Server* srv_ = nullptr;
  lb::Server* forced_ = nullptr;
  lb::Server* preferred_ = nullptr;
  const std::string* key_ = nullptr;
  uint16_t local_port_;
  State state_ = State::kIdle;
  bool redispatched_ = false;   // moved to another server after a failure
  uint8_t err_ = kNoErr;        // bc_err's log::ConnError, kNoErr: none to report
  int retries_ = 0;             // attempts after the first
  uint64_t t_queued_ms_ = 0;
  uint64_t t_connect_ms_ = 0;
  uint64_t t_connected_ms_ = 0;
};

// Inline: each runs once or more per connection, on the sessions' paths (deadline() on every
// timer re-arm), where a call would cost more than the body.

inline void BackendLeg::attach(Proxy& be) {
  be_ = &be;
  be.be_conns.fetch_add(1, std::memory_order_relaxed);
  auto& bc = w_.be_counters(be.index);
  const uint64_t now = w_.loop().now_ms();
  bc.stot.add();
  bc.smax.raise_to(static_cast<uint64_t>(be.be_conns.load(std::memory_order_relaxed)));
  bc.sess_rate.add(now);
  bc.last_sess_ms.set(now);
}

inline BackendLeg::PickResult BackendLeg::pick(const std::string* key) {
  key_ = key;
  retries_ = 0;
  redispatched_ = false;
  if (take(false)) {
    state_ = State::kPicked;
    return PickResult::kPicked;
  }
  // Every usable server is at its maxconn: the session waits in the backend's queue (bounded
  // by `timeout queue`) for a slot, as HAProxy does. No usable server at all: nothing to wait
  // for.
  if (be_->backend->usable_active() + be_->backend->usable_backup() > 0) return PickResult::kFull;
  return PickResult::kNone;
}

// Its body is three calls into lb and net; a call of its own (six saved registers, a 300-byte
// frame for the server's address and net's result) cost half as much again, about 30
// instructions per connection. GCC finds it too big to inline on `inline` alone (net's result
// has a destructor), hence always_inline: each session kind calls it from one place.
[[gnu::always_inline]] inline BackendLeg::ConnectStatus BackendLeg::connect(
    const net::ConnectOptions& opts, int* fd, ConnectError* err) {
  t_connect_ms_ = w_.loop().now_ms();
  server_counters().connect.add();
  w_.be_counters(be_->index).connect.add();
  bool in_progress = false;
  new (&target_.a) net::SocketAddress(srv_->target(net::SocketAddress::ipv4(0, local_port_)));
  has_target_ = true;
  reused_ = false;
  err_ = kNoErr;
  // socks4: the connection goes to the proxy, which is asked for the server (the session runs
  // the handshake before it calls connected()).
  const lb::ServerSettings& ss = srv_->settings();
  auto r = net::connect_nonblocking(ss.has_socks4 ? ss.socks4 : target_.a, &in_progress, opts);
  if (!r.ok()) {
    *err = connect_failure(r.error());
    return ConnectStatus::kFailed;
  }
  *fd = *r;
  has_source_ = keep_source_ && net::local_address(*fd, new (&source_.a) net::SocketAddress);
  state_ = State::kConnecting;
  return in_progress ? ConnectStatus::kInProgress : ConnectStatus::kConnected;
}

inline uint64_t BackendLeg::deadline() const {
  if (!be_) return 0;
  const Timeouts& to = be_->settings.timeouts;
  switch (state_) {
    case State::kQueued:
      return to.queue ? t_queued_ms_ + to.queue : 0;
    case State::kConnecting:
      return to.connect ? t_connect_ms_ + to.connect : 0;
    case State::kRetryWait:
      return t_connect_ms_;
    default:
      return 0;
  }
}

inline void BackendLeg::release() {
  leave_queue();
  if (srv_) {
    srv_->release();
    w_.process().server_slot_freed(*be_);
    srv_ = nullptr;
  }
  if (be_) {
    be_->be_conns.fetch_sub(1, std::memory_order_relaxed);
    be_ = nullptr;
  }
  key_ = nullptr;
  forced_ = nullptr;
  preferred_ = nullptr;
  state_ = State::kIdle;
}

}  // namespace sluice::proxy

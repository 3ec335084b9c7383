#pragma once
// A worker thread: its event loop, buffer pool, per-thread counters, listener watches and
// the sessions it owns. Everything here is worker-local unless a method says otherwise.
//
// Its life, and the function behind each edge:
//
//   start() --> RUNNING (the loop runs: accepts, sessions, checks, posted tasks)
//   RUNNING --request_stop() (Process::stop_now(), SIGINT/SIGTERM)--> ENDED (the loop stops;
//     sessions are not drained)
//   RUNNING --request_soft_stop() (Process::soft_stop(), SIGUSR1, after `grace`)--> STOPPING:
//     the backlogs are drained (accept_batch(draining)), the last thread of each shard shuts
//     its listener down (net::stop_listening()), close_listeners(), every session gets
//     on_soft_stop() (HTTP: every later response says `connection: close`; a keep-alive
//     connection between requests gets kStopGraceMs for its next one, then closes with a
//     FIN and lingers: H1Connection::begin_linger()), idle server connections close
//   STOPPING --maybe_finish_soft_stop(): no session, no queued hand-off (and, for the worker
//     serving the stats sockets, no other worker left: request_finish_check())--> ENDED
//   STOPPING --request_stop() (`hard-stop-after`, or SIGINT/SIGTERM)--> ENDED
//   ENDED: the loop refuses posts; join() returns.
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <deque>
#include <unordered_set>
#include <vector>

#include "log/conn_error.h"
#include "core/bounded_queue.h"
#include "core/buffer.h"
#include "core/event_loop.h"
#include "net/tls.h"
#include "net/transport.h"
#include "proxy/log.h"
#include "proxy/process.h"
#include "proxy/session.h"
#include "proxy/stream_times.h"
#include "stats/control.h"
#include "stats/counters.h"

namespace sluice::proxy {

class H1Connection;
struct HttpCodecs;
class Session;
// What `tcp-request` rules read for a connection accepted on `l` from `peer` (accept.cc): src,
// dst and dst_port. `dst` is the bind address, or the kernel's answer (kept in `local`) when the
// bind address is a wildcard and a rule of the frontend reads it (one getsockname()). Any
// thread: it only reads the listener's immutable settings.
rules::RequestView tcp_rule_view(const Listener& l, int fd, const net::SocketAddress& peer,
                                 net::SocketAddress& local);

class Worker;

// A connection to a server opened for HTTP. It belongs to one session while a request uses it
// and waits in its worker's idle pool between requests (http-reuse), watched for the server
// closing it. Worker-local.
struct ServerConn : core::IoHandler, core::Deferred {
  Worker* w = nullptr;
  net::RawTransport io;           // the server connection
  int srv_global = -1;            // global server index (Process::server_by_global_index)
  H1Connection* owner = nullptr;   // null while idle in the pool
  std::string sni;                // the SNI it was opened with (server ... ssl), empty: none
  // A server without a port of its own: the destination port it was opened to (the stream's,
  // which set-dst-port changes per request); 0 for a server with a fixed port.
  uint16_t dst_port = 0;
  // send-proxy: the PROXY header it opened with (it serves only streams with the same one);
  // null without send-proxy (a pointer: nothing to build or destroy for the others).
  std::unique_ptr<const std::string> proxy_header;
  std::string_view sent_proxy_header() const {
    return proxy_header ? std::string_view(*proxy_header) : std::string_view();
  }
  uint32_t requests = 0;          // requests it carried
  uint32_t glitches = 0;          // bc_glitches: responses that had a protocol glitch
  uint64_t idle_since_ms = 0;
  bool pooled = false;            // in the worker's idle list
  bool pool_counted = false;      // counted in Process::idle_pooled() (pool-max-conn)
  // Cleared once the server's FIN (or an error) was seen: until then sluice is the one closing,
  // and it closes with a reset so that no TIME_WAIT holds the ephemeral port (net::close_with_reset).
  bool reset_on_close = true;
  bool nolinger = false;          // the backend has `option nolinger`: always a reset
  // It answered a connection-oriented authentication challenge (NTLM, Negotiate): private to
  // its client connection from then on, never parked in the idle pool.
  bool owned = false;
  void on_io(uint32_t events) override;
};

// This worker's registration of one listening socket.
class ListenerWatch : public core::IoHandler {
 public:
  ListenerWatch(Worker& w, Listener& l) : w_(w), l_(l) {}
  void on_io(uint32_t events) override;
  Listener& listener() { return l_; }
  bool registered = false;
  bool paused = false;    // removed from epoll because a connection limit was reached

 private:
  Worker& w_;
  Listener& l_;
};

class SpecialWatch : public core::IoHandler {
 public:
  SpecialWatch(Worker& w, Process::SpecialListener& l) : w_(w), l_(l) {}
  void on_io(uint32_t events) override;
  Process::SpecialListener& listener() { return l_; }
  bool registered = false;

 private:
  Worker& w_;
  Process::SpecialListener& l_;
};

// A connection of a special listener (the CLI): owned by the worker that accepted it, listed
// by `show sess` with frontend GLOBAL. Worker-local.
class SpecialConn : public core::Deferred, public Describable {
 public:
  // The special listener's position among Process::special_listeners(), 1-based (`show sess`
  // prints a unix client as `unix:<it>`, as HAProxy prints the listener's id).
  int listener_id = 0;
};

// Per-thread activity counters for `show activity`. Single writer (the worker).
struct Activity {
  stats::LocalCounter accepted;      // connections this thread took with accept()
  stats::LocalCounter accq_pushed;   // of those, handed to another thread's accept queue
  stats::LocalCounter accq_full;     // hand-offs refused by a full queue (kept locally)
  stats::LocalCounter sess_started;  // sessions this thread ran (its own + received)
};

// An accepted connection handed to another thread (multi-queue accept).
struct Handoff {
  int fd = -1;
  Listener* listener = nullptr;
  net::SocketAddress peer;
  ConnSlots slots;   // travels with the connection
  bool expect_proxy = false;   // a tcp-request connection rule wants a PROXY header first
};

class Worker : public core::TimerHandler {
 public:
  // `clock`: what the loop reads (the monotonic clock unless a test drives it).
  Worker(Process& process, int id, base::ClockSource clock = {});
  ~Worker();

  int id() const { return id_; }   // 0-based
  int tid() const { return id_ + 1; }   // global thread id, 1-based
  int group() const { return process_.group_of(id_ + 1); }
  // cpu_usage_thr: the percent of a CPU this worker's thread used between its last two
  // samples (one a second while it has sessions). Any thread reads it.
  int cpu_usage() const { return cpu_usage_.load(std::memory_order_relaxed); }
  Process& process() { return process_; }
  core::EventLoop& loop() { return loop_; }
  core::BufferPool& buffers() { return buffers_; }
  // Codecs that finished HTTP transactions gave back, for the next ones. Worker-local.
  std::vector<std::unique_ptr<HttpCodecs>>& spare_codecs() { return spare_codecs_; }
  LogWriter& logs() { return logs_; }

  // Main thread: starts the thread. The thread registers its listeners and runs the loop.
  void start();
  void join();
  // What the thread does before its loop runs: watches the listeners of its shards (worker 0:
  // the stats sockets too) and hooks the work epoll does not see (held-back sends, hand-offs)
  // into the loop. A test that runs the loop on its own thread, turn by turn
  // (tests/support/cpp/loop_runner.h), calls it once instead of start(). Worker-local.
  void prepare_loop();

  // Any thread.
  void request_stop();
  void request_soft_stop();
  void request_resume();
  // SIGTTOU / SIGTTIN (Process::pause_listeners): stop or start watching the listening
  // sockets; connections already accepted go on.
  void request_listeners_paused(bool paused);
  // A frontend was disabled, enabled or shut down: watch exactly the listeners that accept now.
  void request_refresh_watches();
  // During a soft stop: end the loop now if nothing holds it (the last other worker ended).
  void request_finish_check();
  // A server slot was freed somewhere: retry the sessions waiting in this worker's queue.
  void request_dequeue();

  // Counters: any thread may read.
  stats::TrafficCounters& fe_counters(int proxy) { return fe_[static_cast<std::size_t>(proxy)]; }
  stats::TrafficCounters& be_counters(int proxy) { return be_[static_cast<std::size_t>(proxy)]; }
  stats::TrafficCounters& srv_counters(int global_server) {
    return srv_[static_cast<std::size_t>(global_server)];
  }
  const stats::TrafficCounters& fe_counters(int proxy) const { return fe_[static_cast<std::size_t>(proxy)]; }
  const stats::TrafficCounters& be_counters(int proxy) const { return be_[static_cast<std::size_t>(proxy)]; }
  const stats::TrafficCounters& srv_counters(int global_server) const {
    return srv_[static_cast<std::size_t>(global_server)];
  }
  Activity& activity() { return activity_; }
  const Activity& activity() const { return activity_; }
  const core::EventLoop& loop() const { return loop_; }
  uint64_t sessions() const { return sessions_count_.load(std::memory_order_relaxed); }

  // Session bookkeeping. Worker-local.
  void session_opened(Session* s);
  void session_closed(Session* s);
  // Output batching. While the loop handles a batch of events (and timers), HTTP sessions do
  // not send: they queue themselves here and their sends all go out after the batch, before
  // the loop polls again. The peers (client, server) are then woken once for several
  // messages rather than once per event; with more busy processes than CPUs, per-event
  // wake-ups made the peers preempt the proxy hundreds of times per 1,000 requests
  // (docs/performance.md, "Batched sends"). Worker-local.
  bool sends_batched() const { return batch_sends_; }
  void queue_flush(Session* s);
  void unqueue_flush(Session* s);
  // Backend queue (server maxconn reached everywhere): sessions wait here in arrival order.
  void queue_session(Session* s);
  void unqueue_session(Session* s);
  // `on-marked-down shutdown-sessions`: closes every session of this worker that uses `srv`.
  // Worker-local (the health check's hook posts it to every worker).
  void shutdown_sessions_of(const lb::Server* srv);
  // A special-listener connection (CLI) opened/closed on this worker; the worker owns it and
  // frees it (deferred) when closed, or at exit. Worker-local.
  void special_opened(SpecialConn* conn);
  void special_closed(Process::SpecialListener& l, SpecialConn* conn);

  // `show sess` (session_dump.cc): appends this worker's sessions and CLI connections, one
  // line each, or a block each with `detail`; `id` 0 lists all, another only that one.
  // Returns how many were listed. Worker-local.
  std::size_t describe_sessions(uintptr_t id, bool detail, std::string* out) const;
  // `shutdown session`: closes the session or CLI connection whose id is `id`, if it is on
  // this worker. Worker-local.
  bool kill_session(uintptr_t id);

  // `show errors` (session_dump.cc): keeps `snap` as this worker's last invalid message of its
  // proxy and direction, numbered process-wide. Worker-local; error path only.
  void capture_error(stats::ErrorSnapshot snap);
  // Copies of this worker's snapshots, for the CLI thread. Worker-local.
  std::vector<stats::ErrorSnapshot> error_snapshots() const;

  // Idle server connections (HTTP reuse). Worker-local. take_idle() returns the most recently
  // parked connection to that server (with `safe_only`, one that carried two requests or
  // more), or null.
  // Only a connection to the same destination is taken: opened to `dst_port` (a server without
  // a port, ServerConn::dst_port) and with that SNI (empty: none).
  ServerConn* take_idle(int srv_global, bool safe_only, uint16_t dst_port = 0,
                        std::string_view sni = {});
  // Whether the idle pool holds a connection to that server (option prefer-last-server).
  bool has_idle(int srv_global) const {
    return !idle_.empty() && !idle_[static_cast<std::size_t>(srv_global)].empty();
  }
  void park_idle(ServerConn* c);
  // Closes a server connection (owned or idle) and frees it after this loop iteration.
  void close_server_conn(ServerConn* c);
  // A pooled connection leaves the pool-max-conn count (when it was in it).
  void uncount_pooled(ServerConn* c);
  std::size_t idle_conns() const { return idle_count_; }
  // The TLS session this worker keeps for a `server ... ssl`, resumed by its next connection
  // (no-ssl-reuse: the context keeps none). Worker-local.
  net::tls::SessionSlot* tls_session(int srv_global);
  // This worker's TLS rates (show info's SslRate, SslFrontendKeyRate, SslBackendKeyRate):
  // frontend connections that start a handshake, and the full handshakes (not resumed) of
  // frontends and of backends. Written by this worker only; any thread reads.
  struct TlsRates {
    stats::LocalRate conns, fe_keys, be_keys;
    stats::LocalCounter ticket_resumptions;   // kept out of SslCacheLookups, as HAProxy does
  };
  TlsRates& tls_rates() { return tls_rates_; }
  const TlsRates& tls_rates() const { return tls_rates_; }

  // Accept path (accept.cc). Worker-local unless stated.
  void accept_from(ListenerWatch& watch);
  // Accepts up to `batch` connections (-1: until the backlog is empty or a limit is reached).
  // `draining` (soft stop): `maxconnrate` does not apply, the listener closes right after.
  void accept_batch(ListenerWatch& watch, int batch, bool draining = false);
  void accept_special(SpecialWatch& watch);
  // A connection of `l` that this thread ran ends: it no longer counts in the load that
  // multi-queue accept compares (Listener::given). Worker-local. Inline: once per connection.
  void release_thread_load(Listener& l) {
    l.given[static_cast<std::size_t>(l.position[static_cast<std::size_t>(id_)])].fetch_sub(
        1, std::memory_order_relaxed);
  }
  // Another thread hands us an accepted connection. Any thread. False when the queue is full.
  // Moves `h` into the queue; a full queue (false) leaves it untouched.
  bool push_handoff(Handoff& h);
  std::size_t accq_length() const { return accq_.size_estimate(); }
  // A session that tcp-request session rules let through counts in the frontend's stot and
  // session rate (start_session counts the others at once). Worker-local.
  void count_session(const Proxy& fe);
  // tcp-request session rules of `l`'s frontend for an HTTP connection on `fd`, with `view`'s
  // session variables; `addrs.src` (not null) is the client's address, and where set-src
  // writes; set-dst writes `addrs.dst`. Counted: dses, dreq, or a session. Worker-local.
  rules::TcpVerdict session_verdict(const Listener& l, int fd, rules::RequestView& view,
                                    rules::TcpAddrs addrs);
  // `tcp-request content` rules of `l`'s frontend for the HTTP stream `stream` on `fd`; a
  // reject or a silent-drop is counted as a denied request (dreq, as HAProxy does) and the
  // caller ends the stream. `view` brings the stream's addresses, variables and captures;
  // set-src / set-dst write `addrs` (null: no rule of the set has them); `*last` takes the
  // final rule that decided. Worker-local.
  rules::TcpVerdict content_verdict(const Listener& l, int fd, rules::RequestView& view,
                                    const StreamTimes* stream, rules::TcpAddrs addrs,
                                    const rules::RuleLoc** last);
  // The backend `use_backend` rules of `l`'s frontend choose for a TCP session on `fd` from
  // `peer` (`view` also carries the client's buffered bytes), else its default backend (may be
  // null). Worker-local.
  Proxy* tcp_backend(const Listener& l, int fd, const net::SocketAddress& peer,
                     rules::RequestView view);
  // The server the `use-server` rules of `be` choose for that TCP session, or null; with
  // `key`, also what the backend's expression-based balance algorithm (hash, rdp-cookie)
  // hashes, *has_key saying whether there is one. Worker-local.
  lb::Server* tcp_server(const Listener& l, int fd, const net::SocketAddress& peer,
                         rules::RequestView view, Proxy& be, std::string* key = nullptr,
                         bool* has_key = nullptr);
  // The `sni <expr>` value of server `srv` of `be` for that TCP session (false: none).
  // Worker-local.
  bool tcp_server_sni(const Listener& l, int fd, const net::SocketAddress& peer,
                      rules::RequestView view, Proxy& be, const lb::Server& srv,
                      const ProxySettings::ServerSni& sni, std::string* out);
  // `use_backend %[...]`: the backend called what `name` renders for `view`, or null.
  // Worker-local.
  Proxy* backend_named(const rules::ValueFormat& name, const rules::RequestView& view);
  // The session of a connection, once its PROXY protocol header (`pp`, null without
  // accept-proxy) was read (ProxyHeaderWait): it comes from `peer` and takes `slots` over; the
  // listener's count for this thread already includes it. Worker-local.
  void begin_session(Listener& l, int fd, const net::SocketAddress& peer,
                     std::shared_ptr<const net::pp::Header> pp, ConnSlots&& slots);
  // The session of a connection whose TLS handshake is done (TlsHandshake): as
  // begin_session(), with the TLS connection `ssl` for its transport. Worker-local.
  void begin_tls_session(Listener& l, int fd, const net::SocketAddress& peer, ssl_st* ssl,
                         std::shared_ptr<const net::pp::Header> pp, ConnSlots&& slots);
  // A connection that ended before its session began (a PROXY header or a TLS handshake that
  // failed): HAProxy's line "<ci>:<cp> [<date>] <frontend>/<bind>: <fc_err_str>", to the
  // frontend's logs. Worker-local.
  void log_connection_error(const Listener& l, const net::SocketAddress& peer,
                            uint64_t accept_wall_us, log::ConnError why);

 private:
  void thread_main();
  void pin_to_cpus();
  void drain_handoffs();
  void flush_sends();
  Worker* pick_target(Listener& l);
  // `charged`: the listener's count for this thread (`given`) already includes the connection
  // (a multi-queue hand-off is charged by the thread that pushed it). The session takes
  // `slots` over. A reference, not a value: a by-value token is one more object built, moved
  // from and destroyed per connection.
  void start_session(Listener& l, int fd, const net::SocketAddress& peer, bool charged,
                     ConnSlots&& slots);
  // The same for a connection that begins with a PROXY protocol header (accept-proxy on its
  // bind line, or expect-proxy): the session starts once the header is read. Out of line.
  [[gnu::noinline]] void start_proxied_session(Listener& l, int fd,
                                               const net::SocketAddress& peer, bool charged,
                                               ConnSlots&& slots);
  // The session itself (counted, built, started); `pp`: the PROXY header it began with.
  void open_session(Listener& l, int fd, const net::SocketAddress& peer, ConnSlots&& slots,
                    std::shared_ptr<const net::pp::Header>* pp, ssl_st* ssl = nullptr,
                    bool counted = false);
  // bind ... ssl: the handshake first (TlsHandshake), the session once it is done. Out of line.
  [[gnu::noinline]] void start_tls_handshake(Listener& l, int fd, const net::SocketAddress& peer,
                                             ConnSlots&& slots,
                                             std::shared_ptr<const net::pp::Header> pp);
  void register_listeners();
  // Stops watching a listener that hit a limit; false if it was already paused.
  bool unwatch(ListenerWatch& watch);
  void pause(ListenerWatch& watch);
  void pause_until_next_second(ListenerWatch& watch);
  // Stops watching a listener until `at_ms` (or until a slot frees, whichever comes first).
  void pause_until(ListenerWatch& watch, uint64_t at_ms);
  // accept() ran out of descriptors or memory: emergency log, short pause.
  void accept_resource_error(ListenerWatch& watch, int err);
  void on_timer(core::Timer& t) override;
  void resume_paused();
  // Registers or unregisters each listener as the global pause, the soft stop, its frontend's
  // state and its connection limits say. Worker-local.
  void refresh_watches();
  // Watches again the CLI sockets an accept() error left unwatched (below their maxconn).
  void resume_specials();
  void close_listeners();
  void maybe_finish_soft_stop();
  bool limits_have_room(const Listener& l) const;
  // `tcp-request connection` rules on a connection just accepted; on a reject, closes it with
  // a reset, counts it and gives its slots back. Worker-local.
  // `*expect_proxy`: an `expect-proxy layer4` rule matched.
  bool connection_allowed(Listener& l, int fd, net::SocketAddress& peer, bool* expect_proxy);

  Process& process_;
  int id_;
  core::EventLoop loop_;
  core::BufferPool buffers_;
  std::vector<std::unique_ptr<HttpCodecs>> spare_codecs_;
  LogWriter logs_;
  std::vector<stats::TrafficCounters> fe_, be_, srv_;
  Activity activity_;
  std::vector<std::unique_ptr<ListenerWatch>> watches_;
  std::vector<std::unique_ptr<SpecialWatch>> special_watches_;
  std::vector<Session*> sessions_;   // unordered; a session knows its slot
  std::vector<Session*> flush_;      // sessions with held-back sends (null: closed since)
  bool batch_sends_ = true;          // false while flush_sends() runs
  std::atomic<uint64_t> sessions_count_{0};
  std::unordered_set<SpecialConn*> specials_open_;
  int paused_ = 0;
  bool soft_stopping_ = false;
  bool listeners_paused_ = false;   // SIGTTOU: not watching any listener until SIGTTIN
  std::atomic<bool> resume_requested_{false};
  std::atomic<bool> dequeue_requested_{false};
  std::deque<Session*> waiting_;   // queued sessions, oldest first
  core::BoundedQueue<Handoff> accq_{1024};
  core::Timer rate_timer_{this};   // resumes listeners paused by maxconnrate or accept errors
  core::Timer special_timer_{this};   // resumes CLI sockets paused by accept errors
  core::Timer purge_timer_{this};  // closes idle server connections after pool-purge-delay
  core::Timer trim_timer_{this};   // gives the buffers a burst left idle back to the kernel
  std::vector<std::vector<ServerConn*>> idle_;   // per global server, oldest first
  std::size_t idle_count_ = 0;
  std::unique_ptr<net::tls::SessionSlot[]> tls_sessions_;   // per global server, made at first use
  TlsRates tls_rates_;
  std::vector<stats::ErrorSnapshot> errors_;   // index: proxy * 2 + response; wall_us 0: none
  void purge_idle();
  void trim_buffers();
  void sample_cpu();
  std::atomic<uint8_t> cpu_usage_{0};
  uint64_t cpu_sample_ns_ = 0, wall_sample_ns_ = 0;   // the last sample (thread CPU, monotonic)
  std::thread thread_;
};

}  // namespace sluice::proxy

#pragma once
// The running process: proxies, listeners, global limits and the worker threads.
// Built on the main thread (all sockets bound before any worker starts); afterwards shared
// read-mostly by the workers. Mutable shared state is limited to the atomics below.
#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "lb/backend.h"
#include "proxy/settings.h"

namespace sluice::proxy {

class Worker;

// A connection counter with a ceiling, shared by every thread. A slot is taken *before*
// accept() so that sluice never accepts a connection it would have to drop.
class ConnLimit {
 public:
  explicit ConnLimit(int limit = 0) : limit_(limit) {}
  void set_limit(int limit) { limit_.store(limit, std::memory_order_relaxed); }
  int limit() const { return limit_.load(std::memory_order_relaxed); }
  // Any thread.
  bool try_acquire() {
    int cur = count_.fetch_add(1, std::memory_order_seq_cst) + 1;
    int lim = limit();
    if (lim > 0 && cur > lim) {
      count_.fetch_sub(1, std::memory_order_seq_cst);
      return false;
    }
    return true;
  }
  void release() { count_.fetch_sub(1, std::memory_order_seq_cst); }
  int current() const { return count_.load(std::memory_order_seq_cst); }
  bool has_room() const {
    int lim = limit();
    return lim <= 0 || current() < lim;
  }

 private:
  std::atomic<int> limit_;
  std::atomic<int> count_{0};
};

// Accepts per second for the whole process (`maxconnrate`): one shared window, one atomic
// increment per accepted connection. Any thread.
class AcceptRate {
 public:
  explicit AcceptRate(int limit) : limit_(limit) {}
  int limit() const { return limit_; }
  // Takes one accept from the current second's budget; false when it is spent.
  bool try_take(uint64_t now_ms) {
    if (limit_ <= 0) return true;
    uint64_t sec = now_ms / 1000;
    uint64_t w = window_.load(std::memory_order_relaxed);
    if (w != sec && window_.compare_exchange_strong(w, sec, std::memory_order_relaxed))
      count_.store(0, std::memory_order_relaxed);
    return count_.fetch_add(1, std::memory_order_relaxed) < limit_;
  }
  // Gives back an accept taken for a connection that was not there after all (EAGAIN).
  void give_back() {
    if (limit_ > 0) count_.fetch_sub(1, std::memory_order_relaxed);
  }

 private:
  int limit_;
  std::atomic<uint64_t> window_{0};
  std::atomic<int> count_{0};
};

struct Proxy;

// One bind line: its listeners share the line's maxconn.
struct BindLine {
  BindSettings settings;
  ConnLimit limit;
  explicit BindLine(BindSettings s) : settings(std::move(s)), limit(settings.maxconn) {}
};

// One listening socket: one shard of one address of a bind line. Its states, process-wide
// (the socket) and per worker (the watch), and the function behind each edge:
//
//   bind_all() --> OPEN (watched by the threads of its shard, EPOLLEXCLUSIVE)
//   OPEN, one thread --a limit reached in Worker::accept_batch(): pause() (global, frontend
//     or bind-line slots), pause_until_next_second() (maxconnrate), pause_until() (accept
//     resource error)--> unwatched on that thread (paused) --a slot freed: slot_freed() ->
//     Worker::request_resume() -> resume_paused(); or rate_timer_ in Worker::on_timer()--> OPEN
//   OPEN --pause_listeners() (SIGTTOU): net::pause_listening() (shutdown(SHUT_RD); a UNIX
//     listener is only unwatched), Worker::request_listeners_paused(true)--> PAUSED
//   PAUSED --resume_listeners() (SIGTTIN): relisten() (listen() again) unless its frontend is
//     disabled, Worker::request_listeners_paused(false)--> OPEN
//   OPEN --pause_frontend() (`disable frontend`)--> frontend PAUSED --resume_frontend()--> OPEN
//   OPEN, PAUSED --soft_stop() -> Worker::request_soft_stop(): the last thread of the shard
//     drains the backlog (accept_batch(draining)), then net::stop_listening(); or
//     stop_frontend() (`shutdown frontend`)--> STOPPED (refuses connections for good; the
//     fd is closed when the process object goes away). Terminal.
struct Listener {
  int fd = -1;
  Proxy* proxy = nullptr;
  BindLine* line = nullptr;
  net::ListenAddress addr;
  int id = 0;                               // 1-based within the proxy
  uint16_t port = 0;                        // local port, for mapped server ports
  int shard = 0;                            // index among the shards of its address
  int shard_count = 1;
  bool fell_back = false;                   // wanted several shards, got this one socket
  bool taken_over = false;                  // -x: the old process's socket (set_inherited_fds)
  bool steered = false;                     // a CPU steering program picks the shard
  uint64_t inode = 0;                       // kernel socket identity (st_ino of the fd)
  std::vector<int> threads;                 // global thread ids (1-based) serving it
  std::vector<int> groups;                  // their groups, ascending
  std::vector<int> position;                // per thread (global id - 1): index in threads, -1
  // Open connections of this listener per thread (index = position in `threads`), hand-offs
  // still queued for that thread included: the load estimate of multi-queue accept. A slot is
  // incremented by the accepting thread (for a hand-off, before the push, so the connection is
  // never missing from the load) and decremented by the thread that ran the session when it
  // ends; the push happens before the pop, so a slot never goes below zero.
  std::unique_ptr<std::atomic<int>[]> given;
  std::atomic<uint64_t> fair_cursor{0};
  std::atomic<uint64_t> cum_conns{0};       // written with fetch_add by accepting threads
  // Soft stop: threads of the shard that have not drained the backlog yet; the last one
  // shuts the socket down right after its own drain.
  std::atomic<int> soft_stop_left{0};
};

struct Proxy {
  ProxySettings settings;
  int index = 0;
  ConnLimit feconn;                          // frontend maxconn
  std::vector<std::unique_ptr<BindLine>> bind_lines;
  std::unique_ptr<lb::Backend> backend;      // when settings.backend
  Proxy* target = nullptr;                   // backend serving this frontend, or null
  // Frontends: a request's body is read before its rules run (`option http-buffer-request`
  // here, or on a backend its rules may pick: they are not known before the rules).
  bool buffer_bodies = false;
  // Frontends: `http-request wait-for-body` here or in a backend its rules may pick (the first
  // such rule's limits): the body is awaited before the rules until it is whole, the buffer
  // is full or `body_wait_at_least` bytes came; `body_wait_ms` passing first is a 408, as in
  // HAProxy 3.5.
  uint32_t body_wait_ms = 0;
  uint64_t body_wait_at_least = 0;
  // `http-response wait-for-body` among its response rules: the response rules see the body
  // buffered with the head, and may wait for more of it (H1Connection::wait_response_body()).
  bool response_waits = false;
  int server_base = 0;                       // first global server index of this backend
  std::atomic<uint64_t> log_count{0};       // traffic lines this frontend logged (%lc)
  std::atomic<int> be_conns{0};              // current sessions on the backend side
  // Sessions waiting for a server slot (every usable server at its maxconn), process-wide,
  // and the highest that count has been (qcur / qmax of the BACKEND row).
  std::atomic<int> queued{0};
  std::atomic<int> queued_max{0};
  // `disable frontend` / `shutdown frontend` (CLI): whether its listeners accept.
  static constexpr int kFeOpen = 0, kFePaused = 1, kFeStopped = 2;
  std::atomic<int> fe_state{kFeOpen};
  bool fe_open() const { return fe_state.load(std::memory_order_acquire) == kFeOpen; }
};

class Process {
 public:
  explicit Process(ProcessSettings settings);
  ~Process();

  // Main thread, before start(): adds a proxy (index order = configuration order).
  Proxy& add_proxy(ProxySettings settings);
  // Main thread: resolves targets and opens every listening socket. The first bind failure
  // is returned with the bind line's location in its message. A socket handed over by the
  // old process (`-x`, set_inherited_fds()) that listens on the same address is taken
  // instead of a new one, shard for shard, so that its accept queue lives on.
  base::Result<void> bind_all();
  // Main thread, before bind_all(): the listening sockets `-x` received (owned from here;
  // those bind_all() does not take are closed at its end).
  void set_inherited_fds(std::vector<int> fds) { inherited_ = std::move(fds); }
  // Master-worker reload: bind_all() keeps the inherited sockets it has no use for (instead
  // of closing them), for release_inherited() should the load fail, or close_inherited() once
  // the new worker serves.
  void keep_unused_inherited() { keep_unused_inherited_ = true; }
  std::vector<int> release_inherited() { return std::exchange(inherited_, {}); }
  const std::vector<int>& inherited_fds() const { return inherited_; }
  void close_inherited();
  // Any thread: a new process took our listeners (`_getsocks` on an `expose-fd listeners`
  // stats socket). A soft stop then leaves the sockets to it: no draining of their queues, no
  // shutdown(), which would reset the connections waiting in them for the new process.
  void mark_listeners_exported() { listeners_exported_.store(true, std::memory_order_release); }
  bool listeners_exported() const { return listeners_exported_.load(std::memory_order_acquire); }
  // Any thread: the descriptors of every frontend listener (the stats sockets are not).
  std::vector<int> listener_fds() const {
    std::vector<int> fds;
    for (const auto& l : listeners_) fds.push_back(l->fd);
    return fds;
  }
  // Main thread, before start(): closes what bind_all() opened, so that it can run again (a
  // reload waiting for the old process to release its ports).
  void unbind_all();
  // bind_all(): an inherited socket listening on `a` (its descriptor, -1 when none).
  int take_inherited(const net::ListenAddress& a, int backlog);
  // Main thread: starts the workers.
  void start();
  // Any thread: stop now (SIGINT/SIGTERM) / soft stop (SIGUSR1).
  void stop_now();
  void soft_stop();
  // Main thread: SIGTTOU / SIGTTIN, as in HAProxy. Pausing makes the kernel refuse new
  // connections on every TCP listener (shutdown(SHUT_RD); a UNIX listener keeps queueing in
  // its backlog) and the workers stop watching them; resuming listens again and watches again.
  // Established connections and the CLI are not affected. Ignored once stopping.
  void pause_listeners();
  void resume_listeners();
  // `disable frontend` (its TCP listeners refuse connections, workers stop watching them),
  // `enable frontend` (listening again), `shutdown frontend` (for good, as a soft stop does for
  // every listener). kAlready: it was in that state; kWasStopped: it was shut down before.
  // Any thread (the CLI's).
  enum class FrontendChange { kOk, kAlready, kWasStopped };
  FrontendChange pause_frontend(Proxy& px);
  FrontendChange resume_frontend(Proxy& px);
  FrontendChange stop_frontend(Proxy& px);
  // Main thread: waits until every worker has exited. Returns false if `timeout_ms` elapsed
  // first (0 = wait forever).
  bool wait_workers(uint64_t timeout_ms);
  void join();

  const ProcessSettings& settings() const { return settings_; }
  int nbthread() const { return settings_.nbthread > 0 ? settings_.nbthread : 1; }
  // Group (1-based) of a global thread id (1-based).
  int group_of(int thread) const;
  // Warnings from binding that do not stop the start (e.g. CPU steering not attached).
  const std::vector<std::string>& bind_warnings() const { return steering_warnings_; }
  std::vector<std::unique_ptr<Proxy>>& proxies() { return proxies_; }
  const std::vector<std::unique_ptr<Proxy>>& proxies() const { return proxies_; }
  // The backend (or, with `frontend`, the frontend) called `name`, or null: a binary search
  // over the names, sorted as the proxies are added (`use_backend %[...]`, nbsrv(<b>), ...).
  // Any thread once the proxies are added.
  Proxy* proxy_named(std::string_view name, bool frontend) const;
  std::vector<std::unique_ptr<Listener>>& listeners() { return listeners_; }
  const std::vector<std::unique_ptr<Listener>>& listeners() const { return listeners_; }
  const std::vector<std::unique_ptr<Worker>>& workers() const { return workers_; }
  int total_servers() const { return total_servers_; }
  // What changes servers at run time (the CLI's, and the stats page's admin actions): set by
  // the main thread before start(); null in processes without one (tests). Any thread after.
  void set_server_control(stats::ServerControl* c) { server_control_ = c; }
  stats::ServerControl* server_control() const { return server_control_; }
  // The proxies whose stats page has `stats admin` (a POST to it waits for its body first).
  const std::vector<const Proxy*>& stats_admin_proxies() const { return stats_admin_; }
  lb::Server* server_by_global_index(int i) const { return servers_[static_cast<std::size_t>(i)]; }
  // Idle connections to a server parked in the workers' pools, all threads together
  // (pool-max-conn). Any thread.
  std::atomic<int>& idle_pooled(int i) { return idle_pooled_[static_cast<std::size_t>(i)]; }

  AcceptRate& accept_rate() { return accept_rate_; }
  // `maxsslrate`: the TLS listeners' accepts per second. Any thread.
  AcceptRate& ssl_rate() { return ssl_rate_; }
  // `maxsslconn`: room for one more TLS connection (both sides count, as in HAProxy).
  bool ssl_conn_room() const;
  // The process-wide stream number (%rt, the id in unique-id-format), from 0.
  uint64_t next_stream_id() { return stream_ids_.fetch_add(1, std::memory_order_relaxed); }
  ConnLimit& actconn() { return actconn_; }
  const ConnLimit& actconn() const { return actconn_; }
  std::atomic<uint64_t>& cum_conns() { return cum_conns_; }
  const std::atomic<uint64_t>& cum_conns() const { return cum_conns_; }
  std::atomic<uint64_t>& maxconn_reached() { return maxconn_reached_; }
  uint64_t maxconn_reached_count() const { return maxconn_reached_.load(std::memory_order_relaxed); }
  bool stopping() const { return stopping_.load(std::memory_order_acquire); }
  // Main thread: a soft stop was asked for (SIGUSR1) but `grace` delays it; the listeners
  // still accept. `show info` reports the process as stopping from then on, as HAProxy does.
  void announce_stop() { stop_announced_.store(true, std::memory_order_release); }
  bool stop_announced() const { return stop_announced_.load(std::memory_order_acquire); }
  uint64_t start_wall_s() const { return start_wall_s_; }
  uint64_t start_mono_ms() const { return start_mono_ms_; }

  // Special listeners (stats sockets) are served by the first worker only and never sharded.
  // `on_accept` runs on that worker with the accepted descriptor.
  struct SpecialListener {
    int fd;
    int maxconn;
    std::function<void(Worker&, SpecialListener&, int fd)> on_accept;
    std::atomic<int> conns{0};
    // The master's channel (master-worker mode): not a listening socket but one end of a
    // socketpair on which the master sends the connections it forwards (net::send_mark()
    // with mark 'C'). It is left open at a soft stop, so that a draining worker can still be
    // asked how it drains.
    bool channel = false;
  };
  using SpecialAccept = std::function<void(Worker&, SpecialListener&, int fd)>;
  void add_special_listener(int fd, int maxconn, SpecialAccept on_accept, bool channel = false);
  std::vector<std::unique_ptr<SpecialListener>>& special_listeners() { return specials_; }
  const std::vector<std::unique_ptr<SpecialListener>>& special_listeners() const {
    return specials_;
  }

  // Listener pausing at maxconn (see accept.cc): a closing session calls this after freeing
  // its slots; it wakes the workers that paused a listener. Any thread.
  void slot_freed();
  // A server slot of backend `be` was released: if sessions wait in its queue, the workers
  // holding them try again. Any thread.
  void server_slot_freed(Proxy& be);
  std::atomic<int>& paused_listeners() { return paused_listeners_; }

  // Called by a worker when it has finished (soft stop drained). Any thread.
  void worker_exited();
  // Workers whose loop has not ended yet. Any thread.
  int running_workers() const { return running_workers_.load(); }

  // `show errors`: invalid HTTP messages captured since start-up; next_error_event() numbers a
  // new one (from 0). Any thread; error path only.
  uint64_t next_error_event() { return error_events_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t error_events() const { return error_events_.load(std::memory_order_relaxed); }

 private:
  // Proxies with the backend (by_name_[0]) or frontend (by_name_[1]) capability, by name.
  std::vector<Proxy*> by_name_[2];
  // listen() again on a listener shut down by a pause (not a unix one). Any thread.
  void relisten(Listener& l);
  std::atomic<uint64_t> error_events_{0};
  void set_threads(Listener& l, const std::vector<int>& threads);

  ProcessSettings settings_;
  std::vector<std::string> steering_warnings_;
  std::vector<std::unique_ptr<Proxy>> proxies_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::vector<std::unique_ptr<SpecialListener>> specials_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<lb::Server*> servers_;
  std::deque<std::atomic<int>> idle_pooled_;   // per global server index
  int total_servers_ = 0;
  stats::ServerControl* server_control_ = nullptr;
  std::vector<const Proxy*> stats_admin_;
  std::atomic<uint64_t> stream_ids_{0};
  ConnLimit actconn_;
  AcceptRate accept_rate_;
  AcceptRate ssl_rate_;
  std::atomic<uint64_t> cum_conns_{0};
  std::atomic<uint64_t> maxconn_reached_{0};
  std::atomic<int> paused_listeners_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> stop_announced_{false};
  std::atomic<bool> listeners_paused_{false};   // SIGTTOU received, no SIGTTIN yet
  std::vector<int> inherited_;                  // -x: sockets not taken yet
  bool keep_unused_inherited_ = false;
  std::atomic<bool> listeners_exported_{false};
  std::atomic<int> running_workers_{0};
  uint64_t start_wall_s_ = 0;
  uint64_t start_mono_ms_ = 0;
};

}  // namespace sluice::proxy

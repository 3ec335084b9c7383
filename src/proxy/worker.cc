#include "proxy/worker.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>

#include "base/assert.h"
#include "net/socket.h"
#include "net/transport.h"
#include "core/thread_plan.h"
#include "proxy/h1_connection.h"
#include "proxy/tcp_session.h"

namespace sluice::proxy {

Worker::Worker(Process& process, int id, base::ClockSource clock)
    : process_(process),
      id_(id),
      loop_(clock),
      buffers_(process.settings().bufsize),
      logs_(process.settings().log_tag, process.settings().node),
      fe_(process.proxies().size()),
      be_(process.proxies().size()),
      srv_(static_cast<std::size_t>(process.total_servers())) {
  logs_.uri_limit = static_cast<std::size_t>(std::max(0, process.settings().http_logurilen));
}

Worker::~Worker() {
  if (thread_.joinable()) thread_.join();
}

void Worker::start() {
  thread_ = std::thread([this] { thread_main(); });
}

void Worker::join() {
  if (thread_.joinable()) thread_.join();
}

void Worker::prepare_loop() {
  register_listeners();
  loop_.set_pending_work([this] { return accq_.size_estimate() > 0 || !flush_.empty(); },
                         [this] {
                           flush_sends();
                           drain_handoffs();
                         });
}

void Worker::thread_main() {
  pin_to_cpus();
  prepare_loop();
  loop_.run();
  // Hard stop: close whatever is still open, including connections handed to us that we
  // never started (their slots are released like any other session's).
  drain_handoffs();
  while (!sessions_.empty()) sessions_.back()->abort("stop");
  for (auto& list : idle_) {
    while (!list.empty()) close_server_conn(list.back());
  }
  close_listeners();
  for (SpecialConn* d : specials_open_) delete d;
  specials_open_.clear();
  loop_.free_deferred_now();
  process_.worker_exited();
}

void Worker::pin_to_cpus() {
  const auto& all = process_.settings().thread_cpus;
  // A refusal (a CPU outside the cgroup's set) leaves the thread unpinned; the plan was made
  // from the CPUs the process may use.
  if (static_cast<std::size_t>(id_) < all.size())
    core::bind_current_thread(all[static_cast<std::size_t>(id_)]);
}

void Worker::register_listeners() {
  // Exclusive watches (net::watch_listener): when a connection arrives on a socket that several
  // threads watch, the kernel wakes one of them (the first registered waiter that is idle), not all: no
  // thundering herd. It is level-triggered, so a backlog that one batch did not drain wakes
  // a thread again.
  // Each thread watches only the sockets of the shards it belongs to.
  for (auto& l : process_.listeners()) {
    if (l->position[static_cast<std::size_t>(id_)] < 0) continue;
    auto w = std::make_unique<ListenerWatch>(*this, *l);
    if (net::watch_listener(loop_, l->fd, w.get(), true)) w->registered = true;
    watches_.push_back(std::move(w));
  }
  if (id_ == 0) {
    for (auto& sl : process_.special_listeners()) {
      auto w = std::make_unique<SpecialWatch>(*this, *sl);
      if (net::watch_listener(loop_, sl->fd, w.get(), false)) w->registered = true;
      special_watches_.push_back(std::move(w));
    }
  }
}

void Worker::request_stop() {
  loop_.post([this] { loop_.stop(); });
}

void Worker::request_soft_stop() {
  loop_.post([this] {
    // Before the listeners close, take the connections already in their backlogs: shutting a
    // socket down resets them, and after a reload (-sf) they are clients the new process will
    // never see. A listener stays open until the last thread of its shard gets here; that
    // thread drains once more and shuts it down at once, which leaves only connections
    // arriving in between to the reset. Hand-offs are off (the process is stopping), so what
    // is accepted here runs here, and learns of the stop below with every other session.
    // A new process that took the sockets (-x, or the master's next worker) serves their
    // queues: they are left to it as they are (a shutdown would reset what waits for it), and
    // this process drops its reference once no thread of it watches them any more. A socket
    // the new plan dropped then leaves its reuseport group now, its queue migrated, instead of
    // taking connections that nobody accepts until this process ends.
    if (process_.listeners_exported()) {
      close_listeners();   // this thread's registrations first: an fd replaced under a
                           // registered watch would leave it in the epoll set
      for (auto& w : watches_) {
        Listener& l = w->listener();
        if (l.soft_stop_left.fetch_sub(1, std::memory_order_acq_rel) == 1) net::release_listener(l.fd);
      }
    } else {
      for (auto& w : watches_) {
        Listener& l = w->listener();
        bool last = l.soft_stop_left.fetch_sub(1, std::memory_order_acq_rel) == 1;
        if (w->registered || w->paused) accept_batch(*w, -1, /*draining=*/true);
        if (last) net::stop_listening(l.fd);
      }
      close_listeners();
    }
    soft_stopping_ = true;
    // on_soft_stop() may close the session (swap-remove from sessions_): walk a copy.
    std::vector<Session*> all(sessions_.begin(), sessions_.end());
    for (Session* s : all) s->on_soft_stop();
    for (auto& list : idle_) {
      while (!list.empty()) close_server_conn(list.back());
    }
    maybe_finish_soft_stop();
  });
}

void Worker::request_listeners_paused(bool paused) {
  loop_.post([this, paused] {
    if (soft_stopping_) return;
    listeners_paused_ = paused;
    refresh_watches();
  });
}

void Worker::request_refresh_watches() {
  loop_.post([this] {
    if (!soft_stopping_) refresh_watches();
  });
}

void Worker::refresh_watches() {
  for (auto& w : watches_) {
    bool fe_open = w->listener().proxy->fe_open();
    if (!fe_open && w->paused) {
      // Paused by a connection limit, now closed by its frontend's state: the limit no longer
      // matters; enabling the frontend re-checks it at the next accept.
      w->paused = false;
      --paused_;
      process_.paused_listeners().fetch_sub(1, std::memory_order_seq_cst);
    }
    bool want = !listeners_paused_ && fe_open && !w->paused;
    if (want && !w->registered) {
      if (net::watch_listener(loop_, w->listener().fd, w.get(), true)) w->registered = true;
    } else if (!want && w->registered) {
      loop_.remove(w->listener().fd);
      w->registered = false;
    }
  }
  // Those paused by a connection limit come back through resume_paused().
  if (!listeners_paused_) resume_paused();
}

void Worker::request_resume() {
  if (resume_requested_.exchange(true, std::memory_order_acq_rel)) return;
  loop_.post([this] {
    resume_requested_.store(false, std::memory_order_release);
    resume_paused();
  });
}

void Worker::request_dequeue() {
  if (dequeue_requested_.exchange(true, std::memory_order_acq_rel)) return;
  loop_.post([this] {
    dequeue_requested_.store(false, std::memory_order_release);
    // Oldest first; a session that still finds no slot stays in place. Snapshot the list:
    // a dequeued session leaves it, and may close at once.
    std::vector<Session*> batch(waiting_.begin(), waiting_.end());
    for (Session* s : batch)
      if (!s->retry_from_queue()) break;
  });
}

void Worker::queue_session(Session* s) { waiting_.push_back(s); }

void Worker::unqueue_session(Session* s) {
  auto it = std::find(waiting_.begin(), waiting_.end(), s);
  if (it != waiting_.end()) waiting_.erase(it);
}

// Idle server connections live the server's `pool-purge-delay` (HAProxy's default, 5 s) after
// their last use; `pool-max-conn` bounds them per server over all threads, `max-reuse` the
// requests one carries.
namespace {
// Most idle connections kept per server and thread.
constexpr std::size_t kPoolMaxPerServer = 256;
}  // namespace

void ServerConn::on_io(uint32_t events) {
  if (!io.open()) return;
  if (owner) {
    owner->on_server_io(events);
    return;
  }
  // Idle: the server closed it, or sent bytes nobody asked for. Either way it is unusable. Room
  // to write alone (the send buffer drained after a large request or response) says nothing
  // about it: edge-triggered, that event comes after the connection was parked.
  const net::Readiness r = net::decode_readiness(events);
  if (!r.readable()) return;
  if (r.peer_closed()) reset_on_close = false;
  w->close_server_conn(this);
}

net::tls::SessionSlot* Worker::tls_session(int srv_global) {
  if (!tls_sessions_)
    tls_sessions_ = std::make_unique<net::tls::SessionSlot[]>(
        static_cast<std::size_t>(process_.total_servers()));
  return &tls_sessions_[static_cast<std::size_t>(srv_global)];
}

ServerConn* Worker::take_idle(int srv_global, bool safe_only, uint16_t dst_port,
                              std::string_view sni) {
  if (idle_.empty()) return nullptr;
  auto& list = idle_[static_cast<std::size_t>(srv_global)];
  for (auto it = list.rbegin(); it != list.rend(); ++it) {
    ServerConn* c = *it;
    if (safe_only && c->requests < 2) continue;
    if (c->dst_port != dst_port || c->sni != sni) [[unlikely]] continue;
    list.erase(std::next(it).base());
    --idle_count_;
    uncount_pooled(c);
    c->pooled = false;
    return c;
  }
  return nullptr;
}

void Worker::park_idle(ServerConn* c) {
  if (idle_.empty()) idle_.resize(static_cast<std::size_t>(process_.total_servers()));
  auto& list = idle_[static_cast<std::size_t>(c->srv_global)];
  c->owner = nullptr;
  c->idle_since_ms = loop_.now_ms();
  const lb::ServerSettings& ss = process_.server_by_global_index(c->srv_global)->settings();
  // max-reuse N: a connection that carried N + 1 requests was reused N times: it closes.
  const bool worn = ss.max_reuse >= 0 && c->requests > static_cast<uint32_t>(ss.max_reuse);
  if (soft_stopping_ || worn || ss.pool_max_conn == 0 || ss.pool_purge_delay_ms == 0) {
    close_server_conn(c);
    return;
  }
  // The process-wide count (a cache line all threads write) is kept only for the servers
  // that have a pool-max-conn to compare it with.
  std::atomic<int>* pooled = ss.pool_max_conn > 0 ? &process_.idle_pooled(c->srv_global) : nullptr;
  // Full: the oldest idle connection makes room (the newest is the likeliest to stay usable).
  // pool-max-conn counts every thread's: this thread's oldest makes room, and without one of
  // its own this connection closes.
  if (list.size() >= kPoolMaxPerServer) {
    close_server_conn(list.front());
  } else if (pooled && pooled->load(std::memory_order_relaxed) >= ss.pool_max_conn) {
    if (list.empty()) {
      close_server_conn(c);
      return;
    }
    close_server_conn(list.front());
  }
  list.push_back(c);
  c->pooled = true;
  ++idle_count_;
  if (pooled) {
    pooled->fetch_add(1, std::memory_order_relaxed);
    c->pool_counted = true;
  }
  loop_.timers().arm_lazy(purge_timer_, c->idle_since_ms + ss.pool_purge_delay_ms);
}

void Worker::uncount_pooled(ServerConn* c) {
  if (!c->pool_counted) return;
  process_.idle_pooled(c->srv_global).fetch_sub(1, std::memory_order_relaxed);
  c->pool_counted = false;
}

void Worker::close_server_conn(ServerConn* c) {
  if (!c->io.open()) return;
  if (c->pooled) {
    // Usually the oldest (purge, overflow): the search stops at once.
    auto& list = idle_[static_cast<std::size_t>(c->srv_global)];
    auto it = std::find(list.begin(), list.end(), c);
    if (it != list.end()) {
      list.erase(it);
      --idle_count_;
      uncount_pooled(c);
    }
    c->pooled = false;
  }
  // Closing also leaves the event loop.
  c->io.close(c->reset_on_close || c->nolinger ? net::CloseMode::kReset : net::CloseMode::kFin);
  loop_.defer_free(c);
}

void Worker::purge_idle() {
  uint64_t now = loop_.now_ms();
  uint64_t next = 0;
  for (std::size_t i = 0; i < idle_.size(); ++i) {
    auto& list = idle_[i];
    if (list.empty()) continue;
    const uint64_t delay = process_.server_by_global_index(static_cast<int>(i))->settings().pool_purge_delay_ms;
    // Oldest first: stop at the first one still young enough.
    while (!list.empty() && list.front()->idle_since_ms + delay <= now)
      close_server_conn(list.front());
    if (!list.empty()) {
      uint64_t due = list.front()->idle_since_ms + delay;
      if (next == 0 || due < next) next = due;
    }
  }
  if (next) loop_.timers().arm(purge_timer_, next);
}

void Worker::close_listeners() {
  for (auto& w : watches_) {
    if (w->registered) loop_.remove(w->listener().fd);
    if (w->paused) process_.paused_listeners().fetch_sub(1, std::memory_order_seq_cst);
    w->registered = false;
    w->paused = false;
  }
  paused_ = 0;
  // The stats sockets refuse new connections from the soft stop on, as HAProxy's do: after a
  // reload, a new CLI client must reach the new process, never the old one. The CLI
  // connections already open stay served until the process ends (the drain can be watched
  // from one). shutdown() works on a UNIX listener too (connect() is refused, the path is left
  // to the new process); the descriptors are closed with the process.
  for (auto& w : special_watches_) {
    Process::SpecialListener& l = w->listener();
    if (l.channel) continue;
    if (w->registered) loop_.remove(l.fd);
    w->registered = false;
    net::stop_listening(l.fd);
  }
}

void Worker::maybe_finish_soft_stop() {
  if (!soft_stopping_ || !sessions_.empty() || accq_.size_estimate() != 0) return;
  // The worker that serves the stats sockets stays until every other worker has drained, so
  // that the drain can be watched (`show info`, `show sess`) to its end; the last of the
  // others to exit asks it to check again (Process::worker_exited()).
  if (!special_watches_.empty() && process_.running_workers() > 1) return;
  loop_.stop();
}

void Worker::request_finish_check() {
  loop_.post([this] { maybe_finish_soft_stop(); });
}

// The buffer pool is trimmed once a second while this worker has sessions (or cached buffers
// beyond the pool's floor): buffers unused for a whole second go back to the kernel.
namespace {
constexpr uint64_t kBufferTrimPeriodMs = 1000;
}  // namespace

void Worker::sample_cpu() {
  timespec cpu{}, wall{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) != 0 || clock_gettime(CLOCK_MONOTONIC, &wall) != 0)
    return;
  const auto ns = [](const timespec& t) {
    return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(t.tv_nsec);
  };
  const uint64_t c = ns(cpu), w = ns(wall);
  if (wall_sample_ns_ && w > wall_sample_ns_) {
    const uint64_t pct = (c - cpu_sample_ns_) * 100 / (w - wall_sample_ns_);
    cpu_usage_.store(static_cast<uint8_t>(std::min<uint64_t>(pct, 100)), std::memory_order_relaxed);
  }
  cpu_sample_ns_ = c;
  wall_sample_ns_ = w;
}

void Worker::trim_buffers() {
  sample_cpu();
  buffers_.trim();
  if (!sessions_.empty() || buffers_.cached() > buffers_.trim_floor())
    loop_.timers().arm(trim_timer_, loop_.now_ms() + kBufferTrimPeriodMs);
}

void Worker::session_opened(Session* s) {
  // Only sessions take buffers: an idle worker with nothing cached sleeps without this timer.
  if (!trim_timer_.armed()) loop_.timers().arm(trim_timer_, loop_.now_ms() + kBufferTrimPeriodMs);
  s->slot = sessions_.size();
  sessions_.push_back(s);
  sessions_count_.store(sessions_.size(), std::memory_order_relaxed);
}

void Worker::shutdown_sessions_of(const lb::Server* srv) {
  // abort() removes the session from sessions_ (swap-remove), so pick the victims first.
  std::vector<Session*> victims;
  for (Session* s : sessions_)
    if (s->uses_server(srv)) victims.push_back(s);
  for (Session* s : victims) s->abort("shutdown-sessions");
}

void Worker::queue_flush(Session* s) {
  if (s->flush_queued) return;
  s->flush_queued = true;
  s->flush_slot = flush_.size();
  flush_.push_back(s);
}

void Worker::unqueue_flush(Session* s) {
  if (!s->flush_queued) return;
  s->flush_queued = false;
  flush_[s->flush_slot] = nullptr;
}

void Worker::flush_sends() {
  if (flush_.empty()) return;
  // A session flushed here may make another one send (a freed server slot dequeues a waiting
  // session): with batching off it sends at once instead of joining the list being walked.
  batch_sends_ = false;
  for (std::size_t i = 0; i < flush_.size(); ++i) {
    Session* s = flush_[i];
    if (!s) continue;
    s->flush_queued = false;
    s->flush_sends();
  }
  flush_.clear();
  batch_sends_ = true;
}

void Worker::session_closed(Session* s) {
  // Swap-remove: O(1), the moved session learns its new slot.
  std::size_t i = s->slot;
  SLUICE_ASSERT(i < sessions_.size() && sessions_[i] == s);
  sessions_[i] = sessions_.back();
  sessions_[i]->slot = i;
  sessions_.pop_back();
  sessions_count_.store(sessions_.size(), std::memory_order_relaxed);
  loop_.defer_free(s);
  s->slots.release();   // wakes the workers a limit paused (Process::slot_freed)
  maybe_finish_soft_stop();
}

void Worker::special_opened(SpecialConn* conn) { specials_open_.insert(conn); }

void Worker::special_closed(Process::SpecialListener& l, SpecialConn* conn) {
  specials_open_.erase(conn);
  loop_.defer_free(conn);
  int before = l.conns.fetch_sub(1, std::memory_order_relaxed);
  if (before >= l.maxconn && !soft_stopping_) {
    for (auto& w : special_watches_) {
      if (&w->listener() == &l && !w->registered) {
        if (net::watch_listener(loop_, l.fd, w.get(), false)) w->registered = true;
      }
    }
  }
}

}  // namespace sluice::proxy

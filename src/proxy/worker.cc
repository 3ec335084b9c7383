#include "proxy/worker.h"

#include <unistd.h>

#include <algorithm>

#include "base/assert.h"
#include "core/thread_plan.h"
#include "proxy/tcp_session.h"

namespace sluice::proxy {

Worker::Worker(Process& process, int id)
    : process_(process),
      id_(id),
      buffers_(process.settings().bufsize),
      logs_(process.settings().log_tag, process.settings().node),
      fe_(process.proxies().size()),
      be_(process.proxies().size()),
      srv_(static_cast<std::size_t>(process.total_servers())) {}

Worker::~Worker() {
  if (thread_.joinable()) thread_.join();
}

void Worker::start() {
  thread_ = std::thread([this] { thread_main(); });
}

void Worker::join() {
  if (thread_.joinable()) thread_.join();
}

void Worker::thread_main() {
  pin_to_cpus();
  register_listeners();
  loop_.set_pending_work([this] { return accq_.size_estimate() > 0; }, [this] { drain_handoffs(); });
  loop_.run();
  // Hard stop: close whatever is still open, including connections handed to us that we
  // never started (their slots are released like any other session's).
  drain_handoffs();
  while (!sessions_.empty()) sessions_.back()->abort("stop");
  close_listeners();
  for (core::Deferred* d : specials_open_) delete d;
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
  // EPOLLEXCLUSIVE: when a connection arrives on a socket that several threads watch, the
  // kernel wakes one of them (the first registered waiter that is idle), not all: no
  // thundering herd. It is level-triggered, so a backlog that one batch did not drain wakes
  // a thread again.
  // Each thread watches only the sockets of the shards it belongs to.
  for (auto& l : process_.listeners()) {
    if (l->position[static_cast<std::size_t>(id_)] < 0) continue;
    auto w = std::make_unique<ListenerWatch>(*this, *l);
    if (loop_.add(l->fd, EPOLLIN | EPOLLEXCLUSIVE, w.get())) w->registered = true;
    watches_.push_back(std::move(w));
  }
  if (id_ == 0) {
    for (auto& sl : process_.special_listeners()) {
      auto w = std::make_unique<SpecialWatch>(*this, *sl);
      if (loop_.add(sl->fd, EPOLLIN, w.get())) w->registered = true;
      special_watches_.push_back(std::move(w));
    }
  }
}

void Worker::request_stop() {
  loop_.post([this] { loop_.stop(); });
}

void Worker::request_soft_stop() {
  loop_.post([this] {
    soft_stopping_ = true;
    close_listeners();
    maybe_finish_soft_stop();
  });
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
    std::vector<TcpSession*> batch(waiting_.begin(), waiting_.end());
    for (TcpSession* s : batch)
      if (!s->retry_from_queue()) break;
  });
}

void Worker::queue_session(TcpSession* s) { waiting_.push_back(s); }

void Worker::unqueue_session(TcpSession* s) {
  auto it = std::find(waiting_.begin(), waiting_.end(), s);
  if (it != waiting_.end()) waiting_.erase(it);
}

void Worker::close_listeners() {
  for (auto& w : watches_) {
    if (w->registered) loop_.remove(w->listener().fd);
    if (w->paused) process_.paused_listeners().fetch_sub(1, std::memory_order_seq_cst);
    w->registered = false;
    w->paused = false;
  }
  paused_ = 0;
  // Special listeners (the CLI) stay open during a soft stop so that an operator can watch
  // the connections drain; they close with the process.
}

void Worker::maybe_finish_soft_stop() {
  if (soft_stopping_ && sessions_.empty() && accq_.size_estimate() == 0) loop_.stop();
}

void Worker::session_opened(TcpSession* s) {
  s->slot = sessions_.size();
  sessions_.push_back(s);
  sessions_count_.store(sessions_.size(), std::memory_order_relaxed);
}

void Worker::shutdown_sessions_of(const lb::Server* srv) {
  // abort() removes the session from sessions_ (swap-remove), so pick the victims first.
  std::vector<TcpSession*> victims;
  for (TcpSession* s : sessions_)
    if (s->server() == srv) victims.push_back(s);
  for (TcpSession* s : victims) s->abort("shutdown-sessions");
}

void Worker::session_closed(TcpSession* s) {
  // Swap-remove: O(1), the moved session learns its new slot.
  std::size_t i = s->slot;
  SLUICE_ASSERT(i < sessions_.size() && sessions_[i] == s);
  sessions_[i] = sessions_.back();
  sessions_[i]->slot = i;
  sessions_.pop_back();
  sessions_count_.store(sessions_.size(), std::memory_order_relaxed);
  loop_.defer_free(s);
  process_.slot_freed();
  maybe_finish_soft_stop();
}

void Worker::special_opened(core::Deferred* conn) { specials_open_.insert(conn); }

void Worker::special_closed(Process::SpecialListener& l, core::Deferred* conn) {
  specials_open_.erase(conn);
  loop_.defer_free(conn);
  int before = l.conns.fetch_sub(1, std::memory_order_relaxed);
  if (before >= l.maxconn && !soft_stopping_) {
    for (auto& w : special_watches_) {
      if (&w->listener() == &l && !w->registered) {
        if (loop_.add(l.fd, EPOLLIN, w.get())) w->registered = true;
      }
    }
  }
}

}  // namespace sluice::proxy

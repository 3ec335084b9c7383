// The accept path and listener pausing at connection limits.
//
// A connection slot (global maxconn, frontend maxconn, bind-line maxconn) is taken *before*
// accept(): when any limit is reached the worker stops watching the listening socket instead
// of accepting and dropping, so new connections wait in the kernel's backlog (up to the
// listen backlog; beyond it the kernel drops SYNs and clients retransmit). When a session
// ends anywhere, Process::slot_freed() wakes the workers that paused a listener.
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "proxy/tcp_session.h"
#include "proxy/worker.h"

namespace sluice::proxy {

void ListenerWatch::on_io(uint32_t) { w_.accept_from(*this); }
void SpecialWatch::on_io(uint32_t) { w_.accept_special(*this); }

bool Worker::limits_have_room(const Listener& l) const {
  return process_.actconn().has_room() && l.proxy->feconn.has_room() && l.line->limit.has_room();
}

void Worker::accept_from(ListenerWatch& watch) {
  if (!watch.registered || soft_stopping_) return;
  Listener& l = watch.listener();
  Proxy& fe = *l.proxy;
  int batch = process_.settings().maxaccept;
  for (int i = 0; batch < 0 || i < batch; ++i) {
    if (!process_.actconn().try_acquire()) {
      process_.maxconn_reached().fetch_add(1, std::memory_order_relaxed);
      pause(watch);
      return;
    }
    if (!fe.feconn.try_acquire()) {
      process_.actconn().release();
      pause(watch);
      return;
    }
    if (!l.line->limit.try_acquire()) {
      fe.feconn.release();
      process_.actconn().release();
      pause(watch);
      return;
    }
    net::SocketAddress peer;
    peer.len = sizeof peer.storage;
    int fd = accept4(l.fd, peer.sa(), &peer.len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      int err = errno;
      l.line->limit.release();
      fe.feconn.release();
      process_.actconn().release();
      if (err == EINTR || err == ECONNABORTED) continue;
      // EAGAIN: another thread took it or the backlog is empty. EMFILE/ENFILE/ENOMEM: out
      // of resources; the level-triggered registration retries on the next loop.
      if (err != EAGAIN && err != EWOULDBLOCK) fe_counters(fe.index).eint.add();
      return;
    }
    activity_.accepted.add();
    l.cum_conns.fetch_add(1, std::memory_order_relaxed);
    process_.cum_conns().fetch_add(1, std::memory_order_relaxed);
    auto& fc = fe_counters(fe.index);
    uint64_t now = loop_.now_ms();
    fc.conn_tot.add();
    fc.stot.add();
    fc.conn_rate.add(now);
    fc.sess_rate.add(now);
    fc.smax.raise_to(static_cast<uint64_t>(fe.feconn.current()));
    auto* s = new TcpSession(*this, l, fd, peer);
    session_opened(s);
    s->start();
  }
}

void Worker::pause(ListenerWatch& watch) {
  if (watch.paused) return;
  loop_.remove(watch.listener().fd);
  watch.registered = false;
  watch.paused = true;
  ++paused_;
  // Publish the pause before re-checking the limits; a closing session frees its slot
  // before checking for paused listeners. With both sides sequentially consistent, at least
  // one of them sees the other, so a slot freed right now cannot be missed.
  process_.paused_listeners().fetch_add(1, std::memory_order_seq_cst);
  if (limits_have_room(watch.listener())) resume_paused();
}

void Worker::resume_paused() {
  if (paused_ == 0 || soft_stopping_) return;
  for (auto& w : watches_) {
    if (!w->paused || !limits_have_room(w->listener())) continue;
    if (loop_.add(w->listener().fd, EPOLLIN | EPOLLEXCLUSIVE, w.get())) {
      w->registered = true;
      w->paused = false;
      --paused_;
      process_.paused_listeners().fetch_sub(1, std::memory_order_seq_cst);
    }
  }
}

void Worker::accept_special(SpecialWatch& watch) {
  if (!watch.registered) return;
  auto& l = watch.listener();
  for (int i = 0; i < 4; ++i) {
    if (l.conns.load(std::memory_order_relaxed) >= l.maxconn) {
      // `stats maxconn`: leave further CLI clients in the backlog until one leaves.
      loop_.remove(l.fd);
      watch.registered = false;
      return;
    }
    int fd = accept4(l.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    l.conns.fetch_add(1, std::memory_order_relaxed);
    l.on_accept(*this, l, fd);
  }
}

}  // namespace sluice::proxy

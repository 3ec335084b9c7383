// The accept path and listener pausing at connection limits.
//
// A connection slot (global maxconn, frontend maxconn, bind-line maxconn) is taken *before*
// accept(): when any limit is reached the worker stops watching the listening socket instead
// of accepting and dropping, so new connections wait in the kernel's backlog (up to the
// listen backlog; beyond it the kernel drops SYNs and clients retransmit). When a session
// ends anywhere, Process::slot_freed() wakes the workers that paused a listener. So does a
// slot taken here and given back unused (accept() found nothing, a later limit was reached):
// another thread may have paused its listener because of that very slot, and nothing else
// would resume it while no session ends.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "log/line.h"
#include "net/fd_passing.h"
#include "net/socket.h"
#include "net/transport.h"
#include "proxy/balance_key.h"
#include "proxy/h1_connection.h"
#include "proxy/tls_handshake.h"
#include "proxy/proxy_header.h"
#include "proxy/sample_env.h"
#include "proxy/server_pick.h"
#include "proxy/tcp_session.h"
#include "proxy/server_tls.h"
#include "proxy/worker.h"

namespace sluice::proxy {

void ListenerWatch::on_io(uint32_t) { w_.accept_from(*this); }
void SpecialWatch::on_io(uint32_t) { w_.accept_special(*this); }

namespace {
// How long a TLS listener stopped by `maxsslconn` waits before it looks again.
constexpr uint64_t kSslLimitRecheckMs = 10;
}  // namespace

bool Worker::limits_have_room(const Listener& l) const {
  return process_.actconn().has_room() && l.proxy->feconn.has_room() && l.line->limit.has_room();
}

void Worker::accept_from(ListenerWatch& watch) {
  if (!watch.registered || soft_stopping_) return;
  if (!watch.listener().proxy->fe_open()) {
    // Disabled or shut down from the CLI just now, before this worker's refresh: stop
    // watching here (a level-triggered listener would wake the loop again and again).
    loop_.remove(watch.listener().fd);
    watch.registered = false;
    return;
  }
  accept_batch(watch, process_.settings().maxaccept);
}

void Worker::accept_batch(ListenerWatch& watch, int batch, bool draining) {
  Listener& l = watch.listener();
  Proxy& fe = *l.proxy;
  for (int i = 0; batch < 0 || i < batch; ++i) {
    // Taken before accept(): at a limit the connection waits in the kernel's backlog. Every
    // way out of this iteration that does not hand the token on gives the slots back.
    ConnSlots::Refused refused;
    ConnSlots slots = ConnSlots::take(process_, l, &refused);
    if (!slots.held()) {
      if (refused == ConnSlots::Refused::kGlobal)
        process_.maxconn_reached().fetch_add(1, std::memory_order_relaxed);
      pause(watch);
      return;
    }
    // The rate counts the connection even while draining (give_back() below stays paired);
    // a drain is not refused by it: the alternative is a reset.
    if (!process_.accept_rate().try_take(loop_.now_ms()) && !draining) {
      // `maxconnrate` spent for this second: stop watching until the next second starts.
      slots.release();
      pause_until_next_second(watch);
      return;
    }
    // A TLS listener also waits for `maxsslconn` and `maxsslrate` (not while draining).
    const bool tls = l.line && l.line->settings.tls;
    if (tls && !draining) [[unlikely]] {
      if (!process_.ssl_conn_room()) {
        process_.accept_rate().give_back();
        slots.release();
        // No slot of ours frees when a TLS connection closes: look again shortly.
        pause_until(watch, loop_.now_ms() + kSslLimitRecheckMs);
        return;
      }
      if (!process_.ssl_rate().try_take(loop_.now_ms())) {
        process_.accept_rate().give_back();
        slots.release();
        pause_until_next_second(watch);
        return;
      }
    }
    net::SocketAddress peer;
    int err = 0;
    int fd = net::accept_connection(l.fd, &peer, &err);
    if (fd < 0) {
      process_.accept_rate().give_back();
      if (tls && !draining) process_.ssl_rate().give_back();
      slots.release();
      if (err == EINTR || err == ECONNABORTED) continue;
      // EAGAIN: another thread took it or the backlog is empty.
      // EINVAL: the socket was paused (SIGTTOU) before this thread stopped watching it.
      if (err != EAGAIN && err != EWOULDBLOCK && err != EINVAL) fe_counters(fe.index).eint.add();
      if (err == EMFILE || err == ENFILE || err == ENOMEM || err == ENOBUFS)
        accept_resource_error(watch, err);
      return;
    }
    activity_.accepted.add();
    l.cum_conns.fetch_add(1, std::memory_order_relaxed);
    process_.cum_conns().fetch_add(1, std::memory_order_relaxed);
    // Before the hand-off and before any session state: a rejected connection costs nothing
    // more (HAProxy evaluates these rules at the same point).
    bool expect_proxy = false;
    if (!fe.settings.tcp_connection_rules.empty() &&
        !connection_allowed(l, fd, peer, &expect_proxy))
      continue;
    // Multi-queue accept: the connection may run on a less loaded thread of the shard. Its
    // slots are process-wide (global, frontend, bind line); the listener's per-thread count
    // (`given`, released at close by the thread that ran the session) is charged to the
    // target here, before the hand-off, so that a connection waiting in a queue or being
    // popped from it is never missing from the load the next accept compares.
    Worker* target = pick_target(l);
    if (target != this) {
      auto& given = l.given[static_cast<std::size_t>(l.position[static_cast<std::size_t>(target->id())])];
      given.fetch_add(1, std::memory_order_relaxed);
      Handoff h{fd, &l, peer, std::move(slots), expect_proxy};
      if (target->push_handoff(h)) {
        activity_.accq_pushed.add();
        target->loop().wake_if_sleeping();
        continue;
      }
      slots = std::move(h.slots);   // a full queue leaves the hand-off with us
      given.fetch_sub(1, std::memory_order_relaxed);
      activity_.accq_full.add();
    }
    if (expect_proxy) [[unlikely]] {
      start_proxied_session(l, fd, peer, /*charged=*/false, std::move(slots));
      continue;
    }
    start_session(l, fd, peer, /*charged=*/false, std::move(slots));
  }
}

rules::RequestView tcp_rule_view(const Listener& l, int fd, const net::SocketAddress& peer,
                                 net::SocketAddress& local) {
  rules::RequestView v;
  v.avail = sample::kAtTcpConnection;
  v.src = &peer;
  v.cli_fd = fd;
  v.dst_port = l.port;
  if (l.addr.kind != net::ListenAddress::Kind::kInet) return v;
  v.dst = &l.addr.addr;
  if (l.proxy->settings.tcp_rules_need_dst && l.addr.addr.is_any()) {
    if (net::local_address(fd, &local)) v.dst = &local;
  }
  return v;
}

bool Worker::connection_allowed(Listener& l, int fd, net::SocketAddress& peer,
                                bool* expect_proxy) {
  Proxy& fe = *l.proxy;
  net::SocketAddress local;
  rules::RequestView view = tcp_rule_view(l, fd, peer, local);
  ProxyEnv env(process_, id_, &l, fe);
  view.env = &env;
  // set-src / set-src-port rewrite the peer the session will be started with.
  uint8_t rst_ttl = 0;
  const rules::TcpVerdict v = rules::run_tcp_rules(fe.settings.tcp_connection_rules, view,
                                                   {&peer, nullptr, expect_proxy, &rst_ttl});
  if (v != rules::TcpVerdict::kReject && v != rules::TcpVerdict::kSilentDrop) return true;
  // As HAProxy: the connection counts (conn_tot, conn_rate, and maxconnrate already took it)
  // but never becomes a session (no stot, no log line); `dcon` says why (a reject; a
  // silent-drop counts as a denied request, dreq, instead). The close is a reset, with
  // nothing sent and no FIN_WAIT/TIME_WAIT left behind: these rules are there for floods.
  // A silent-drop's close sends nothing at all where the socket can be silenced.
  auto& fc = fe_counters(fe.index);
  fc.conn_tot.add();
  fc.conn_rate.add(loop_.now_ms());
  if (v == rules::TcpVerdict::kReject) {
    fc.dcon.add();
  } else {
    fc.dreq.add();
    net::silence_close(fd, rst_ttl);
  }
  net::close_with_reset(fd);   // the caller's slot token goes back with it
  return false;
}

namespace {
// `view` (payload) completed with the connection's addresses; `local` holds the kernel's answer.
rules::RequestView with_addresses(rules::RequestView view, const Listener& l, int fd,
                                  const net::SocketAddress& peer, net::SocketAddress& local) {
  rules::RequestView l4 = tcp_rule_view(l, fd, peer, local);
  view.src = l4.src;
  view.dst = l4.dst;
  view.dst_port = l4.dst_port;
  view.cli_fd = fd;
  view.avail = sample::kAtTcpContent;
  return view;
}
}  // namespace

rules::TcpVerdict Worker::session_verdict(const Listener& l, int fd, rules::RequestView& view,
                                          rules::TcpAddrs addrs) {
  net::SocketAddress local;
  const rules::RequestView l4 = tcp_rule_view(l, fd, *addrs.src, local);
  view.avail = sample::kAtTcpSession;
  view.src = addrs.src;
  view.dst = l4.dst;
  view.dst_port = l4.dst_port;
  view.cli_fd = fd;
  ProxyEnv env(process_, id_, &l, *l.proxy);
  view.env = &env;
  const rules::TcpVerdict v = rules::run_tcp_rules(l.proxy->settings.tcp_session_rules, view, addrs);
  view.env = nullptr;
  // As HAProxy: a reject is a denied session (dses), a silent-drop a denied request (dreq);
  // neither is a session (stot).
  if (v == rules::TcpVerdict::kReject) fe_counters(l.proxy->index).dses.add();
  else if (v == rules::TcpVerdict::kSilentDrop) fe_counters(l.proxy->index).dreq.add();
  else count_session(*l.proxy);
  return v;
}

rules::TcpVerdict Worker::content_verdict(const Listener& l, int fd, rules::RequestView& view,
                                          const StreamTimes* stream, rules::TcpAddrs addrs,
                                          const rules::RuleLoc** last) {
  ProxyEnv env(process_, id_, &l, *l.proxy);
  env.stream = stream;
  view.env = &env;
  view.cli_fd = fd;
  // HTTP mode: the parsed request (the configuration refused the raw bytes' fetches).
  view.avail = sample::kAtHttpRequest & ~sample::kUseReqBuf;
  const rules::TcpVerdict v =
      rules::run_tcp_rules(l.proxy->settings.tcp_content_rules, view, addrs, last);
  view.env = nullptr;
  if (v == rules::TcpVerdict::kReject || v == rules::TcpVerdict::kSilentDrop)
    fe_counters(l.proxy->index).dreq.add();
  return v;
}

Proxy* Worker::tcp_backend(const Listener& l, int fd, const net::SocketAddress& peer,
                           rules::RequestView view) {
  const Proxy& fe = *l.proxy;
  net::SocketAddress local;
  view = with_addresses(view, l, fd, peer, local);
  ProxyEnv env(process_, id_, &l, fe);
  view.env = &env;
  for (const auto& u : fe.settings.use_backends) {
    if (!u.cond.eval(view)) continue;
    if (!u.dynamic) return process_.proxies()[static_cast<std::size_t>(u.backend)].get();
    // A name that is no backend ends the rules with the default backend. An HTTP backend
    // relays the bytes, as when a static rule names it.
    Proxy* named = backend_named(*u.dynamic, view);
    return named ? named : fe.target;
  }
  return fe.target;
}

lb::Server* Worker::tcp_server(const Listener& l, int fd, const net::SocketAddress& peer,
                               rules::RequestView view, Proxy& be, std::string* key,
                               bool* has_key) {
  net::SocketAddress local;
  view = with_addresses(view, l, fd, peer, local);
  ProxyEnv env(process_, id_, &l, *l.proxy);
  env.be = &be;
  view.env = &env;
  if (key) *has_key = be.settings.balance_expr && expr_key(*be.settings.balance_expr, view, *key);
  return be.settings.use_servers.empty() ? nullptr : use_server(be, view);
}

bool Worker::tcp_server_sni(const Listener& l, int fd, const net::SocketAddress& peer,
                            rules::RequestView view, Proxy& be, const lb::Server& srv,
                            const ProxySettings::ServerSni& e, std::string* out) {
  net::SocketAddress local;
  view = with_addresses(view, l, fd, peer, local);
  ProxyEnv env(process_, id_, &l, *l.proxy);
  env.be = &be;
  env.srv = &srv;
  view.env = &env;
  return server_sni(e, view, *out);
}

Proxy* Worker::backend_named(const rules::ValueFormat& name, const rules::RequestView& view) {
  thread_local std::string rendered;
  rendered.clear();
  name.render(view, rendered);
  Proxy* be = process_.proxy_named(rendered, false);
  return be && be->backend ? be : nullptr;
}

Worker* Worker::pick_target(Listener& l) {
  MultiQueue mq = process_.settings().multi_queue;
  if (mq == MultiQueue::kOff || l.threads.size() < 2 || soft_stopping_ || process_.stopping())
    return this;
  const auto& workers = process_.workers();
  if (mq == MultiQueue::kFair) {
    uint64_t n = l.fair_cursor.fetch_add(1, std::memory_order_relaxed);
    int t = l.threads[n % l.threads.size()];
    return workers[static_cast<std::size_t>(t - 1)].get();
  }
  // On: the least loaded thread of the shard, load = the connections this listener gave it
  // that are still open, queued hand-offs included (charged when pushed); the local thread
  // wins ties (no hand-off cost). A shard has at most a few dozen threads, so the scan is
  // cheap next to the accept() it follows.
  int my_pos = l.position[static_cast<std::size_t>(id_)];
  long best_load = l.given[static_cast<std::size_t>(my_pos)].load(std::memory_order_relaxed);
  Worker* best = this;
  for (std::size_t i = 0; i < l.threads.size(); ++i) {
    if (static_cast<int>(i) == my_pos) continue;
    Worker* w = workers[static_cast<std::size_t>(l.threads[i] - 1)].get();
    long load = l.given[i].load(std::memory_order_relaxed);
    if (load < best_load) {
      best_load = load;
      best = w;
    }
  }
  return best;
}

bool Worker::push_handoff(Handoff& h) { return accq_.push(std::move(h)); }

void Worker::drain_handoffs() {
  Handoff h;
  while (accq_.pop(&h)) {
    if (loop_.is_running()) {
      if (h.expect_proxy) [[unlikely]]
        start_proxied_session(*h.listener, h.fd, h.peer, /*charged=*/true, std::move(h.slots));
      else
        start_session(*h.listener, h.fd, h.peer, /*charged=*/true, std::move(h.slots));
      continue;
    }
    // The loop is gone (hard stop): give the connection and its slots back.
    net::close_socket(h.fd);
    release_thread_load(*h.listener);
    h.slots.release();
  }
}

void Worker::start_session(Listener& l, int fd, const net::SocketAddress& peer, bool charged,
                           ConnSlots&& slots) {
  if (l.line && l.line->settings.accept_proxy) [[unlikely]] {
    start_proxied_session(l, fd, peer, charged, std::move(slots));
    return;
  }
  if (!charged) {
    l.given[static_cast<std::size_t>(l.position[static_cast<std::size_t>(id_)])].fetch_add(
        1, std::memory_order_relaxed);
  }
  if (l.line && l.line->settings.tls) [[unlikely]] {
    start_tls_handshake(l, fd, peer, std::move(slots), nullptr);
    return;
  }
  open_session(l, fd, peer, std::move(slots), nullptr);
}

void Worker::start_tls_handshake(Listener& l, int fd, const net::SocketAddress& peer,
                                 ConnSlots&& slots, std::shared_ptr<const net::pp::Header> pp) {
  // A connection now (conn_tot, conn_rate), whether its handshake completes or not, as
  // HAProxy counts it; a session once it does.
  if (!pp) {
    auto& fc = fe_counters(l.proxy->index);
    fc.conn_tot.add();
    fc.conn_rate.add(loop_.now_ms());
  }
  auto* h = new TlsHandshake(*this, l, fd, peer, std::move(pp));
  h->slots = std::move(slots);
  session_opened(h);
  h->start();
}

void Worker::log_connection_error(const Listener& l, const net::SocketAddress& peer,
                                  uint64_t accept_wall_us, log::ConnError why) {
  const ProxySettings& fs = l.proxy->settings;
  if (fs.logs.empty()) return;
  const BindSettings& b = l.line->settings;
  const std::string bind = b.name.empty() ? std::to_string(l.id) : b.name;
  logs_.send(fs.logs, kInfo, log::connection_error_line(peer, accept_wall_us, fs.name, bind,
                                                         log::conn_error_text(why)));
}

void Worker::begin_tls_session(Listener& l, int fd, const net::SocketAddress& peer, ssl_st* ssl,
                               std::shared_ptr<const net::pp::Header> pp, ConnSlots&& slots) {
  open_session(l, fd, peer, std::move(slots), pp ? &pp : nullptr, ssl, /*counted=*/true);
}

void Worker::start_proxied_session(Listener& l, int fd, const net::SocketAddress& peer,
                                   bool charged, ConnSlots&& slots) {
  if (!charged) {
    l.given[static_cast<std::size_t>(l.position[static_cast<std::size_t>(id_)])].fetch_add(
        1, std::memory_order_relaxed);
  }
  // A connection now (conn_tot, conn_rate, smax), whether its header comes right or not,
  // as HAProxy counts it; a session once the header is read.
  auto& fc = fe_counters(l.proxy->index);
  fc.conn_tot.add();
  fc.conn_rate.add(loop_.now_ms());
  fc.smax.raise_to(static_cast<uint64_t>(l.proxy->feconn.current()));
  // The PROXY protocol header first: the session begins once it is read.
  auto* w = new ProxyHeaderWait(*this, l, fd, peer);
  w->slots = std::move(slots);
  session_opened(w);
  w->start();
}

void Worker::begin_session(Listener& l, int fd, const net::SocketAddress& peer,
                           std::shared_ptr<const net::pp::Header> pp, ConnSlots&& slots) {
  if (l.line && l.line->settings.tls) [[unlikely]] {
    start_tls_handshake(l, fd, peer, std::move(slots), std::move(pp));
    return;
  }
  open_session(l, fd, peer, std::move(slots), &pp);
}

// Inlined into start_session(): a call of its own, or a shared_ptr built and destroyed for
// every connection, cost about 40 instructions per connection.
[[gnu::always_inline]] inline void Worker::open_session(
    Listener& l, int fd, const net::SocketAddress& peer, ConnSlots&& slots,
    std::shared_ptr<const net::pp::Header>* pp, ssl_st* ssl, bool counted) {
  Proxy& fe = *l.proxy;
  activity_.sess_started.add();
  auto& fc = fe_counters(fe.index);
  uint64_t now = loop_.now_ms();
  // A connection that began with a PROXY header or a TLS handshake was counted when accepted.
  if (!pp && !counted) {
    fc.conn_tot.add();
    fc.conn_rate.add(now);
  }
  // With tcp-request session rules the session counts once they let it through.
  if (fe.settings.tcp_session_rules.empty()) {
    fc.stot.add();
    fc.sess_rate.add(now);
  }
  fc.smax.raise_to(static_cast<uint64_t>(fe.feconn.current()));
  if (fe.settings.cli_keepalive.on && peer.family() != AF_UNIX)
    net::apply_keepalive(fd, fe.settings.cli_keepalive);
  Session* s = fe.settings.http ? static_cast<Session*>(new H1Connection(*this, l, fd, peer))
                                : static_cast<Session*>(new TcpSession(*this, l, fd, peer));
  if (pp) [[unlikely]] s->adopt_proxy_header(std::move(*pp));
  if (ssl) [[unlikely]] s->adopt_tls(ssl);
  s->slots = std::move(slots);
  session_opened(s);
  // A hand-off queued before this worker soft-stopped starts after its on_soft_stop() walk:
  // it must learn of the stop too (an HTTP session would otherwise keep the connection
  // alive after its response, holding the old process up until a timeout).
  if (soft_stopping_) s->on_soft_stop();
  s->start();
}

void Worker::count_session(const Proxy& fe) {
  auto& fc = fe_counters(fe.index);
  fc.stot.add();
  fc.sess_rate.add(loop_.now_ms());
}

bool Worker::unwatch(ListenerWatch& watch) {
  if (watch.paused) return false;
  loop_.remove(watch.listener().fd);
  watch.registered = false;
  watch.paused = true;
  ++paused_;
  // Publish the pause before re-checking the limits; a closing session frees its slot
  // before checking for paused listeners. With both sides sequentially consistent, at least
  // one of them sees the other, so a slot freed right now cannot be missed.
  process_.paused_listeners().fetch_add(1, std::memory_order_seq_cst);
  return true;
}

void Worker::pause(ListenerWatch& watch) {
  if (unwatch(watch) && limits_have_room(watch.listener())) resume_paused();
}

void Worker::pause_until_next_second(ListenerWatch& watch) {
  pause_until(watch, (loop_.now_ms() / 1000 + 1) * 1000);
}

void Worker::pause_until(ListenerWatch& watch, uint64_t at_ms) {
  if (!unwatch(watch)) return;
  if (!rate_timer_.armed() || rate_timer_.expiry() > at_ms) loop_.timers().arm(rate_timer_, at_ms);
}

namespace {
// HAProxy pauses a listener this long when accept() runs out of resources (its "transient
// error" delay).
constexpr uint64_t kAcceptResourcePauseMs = 100;
}  // namespace

void Worker::accept_resource_error(ListenerWatch& watch, int err) {
  // The connection stays in the kernel's backlog and the registration is level-triggered:
  // without the pause this thread would spin on accept() at full CPU until a descriptor
  // frees. A session closing anywhere resumes the listener early (slot_freed()), as it may
  // have freed the descriptor that was missing.
  const Proxy& fe = *watch.listener().proxy;
  rlimit rl{};
  long maxsock = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? static_cast<long>(rl.rlim_cur) : -1;
  // HAProxy's texts.
  const char* limit = err == EMFILE ? "process FD" : err == ENFILE ? "system FD" : "system memory";
  const char* advice = err == EMFILE ? "Please check 'ulimit-n' and restart."
                                     : "Please check system tunables.";
  logs_.send(fe.settings.logs, kEmerg,
             fmt::format("Proxy {} reached {} limit (maxsock={}). {}", fe.settings.name, limit,
                         maxsock, advice));
  pause_until(watch, loop_.now_ms() + kAcceptResourcePauseMs);
}

void Worker::on_timer(core::Timer& t) {
  if (&t == &purge_timer_) {
    purge_idle();
    return;
  }
  if (&t == &trim_timer_) {
    trim_buffers();
    return;
  }
  if (&t == &special_timer_) {
    resume_specials();
    return;
  }
  resume_paused();
}

void Worker::resume_specials() {
  for (auto& w : special_watches_) {
    auto& l = w->listener();
    if (w->registered || l.conns.load(std::memory_order_relaxed) >= l.maxconn) continue;
    if (net::watch_listener(loop_, l.fd, w.get(), false)) w->registered = true;
  }
}

void Worker::resume_paused() {
  if (paused_ == 0 || soft_stopping_ || listeners_paused_) return;
  for (auto& w : watches_) {
    if (!w->paused || !w->listener().proxy->fe_open() || !limits_have_room(w->listener()))
      continue;
    if (net::watch_listener(loop_, w->listener().fd, w.get(), true)) {
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
    if (l.channel) {
      // The master's channel: each message with mark 'C' carries a forwarded CLI connection.
      int fd = -1;
      const int mark = net::receive_mark(l.fd, &fd);
      if (mark == 0) return;
      if (mark < 0) {
        // The master is gone (it exits after its workers, or was killed): a worker does not
        // outlive it (HAProxy's do not either). SIGTERM reaches the main thread's loop.
        loop_.remove(l.fd);
        watch.registered = false;
        kill(getpid(), SIGTERM);
        return;
      }
      if (fd < 0) continue;
      if (mark != 'C') {
        close(fd);
        continue;
      }
      l.conns.fetch_add(1, std::memory_order_relaxed);
      l.on_accept(*this, l, fd);
      continue;
    }
    int err = 0;
    int fd = net::accept_connection(l.fd, nullptr, &err);
    if (fd < 0) {
      if (err == EINTR || err == ECONNABORTED) continue;
      if (err == EMFILE || err == ENFILE || err == ENOMEM || err == ENOBUFS) {
        // As for proxied traffic: the client stays in the backlog, and a level-triggered
        // registration would spin on accept() until a descriptor frees.
        loop_.remove(l.fd);
        watch.registered = false;
        if (!special_timer_.armed())
          loop_.timers().arm(special_timer_, loop_.now_ms() + kAcceptResourcePauseMs);
      }
      return;
    }
    l.conns.fetch_add(1, std::memory_order_relaxed);
    l.on_accept(*this, l, fd);
  }
}

}  // namespace sluice::proxy

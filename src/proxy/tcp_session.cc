#include "proxy/sample_env.h"
#include "proxy/tcp_session.h"

#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <ctime>

#include <fmt/format.h>

#include "base/assert.h"
#include "base/clock.h"
#include "base/strings.h"
#include "log/line.h"
#include "net/socket.h"
#include "net/transport.h"
#include "proxy/proxy_header.h"
#include "proxy/server_pick.h"
#include "proxy/worker.h"

namespace sluice::proxy {

using log::Cause;
using log::FinalState;

namespace {

// Each side is registered once (net::Transport::watch(): edge-triggered, both directions) and
// never modified; the session remembers readiness itself and stops at IoStatus::kAgain.


}  // namespace

TcpSession::TcpSession(Worker& w, Listener& l, int fd, const net::SocketAddress& client)
    : w_(w),
      l_(l),
      fe_(*l.proxy),
      be_(l.proxy->target),
      cio_(fd),
      cend_(this, true),
      send_(this, false),
      t_accept_ms_(w.loop().now_ms()),
      t_routed_ms_(t_accept_ms_),
      c_last_ms_(t_accept_ms_),
      s_last_ms_(t_accept_ms_),
      t_accept_wall_us_(base::wall_us()),
      client_(client),
      leg_(w, *this, client_, l.port),
      timer_(this) {
  leg_.keep_source(fe_.settings.log_backend_src);
  // A fresh socket can be written to; readability is reported by epoll once registered.
  c_rd_ = false;
  c_wr_ = true;
}

TcpSession::~TcpSession() {
  SLUICE_ASSERT(state_ == State::kClosed);
}

void TcpSession::trace_line(const char* what) {
  std::string line = fmt::format("{:08x}:{}.{}({:04x}) from [{}] srv={}\n", slot, fe_.settings.name,
                                 what, cio_.fd(), client_.to_string(),
                                 leg_.server() ? leg_.server()->name() : "-");
  std::fwrite(line.data(), 1, line.size(), stderr);   // unbuffered: one write per line
}

void TcpSession::start() {
  if (!cio_.watch(w_.loop(), &cend_)) {
    w_.fe_counters(fe_.index).eint.add();
    finish({Cause::kProxy, FinalState::kRequest});
    return;
  }
  trace("accept");
  if (!fe_.settings.log_format && !fe_.settings.logs.empty()) {
    std::string local = l_.addr.kind == net::ListenAddress::Kind::kInet
                            ? l_.addr.addr.to_string()
                            : l_.addr.text;
    w_.logs().send(fe_.settings.logs, kInfo,
                   fmt::format("Connect from {} to {} ({}/TCP)", client_.to_string(), local,
                               fe_.settings.name));
  }
  if (!fe_.settings.tcp_session_rules.empty() && !session_rules()) return;
  if (fe_.settings.log_steps & kLogAccept) [[unlikely]] log_session(true, kLogAccept);
  if (fe_.settings.tcp_inspect) {
    // Rules read the client's bytes: read what is there, judge, maybe wait for more.
    state_ = State::kInspecting;
    be_ = nullptr;
    if (fe_.settings.tcp_inspect_delay_ms)
      inspect_until_ms_ = t_accept_ms_ + fe_.settings.tcp_inspect_delay_ms;
    c_rd_ = true;   // as read_early: the first bytes are usually there already
    read_client();
    if (state_ == State::kInspecting) inspect(false);
    return;
  }
  if (!fe_.settings.tcp_content_rules.empty() && !content_allowed()) return;
  // Before the pick, so that the server is chosen as late as before (a server set to drain or
  // maint right now gets no connection picked a moment earlier).
  read_early();
  if (!fe_.settings.use_backends.empty()) {
    rules::RequestView v;
    v.payload = payload();   // what has arrived, final: HAProxy does not wait here either
    be_ = w_.tcp_backend(l_, cio_.fd(), client_, v);
  }
  route();
}

std::string_view TcpSession::payload() const {
  return req_ ? std::string_view(req_->data + req_->head, req_->size()) : std::string_view();
}

// Inspecting: everything the socket has, up to a full buffer, edge-triggered. The bytes count
// on the frontend now and on the backend once it is chosen (route).
void TcpSession::read_client() {
  if (!req_ && !(req_ = w_.buffers().try_get())) {
    out_of_memory();
    return;
  }
  while (c_rd_ && !c_eof_ && req_->room() > 0) {
    net::IoResult r = cio_.recv(req_->write_ptr(), req_->room());
    if (r.status == net::IoStatus::kOk) {
      auto un = static_cast<uint64_t>(r.n);
      req_->tail += static_cast<uint32_t>(r.n);
      c_last_ms_ = w_.loop().now_ms();
      bytes_in_ += un;
      early_bytes_ += un;
      w_.fe_counters(fe_.index).bin.add(un);
    } else if (r.status == net::IoStatus::kEof) {
      c_eof_ = true;
    } else if (r.status == net::IoStatus::kAgain) {
      c_rd_ = false;
    } else {
      client_end_ = {Cause::kClientClose, FinalState::kRequest};   // judged on what came, then closed (inspect, route)
      return;
    }
  }
}

// The content rules on what has arrived. They are final (as HAProxy's) once the client closed
// or failed, the buffer is full, inspect-delay is over or unset; until then a
// rule without an answer yet makes the session wait for more bytes, bounded by the timer.
void TcpSession::inspect(bool expired) {
  rules::RequestView v;
  v.avail = sample::kAtTcpContent;
  v.payload = payload();
  v.payload_final = expired || c_eof_ || client_end_.has_value() || inspect_until_ms_ == 0 || !req_ ||
                    req_->room() == 0;
  rules::TcpVerdict verdict = run_rules(fe_.settings.tcp_content_rules, fe_, v);
  if (verdict == rules::TcpVerdict::kWait) {
    arm_timeout();
    return;
  }
  if (!request_verdict(verdict)) return;
  // use_backend sees the same bytes, as final (HAProxy evaluates switching rules once).
  v.payload_final = true;
  be_ = fe_.settings.use_backends.empty() ? fe_.target : w_.tcp_backend(l_, cio_.fd(), client_, v);
  state_ = State::kConnecting;
  t_routed_ms_ = w_.loop().now_ms();
  route();
}

// The backend is known: the session counts there and a server is picked.
void TcpSession::route() {
  if (!be_) {
    // A frontend without a backend: nothing can serve this connection.
    finish({Cause::kProxy, FinalState::kRequest});
    return;
  }
  leg_.attach(*be_);
  // What the client sent before the backend was known counts there now (its server's counter
  // once one is picked, start_connect).
  if (early_bytes_) w_.be_counters(be_->index).bin.add(early_bytes_);
  if (!be_->settings.tcp_content_rules.empty() && be_ != &fe_ && !backend_rules()) return;
  if (client_end_) {
    // HAProxy: the rules judged on what came before `timeout client` or the client's error,
    // the session reached its backend, and the client is closed there without a server (cR
    // or CR, -1 timers).
    finish(*client_end_);
    return;
  }
  bool keyed = false;
  if (!be_->settings.use_servers.empty() || be_->settings.balance_expr) {
    rules::RequestView v;
    v.payload = payload();
    v.payload_final = true;
    if (be_->settings.balance_expr && !lb_key_) lb_key_ = std::make_unique<std::string>();
    leg_.force(w_.tcp_server(l_, cio_.fd(), client_, v, *be_, lb_key_.get(), &keyed));
  }
  switch (leg_.pick(keyed ? lb_key_.get() : nullptr)) {
    case BackendLeg::PickResult::kPicked:
      start_connect();
      return;
    case BackendLeg::PickResult::kFull:
      enter_queue();
      return;
    case BackendLeg::PickResult::kNone:
      finish({Cause::kServerClose, FinalState::kConnect});
      return;
  }
}

// The fast path, before anything is read: no rule reads the client's bytes (else inspect()),
// only addresses and ports, final now, so `tcp-request inspect-delay` has nothing to wait for
// (HAProxy decides at once too when every fetch is final).
bool TcpSession::content_allowed() {
  rules::RequestView v;   // no payload, final
  v.avail = sample::kAtTcpContent;
  return request_verdict(run_rules(fe_.settings.tcp_content_rules, fe_, v));
}

void TcpSession::reject(bool backend) {
  // HAProxy: a denied request on the frontend, the session logged `PR` with the frontend as
  // its backend (a backend's rules: the backend), the client closed with a FIN. What the
  // client already sent is read and dropped first (not counted in bin): closing over unread
  // bytes would send a reset.
  ended_in_frontend_ = !backend;
  drain_client();
  finish({Cause::kProxy, FinalState::kRequest});
}

void TcpSession::drain_client() { net::discard_input(cio_); }

// Most clients speak first, and on a local network their first bytes are usually there by the
// time the connection is accepted (HAProxy reads right after accept too). Having them before
// connect() lets the server connection start with data: its first segment carries the
// handshake's last ACK (net::connect_nonblocking) and leaves right after connect(), without a
// loop turn. Nothing there yet: one EAGAIN, and the connection proceeds as before.
void TcpSession::read_early() {
  req_ = w_.buffers().try_get();
  if (!req_) return;   // no memory now: the relay tries again (and fails the session if still none)
  net::IoResult r = cio_.recv(req_->write_ptr(), req_->room());
  if (r.status == net::IoStatus::kOk) {
    if (r.n < req_->room()) c_rd_ = false;   // drained: wait for an edge
    req_->tail += static_cast<uint32_t>(r.n);
    auto un = static_cast<uint64_t>(r.n);
    c_last_ms_ = w_.loop().now_ms();
    bytes_in_ += un;
    w_.fe_counters(fe_.index).bin.add(un);
    early_bytes_ = un;   // the backend's counters get them once it is known (route)
    return;
  }
  if (r.status == net::IoStatus::kEof) {
    c_eof_ = true;   // closed without a byte: the FIN is passed on once connected
  } else if (r.status == net::IoStatus::kAgain) {
    c_rd_ = false;
  }   // an error is left for the relay's next read to report
  w_.buffers().put(req_);
  req_ = nullptr;
}

void TcpSession::enter_queue() {
  state_ = State::kQueued;
  trace("queued");
  if (leg_.enter_queue()) {
    state_ = State::kConnecting;
    start_connect();
    return;
  }
  arm_timeout();
}

void TcpSession::leave_queue() {
  if (state_ != State::kQueued) return;
  leg_.leave_queue();
  state_ = State::kConnecting;
}

bool TcpSession::retry_from_queue() {
  if (state_ != State::kQueued) return true;
  if (!leg_.take_queued_slot()) return false;
  state_ = State::kConnecting;
  start_connect();
  return true;
}

void TcpSession::start_connect() {
  if (early_bytes_) {
    leg_.server_counters().bin.add(early_bytes_);
    early_bytes_ = 0;
  }
  const bool have_data = req_ && !req_->empty();
  net::ConnectOptions opts;
  opts.defer_ack = have_data && be_->settings.smart_connect;
  opts.keepalive = be_->settings.srv_keepalive;
  opts.rcvbuf = be_->settings.srv_rcvbuf;
  opts.sndbuf = be_->settings.srv_sndbuf;
  int fd = -1;
  ConnectError err;
  const BackendLeg::ConnectStatus st = leg_.connect(opts, &fd, &err);
  if (st == BackendLeg::ConnectStatus::kFailed) {
    on_connect_failed(err);
    return;
  }
  sio_.adopt(fd);
  s_rd_ = s_wr_ = false;
  if (!sio_.watch(w_.loop(), &send_)) {
    on_connect_failed(ConnectError::local(errno));
    return;
  }
  trace("connect");
  const lb::ServerSettings& ss = leg_.server()->settings();
  if (ss.tls) [[unlikely]] {
    // TLS: the handshake after the link is up, the PROXY header in clear before it; nothing of
    // the client's leaves before the handshake is done.
    std::string sni;
    if (const auto* e = be_->settings.sni_of(static_cast<std::size_t>(leg_.server()->index()))) {
      rules::RequestView v;
      v.payload = payload();
      v.payload_final = true;
      w_.tcp_server_sni(l_, cio_.fd(), client_, v, *be_, *leg_.server(), *e, &sni);
    }
    stls_ = ServerTlsStart::make(w_, *ss.tls, leg_.server_global(), fd, sni,
                                 ss.send_proxy ? proxy_header() : std::string());
    if (!stls_) {
      on_connect_failed(ConnectError::local(ENOMEM));
      return;
    }
  }
  if (ss.has_socks4) [[unlikely]] {
    // The proxy first: nothing of the client's leaves before it has let the connection through.
    socks_ = std::make_unique<net::socks4::Handshake>(*leg_.target());
    if (st == BackendLeg::ConnectStatus::kConnected && socks_step()) pump();
    else if (state_ == State::kConnecting) arm_timeout();
    return;
  }
  if (stls_) [[unlikely]] {
    if (st == BackendLeg::ConnectStatus::kConnected && tls_step()) pump();
    else if (state_ == State::kConnecting) arm_timeout();
    return;
  }
  if (st == BackendLeg::ConnectStatus::kConnected) {
    on_connected();
    pump();
    return;
  }
  if (have_data && !ss.send_proxy) {
    // On loopback and fast links the handshake is usually done by now: send at once. Still
    // connecting: EAGAIN, and the connect event comes as usual; refused: the error, which
    // send() has now consumed from the socket, so it is handled here.
    net::IoResult w = sio_.send(req_->read_ptr(), req_->size(), false);
    if (w.status == net::IoStatus::kOk) {
      on_connected();
      req_->head += static_cast<uint32_t>(w.n);
      s_last_ms_ = w_.loop().now_ms();
      if (!req_->empty()) s_wr_ = false;
      pump();
      return;
    }
    if (w.status == net::IoStatus::kError && w.err != ENOTCONN) {
      on_connect_failed(ConnectError::server(w.err));
      return;
    }
  }
  arm_timeout();
}

// The worker's buffer pool could not have memory (BufferPool::try_get): the session cannot move
// bytes and ends as a resource failure (`R` in the log, HAProxy's letter; eint counted).
void TcpSession::out_of_memory() {
  w_.fe_counters(fe_.index).eint.add();
  finish(state_ == State::kEstablished ? log::Termination{Cause::kResource, FinalState::kData} : log::Termination{Cause::kResource, FinalState::kRequest});
}

void TcpSession::on_connected() {
  // An ssl server had the header before its handshake.
  if (leg_.server()->settings().send_proxy && !leg_.server()->settings().tls) [[unlikely]] {
    if (!send_proxy_header()) return;
  }
  state_ = State::kEstablished;
  leg_.connected();
  s_last_ms_ = leg_.connected_ms();
  s_wr_ = true;
  res_inspect_ = !be_->settings.tcp_response_rules.empty();
  // The response analysis begins: HAProxy empties the req.* variables (its one store of req.*
  // and res.*), so tcp-response rules and the log line do not see them.
  if (rd_ && rd_->req.count()) rd_->req.clear();
  if (fe_.settings.log_steps & kLogConnect) [[unlikely]] log_session(true, kLogConnect);
  if (fe_.settings.logasap && fe_.settings.log_format && !fe_.settings.logs.empty()) {
    logged_ = log_session(true);
  }
}

// send-proxy: the PROXY protocol header opens the connection, with the client's addresses
// as the session sees them.
std::string TcpSession::proxy_header() {
  std::vector<net::pp::Tlv> tlvs;
  if (const auto* f = be_->settings.pp2_tlvs_of(static_cast<std::size_t>(leg_.server()->index())))
    [[unlikely]] render_pp2_tlvs(*f, &tlvs);
  return proxy_header_for(leg_.server()->settings(), client_, local_address(), cio_.fd(),
                          pp_.get(), {}, cio_.tls(), std::move(tlvs));
}

bool TcpSession::send_proxy_header() {
  // A freshly connected socket takes its hundred bytes whole; a socket that does not is
  // failing, and the session ends as a server failure.
  const std::string h = proxy_header();
  const net::IoResult r = sio_.send(h.data(), h.size(), true);
  if (r.status == net::IoStatus::kOk && r.n == h.size()) return true;
  if (r.status == net::IoStatus::kError) leg_.note_error(r.err);
  leg_.mark_connected();   // the connection was up: Tc is logged
  state_ = State::kEstablished;
  finish({Cause::kServerClose, FinalState::kConnect});
  return false;
}

bool TcpSession::socks_step() {
  switch (socks_->advance(sio_.fd())) {
    case net::socks4::Handshake::Step::kDone:
      socks_.reset();
      return link_ready();
    case net::socks4::Handshake::Step::kFailed:
      on_connect_failed(ConnectError::socks4(*socks_));
      return false;
    default:
      return false;   // the proxy's answer comes within timeout connect
  }
}

bool TcpSession::link_ready() {
  if (stls_) [[unlikely]] return tls_step();
  on_connected();
  return state_ == State::kEstablished;
}

bool TcpSession::tls_step() {
  switch (stls_->advance(sio_)) {
    case ServerTlsStart::Step::kDone:
      stls_.reset();
      on_connected();
      s_rd_ = true;   // bytes that came with the handshake's end wait inside OpenSSL
      return state_ == State::kEstablished;
    case ServerTlsStart::Step::kFailed: {
      const ConnectError e = stls_->error();
      on_connect_failed(e);
      return false;
    }
    default:
      return false;   // within timeout connect: the handshake is part of the connect
  }
}

void TcpSession::on_connect_failed(const ConnectError& e) {
  trace(e.timeout ? "connect-timeout" : "connect-error");
  socks_.reset();
  stls_.reset();
  sio_.close(net::CloseMode::kFin);   // also leaves the event loop
  switch (leg_.fail(e)) {
    case BackendLeg::RetryAction::kGiveUp:
      finish(e.term());
      return;
    case BackendLeg::RetryAction::kNow:
      start_connect();
      return;
    case BackendLeg::RetryAction::kLater:
      w_.loop().timers().arm(timer_, leg_.retry_due_ms());
      return;
  }
}

void TcpSession::note_error(bool server, int err) {
  if (server) leg_.note_error(err);
  else if (!fc_err_) fc_err_ = static_cast<uint8_t>(log::conn_error_of_errno(err));
}

void TcpSession::on_io(bool client, uint32_t events) {
  if (state_ == State::kClosed) return;
  ++calls_;
  const net::Readiness r = net::decode_readiness(events);
  // A hang-up (both directions shut) counts as an error here: a relay reads its FIN as the 0
  // that follows instead of taking a short read for the end of stream.
  if (client) {
    if (r.readable()) c_rd_ = true;
    if (r.writable()) c_wr_ = true;
    if (r.peer_closed()) c_hup_ = true;
    if (r.hangup_or_error()) c_err_ = true;
    if (state_ == State::kInspecting) {
      read_client();
      if (state_ == State::kInspecting) inspect(false);
      return;
    }
  } else {
    if (!sio_.open()) return;
    if (state_ == State::kConnecting) {
      // Connected to a SOCKS4 proxy that has the request: its answer (or close) is read. In a
      // TLS handshake that waits for the server, its bytes (or its close) are.
      const bool socks_reply = socks_ && socks_->step() == net::socks4::Handshake::Step::kReceive;
      const bool tls_reply = !socks_ && stls_ && stls_->wants_read();
      if (r.hangup_or_error() && !socks_reply && !tls_reply) {
        int err = sio_.connect_error();
        on_connect_failed(ConnectError::server(err ? err : ECONNREFUSED));
        return;
      }
      if (tls_reply ? !(r.readable() || r.hangup_or_error())
                    : socks_reply ? !r.readable() : !r.writable())
        return;
      if (socks_ ? !socks_step() : !link_ready()) return;
    }
    if (r.readable()) s_rd_ = true;
    if (r.writable()) s_wr_ = true;
    if (r.peer_closed()) s_hup_ = true;
    if (r.hangup_or_error()) s_err_ = true;
  }
  pump();
}

bool TcpSession::relay(bool to_server) {
  const bool established = state_ == State::kEstablished;
  if (!to_server && !established) return false;
  // RawTransport (final): its reads and writes are direct, inlined calls on this path.
  net::RawTransport& from = to_server ? cio_ : sio_;
  net::RawTransport& to = to_server ? sio_ : cio_;
  core::Buffer*& buf = to_server ? req_ : res_;
  bool& rd = to_server ? c_rd_ : s_rd_;
  bool& eof = to_server ? c_eof_ : s_eof_;
  bool& wr = to_server ? s_wr_ : c_wr_;
  bool& shut = to_server ? s_shut_ : c_shut_;
  const bool hup = to_server ? c_hup_ : s_hup_;
  const bool fin_only = hup && !(to_server ? c_err_ : s_err_);
  bool progress = false;
  const uint64_t now = w_.loop().now_ms();

  if (!eof && rd) {
    if (!buf && !(buf = w_.buffers().try_get())) {
      out_of_memory();
      return false;
    }
    if (buf->room() > 0) {
      net::IoResult r = from.recv(buf->write_ptr(), buf->room());
      if (r.status == net::IoStatus::kOk) {
        const auto n = static_cast<uint32_t>(r.n);
        // A short read drained the socket: the next data raises a new edge, so reading again
        // now would only return EAGAIN (one system call per read saved). Not after a hang-up:
        // its FIN came with that same edge and must still be read as the 0 that follows.
        // After a plain FIN (the peer closed, no hang-up nor error) a short read has taken everything the
        // peer will ever send: that is the end of stream, no need to read the 0 (another call
        // saved). A reset or error is still read, to learn it.
        bool drained = n < buf->room();
        if (drained && !hup) rd = false;
        if (drained && fin_only) eof = true;
        buf->tail += n;
        progress = true;
        auto un = static_cast<uint64_t>(n);
        if (to_server) {
          c_last_ms_ = now;
          bytes_in_ += un;
          w_.fe_counters(fe_.index).bin.add(un);
          w_.be_counters(be_->index).bin.add(un);
          if (leg_.server()) leg_.server_counters().bin.add(un);
        } else {
          s_last_ms_ = now;
          bytes_out_ += un;
          w_.fe_counters(fe_.index).bout.add(un);
          w_.be_counters(be_->index).bout.add(un);
          leg_.server_counters().bout.add(un);
        }
      } else if (r.status == net::IoStatus::kEof) {
        eof = true;
        progress = true;
        (to_server ? c_last_ms_ : s_last_ms_) = now;
      } else if (r.status == net::IoStatus::kAgain) {
        rd = false;
      } else {
        io_err_ = r.err;
        finish(to_server ? log::Termination{Cause::kClientClose, FinalState::kData} : log::Termination{Cause::kServerClose, FinalState::kData});
        return false;
      }
    }
  }
  // tcp-response content rules: the server's bytes wait until they decide.
  if (!to_server && res_inspect_) {
    const bool expired = res_inspect_until_ms_ && now >= res_inspect_until_ms_;
    if (((buf && !buf->empty()) || eof || expired) && !inspect_response()) return progress;
    if (res_inspect_) return progress;
  }
  if (established && buf && !buf->empty() && wr) {
    // After the source's FIN these are the last bytes: MSG_MORE holds them for the shutdown()
    // or close() that follows at once below, so that data and FIN leave in one segment (one
    // packet and one wake-up of the receiver fewer per direction).
    net::IoResult w = to.send(buf->read_ptr(), buf->size(), eof);
    if (w.status == net::IoStatus::kOk) {
      buf->head += static_cast<uint32_t>(w.n);
      progress = true;
      // Sending to a side postpones its timeout too, unless that side's proxy has option
      // independent-streams (the frontend's for the client, the backend's for the server).
      if (!(to_server ? be_->settings.independent_streams : fe_.settings.independent_streams))
        (to_server ? s_last_ms_ : c_last_ms_) = now;
      if (!buf->empty()) wr = false;   // a short write means the socket buffer is full
    } else if (w.status == net::IoStatus::kAgain) {
      wr = false;
    } else {
      // The peer we write to is gone.
      io_err_ = w.err;
      finish(to_server ? log::Termination{Cause::kServerClose, FinalState::kData} : log::Termination{Cause::kClientClose, FinalState::kData});
      return false;
    }
  }
  if (buf && buf->empty()) {
    w_.buffers().put(buf);
    buf = nullptr;
  }
  if (established && eof && !buf && !shut) {
    // Everything the peer sent before its FIN has been forwarded: pass the FIN on, unless the
    // other direction is already finished, in which case both sockets are about to be closed
    // and the close carries the FIN (one system call saved per connection).
    const bool other_done = to_server ? (s_eof_ && c_shut_) : (c_eof_ && s_shut_);
    if (!other_done) to.shutdown_write();
    shut = true;
  }
  return progress;
}

void TcpSession::pump() {
  for (;;) {
    bool progress = relay(true);
    if (state_ == State::kClosed) return;
    progress |= relay(false);
    if (state_ == State::kClosed) return;
    if (!progress) break;
  }
  if (c_eof_ && s_shut_ && s_eof_ && c_shut_) {
    finish({Cause::kNone, FinalState::kNone});
    return;
  }
  arm_timeout();
}

uint64_t TcpSession::deadline() const {
  const Timeouts& to = be_ ? be_->settings.timeouts : fe_.settings.timeouts;
  const Timeouts& fto = fe_.settings.timeouts;
  uint64_t d = 0;
  auto consider = [&d](uint64_t when) {
    if (when && (d == 0 || when < d)) d = when;
  };
  if (state_ == State::kInspecting) {
    if (inspect_until_ms_) consider(inspect_until_ms_);
    if (fto.client) consider(c_last_ms_ + fto.client);
    return d;
  }
  if (state_ == State::kQueued) {
    consider(leg_.deadline());   // timeout queue
    if (fto.client) consider(c_last_ms_ + fto.client);
    return d;
  }
  if (state_ == State::kConnecting) {
    // Only `timeout connect` runs now: the client's bytes wait for the server, and an idle
    // client is not a reason to give up a connect that is still allowed to succeed (HAProxy
    // lets it run to `timeout connect` too). Waiting for a retry: its due time.
    return leg_.deadline();
  }
  bool c_half = c_eof_ || c_shut_;
  bool s_half = s_eof_ || s_shut_;
  if (res_inspect_ && res_inspect_until_ms_) consider(res_inspect_until_ms_);
  // `timeout tunnel` replaces client and server timeouts once both sides are connected, and
  // measures inactivity in both directions together.
  if (to.tunnel && !c_half && !s_half) {
    consider(std::max(c_last_ms_, s_last_ms_) + to.tunnel);
    return d;
  }
  uint32_t ct = fto.client, st = to.server;
  if (to.tunnel) ct = st = to.tunnel;
  if (c_half && fto.client_fin) ct = fto.client_fin;
  if (s_half && to.server_fin) st = to.server_fin;
  if (ct) consider(c_last_ms_ + ct);
  if (st) consider(s_last_ms_ + st);
  return d;
}

void TcpSession::arm_timeout() {
  if (state_ == State::kClosed) return;
  w_.loop().timers().arm_lazy(timer_, deadline());
}

void TcpSession::on_timer(core::Timer&) {
  if (state_ == State::kClosed) return;
  ++calls_;
  uint64_t now = w_.loop().now_ms();
  uint64_t d = deadline();
  if (d == 0) return;
  if (now < d) {
    w_.loop().timers().arm(timer_, d);   // activity moved the deadline: sleep again
    return;
  }
  if (state_ == State::kInspecting) {
    // inspect-delay over: the rules judge one last time on what is there. `timeout client`
    // first: the same, then the client is closed (route).
    if (!(inspect_until_ms_ && now >= inspect_until_ms_)) client_end_ = {Cause::kClientTimeout, FinalState::kRequest};
    inspect(true);
    return;
  }
  if (state_ == State::kQueued) {
    // `timeout queue` expired (or the client's): HAProxy answers 503 in HTTP; in TCP the
    // connection is closed. Logged as sQ, and counted as a failed connection (econ).
    if (leg_.queue_expired(now)) {
      const ConnectError e = ConnectError::queue_timeout();
      leg_.fail(e);
      finish(e.term());
      return;
    }
    finish({Cause::kClientTimeout, FinalState::kQueue});
    return;
  }
  if (state_ == State::kConnecting) {
    if (leg_.state() == BackendLeg::State::kRetryWait) {   // turn-around delay over: retry
      start_connect();
      return;
    }
    if (leg_.connect_expired(now)) {
      on_connect_failed(ConnectError::connect_timeout());
      return;
    }
    finish({Cause::kClientTimeout, FinalState::kConnect});
    return;
  }
  if (res_inspect_ && res_inspect_until_ms_ && now >= res_inspect_until_ms_) {
    pump();   // tcp-response inspect-delay over: the rules judge one last time
    return;
  }
  // Which side went quiet first decides who is blamed in the log.
  const Timeouts& to = be_->settings.timeouts;
  const Timeouts& fto = fe_.settings.timeouts;
  bool c_half = c_eof_ || c_shut_;
  uint32_t ct = to.tunnel ? to.tunnel : fto.client;
  if (c_half && fto.client_fin) ct = fto.client_fin;
  bool client_expired = ct && now >= c_last_ms_ + ct;
  finish(client_expired ? log::Termination{Cause::kClientTimeout, FinalState::kData} : log::Termination{Cause::kServerTimeout, FinalState::kData});
}

void TcpSession::abort(const char* reason) {
  trace(reason);
  finish({Cause::kKilled, FinalState::kData});
}

void TcpSession::finish(log::Termination term) {
  if (state_ == State::kClosed) return;
  leave_queue();
  if (state_ == State::kInspecting) ended_in_frontend_ = true;   // no backend yet
  bool was_established = state_ == State::kEstablished;
  state_ = State::kClosed;
  last_term_ = term;
  if (io_err_) note_error(term.server_side(), io_err_);
  if (w_.process().settings().debug) trace(log::letters(term).c_str());   // -d only
  w_.loop().timers().cancel(timer_);
  // option nolinger: a reset. Otherwise the close carries the last bytes and the FIN.
  cio_.close(fe_.settings.nolinger || client_reset_ ? net::CloseMode::kReset : net::CloseMode::kFin);
  // Closed before the server's FIN (an abort, a timeout): a reset, so that the ephemeral port
  // does not sit in TIME_WAIT. After its FIN a plain close, unless the backend has
  // `option nolinger`.
  if (sio_.open()) {
    const bool reset = (was_established && !s_eof_ && !s_hup_) || (be_ && be_->settings.nolinger);
    sio_.close(reset ? net::CloseMode::kReset : net::CloseMode::kFin);
  }
  if (req_) w_.buffers().put(req_);
  if (res_) w_.buffers().put(res_);
  req_ = res_ = nullptr;
  if (be_) {
    // As HAProxy counts them: a client error or timeout is a client abort in any state (a
    // reset while the connect is pending included); a server error or timeout once connected
    // is a server abort, an error also a failed response; an expired queue wait is a failed
    // connection (counted by the backend leg, BackendLeg::fail()).
    const bool cli_abort = term.client_side();
    const bool srv_abort = was_established && term.server_side();
    const bool srv_error = was_established && term.cause == Cause::kServerClose;
    auto count = [&](stats::TrafficCounters& c) {
      if (cli_abort) c.cli_abrt.add();
      if (srv_abort) c.srv_abrt.add();
      if (srv_error) c.eresp.add();
    };
    count(w_.be_counters(be_->index));
    if (leg_.server()) count(leg_.server_counters());
  }
  // Tested before the call: most frontends write no tcplog line, and then no call is made.
  if (fe_.settings.log_format && !fe_.settings.logs.empty() && !no_log_ && !logged_) log_session();
  // The server's slot, and the backend's session count once route() attached there (never
  // for a `P` ending: rejected or refused before).
  leg_.release();
  w_.release_thread_load(l_);
  w_.session_closed(this);
}

}  // namespace sluice::proxy

// H1Connection, the request on its way to a server: its head for the server's wire, its body,
// and the server side: the transaction's backend leg (pick, queue, connect, retries:
// proxy/backend_leg.h), the server connection (reused or new) and the server socket.
#include "proxy/h1_connection.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

#include "base/assert.h"
#include "base/clock.h"
#include "base/strings.h"
#include "http/forward.h"
#include "proxy/h1_internal.h"
#include "net/transport.h"
#include "proxy/proxy_header.h"
#include "proxy/server_pick.h"
#include "proxy/worker.h"

namespace sluice::proxy {

using namespace http_internal;
using log::Cause;
using log::FinalState;

bool H1Connection::serialize_server_head(rules::HeadEdit& edit) {
  using CM = HttpSettings::ConnMode;
  const Proxy& be = *txn_.backend();
  const auto& fh = fe_.settings.h;
  const auto& bh = be.settings.h;
  const http::RequestHead& head = tx_->req_parser.head();
  const bool server_close_mode = fh.conn_mode == CM::kServerClose ||
                                 bh.conn_mode == CM::kServerClose || bh.conn_mode == CM::kClose;
  // An HTTP/1.0 chunked request closes its server connection too (2.4).
  server_close_ = server_close_mode || expect_tunnel_ || head.force_close;
  if (!upgrade_) {
    // option http-pretend-keepalive: the request reads as keep-alive (the connection closes
    // after the response all the same).
    const bool announce_close =
        server_close_mode && !(fh.pretend_keepalive || bh.pretend_keepalive);
    if (announce_close && head.http11()) {
      edit.headers.push_back({"connection", "close"});
    } else if (!announce_close && !head.http11()) {
      edit.headers.push_back({"connection", "keep-alive"});
    }
  }
  // The body is sent as the parser framed it: the fields the rules left are made to say so.
  // An HTTP/1.0 request cannot be chunked: a deleted length is put back instead. Without any
  // rule (and a forwardfor header with a framing name) the fields are as rewrite_framing()
  // left them: nothing to check.
  const bool fe_ff = fh.forwardfor.enabled, be_ff = &be != &fe_ && bh.forwardfor.enabled;
  const bool rules_ran = !fh.request_rules.empty() || (&be != &fe_ && !bh.request_rules.empty()) ||
                         ((fe_ff || be_ff) && http::is_framing_field(be_ff ? bh.forwardfor.header
                                                                           : fh.forwardfor.header));
  switch (rules_ran ? http::finalize_framing(head, false, head.http11(), edit.headers, edit.storage)
                    : http::Framing::kOk) {
    case http::Framing::kOk:
      break;
    case http::Framing::kRechunk:
      req_rechunk_ = true;
      break;
    case http::Framing::kConflict:
      // HAProxy 2.6 fails such a request with a 500 and sends nothing to the server.
      return false;
  }
  std::string_view version = head.http11() ? std::string_view("HTTP/1.1") : head.version;
  to_srv_.clear();
  std::string& out = *to_srv_.heads_tail();   // nothing is queued: the heads string is free
  http::append_request_head(edit.method, edit.target, version, edit.headers, out, true,
                            bh.case_adjust_server ? &http::case_adjust_map() : nullptr);
  // Rewrites may use the tune.maxrewrite reserve that the head limit kept free, no more: a
  // rewritten head must fit a buffer (tune.bufsize), else HAProxy fails the rewrite with a 500
  // and sends nothing. Without a bound, rules could make a head many times what was received.
  if (out.size() > static_cast<std::size_t>(w_.process().settings().bufsize)) {
    to_srv_.clear();
    return false;
  }
  return true;
}

// Moves request body bytes from the client buffer to the server queue, re-chunking chunked
// bodies.
bool H1Connection::request_body() {
  if (req_done_) return false;
  BodyStep step = move_body(req_body_, req_left_, tx_->req_chunks, req_trailers_, cin_, to_srv_,
                            req_done_, req_rechunk_,
                            txn_.backend() && txn_.backend()->settings.h.drop_request_trailers);
  if (step == BodyStep::kBadChunk) {
    txn_.count_bad_request();
    if (txn_.req_sent == 0) {
      // Nothing of this request reached a server: a plain 400.
      to_srv_.clear();
      if (sc_) {
        w_.close_server_conn(sc_);
        txn_.server_fd = -1;
        txn_.server_ssl = nullptr;
        sc_ = nullptr;
      }
      leave_queue();
      reject_request(400, {Cause::kProxy, FinalState::kRequest});
    } else {
      txn_.status = 400;
      finish({Cause::kProxy, FinalState::kHeaders});
    }
    return true;
  }
  if (!req_done_ && c_eof_ && view_of(cin_).empty()) {
    // The client closed in the middle of its body.
    finish(phase_ == Phase::kExchange ? log::Termination{Cause::kClientClose, FinalState::kData} : log::Termination{Cause::kClientClose, FinalState::kConnect});
    return false;
  }
  if (cin_ && cin_->empty()) {
    w_.buffers().put(cin_);
    cin_ = nullptr;
  }
  return step == BodyStep::kProgress;
}

// ---------------------------------------------------------------------------------------------
// Server side

void H1Connection::connect_server() {
  phase_ = Phase::kConnect;
  if (last_srv_ && last_be_ == txn_.backend() &&
      (last_be_->settings.prefer_last_server || prefer_last_)) [[unlikely]]
    prefer_last_server();
  switch (txn_.leg().pick(txn_.lb_key())) {
    case BackendLeg::PickResult::kPicked:
      start_connect();
      return;
    case BackendLeg::PickResult::kFull:
      enter_queue();
      return;
    case BackendLeg::PickResult::kNone:
      server_error(503, {Cause::kServerClose, FinalState::kConnect});
      return;
  }
}

// option prefer-last-server (or a connection this client authenticated), as HAProxy: not with a
// hashing algorithm, and only while a connection to that server is still held (this client's
// own, or one in the idle pool that start_connect() would take).
void H1Connection::prefer_last_server() {
  const Proxy& be = *last_be_;
  if (lb::hashes(be.settings.balance.kind)) return;
  const int global = be.server_base + static_cast<int>(last_srv_->index());
  if ((private_ && private_->srv_global == global) || w_.has_idle(global))
    txn_.leg().prefer(last_srv_);
}

void H1Connection::enter_queue() {
  phase_ = Phase::kQueued;
  if (txn_.leg().enter_queue()) {
    start_connect();
    return;
  }
  arm_timeout();
}

void H1Connection::leave_queue() {
  if (phase_ != Phase::kQueued) return;
  txn_.leg().leave_queue();
  phase_ = Phase::kConnect;
}

bool H1Connection::retry_from_queue() {
  if (phase_ != Phase::kQueued) return true;
  if (!txn_.leg().take_queued_slot()) return false;
  phase_ = Phase::kConnect;
  start_connect();
  // Called by the worker outside any event of ours: a reused connection has no event coming.
  pump();
  return true;
}

void H1Connection::start_connect() {
  phase_ = Phase::kConnect;
  const int global = txn_.leg().server_global();
  // http-reuse: a private connection first (`never`, or one this client made private), then
  // the server's idle pool on this thread. A connection serves only a request that goes where
  // it was opened to, as HAProxy keys its idle connections: the same server, the same port (a
  // server without one of its own takes the stream's, which set-dst-port changes per request),
  // the same SNI (a TLS server), the same PROXY header (send-proxy: its connections are
  // private). A server with a fixed port compares a 0 with a 0.
  const lb::ServerSettings& ss = txn_.leg().server()->settings();
  const uint16_t dst_port = txn_.leg().mapped_port();
  std::string sni;
  if (ss.tls) [[unlikely]] {
    if (const auto* e = txn_.backend()->settings.sni_of(
            static_cast<std::size_t>(txn_.leg().server()->index())))
      txn_.server_sni(*tx_, *e, &sni);
  }
  // send-proxy: the PROXY protocol header, which goes first on a new connection.
  srv_preamble_.clear();
  if (ss.send_proxy) [[unlikely]] {
    std::vector<net::pp::Tlv> tlvs;
    if (ss.send_proxy == 2) txn_.render_pp2_tlvs(*tx_, &tlvs);
    srv_preamble_ = proxy_header_for(ss, txn_.client(), txn_.local_addr(), cio_.fd(),
                                     txn_.proxy_header(), txn_.unique_id, cio_.tls(),
                                     std::move(tlvs));
  }
  ServerConn* c = nullptr;
  using R = HttpSettings::Reuse;
  R mode = txn_.backend()->settings.h.reuse;
  if (private_) {
    if (private_->srv_global == global && private_->dst_port == dst_port &&
        private_->sni == sni && private_->sent_proxy_header() == srv_preamble_)
      c = private_;
    else
      w_.close_server_conn(private_);
    private_ = nullptr;
  }
  if (!c && mode != R::kNever && txn_.leg().retries() == 0) {
    if (mode == R::kAlways || !first_request_) c = w_.take_idle(global, false, dst_port, sni);
    else if (mode == R::kAggressive) c = w_.take_idle(global, true, dst_port, sni);
  }
  s_rd_ = s_eof_ = s_hup_ = s_err_ = s_shut_ = false;
  if (c) {
    if (ss.send_proxy) [[unlikely]] srv_preamble_.clear();   // it opened with this header
    sc_ = c;
    c->owner = this;
    reused_conn_ = true;
    txn_.reused_server_conn = true;
    s_connecting_ = false;
    txn_.leg().reuse();
    on_connected();
    return;
  }
  reused_conn_ = false;
  txn_.reused_server_conn = false;
  // The request is sent right after connect() (below): its first segment carries the ACK
  // (option tcp-smart-connect, on by default).
  net::ConnectOptions opts;
  opts.defer_ack = txn_.backend()->settings.smart_connect;
  opts.keepalive = txn_.backend()->settings.srv_keepalive;
  opts.rcvbuf = txn_.backend()->settings.srv_rcvbuf;
  opts.sndbuf = txn_.backend()->settings.srv_sndbuf;
  int fd = -1;
  ConnectError err;
  const BackendLeg::ConnectStatus st = txn_.leg().connect(opts, &fd, &err);
  if (st == BackendLeg::ConnectStatus::kFailed) {
    on_connect_failed(err);
    return;
  }
  auto* conn = new ServerConn;
  conn->w = &w_;
  conn->io.adopt(fd);
  conn->srv_global = global;
  conn->dst_port = dst_port;
  if (ss.send_proxy) [[unlikely]]
    conn->proxy_header = std::make_unique<const std::string>(srv_preamble_);
  conn->nolinger = txn_.backend()->settings.nolinger;
  conn->owner = this;
  sc_ = conn;
  if (!conn->io.watch(w_.loop(), conn)) {
    on_connect_failed(ConnectError::local(errno));
    return;
  }
  if (ss.tls) [[unlikely]] {
    // TLS: the handshake after the link is up, the PROXY header in clear before it; nothing of
    // the request leaves before the handshake is done.
    conn->sni = sni;
    stls_ = ServerTlsStart::make(w_, *ss.tls, global, fd, sni, std::move(srv_preamble_));
    srv_preamble_.clear();
    if (!stls_) {
      on_connect_failed(ConnectError::local(ENOMEM));
      return;
    }
  }
  if (ss.has_socks4) [[unlikely]] {
    // The proxy first: nothing of the request leaves before it has let the connection through.
    socks_ = std::make_unique<net::socks4::Handshake>(*txn_.leg().target());
    s_connecting_ = true;
    if (st == BackendLeg::ConnectStatus::kConnected) socks_step();
    else arm_timeout();
    return;
  }
  if (stls_) [[unlikely]] {
    s_connecting_ = true;
    if (st == BackendLeg::ConnectStatus::kConnected) tls_step();
    else arm_timeout();
    return;
  }
  if (st == BackendLeg::ConnectStatus::kConnected) {
    on_connected();
    return;
  }
  s_connecting_ = true;
  // On loopback and fast links the handshake is usually complete by now: sending the request
  // at once saves waiting for the connect event (one loop turn per new server connection).
  // Not yet connected: EAGAIN, and the connect event comes as usual; refused: the error.
  // Body bytes that came with the head are checked first: a bad chunk must still be a 400
  // with nothing sent (2.5).
  if (!req_done_) {
    request_body();
    if (phase_ != Phase::kConnect || sc_ != conn) return;
  }
  if (to_srv_.size() > 0) {
    bool ready = true;
    if (!srv_preamble_.empty() && !send_preamble(conn->io)) {
      if (errno != EAGAIN && errno != ENOTCONN) on_connect_failed(ConnectError::server(errno));
      else arm_timeout();
      return;
    }
    ssize_t n = write_some(conn->io, to_srv_, ready);
    if (n > 0) {
      on_connected();
      s_wr_ = ready;
      txn_.req_sent += static_cast<uint64_t>(n);
      return;
    }
    if (n == -2 && errno != ENOTCONN) {
      on_connect_failed(ConnectError::server(errno));
      return;
    }
  }
  arm_timeout();
}

bool H1Connection::send_preamble(net::RawTransport& io) {
  net::IoResult r = io.send(srv_preamble_.data(), srv_preamble_.size(), true);
  if (r.status == net::IoStatus::kOk) {
    srv_preamble_.erase(0, r.n);
    if (srv_preamble_.empty()) return true;
    errno = EAGAIN;
    return false;
  }
  errno = r.status == net::IoStatus::kAgain ? EAGAIN : r.err;
  return false;
}

bool H1Connection::socks_step() {
  switch (socks_->advance(sc_->io.fd())) {
    case net::socks4::Handshake::Step::kDone:
      socks_.reset();
      return link_ready();
    case net::socks4::Handshake::Step::kFailed:
      on_connect_failed(ConnectError::socks4(*socks_));
      return false;
    default:
      arm_timeout();   // the proxy's answer comes within timeout connect
      return false;
  }
}

bool H1Connection::link_ready() {
  if (stls_) [[unlikely]] return tls_step();
  on_connected();
  return true;
}

bool H1Connection::tls_step() {
  switch (stls_->advance(sc_->io)) {
    case ServerTlsStart::Step::kDone:
      stls_.reset();
      on_connected();
      s_rd_ = true;   // bytes that came with the handshake's end wait inside OpenSSL
      return true;
    case ServerTlsStart::Step::kFailed: {
      const ConnectError e = stls_->error();
      on_connect_failed(e);
      return false;
    }
    default:
      arm_timeout();   // the handshake is part of the connect: within timeout connect
      return false;
  }
}

void H1Connection::on_connected() {
  s_connecting_ = false;
  s_wr_ = true;
  txn_.leg().connected();
  txn_.server_fd = sc_->io.fd();
  txn_.server_ssl = sc_->io.tls();
  txn_.log_step(kLogConnect);
  s_last_ms_ = txn_.leg().connected_ms();
  phase_ = Phase::kExchange;
  tx_->res_parser.reset();
  tx_->res_parser.set_request_method(txn_.method());
  tx_->res_parser.set_relaxed(txn_.backend()->settings.h.accept_unsafe_responses);
  res_head_done_ = res_done_ = false;
  ++sc_->requests;
  txn_.count_server_request();
}

// A failed attempt (or an expired queue wait): the backend leg decides between another attempt
// and a 503.
void H1Connection::on_connect_failed(const ConnectError& e) {
  if (sc_) {
    w_.close_server_conn(sc_);
    txn_.server_fd = -1;
    txn_.server_ssl = nullptr;
    sc_ = nullptr;
  }
  s_connecting_ = false;
  srv_preamble_.clear();
  socks_.reset();
  stls_.reset();
  switch (txn_.leg().fail(e)) {
    case BackendLeg::RetryAction::kGiveUp:
      server_error(503, e.term());
      return;
    case BackendLeg::RetryAction::kNow:
      start_connect();
      return;
    case BackendLeg::RetryAction::kLater:
      phase_ = Phase::kConnect;
      w_.loop().timers().arm(timer_, txn_.leg().retry_due_ms());   // sc_ stays null until then
      return;
  }
}

bool H1Connection::write_server() {
  if (!sc_ || s_connecting_ || !s_wr_ || to_srv_.size() == 0) return false;
  if (w_.sends_batched()) {
    w_.queue_flush(this);
    return false;
  }
  const bool client_held = to_srv_.size() >= kHighWater;
  if (!srv_preamble_.empty()) [[unlikely]] {
    if (!send_preamble(sc_->io)) {
      if (errno == EAGAIN) {
        s_wr_ = false;
        return false;
      }
      txn_.leg().note_error(errno);
      if (!res_head_sent_) server_error(502, {Cause::kServerClose, FinalState::kHeaders});
      else server_abort({Cause::kServerClose, FinalState::kData});
      return false;
    }
  }
  ssize_t n = write_some(sc_->io, to_srv_, s_wr_);
  if (n > 0) {
    txn_.req_sent += static_cast<uint64_t>(n);
    s_last_ms_ = w_.loop().now_ms();
    if (client_held) c_last_ms_ = s_last_ms_;   // the same for a client held by a slow server
    return true;
  }
  if (n == -1) return false;
  txn_.leg().note_error(errno);
  // The server connection is dead. A reused idle connection that dies before answering makes
  // the client retry on a new connection of its own: closed silently, no response, no log
  // (RFC 9112 9.3.1), as HAProxy does.
  if (reused_conn_ && !res_head_sent_ && view_of(sin_).empty()) {
    txn_.quiet = true;
    finish({Cause::kServerClose, FinalState::kHeaders});
    return false;
  }
  if (!res_head_sent_) server_error(502, {Cause::kServerClose, FinalState::kHeaders});
  else server_abort({Cause::kServerClose, FinalState::kData});
  return false;
}

bool H1Connection::read_server() {
  if (!sc_ || s_connecting_ || s_eof_ || !s_rd_) return false;
  if (to_cli_.size() >= kHighWater) return false;
  if (!sin_ && !(sin_ = w_.buffers().try_get())) {
    out_of_memory();
    return false;
  }
  ssize_t n = read_some(sc_->io, sin_, s_rd_, s_hup_);
  if (n == -1) return false;
  if (n <= 0) {
    s_eof_ = true;
    if (n == -2) {
      s_err_ = true;
      txn_.leg().note_error(errno);
    }
    return true;
  }
  s_last_ms_ = w_.loop().now_ms();
  txn_.count_out(static_cast<uint64_t>(n));
  return true;
}

// The worker's buffer pool could not have memory (BufferPool::try_get): this connection cannot
// move bytes and ends as a resource failure (`R` in the log, HAProxy's letter; eint counted).
void H1Connection::out_of_memory() {
  txn_.count_internal_error();
  finish(phase_ == Phase::kIdle ? log::Termination{Cause::kResource, FinalState::kRequest} : log::Termination{Cause::kResource, FinalState::kData});
}

}  // namespace sluice::proxy

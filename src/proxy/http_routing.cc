// H1Connection, the request on its way to a server: frontend and backend rules, the backend
// choice, the request body, and the server side: its backend leg (pick, queue, connect, retries:
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
#include "proxy/server_pick.h"
#include "proxy/worker.h"

namespace sluice::proxy {

using namespace http_internal;
using log::Cause;
using log::FinalState;

// Frontend rules, backend choice, backend rules. False when the request was answered locally.
bool H1Connection::route(rules::HeadEdit& edit, rules::RequestView& view) {
  // deny / return: the proxy's page for the status, or the rule's own response.
  auto reply = [&](const rules::Verdict& v, int st, log::Termination term) {
    if (v.errorpage && http::has_error_page(st)) error_reply(st, term, false);
    else local_reply(st, term, reply_bytes(st, v), false);
  };
  auto answer = [&](const rules::Verdict& v, Proxy& px) {
    auto& pc = (&px == &fe_) ? w_.fe_counters(fe_.index) : w_.be_counters(px.index);
    if (v.kind != rules::Verdict::Kind::kContinue) skip_buffered_body();
    switch (v.kind) {
      case rules::Verdict::Kind::kContinue:
        return false;
      case rules::Verdict::Kind::kDeny: {
        pc.dreq.add();
        if (&px != &fe_) w_.fe_counters(fe_.index).dreq.add();
        reply(v, v.status ? v.status : 403, {Cause::kProxy, FinalState::kRequest});
        return true;
      }
      case rules::Verdict::Kind::kReturn:
        w_.fe_counters(fe_.index).intercepted.add();
        reply(v, v.status ? v.status : 200, {Cause::kLocal, FinalState::kRequest});
        return true;
      case rules::Verdict::Kind::kRedirect: {
        w_.fe_counters(fe_.index).intercepted.add();
        int st = v.status ? v.status : 302;
        local_reply(st, {Cause::kLocal, FinalState::kRequest}, redirect_bytes(st, v.location), false);
        return true;
      }
      case rules::Verdict::Kind::kService:
        w_.fe_counters(fe_.index).intercepted.add();
        serve_metrics(edit);
        return true;
    }
    return false;
  };

  const auto& fh = fe_.settings.h;
  // `monitor-uri`: before any rule, as in HAProxy; the answer is not logged.
  if (!fh.monitor_uri.empty() && edit.target == fh.monitor_uri) {
    skip_buffered_body();
    w_.fe_counters(fe_.index).intercepted.add();
    bool fail = false;
    for (const auto& c : fh.monitor_fail) fail = fail || c.eval(view);
    error_reply(fail ? 503 : 200, {Cause::kLocal, FinalState::kRequest}, false);
    logged_ = true;
    return false;
  }
  if (!fh.request_rules.empty()) {
    if (answer(rules::apply_rules(fh.request_rules, rules::RuleSide::kRequest, edit, view), fe_))
      return false;
  }
  if (serve_stats(fe_, edit)) return false;
  // use_backend sees the request as the frontend's rules left it (set-path...), as in HAProxy:
  // apply_rules worked on its own copy of the view.
  view.method = edit.method;
  view.target = edit.target;
  view.headers = &edit.headers;
  Proxy* be = fe_.target;
  for (const auto& u : fe_.settings.use_backends) {
    if (u.cond.eval(view)) {
      be = w_.process().proxies()[static_cast<std::size_t>(u.backend)].get();
      break;
    }
  }
  if (!be || !be->backend) {
    error_reply(503, {Cause::kServerClose, FinalState::kConnect}, false);
    return false;
  }
  be_ = be;
  leg_.attach(*be_);   // be_conns, stot, smax, session rate
  auto& bc = w_.be_counters(be_->index);
  bc.req_tot.add();
  bc.req_rate.add(w_.loop().now_ms());
  if (be_ != &fe_ && !be_->settings.h.request_rules.empty()) {
    if (answer(rules::apply_rules(be_->settings.h.request_rules, rules::RuleSide::kRequest, edit,
                                  view),
               *be_))
      return false;
  }
  if (be_ != &fe_ && serve_stats(*be_, edit)) return false;
  // The value `balance uri` / `balance hdr()` hashes.
  lb_key_.clear();
  const auto& bal = be_->settings.balance;
  if (bal.kind == lb::BalanceKind::kUri) {
    lb_key_ = std::string(rules::path_of(edit.target));
  } else if (bal.kind == lb::BalanceKind::kHdr) {
    for (const auto& h : edit.headers)
      if (http::iequals(h.name, bal.hdr_name)) {
        lb_key_ = std::string(h.value);
        break;
      }
  }
  return true;
}

bool H1Connection::build_server_head(rules::HeadEdit& edit, rules::RequestView& view) {
  using CM = HttpSettings::ConnMode;
  const auto& fh = fe_.settings.h;
  const auto& bh = be_->settings.h;
  // option forwardfor: added if either side asks, unless the client is in an `except` network
  // of a side that has the option; the backend's header name wins; if-none only when every
  // side with the option says so and the field is present. The field is appended after the
  // rules ran, never merged with an existing one, as HAProxy does.
  const bool fe_ff = fh.forwardfor.enabled, be_ff = be_ != &fe_ && bh.forwardfor.enabled;
  if (fe_ff || be_ff) {
    bool except = (fe_ff && fh.forwardfor.has_except && fh.forwardfor.except.contains(client_)) ||
                  (be_ff && bh.forwardfor.has_except && bh.forwardfor.except.contains(client_));
    const std::string& name = be_ff ? bh.forwardfor.header : fh.forwardfor.header;
    bool if_none = (!fe_ff || fh.forwardfor.if_none) && (!be_ff || bh.forwardfor.if_none);
    bool present = false;
    if (if_none) {
      for (const auto& h : edit.headers)
        if (http::iequals(h.name, name)) present = true;
    }
    bool unix_client = client_.family() == AF_UNIX;
    if (!except && !(if_none && present) && !unix_client) {
      edit.headers.push_back({edit.keep(name), edit.keep(client_.host_string())});
    }
  }
  const bool server_close_mode = fh.conn_mode == CM::kServerClose ||
                                 bh.conn_mode == CM::kServerClose || bh.conn_mode == CM::kClose;
  // An HTTP/1.0 chunked request closes its server connection too (2.4).
  server_close_ = server_close_mode || expect_tunnel_ || tx_->req_parser.head().force_close;
  if (!upgrade_) {
    if (server_close_mode && req_http11_) {
      edit.headers.push_back({"connection", "close"});
    } else if (!server_close_mode && !req_http11_) {
      edit.headers.push_back({"connection", "keep-alive"});
    }
  }
  (void)view;
  const http::RequestHead& head = tx_->req_parser.head();
  // The body is sent as the parser framed it: the fields the rules left are made to say so.
  // An HTTP/1.0 request cannot be chunked: a deleted length is put back instead. Without any
  // rule (and a forwardfor header with a framing name) the fields are as rewrite_framing()
  // left them: nothing to check.
  const bool rules_ran = !fh.request_rules.empty() || (be_ != &fe_ && !bh.request_rules.empty()) ||
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
      skip_buffered_body();
      error_reply(500, {Cause::kProxy, FinalState::kRequest}, false);
      return false;
  }
  std::string_view version = head.http11() ? std::string_view("HTTP/1.1") : head.version;
  to_srv_.clear();
  to_srv_off_ = 0;
  http::append_request_head(edit.method, edit.target, version, edit.headers, to_srv_);
  // Rewrites may use the tune.maxrewrite reserve that the head limit kept free, no more: a
  // rewritten head must fit a buffer (tune.bufsize), else HAProxy fails the rewrite with a 500
  // and sends nothing. Without a bound, rules could make a head many times what was received.
  if (to_srv_.size() > static_cast<std::size_t>(w_.process().settings().bufsize)) {
    to_srv_.clear();
    skip_buffered_body();
    error_reply(500, {Cause::kProxy, FinalState::kRequest}, false);
    return false;
  }
  return true;
}

// Moves request body bytes from the client buffer to the server queue, re-chunking chunked
// bodies.
bool H1Connection::request_body() {
  if (req_done_) return false;
  BodyStep step = move_body(req_body_, req_left_, tx_->req_chunks, req_trailers_, cin_, to_srv_,
                            to_srv_off_, req_done_, req_rechunk_);
  if (step == BodyStep::kBadChunk) {
    w_.fe_counters(fe_.index).ereq.add();
    if (req_sent_ == 0) {
      // Nothing of this request reached a server: a plain 400.
      to_srv_.clear();
      to_srv_off_ = 0;
      if (sc_) {
        w_.close_server_conn(sc_);
        sc_ = nullptr;
      }
      leave_queue();
      reject_request(400, {Cause::kProxy, FinalState::kRequest});
    } else {
      status_ = 400;
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
  switch (leg_.pick(&lb_key_)) {
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

void H1Connection::enter_queue() {
  phase_ = Phase::kQueued;
  if (leg_.enter_queue()) {
    start_connect();
    return;
  }
  arm_timeout();
}

void H1Connection::leave_queue() {
  if (phase_ != Phase::kQueued) return;
  leg_.leave_queue();
  phase_ = Phase::kConnect;
}

bool H1Connection::retry_from_queue() {
  if (phase_ != Phase::kQueued) return true;
  if (!leg_.take_queued_slot()) return false;
  phase_ = Phase::kConnect;
  start_connect();
  // Called by the worker outside any event of ours: a reused connection has no event coming.
  pump();
  return true;
}

void H1Connection::start_connect() {
  phase_ = Phase::kConnect;
  const int global = leg_.server_global();
  // http-reuse: a private connection first (`never`, or one this client made private), then
  // the server's idle pool on this thread.
  ServerConn* c = nullptr;
  using R = HttpSettings::Reuse;
  R mode = be_->settings.h.reuse;
  if (private_) {
    if (private_->srv_global == global) c = private_;
    else w_.close_server_conn(private_);
    private_ = nullptr;
  }
  if (!c && mode != R::kNever && leg_.retries() == 0) {
    if (mode == R::kAlways || !first_request_) c = w_.take_idle(global, false);
    else if (mode == R::kAggressive) c = w_.take_idle(global, true);
  }
  s_rd_ = s_eof_ = s_hup_ = s_err_ = s_shut_ = false;
  if (c) {
    sc_ = c;
    c->owner = this;
    reused_conn_ = true;
    s_connecting_ = false;
    leg_.reuse();
    on_connected();
    return;
  }
  reused_conn_ = false;
  // The request is sent right after connect() (below): its first segment carries the ACK
  // (option tcp-smart-connect, on by default).
  net::ConnectOptions opts;
  opts.defer_ack = be_->settings.smart_connect;
  opts.keepalive = be_->settings.srv_keepalive;
  int fd = -1;
  ConnectError err;
  const BackendLeg::ConnectStatus st = leg_.connect(opts, &fd, &err);
  if (st == BackendLeg::ConnectStatus::kFailed) {
    on_connect_failed(err);
    return;
  }
  auto* conn = new ServerConn;
  conn->w = &w_;
  conn->io.adopt(fd);
  conn->srv_global = global;
  conn->nolinger = be_->settings.nolinger;
  conn->owner = this;
  sc_ = conn;
  if (!conn->io.watch(w_.loop(), conn)) {
    on_connect_failed(ConnectError::local(errno));
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
  if (pending(to_srv_, to_srv_off_) > 0) {
    bool ready = true;
    ssize_t n = write_some(conn->io, to_srv_, to_srv_off_, ready);
    if (n > 0) {
      on_connected();
      s_wr_ = ready;
      req_sent_ += static_cast<uint64_t>(n);
      return;
    }
    if (n == -2 && errno != ENOTCONN) {
      on_connect_failed(ConnectError::server(errno));
      return;
    }
  }
  arm_timeout();
}

void H1Connection::on_connected() {
  s_connecting_ = false;
  s_wr_ = true;
  leg_.connected();
  s_last_ms_ = leg_.connected_ms();
  phase_ = Phase::kExchange;
  tx_->res_parser.reset();
  tx_->res_parser.set_request_method(req_method_);
  res_head_done_ = res_done_ = false;
  ++sc_->requests;
  leg_.server_counters().req_tot.add();
}

// A failed attempt (or an expired queue wait): the backend leg decides between another attempt
// and a 503.
void H1Connection::on_connect_failed(const ConnectError& e) {
  if (sc_) {
    w_.close_server_conn(sc_);
    sc_ = nullptr;
  }
  s_connecting_ = false;
  switch (leg_.fail(e)) {
    case BackendLeg::RetryAction::kGiveUp:
      server_error(503, e.term());
      return;
    case BackendLeg::RetryAction::kNow:
      start_connect();
      return;
    case BackendLeg::RetryAction::kLater:
      phase_ = Phase::kConnect;
      w_.loop().timers().arm(timer_, leg_.retry_due_ms());   // sc_ stays null until then
      return;
  }
}

bool H1Connection::write_server() {
  if (!sc_ || s_connecting_ || !s_wr_ || pending(to_srv_, to_srv_off_) == 0) return false;
  if (w_.sends_batched()) {
    w_.queue_flush(this);
    return false;
  }
  const bool client_held = pending(to_srv_, to_srv_off_) >= kHighWater;
  ssize_t n = write_some(sc_->io, to_srv_, to_srv_off_, s_wr_);
  if (n > 0) {
    req_sent_ += static_cast<uint64_t>(n);
    s_last_ms_ = w_.loop().now_ms();
    if (client_held) c_last_ms_ = s_last_ms_;   // the same for a client held by a slow server
    return true;
  }
  if (n == -1) return false;
  // The server connection is dead. A reused idle connection that dies before answering makes
  // the client retry on a new connection of its own: closed silently, no response, no log
  // (RFC 9112 9.3.1), as HAProxy does.
  if (reused_conn_ && !res_head_sent_ && view_of(sin_).empty()) {
    quiet_ = true;
    finish({Cause::kServerClose, FinalState::kHeaders});
    return false;
  }
  if (!res_head_sent_) server_error(502, {Cause::kServerClose, FinalState::kHeaders});
  else server_abort({Cause::kServerClose, FinalState::kData});
  return false;
}

bool H1Connection::read_server() {
  if (!sc_ || s_connecting_ || s_eof_ || !s_rd_) return false;
  if (pending(to_cli_, to_cli_off_) >= kHighWater) return false;
  if (!sin_ && !(sin_ = w_.buffers().try_get())) {
    out_of_memory();
    return false;
  }
  ssize_t n = read_some(sc_->io, sin_, s_rd_, s_hup_);
  if (n == -1) return false;
  if (n <= 0) {
    s_eof_ = true;
    s_err_ = s_err_ || n == -2;
    return true;
  }
  s_last_ms_ = w_.loop().now_ms();
  auto un = static_cast<uint64_t>(n);
  bytes_out_ += un;
  w_.fe_counters(fe_.index).bout.add(un);
  w_.be_counters(be_->index).bout.add(un);
  leg_.server_counters().bout.add(un);
  return true;
}

// The worker's buffer pool could not have memory (BufferPool::try_get): this connection cannot
// move bytes and ends as a resource failure (`R` in the log, HAProxy's letter; eint counted).
void H1Connection::out_of_memory() {
  w_.fe_counters(fe_.index).eint.add();
  finish(phase_ == Phase::kIdle ? log::Termination{Cause::kResource, FinalState::kRequest} : log::Termination{Cause::kResource, FinalState::kData});
}

}  // namespace sluice::proxy

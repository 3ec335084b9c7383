// H1Connection: tunnels, timeouts, the soft stop and closing.
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

// ---------------------------------------------------------------------------------------------
// Tunnel (101 Switching Protocols, 2xx to CONNECT): bytes flow untouched both ways.

void H1Connection::enter_tunnel() {
  phase_ = Phase::kTunnel;
  req_done_ = true;
  // Whatever already arrived after the heads belongs to the tunnel.
  to_cli_.body().splice(sin_);
  to_srv_.body().splice(cin_);
}

bool H1Connection::tunnel() {
  bool progress = false;
  progress |= read_client();
  if (phase_ == Phase::kClosed) return false;
  if (!view_of(cin_).empty()) {
    to_srv_.body().splice(cin_);
    progress = true;
  }
  progress |= write_server();
  if (phase_ == Phase::kClosed) return false;
  progress |= read_server();
  if (!view_of(sin_).empty()) {
    to_cli_.body().splice(sin_);
    progress = true;
  }
  progress |= write_client();
  if (phase_ == Phase::kClosed) return false;
  // Pass each FIN on once everything before it was delivered.
  if (c_eof_ && !s_shut_ && to_srv_.size() == 0 && sc_) {
    sc_->io.shutdown_write();
    s_shut_ = true;
    progress = true;
  }
  if (s_eof_ && !c_shut_ && to_cli_.size() == 0) {
    cio_.shutdown_write();
    c_shut_ = true;
    progress = true;
  }
  // The tunnel ends when both directions are done: each FIN read and passed on after its data.
  if (c_eof_ && s_eof_ && s_shut_ && c_shut_) {
    res_done_ = true;
    finish({Cause::kNone, FinalState::kNone});
    return false;
  }
  // A reset from the client: nothing more can reach it. A reset from the server: what it sent
  // before is still delivered to the client, then both close.
  if (c_err_ && c_eof_) {
    finish({Cause::kClientClose, FinalState::kData});
    return false;
  }
  if (s_err_ && s_eof_ && to_cli_.size() == 0) {
    finish({Cause::kServerClose, FinalState::kData});
    return false;
  }
  return progress;
}

// ---------------------------------------------------------------------------------------------
// Timeouts

uint64_t H1Connection::deadline() const {
  const Timeouts& fto = fe_.settings.timeouts;
  const Timeouts& bto = txn_.backend() ? txn_.backend()->settings.timeouts : fto;
  uint64_t d = 0;
  auto consider = [&d](uint64_t when) {
    if (when && (d == 0 || when < d)) d = when;
  };
  uint32_t http_req = fto.http_request ? fto.http_request : fto.client;
  switch (phase_) {
    case Phase::kIdle:
      // Soft stop: a connection with no request byte yet waits for it a short while only.
      if (stop_grace_ms_ && !txn_.t_first_byte_ms) consider(stop_grace_ms_);
      if (body_wait_until_) consider(body_wait_until_);
      if (first_request_) {
        if (http_req) consider(txn_.t_idle_ms + http_req);
      } else if (txn_.t_first_byte_ms) {
        // Counted from the end of the previous response, not from this request's first byte
        // (3.4): a slow client gets no more than http-request for its whole head.
        if (http_req) consider(txn_.t_idle_ms + http_req);
      } else {
        uint32_t ka = fto.http_keep_alive ? fto.http_keep_alive : http_req;
        if (ka) consider(txn_.t_idle_ms + ka);
      }
      return d;
    case Phase::kTarpit:
      return tarpit_until_;
    case Phase::kQueued:    // timeout queue
    case Phase::kConnect:   // timeout connect, or the due time of a retry
      return txn_.leg().deadline();
    case Phase::kExchange: {
      // set-timeout client|server replaces the proxies' for this request.
      const uint32_t cli = txn_.timeout(rules::StreamEdit::kClient, fto.client);
      const uint32_t srv = txn_.timeout(rules::StreamEdit::kServer, bto.server);
      if (client_timeout_runs() && cli) consider(c_last_ms_ + cli);
      if (server_timeout_runs() && srv) consider(s_last_ms_ + srv);
      if (res_wait_ && res_wait_until_) consider(res_wait_until_);
      return d;
    }
    case Phase::kTunnel: {
      uint32_t t = txn_.timeout(rules::StreamEdit::kTunnel, bto.tunnel);
      if (t) return std::max(c_last_ms_, s_last_ms_) + t;
      const uint32_t cli = txn_.timeout(rules::StreamEdit::kClient, fto.client);
      const uint32_t srv = txn_.timeout(rules::StreamEdit::kServer, bto.server);
      if (cli) consider(c_last_ms_ + cli);
      if (srv) consider(s_last_ms_ + srv);
      return d;
    }
    case Phase::kClosing:
      if (fto.client) consider(c_last_ms_ + fto.client);
      return d;
    case Phase::kLinger:
      return linger_until_ms_;
    case Phase::kClosed:
      return 0;
  }
  return d;
}

// In an exchange, each side's timeout runs only while sluice waits on that side: for bytes
// it sends there, or for bytes to read from it. A side that sluice stopped reading because the
// other side is slow to take what it already sent (kHighWater) is not idle by its own doing: a
// client that reads a large response slowly is a client timeout (cD), not the server's (sD),
// and a server that reads an upload slowly is not the client's timeout.
bool H1Connection::client_timeout_runs() const {
  if (to_cli_.size() > 0) return true;
  return !req_done_ && to_srv_.size() < kHighWater;
}

bool H1Connection::server_timeout_runs() const {
  if (!sc_) return false;
  if (to_srv_.size() > 0) return true;
  return !res_done_ && to_cli_.size() < kHighWater;
}

void H1Connection::arm_timeout() {
  if (phase_ == Phase::kClosed) return;
  w_.loop().timers().arm_lazy(timer_, deadline());
}

void H1Connection::on_timer(core::Timer&) {
  if (phase_ == Phase::kClosed) return;
  ++txn_.calls;
  uint64_t now = w_.loop().now_ms();
  uint64_t d = deadline();
  if (d == 0) return;
  if (now < d) {
    w_.loop().timers().arm(timer_, d);
    return;
  }
  const Timeouts& fto = fe_.settings.timeouts;
  switch (phase_) {
    case Phase::kIdle: {
      if (body_wait_ && body_wait_until_ && now >= body_wait_until_) {
        // wait-for-body's time: wait_body() decides whether what came is enough.
        body_wait_until_ = 0;
        body_wait_expired_ = true;
        pump();
        return;
      }
      bool received = cin_ && cin_->size() > 0 &&
                      view_of(cin_).find_first_not_of("\r\n") != std::string_view::npos;
      if (stop_grace_ms_ && !received && now >= stop_grace_ms_) {
        // Soft stop, and no request came in the grace: closed with a FIN, silently.
        txn_.quiet = true;
        begin_linger();
        pump();
        return;
      }
      if (!received && first_request_ && fe_.settings.h.ignore_probes) {
        // option http-ignore-probes: a pre-connection that never carried a request is closed
        // silently, without a 408, a log line or an error counted.
        txn_.quiet = true;
        finish({Cause::kClientTimeout, FinalState::kRequest});
        return;
      }
      if (body_wait_) {
        // The head came, its body did not (http-buffer-request, wait-for-body, a stats POST).
        body_wait_ = false;
        body_timeout(tx_->req_parser.head());
        pump();
        return;
      }
      if (received || first_request_) {
        // timeout http-request: 408 and close, logged `cR--`, when a byte of this request
        // came or it is the connection's first; an idle later one closes silently, unlogged.
        if (!received && fe_.settings.dontlognull) txn_.quiet = true;
        txn_.count_bad_request();
        txn_.req_line = "<BADREQ>";
        if (txn_.t_first_byte_ms == 0) {
          txn_.t_first_byte_ms = txn_.t_idle_ms;
          txn_.t_first_byte_wall_us = base::wall_us() - (now - txn_.t_idle_ms) * 1000;
        }
        if (cin_) cin_->reset();
        error_reply(408, {Cause::kClientTimeout, FinalState::kRequest}, true);
        pump();
        return;
      }
      txn_.quiet = true;   // keep-alive expiry: silent close
      finish({Cause::kClientTimeout, FinalState::kRequest});
      return;
    }
    case Phase::kTarpit:
      reply(std::move(tx_->reply));
      pump();
      return;
    case Phase::kQueued:
      // An expired queue wait counts as a failed connection, as in HAProxy: a 503 (sQ).
      on_connect_failed(ConnectError::queue_timeout());
      pump();
      return;
    case Phase::kConnect:
      if (txn_.leg().state() == BackendLeg::State::kRetryWait) {
        start_connect();
      } else {
        on_connect_failed(ConnectError::connect_timeout());
      }
      pump();
      return;
    case Phase::kExchange: {
      if (res_wait_ && res_wait_until_ && now >= res_wait_until_) {
        // wait-for-body's time: wait_response_body() decides whether what came is enough.
        res_wait_until_ = 0;
        res_wait_expired_ = true;
        pump();
        return;
      }
      const Timeouts& bto = txn_.backend() ? txn_.backend()->settings.timeouts : fto;
      const uint32_t srv = txn_.timeout(rules::StreamEdit::kServer, bto.server);
      bool server_expired = server_timeout_runs() && srv && now >= s_last_ms_ + srv;
      if (server_expired) {
        if (!res_head_sent_) {
          server_error(504, {Cause::kServerTimeout, FinalState::kHeaders});
          pump();
        } else {
          server_abort({Cause::kServerTimeout, FinalState::kData});
          pump();
        }
        return;
      }
      finish(res_head_sent_ ? log::Termination{Cause::kClientTimeout, FinalState::kData} : (req_done_ ? log::Termination{Cause::kClientTimeout, FinalState::kHeaders} : log::Termination{Cause::kClientTimeout, FinalState::kData}));
      return;
    }
    case Phase::kTunnel: {
      const uint32_t cli = txn_.timeout(rules::StreamEdit::kClient, fto.client);
      finish(cli && now >= c_last_ms_ + cli ? log::Termination{Cause::kClientTimeout, FinalState::kData} : log::Termination{Cause::kServerTimeout, FinalState::kData});
      return;
    }
    case Phase::kClosing:
    case Phase::kLinger:
      close_now();
      return;
    case Phase::kClosed:
      return;
  }
}

// ---------------------------------------------------------------------------------------------
// Ending

void H1Connection::flush_sends() {
  if (phase_ != Phase::kClosed) pump();
}

void H1Connection::on_soft_stop() {
  // Every response from now on says `connection: close` (soft_stop_ is part of that decision).
  soft_stop_ = true;
  // A keep-alive connection between two requests may have the next one on the wire, or its
  // client may be about to send it: closing it now would lose that request. It gets
  // kStopGraceMs for it to arrive; it is then served with `connection: close`, and a connection
  // that stays idle is closed with a FIN (lingering, so that a request crossing the FIN meets
  // no reset and the client can retry it). A connection that has not sent its first request
  // yet was accepted for a request on its way (often just before a reload): HAProxy serves it
  // whenever it comes, within the usual http-request timeout.
  // option idle-close-on-response: it waits for its next request within the usual keep-alive
  // timeout (and hard-stop-after), as HAProxy's did before 2.4.
  if (phase_ == Phase::kIdle && !first_request_ && !txn_.t_first_byte_ms &&
      !fe_.settings.h.idle_close_on_response) {
    stop_grace_ms_ = w_.loop().now_ms() + kStopGraceMs;
    arm_timeout();
  }
}

// The last bytes of a closing connection are out. A soft-stopping process lingers (see
// begin_linger()); otherwise the connection closes at once, as before.
void H1Connection::close_after_last_bytes() {
  if (soft_stop_ && !c_eof_ && !fe_.settings.nolinger) {
    begin_linger();
  } else {
    close_now();
  }
}

// Sends the FIN (with any corked last bytes), then reads and drops what the client still sends
// until its own FIN, for at most kLingerMs: a close() with unread input would reset the
// connection, and a client could neither read the last response reliably nor know that its
// next request was never seen.
void H1Connection::begin_linger() {
  txn_.logged = true;   // as in close_now(): a closing transaction was logged already
  cio_.shutdown_write();
  c_shut_ = true;
  phase_ = Phase::kLinger;
  linger_until_ms_ = w_.loop().now_ms() + kLingerMs;
  detach_server(false);
  txn_.release_backend();
  if (cin_) {
    w_.buffers().put(cin_);
    cin_ = nullptr;
  }
  c_rd_ = true;   // input may already wait: its edge was consumed
  arm_timeout();
}

bool H1Connection::linger() {
  if (!c_rd_) return false;
  char drop[4096];
  for (;;) {
    net::IoResult r = cio_.recv(drop, sizeof drop);
    if (r.status == net::IoStatus::kOk) continue;
    if (r.status == net::IoStatus::kAgain) {
      c_rd_ = false;
      return false;
    }
    close_now();   // the client's FIN (or an error): nothing is left unread
    return false;
  }
}

void H1Connection::describe(SessionInfo* info) const {
  info->listener = &l_;
  info->backend = txn_.backend();
  info->server = txn_.leg().server();
  info->client = txn_.client();
  info->accept_ms = t_accept_ms_;
  info->expire_ms = phase_ == Phase::kClosed ? 0 : deadline();
  // The current transaction's bytes: HAProxy's streams are per request too.
  info->bytes_in = txn_.req_sent;
  info->bytes_out = txn_.bytes_out;
  info->requests = requests_;
  switch (phase_) {
    case Phase::kIdle: info->state = txn_.t_first_byte_ms ? "REQ" : "IDLE"; break;
    case Phase::kTarpit: info->state = "TARPIT"; break;
    case Phase::kQueued: info->state = "QUEUED"; break;
    case Phase::kConnect: info->state = "CON"; break;
    case Phase::kExchange: info->state = "EST"; break;
    case Phase::kTunnel: info->state = "TUNNEL"; break;
    case Phase::kClosing: info->state = "CLOSING"; break;
    case Phase::kLinger: info->state = "LINGER"; break;
    case Phase::kClosed: info->state = "CLO"; break;
  }
  info->client_fd = cio_.fd();
  info->server_fd = sc_ ? sc_->io.fd() : -1;
}

void H1Connection::abort(const char* reason) {
  (void)reason;
  finish({Cause::kKilled, FinalState::kData});
}

// Closing after the last response was flushed: the transaction was already logged.
void H1Connection::close_now() {
  txn_.logged = true;
  finish({Cause::kNone, FinalState::kNone});
}

void H1Connection::finish(log::Termination term) {
  if (phase_ == Phase::kClosed) return;
  leave_queue();
  txn_.count_response_status();
  // Tunnelled server bytes were counted when read; those still queued now never reached the
  // client, and the log line (%B) and the byte counters say what was delivered.
  if (phase_ == Phase::kTunnel) txn_.uncount_out(to_cli_.size());
  if (txn_.term.ended_normally() && !term.ended_normally()) {
    txn_.term = term;
  }
  // A transaction cut short is logged now (unless it ended silently).
  if (!txn_.logged && !txn_.quiet && (txn_.t_first_byte_ms || txn_.status != -1 || !term.ended_normally())) {
    txn_.log(w_.loop().now_ms());
  }
  // An abort while either message was still moving: a response not complete, or a request body
  // still being forwarded after the response ended (a server answering early, then closing).
  if (txn_.backend() && (!res_done_ || !req_done_)) txn_.count_abort(term);
  phase_ = Phase::kClosed;
  w_.unqueue_flush(this);
  w_.loop().timers().cancel(timer_);
  // option nolinger: a reset instead of the FIN, last bytes pushed first (CloseMode::kPushReset).
  cio_.close(close_mode_ != net::CloseMode::kPushedFin ? close_mode_
             : fe_.settings.nolinger                   ? net::CloseMode::kPushReset
                                                       : net::CloseMode::kPushedFin);
  if (sc_) {
    w_.close_server_conn(sc_);
    txn_.server_fd = -1;
    txn_.server_ssl = nullptr;
    sc_ = nullptr;
  }
  if (private_) {
    w_.close_server_conn(private_);
    private_ = nullptr;
  }
  if (cin_) w_.buffers().put(cin_);
  if (sin_) w_.buffers().put(sin_);
  cin_ = sin_ = nullptr;
  to_cli_.clear();
  to_srv_.clear();
  release_codecs();
  txn_.release_backend();
  w_.release_thread_load(l_);
  w_.session_closed(this);
}

}  // namespace sluice::proxy

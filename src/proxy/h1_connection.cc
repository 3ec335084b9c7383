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
#include "proxy/http_limits.h"
#include "net/socket.h"
#include "net/transport.h"
#include "proxy/server_pick.h"
#include "proxy/worker.h"

namespace sluice::proxy {

using namespace http_internal;
using log::Cause;
using log::FinalState;


H1Connection::H1Connection(Worker& w, Listener& l, int fd, const net::SocketAddress& client)
    : w_(w),
      l_(l),
      fe_(*l.proxy),
      cio_(fd),
      to_srv_(w.buffers()),
      to_cli_(w.buffers()),
      t_accept_ms_(w.loop().now_ms()),
      c_last_ms_(t_accept_ms_),
      s_last_ms_(t_accept_ms_),
      txn_(w, l, *this, client),
      timer_(this) {
  cend_.s = this;
  txn_.set_client_fd(fd);
}


void H1Connection::start_codecs() {
  // tune.bufsize, tune.maxrewrite and tune.http.maxhdr.
  http::Limits lim = http_limits(w_.process().settings());
  http::Limits req = lim;
  req.accept_unsafe_requests = fe_.settings.h.accept_unsafe_requests;
  auto& spares = w_.spare_codecs();
  if (spares.empty()) {
    tx_ = std::make_unique<HttpCodecs>(req, lim);
    return;
  }
  tx_ = std::move(spares.back());
  spares.pop_back();
  unpark_queue(to_cli_.heads_storage(), tx_->parked_to_cli);
  unpark_queue(to_srv_.heads_storage(), tx_->parked_to_srv);
  tx_->req_parser.set_limits(req);
  tx_->req_parser.reset();
  tx_->res_parser.set_limits(lim);
  tx_->res_parser.reset();
  tx_->req_chunks.reset();
  tx_->res_chunks.reset();
}

void H1Connection::release_codecs() {
  // A keep-alive request then allocates neither the object nor its field lists (they keep their
  // storage). Bounded: a burst does not leave its codecs behind.
  constexpr std::size_t kSpareCodecs = 64;
  if (!tx_) return;
  txn_.codecs_released();
  park_queue(to_cli_.heads_storage(), tx_->parked_to_cli);   // freed with the codecs when they are not kept
  park_queue(to_srv_.heads_storage(), tx_->parked_to_srv);
  auto& spares = w_.spare_codecs();
  if (spares.size() < kSpareCodecs) {
    tx_->req_copy = rules::HeadEdit{};   // its strings belong to the transaction that ended
    tx_->lb_key.clear();   // (the reply's bytes were moved out when it was sent)
    tx_->txn_vars.clear();
    tx_->req_vars.clear();
    tx_->res_vars.clear();
    for (rules::HeadEdit* e : {&tx_->req_edit, &tx_->res_edit}) {
      e->headers.clear();   // views into buffers that are gone; the storage stays
      e->storage.clear();
    }
    spares.push_back(std::move(tx_));
  }
  tx_.reset();
}

H1Connection::~H1Connection() { SLUICE_ASSERT(phase_ == Phase::kClosed); }

void H1Connection::start() {
  if (!cio_.watch(w_.loop(), &cend_)) {
    txn_.count_internal_error();
    txn_.quiet = true;
    finish({Cause::kProxy, FinalState::kRequest});
    return;
  }
  const auto& s = fe_.settings;
  if (!s.tcp_session_rules.empty()) {
    // As HAProxy: refused before a stream exists, so nothing is logged; a reject closes with
    // a FIN (what the client sent is read first, so that the close is no reset), a
    // silent-drop with a reset.
    const rules::TcpVerdict v = txn_.session_verdict(cio_.fd());
    if (v != rules::TcpVerdict::kAccept) {
      txn_.quiet = true;
      txn_.logged = true;
      if (v == rules::TcpVerdict::kSilentDrop) {
        if (txn_.rst_ttl) net::silence_close(cio_.fd(), txn_.rst_ttl);
        close_mode_ = net::CloseMode::kReset;
      } else {
        net::discard_input(cio_);
      }
      finish({Cause::kProxy, FinalState::kRequest});
      return;
    }
  }
  if (!s.log_format && !s.logs.empty()) {
    std::string local = l_.addr.kind == net::ListenAddress::Kind::kInet ? l_.addr.addr.to_string()
                                                                          : l_.addr.text;
    w_.logs().send(s.logs, kInfo,
                   fmt::format("Connect from {} to {} ({}/HTTP)", txn_.client().to_string(), local,
                               s.name));
  }
  arm_timeout();
}

// ---------------------------------------------------------------------------------------------
// Event plumbing

void H1Connection::on_client_io(uint32_t events) {
  if (phase_ == Phase::kClosed) return;
  ++txn_.calls;
  const net::Readiness r = net::decode_readiness(events);
  if (r.readable()) c_rd_ = true;
  if (r.writable()) c_wr_ = true;
  if (r.peer_closed()) c_hup_ = true;
  // A hang-up alone (both directions shut, as after a half-close each way) is an end of stream,
  // not an error: the bytes before it are still read and forwarded. A reset comes with an
  // error, and a failed read or write says so too.
  if (r.error()) client_error_event();
  pump();
}

void H1Connection::client_failed(int err) {
  if (!txn_.fc_err) txn_.fc_err = static_cast<uint8_t>(log::conn_error_of_errno(err));
}

void H1Connection::client_error_event() {
  c_err_ = true;
  if (!txn_.fc_err) client_failed(cio_.connect_error());   // the socket's pending error
}

void H1Connection::on_server_io(uint32_t events) {
  if (phase_ == Phase::kClosed) return;
  ++txn_.calls;
  if (!sc_) {
    // Our private idle connection (http-reuse never) was closed by the server, or it sent bytes
    // nobody asked for (room to write alone says nothing: see ServerConn::on_io()).
    if (private_ && net::decode_readiness(events).readable()) {
      w_.close_server_conn(private_);
      private_ = nullptr;
    }
    return;
  }
  const net::Readiness r = net::decode_readiness(events);
  if (s_connecting_) {
    // Connected to a SOCKS4 proxy that has the request: its answer (or its close) is read.
    // In a TLS handshake that waits for the server, its bytes (or its close) are.
    const bool socks_reply = socks_ && socks_->step() == net::socks4::Handshake::Step::kReceive;
    const bool tls_reply = !socks_ && stls_ && stls_->wants_read();
    if (r.hangup_or_error() && !socks_reply && !tls_reply) {
      int err = sc_->io.connect_error();
      on_connect_failed(ConnectError::server(err ? err : ECONNREFUSED));
      pump();
      return;
    }
    if (tls_reply ? !(r.readable() || r.hangup_or_error())
                  : socks_reply ? !r.readable() : !r.writable())
      return;
    if (socks_ ? !socks_step() : !link_ready()) {
      pump();
      return;
    }
  }
  if (r.readable()) s_rd_ = true;
  if (r.writable()) s_wr_ = true;
  if (r.peer_closed()) {
    s_hup_ = true;
    // The server has closed (or failed): closing it now leaves no TIME_WAIT here.
    if (sc_) sc_->reset_on_close = false;
  }
  if (r.error()) s_err_ = true;   // as on the client side: a hang-up is no error
  pump();
}

void H1Connection::pump() {
  // Re-entered from a state change made inside a step (a queued session getting its slot):
  // the running loop sees the new state on its next turn.
  if (in_pump_) return;
  in_pump_ = true;
  for (int guard = 0; guard < 1000; ++guard) {
    bool progress = step();
    if (phase_ == Phase::kClosed) return;
    // Body bytes found no pooled buffer to go into: some are lost, the connection cannot go on.
    if (to_cli_.failed() || to_srv_.failed()) [[unlikely]] {
      out_of_memory();
      return;
    }
    if (!progress) break;
  }
  in_pump_ = false;
  arm_timeout();
}

bool H1Connection::step() {
#define SLUICE_STEP(call)                       \
  do {                                          \
    progress |= (call);                         \
    if (phase_ == Phase::kClosed) return false; \
  } while (0)
  bool progress = false;
  switch (phase_) {
    case Phase::kIdle:
      SLUICE_STEP(read_client());
      SLUICE_STEP(parse_request());
      // A `100 Continue` for a body awaited before the transaction (wait_body()).
      if (phase_ == Phase::kIdle && body_wait_) SLUICE_STEP(write_client());
      break;
    case Phase::kTarpit:
      // Nothing to do but wait for the timer; a client that resets gives up the answer.
      if (c_err_) {
        finish({Cause::kClientClose, FinalState::kTarpit});
        return false;
      }
      break;
    case Phase::kQueued:
    case Phase::kConnect:
      // option abortonclose: a client that closed its side no longer waits for the answer.
      if (c_err_ || ((c_hup_ || c_eof_) && aborts_on_close())) {
        finish(phase_ == Phase::kQueued ? log::Termination{Cause::kClientClose, FinalState::kQueue} : log::Termination{Cause::kClientClose, FinalState::kConnect});
        return false;
      }
      SLUICE_STEP(read_client());
      SLUICE_STEP(request_body());
      break;
    case Phase::kExchange:
      SLUICE_STEP(read_client());
      SLUICE_STEP(request_body());
      SLUICE_STEP(write_server());
      SLUICE_STEP(read_server());
      if (phase_ == Phase::kExchange && !res_head_done_) SLUICE_STEP(parse_response());
      // The body right after its head, so that both leave in one write.
      if (phase_ == Phase::kExchange && res_head_done_) SLUICE_STEP(response_body());
      SLUICE_STEP(write_client());
      if (phase_ == Phase::kExchange && req_done_ && res_done_ && to_cli_.size() == 0) {
        end_transaction();
        return phase_ != Phase::kClosed;
      }
      if (phase_ == Phase::kExchange && c_err_ && !res_done_) {
        // The client reset the connection while its request was being served. Before any
        // response byte HAProxy logs it as a 400 with the termination state `CH--`.
        if (!res_head_sent_ && txn_.status == -1) txn_.status = 400;
        finish(res_head_sent_ ? log::Termination{Cause::kClientClose, FinalState::kData} : log::Termination{Cause::kClientClose, FinalState::kHeaders});
        return false;
      }
      break;
    case Phase::kTunnel:
      SLUICE_STEP(tunnel());
      break;
    case Phase::kClosing:
      SLUICE_STEP(write_client());
      if (to_cli_.size() == 0) {
        close_after_last_bytes();
        return phase_ == Phase::kLinger;
      }
      break;
    case Phase::kLinger:
      SLUICE_STEP(linger());
      break;
    case Phase::kClosed:
      return false;
  }
  return progress;
#undef SLUICE_STEP
}

// ---------------------------------------------------------------------------------------------
// Client side

bool H1Connection::read_client() {
  if (c_eof_ || !c_rd_) return false;
  // Only what the current state can use: a request head, its body, or tunnelled bytes.
  // Pipelined requests wait in the kernel until the current transaction ends.
  bool want = phase_ == Phase::kIdle || phase_ == Phase::kTunnel ||
              ((phase_ == Phase::kQueued || phase_ == Phase::kConnect ||
                phase_ == Phase::kExchange) && !req_done_);
  if (!want) return false;
  if (phase_ != Phase::kIdle && to_srv_.size() >= kHighWater) return false;
  if (!cin_ && !(cin_ = w_.buffers().try_get())) {
    out_of_memory();
    return false;
  }
  ssize_t n = read_some(cio_, cin_, c_rd_, c_hup_);
  if (n == -1) {
    // Nothing there (the speculative read after a keep-alive response finds nothing): an empty
    // buffer goes back, so that an idle connection holds none.
    if (cin_->empty()) {
      w_.buffers().put(cin_);
      cin_ = nullptr;
    }
    return false;
  }
  if (n <= 0) {
    c_eof_ = true;
    if (n == -2) {
      c_err_ = true;
      client_failed(errno);
    }
    return true;
  }
  uint64_t now = w_.loop().now_ms();
  c_last_ms_ = now;
  if (phase_ == Phase::kIdle && txn_.t_first_byte_ms == 0 &&
      view_of(cin_).find_first_not_of("\r\n") != std::string_view::npos) {
    // CR/LF between requests do not start one (3.4): the keep-alive timeout still runs.
    txn_.first_byte(now);
  }
  txn_.count_in(static_cast<uint64_t>(n));
  return true;
}

bool H1Connection::write_client() {
  if (to_cli_.size() == 0 || !c_wr_) return false;
  if (w_.sends_batched()) {
    w_.queue_flush(this);
    return false;
  }
  // The bytes that end the connection: a closing reply, or the end of the last response (pump
  // then ends the transaction and end_transaction() closes at once). They are corked, and
  // finish() sends them with the FIN by shutdown() before close(): not by close() alone, which
  // resets the connection instead when unread client input is left (a client still sending a
  // body after an error, or after its own "close"), and would then drop the corked bytes.
  const bool last = phase_ == Phase::kClosing ||
                    (phase_ == Phase::kExchange && req_done_ && res_done_ &&
                     closes_after_transaction());
  const bool server_held = to_cli_.size() >= kHighWater;
  ssize_t n = write_some(cio_, to_cli_, c_wr_, last);
  // The server was not read while the client was slow (server_timeout_runs()): its idle time
  // starts again from here, as HAProxy re-arms a read timeout when reading resumes.
  if (n > 0 && server_held) s_last_ms_ = w_.loop().now_ms();
  if (n > 0 && res_head_unsent_ && to_cli_.begin() > res_head_at_) {
    res_head_unsent_ = false;
    txn_.count_response_status();
  }
  if (n > 0) {
    c_last_ms_ = w_.loop().now_ms();
    txn_.res_sent += static_cast<uint64_t>(n);
    return true;
  }
  if (n == -1) return false;
  // The client is gone.
  client_failed(errno);
  if (phase_ == Phase::kClosing) {
    close_now();
  } else {
    finish(res_done_ ? log::Termination{Cause::kClientClose, FinalState::kLast} : log::Termination{Cause::kClientClose, FinalState::kData});
  }
  return false;
}

bool H1Connection::parse_request() {
  if (body_wait_) return wait_body();
  std::string_view in = view_of(cin_);
  if (std::size_t blank = std::min(in.find_first_not_of("\r\n"), in.size()); blank > 0) {
    // CR/LF before a request line are skipped in any number (1.1): dropped here so that they
    // never fill the buffer and turn into a 431. The parser may have scanned them: it starts
    // over on what is left, which begins with the request line.
    consume(cin_, blank);
    if (tx_) tx_->req_parser.reset();
    in = view_of(cin_);
  }
  if (in.empty()) {
    if (c_eof_) {
      // Closed between requests: silent after a keep-alive response; on a fresh connection
      // HAProxy logs it as a 400 CR that nobody receives.
      // option http-ignore-probes: a browser's pre-connection that was never used.
      if (!first_request_ || fe_.settings.dontlognull || fe_.settings.h.ignore_probes)
        txn_.quiet = true;
      txn_.status = first_request_ ? 400 : -1;
      if (!txn_.quiet) txn_.req_line = "<BADREQ>";
      finish({Cause::kClientClose, FinalState::kRequest});
    }
    return false;
  }
  if (!tx_) start_codecs();
  switch (tx_->req_parser.parse(in)) {
    case http::ParseStatus::kIncomplete:
      if (c_eof_) {
        // Only blank lines so far count as nothing received.
        bool blank = in.find_first_not_of("\r\n") == std::string_view::npos;
        if (blank && !first_request_) txn_.quiet = true;
        if (blank && fe_.settings.dontlognull) txn_.quiet = true;
        txn_.status = 400;
        txn_.req_line = "<BADREQ>";
        if (!blank) txn_.count_bad_request();
        finish({Cause::kClientClose, FinalState::kRequest});
        return false;
      }
      if (cin_->room() == 0 && cin_->head == 0) {
        // The head does not fit in a buffer.
        txn_.capture_error(false, in, http::ParseError::kHeadTooLarge);
        reject_request(431, {Cause::kProxy, FinalState::kRequest});
        return true;
      }
      return false;
    case http::ParseStatus::kError: {
      txn_.capture_error(false, in, tx_->req_parser.error());
      int status = tx_->req_parser.error_status();
      // The HTTP/2 preface on a connection that already carried HTTP/1 requests (2.8).
      // option disable-h2-upgrade: on the first request too, the preface is a method not
      // allowed (HAProxy 3.5's answer; sluice does not speak HTTP/2 and refuses it otherwise).
      if (tx_->req_parser.error() == http::ParseError::kPriMethod &&
          (!first_request_ ||
           (fe_.settings.h.disable_h2_upgrade && in.starts_with("PRI * HTTP/2.0\r\n"))))
        status = 405;
      reject_request(status, {Cause::kProxy, FinalState::kRequest});
      return true;
    }
    case http::ParseStatus::kComplete:
      // A violation let through by accept-unsafe-violations-in-http-request is still recorded
      // for `show errors`, as HAProxy records it.
      if (tx_->req_parser.tolerated() != http::ParseError::kNone)
        txn_.capture_error(false, in, tx_->req_parser.tolerated());
      if (tx_->req_parser.glitch() && glitch_limit()) return true;
      if (txn_.wants_body_first(tx_->req_parser.head())) {
        body_wait_ = true;
        body_wait_expired_ = false;
        // wait-for-body: its time, unless something else wants the whole body.
        body_wait_until_ = !fe_.buffer_bodies && fe_.body_wait_ms &&
                                   tx_->req_parser.head().body != http::BodyKind::kNone
                               ? w_.loop().now_ms() + fe_.body_wait_ms
                               : 0;
        // A client waiting for `100 Continue` before it sends the body is told to go on; the
        // server will not be asked again (begin_transaction() drops the Expect field).
        if (tx_->req_parser.head().expect_continue) {
          to_cli_.append("HTTP/1.1 100 Continue\r\n\r\n");
          continue_sent_ = true;
        }
        wait_body();
        return true;
      }
      begin_transaction();
      return true;
  }
  return false;
}

// A head with a protocol glitch (fc_glitches), and tune.h1.fe.glitches-threshold <n>, as HAProxy
// 3.5 behaves (measured): the head that brings the count to n - 1 is served with `connection:
// close` and is the connection's last; reaching n (a threshold of 1) closes the connection
// without an answer. True when the connection ended.
bool H1Connection::glitch_limit() {
  const uint32_t n = ++txn_.fc_glitches;
  const uint32_t limit = fe_.settings.h.glitches_threshold;
  if (!limit) return false;
  if (n >= limit) {
    txn_.req_line.clear();
    txn_.status = -1;
    finish({Cause::kProxy, FinalState::kRequest});
    return true;
  }
  if (n + 1 >= limit) client_close_ = true;
  return false;
}

// Still in kIdle, so `timeout http-request` bounds the wait, as it bounds HAProxy's. The
// transaction begins with the whole body (kComplete), or with kTooLarge once the buffer is full
// or the client stopped sending before the end; a malformed chunked body is a 400.
bool H1Connection::wait_body() {
  using B = stats::ServiceRequest::Body;
  const http::RequestHead& head = tx_->req_parser.head();
  std::string_view body = view_of(cin_).substr(tx_->req_parser.consumed());
  std::string& out = tx_->req_body;
  out.clear();
  B state = B::kNotRead;
  if (head.body == http::BodyKind::kContentLength) {
    if (body.size() >= head.content_length) {
      out.assign(body.substr(0, static_cast<std::size_t>(head.content_length)));
      state = B::kComplete;
    }
  } else if (head.body == http::BodyKind::kChunked) {
    http::ParseError error = http::ParseError::kNone;
    switch (http::decode_chunks(body, tx_->req_chunks, &out, &error)) {
      case http::ChunkEvent::Kind::kDone: state = B::kComplete; break;
      case http::ChunkEvent::Kind::kError:
        body_wait_ = false;
        txn_.capture_error(false, view_of(cin_), error);
        reject_request(400, {Cause::kProxy, FinalState::kRequest});
        return true;
      default: break;
    }
  } else {
    state = B::kComplete;
  }
  if (state == B::kNotRead) {
    // wait-for-body: `at-least` bytes are enough; its time over first is a 408, as HAProxy
    // 3.5 answers it (TR -1, the request line logged).
    const uint64_t got = head.body == http::BodyKind::kChunked ? out.size() : body.size();
    const uint64_t least = fe_.body_wait_ms ? fe_.body_wait_at_least : 0;
    if (body_wait_expired_) {
      body_wait_ = false;
      body_wait_expired_ = false;
      body_timeout(head);
      return true;
    }
    const bool enough = body_wait_until_ != 0 && least && got >= least;
    if (!c_eof_ && !(cin_->room() == 0 && cin_->head == 0) && !enough) return false;
    state = B::kTooLarge;
    if (head.body == http::BodyKind::kContentLength) out.assign(body);
  }
  body_wait_ = false;
  body_wait_until_ = 0;
  body_wait_expired_ = false;
  txn_.set_request_body(state, out);
  begin_transaction();
  return true;
}

void H1Connection::body_timeout(const http::RequestHead& head) {
  txn_.count_bad_request();
  txn_.req_line = fmt::format("{} {} {}", head.method, head.target, head.version);
  txn_.killed_request = true;
  if (cin_) cin_->reset();
  error_reply(408, {Cause::kClientTimeout, FinalState::kRequest}, true);
}

void H1Connection::reject_request(int status, log::Termination term) {
  txn_.count_rejected_request();
  txn_.req_line = "<BADREQ>";
  if (txn_.t_first_byte_ms == 0) {
    txn_.t_first_byte_ms = w_.loop().now_ms();
    txn_.t_first_byte_wall_us = base::wall_us();
  }
  // Whatever follows the bad head is not a request: drop it and close.
  if (cin_) cin_->reset();
  req_done_ = false;
  // The H1 layer's pages: only 400 and 408 say connection: close, the others close silently.
  error_reply(status, term, true, false);
}

void H1Connection::drop_silently(int rst_ttl) {
  net::silence_close(cio_.fd(), rst_ttl);
  close_mode_ = net::CloseMode::kReset;
}

void H1Connection::begin_transaction() {
  // `tcp-request content` rules: in HTTP mode HAProxy runs them once a request is there, before
  // any HTTP processing, and again for each request of the connection.
  if (!fe_.settings.tcp_content_rules.empty()) {
    const rules::TcpVerdict v =
        txn_.content_verdict(cio_.fd(), tx_->req_parser.head(), *tx_);
    if (v != rules::TcpVerdict::kAccept) {
      // silent-drop: the client gets nothing, not even the FIN (net::silence_close()).
      if (v == rules::TcpVerdict::kSilentDrop) drop_silently(txn_.rst_ttl);
      finish({Cause::kProxy, FinalState::kRequest});
      return;
    }
  }
  const http::RequestHead& head = tx_->req_parser.head();
  ++requests_;
  req_keep_alive_ = head.wants_keep_alive() && !head.force_close;
  expect_tunnel_ = head.method_id == http::Method::kConnect;
  req_body_ = head.body;
  req_left_ = head.content_length;
  tx_->req_chunks.reset();
  req_done_ = req_body_ == http::BodyKind::kNone;
  req_skip_ = 0;
  req_rechunk_ = false;

  if (req_body_ != http::BodyKind::kNone && !txn_.body_was_read()) {
    std::string_view after = view_of(cin_).substr(tx_->req_parser.consumed());
    if (req_body_ == http::BodyKind::kContentLength) {
      std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(after.size(), req_left_));
      txn_.set_pending_body(after.substr(0, n), false, n == req_left_);
    } else if (req_body_ == http::BodyKind::kChunked) {
      txn_.set_pending_body(after, true, false);
    }
  }
  rules::HeadEdit& edit = fresh_edit(tx_->req_edit, head.headers);
  edit.method = head.method;
  edit.target = http::normalize_target(head, edit.storage);
  // Whether the forwarded request still asks for an upgrade: an empty or unusable Upgrade is
  // dropped, and a 101 answering such a request is a 502, as in HAProxy 3.5.
  upgrade_ = http::rewrite_request_fields(head, edit.headers, edit.storage);
  if (continue_sent_) {
    continue_sent_ = false;
    std::erase_if(edit.headers, [](const http::Header& h) { return http::iequals(h.name, "expect"); });
  }

  bool forward = txn_.on_request(head, edit, *tx_) == HttpTxn::Next::kForward;
  if (forward && !serialize_server_head(edit)) {
    txn_.rewrite_failed(*tx_);
    forward = false;
  }
  if (forward && (txn_.has_response_rules() || txn_.needs_request_at_connect() ||
                  txn_.has_dynamic_errors()))
    txn_.keep_request(edit, *tx_);
  if (forward) txn_.keep_sni_host(edit);
  if (!forward) {
    LocalReply& r = tx_->reply;
    if (r.skip_body) skip_buffered_body();
    if (r.silent) drop_silently(r.rst_ttl);
    if (r.delay_ms > 0) {
      // tarpit: the answer stays in tx_->reply until the timer sends it (on_timer()).
      tarpit_until_ = w_.loop().now_ms() + r.delay_ms;
      phase_ = Phase::kTarpit;
    } else {
      reply(std::move(r));
    }
  }
  // The head's views die here: everything needed was copied.
  consume(cin_, tx_->req_parser.consumed() + req_skip_);
  tx_->req_parser.reset();
  if (forward) connect_server();
}

// Called with the request head still in cin_. A body that already arrived whole is passed over,
// so that the answer leaves the connection usable for the next pipelined request; one still on
// its way is not waited for, and the connection closes after the answer as before.
void H1Connection::skip_buffered_body() {
  if (req_done_) return;
  std::string_view body = view_of(cin_).substr(tx_->req_parser.consumed());
  if (req_body_ == http::BodyKind::kContentLength) {
    if (body.size() < req_left_) return;
    req_skip_ = static_cast<std::size_t>(req_left_);
  } else if (req_body_ == http::BodyKind::kChunked) {
    // A scratch decoder: nothing is consumed unless the whole body is there and well formed.
    http::ChunkedDecoder dec = tx_->req_chunks;
    dec.reset();
    std::size_t pos = 0;
    for (;;) {
      http::ChunkEvent ev = dec.next(body.substr(pos));
      using K = http::ChunkEvent::Kind;
      if (ev.kind == K::kError || ev.kind == K::kNeedMore) return;
      pos += ev.consumed;
      if (ev.kind == K::kDone) break;
    }
    req_skip_ = pos;
  } else {
    return;
  }
  req_left_ = 0;
  req_done_ = true;
}

}  // namespace sluice::proxy

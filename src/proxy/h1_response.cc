// H1Connection, the response: its head (the transaction's rules in between) and body, the
// framing of local replies, server errors, and the end of a transaction.
#include "proxy/h1_connection.h"

#include <unistd.h>

#include <cerrno>
#include <optional>
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
// Response side

namespace {

// Whether a 401's WWW-Authenticate or a 407's Proxy-Authenticate offers a connection-oriented
// scheme: one of the comma-separated values (quoted strings kept whole) starts with "NTLM" or
// "Nego" (Negotiate, Nego2), in any case, as HAProxy checks them.
bool offers_connection_auth(const http::ResponseHead& rh) {
  const std::string_view field = rh.status == 401 ? "www-authenticate" : "proxy-authenticate";
  for (const http::Header& h : rh.headers) {
    if (!base::iequals(h.name, field)) continue;
    const std::string_view v = h.value;
    bool quoted = false;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= v.size(); ++i) {
      if (i < v.size()) {
        if (quoted && v[i] == '\\' && i + 1 < v.size()) {
          ++i;   // a quoted pair: the next byte is taken as is
          continue;
        }
        if (v[i] == '"') quoted = !quoted;
        if (v[i] != ',' || quoted) continue;
      }
      const std::string_view item = base::trim(v.substr(start, i - start));
      if (item.size() >= 4 &&
          (base::iequals(item.substr(0, 4), "ntlm") || base::iequals(item.substr(0, 4), "nego")))
        return true;
      start = i + 1;
    }
  }
  return false;
}

}  // namespace

bool H1Connection::parse_response() {
  if (res_wait_) return wait_response_body();
  std::string_view in = view_of(sin_);
  if (in.empty()) {
    if (!s_eof_) return false;
    if (reused_conn_ && txn_.req_sent > 0) {
      // A reused connection closed under us before any response byte: close the client
      // silently (no response, no log) so that it retries (RFC 9112 9.3.1), as HAProxy does.
      txn_.quiet = true;
      finish({Cause::kServerClose, FinalState::kHeaders});
      return false;
    }
    server_error(502, {Cause::kServerClose, FinalState::kHeaders});
    return true;
  }
  switch (tx_->res_parser.parse(in)) {
    case http::ParseStatus::kIncomplete:
      if (s_eof_) {
        server_error(502, {Cause::kServerClose, FinalState::kHeaders});
        return true;
      }
      if (sin_->room() == 0 && sin_->head == 0) {
        txn_.capture_error(true, in, http::ParseError::kHeadTooLarge);
        server_error(502, {Cause::kProxy, FinalState::kHeaders});
        return true;
      }
      return false;
    case http::ParseStatus::kError:
      txn_.capture_error(true, in, tx_->res_parser.error());
      server_error(502, {Cause::kProxy, FinalState::kHeaders});
      return true;
    case http::ParseStatus::kComplete:
      break;
  }
  const http::ResponseHead& rh = tx_->res_parser.head();
  const bool tunnel = rh.body == http::BodyKind::kTunnel;
  if (rh.status < 200 && rh.status != 101) {
    // Interim response: forwarded, then the final one is awaited (2.6).
    rules::HeadEdit e;
    e.headers = rh.headers;
    http::rewrite_response_fields(rh, false, e.headers, e.storage);
    if (std::string* out = to_cli_.heads_tail()) {
      http::append_response_head(rh, e.headers, *out, true, client_case_map());
    } else {
      std::string& head = head_scratch();
      http::append_response_head(rh, e.headers, head, true, client_case_map());
      to_cli_.append(head);
    }
    // The server answered it: counted on the server only. The frontend and the backend count
    // the final status of the transaction, as HAProxy does. (Read before the reset below, which
    // clears the head `rh` refers to.)
    txn_.count_server_status(rh.status);
    consume(sin_, tx_->res_parser.consumed());
    tx_->res_parser.reset();
    tx_->res_parser.set_request_method(txn_.method());
    return true;
  }
  if (rh.status == 101 && !upgrade_) {
    server_error(502, {Cause::kProxy, FinalState::kHeaders});
    return true;
  }
  // A protocol glitch on the server connection (bc_glitches) and tune.h1.be.glitches-threshold
  // <n>, as HAProxy 3.5 behaves (measured): from n - 1 glitches on, the connection is closed
  // after this response instead of being reused; the response itself goes on.
  if (tx_->res_parser.glitch() && sc_) [[unlikely]] {
    const uint32_t limit = w_.process().settings().h1_be_glitches_threshold;
    ++sc_->glitches;
    if (limit && sc_->glitches + 1 >= limit) server_close_ = true;
  }
  txn_.bc_glitches = sc_ ? sc_->glitches : 0;
  // NTLM and Negotiate authenticate the connection, not the request: from such a challenge on
  // the connection serves only this client, whose next requests prefer its server (HAProxy
  // does so in http_wait_for_response(), before the response rules).
  if ((rh.status == 401 || rh.status == 407) && sc_ && offers_connection_auth(rh)) [[unlikely]] {
    sc_->owned = true;
    prefer_last_ = true;
  }
  // `observe layer7`: 501 and 505 answer what the client asked, not a server failure.
  if (lb::Server* s = txn_.leg().server())
    s->analyze(rh.status < 500 || rh.status == 501 || rh.status == 505 ? lb::Hana::kHttpOk
                                                                       : lb::Hana::kHttpSts);
  if (txn_.response_waits()) {
    // wait-for-body may keep the head in the buffer while the body comes: it must start the
    // buffer, which then never moves under the views into it (make_room()). Parsed again there.
    if (sin_->head > 0) {
      std::memmove(sin_->data, sin_->read_ptr(), sin_->size());
      sin_->tail -= sin_->head;
      sin_->head = 0;
      tx_->res_parser.reset();
      tx_->res_parser.set_request_method(txn_.method());
      if (tx_->res_parser.parse(view_of(sin_)) != http::ParseStatus::kComplete) [[unlikely]] {
        server_error(502, {Cause::kProxy, FinalState::kHeaders});
        return true;
      }
    }
    // The rules see what came of the body with the head, as HAProxy's see what it buffered.
    const ResponseBody b = buffered_response_body();
    txn_.set_response_body(b.data, b.whole);
  }
  rules::HeadEdit& edit = fresh_edit(tx_->res_edit, rh.headers);
  http::rewrite_response_fields(rh, tunnel, edit.headers, edit.storage);
  return response_ruled(txn_.on_response(rh, edit, *tx_));
}

// What the response rules decided: wait for the body, answer instead of the server, or let the
// head (`tx_->res_edit`) go to the client.
bool H1Connection::response_ruled(HttpTxn::Next next) {
  const http::ResponseHead& rh = tx_->res_parser.head();
  rules::HeadEdit& edit = tx_->res_edit;
  const bool tunnel = rh.body == http::BodyKind::kTunnel;
  if (next == HttpTxn::Next::kWait) {
    const HttpTxn::BodyWait w = txn_.response_wait();
    res_wait_ = true;
    res_wait_expired_ = false;
    res_wait_until_ = w.ms ? w_.loop().now_ms() + w.ms : 0;
    res_wait_least_ = w.at_least;
    return wait_response_body();
  }
  if (next == HttpTxn::Next::kReply) {
    // The server's response is dropped (its connection with it, as its body was not read) and
    // the rule's answer goes to the client instead, as in HAProxy.
    drop_server();
    if (tx_->reply.silent) drop_silently(tx_->reply.rst_ttl);   // http-response silent-drop
    reply(std::move(tx_->reply));
    return true;
  }
  // The client frames the body by these fields, and sluice sends the body as the parser framed
  // it: a deleted length is put back (HAProxy 2.6 keeps it too), a contradicting one is a 500.
  const bool bodyless = txn_.method() == http::Method::kHead || rh.status == 204 ||
                        rh.status == 304;
  const bool rules_ran = !txn_.backend()->settings.h.response_rules.empty() ||
                         (txn_.backend() != &fe_ && !fe_.settings.h.response_rules.empty()) ||
                         txn_.has_after_response_rules();
  if (rules_ran && http::finalize_framing(rh, bodyless, false, edit.headers, edit.storage) ==
                       http::Framing::kConflict) {
    server_close_ = true;
    server_error(500, {Cause::kProxy, FinalState::kHeaders});
    return true;
  }
  // http-response set-status: the client sees the new code (and the log shows it); the body
  // stays framed by the server's. The head is copied only then.
  // (A head built and destroyed for every response cost about 20 instructions.)
  const http::ResponseHead* out_head = &rh;
  std::unique_ptr<http::ResponseHead> status_set;
  if (edit.status) {
    status_set = std::make_unique<http::ResponseHead>(rh);
    status_set->status = edit.status;
    status_set->reason = edit.reason.empty() ? http::default_reason(edit.status) : edit.reason;
    out_head = status_set.get();
  }
  txn_.status = out_head->status;
  using CM = HttpSettings::ConnMode;
  client_close_ = client_close_ || !req_keep_alive_ || fe_.settings.h.conn_mode == CM::kClose ||
                  rh.body == http::BodyKind::kUntilClose || soft_stop_;
  keepalive_promised_ = !client_close_;
  // A Transfer-Encoding with Content-Length, or in HTTP/1.0, is insecure: the server
  // connection is not reused after it unless h1-do-not-close-on-insecure-transfer-encoding.
  const bool insecure_te = rh.te_and_cl || (rh.has_transfer_encoding && !rh.http11());
  server_close_ = server_close_ || !rh.wants_keep_alive() ||
                  (insecure_te && !w_.process().settings().h1_keep_insecure_te) ||
                  rh.body == http::BodyKind::kUntilClose;
  if (!tunnel && !upgrade_) {
    if (!client_close_ && (!rh.http11() || !txn_.http11())) {
      edit.headers.push_back({"connection", "keep-alive"});
    } else if (client_close_ && rh.http11()) {
      edit.headers.push_back({"connection", "close"});
    }
  }
  res_head_at_ = to_cli_.end();
  if (std::string* out = to_cli_.heads_tail()) {
    http::append_response_head(*out_head, edit.headers, *out, true, client_case_map());
  } else {
    std::string& head = head_scratch();
    http::append_response_head(*out_head, edit.headers, head, true, client_case_map());
    to_cli_.append(head);
  }
  if (to_cli_.end() - res_head_at_ > static_cast<uint64_t>(w_.process().settings().bufsize)) {
    // A rewritten head must fit a buffer, as for requests (serialize_server_head).
    to_cli_.truncate(res_head_at_);
    server_error(500, {Cause::kProxy, FinalState::kHeaders});
    return true;
  }
  res_head_unsent_ = true;
  consume(sin_, tx_->res_parser.consumed());
  // Counted when a byte of the head leaves (or the transaction ends): until then a body error
  // can still turn it into a 502, which must not count as this status too.
  txn_.res_uncounted = out_head->status;
  res_head_done_ = true;
  res_head_sent_ = true;
  res_body_ = rh.body;
  res_left_ = rh.content_length;
  tx_->res_chunks.reset();
  res_trailers_.clear();
  txn_.log_step(kLogResponse);
  if (fe_.settings.logasap) txn_.log(w_.loop().now_ms(), true);   // option logasap
  if (tunnel) {
    enter_tunnel();
    return true;
  }
  if (res_body_ == http::BodyKind::kNone) {
    res_done_ = true;
    if (!view_of(sin_).empty()) server_close_ = true;   // bytes beyond the response
  }
  return true;
}

// What is buffered of the response body behind its head: the bytes of a Content-Length body
// or of one that runs until the close, the payload of the chunks there (decoded into the
// codecs, from the start each time: at most a buffer). `whole`: all of it; `bad`: a chunk is
// malformed (`error`).
H1Connection::ResponseBody H1Connection::buffered_response_body() {
  const http::ResponseHead& rh = tx_->res_parser.head();
  ResponseBody b;
  if (txn_.method() == http::Method::kHead || rh.status == 204 || rh.status == 304) return b;
  std::string_view in = view_of(sin_).substr(tx_->res_parser.consumed());
  switch (rh.body) {
    case http::BodyKind::kContentLength:
      b.whole = in.size() >= rh.content_length;
      b.data = in.substr(0, static_cast<std::size_t>(std::min<uint64_t>(rh.content_length, in.size())));
      break;
    case http::BodyKind::kChunked: {
      std::string& out = tx_->res_body;
      out.clear();
      const auto k = http::decode_chunks(in, tx_->res_chunks, &out, &b.error);
      b.whole = k == http::ChunkEvent::Kind::kDone;
      b.bad = k == http::ChunkEvent::Kind::kError;
      b.data = out;
      break;
    }
    case http::BodyKind::kUntilClose:
      b.whole = s_eof_;
      b.data = in;
      break;
    default:   // none, or a tunnel
      break;
  }
  return b;
}

// `http-response wait-for-body`: the rules after it run once the whole body is buffered, or
// `at-least` bytes of it, or the buffer is full, or the server closed (they see what came,
// and the response goes on as usual). Its time over first is a 504 (sH), as HAProxy 3.5
// answers it: the server's response is dropped and the client connection stays usable.
bool H1Connection::wait_response_body() {
  const ResponseBody b = buffered_response_body();
  if (b.bad) {
    res_wait_ = false;
    txn_.capture_error(true, view_of(sin_), b.error);
    server_error(502, {Cause::kProxy, FinalState::kHeaders});
    return true;
  }
  const bool full = sin_->room() == 0 && sin_->head == 0;
  const bool enough = res_wait_least_ && b.data.size() >= res_wait_least_;
  if (!b.whole && !s_eof_ && !full && !enough) {
    if (!res_wait_expired_) return false;
    res_wait_ = res_wait_expired_ = false;
    drop_server();
    error_reply(504, {Cause::kServerTimeout, FinalState::kHeaders}, !req_done_);
    return true;
  }
  res_wait_ = res_wait_expired_ = false;
  res_wait_until_ = 0;
  txn_.set_response_body(b.data, b.whole);
  return response_ruled(txn_.resume_response(tx_->res_parser.head().status, tx_->res_edit, *tx_));
}

bool H1Connection::response_body() {
  if (res_done_) return false;
  BodyStep step = move_body(res_body_, res_left_, tx_->res_chunks, res_trailers_, sin_, to_cli_,
                            res_done_, false, fe_.settings.h.drop_response_trailers);
  if (step == BodyStep::kBadChunk) {
    if (res_head_unsent_) {
      // Nothing of this response reached the client (head and bad chunk came in one read):
      // take it back and answer a 502 as for a bad head; the interim responses before it stay.
      to_cli_.truncate(res_head_at_);
      res_head_unsent_ = false;
      txn_.res_uncounted = 0;
      server_error(502, {Cause::kProxy, FinalState::kHeaders});
      return true;
    }
    txn_.count_bad_response();
    finish({Cause::kProxy, FinalState::kData});
    return false;
  }
  bool progress = step == BodyStep::kProgress;
  if (res_done_ && !view_of(sin_).empty()) server_close_ = true;   // excess bytes
  if (!res_done_ && s_eof_ && view_of(sin_).empty()) {
    if (res_body_ == http::BodyKind::kUntilClose) {
      res_done_ = true;
      server_close_ = true;
      progress = true;
      if (s_err_) {
        // A reset, not a FIN: the body may be cut and nobody can tell, as its end is the close.
        // What arrived is still delivered and the client connection closes after it, but the
        // transaction is a server abort (SD, eresp and srv_abrt), as HAProxy reports it.
        txn_.term = {Cause::kServerClose, FinalState::kData};
        txn_.count_server_abort(true);
      }
    } else {
      // The server closed in the middle of its body.
      server_abort({Cause::kServerClose, FinalState::kData});
      return false;
    }
  }
  if (sin_ && sin_->empty()) {
    w_.buffers().put(sin_);
    sin_ = nullptr;
  }
  return progress;
}

// The server failed after the response head was queued for the client: the transaction ends
// here (logged and counted now), but what the server had sent is still delivered before the
// client connection closes, as HAProxy does. Closing at once would drop the queued bytes: a head
// that arrived with the close never reached the client, which saw a bare close while the log
// said 200.
void H1Connection::server_abort(log::Termination term) {
  txn_.term = term;
  if (txn_.backend() && (!res_done_ || !req_done_)) txn_.count_server_abort(term.cause == Cause::kServerClose);
  res_done_ = req_done_ = true;   // nothing more moves; finish() must not count again
  if (sc_) {
    w_.close_server_conn(sc_);
    txn_.server_fd = -1;
    txn_.server_ssl = nullptr;
    sc_ = nullptr;
  }
  to_srv_.clear();
  txn_.count_response_status();
  txn_.log(w_.loop().now_ms());
  // The server's slot is free now, not after a slow client took the last bytes.
  txn_.release_backend();
  client_close_ = true;
  phase_ = Phase::kClosing;
  if (to_cli_.size() == 0) close_now();
}

void H1Connection::reply(LocalReply r) {
  if (int st = txn_.after_response_local(r.bytes, tx_.get())) r.status = st;
  txn_.replied(r.status, r.term);
  std::string& bytes = r.bytes;
  bool close_after = r.close_after;
  if (bytes.empty()) close_after = true;   // an empty errorfile: send nothing, close
  if (!req_done_) {
    // The rest of the request was not read: the connection cannot carry another one.
    close_after = true;
    req_done_ = true;
  }
  using CM = HttpSettings::ConnMode;
  if (requests_ > 0 && (!req_keep_alive_ || fe_.settings.h.conn_mode == CM::kClose)) close_after = true;
  client_close_ = client_close_ || close_after || soft_stop_;
  keepalive_promised_ = !client_close_;
  // A response to HEAD is its head alone (RFC 9110 9.3.2), whatever the page: a body would be
  // read as the start of the next response. The content-length stays the page's, as HAProxy
  // sends it.
  if (txn_.method() == http::Method::kHead) {
    if (std::size_t end = bytes.find("\r\n\r\n"); end != std::string::npos) bytes.resize(end + 4);
  }
  if (client_close_ && r.announce_close && !bytes.empty()) {
    // Say so, as the H1 encoder does, unless the page already does.
    std::size_t end = bytes.find("\r\n\r\n");
    std::string_view head(bytes.data(), end == std::string::npos ? 0 : end);
    if (end != std::string::npos && head.find("\r\nconnection:") == std::string_view::npos)
      bytes.insert(end, "\r\nconnection: close");
  }
  to_cli_.append(bytes);
  res_head_done_ = res_done_ = res_head_sent_ = true;
  phase_ = Phase::kExchange;
}

// A server failure before any response byte went to the client: drop the server connection
// and answer with an error page. The client connection stays usable when its request was
// fully read: a 502, 503 or 504 keeps it persistent and the next pipelined request is served,
// as in HAProxy.
void H1Connection::server_error(int status, log::Termination term) {
  txn_.count_server_error(status, term);
  drop_server();
  error_reply(status, term, !req_done_);
}

void H1Connection::drop_server() {
  leave_queue();
  res_wait_ = res_wait_expired_ = false;   // nothing more of its body comes
  res_wait_until_ = 0;
  if (sc_) {
    w_.close_server_conn(sc_);
    txn_.server_fd = -1;
    txn_.server_ssl = nullptr;
    sc_ = nullptr;
  }
  s_connecting_ = false;
  socks_.reset();
  stls_.reset();
  to_srv_.clear();
  if (sin_) {
    w_.buffers().put(sin_);
    sin_ = nullptr;
  }
  server_close_ = true;
}

void H1Connection::detach_server(bool reusable) {
  if (!sc_) return;
  last_srv_ = txn_.leg().server();
  last_be_ = txn_.backend();
  if (sin_) {
    if (!sin_->empty()) reusable = false;
    w_.buffers().put(sin_);
    sin_ = nullptr;
  }
  if (reusable && !s_eof_ && !s_hup_ && to_srv_.size() == 0) {
    // A connection that opened with this client's PROXY header (send-proxy), or that it
    // authenticated (NTLM, Negotiate), serves only it.
    const lb::Server* srv = txn_.leg().server();
    if (txn_.backend()->settings.h.reuse == HttpSettings::Reuse::kNever || sc_->owned ||
        (srv && srv->settings().send_proxy)) {
      // max-reuse counts the requests a private connection carried too.
      const int max_reuse = srv ? srv->settings().max_reuse : -1;
      if (max_reuse >= 0 && sc_->requests > static_cast<uint32_t>(max_reuse))
        w_.close_server_conn(sc_);
      else
        private_ = sc_;   // stays ours (owner unchanged) until the client leaves
    } else {
      w_.park_idle(sc_);
    }
  } else {
    w_.close_server_conn(sc_);
  }
  txn_.server_fd = -1;
  txn_.server_ssl = nullptr;
  sc_ = nullptr;
}

void H1Connection::end_transaction() {
  txn_.count_response_status();
  // %B counts what the server sent to the client: bytes read past the end of the response
  // (a server sending more than its length) are dropped with the connection, not sent. Without
  // this the count depended on whether they came in the same read as the body.
  if (std::string_view excess = view_of(sin_); !excess.empty() && txn_.bytes_out >= excess.size())
    txn_.bytes_out -= excess.size();
  txn_.log(w_.loop().now_ms());
  detach_server(!server_close_);
  txn_.release_backend();
  if (closes_after_transaction()) {
    phase_ = Phase::kClosing;
    if (to_cli_.size() == 0) close_after_last_bytes();
    return;
  }
  // Ready for the next request (possibly already in the buffer: pipelining).
  phase_ = Phase::kIdle;
  first_request_ = false;
  uint64_t now = w_.loop().now_ms();
  txn_.next_request(now);
  if (cin_ && view_of(cin_).find_first_not_of("\r\n") != std::string_view::npos)
    txn_.first_byte(now);
  req_done_ = res_done_ = res_head_done_ = res_head_sent_ = res_head_unsent_ = false;
  res_wait_ = res_wait_expired_ = false;
  res_wait_until_ = 0;
  server_close_ = client_close_ = keepalive_promised_ = false;
  reused_conn_ = false;
  s_connecting_ = false;
  if (cin_ && cin_->empty()) {
    w_.buffers().put(cin_);
    cin_ = nullptr;
  }
  // An idle keep-alive connection keeps no output queue (release_codecs() parks them with the
  // codecs, for the next transaction) and no field list.
  // The parsers and the request copy for response rules: the next request starts afresh.
  release_codecs();
  // Unread pipelined bytes may already sit in the socket: their edge was consumed.
  c_rd_ = true;
  // A soft stop came after this response promised the client another one: the connection
  // waits for it as an idle one does at the stop (on_soft_stop()).
  // option idle-close-on-response: no grace, the next request is awaited as usual.
  if (soft_stop_ && !txn_.t_first_byte_ms && !fe_.settings.h.idle_close_on_response)
    stop_grace_ms_ = now + kStopGraceMs;
}

// Whether the client connection closes once this transaction is over. A soft stop closes it
// unless the response already told the client that the connection stays open: its next request
// is then awaited (and answered with `connection: close`) rather than lost in a close.
bool H1Connection::closes_after_transaction() const {
  return client_close_ || c_eof_ || (soft_stop_ && !keepalive_promised_);
}

}  // namespace sluice::proxy

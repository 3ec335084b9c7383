// H1Connection, the response: its head, rules and body, local replies and error pages, counters
// of statuses, and the end of a transaction.
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
// Response side

bool H1Connection::parse_response() {
  std::string_view in = view_of(sin_);
  if (in.empty()) {
    if (!s_eof_) return false;
    if (reused_conn_ && req_sent_ > 0) {
      // A reused connection closed under us before any response byte: close the client
      // silently (no response, no log) so that it retries (RFC 9112 9.3.1), as HAProxy does.
      quiet_ = true;
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
        capture_error(true, in, http::ParseError::kHeadTooLarge);
        server_error(502, {Cause::kProxy, FinalState::kHeaders});
        return true;
      }
      return false;
    case http::ParseStatus::kError:
      capture_error(true, in, tx_->res_parser.error());
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
    http::append_response_head(rh, e.headers, to_cli_);
    // The server answered it: counted on the server only. The frontend and the backend count
    // the final status of the transaction, as HAProxy does. (Read before the reset below, which
    // clears the head `rh` refers to.)
    count_server_status(rh.status);
    consume(sin_, tx_->res_parser.consumed());
    tx_->res_parser.reset();
    tx_->res_parser.set_request_method(req_method_);
    return true;
  }
  if (rh.status == 101 && !upgrade_) {
    server_error(502, {Cause::kProxy, FinalState::kHeaders});
    return true;
  }
  t_response_ms_ = w_.loop().now_ms();
  if (!fe_.settings.h.capture_response.empty())
    capture_fields(fe_.settings.h.capture_response, rh.headers, cap_res_);
  // The server's own status, whatever the client ends up getting (a response rule's answer, a
  // 502 for a bad first chunk): the server row counts what servers sent.
  count_server_status(rh.status);
  rules::HeadEdit& edit = fresh_edit(tx_->res_edit, rh.headers);
  http::rewrite_response_fields(rh, tunnel, edit.headers, edit.storage);
  // http-response rules: the backend's, then the frontend's.
  rules::RequestView view;
  view.src = &client_;
  view.dst_port = l_.port;
  view.dst = l_.addr.kind == net::ListenAddress::Kind::kInet ? &l_.addr.addr : nullptr;
  view.status = rh.status;
  if (have_req_copy_) {
    view.method = tx_->req_copy.method;
    view.target = tx_->req_copy.target;
    view.headers = &tx_->req_copy.headers;
  }
  view.res_headers = &edit.headers;
  for (Proxy* px : {be_, be_ == &fe_ ? nullptr : &fe_}) {
    if (!px || px->settings.h.response_rules.empty()) continue;
    rules::Verdict v =
        rules::apply_rules(px->settings.h.response_rules, rules::RuleSide::kResponse, edit, view);
    if (v.kind == rules::Verdict::Kind::kContinue) continue;
    // deny / return / redirect: the server's response is dropped (its connection with it, as
    // its body was not read) and the rule's answer goes to the client instead, as in HAProxy.
    int st = 0;
    log::Termination term{Cause::kLocal, FinalState::kHeaders};
    std::string bytes;
    switch (v.kind) {
      case rules::Verdict::Kind::kDeny:
        w_.be_counters(be_->index).dresp.add();
        if (px == &fe_) w_.fe_counters(fe_.index).dresp.add();
        leg_.server_counters().dresp.add();
        st = v.status ? v.status : 502;
        term = {Cause::kProxy, FinalState::kHeaders};
        break;
      case rules::Verdict::Kind::kReturn:
        st = v.status ? v.status : 200;
        break;
      case rules::Verdict::Kind::kRedirect:
        st = v.status ? v.status : 302;
        bytes = redirect_bytes(st, v.location);
        break;
      case rules::Verdict::Kind::kContinue:
      case rules::Verdict::Kind::kService:   // request rules only
        break;
    }
    drop_server();
    if (!bytes.empty()) local_reply(st, term, std::move(bytes), !req_done_);
    else if (v.errorpage && http::has_error_page(st)) error_reply(st, term, !req_done_);
    else local_reply(st, term, reply_bytes(st, v), !req_done_);
    return true;
  }
  // The client frames the body by these fields, and sluice sends the body as the parser framed
  // it: a deleted length is put back (HAProxy 2.6 keeps it too), a contradicting one is a 500.
  const bool bodyless = req_method_ == http::Method::kHead || rh.status == 204 ||
                        rh.status == 304;
  const bool rules_ran = !be_->settings.h.response_rules.empty() ||
                         (be_ != &fe_ && !fe_.settings.h.response_rules.empty());
  if (rules_ran && http::finalize_framing(rh, bodyless, false, edit.headers, edit.storage) ==
                       http::Framing::kConflict) {
    server_close_ = true;
    server_error(500, {Cause::kProxy, FinalState::kHeaders});
    return true;
  }
  status_ = rh.status;
  using CM = HttpSettings::ConnMode;
  client_close_ = client_close_ || !req_keep_alive_ || fe_.settings.h.conn_mode == CM::kClose ||
                  rh.body == http::BodyKind::kUntilClose || soft_stop_;
  keepalive_promised_ = !client_close_;
  server_close_ = server_close_ || !rh.wants_keep_alive() || rh.te_and_cl ||
                  rh.body == http::BodyKind::kUntilClose;
  if (!tunnel && !upgrade_) {
    if (!client_close_ && (!rh.http11() || !req_http11_)) {
      edit.headers.push_back({"connection", "keep-alive"});
    } else if (client_close_ && rh.http11()) {
      edit.headers.push_back({"connection", "close"});
    }
  }
  res_head_at_ = to_cli_.size();
  http::append_response_head(rh, edit.headers, to_cli_);
  if (to_cli_.size() - res_head_at_ > static_cast<std::size_t>(w_.process().settings().bufsize)) {
    // A rewritten head must fit a buffer, as for requests (build_server_head).
    to_cli_.resize(res_head_at_);
    server_error(500, {Cause::kProxy, FinalState::kHeaders});
    return true;
  }
  res_head_unsent_ = true;
  consume(sin_, tx_->res_parser.consumed());
  // Counted when a byte of the head leaves (or the transaction ends): until then a body error
  // can still turn it into a 502, which must not count as this status too.
  res_uncounted_ = rh.status;
  res_head_done_ = true;
  res_head_sent_ = true;
  res_body_ = rh.body;
  res_left_ = rh.content_length;
  tx_->res_chunks.reset();
  res_trailers_.clear();
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

bool H1Connection::response_body() {
  if (res_done_) return false;
  BodyStep step = move_body(res_body_, res_left_, tx_->res_chunks, res_trailers_, sin_, to_cli_,
                            to_cli_off_, res_done_);
  if (step == BodyStep::kBadChunk) {
    if (res_head_unsent_) {
      // Nothing of this response reached the client (head and bad chunk came in one read):
      // take it back and answer a 502 as for a bad head; the interim responses before it stay.
      to_cli_.resize(res_head_at_);
      res_head_unsent_ = false;
      res_uncounted_ = 0;
      server_error(502, {Cause::kProxy, FinalState::kHeaders});
      return true;
    }
    w_.be_counters(be_->index).eresp.add();
    leg_.server_counters().eresp.add();
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
        term_ = {Cause::kServerClose, FinalState::kData};
        count_server_abort(true);
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
  term_ = term;
  if (be_ && (!res_done_ || !req_done_)) count_server_abort(term.cause == Cause::kServerClose);
  res_done_ = req_done_ = true;   // nothing more moves; finish() must not count again
  if (sc_) {
    w_.close_server_conn(sc_);
    sc_ = nullptr;
  }
  to_srv_.clear();
  to_srv_off_ = 0;
  count_response_status();
  log_transaction();
  // The server's slot is free now, not after a slow client took the last bytes.
  release_backend();
  client_close_ = true;
  phase_ = Phase::kClosing;
  if (pending(to_cli_, to_cli_off_) == 0) close_now();
}

void H1Connection::release_backend() {
  leg_.release();
  be_ = nullptr;
}

void H1Connection::count_server_abort(bool response_error) {
  auto& bc = w_.be_counters(be_->index);
  bc.srv_abrt.add();
  if (response_error) bc.eresp.add();
  if (leg_.server()) {
    auto& sc = leg_.server_counters();
    sc.srv_abrt.add();
    if (response_error) sc.eresp.add();
  }
}

void H1Connection::count_response_status() {
  if (res_uncounted_ == 0) return;
  count_status(res_uncounted_);
  res_uncounted_ = 0;
}

namespace {
int status_class(int status) { return status >= 100 && status < 600 ? status / 100 - 1 : 5; }
}  // namespace

// The status the client got, on the frontend and the backend. Pages sluice generates (502, 503,
// 504, rule answers) count there only, not on the server, which sent none of them.
void H1Connection::count_status(int status) {
  int cls = status_class(status);
  w_.fe_counters(fe_.index).hrsp[cls].add();
  if (be_) w_.be_counters(be_->index).hrsp[cls].add();
}

void H1Connection::count_server_status(int status) {
  if (be_ && leg_.server()) leg_.server_counters().hrsp[status_class(status)].add();
}

void H1Connection::local_reply(int status, log::Termination term, std::string bytes, bool close_after,
                              bool announce_close) {
  status_ = status;
  term_ = term;
  count_status(status);
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
  if (req_method_ == http::Method::kHead) {
    if (std::size_t end = bytes.find("\r\n\r\n"); end != std::string::npos) bytes.resize(end + 4);
  }
  if (client_close_ && announce_close && !bytes.empty()) {
    // Say so, as the H1 encoder does, unless the page already does.
    std::size_t end = bytes.find("\r\n\r\n");
    std::string_view head(bytes.data(), end == std::string::npos ? 0 : end);
    if (end != std::string::npos && head.find("\r\nconnection:") == std::string_view::npos)
      bytes.insert(end, "\r\nconnection: close");
  }
  to_cli_ += bytes;
  res_head_done_ = res_done_ = res_head_sent_ = true;
  bytes_out_ = 0;   // %B counts server bytes only; sluice's pages count 0
  phase_ = Phase::kExchange;
}

void H1Connection::error_reply(int status, log::Termination term, bool close_after,
                              bool announce_close) {
  const std::string* custom = nullptr;
  if (be_) custom = be_->settings.h.errorfile(status);
  if (!custom) custom = fe_.settings.h.errorfile(status);
  if (custom) {
    local_reply(status, term, *custom, close_after, announce_close);
  } else {
    local_reply(status, term, http::error_page(status), close_after || status == 400 || status == 408,
                announce_close);
  }
}

// A server failure before any response byte went to the client: drop the server connection
// and answer with an error page. The client connection stays usable when its request was
// fully read: a 502, 503 or 504 keeps it persistent and the next pipelined request is served,
// as in HAProxy.
void H1Connection::server_error(int status, log::Termination term) {
  if (be_) {
    if (term.server_side() || term.cause == Cause::kProxy) {
      if (status == 502 || status == 504) {
        w_.be_counters(be_->index).eresp.add();
        if (leg_.server()) leg_.server_counters().eresp.add();
      }
    }
  }
  drop_server();
  error_reply(status, term, !req_done_);
}

void H1Connection::drop_server() {
  leave_queue();
  if (sc_) {
    w_.close_server_conn(sc_);
    sc_ = nullptr;
  }
  s_connecting_ = false;
  to_srv_.clear();
  to_srv_off_ = 0;
  if (sin_) {
    w_.buffers().put(sin_);
    sin_ = nullptr;
  }
  server_close_ = true;
}

void H1Connection::detach_server(bool reusable) {
  if (!sc_) return;
  if (sin_) {
    if (!sin_->empty()) reusable = false;
    w_.buffers().put(sin_);
    sin_ = nullptr;
  }
  if (reusable && !s_eof_ && !s_hup_ && pending(to_srv_, to_srv_off_) == 0) {
    if (be_->settings.h.reuse == HttpSettings::Reuse::kNever) {
      private_ = sc_;   // stays ours (owner unchanged) until the client leaves
    } else {
      w_.park_idle(sc_);
    }
  } else {
    w_.close_server_conn(sc_);
  }
  sc_ = nullptr;
}

void H1Connection::end_transaction() {
  count_response_status();
  // %B counts what the server sent to the client: bytes read past the end of the response
  // (a server sending more than its length) are dropped with the connection, not sent. Without
  // this the count depended on whether they came in the same read as the body.
  if (std::string_view excess = view_of(sin_); !excess.empty() && bytes_out_ >= excess.size())
    bytes_out_ -= excess.size();
  log_transaction();
  detach_server(!server_close_);
  release_backend();
  if (closes_after_transaction()) {
    phase_ = Phase::kClosing;
    if (pending(to_cli_, to_cli_off_) == 0) close_after_last_bytes();
    return;
  }
  // Ready for the next request (possibly already in the buffer: pipelining).
  phase_ = Phase::kIdle;
  first_request_ = false;
  uint64_t now = w_.loop().now_ms();
  t_idle_ms_ = now;
  t_first_byte_ms_ =
      cin_ && view_of(cin_).find_first_not_of("\r\n") != std::string_view::npos ? now : 0;
  t_first_byte_wall_us_ = t_first_byte_ms_ ? base::wall_us() : 0;
  t_head_ms_ = t_response_ms_ = 0;
  leg_.reset();   // its timings, retries and redispatch
  status_ = -1;
  term_ = {};
  bytes_out_ = 0;
  req_done_ = res_done_ = res_head_done_ = res_head_sent_ = res_head_unsent_ = false;
  req_method_ = http::Method::kGet;   // until the next head says otherwise (a 408 has no method)
  logged_ = false;
  cap_req_.clear();
  cap_res_.clear();
  server_close_ = client_close_ = keepalive_promised_ = false;
  reused_conn_ = false;
  have_req_copy_ = false;
  s_connecting_ = false;
  if (cin_ && cin_->empty()) {
    w_.buffers().put(cin_);
    cin_ = nullptr;
  }
  // An idle keep-alive connection keeps no output queue (release_codecs() parks them with the
  // codecs, for the next transaction), no request line and no field list.
  std::string().swap(req_line_);
  std::string().swap(lb_key_);
  // The parsers and the request copy for response rules: the next request starts afresh.
  release_codecs();
  // Unread pipelined bytes may already sit in the socket: their edge was consumed.
  c_rd_ = true;
  // A soft stop came after this response promised the client another one: the connection
  // waits for it as an idle one does at the stop (on_soft_stop()).
  if (soft_stop_ && !t_first_byte_ms_) stop_grace_ms_ = now + kStopGraceMs;
}

// Whether the client connection closes once this transaction is over. A soft stop closes it
// unless the response already told the client that the connection stays open: its next request
// is then awaited (and answered with `connection: close`) rather than lost in a close.
bool H1Connection::closes_after_transaction() const {
  return client_close_ || c_eof_ || (soft_stop_ && !keepalive_promised_);
}

}  // namespace sluice::proxy

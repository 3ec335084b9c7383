#pragma once
// One HTTP transaction, a request and its response, as the proxy decides it: the frontend's
// and the backend's rules, the backend choice, the services (stats page, Prometheus), the
// answers sluice gives itself (rule replies, error pages), the counters and the log record.
// It knows nothing of the wire: the mux that carries the transaction (H1Connection today, one
// transaction at a time; an HTTP/2 mux would hold one per stream) parses each message, hands
// the parsed head over, and frames and moves the bytes. The server side up to a connected
// socket is the transaction's backend leg (leg()).
//
// A transaction's life, with the calls that drive it (the mux makes them in this order):
//
//   begun ---- content_allowed() false: refused (the mux closes the connection)
//     | on_request(): counters, captures, request rules, use_backend, forwardfor
//     |   -> kReply: a local answer (reply()); -> kForward: the head goes to a server
//     v
//   routed (backend()) -- the mux connects through leg() and moves the request
//     | on_response(): captures, response rules -> kForward, or kReply (the server's
//     |   response is dropped and reply() sent instead)
//     v
//   answered -- replied() for every local answer, count_*() as bytes move
//     | log() once, then release_backend(); next_request() for the next one on the connection
//
// Worker-local, as its connection.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "http/http.h"
#include "log/line.h"
#include "log/termination.h"
#include "net/address.h"
#include "proxy/backend_leg.h"
#include "proxy/http_codecs.h"
#include "proxy/process.h"
#include "proxy/sample_env.h"
#include "proxy/worker.h"
#include "rules/rules.h"
#include "sample/captures.h"
#include "stats/http_service.h"

namespace sluice::proxy {

class HttpTxn final : public StreamTimes {
 public:
  HttpTxn(Worker& w, Listener& l, Session& owner, const net::SocketAddress& client);
  HttpTxn(const HttpTxn&) = delete;
  HttpTxn& operator=(const HttpTxn&) = delete;

  // --- Request.
  // `tcp-request content` rules (HTTP mode runs them for each request, before any HTTP
  // processing, with the parsed request `head` to read; their variables and captures are
  // this transaction's). kReject or kSilentDrop:
  // refused, the record says so (logged `PR`, no status); else kAccept.
  rules::TcpVerdict content_verdict(int client_fd, const http::RequestHead& head,
                                    HttpCodecs& codecs);
  // `tcp-request session` rules, once when the connection is accepted: their variables are the
  // session's, set-src / set-dst the connection's. kAccept, kReject or kSilentDrop (the caller
  // closes, without a log line: no stream began).
  rules::TcpVerdict session_verdict(int client_fd);
  // The connection's PROXY protocol header, for its life: its destination is the connection's
  // local address.
  // The client connection's TLS connection, owned by its transport (H1Connection::adopt_tls).
  void set_client_tls(ssl_st* s) { client_tls_ = s; }
  ssl_st* client_tls() const override { return client_tls_; }
  ssl_st* server_tls() const override { return server_ssl; }
  void adopt_proxy_header(std::shared_ptr<const net::pp::Header> h) {
    if (h->has_addresses) {
      conn_dst_ = std::make_unique<net::SocketAddress>(h->dst);
      leg_.set_local_port(h->dst.port());
    }
    pp_ = std::move(h);
  }
  const net::pp::Header* proxy_header() const override { return pp_.get(); }
  // The client connection's socket, for what the transaction asks the kernel about it.
  void set_client_fd(int fd) { client_fd_ = fd; }
  enum class Next : uint8_t { kForward, kReply, kWait };
  // Whether the mux must wait for the request's body (in its buffer) before on_request():
  // `option http-buffer-request`, `http-request wait-for-body`, or a POST that the stats page
  // of a proxy with `stats admin` may take (its form is the body).
  bool wants_body_first(const http::RequestHead& head) const {
    if (head.body != http::BodyKind::kNone && (fe_.buffer_bodies || fe_.body_wait_ms)) return true;
    return head.method_id == http::Method::kPost && !w_.process().stats_admin_proxies().empty() &&
           stats_admin_post(head);
  }
  // What the mux found of that body, for on_request(): kComplete with the whole body (chunks
  // decoded; `body` lives until the transaction ends), or kTooLarge with what arrived before
  // the buffer filled up or the client stopped sending (req.body reads it, not the stats page).
  void set_request_body(stats::ServiceRequest::Body state, std::string_view body) {
    body_state_ = state;
    body_ = body;
  }
  // Without that wait: what arrived of the body with the head, as it is in the mux's buffer
  // (valid during on_request()): req.body reads it, as HAProxy's reads what it buffered.
  // `chunked`: still chunk-encoded (decoded when an expression asks); `whole`: all of it.
  bool body_was_read() const { return body_state_ != stats::ServiceRequest::Body::kNotRead; }
  void set_pending_body(std::string_view raw, bool chunked, bool whole) {
    pending_body_ = raw;
    pending_chunked_ = chunked;
    pending_whole_ = whole;
  }
  // A complete request head: `head` as parsed, `edit` the head the server will get (the mux
  // normalized its target and fields). Runs the rules and picks the backend; on kForward the
  // leg is attached to backend() and `edit` is final, on kReply reply() says what to answer.
  Next on_request(const http::RequestHead& head, rules::HeadEdit& edit, HttpCodecs& codecs);
  // Response rules may look at the request: `edit`, as it went to the server, is copied into
  // the codecs (past the buffer its views point into). Only when has_response_rules().
  void keep_request(const rules::HeadEdit& edit, HttpCodecs& codecs);
  // Whether the backend's servers send set-proxy-v2-tlv-fmt values or an `sni <expr>`, which read
  // the request once it left (on_request() keeps it, as for response rules).
  bool needs_request_at_connect() const {
    return be_ && (!be_->settings.pp2_tlv_formats.empty() || be_->settings.sni_reads_request);
  }
  // sni-auto: the request's Host, kept for the server connection's SNI (its last value, as
  // req.hdr(host) gives it; empty without one). Only for backends whose servers send it.
  void keep_sni_host(const rules::HeadEdit& edit) {
    if (!be_ || !be_->settings.sni_from_host) return;
    sni_host_.clear();
    for (const auto& h : edit.headers)
      if (http::iequals(h.name, "host")) sni_host_.assign(h.value);
  }
  // Whether an error page of the frontend or the backend renders log-format strings, which
  // read the request after it left (on_request() keeps it, as for response rules).
  bool has_dynamic_errors() const { return fe_.settings.h.dynamic_errors || be_http().dynamic_errors; }
  // The values of the chosen server's set-proxy-v2-tlv-fmt formats (none: nothing appended).
  // http_txn_forward.cc.
  void render_pp2_tlvs(HttpCodecs& codecs, std::vector<net::pp::Tlv>* out);
  // The chosen server's `sni <expr>` (ssl servers): false when it gives no name.
  bool server_sni(HttpCodecs& codecs, const ProxySettings::ServerSni& sni, std::string* out);
  // The head the rules rewrote is larger than a buffer: a 500, nothing sent (as HAProxy fails a
  // rewrite that does not fit).
  void rewrite_failed(HttpCodecs& codecs) {
    codecs.reply = error_reply(500, {log::Cause::kProxy, log::FinalState::kRequest}, false, true,
                               true);
  }
  // Whether response rules will run (they see a copy of the request made by on_request()).
  bool has_response_rules() const {
    return !fe_.settings.h.response_rules.empty() || !be_http().response_rules.empty() ||
           has_after_response_rules();
  }
  bool has_after_response_rules() const {
    return !fe_.settings.h.after_response_rules.empty() || !be_http().after_response_rules.empty();
  }
  // http-after-response on a response of the server's (`edit` as the response rules left it)
  // and on a local answer (`bytes`, an HTTP/1 message whose head is rewritten when a rule
  // changes it; returns the status set-status gave it, 0 when unchanged). http_txn_after.cc.
  void after_response(int status, rules::HeadEdit& edit, HttpCodecs* codecs);
  int after_response_local(std::string& bytes, HttpCodecs* codecs);

  // --- Response.
  // A final response head, `edit` normalized by the mux. kReply: a response rule answered.
  // kWait: an `http-response wait-for-body` matched: the mux waits for the body as
  // response_wait() says, then calls resume_response(), which runs the rules after it.
  Next on_response(const http::ResponseHead& head, rules::HeadEdit& edit, HttpCodecs& codecs);
  Next resume_response(int code, rules::HeadEdit& edit, HttpCodecs& codecs) {
    return response_rules(code, edit, codecs);
  }
  struct BodyWait {
    uint32_t ms = 0;         // its time (0: none, `timeout server` bounds it)
    uint64_t at_least = 0;   // bytes that are enough (0: the whole body)
  };
  BodyWait response_wait() const { return res_body_wait_; }
  // Whether the response rules of this transaction's proxies hold a wait-for-body: they then
  // see what is buffered of the body (set_response_body()).
  bool response_waits() const { return fe_.response_waits || (be_ && be_->response_waits); }
  // What is buffered of the response body (in the mux's buffer, or its chunks decoded), valid
  // until on_response() or resume_response() returns something else than kWait: res.body and
  // its friends read it; `whole`: all of it.
  void set_response_body(std::string_view body, bool whole) {
    res_body_ = body;
    res_body_whole_ = whole;
  }

  // --- Local answers.
  // The page for `status`: the backend's errorfile, the frontend's, or sluice's own (which
  // closes the connection after 400 and 408).
  LocalReply unauthorized_reply(std::string_view realm, log::Termination term) const;
  LocalReply error_reply(int status, log::Termination term, bool close_after,
                         bool announce_close = true, bool skip_body = false);
  // kReply: the answer is the codecs' `reply` (moved out by the mux).
  // A local answer goes out: its status and termination are the transaction's.
  void replied(int status, log::Termination term);

  // --- Counters, as the mux moves bytes and the transaction ends.
  void count_in(uint64_t n) {
    w_.fe_counters(fe_.index).bin.add(n);
    if (be_) w_.be_counters(be_->index).bin.add(n);
    if (leg_.server()) leg_.server_counters().bin.add(n);
  }
  void count_out(uint64_t n) {
    bytes_out += n;
    w_.fe_counters(fe_.index).bout.add(n);
    w_.be_counters(be_->index).bout.add(n);
    leg_.server_counters().bout.add(n);
  }
  // Server bytes counted when read that never reached the client (a tunnel's end).
  void uncount_out(uint64_t n);
  // A bad request head or body (ereq), on the frontend.
  void count_bad_request() { w_.fe_counters(fe_.index).ereq.add(); }
  // A request rejected by the HTTP/1 parser: a bad one, and a request all the same (req_tot).
  void count_rejected_request() {
    count_bad_request();
    w_.fe_counters(fe_.index).req_tot.add();
  }
  // The request went out on a connection to the leg's server.
  void count_server_request() { leg_.server_counters().req_tot.add(); }
  void count_internal_error() { w_.fe_counters(fe_.index).eint.add(); }
  // A response body the server broke after its head left (eresp).
  void count_bad_response() {
    w_.be_counters(be_->index).eresp.add();
    leg_.server_counters().eresp.add();
  }
  // A server failure answered with `status` (eresp for 502 and 504 caused by a server).
  void count_server_error(int status, log::Termination term);
  void count_server_status(int status);   // the server's row: each response head it sent
  // The final response's status (res_uncounted), once.
  void count_response_status() {
    if (res_uncounted == 0) return;
    count_status(res_uncounted);
    res_uncounted = 0;
  }
  // srv_abrt on the backend and the server; `response_error`: eresp too (a close or reset).
  void count_server_abort(bool response_error);
  // The connection ended with `term` while a message still moved.
  void count_abort(log::Termination term);
  // `show errors`: `bytes` (what the buffer holds) as the last invalid message of this
  // request's frontend or this response's backend.
  void capture_error(bool response, std::string_view bytes, http::ParseError why) const;

  // --- End.
  // `early`: option logasap's line, written when the response head is forwarded (the
  // backend and server counts then include this transaction, as HAProxy's do).
  void log(uint64_t now_ms, bool early = false);
  // `log-steps`: a line for a step of the transaction before its end, with what is known then
  // (HAProxy 3.5's values: no status yet, -1 for the times not reached). Only steps the
  // frontend lists, and none with option logasap (HAProxy then logs its one early line).
  void log_step(LogStep step) {
    if (fe_.settings.log_steps & step) [[unlikely]] emit_step(step);
  }
  // Gives back the server slot and the backend's session count.
  void release_backend() {
    leg_.release();
    be_ = nullptr;
  }
  // The connection waits for its next request from `now`.
  void next_request(uint64_t now);
  // The mux gave the codecs (and the transaction's variables in them) back.
  void codecs_released() { vars_codecs_ = nullptr; }

  // --- What the mux reads.
  Proxy& frontend() const { return fe_; }
  Proxy* backend() const { return be_; }
  const HttpSettings& be_http() const { return be_ ? be_->settings.h : fe_.settings.h; }
  BackendLeg& leg() { return leg_; }
  const BackendLeg& leg() const { return leg_; }
  // What the backend's hashing algorithm hashes for this request; null: no key (round robin).
  const std::string* lb_key() const { return lb_key_set_ ? lb_key_ : nullptr; }
  const net::SocketAddress& client() const { return client_; }
  // What the rules changed of this stream: its timeouts (set-timeout; `dflt` the proxy's), and
  // its local address and port (set-dst, set-dst-port; else the listener's).
  uint32_t timeout(rules::StreamEdit::Timeout t, uint32_t dflt) const { return stream_.timeout(t, dflt); }
  const net::SocketAddress* local_addr() const {
    if (stream_.addrs && stream_.addrs->dst_set) return &stream_.addrs->dst;
    if (conn_dst_) return conn_dst_.get();
    return l_.addr.kind == net::ListenAddress::Kind::kInet ? &l_.addr.addr : nullptr;
  }
  uint16_t local_port() const {
    if (stream_.addrs && stream_.addrs->dst_set) return stream_.addrs->dst.port();
    return conn_dst_ ? conn_dst_->port() : l_.port;
  }
  http::Method method() const { return method_; }
  bool http11() const { return http11_; }

  // --- The transaction's record: set from what the mux sees on the wire, read by the log
  // line and `show sess`.
  uint64_t t_idle_ms;              // start of the wait for this request
  uint64_t t_first_byte_ms = 0;    // first byte of this request, 0 none yet
  uint64_t t_first_byte_wall_us = 0;
  uint64_t t_head_ms = 0;          // request head complete (queue and connect times: leg())
  // tarpit, reject, silent-drop: HAProxy logs TR as -1 (the request analysis never ended) and
  // a tarpit's delay as Tw.
  bool killed_request = false;
  long tarpit_ms = -1;
  uint64_t t_response_ms = 0;      // response head complete
  uint64_t bytes_out = 0;          // server -> client bytes (%B)
  uint64_t req_sent = 0;           // request bytes written to the server
  uint64_t res_sent = 0;           // bytes written to the client (res.bytes_out)
  int status = -1;                 // status sent to the client, -1 none
  int res_uncounted = 0;           // final status parsed, not yet in the hrsp counters
  log::Termination term;           // how it ended (the log's %ts)
  bool logged = false;             // the log line was emitted (or suppressed)
  bool quiet = false;              // ends without a log line (a silent keep-alive close)
  uint8_t rst_ttl = 0;             // a tcp-request silent-drop's rst-ttl (session, content)
  std::string req_line;            // for the log: "GET / HTTP/1.1", or "<BADREQ>"
  std::string unique_id;           // unique-id-format's id of this request (%ID, unique-id)
  // The process-wide stream number (%rt, txn.id32), taken from the shared counter the first
  // time something shows it (stream_number()).
  mutable uint64_t stream_id = 0;
  mutable bool has_stream_id = false;
  bool reused_server_conn = false;   // the request went out on a connection from the idle pool
  uint8_t fc_err = 0;                // fc_err: the client connection's log::ConnError
  uint32_t fc_glitches = 0;          // fc_glitches: heads that had a glitch (http::RequestParser)
  uint32_t bc_glitches = 0;          // bc_glitches: its server connection's, at its response
  uint32_t calls = 0;                // cpu_calls: the events the connection handled for it
  int server_fd = -1;                // its server connection's socket, -1: none
  ssl_st* server_ssl = nullptr;      // and its TLS connection (`server ... ssl`), null: none
  uint64_t accept_ms() const override { return t_accept_ms_; }
  uint64_t stream_number() const override {
    if (!has_stream_id) {
      stream_id = w_.process().next_stream_id();
      has_stream_id = true;
    }
    return stream_id;
  }

  // First byte of a request seen at `now` (the request timer starts).
  void first_byte(uint64_t now);
  // The log's timers of this transaction so far: its date, %Ti, %TR, %Tw, %Tc, %Tr.
  void fill_times(log::Record& r) const;
  // The timer and byte-count fetches while rules run (the request's timers are known on the
  // response side only: during request rules HAProxy has not set them yet).
  bool stream_query(sample::Env::Query q, bool response_side, int64_t* out) const override;
  bool stream_text(sample::Env::TextQuery q, std::string_view* out) const override;

 private:
  // Runs `use` with the view and record of a server connection that opens now
  // (http_txn_forward.cc).
  template <class Use>
  void at_server_connect(HttpCodecs& codecs, Use&& use);
  // What the request's expressions read (the sample context, the proxy around it), built on
  // first use: a request that meets no rule, use_backend, unique id or hashing balance costs
  // no 400-byte context (http_txn.cc).
  class RequestScope;
  bool route(rules::HeadEdit& edit, RequestScope& rs);
  // Cookie persistence and `capture cookie` (proxy/cookie.h): the request's step once its
  // backend's rules ran (force-persist / ignore-persist, the server the cookie names), and the
  // response's after the http-response rules.
  void cookie_request(rules::HeadEdit& edit, RequestScope& rs);
  void cookie_response(int code, rules::HeadEdit& edit);
  // option checkcache: a response a shared cache would store with its cookie becomes the
  // client's error page for its status (http_txn_response.cc). True: *reply_ is set.
  bool block_cacheable_cookie(int code, const rules::HeadEdit& edit);
  bool backend_content_allowed(rules::RequestView& view);
  // The backend's `tcp-response content` rules on a response head: kReply when they reject
  // it (closed without an answer) or close the server (a 502).
  Next response_content(int code, rules::HeadEdit& edit, HttpCodecs& codecs);
  void add_forwardfor(rules::HeadEdit& edit) const;
  // `option forwarded` (the backend's) and `option originalto`, after the rules
  // (http_txn_forward.cc).
  void add_forwarded(rules::HeadEdit& edit, rules::RequestView& view);
  // `option http-restrict-req-hdr-names delete|reject`: true when the request is answered (a
  // 403, reply_).
  bool restrict_header_names(rules::HeadEdit& edit);
  // A POST the stats page of a proxy with `stats admin` may take.
  bool stats_admin_post(const http::RequestHead& head) const;
  void add_originalto(rules::HeadEdit& edit);
  // The address the client connected to: the bind address, or the kernel's answer on a
  // wildcard bind (asked once, then kept as the connection's), or what the PROXY header and
  // set-dst said.
  const net::SocketAddress* connection_dst();
  void make_unique_id(rules::HeadEdit& edit, rules::RequestView& view);
  // `answer` is route()'s handling of a rule verdict (deny, return, redirect...): true when
  // it answered.
  using AnswerFn = std::function<bool(const rules::Verdict&, Proxy&)>;
  bool serve_stats(Proxy& px, rules::HeadEdit& edit, RequestScope& rs, const AnswerFn& answer);
  void serve_metrics(const rules::HeadEdit& edit);
  void service_reply(stats::Reply r);
  void count_status(int status);   // frontend and backend
  // The message of `redirect` rules.
  static std::string redirect_bytes(int status, std::string_view location, std::string_view set_cookie = {});
  rules::RequestView view_of_request(rules::HeadEdit& edit);
  // The view response rules see: the client, the request kept for them, the response.
  rules::RequestView view_of_response(int status, rules::HeadEdit& edit, HttpCodecs* codecs,
                                      ProxyEnv& env);
  // The sample language's variables of this transaction (and of its connection).
  void attach_vars(rules::RequestView& view, HttpCodecs* codecs);
  // Runs `list` with this stream's captures and StreamEdit, then takes on the addresses the
  // rules set (set-src, set-dst...) for what follows: fetches, forwardfor, the server pick
  // and the log.
  rules::Verdict run_rules(const std::vector<rules::HttpRule>& list, rules::RuleSide side,
                           rules::HeadEdit& edit, rules::RequestView& view, std::size_t first = 0);
  // The http-response rules (the backend's, then the frontend's) from where they stopped
  // (res_px_, res_rule_), then what follows them. http_txn_response.cc.
  Next response_rules(int code, rules::HeadEdit& edit, HttpCodecs& codecs);
  void adopt_addresses(rules::RequestView& view);
  // The request line as received (req_line, kept for the log) into `m`'s line_method,
  // line_target and version; false when none was kept.
  bool received_line(sample::HttpMsg& m) const;
  void keep_request_line(const http::RequestHead& head);
  // The line of log() (`step` kLogClose) or of an earlier step (log_step()).
  void emit_line(uint64_t now, bool early, LogStep step);
  void emit_step(LogStep step);
  sample::Captures* captures() { return caps_.get(); }
  // The frontend's capture slots for this connection, sized on first use (the frontend has
  // some); next_request() clears the values.
  void make_captures() {
    if (caps_) return;
    caps_ = std::make_unique<sample::Captures>();
    caps_->reset(fe_.settings.h.capture_request, fe_.settings.h.capture_response);
  }

  Worker& w_;
  Listener& l_;
  Proxy& fe_;
  const uint64_t t_accept_ms_;   // the connection's accept (fc.timer.total)
  Proxy* be_ = nullptr;     // backend of this transaction (leg_ attached there)
  net::SocketAddress client_;
  http::Method method_ = http::Method::kGet;
  bool http11_ = true;
  bool have_req_copy_ = false;
  std::string sni_host_;   // keep_sni_host()   // codecs.req_copy holds the request for response rules
  // While on_request() runs its rules: the request as they see it, for an error page that
  // renders log-format strings (error_reply()).
  RequestScope* live_request_ = nullptr;
  ssl_st* client_tls_ = nullptr;
  // An http-error page with log-format strings, rendered with what the stream knows now.
  std::string render_error_page(int status, const rules::HttpRule& rule);
  stats::ServiceRequest::Body body_state_ = stats::ServiceRequest::Body::kNotRead;
  std::string_view body_;        // set_request_body()
  std::string_view pending_body_;   // set_pending_body()
  bool pending_chunked_ = false;
  bool pending_whole_ = false;
  // The response rules: where they resume after a wait-for-body (the proxy: 0 the backend,
  // 1 the frontend; its rule), the wait asked, and the body they see (set_response_body()).
  uint8_t res_px_ = 0;
  uint32_t res_rule_ = 0;
  BodyWait res_body_wait_;
  std::string_view res_body_;
  bool res_body_whole_ = true;
  struct ForgetBody {   // clears set_response_body() when the rules are done
    HttpTxn& t;
    ~ForgetBody() {
      t.res_body_ = {};
      t.res_body_whole_ = true;
    }
  };
  // The frontend's capture slots, when it has some (out of line: a connection without them
  // neither builds nor destroys four vectors).
  std::unique_ptr<sample::Captures> caps_;
  rules::StreamEdit stream_;   // set-log-level, set-timeout, set-src... of this request
  std::unique_ptr<net::SocketAddress> conn_src_;   // the connection's source, once set-src ran
  // The connection's local address once a tcp-request session rule set it (set-dst...).
  std::unique_ptr<net::SocketAddress> conn_dst_;
  int client_fd_ = -1;   // set_client_fd()
  std::shared_ptr<const net::pp::Header> pp_;   // accept-proxy: the header received
  LocalReply* reply_ = nullptr;   // the codecs' reply, during on_request() and on_response()
  std::string* lb_key_ = nullptr;
  bool lb_key_set_ = false;   // *lb_key_ holds this request's balance key
  // sess.* variables, for the connection's life; only when the configuration names one. The
  // session's room (tune.vars.sess-max-size) counts them and its transactions' variables.
  // Its limit is set when variables first use it (attach_vars).
  sample::VarAccount sess_room_;
  std::unique_ptr<sample::VarStore> sess_vars_;
  // The codecs that hold this transaction's txn/req/res variables, for the log line; null
  // once they are given back or the next request begins.
  HttpCodecs* vars_codecs_ = nullptr;
  // The persistence step's state, made by the first request that runs it (kept for the next).
  std::unique_ptr<CookieTxn> ck_;
  mutable char term_text_[2];   // txn.sess_term_state's text, written when asked
  BackendLeg leg_;
};

}  // namespace sluice::proxy

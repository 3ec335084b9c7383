#pragma once
// One client connection of an HTTP-mode frontend, HTTP/1 on the wire (the mux): it parses and
// serializes the messages on its transports, and owns keep-alive, pipelining, 100-continue,
// upgrades and tunnels, the server connections and the timeouts. Each request is one
// transaction (proxy/http_txn.h, txn_): the mux hands it each parsed head and moves the bytes;
// the transaction decides (rules, routing, local answers) and keeps the record that the log
// line and the counters are made of. Worker-local from accept to close; nothing on its path
// takes a lock.
//
// Phases (phase_, driven by step()); each edge names the function that takes it:
//
//   kIdle: wait for a request head (http-request / http-keep-alive timeouts), and for its
//     |   body when the transaction wants it first (wait_body(): a stats admin POST)
//     | parse_request() -> begin_transaction() -> txn_.on_request() -> connect_server()
//     |   (a local answer instead: reply() of txn_.reply() -> kExchange, no server; a
//     |   tarpit's answer waits in kTarpit until its delay is over, then reply())
//     v
//   kConnect: a server picked (leg().pick() in connect_server()), then connecting
//     |       (leg().connect()) or reusing a private or idle server connection (leg().reuse()),
//     |       in start_connect(); a failed connect retries from here (on_connect_failed():
//     |       leg().fail() says now, or after the turn-around delay on the timer) or gives up
//     |       with a 503 (server_error())
//     |   <-> kQueued: every usable server at its maxconn: enter_queue(); leg().take_queued_slot()
//     |       and start_connect() from retry_from_queue() when a slot frees; 503 on timeout
//     |       queue (on_connect_failed())
//     | on_connected()
//     v
//   kExchange: request body to the server, response head and body to the client
//     | end_transaction(), once both messages are complete and the output is sent:
//     |   -> kIdle (keep-alive; the next pipelined request is parsed at once)
//     |   -> kClosing (closes_after_transaction(): close mode, client FIN, soft stop)
//     |   (parse_response() hands the final head to txn_.on_response(), which may answer
//     |   instead: the server connection is dropped and reply() sent)
//     | enter_tunnel() from parse_response(): 101, or 2xx to CONNECT -> kTunnel
//     | server_abort() after response bytes went out -> kClosing
//   kTunnel: bytes both ways (tunnel()) until both directions are closed -> finish()
//   kClosing: the last bytes go out (write_client()); then close_after_last_bytes():
//     -> kLinger (soft stop, no `option nolinger`, client FIN not seen: begin_linger())
//     -> kClosed (close_now())
//   kLinger: FIN sent; linger() reads and drops the client's bytes until its FIN or kLingerMs
//     -> kClosed (close_now(), or the timer)
//   kClosed: finish() from any phase (errors, timeouts in on_timer(), a client reset in
//     kQueued/kConnect/kExchange, abort() from `shutdown session`): logs what was not logged,
//     closes both connections, releases the slots, defer_free. Terminal.
//
// The server side up to a connected socket (pick, queue, connect, retries, redispatch, their
// timings and counters) is the transaction's backend leg (proxy/backend_leg.h, txn_.leg());
// the mux keeps the server connections themselves (ServerConn: the idle pool, `http-reuse
// never` private connections), the exchange and the timer.
//
// Errors answer the client with sluice's page (400, 408, 502, 503, 504...) when no byte of a
// response went out yet; otherwise both connections are aborted.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/block_cache.h"
#include "core/buffer.h"
#include "proxy/out_queue.h"
#include "core/event_loop.h"
#include "http/http.h"
#include "log/conn_error.h"
#include "log/termination.h"
#include "net/address.h"
#include "net/socks4.h"
#include "net/transport.h"
#include "proxy/backend_leg.h"
#include "proxy/http_codecs.h"
#include "proxy/http_txn.h"
#include "proxy/process.h"
#include "proxy/server_tls.h"
#include "proxy/session.h"
#include "rules/rules.h"

namespace sluice::proxy {

class Worker;
struct ServerConn;

class H1Connection final : public Session {
 public:
  H1Connection(Worker& w, Listener& l, int fd, const net::SocketAddress& client);
  ~H1Connection() override;
  // One per accepted connection, and larger than glibc's thread cache serves: the blocks are
  // kept per thread (core::BlockCache).
  static void* operator new(std::size_t n) {
    return n == sizeof(H1Connection) ? core::BlockCache<sizeof(H1Connection)>::take()
                                     : ::operator new(n);
  }
  static void operator delete(void* p, std::size_t n) noexcept {
    if (n == sizeof(H1Connection)) core::BlockCache<sizeof(H1Connection)>::give(p);
    else ::operator delete(p);
  }

  void start() override;
  // Decrypted bytes may already wait inside OpenSSL, where no event announces them.
  void adopt_tls(ssl_st* s) override {
    cio_.set_tls(s);
    cio_.set_watched();
    txn_.set_client_tls(s);
    c_rd_ = true;
  }
  void adopt_proxy_header(std::shared_ptr<const net::pp::Header> h) override {
    txn_.adopt_proxy_header(std::move(h));
  }
  void abort(const char* reason) override;
  // silent-drop: the close becomes a reset that does not leave this host (rst-ttl: a reset
  // with that IP TTL instead).
  void drop_silently(int rst_ttl = 0);
  bool glitch_limit();   // a head with a glitch: counted, and the threshold applied
  bool retry_from_queue() override;
  bool uses_server(const lb::Server* srv) const override { return txn_.leg().server() == srv; }
  void describe(SessionInfo* info) const override;
  void on_soft_stop() override;
  void flush_sends() override;

  // Events of the server connection this session owns (ServerConn forwards them).
  void on_server_io(uint32_t events);

 private:
  // option h1-case-adjust-bogus-client: how names are spelled in the heads sent to clients.
  const http::CaseMap* client_case_map() const {
    return fe_.settings.h.case_adjust_client ? &http::case_adjust_map() : nullptr;
  }
  // Closing the client side at a soft stop without losing a request (see on_soft_stop()).
  bool closes_after_transaction() const;
  void close_after_last_bytes();
  void begin_linger();
  bool linger();
  struct ClientEnd : core::IoHandler {
    H1Connection* s = nullptr;
    void on_io(uint32_t events) override { s->on_client_io(events); }
  };
  // kLinger: sluice's FIN was sent; the client's input is read and dropped until its own FIN
  // (or a short deadline), so that the close resets nothing a client could still retry.
  enum class Phase { kIdle, kTarpit, kQueued, kConnect, kExchange, kTunnel, kClosing, kLinger,
                     kClosed };

  void on_client_io(uint32_t events);
  void on_timer(core::Timer& t) override;
  void pump();
  bool step();

  // Client side.
  bool read_client();
  bool write_client();
  bool parse_request();
  // A head the transaction wants with its body (HttpTxn::wants_body_first()): true once the
  // transaction began.
  bool wait_body();
  // A body awaited before the transaction did not come in time: 408 (the head is logged).
  void body_timeout(const http::RequestHead& head);
  // option abortonclose, in the frontend or the transaction's backend.
  bool aborts_on_close() const {
    return fe_.settings.h.abortonclose ||
           (txn_.backend() && txn_.backend()->settings.h.abortonclose);
  }
  void begin_transaction();
  bool request_body();
  void reject_request(int status, log::Termination term);

  // Routing and the server connection.
  // A local answer (deny, return, redirect, monitor-uri, 502-504) keeps the connection only
  // after the whole request was read; 400, 408 and parser rejections always close it.
  void skip_buffered_body();
  // The request head for the server, in to_srv_: the connection mode, the framing the rules
  // left. False when it cannot be sent (framing the rules broke, a head larger than a buffer).
  bool serialize_server_head(rules::HeadEdit& edit);
  void connect_server();
  void start_connect();
  void on_connected();
  void on_connect_failed(const ConnectError& e);
  void enter_queue();
  void prefer_last_server();
  void leave_queue();
  void detach_server(bool reusable);
  bool read_server();
  bool write_server();

  // Response side.
  bool parse_response();
  // The response rules' verdict on the head parsed (HttpTxn::on_response()): wait for the
  // body, answer instead, or forward the head.
  bool response_ruled(HttpTxn::Next next);
  // What is buffered of the response body (http-response wait-for-body).
  struct ResponseBody {
    std::string_view data;
    bool whole = true;
    bool bad = false;   // a malformed chunk
    http::ParseError error = http::ParseError::kNone;
  };
  ResponseBody buffered_response_body();
  // http-response wait-for-body: false while it waits.
  bool wait_response_body();
  bool response_body();
  void end_transaction();
  // Sends an answer of sluice's own instead of a server's, framed for this connection.
  void reply(LocalReply r);
  void error_reply(int status, log::Termination term, bool close_after,
                   bool announce_close = true) {
    reply(txn_.error_reply(status, term, close_after, announce_close));
  }
  void server_error(int status, log::Termination term);
  // Closes the server connection and forgets its input: nothing more of this exchange is read.
  void drop_server();
  void enter_tunnel();
  bool tunnel();
  void out_of_memory();
  // Sends what is left of srv_preamble_ (false, errno set, until all of it is gone).
  bool send_preamble(net::RawTransport& io);
  // socks4: moves the handshake on; done: on_connected(); failed: on_connect_failed().
  // False while it waits for the proxy. Cold: only servers with `socks4` come here.
  [[gnu::cold]] bool socks_step();
  // The link to the server is up (connected, through its SOCKS4 proxy when it has one): the
  // TLS handshake next for an `ssl` server, else on_connected(). False while it waits.
  bool link_ready();
  // ssl: moves the handshake on; done: on_connected(); failed: on_connect_failed(). False
  // while it waits for the server. Cold: only servers with `ssl` come here.
  [[gnu::cold]] bool tls_step();
  // A read or write on the client failed with `err`: fc_err's code. Cold, out of line.
  [[gnu::cold, gnu::noinline]] void client_failed(int err);
  // The loop reported an error on the client socket: c_err_, and fc_err from its SO_ERROR.
  [[gnu::cold, gnu::noinline]] void client_error_event();

  uint64_t deadline() const;
  void arm_timeout();
  bool client_timeout_runs() const;   // kExchange: sluice waits on the client
  bool server_timeout_runs() const;   // kExchange: sluice waits on the server
  void finish(log::Termination term);
  void close_now();
  void server_abort(log::Termination term);
  Worker& w_;
  Listener& l_;
  Proxy& fe_;
  ServerConn* sc_ = nullptr;       // server connection in use (or kept private)
  ServerConn* private_ = nullptr;  // `http-reuse never`: this client's own server connection
  // The server (and its backend) of this client's previous request: option prefer-last-server.
  lb::Server* last_srv_ = nullptr;
  const Proxy* last_be_ = nullptr;
  // A server connection of this client answered an NTLM or Negotiate challenge: its next
  // requests prefer the last server, as with option prefer-last-server (HAProxy's
  // SESS_FL_PREFER_LAST).
  bool prefer_last_ = false;
  // send-proxy: the PROXY protocol header still to send on a new server connection, before
  // the request.
  std::string srv_preamble_;
  // socks4: the handshake with the server's SOCKS4 proxy on a new server connection; until it
  // is done the connection counts as connecting (null: none under way).
  std::unique_ptr<net::socks4::Handshake> socks_;
  // ssl: the TLS handshake on a new server connection; until it is done the connection counts
  // as connecting (null: none under way).
  std::unique_ptr<ServerTlsStart> stls_;
  net::RawTransport cio_;   // the client connection
  ClientEnd cend_;
  Phase phase_ = Phase::kIdle;

  // Buffers: bytes read from each side, and bytes queued towards each side.
  core::Buffer* cin_ = nullptr;
  core::Buffer* sin_ = nullptr;
  OutQueue to_srv_;
  OutQueue to_cli_;

  // Socket state (edge-triggered: readiness remembered until EAGAIN).
  bool c_rd_ = false, c_wr_ = true, c_eof_ = false, c_hup_ = false, c_err_ = false;
  bool s_rd_ = false, s_wr_ = false, s_eof_ = false, s_hup_ = false, s_err_ = false;
  bool s_connecting_ = false;
  bool c_shut_ = false;

  // Current transaction: its codecs exist from a request's first byte to the end of its
  // transaction (proxy/http_codecs.h), taken from and given back to the worker's spares.
  void start_codecs();
  void release_codecs();
  std::unique_ptr<HttpCodecs> tx_;
  http::BodyKind req_body_ = http::BodyKind::kNone;
  http::BodyKind res_body_ = http::BodyKind::kNone;
  uint64_t req_left_ = 0, res_left_ = 0;
  bool req_done_ = false;          // the whole request was read from the client
  std::size_t req_skip_ = 0;       // body bytes after the head passed over with a local answer
  bool req_rechunk_ = false;       // a Content-Length body goes out chunked (rules deleted CL)
  bool res_head_done_ = false;     // the final response head was parsed (or generated)
  bool res_head_sent_ = false;     // response bytes were queued to the client: no error page now
  // The final response head sits in to_cli_ from res_head_at_ on and no byte of it was written
  // yet: a body error found now can still become a 502 (once a byte left, a bad chunk is an
  // abort, `PD--`).
  bool res_head_unsent_ = false;
  std::size_t res_head_at_ = 0;
  bool in_pump_ = false;           // pump() is running (state changes inside it need no pump)
  bool s_shut_ = false;            // tunnel: FIN passed on to the server
  std::string res_trailers_;       // pending trailer fields of a chunked response
  std::string req_trailers_;
  bool res_done_ = false;
  bool req_keep_alive_ = true;     // the client's request allows persistence
  bool client_close_ = false;      // close the client connection after this transaction
  bool keepalive_promised_ = false;  // the response head told the client the connection stays
  bool server_close_ = false;      // do not reuse the server connection afterwards
  bool upgrade_ = false;           // request asked for a protocol upgrade
  bool body_wait_ = false;         // kIdle: a complete head waits for its body (wait_body())
  bool continue_sent_ = false;     // sluice answered its Expect: 100-continue itself
  // wait-for-body: when its time is over (0: no such limit), and whether it is.
  uint64_t body_wait_until_ = 0;
  bool body_wait_expired_ = false;
  // http-response wait-for-body: the head waits in sin_ for its body (wait_response_body())
  // until res_wait_until_ (0: no time of its own) or res_wait_least_ bytes (0: all of it).
  bool res_wait_ = false;
  bool res_wait_expired_ = false;
  uint64_t res_wait_until_ = 0;
  uint64_t res_wait_least_ = 0;
  bool reused_conn_ = false;       // the server connection came from the idle pool
  bool expect_tunnel_ = false;     // CONNECT
  bool first_request_ = true;
  bool soft_stop_ = false;
  // How the client connection closes when not the default (a silent-drop's reset).
  net::CloseMode close_mode_ = net::CloseMode::kPushedFin;
  uint64_t stop_grace_ms_ = 0;     // soft stop: an idle connection's next request is awaited until then
  uint64_t tarpit_until_ = 0;      // kTarpit: when the held answer (tx_->reply) goes out
  uint64_t linger_until_ms_ = 0;   // kLinger: the client's FIN is awaited until then
  uint32_t requests_ = 0;

  // Timers (monotonic ms).
  uint64_t t_accept_ms_;           // the connection's accept (show sess)
  uint64_t c_last_ms_, s_last_ms_;
  HttpTxn txn_;                    // the current transaction
  core::Timer timer_;
};

}  // namespace sluice::proxy

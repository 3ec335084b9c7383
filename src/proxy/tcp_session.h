#pragma once
// One proxied TCP connection: client side, server side, and the relay between them.
// Worker-local from accept to close; nothing on its path takes a lock.
//
// States (state_); each edge names the function that takes it:
//
//   start() --tcp-request content rules read bytes--> kInspecting
//     |   inspect(): kWait arms the timer (inspect-delay, timeout client); kReject: reject()
//     |   -> kClosed; kAccept: the backend is chosen -> kConnecting, route()
//     | (no such rule: start() -> read_early() -> route(), the state is kConnecting already)
//     v
//   kConnecting: route() picks a server (leg_.pick()) and start_connect() opens the socket
//     |   (leg_.connect())
//     |   <-> kQueued: every usable server at its maxconn: enter_queue(); retry_from_queue()
//     |       -> leg_.take_queued_slot() -> start_connect() when a slot frees; on_timer():
//     |       `timeout queue` (sQ, leg_.fail()) or the client's (cQ) -> kClosed
//     |   on_connect_failed() (error, or `timeout connect` in on_timer()): leg_.fail() retries
//     |   now (start_connect()), after the turn-around delay (the timer, then start_connect()),
//     |   possibly on another server (redispatch), or gives up -> kClosed (SC/sC, econ)
//     | on_connected(): EPOLLOUT in on_io(), or a first send that succeeded in start_connect()
//     v
//   kEstablished: relay(true) / relay(false) from pump(), half-close per direction
//     | both directions done -> finish("--"); an error, or a timeout in on_timer() (cD/sD)
//     v
//   kClosed: finish() from any state (also route() without a backend or server, abort() from
//     `shutdown session`): closes both sides, releases the slots, logs, defer_free. Terminal.
//
// The server side up to a connected socket (pick, queue, connect, retries, redispatch, their
// timings and counters) is the session's backend leg (proxy/backend_leg.h, leg_); the session
// keeps the sockets, the relay and the timer. kQueued and kConnecting mirror the leg's kQueued
// and kPicked..kRetryWait.
//
// Half-close: when one side sends FIN, the relay finishes sending what it has buffered in that
// direction and then shuts down the write side towards the other peer; the opposite direction
// keeps flowing until its own FIN. The session ends when both directions are done.
#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "core/event_loop.h"
#include "log/termination.h"
#include "net/address.h"
#include "net/socks4.h"
#include "net/transport.h"
#include "proxy/backend_leg.h"
#include "proxy/process.h"
#include "proxy/server_tls.h"
#include "proxy/session.h"
#include "proxy/stream_times.h"
#include "rules/rules.h"
#include "sample/captures.h"
#include "sample/vars.h"

namespace sluice::proxy {

class Worker;
class ProxyEnv;

class TcpSession final : public Session, public StreamTimes {
 public:
  // Takes ownership of `fd`; the connection slots (global, frontend, bind line) have already
  // been acquired by the accept path and are released when the session ends.
  TcpSession(Worker& w, Listener& l, int fd, const net::SocketAddress& client);
  ~TcpSession() override;

  void start() override;
  // Decrypted bytes may already wait inside OpenSSL, where no event announces them.
  void adopt_tls(ssl_st* s) override {
    cio_.set_tls(s);
    cio_.set_watched();
    c_rd_ = true;
  }
  ssl_st* client_tls() const override { return cio_.tls(); }
  ssl_st* server_tls() const override { return sio_.tls(); }
  void adopt_proxy_header(std::shared_ptr<const net::pp::Header> h) override {
    if (h->has_addresses) {
      if (!rd_) rd_ = std::make_unique<RuleData>();
      rd_->local = h->dst;
      rd_->local_set = true;
      leg_.set_local_port(h->dst.port());
    }
    pp_ = std::move(h);
  }
  const net::pp::Header* proxy_header() const override { return pp_.get(); }
  void abort(const char* reason) override;
  bool retry_from_queue() override;
  bool uses_server(const lb::Server* srv) const override { return leg_.server() == srv; }
  void describe(SessionInfo* info) const override;

  // The server this session is connected (or connecting) to, null before the first pick.
  // Worker-local.
  const lb::Server* server() const { return leg_.server(); }
  // The timer and byte-count fetches in its rules: the queue time once routed, the accept
  // date; no request timers, and the byte counts are 0 until the end (HAProxy's answers).
  bool stream_query(sample::Env::Query q, bool response_side, int64_t* out) const override;
  bool stream_text(sample::Env::TextQuery q, std::string_view* out) const override;

 private:
  struct End : core::IoHandler {
    End(TcpSession* session, bool client_side) : s(session), client(client_side) {}
    TcpSession* s;
    bool client;
    void on_io(uint32_t events) override { s->on_io(client, events); }
  };
  // kInspecting: `tcp-request content` rules read the client's bytes and wait for more (no
  // backend yet, be_ null, no server socket).
  enum class State { kInspecting, kQueued, kConnecting, kEstablished, kClosed };

  void on_io(bool client, uint32_t events);
  void on_timer(core::Timer& t) override;
  void route();
  void read_client();
  void inspect(bool expired);
  void reject(bool backend = false);
  // Reads and drops what the client already sent (not counted), so that the close is a FIN.
  void drain_client();
  std::string_view payload() const;
  void start_connect();
  void read_early();
  void enter_queue();
  void leave_queue();
  void on_connected();
  // send-proxy / send-proxy-v2: the header to the server; false when the session ended.
  bool send_proxy_header();
  // The header send_proxy_header() sends (sent before the TLS handshake to an ssl server).
  std::string proxy_header();
  // socks4: moves the handshake on; done: link_ready(); failed: on_connect_failed(). False
  // while it waits for the proxy.
  [[gnu::cold]] bool socks_step();
  // The link to the server is up: the TLS handshake next for an `ssl` server, else
  // on_connected(). False while it waits, or when the session ended or retries.
  bool link_ready();
  // ssl: moves the handshake on; done: on_connected(); failed: on_connect_failed(). Cold.
  [[gnu::cold]] bool tls_step();
  void out_of_memory();
  void on_connect_failed(const ConnectError& e);
  void pump();
  bool relay(bool to_server);
  void arm_timeout();
  uint64_t deadline() const;
  void finish(log::Termination term);
  // A read or write on one side failed with `err` (fc_err, bc_err). Out of line and cold:
  // the relay's hot path stays as it was.
  [[gnu::cold, gnu::noinline]] void note_error(bool server, int err);
  // `tcp-request content` rules; false when they rejected the session (already finished).
  bool content_allowed();
  // What rules keep for the session: variables, a local address rewritten by set-dst and the
  // capture slots.
  // Allocated when a rule set of a proxy that needs it first runs (ProxySettings::
  // tcp_rule_data); a session without such rules has none.
  // Variables' memory counts up the scopes (tune.vars.*-max-size): req and res in one reqres
  // room, then txn, then sess (the accounts come first: the stores give their bytes back
  // when they go).
  struct RuleData {
    sample::VarAccount sess_room{sample::var_limits().sess};
    sample::VarAccount txn_room{sample::var_limits().txn, &sess_room};
    sample::VarAccount reqres_room{sample::var_limits().reqres, &txn_room};
    sample::VarStore sess{sample::Scope::kSess, 0, &sess_room};
    sample::VarStore txn{sample::Scope::kTxn, 0, &txn_room};
    sample::VarStore req{sample::Scope::kReq, 0, &reqres_room};
    sample::VarStore res{sample::Scope::kRes, 0, &reqres_room};
    net::SocketAddress local;
    bool local_set = false;
    sample::Captures caps;   // the frontend's capture slots (tcp-request content capture)
  };
  // Runs `list` (a rule set of `px`) on `v`, whose payload and avail the caller filled: the
  // addresses, variables and environment are the session's; set-src rewrites client_.
  rules::TcpVerdict run_rules(const std::vector<rules::TcpRule>& list, const Proxy& px,
                              rules::RequestView& v);
  // A request-side verdict that ends the session (reject, silent-drop): false then.
  bool request_verdict(rules::TcpVerdict v, bool backend = false);
  // `tcp-request session` rules; false when they closed the session (not logged).
  bool session_rules();
  // The backend's `tcp-request content` rules, once the session reaches it; false when they
  // rejected it.
  bool backend_rules();
  // `tcp-response content` rules on the server's first bytes; false while they wait or when
  // they ended the session.
  bool inspect_response();
  // silent-drop: the client is closed with a reset and, on a stream, a TTL of 1 first so that
  // the reset dies on the way (HAProxy); nothing is sent.
  void silent_drop(bool stream);
  // The local address the rules and the log see (set-dst's, else the listener's), null for
  // UNIX listeners.
  const net::SocketAddress* local_address() const;
  uint64_t accept_ms() const override { return t_accept_ms_; }
  uint64_t stream_number() const override {
    if (!has_stream_id_) {
      stream_id_ = w_.process().next_stream_id();
      has_stream_id_ = true;
    }
    return stream_id_;
  }
  // The tcplog line; finish() calls it only when the frontend has `option tcplog` and a log.
  // `early`: option logasap's line, when the server connection is established. False when
  // dontlognull kept it back. `step`: a log-steps line before the end (`early` then too).
  bool log_session(bool early = false, LogStep step = kLogClose);
  // What `%[...]` reads of this session (log lines, set-proxy-v2-tlv-fmt): `ctx` filled with
  // its addresses, variables and captures, and `env`. tcp_session_log.cc.
  void fill_sample_ctx(sample::Ctx& ctx, ProxyEnv& env) const;
  // The values of the server's set-proxy-v2-tlv-fmt formats, appended to `out`.
  void render_pp2_tlvs(const std::vector<ProxySettings::Pp2TlvFormat>& formats,
                       std::vector<net::pp::Tlv>* out) const;
  // `-d`: one line on stderr. The test is inline, as it runs several times per connection
  // and is false unless debugging; the line is built out of line (trace_line).
  void trace(const char* what) {
    if (w_.process().settings().debug) trace_line(what);
  }
  void trace_line(const char* what);

  Worker& w_;
  Listener& l_;
  Proxy& fe_;
  Proxy* be_;   // the frontend's default until route() (its backend leg attaches there)
  net::RawTransport cio_;   // the client connection
  net::RawTransport sio_;   // the server connection, once connecting
  // socks4: the handshake with the server's SOCKS4 proxy; the session stays kConnecting until
  // it is done (null: none under way).
  std::unique_ptr<net::socks4::Handshake> socks_;
  // ssl: the TLS handshake with the server; the session stays kConnecting until it is done
  // (null: none under way).
  std::unique_ptr<ServerTlsStart> stls_;
  End cend_, send_;
  core::Buffer* req_ = nullptr;   // client -> server
  core::Buffer* res_ = nullptr;   // server -> client
  State state_ = State::kConnecting;
  bool c_rd_ = true, c_wr_ = true, s_rd_ = false, s_wr_ = false;   // readiness (edge-triggered)
  bool c_eof_ = false, s_eof_ = false;         // FIN received from that side
  bool c_hup_ = false, s_hup_ = false;         // epoll reported RDHUP/HUP/ERR for that side
  bool c_err_ = false, s_err_ = false;         // of those, HUP/ERR (reset or error, not a FIN)
  bool c_shut_ = false, s_shut_ = false;       // we shut down our write side towards it
  // Ended before a backend was chosen (a tcp-request content reject, an error while
  // inspecting): logged as HAProxy does, with the frontend as backend and -1 timers.
  bool ended_in_frontend_ = false;
  bool logged_ = false;   // option logasap logged the session when it was established
  // The client failed while inspecting (`timeout client`: "cR", an error: "CR"): the rules
  // judge what came, and the session ends with this once routed, as in HAProxy.
  std::optional<log::Termination> client_end_;
  uint64_t inspect_until_ms_ = 0;  // end of inspect-delay, 0 = judge at once
  uint64_t t_accept_ms_;
  uint64_t t_routed_ms_;  // backend chosen (after inspection): Tw ends, Tc counts from
  uint64_t c_last_ms_, s_last_ms_;
  uint64_t t_accept_wall_us_;
  // The process-wide stream number (%rt, txn.id32), taken the first time something shows it.
  mutable uint64_t stream_id_ = 0;
  mutable bool has_stream_id_ = false;
  uint64_t bytes_in_ = 0, bytes_out_ = 0;
  uint64_t early_bytes_ = 0;   // read before a server was picked, not yet on its counters
  net::SocketAddress client_;
  // What `balance hash` / `rdp-cookie` hash for this session (made on first use; the leg
  // reads it again on a redispatch).
  std::unique_ptr<std::string> lb_key_;
  BackendLeg leg_;   // after client_ and lb_key_, which it reads
  std::unique_ptr<RuleData> rd_;
  // The backend's tcp-response content rules have not decided yet: the server's bytes wait
  // (until res_inspect_until_ms_, 0 = no inspect-delay).
  bool res_inspect_ = false;
  uint64_t res_inspect_until_ms_ = 0;
  bool no_log_ = false;         // closed by tcp-request session rules: no log line (HAProxy)
  bool client_reset_ = false;   // silent-drop: the client is closed with a reset
  uint8_t rst_ttl_ = 0;         // silent-drop rst-ttl: that reset's IP TTL
  bool denied_ = false;         // a rule ended it before a server: -1 timers in the log
  uint8_t fc_err_ = 0;          // fc_err: the client connection's log::ConnError
  mutable char term_text_[2];   // txn.sess_term_state's text, written when asked
  uint32_t calls_ = 0;          // cpu_calls: the events this session handled
  int io_err_ = 0;              // the errno of the read or write that ended the session
  std::shared_ptr<const net::pp::Header> pp_;   // accept-proxy: the header received
  // The last final tcp-request / tcp-response content rule that matched (last_rule_*).
  const rules::RuleLoc* last_rule_ = nullptr;
  core::Timer timer_;
  log::Termination last_term_;   // termination state for the log
};

}  // namespace sluice::proxy

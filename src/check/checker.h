#pragma once
// One server's health check. A Checker lives on one worker's event loop (chosen by app at
// start-up) and never blocks it: the connect, the request and the response are non-blocking
// socket operations driven by epoll, and the pause between checks is a wheel timer.
//
// Phases (phase_); each edge names the function that takes it:
//
//   kIdle --on_timer(): begin() (connect_nonblocking())--> kConnecting
//     (in maintenance, on_timer() only re-arms for one interval and stays kIdle;
//      a connect that fails at once: complete(L4CON or SOCKERR) -> kIdle)
//   kConnecting --on_io(): EPOLLOUT, no socket error--> on_connected():
//       connect check: complete(L4OK) -> kIdle (after sending the PROXY header, if any)
//       rule set (tcp-check, http-check, protocol checks): run_rules()
//     on_io(): socket error -> complete(L4CON); on_timer(): timeout -> complete(L4TOUT)
//   run_rules() runs the steps in order: a connect -> kConnecting (a new connection); a send
//     -> kSending, send_more() until sent; an expect judged at once, or -> kReading until
//     read_more() brings enough; the last step passed -> complete(its ok-status). A failed
//     expect -> complete(its error-status); on_timer(): timeout -> complete(its tout-status).
//   complete(): closes the socket, -> kIdle, feeds the health counter (Health::report(),
//     health.h); a change goes through report_change() -> Backend::set_check_up + a log line;
//     the timer is armed for next_interval(). stop() -> kIdle from any phase.
//
// A server in maintenance is not checked (HAProxy pauses its checks): the timer keeps
// running and the check resumes when the server leaves maintenance.
//
// check/ cannot see proxy/ (logs, sessions): app passes the hooks below.
#include <sys/socket.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "check/health.h"
#include "check/rules.h"
#include "core/event_loop.h"
#include "lb/backend.h"
#include "net/address.h"
#include "net/proxy_protocol.h"
#include "net/socks4.h"
#include "net/tls.h"

namespace sluice::check {

struct CheckSettings {
  // kTcp: a connect; kRules: a rule set (`option tcp-check` with rules, a protocol check,
  // `option httpchk` and its http-check rules), in `rules`.
  // kAgent: the server's agent (`agent-check`), whose one-line answers change the server's
  // state, weight and maxconn (check/agent.cc).
  // kExternal: `option external-check`, a command run for each check (check/external.cc).
  enum class Type { kTcp, kRules, kAgent, kExternal };
  Type type = Type::kTcp;
  std::shared_ptr<const RuleSet> rules;   // kRules
  // Where to connect. Parts not set on the server line (`addr`, `port`) follow the server's
  // current endpoint at each check, so that `set server addr` moves the checks with the
  // traffic (HAProxy); `addr` holds the configured values of those that are set.
  net::SocketAddress addr;
  bool own_addr = false;         // `addr` on the server line: the check's IP stays
  bool own_port = false;         // `port` on the server line: the check's port stays
  int rise = 2;
  int fall = 3;
  InitState init_state = InitState::kNone;   // `init-state`
  // A saved state (server-state file) overrides init-state: the counter's value and the
  // verdict (-1: none).
  int restored_health = -1;
  bool restored_up = true;
  int spread_pct = 0;   // global `spread-checks`: each interval varies by up to this % either way
  Intervals intervals;
  uint32_t timeout_ms = 0;       // whole check (`timeout check`), 0 = inter
  bool shutdown_sessions = false;   // `on-marked-down shutdown-sessions`
  // `on-marked-up shutdown-backup-sessions`: when this active server comes UP, the backend's
  // backup servers' established sessions are closed (their clients come back to it).
  bool shutdown_backup_sessions = false;
  // A PROXY protocol header opens each check connection (`check-send-proxy`, or the server's
  // send-proxy when the check has no `port` nor `addr` of its own): 1 v1, with the check
  // connection's own addresses; 2 v2, the LOCAL command with the set-proxy-v2-tlv-fmt values
  // (CheckHooks::pp2_tlvs) and the CRC32C of `proxy-v2-options crc32c`; 0 none.
  int send_proxy = 0;
  bool pp2_crc32c = false;
  // The server's `socks4 <addr>:<port>` (has_socks4): with `check-via-socks4` (via_socks4) the
  // check's own connection goes through that proxy, and so does a rule's `connect via-socks4`.
  bool has_socks4 = false;
  net::SocketAddress socks4;
  bool via_socks4 = false;
  // TLS (`check-ssl`, or the server's `ssl`): the check's own connection makes a handshake
  // with this context (sending `tls_sni`, `check-sni`, when not empty) once connected, after
  // the PROXY header; a connect check then passes as L6OK, a failed handshake is L6RSP and
  // one that does not end in time L6TOUT. Null: plain.
  std::shared_ptr<const net::tls::ClientContext> tls;
  std::string tls_sni;
  // The context of `connect ssl` steps (the server's, or one made for them); their own `sni`
  // and `alpn` apply, else tls_sni and the context's.
  std::shared_ptr<const net::tls::ClientContext> rule_tls;
  // `option log-health-checks`: a line for each check whose result changes the server's
  // health or status ("Health check for server b/s succeeded, ..."), and state changes
  // without their reason, as HAProxy 3.5 writes them.
  bool log_checks = false;
  // http-check disable-on-404: a 404 from a server that is UP passes conditionally (L7OKC) and
  // puts it in the stopping state (no new traffic) until a check passes plainly.
  bool disable_on_404 = false;
  // http-check send-state: each request says the server's state (x-haproxy-server-state).
  bool send_state = false;
  std::string node;   // the process's node name, for send-state
  std::string agent_send;   // kAgent: what is sent to the agent first (`agent-send`)
  // kExternal: the command and its arguments, and its environment (HAPROXY_SERVER_CURCONN is
  // added at each run).
  std::vector<std::string> ext_argv;
  std::vector<std::string> ext_env;
};

// An agent's answer (`agent-check`), HAProxy's protocol: words separated by spaces, tabs or
// commas, a description after '#'. Pure, any thread.
struct AgentReply {
  enum class State : uint8_t { kNone, kUp, kDown, kFail, kStopped };
  enum class Admin : uint8_t { kNone, kReady, kDrain, kMaint };
  State state = State::kNone;
  std::string state_word;   // "up", "down", "fail", "stopped" as written
  Admin admin = Admin::kNone;
  int weight_pct = -1;      // "<n>%": the weight as a share of the configured one
  int maxconn = -1;         // "maxconn:<n>"
  std::string reason;       // after '#', trimmed
};
AgentReply parse_agent_reply(std::string_view line);

// syslog severities (the same numbers as proxy's LogLevel).
enum : int { kLogEmerg = 0, kLogAlert = 1, kLogNotice = 5 };

struct CheckHooks {
  // A state-change line, without the trailing LF. Called on the checker's loop thread.
  std::function<void(int level, const std::string& msg)> log;
  // The server was marked DOWN and has `shutdown_sessions`: close its established sessions
  // on every worker. Called on the checker's loop thread; the hook posts to the workers.
  std::function<void(lb::Server& srv)> shutdown_sessions;
  // send_proxy 2: the TLVs the v2 header carries (the server's set-proxy-v2-tlv-fmt values
  // for a check, which has no stream). Called on the checker's loop thread; may be empty.
  std::function<void(std::vector<net::pp::Tlv>* out)> pp2_tlvs;
  // kRules: the value of the rule set's log-format number `index` (send-lf, the -lf patterns,
  // on-success, on-error) for this server, `received` what the server sent since the last
  // send (res.payload). Called on the checker's loop thread.
  std::function<std::string(int index, std::string_view received)> render;
  // kAgent: an answer's admin state, weight share and maxconn for the server (the CLI's own
  // paths apply them, with their log lines). Called on the checker's loop thread.
  std::function<void(lb::Server& srv, const AgentReply& reply)> agent_apply;
  // kRules: runs a set-var, set-var-fmt or unset-var step (`received`: as for render). The
  // check's own variables (check.*) live with the hook, forgotten when each check begins.
  std::function<void(const CheckRule& rule, std::string_view received)> set_var;
  // kRules: the value of the rule set's expression number `index` (connect's `port <expr>`)
  // as an integer; false when it has none.
  std::function<bool(int index, std::string_view received, int64_t* out)> eval_int;
  // Each check begins (the previous one's check.* variables are forgotten).
  std::function<void()> begin;
  // The server went UP or DOWN (its checks, or the CLI): the servers that track it follow.
  // Called on the checker's loop thread, after the server's own log line.
  std::function<void(lb::Server& srv, bool up)> state_changed;
};

class Checker : public core::IoHandler, public core::TimerHandler {
 public:
  // Main thread, before start() is posted: records the settings and resets the server's
  // check results (health = rise, status INI). The caller sets CheckState's enabled, rise and
  // fall before the workers start (plain fields that stats read without a lock).
  Checker(core::EventLoop& loop, lb::Backend& backend, lb::Server& server, CheckSettings settings,
          CheckHooks hooks);
  ~Checker();
  Checker(const Checker&) = delete;
  Checker& operator=(const Checker&) = delete;

  // Schedules the first check `first_delay_ms` from now. Worker-local (app posts it to the
  // loop so that checks start only once the workers run).
  void start(uint64_t first_delay_ms);
  // Cancels the timer and any check in flight. Worker-local (or after the loop has stopped).
  void stop();

  const Health& health() const { return health_; }
  // CLI `set server health up|stopping|down`: forces the verdict (the next checks may change
  // it again; a passing one ends a soft stop, as HAProxy's srv_set_running does).
  // Worker-local (the CLI posts it to the checker's loop).
  void force(bool up, bool stopping = false);
  // The server left maintenance: the counter restarts at rise ("UP 1/<fall>"). Worker-local.
  void restart();
  // CLI `set server ... check-addr|check-port|agent-addr|agent-port|agent-send`: where the
  // next check connects (`addr` null and `port` 0 keep theirs), what an agent is sent.
  // Worker-local (the CLI posts it to the checker's loop).
  void retarget(const net::SocketAddress* addr, int port);
  void set_agent_send(std::string text) { s_.agent_send = std::move(text); }
  // kAgent: `set server ... agent up|down` (and `disable agent`, which lets the server up):
  // the agent's verdict forced, logged as a CLI change. Worker-local (agent.cc).
  void force_agent(bool up);
  // `observe`: the server's traffic had `count` errors in a row, the last one `last`
  // (lb::Server::analyze). Applies the server's `on-error` as HAProxy does: the status becomes
  // HANA ("Detected 10 consecutive errors, last one was: ..."), the counter takes a failed
  // check (fail-check), the last one before DOWN (sudden-death) or falls to DOWN (mark-down),
  // and the next check is brought forward to `fastinter`. Worker-local (analyze.cc; app posts
  // it to the checker's loop).
  void analyze(int count, lb::Hana last);
  core::EventLoop& loop() { return loop_; }
  lb::Server& server() { return srv_; }

  void on_io(uint32_t events) override;
  void on_timer(core::Timer& t) override;

 private:
  // kSocks: connected to the server's SOCKS4 proxy, waiting for its answer (socks_).
  // kTls: connected, in the TLS handshake (ssl_).
  enum class Phase { kIdle, kConnecting, kSocks, kTls, kSending, kReading };

  void begin();
  // Where this check connects: see CheckSettings::addr.
  net::SocketAddress target() const;
  // Opens the check's connection (closing the previous one): `rule` a connect step, null the
  // check's own (a plain check, or the implicit first connect of a rule set).
  void open_connection(const CheckRule* rule);
  void on_connected();
  // socks4: moves the handshake on (socks_); done: on_connected(); failed: complete(SOCKERR).
  void socks_more();
  // TLS: moves the handshake on (ssl_); done: on_connected() again; failed: complete(L6RSP).
  void tls_more();
  // send() and recv() on the check's connection, through TLS once its handshake is done.
  ssize_t io_send(const char* p, std::size_t n);
  ssize_t io_recv(char* p, std::size_t n);
  // kRules: runs the steps from step_ on, until one waits for the socket or the check ends.
  void run_rules();
  // kRules: how the step that was running when the check failed is named in its info.
  std::string at_step() const;
  // send-state's value: "UP 2/3; address=...; port=...; name=be/srv; node=...; weight=1/2;
  // scur=0/0; qcur=0".
  std::string server_state() const;
  std::string render(int index) const {
    return hooks_.render ? hooks_.render(index, response_) : std::string();
  }
  // The PROXY protocol header (`version` 1 or 2) this check's connection opens with.
  std::string proxy_header(int version) const;
  // The PROXY header version the connection opens with (0: none): the implicit connect and
  // `connect default` send the check's (check-send-proxy or the server's send-proxy),
  // `connect send-proxy` one too (v1 unless the server says v2), a connect check the check's.
  int proxy_version() const;
  // Sends it once per connection (before a TLS handshake, or as the connection opens).
  void send_proxy_header_once();
  void send_more();
  void read_more();
  void complete(lb::CheckStatus status, int code, std::string text);
  // kExternal (external.cc): starts the command (its pidfd watched as fd_); reaps it when
  // the pidfd says it ended; kills it at the timeout.
  void begin_external();
  void external_done();
  void external_timeout();
  // kAgent (agent.cc): what came so far (`eof`: all of it); an answer ends at its line's end.
  void agent_read(bool eof);
  // kAgent: the check's end, recorded in the server's agent state; a `reply` (null: none, the
  // agent could not be reached or did not answer) applies to the server.
  void agent_done(lb::CheckStatus status, std::string text, const AgentReply* reply);
  // option log-health-checks: the line for a check that ended with `status` (the counter has
  // already taken it; `before` is its health before, `was` the previous status).
  void log_check(lb::CheckStatus status, lb::CheckStatus was, int before);
  void close_socket();
  // When the next check is due, `delay` after the last one: after it was due, so that checks
  // that end in the same loop turn keep the spread they started with instead of merging into
  // bursts (their expiries would otherwise share that turn's clock, for good); after its end
  // when it ran longer than `delay`, as HAProxy's next check follows a slow one.
  uint64_t next_due(uint64_t now, uint64_t delay) const {
    const uint64_t cadence = due_ms_ + delay;
    return due_ms_ && cadence > now ? cadence : now + delay;
  }
  // `from_cli`: forced by `set server ... health` (the line says so instead of a reason).
  void report_change(Health::Change change, uint64_t now, bool from_cli = false);
  std::string state_message(bool up, uint64_t now, bool from_cli = false);

  core::EventLoop& loop_;
  lb::Backend& be_;
  lb::Server& srv_;
  CheckSettings s_;
  CheckHooks hooks_;
  Health health_;
  core::Timer timer_;
  Phase phase_ = Phase::kIdle;
  int fd_ = -1;
  uint64_t started_ms_ = 0;
  // When the running check was due (its timer's expiry, not the tick it fired in): the next
  // one is due `interval` after it (next_due()).
  uint64_t due_ms_ = 0;
  uint64_t rng_ = 0;   // spread-checks' generator (xorshift), seeded per checker
  std::string request_;
  std::size_t sent_ = 0;
  std::string response_;
  // kRules: the next step to run (an index in the rules), the step that waits for the socket
  // (null: the implicit connect), what was received since the last send and whether the
  // server closed, and the last expect that passed (its ok-status and on-success end the check).
  std::size_t step_ = 0;
  const CheckRule* waiting_ = nullptr;
  bool in_eof_ = false;
  const CheckRule* passed_ = nullptr;
  bool l7_ = false;   // a send or an expect ran: the check is a layer-7 one
  int code_ = 0;      // the check's code (status-code, a protocol answer's)
  int pid_ = -1;      // kExternal: the running command
  bool linger_ = false;   // the connection's connect step said `linger`: closed with a FIN
  bool ext_killed_ = false;   // kExternal: killed at the timeout, being reaped
  std::string method_;   // the method of the last HTTP request sent (its answer's framing)
  std::string custom_info_;   // a protocol answer's info (the MySQL server's version)
  // The handshake with the server's SOCKS4 proxy while this connection goes through it.
  std::unique_ptr<net::socks4::Handshake> socks_;
  // TLS on this connection: wanted (the check's own connection, with s_.tls), the OpenSSL
  // connection (null: none yet), whether its handshake is done, and whether the PROXY header
  // already went (before the handshake).
  bool use_tls_ = false;
  const net::tls::ClientContext* tls_ctx_ = nullptr;   // the context it uses
  const CheckRule* tls_rule_ = nullptr;   // a `connect ssl` step's (its sni, alpn), or null
  ssl_st* ssl_ = nullptr;
  bool tls_done_ = false;
  bool pp_sent_ = false;
};

// Text of an errno for `last_chk` and logs, as HAProxy 3.5 writes it ("ECONNREFUSED returned
// by OS (Connection refused)"). Any thread.
inline std::string errno_text(int err) { return errno_report(err); }

}  // namespace sluice::check

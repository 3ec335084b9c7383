#pragma once
// A backend server as the runtime sees it. Identity and configuration are immutable after
// start-up; everything that changes at run time (connection count, weight, usable state) is
// an atomic, because every worker's sessions read it without locks.
//
// States. A server takes new connections (usable) when its administrative state is READY,
// its health check (if any) says UP and its weight is above 0:
//
//   admin:  READY <--set_admin_state--> DRAIN (no new connections, existing ones finish)
//             ^  \______set_admin_state____> MAINT (same, and checks are paused)
//             |            (configuration `disabled` starts in MAINT)
//   check:  UP <--set_check_up(rise/fall reached)--> DOWN     (no check: always UP)
//
// Each change goes through the owning Backend (Backend::set_admin_state, set_check_up), which
// recomputes usable() and republishes the algorithms' snapshots; readers never lock.
//
// Weights: `settings().weight` is the configured (initial) weight; weight() is the current
// user weight (CLI `set server weight`); eweight() is the effective weight the algorithms
// use: the current weight scaled down while a slow start is in progress.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "base/published.h"
#include "net/address.h"

namespace sluice::net::tls {
class ClientContext;
}

namespace sluice::lb {

// `observe`: which of a server's traffic results are taken as news of its health (HAProxy's
// "health analyze"). kLayer4: connection attempts; kLayer7: those and HTTP responses.
enum class Observe : uint8_t { kNone, kLayer4, kLayer7 };
// `on-error`: what `error-limit` consecutive errors do. All of them bring the next check
// forward to `fastinter`; kFailCheck also counts as one failed check, kSuddenDeath leaves the
// server one failed check from DOWN and then fails one, kMarkDown takes it DOWN at once.
enum class OnError : uint8_t { kFastinter, kFailCheck, kSuddenDeath, kMarkDown };
// One observation of the traffic, named as HAProxy names it (hana_desc()).
enum class Hana : uint8_t {
  kL4Ok, kL4Err, kHttpOk, kHttpSts, kHttpHdrRsp, kHttpRsp, kReadError, kReadTimeout, kBrokenPipe
};
// "L4 unsuccessful connection", "Wrong http response"... Any thread.
inline const char* hana_desc(Hana h) {
  static constexpr const char* kDescs[] = {
      "L4 successful connection", "L4 unsuccessful connection", "Correct http response",
      "Wrong http response",      "Invalid http response (headers)", "Invalid http response",
      "Read error (http)",        "Read timeout (http)",       "Close from server (http)"};
  return kDescs[static_cast<int>(h)];
}

struct ServerSettings {
  std::string name;
  int id = 0;
  bool id_forced = false;     // `id` written in the configuration
  net::SocketAddress addr;
  bool port_mapped = false;   // no port in the configuration: use the client's destination port
  int port_offset = 0;
  int weight = 1;
  int maxconn = 0;            // 0 = unlimited
  bool backup = false;
  bool disabled = false;
  // `init-addr none` left it without an address: in maintenance (HAProxy's "MAINT
  // (resolution)") for good, whatever the admin state says; sluice has no DNS resolvers to
  // give it one later.
  bool unresolved = false;
  std::string fqdn;           // the host name of the configured address ("" an IP)
  uint32_t slowstart_ms = 0;  // 0 = none
  // `send-proxy` (1) / `send-proxy-v2` (2): each connection to the server opens with a PROXY
  // protocol header carrying the client's addresses; such a connection serves that client
  // only (never shared through the idle pool). 0: none.
  int send_proxy = 0;
  // `proxy-v2-options`: the TLVs send-proxy-v2 adds (net::pp::kOpt* bits).
  uint8_t pp2_options = 0;
  // The persistence cookie's value (`cookie <value>`, or the dynamic one); "" none. Shown by
  // `show stat`; the backend's CookieSettings keeps the copy the data path reads.
  std::string cookie;
  // The idle server-connection pool (proxy::Worker): idle connections kept for this server
  // across threads (-1 unlimited, 0 none), how long one stays idle, how many times one is
  // reused (-1 unlimited, 0 never).
  int pool_max_conn = -1;
  uint32_t pool_purge_delay_ms = 5000;
  int max_reuse = -1;
  // `track`: "<backend>/<server>" whose checks decide this server's state ("" : none).
  std::string tracked;
  // `observe`, `error-limit`, `on-error` (see Observe, OnError). Only a checked server is
  // observed (HAProxy's rule): app connects it to its checker (Server::set_analyzer).
  Observe observe = Observe::kNone;
  int error_limit = 10;
  OnError on_error = OnError::kFailCheck;   // HAProxy's default
  // `socks4 <addr>:<port>`: each connection goes to this SOCKS4 proxy, which connects on to the
  // server (net/socks4.h); the address the session logs stays the server's.
  bool has_socks4 = false;
  net::SocketAddress socks4;
  // `ssl`: connections open with a TLS handshake made with this context (net/tls.h), after
  // the SOCKS4 proxy's and after the PROXY header; null: plain TCP.
  std::shared_ptr<const net::tls::ClientContext> tls;
};

enum class AdminState : uint8_t { kReady, kDrain, kMaint };

// Where a server connects to. Changed at run time by `set server addr`, so it is published as
// an immutable object (see Server::endpoint()), never written in place.
struct ServerEndpoint {
  net::SocketAddress addr;
  bool port_mapped = false;   // no port: use the client's destination port (+ port_offset)
  int port_offset = 0;
};

// Result of the last health check (show stat check_status, spec cli-and-stats 3.6).
enum class CheckStatus : uint8_t {
  kUnknown, kIni, kSockErr, kL4Ok, kL4Tout, kL4Con, kL7Ok, kL7Tout, kL7Rsp, kL7Sts,
  kL6Ok, kL6Tout, kL6Rsp, kL7OkC, kProcErr, kProcTout, kProcOk,
  kChecked,   // an agent's answer that names no state ("No status change")
  kHana,      // `observe`: the traffic's errors reached `error-limit` ("Health analyze")
};

// "L4OK", "L7STS"... Any thread.
inline const char* check_status_code(CheckStatus s) {
  static constexpr const char* kCodes[] = {
      "UNK",  "INI",    "SOCKERR", "L4OK",  "L4TOUT",  "L4CON",   "L7OK",    "L7TOUT", "L7RSP",
      "L7STS", "L6OK",  "L6TOUT",  "L6RSP", "L7OKC",   "PROCERR", "PROCTOUT", "PROCOK",
      "CHECKED", "HANA"};
  return kCodes[static_cast<int>(s)];
}
// Whether a check that ended so passed (L4OK, L6OK, L7OK, L7OKC, PROCOK).
inline bool check_passed(CheckStatus s) {
  return s == CheckStatus::kL4Ok || s == CheckStatus::kL6Ok || s == CheckStatus::kL7Ok ||
         s == CheckStatus::kL7OkC || s == CheckStatus::kProcOk;
}

// "Layer4 check passed"... (the `reason:` of state-change logs, check_desc). Any thread.
inline const char* check_status_desc(CheckStatus s) {
  static constexpr const char* kDescs[] = {
      "Unknown",         "Initializing",          "Socket error",
      "Layer4 check passed", "Layer4 timeout",     "Layer4 connection problem",
      "Layer7 check passed", "Layer7 timeout",     "Layer7 invalid response",
      "Layer7 wrong status", "Layer6 check passed", "Layer6 timeout",
      "Layer6 invalid response", "Layer7 check conditionally passed", "External check error",
      "External check timeout", "External check passed", "No status change",
      "Health analyze"};
  return kDescs[static_cast<int>(s)];
}

// Health-check results of one server. One writer: the server's checker (on the worker loop
// it runs on); read by any thread (show stat) without locks, except the text (a mutex, taken
// once per check and per `show stat` row, never on the data path).
struct CheckState {
  // Set by app before the workers start, constant afterwards.
  bool enabled = false;
  // CLI `disable health`: checks stopped, the server counts as UP and shows "no check".
  std::atomic<bool> paused{false};
  int rise = 0, fall = 0;
  // Checker-written, any thread reads.
  std::atomic<int> health{0};                 // 0 .. rise+fall-1, UP when >= rise
  std::atomic<CheckStatus> status{CheckStatus::kIni};
  std::atomic<int> code{0};                   // HTTP status of an L7 check, 0 = none
  std::atomic<int64_t> duration_ms{-1};       // -1 = no completed check
  std::atomic<uint64_t> chkfail{0};           // failed checks (counted while health > 0)
  std::atomic<uint64_t> chkdown{0};           // UP -> DOWN transitions
  std::atomic<uint64_t> hanafail{0};          // `observe`: times error-limit was reached
  std::atomic<uint64_t> downtime_ms{0};       // finished DOWN periods
  std::atomic<uint64_t> down_since_ms{0};     // monotonic start of the current DOWN, 0 = up
  // Where the check connects when it was told (`port`, `addr`, the agent's, or the CLI's
  // check-port / check-addr): 0 / "" for the server's own (show servers state).
  std::atomic<int> port{0};

  // Total time DOWN up to `now_ms`, the current period included. Any thread.
  uint64_t downtime_at(uint64_t now_ms) const {
    uint64_t since = down_since_ms.load(std::memory_order_relaxed);
    uint64_t t = downtime_ms.load(std::memory_order_relaxed);
    return since && now_ms > since ? t + (now_ms - since) : t;
  }
  // Text of the last result ("Connection refused", "Internal Server Error"). Any thread.
  void set_text(std::string t) {
    std::lock_guard lock(text_mu_);
    text_ = std::move(t);
  }
  std::string text() const {
    std::lock_guard lock(text_mu_);
    return text_;
  }
  void set_addr(std::string a) {
    std::lock_guard lock(text_mu_);
    addr_ = std::move(a);
  }
  std::string addr() const {
    std::lock_guard lock(text_mu_);
    return addr_;
  }

 private:
  mutable std::mutex text_mu_;
  std::string text_;
  std::string addr_;
};

class Server;

// Told when a server's traffic reached its `error-limit` consecutive errors (`observe`): the
// server's checker acts on it (`on-error`). Called on the worker thread that saw the last
// error; the implementation posts to the checker's loop.
class HealthAnalyzer {
 public:
  virtual ~HealthAnalyzer() = default;
  virtual void on_errors(Server& s, int count, Hana last) = 0;
};

// Told about every change of a server's connection count (leastconn keeps its order with it).
class ConnObserver {
 public:
  virtual ~ConnObserver() = default;
  virtual void on_conns_changed(Server& s) = 0;
};

class Server {
 public:
  Server(ServerSettings settings, int index)
      : s_(std::move(settings)), index_(index), weight_(s_.weight), eweight_(s_.weight),
        admin_up_(!s_.disabled && !s_.unresolved),
        admin_state_(s_.disabled ? AdminState::kMaint : AdminState::kReady),
        endpoint_(std::make_unique<ServerEndpoint>(
            ServerEndpoint{s_.addr, s_.port_mapped, s_.port_offset})),
        maxconn_(s_.maxconn) {}

  const ServerSettings& settings() const { return s_; }
  const std::string& name() const { return s_.name; }
  int index() const { return index_; }   // position in its backend, 0-based
  // Current user weight (initially the configured one). Any thread.
  int weight() const { return weight_.load(std::memory_order_relaxed); }
  int initial_weight() const { return s_.weight; }
  // Effective weight used by the algorithms (slow start applied), in user scale: rounded up
  // from weight() x ramp() / kWeightScale, as HAProxy shows it. Any thread.
  int eweight() const { return eweight_.load(std::memory_order_relaxed); }
  // HAProxy's BE_WEIGHT_SCALE: a slow start moves in steps of 1/16 of the weight.
  static constexpr int kWeightScale = 16;
  // The share of weight() in use, in 1/kWeightScale: kWeightScale unless warming up. Sums of
  // weight() x ramp() are the backend's exact effective weight (show stat BACKEND weight).
  // Any thread.
  int ramp() const { return ramp_.load(std::memory_order_relaxed); }
  // Slow-start percentage while warming up (show stat `throttle`), -1 otherwise. Any thread.
  int throttle() const { return throttle_.load(std::memory_order_relaxed); }
  // READY and (no check or check UP): the state part of usable(). Any thread.
  bool admin_up() const { return admin_up_.load(std::memory_order_relaxed); }
  AdminState admin_state() const { return admin_state_.load(std::memory_order_relaxed); }
  // Health check verdict; true when the server has no check. Any thread.
  bool check_up() const { return check_up_.load(std::memory_order_relaxed); }
  // The agent's verdict (`agent-check` answered down, fail or stopped: false); true without an
  // agent. Any thread.
  bool agent_up() const { return agent_up_.load(std::memory_order_relaxed); }
  // Soft-stopping (`set server health stopping`): UP but takes no new load-balanced
  // connections (HAProxy's NOLB). Any thread.
  bool stopping() const { return stopping_.load(std::memory_order_relaxed); }
  // Monotonic ms of the last state change (admin or check), 0 = none since start-up.
  uint64_t last_change_ms() const { return last_change_ms_.load(std::memory_order_relaxed); }

  // Health-check results (check/ writes them, stats read them). See CheckState's rules.
  CheckState& check_state() { return check_; }
  const CheckState& check_state() const { return check_; }
  // The agent check's results (`agent-check`), the same way.
  CheckState& agent_state() { return agent_; }
  const CheckState& agent_state() const { return agent_; }

  // Usable for new connections: not in maintenance and weight > 0. Any thread.
  bool usable() const { return admin_up() && weight() > 0; }
  // At its maxconn: skipped by every algorithm (queueing is a later issue). Any thread.
  bool full() const {
    int m = maxconn();
    return m > 0 && current_conns() >= m;
  }
  // Current maxconn (configured, or changed by `set maxconn server`); 0 = unlimited. A lower
  // value never closes connections: it only refuses new ones until the count is below it.
  // Any thread.
  int maxconn() const { return maxconn_.load(std::memory_order_relaxed); }
  void set_maxconn(int m) { maxconn_.store(m > 0 ? m : 0, std::memory_order_relaxed); }

  // Takes a connection slot unless the server is at its maxconn. Any thread.
  bool try_acquire() {
    int cur = conns_.fetch_add(1, std::memory_order_relaxed) + 1;
    int m = maxconn();
    if (m > 0 && cur > m) {
      conns_.fetch_sub(1, std::memory_order_relaxed);
      return false;
    }
    if (observer_) observer_->on_conns_changed(*this);
    return true;
  }
  // Gives back a slot taken with try_acquire. Any thread.
  void release() {
    conns_.fetch_sub(1, std::memory_order_relaxed);
    if (observer_) observer_->on_conns_changed(*this);
  }
  int current_conns() const { return conns_.load(std::memory_order_relaxed); }

  // The address to connect to for a client that connected to `client_dst`. Reads the
  // currently published endpoint. Any thread; must not be called while the calling thread
  // holds another snapshot Guard (one hazard slot per thread, see base/published.h).
  net::SocketAddress target(const net::SocketAddress& client_dst) const;
  // A copy of the current endpoint (the configured one until `set server addr`). Any thread,
  // same Guard rule as target().
  ServerEndpoint endpoint() const { return *endpoint_.read(); }
  // Publishes a new endpoint: connections started afterwards on any thread use it, those
  // already connected keep theirs. Old endpoints are freed once no thread reads them.
  // Any thread (writers are serialized here, readers never wait).
  void set_endpoint(const ServerEndpoint& e) {
    std::lock_guard lock(endpoint_writer_);
    endpoint_.publish(std::make_unique<ServerEndpoint>(e));
  }

  // ---- writer side: only the owning Backend, serialized by its writer mutex ----
  void set_weight(int w) { weight_.store(w, std::memory_order_relaxed); }
  void set_eweight(int w) { eweight_.store(w, std::memory_order_relaxed); }
  void set_ramp(int r) { ramp_.store(r, std::memory_order_relaxed); }
  void set_throttle(int t) { throttle_.store(t, std::memory_order_relaxed); }
  void set_admin_up(bool up) { admin_up_.store(up, std::memory_order_relaxed); }
  void set_admin_state_raw(AdminState st) { admin_state_.store(st, std::memory_order_relaxed); }
  void set_check_up_raw(bool up) { check_up_.store(up, std::memory_order_relaxed); }
  void set_agent_up_raw(bool up) { agent_up_.store(up, std::memory_order_relaxed); }
  void set_stopping_raw(bool st) { stopping_.store(st, std::memory_order_relaxed); }
  void set_last_change_ms(uint64_t t) { last_change_ms_.store(t, std::memory_order_relaxed); }
  // Set once before any thread picks.
  void set_observer(ConnObserver* o) { observer_ = o; }
  // `observe`: the sessions report what they saw of this server (a connection attempt's end,
  // an HTTP response's status or failure). Consecutive errors are counted across threads;
  // a success of the observed layer clears the count. Reaching `error-limit` calls the
  // analyzer once. A no-op (one load) unless the server is observed. Any thread.
  void analyze(Hana h) {
    if (analyzer_) [[unlikely]] analyze_slow(h);
  }
  // Set once before the workers start, for a server with `observe` and a check.
  void set_analyzer(HealthAnalyzer* a) { analyzer_ = a; }
  // Slow start: when the server last became usable (0 = up since start-up, no ramp).
  uint64_t up_since_ms() const { return up_since_ms_; }
  void set_up_since_ms(uint64_t t) { up_since_ms_ = t; }

 private:
  void analyze_slow(Hana h);

  ServerSettings s_;
  // Read on every connect and response, never written once the workers run: beside the
  // settings, away from the counters every worker writes (conns_).
  HealthAnalyzer* analyzer_ = nullptr;
  int index_;
  std::atomic<int> weight_;
  std::atomic<int> eweight_;
  std::atomic<int> ramp_{kWeightScale};
  std::atomic<int> throttle_{-1};
  std::atomic<bool> admin_up_;
  std::atomic<AdminState> admin_state_;
  std::atomic<bool> check_up_{true};
  std::atomic<bool> agent_up_{true};
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> last_change_ms_{0};
  std::atomic<int> conns_{0};
  ConnObserver* observer_ = nullptr;
  uint64_t up_since_ms_ = 0;   // writer side only
  base::Published<ServerEndpoint> endpoint_;
  std::mutex endpoint_writer_;
  std::atomic<int> maxconn_;
  CheckState check_;
  CheckState agent_;
  // `observe`: consecutive errors seen, written by every worker that sees one: a line of its
  // own.
  alignas(64) std::atomic<int> errors_{0};
};

}  // namespace sluice::lb

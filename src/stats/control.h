#pragma once
// What the CLI may change in the running process (HAProxy's management commands): server
// administrative state, weight, address, maxconn and health, frontend and global maxconn.
// The CLI parses words and formats HAProxy's messages; an implementation over the live
// runtime (proxy::ServerControlImpl) applies the change. Every change takes effect on every
// thread without a lock on the connection path (atomics and published snapshots).
// All methods: any thread.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::stats {

// A server found by find_server(); valid for the life of the process (servers are never
// removed at run time yet). Opaque to the CLI.
struct ServerRef {
  int proxy = -1;    // proxy index, configuration order
  int server = -1;   // server index within its backend
};

// kDisabled: the server exists but its proxy is `disabled` (HAProxy checks it last).
enum class FindResult { kOk, kNoBackend, kNoServer, kDisabled };

enum class AdminChange { kReady, kDrain, kMaint };
enum class HealthChange { kUp, kStopping, kDown };

// What the CLI needs to know about a server to validate a command and word its answer.
struct ServerFacts {
  int weight = 0;              // current user weight
  int initial_weight = 0;      // configured weight
  bool static_lb = false;      // backend algorithm accepts only weights 0% and 100%
  bool tracking = false;       // `track`s another server (health then follows that one)
  bool check_configured = false;
  bool agent_configured = false;
  // Configured and not stopped by `disable health|agent` (HAProxy's CHK_ST_ENABLED).
  bool check_running = false;
  bool agent_running = false;
};

// Outcome of a health or agent change.
enum class HealthResult {
  kOk,
  kNotConfigured,   // no health check (or agent) on this server
  kTracking,        // the server tracks another one: its health is not its own
};

// Outcome of `set server addr`: the old and new address and port, as HAProxy prints them.
struct AddrResult {
  // kNoFamily: the server has no address yet (init-addr none): HAProxy only lets the
  // configuration give it one.
  enum class Status { kOk, kInvalidAddr, kPortMapped, kNoFamily } status = Status::kOk;
  std::string old_ip, new_ip;
  int old_port = 0, new_port = 0;
};

// The last invalid HTTP message of one proxy and direction (`show errors`): requests
// are kept by the frontend that received them, responses by the backend.
struct ErrorSnapshot {
  bool response = false;
  int proxy = -1;                // index, configuration order
  std::string proxy_name;
  int proxy_id = 0;
  std::string other_name;        // the backend of a request, the frontend of a response;
  int other_id = -1;             // "<NONE>" and -1 when there was none yet
  std::string server_name;       // "<NONE>" and -1 when none
  int server_id = -1;
  uint64_t wall_us = 0;          // when it was captured; 0: no snapshot
  uint64_t event = 0;            // process-wide capture number, from 0
  std::string source;            // the client's address
  std::string reason;            // what was wrong, or what was let through (relaxed parsing)
  std::size_t len = 0;           // bytes of the message in the buffer when it was captured
  std::string bytes;             // those bytes, at most tune.bufsize
};

class ServerControl {
 public:
  virtual ~ServerControl() = default;

  // `backend` and `server` are names or `#<id>`. Only proxies with a backend side count.
  virtual FindResult find_server(std::string_view backend, std::string_view server,
                                 ServerRef* out) const = 0;
  virtual ServerFacts facts(ServerRef s) const = 0;

  virtual void set_admin_state(ServerRef s, AdminChange state) = 0;
  // 0..256, already validated by the caller.
  virtual void set_weight(ServerRef s, int weight) = 0;
  // `ip` is a literal IPv4 or IPv6 address; `port` < 0 keeps the current port. New
  // connections go to the new address; established ones stay where they are.
  virtual AddrResult set_addr(ServerRef s, std::string_view ip, int port) = 0;
  // 0 (or less) = unlimited.
  virtual void set_maxconn(ServerRef s, int maxconn) = 0;

  // `set server health`: without a health check the operational state is forced (HAProxy
  // does the same); with one, the check module sets its health counter.
  virtual HealthResult set_health(ServerRef s, HealthChange change) = 0;
  // `enable health` / `disable health`. Enabling needs a configured check; disabling never
  // fails.
  virtual HealthResult enable_health(ServerRef s, bool enable) = 0;
  // `set server agent up|down`, `enable agent` / `disable agent`.
  virtual HealthResult set_agent(ServerRef s, bool up) = 0;
  virtual HealthResult enable_agent(ServerRef s, bool enable) = 0;
  // `set server ... check-addr|check-port` (`agent` false) and `agent-addr|agent-port`
  // (`agent` true): where the health check (the agent) connects from its next run on. `ip`
  // (a literal address, validated by the caller) empty keeps the address, `port` 0 the port.
  virtual HealthResult set_check_target(ServerRef, bool agent, std::string_view ip, int port) {
    (void)agent, (void)ip, (void)port;
    return HealthResult::kNotConfigured;
  }
  // `set server ... agent-send <text>`: what the agent is sent from its next run on.
  virtual HealthResult set_agent_send(ServerRef, std::string_view text) {
    (void)text;
    return HealthResult::kNotConfigured;
  }

  // A frontend (or listen proxy) with that name or `#<id>`.
  virtual bool has_frontend(std::string_view frontend) const = 0;
  // A backend (or listen proxy) with that name or `#<id>`, `disabled` ones included.
  virtual bool has_backend(std::string_view backend) const {
    (void)backend;
    return false;
  }
  // `set dynamic-cookie-key backend` (kSetKey, `key` non-empty), `enable|disable
  // dynamic-cookie backend`: the backend's servers get their new cookie values (HAProxy's
  // srv_set_dyncookie), which new requests on every thread use. Nothing if has_backend() is
  // false.
  enum class DynCookieChange { kSetKey, kEnable, kDisable };
  virtual void change_dynamic_cookie(std::string_view backend, DynCookieChange change,
                                     std::string_view key) {
    (void)backend, (void)change, (void)key;
  }
  // `set maxconn frontend`: false if no frontend has that name or `#<id>`.
  virtual bool set_frontend_maxconn(std::string_view frontend, int maxconn) = 0;
  // `disable frontend` / `enable frontend` / `shutdown frontend`.
  enum class FrontendAction { kDisable, kEnable, kShutdown };
  enum class FrontendResult { kOk, kNoFrontend, kAlready, kWasShutDown };
  virtual FrontendResult change_frontend(std::string_view frontend, FrontendAction action) = 0;
  // `set maxconn global`. The caller checks the value against hard_maxconn().
  virtual int hard_maxconn() const = 0;
  virtual void set_global_maxconn(int maxconn) = 0;

  // `clear counters` (all = false): resets the maxima (session and queue peaks, peak rates,
  // the global peak rates) and the `show activity` counters. `clear counters all`: every
  // proxy, server and listener counter, totals included, and the health-check counters
  // (chkfail, chkdown). Gauges (current sessions, queue) are not counters and stay.
  virtual void clear_counters(bool all) = 0;
  // `clear counters server`: every counter of that server, on every thread (its gauges and
  // health state stay).
  virtual void clear_server_counters(ServerRef s) = 0;

  // Sessions (`show sess`, `shutdown session(s)`). Each worker reads its own sessions on its
  // own thread, so these answer later: `done` runs on thread `thread` (1-based, the CLI
  // connection's worker), never before the call returns, and not at all if that thread's
  // loop has ended. A worker whose loop has ended (soft stop) has no sessions to list.
  //
  // `show sess`: one line per session and CLI connection (`detail`: one block each), all of
  // them (`id` 0) or the one whose id is `id`; `count` is how many were listed.
  virtual void dump_sessions(int thread, uint64_t id, bool detail,
                             std::function<void(std::string text, std::size_t count)> done) = 0;
  // `shutdown session <id>`: `found` tells whether a worker had it (and closed it).
  virtual void shutdown_session(int thread, uint64_t id, std::function<void(bool found)> done) = 0;
  // `shutdown sessions server`: closes every session using that server, on every thread.
  virtual void shutdown_server_sessions(ServerRef s) = 0;

  // `show errors`: a proxy by name or numeric id (any side); false if none.
  virtual bool find_proxy(std::string_view name_or_id, int* index) const = 0;
  // `show errors`: the most recent snapshot of each proxy and direction, across the workers,
  // in configuration order (requests before responses), and how many were captured since
  // start-up. `done` runs later on thread `thread`, as for dump_sessions().
  virtual void collect_errors(
      int thread, std::function<void(std::vector<ErrorSnapshot>, uint64_t total)> done) = 0;
};

}  // namespace sluice::stats

#pragma once
// Read-only views of the process state, built on demand by summing per-thread counters.
// The CLI formats these; it never touches live runtime objects. Plain values; any thread.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sluice::stats {

// Counters of one frontend, backend or server row in `show stat`. Fields that do not apply
// to a row type are left at 0 and the formatter leaves the CSV field empty.
struct Counters {
  uint64_t scur = 0, smax = 0, stot = 0;
  uint64_t bin = 0, bout = 0;
  uint64_t dreq = 0, dresp = 0, ereq = 0;
  uint64_t dcon = 0;                        // frontends: tcp-request connection rejects
  uint64_t dses = 0;                        // frontends: tcp-request session rejects
  uint64_t econ = 0, eresp = 0, wretr = 0, wredis = 0;
  uint64_t lbtot = 0;
  uint64_t rate = 0, rate_max = 0;          // sessions/s over the last second, peak
  uint64_t conn_rate = 0, conn_rate_max = 0, conn_tot = 0;   // frontends: accepted connections
  uint64_t cli_abrt = 0, srv_abrt = 0;
  uint64_t connect = 0, reuse = 0;          // backend/server connection attempts
  uint64_t eint = 0;
  int64_t last_sess_s = -1;                 // seconds since the last session, -1 never
  uint64_t qtime = 0, ctime = 0, rtime = 0, ttime = 0;   // averages, ms
  uint64_t qtime_max = 0, ctime_max = 0, rtime_max = 0, ttime_max = 0;
  // HTTP-mode proxies only (show stat columns 39-44, 46-48); TCP rows leave them empty.
  uint64_t hrsp_1xx = 0, hrsp_2xx = 0, hrsp_3xx = 0, hrsp_4xx = 0, hrsp_5xx = 0, hrsp_other = 0;
  uint64_t req_tot = 0, req_rate = 0, req_rate_max = 0;
  uint64_t intercepted = 0;
};

struct ServerSnapshot {
  std::string name;
  int id = 0;
  bool id_forced = false;        // `id` written in the configuration
  std::string cookie;            // persistence cookie value ("" none)
  std::string addr;              // "127.0.0.1:8080"
  std::string host;              // "127.0.0.1"
  std::string fqdn;              // the configured host name ("" an IP)
  bool use_ssl = false;          // `ssl`: connections to it are TLS
  int port = 0;
  int weight = 1;                // current user weight
  int eweight = 1;               // effective weight (slow start applied), user scale
  int eweight_scaled = 16;       // the same, exact, in 1/16 of the user scale (HAProxy's)
  int throttle = -1;             // slow-start percentage while warming up, -1 otherwise
  int initial_weight = 1;
  int maxconn = 0;               // 0 = unlimited
  bool backup = false;
  // Operational state: 0 stopped, 1 starting, 2 running, 3 stopping (HAProxy's srv_op_state).
  int op_state = 2;
  // Administrative state bits (HAProxy's srv_admin_state): 0x01 forced maint, 0x08 drain...
  int admin_state = 0;
  std::string status;            // "UP", "DOWN", "MAINT", "DRAIN", "no check"
  bool check_enabled = false;     // a check is configured and running (not `disable health`)
  // `show servers state` only: a check is configured (maybe paused), and its last status and
  // health, which a paused check keeps (check_status below is filled only when running).
  bool check_configured = false;
  std::string check_last_status;
  int check_last_health = 0;
  int64_t lastchg_s = 0;
  uint64_t chkfail = 0, chkdown = 0, downtime_s = 0;
  uint64_t hanafail = 0;   // `observe`: times the traffic's errors reached error-limit
  uint64_t qcur = 0, qmax = 0;
  Counters c;
  // Health check details (show stat 36-38, 56, 65, 67-69; show servers state), meaningful only
  // with check_enabled.
  std::string check_status;      // last result code: "L4OK", "L7STS", "INI"...; "" = none yet
  int check_code = 0;            // HTTP status of an L7 check, 0 = none
  int64_t check_duration_ms = -1;  // -1 = no completed check
  std::string last_chk;          // text of the last check result
  int check_rise = 0, check_fall = 0, check_health = 0;
  std::string tracked;           // "backend/server" this server tracks, "" = none
  // The agent check's (show stat agent_*, last_agt), meaningful only with agent_enabled.
  bool agent_enabled = false;
  int agent_port = 0;            // an agent is configured (show servers state), 0: none
  // show servers state: where the check and the agent connect when told ("" / 0: the
  // server's own address and port).
  int check_port = 0;
  std::string check_addr, agent_addr;
  std::string agent_status;
  int64_t agent_duration_ms = -1;
  std::string last_agt;
  int agent_rise = 0, agent_fall = 0, agent_health = 0;
};

struct ListenerSnapshot {
  std::string proxy;             // owning frontend/listen name
  std::string bind;              // the bind line's address text
  std::string where;             // "file:line" of the bind line
  int shard = 0;                 // index among the shards of its address
  int shard_count = 1;
  bool fell_back = false;        // wanted several shards, SO_REUSEPORT unavailable
  bool steered = false;          // a CPU steering program picks the shard
  uint64_t inode = 0;            // kernel socket identity
  std::string groups;            // "1" or "1-2"
  std::string threads;           // "1-4" or "1,3"
  uint64_t cur_conns = 0;
  uint64_t cum_conns = 0;
  std::string name;              // bind `name` or "sock-<id>"
  int id = 0;
  std::string addr;
  std::string proto;             // "tcpv4", "tcpv6", "unix_stream"
  int maxconn = 0;
  std::string status;            // "OPEN", "FULL", "STOP"
  Counters c;
};

struct ProxySnapshot {
  std::string name;
  int id = 0;
  bool id_forced = false;        // `id` written in the configuration
  bool is_frontend = false;
  bool is_backend = false;
  std::string mode;              // "tcp", "http"
  std::string algo;              // "roundrobin"
  std::string cookie;            // the backend's persistence cookie name ("" none)
  std::string frontend_status;   // "OPEN", "STOP"
  std::string backend_status;    // "UP", "DOWN"
  int maxconn = 0;               // frontend slim
  int fullconn = 0;              // backend slim
  Counters frontend;
  Counters backend;
  std::vector<ListenerSnapshot> listeners;
  std::vector<ServerSnapshot> servers;
  int64_t backend_lastchg_s = 0;
  uint64_t backend_downtime_s = 0;
  uint64_t backend_chkdown = 0;
  uint64_t backend_qcur = 0, backend_qmax = 0;   // sessions waiting for a server slot
};

// `show info` fields that sluice has.
struct ProcessSnapshot {
  std::string version;
  std::string release_date;
  int pid = 0;
  int nbthread = 1;
  int nbtgroups = 1;
  uint64_t uptime_s = 0;
  uint64_t start_time_s = 0;
  uint64_t ulimit_n = 0;
  uint64_t maxsock = 0;
  uint64_t maxconn = 0;
  uint64_t hard_maxconn = 0;
  uint64_t curr_conns = 0;
  uint64_t cum_conns = 0;
  uint64_t cum_req = 0;
  uint64_t conn_rate = 0, max_conn_rate = 0;
  uint64_t sess_rate = 0, max_sess_rate = 0;
  uint64_t conn_rate_limit = 0, sess_rate_limit = 0;   // maxconnrate / maxsessrate, 0 none
  uint64_t tasks = 0, run_queue = 0;
  int idle_pct = 100;
  std::string node;
  std::string description;
  bool stopping = false;
  uint64_t jobs = 0;
  uint64_t listeners = 0;
  uint64_t dropped_logs = 0;
  uint64_t total_bytes_out = 0;
  uint64_t bytes_out_rate = 0;
  // TLS (both sides for the connections; the key rates are full handshakes).
  uint64_t curr_ssl_conns = 0, cum_ssl_conns = 0;
  uint64_t ssl_rate = 0, max_ssl_rate = 0;
  uint64_t max_ssl_conns = 0, ssl_rate_limit = 0;   // maxsslconn / maxsslrate, 0 none
  uint64_t ssl_fe_key_rate = 0, ssl_fe_max_key_rate = 0, ssl_fe_reuse_pct = 0;
  uint64_t ssl_be_key_rate = 0, ssl_be_max_key_rate = 0;
  uint64_t ssl_cache_lookups = 0, ssl_cache_misses = 0;
  uint64_t maxconn_reached = 0;
  uint64_t boot_time_ms = 0;
  uint64_t total_warnings = 0;
  uint64_t curr_streams = 0, cum_streams = 0;
};

// Per-thread activity for `show activity`: one value per thread for each metric.
struct ActivitySnapshot {
  int current_thread = 1;         // thread serving the CLI connection, 1-based
  uint64_t date_now_us = 0;
  uint64_t uptime_now_us = 0;
  // name -> per-thread values, in display order.
  std::vector<std::pair<std::string, std::vector<uint64_t>>> metrics;
};

// What the CLI can read. Implemented by app/proxy over the live runtime. Any thread.
class StatsSource {
 public:
  virtual ~StatsSource() = default;
  virtual ProcessSnapshot process() const = 0;
  virtual std::vector<ProxySnapshot> proxies() const = 0;
  virtual ActivitySnapshot activity(int current_thread) const = 0;
  // Every listening socket (shard), in configuration order. Default: none.
  virtual std::vector<ListenerSnapshot> listeners() const { return {}; }
};

}  // namespace sluice::stats

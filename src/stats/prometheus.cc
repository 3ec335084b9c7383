// The Prometheus exporter (`http-request use-service prometheus-exporter`): the process fields
// and the `show stat` rows in the Prometheus text format, under the metric names HAProxy's
// exporter uses, so that existing dashboards and alerts keep working. A metric is written only
// for objects whose `show stat` field is filled: sluice has no SSL, compression, cache or pipe
// figures, and those metrics are absent rather than zero.
#include <fmt/format.h>

#include <cstdlib>

#include "stats/page.h"

namespace sluice::stats {
namespace {

enum Scope : unsigned { kFe = 1, kBe = 2, kSrv = 4 };

struct Metric {
  std::string_view column;   // `show stat` field
  std::string_view name;     // after haproxy_<frontend|backend|server>_
  bool counter;
  unsigned scopes;
  std::string_view help;
  bool ms_to_s = false;      // the field is in milliseconds, the metric in seconds
};

constexpr Metric kMetrics[] = {
    {"scur", "current_sessions", false, kFe | kBe | kSrv, "Current sessions."},
    {"smax", "max_sessions", false, kFe | kBe | kSrv, "Highest number of current sessions."},
    {"slim", "limit_sessions", false, kFe | kBe | kSrv, "Configured session limit."},
    {"stot", "sessions_total", true, kFe | kBe | kSrv, "Sessions since start-up."},
    {"rate_lim", "limit_session_rate", false, kFe, "Configured limit of new sessions per second."},
    {"rate_max", "max_session_rate", false, kFe | kBe | kSrv, "Highest number of new sessions per second."},
    {"conn_rate_max", "connections_rate_max", false, kFe, "Highest number of new connections per second."},
    {"conn_tot", "connections_total", true, kFe, "Connections accepted since start-up."},
    {"bin", "bytes_in_total", true, kFe | kBe | kSrv, "Bytes received from clients."},
    {"bout", "bytes_out_total", true, kFe | kBe | kSrv, "Bytes sent to clients."},
    {"qcur", "current_queue", false, kBe | kSrv, "Requests waiting for a server slot."},
    {"qmax", "max_queue", false, kBe | kSrv, "Highest number of queued requests."},
    {"qlimit", "queue_limit", false, kSrv, "Configured queue limit of the server."},
    {"dreq", "requests_denied_total", true, kFe | kBe, "Requests denied by rules."},
    {"dresp", "responses_denied_total", true, kFe | kBe | kSrv, "Responses denied by rules."},
    {"ereq", "request_errors_total", true, kFe, "Invalid requests."},
    {"dcon", "denied_connections_total", true, kFe, "Connections refused by tcp-request connection rules."},
    {"dses", "denied_sessions_total", true, kFe, "Sessions refused by tcp-request session rules."},
    {"econ", "connection_errors_total", true, kBe | kSrv, "Failed connection attempts to servers."},
    {"eresp", "response_errors_total", true, kBe | kSrv, "Invalid or aborted server responses."},
    {"wretr", "retry_warnings_total", true, kBe | kSrv, "Connection retries."},
    {"wredis", "redispatch_warnings_total", true, kBe | kSrv, "Redispatches to another server."},
    {"connect", "connection_attempts_total", true, kBe | kSrv, "Connection attempts to servers."},
    {"reuse", "connection_reuses_total", true, kBe | kSrv, "Reuses of idle server connections."},
    {"cli_abrt", "client_aborts_total", true, kBe | kSrv, "Transfers aborted by the client."},
    {"srv_abrt", "server_aborts_total", true, kBe | kSrv, "Transfers aborted by the server."},
    {"weight", "weight", false, kBe | kSrv, "Effective load-balancing weight."},
    {"uweight", "uweight", false, kBe | kSrv, "User weight."},
    {"act", "active_servers", false, kBe, "Usable active servers."},
    {"bck", "backup_servers", false, kBe, "Usable backup servers."},
    {"chkfail", "check_failures_total", true, kSrv, "Failed health checks."},
    {"chkdown", "check_up_down_total", true, kBe | kSrv, "UP to DOWN transitions."},
    {"lastchg", "check_last_change_seconds", false, kBe | kSrv, "Seconds since the last state change."},
    {"downtime", "downtime_seconds_total", true, kBe | kSrv, "Seconds spent DOWN."},
    {"lbtot", "loadbalanced_total", true, kBe | kSrv, "Times a server was picked by load balancing."},
    {"lastsess", "last_session_seconds", false, kBe | kSrv, "Seconds since the last session."},
    {"throttle", "current_throttle", false, kSrv, "Slow-start throttle, in percent."},
    {"check_code", "check_code", false, kSrv, "HTTP status of the last layer 7 check."},
    {"check_duration", "check_duration_seconds", false, kSrv, "Duration of the last check.", true},
    {"qtime", "queue_time_average_seconds", false, kBe | kSrv, "Average queue time of the last requests.", true},
    {"ctime", "connect_time_average_seconds", false, kBe | kSrv, "Average connect time of the last requests.", true},
    {"rtime", "response_time_average_seconds", false, kBe | kSrv, "Average response time of the last requests.", true},
    {"ttime", "total_time_average_seconds", false, kBe | kSrv, "Average total time of the last requests.", true},
    {"qtime_max", "max_queue_time_seconds", false, kBe | kSrv, "Highest queue time.", true},
    {"ctime_max", "max_connect_time_seconds", false, kBe | kSrv, "Highest connect time.", true},
    {"rtime_max", "max_response_time_seconds", false, kBe | kSrv, "Highest response time.", true},
    {"ttime_max", "max_total_time_seconds", false, kBe | kSrv, "Highest total time.", true},
    {"req_rate_max", "http_requests_rate_max", false, kFe, "Highest number of HTTP requests per second."},
    {"req_tot", "http_requests_total", true, kFe | kBe, "HTTP requests."},
    {"intercepted", "intercepted_requests_total", true, kFe, "Requests answered by the proxy itself."},
    {"wrew", "failed_header_rewriting_total", true, kFe | kBe | kSrv, "Failed header rewrites."},
    {"eint", "internal_errors_total", true, kFe | kBe | kSrv, "Internal errors."},
    {"idle_conn_cur", "unsafe_idle_connections_current", false, kSrv, "Idle server connections not yet proven reusable."},
    {"safe_conn_cur", "safe_idle_connections_current", false, kSrv, "Idle server connections proven reusable."},
    {"used_conn_cur", "used_connections_current", false, kSrv, "Server connections in use."},
    {"need_conn_est", "need_connections_current", false, kSrv, "Estimated server connections needed."},
    {"srv_icur", "idle_connections_current", false, kSrv, "Idle server connections."},
    {"src_ilim", "idle_connections_limit", false, kSrv, "Limit of idle server connections."},
};

constexpr std::string_view kCodes[] = {"1xx", "2xx", "3xx", "4xx", "5xx", "other"};
constexpr std::string_view kCodeColumns[] = {"hrsp_1xx", "hrsp_2xx", "hrsp_3xx",
                                             "hrsp_4xx", "hrsp_5xx", "hrsp_other"};
constexpr std::string_view kServerStates[] = {"DOWN", "UP", "MAINT", "DRAIN", "NOLB"};
constexpr std::string_view kCheckStates[] = {
    "HANA", "SOCKERR", "L4OK", "L4TOUT", "L4CON", "L6OK", "L6TOUT", "L6RSP", "L7TOUT",
    "L7RSP", "L7OK", "L7OKC", "L7STS", "PROCERR", "PROCTOUT", "PROCOK"};

// Label values: `\`, `"` and LF escaped (the exposition format's rule).
std::string label(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

void header(std::string_view name, std::string_view help, bool counter, std::string* out) {
  *out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, counter ? "counter" : "gauge");
}

// "123" as is; with ms_to_s, "1500" -> "1.5".
std::string value(const std::string& v, bool ms_to_s) {
  if (!ms_to_s) return v;
  char* end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  return fmt::format("{}", d / 1000.0);
}

std::string labels(const StatRow& r) {
  std::string l = fmt::format("proxy=\"{}\"", label(r.v[stat_column("pxname")]));
  if (r.kind == StatRow::kServer) l += fmt::format(",server=\"{}\"", label(r.v[stat_column("svname")]));
  return l;
}

const char* prefix(unsigned scope) {
  return scope == kFe ? "haproxy_frontend_" : scope == kBe ? "haproxy_backend_" : "haproxy_server_";
}

void object_metrics(const std::vector<StatRow>& rows, unsigned scope, std::string* out) {
  StatRow::Kind kind = scope == kFe   ? StatRow::kFrontend
                      : scope == kBe ? StatRow::kBackend
                                     : StatRow::kServer;
  std::vector<const StatRow*> objs;
  for (const auto& r : rows)
    if (r.kind == kind) objs.push_back(&r);
  if (objs.empty()) return;
  std::size_t st = stat_column("status");
  // Status, one line per state, 1 for the current one (HAProxy's layout).
  {
    std::string name = std::string(prefix(scope)) + "status";
    header(name, "Current status, 1 for the state it is in.", false, out);
    for (const StatRow* r : objs) {
      const std::string& s = r->v[st];
      if (scope == kSrv) {
        std::string_view cur = "UP";   // "no check" too
        for (std::string_view state : {"MAINT", "DOWN", "NOLB", "DRAIN"})
          if (s.starts_with(state)) cur = state;
        for (auto state : kServerStates)
          *out += fmt::format("{}{{{},state=\"{}\"}} {}\n", name, labels(*r), state,
                              cur == state ? 1 : 0);
      } else {
        bool up = s == "OPEN" || s == "UP";
        *out += fmt::format("{}{{{},state=\"DOWN\"}} {}\n", name, labels(*r), up ? 0 : 1);
        *out += fmt::format("{}{{{},state=\"UP\"}} {}\n", name, labels(*r), up ? 1 : 0);
      }
    }
  }
  for (const Metric& m : kMetrics) {
    if (!(m.scopes & scope)) continue;
    std::size_t col = stat_column(m.column);
    std::string name = std::string(prefix(scope)) + std::string(m.name);
    bool any = false;
    for (const StatRow* r : objs) {
      const std::string& v = r->v[col];
      if (v.empty()) continue;
      if (!any) header(name, m.help, m.counter, out);
      any = true;
      *out += fmt::format("{}{{{}}} {}\n", name, labels(*r), value(v, m.ms_to_s));
    }
  }
  if (scope == kSrv) {
    // The last check's result, one line per result code, for servers with a check.
    std::size_t cs = stat_column("check_status");
    std::string name = "haproxy_server_check_status";
    bool any = false;
    for (const StatRow* r : objs) {
      std::string_view code = r->v[cs];
      if (code.empty()) continue;
      if (code.starts_with("* ")) code.remove_prefix(2);
      if (!any) header(name, "Status of the last health check, 1 for its result code.", false, out);
      any = true;
      for (auto state : kCheckStates)
        *out += fmt::format("{}{{{},state=\"{}\"}} {}\n", name, labels(*r), state,
                            code == state ? 1 : 0);
    }
  }
  // HTTP responses by class, for HTTP proxies (the fields are empty in TCP mode).
  std::string name = std::string(prefix(scope)) + "http_responses_total";
  bool any = false;
  for (const StatRow* r : objs) {
    if (r->v[stat_column("hrsp_2xx")].empty()) continue;
    if (!any) header(name, "HTTP responses by status class.", true, out);
    any = true;
    for (std::size_t i = 0; i < 6; ++i)
      *out += fmt::format("{}{{{},code=\"{}\"}} {}\n", name, labels(*r), kCodes[i],
                          r->v[stat_column(kCodeColumns[i])]);
  }
}

void process_metrics(const ProcessSnapshot& p, std::string* out) {
  auto g = [&](std::string_view n, std::string_view help, uint64_t v, bool counter = false) {
    std::string name = fmt::format("haproxy_process_{}", n);
    header(name, help, counter, out);
    *out += fmt::format("{} {}\n", name, v);
  };
  g("nbthread", "Worker threads.", static_cast<uint64_t>(p.nbthread));
  g("nbproc", "Processes (always 1).", 1);
  g("relative_process_id", "Process number (always 1).", 1);
  g("uptime_seconds", "Seconds since start-up.", p.uptime_s);
  g("start_time_seconds", "Start time, in seconds since the epoch.", p.start_time_s);
  g("max_fds", "File descriptor limit.", p.ulimit_n);
  g("max_sockets", "Socket limit.", p.maxsock);
  g("max_connections", "Connection limit (maxconn).", p.maxconn);
  g("hard_max_connections", "Connection limit set at start-up.", p.hard_maxconn);
  g("current_connections", "Current connections.", p.curr_conns);
  g("connections_total", "Connections since start-up.", p.cum_conns, true);
  g("requests_total", "HTTP requests since start-up.", p.cum_req, true);
  g("current_connection_rate", "New connections in the last second.", p.conn_rate);
  g("limit_connection_rate", "Configured limit of new connections per second.", p.conn_rate_limit);
  g("max_connection_rate", "Highest number of new connections per second.", p.max_conn_rate);
  g("current_session_rate", "New sessions in the last second.", p.sess_rate);
  g("limit_session_rate", "Configured limit of new sessions per second.", p.sess_rate_limit);
  g("max_session_rate", "Highest number of new sessions per second.", p.max_sess_rate);
  g("max_ssl_connections", "Configured limit of TLS connections (0: none).", p.max_ssl_conns);
  g("current_ssl_connections", "Current TLS connections (both sides).", p.curr_ssl_conns);
  g("ssl_connections_total", "TLS connections since start-up (both sides).", p.cum_ssl_conns, true);
  g("current_ssl_rate", "New frontend TLS connections in the last second.", p.ssl_rate);
  g("limit_ssl_rate", "Configured limit of new TLS connections per second.", p.ssl_rate_limit);
  g("max_ssl_rate", "Highest number of new frontend TLS connections per second.", p.max_ssl_rate);
  g("current_frontend_ssl_key_rate", "Full frontend TLS handshakes in the last second.", p.ssl_fe_key_rate);
  g("max_frontend_ssl_key_rate", "Highest number of full frontend TLS handshakes per second.", p.ssl_fe_max_key_rate);
  g("frontend_ssl_reuse", "Percent of frontend TLS connections that resumed a session.", p.ssl_fe_reuse_pct);
  g("current_backend_ssl_key_rate", "Full backend TLS handshakes in the last second.", p.ssl_be_key_rate);
  g("max_backend_ssl_key_rate", "Highest number of full backend TLS handshakes per second.", p.ssl_be_max_key_rate);
  g("ssl_cache_lookups_total", "Session cache lookups.", p.ssl_cache_lookups, true);
  g("ssl_cache_misses_total", "Session cache lookups that found nothing.", p.ssl_cache_misses, true);
  g("current_tasks", "Current tasks.", p.tasks);
  g("current_run_queue", "Tasks ready to run.", p.run_queue);
  g("idle_time_percent", "Idle time of the threads, in percent.", static_cast<uint64_t>(p.idle_pct));
  g("stopping", "1 while stopping softly.", p.stopping ? 1 : 0);
  g("jobs", "Active jobs (listeners, connections...).", p.jobs);
  g("listeners", "Listening sockets.", p.listeners);
  g("dropped_logs_total", "Log messages dropped.", p.dropped_logs, true);
  g("bytes_out_total", "Bytes sent since start-up.", p.total_bytes_out, true);
  g("bytes_out_rate", "Bytes sent in the last second.", p.bytes_out_rate);
  header("haproxy_process_build_info", "Build information (the version is sluice's).", false, out);
  *out += fmt::format("haproxy_process_build_info{{version=\"{}\"}} 1\n", label(p.version));
}

}  // namespace

void prometheus_text(const ProcessSnapshot& proc, const std::vector<StatRow>& rows,
                     const StatsPageQuery& q, std::string* out) {
  if (q.prom_global) process_metrics(proc, out);
  if (q.prom_frontend) object_metrics(rows, kFe, out);
  if (q.prom_backend) object_metrics(rows, kBe, out);
  if (q.prom_server) object_metrics(rows, kSrv, out);
}

}  // namespace sluice::stats

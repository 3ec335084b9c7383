// `show info [typed|json] [desc] [float]` (spec section 2).
#include <fmt/format.h>

#include "base/version.h"
#include "cli/builtin.h"
#include "stats/fields.h"

namespace sluice::cli {
namespace {

using stats::FieldType;

struct InfoField {
  int pos;                 // HAProxy's position: typed output and JSON carry it
  const char* name;
  const char* tags;        // origin, nature, scope, persistence
  FieldType type;
  std::string value;
  const char* desc;
};

std::string num(uint64_t v) { return std::to_string(v); }

// Only the fields sluice can fill truthfully, in HAProxy's order. Missing positions leave holes
// in the typed numbering, which is what HAProxy does for fields a build lacks.
std::vector<InfoField> info_fields(const stats::ProcessSnapshot& p) {
  using T = FieldType;
  std::vector<InfoField> f = {
      {0, "Name", "POSV", T::kStr, "sluice", "Product name"},
      {1, "Version", "POSV", T::kStr, base::kVersion, "Product version"},
      {2, "Release_date", "POSV", T::kStr, base::kReleaseDate, "Date of latest source code update"},
      {3, "Nbthread", "CGSV", T::kU32, num(static_cast<uint64_t>(p.nbthread)),
       "Number of started threads (global.nbthread)"},
      {4, "Nbproc", "CGSV", T::kU32, "1", "Number of started worker processes (historical, always 1)"},
      {5, "Process_num", "KGPV", T::kU32, "1", "Relative worker process number (1)"},
      {6, "Pid", "SGPV", T::kU32, num(static_cast<uint64_t>(p.pid)),
       "This worker process identifier for the system"},
      {7, "Uptime", "MDPV", T::kStr, stats::format_uptime(p.uptime_s),
       "How long ago this worker process was started (days+hours+minutes+seconds)"},
      {8, "Uptime_sec", "MDPV", T::kU32, num(p.uptime_s),
       "How long ago this worker process was started (seconds)"},
      {13, "Ulimit-n", "CLPV", T::kU32, num(p.ulimit_n),
       "Hard system-wide maximum number of open files"},
      {14, "Maxsock", "CLPV", T::kU32, num(p.maxsock),
       "Maximum number of open files/sockets this process may use"},
      {15, "Maxconn", "CLPV", T::kU32, num(p.maxconn),
       "Maximum number of concurrent connections (global.maxconn)"},
      {16, "Hard_maxconn", "CLPV", T::kU32, num(p.hard_maxconn),
       "Initial maximum number of concurrent connections (global.maxconn)"},
      {17, "CurrConns", "MGPV", T::kU32, num(p.curr_conns), "Current number of connections"},
      {18, "CumConns", "MCPV", T::kU32, num(p.cum_conns),
       "Total number of connections since the process started"},
      {19, "CumReq", "MCPV", T::kU32, num(p.cum_req),
       "Total number of HTTP requests since the process started"},
      // sluice never splices: no pipes. Tools read these three, so they are present.
      {20, "MaxSslConns", "MMPV", T::kU32, num(p.max_ssl_conns),
       "Hard limit on the number of per-process SSL endpoints (front+back), 0=unlimited"},
      {21, "CurrSslConns", "MGPV", T::kU32, num(p.curr_ssl_conns),
       "Current number of SSL endpoints on this worker process (front+back)"},
      {22, "CumSslConns", "MCPV", T::kU32, num(p.cum_ssl_conns),
       "Total number of SSL endpoints on this worker process since started (front+back)"},
      {23, "Maxpipes", "CLPV", T::kU32, "0", "Maximum number of pipes usable for splicing"},
      {24, "PipesUsed", "MGPV", T::kU32, "0", "Number of pipes currently in use"},
      {25, "PipesFree", "MGPV", T::kU32, "0", "Number of pipes currently free"},
      {26, "ConnRate", "MRPV", T::kU32, num(p.conn_rate),
       "Number of front connections created on the last second"},
      // 0 means "none", as in HAProxy.
      {27, "ConnRateLimit", "CLPV", T::kU32, num(p.conn_rate_limit), "Maximum new connections per second (global.maxconnrate)"},
      {28, "MaxConnRate", "MMPV", T::kU32, num(p.max_conn_rate),
       "Highest ConnRate reached"},
      {29, "SessRate", "MRPV", T::kU32, num(p.sess_rate),
       "Number of sessions created on the last second"},
      {30, "SessRateLimit", "CLPV", T::kU32, num(p.sess_rate_limit), "Maximum new sessions per second (global.maxsessrate)"},
      {31, "MaxSessRate", "MMPV", T::kU32, num(p.max_sess_rate), "Highest SessRate reached"},
      {32, "SslRate", "MRPV", T::kU32, num(p.ssl_rate),
       "Number of SSL connections created on this worker process over the last second"},
      {33, "SslRateLimit", "CLPV", T::kU32, num(p.ssl_rate_limit),
       "Hard limit for SslRate (global.maxsslrate)"},
      {34, "MaxSslRate", "MMPV", T::kU32, num(p.max_ssl_rate),
       "Highest SslRate reached on this worker process since started (in connections per second)"},
      {35, "SslFrontendKeyRate", "MGPV", T::kU32, num(p.ssl_fe_key_rate),
       "Number of SSL keys created on frontends in this worker process over the last second"},
      {36, "SslFrontendMaxKeyRate", "MMPV", T::kU32, num(p.ssl_fe_max_key_rate),
       "Highest SslFrontendKeyRate reached on this worker process since started (in SSL keys per second)"},
      {37, "SslFrontendSessionReuse_pct", "MGPV", T::kU32, num(p.ssl_fe_reuse_pct),
       "Percent of frontend SSL connections which did not require a new key"},
      {38, "SslBackendKeyRate", "MRPV", T::kU32, num(p.ssl_be_key_rate),
       "Number of SSL keys created on backends in this worker process over the last second"},
      {39, "SslBackendMaxKeyRate", "MMPV", T::kU32, num(p.ssl_be_max_key_rate),
       "Highest SslBackendKeyRate reached on this worker process since started (in SSL keys per second)"},
      {40, "SslCacheLookups", "MCPV", T::kU32, num(p.ssl_cache_lookups),
       "Total number of SSL session ID lookups in the SSL session cache on this worker since started"},
      {41, "SslCacheMisses", "MCPV", T::kU32, num(p.ssl_cache_misses),
       "Total number of SSL session ID lookups that didn't find a session in the SSL session cache on this worker since started"},
      {47, "Tasks", "MGPV", T::kU32, num(p.tasks), "Total number of tasks in the current worker process"},
      {48, "Run_queue", "MGPV", T::kU32, num(p.run_queue),
       "Total number of active tasks+tasklets in the current worker process"},
      {49, "Idle_pct", "MaPV", T::kU32, num(static_cast<uint64_t>(p.idle_pct)),
       "Percentage of last second spent waiting in the current worker thread"},
      {50, "node", "COSV", T::kStr, p.node, "Node name (global.node)"},
  };
  if (!p.description.empty())
    f.push_back({51, "description", "COSV", T::kStr, p.description,
                 "Node description (global.description)"});
  std::vector<InfoField> rest = {
      {52, "Stopping", "MGPV", T::kU32, p.stopping ? "1" : "0",
       "1 if the worker process is currently stopping, otherwise zero"},
      {53, "Jobs", "MGPV", T::kU32, num(p.jobs),
       "Current number of active jobs on the current worker process (frontend connections, master connections, listeners)"},
      {54, "Unstoppable Jobs", "MGPV", T::kU32, "0",
       "Current number of unstoppable jobs on the current worker process (master connections)"},
      {55, "Listeners", "MGPV", T::kU32, num(p.listeners),
       "Current number of active listeners on the current worker process"},
      {58, "DroppedLogs", "MCPV", T::kU32, num(p.dropped_logs),
       "Total number of dropped logs for current worker process since started"},
      {61, "TotalBytesOut", "MCPV", T::kU64, num(p.total_bytes_out),
       "Total number of bytes emitted by current worker process since started"},
      {63, "BytesOutRate", "MRPV", T::kU64, num(p.bytes_out_rate),
       "Number of bytes emitted by current worker process over the last second"},
      {66, "Build info", "POSV", T::kStr, base::kVersion, "Build info"},
      {70, "Start_time_sec", "MDPV", T::kU32, num(p.start_time_s),
       "Start time in seconds"},
      {72, "TotalWarnings", "MCPV", T::kU32, num(p.total_warnings),
       "Total warnings issued"},
      {73, "MaxconnReached", "MCPV", T::kU32, num(p.maxconn_reached),
       "Number of times an accepted connection resulted in Maxconn being reached"},
      {74, "BootTime_ms", "MDPV", T::kU32, num(p.boot_time_ms),
       "How long ago it took to parse and process the config before being ready (milliseconds)"},
      {76, "CurrStreams", "MGPV", T::kU64, num(p.curr_streams), "Current number of streams on this worker process"},
      {77, "CumStreams", "MCPV", T::kU64, num(p.cum_streams),
       "Total number of streams created on this worker process since started"},
      {81, "NbThreadGroups", "CGSV", T::kU32, num(static_cast<uint64_t>(p.nbtgroups)),
       "Number of thread groups"},
  };
  f.insert(f.end(), rest.begin(), rest.end());
  return f;
}

}  // namespace

void cmd_show_info(const CommandContext& ctx, const std::vector<std::string>& words,
                   std::string* out) {
  enum class Format { kPlain, kTyped, kJson } format = Format::kPlain;
  bool desc = false;
  for (std::size_t i = 2; i < words.size(); ++i) {
    // Same as HAProxy: unknown words are ignored, the last format word wins. `float` changes
    // nothing because sluice's rates and times are whole numbers.
    if (words[i] == "typed") format = Format::kTyped;
    else if (words[i] == "json") format = Format::kJson;
    else if (words[i] == "desc") desc = true;
  }
  stats::ProcessSnapshot p;
  if (ctx.stats) p = ctx.stats->process();
  auto fields = info_fields(p);

  if (format == Format::kJson) {
    *out += '[';
    bool first = true;
    for (const auto& f : fields) {
      if (!first) *out += ',';
      first = false;
      *out += fmt::format(R"({{"field":{{"pos":{},"name":"{}"}},"processNum":1,"tags":{},"value":{}}})",
                          f.pos, stats::json_escape(f.name), stats::json_tags(f.tags),
                          stats::json_value(f.type, f.value));
    }
    *out += "]\n";
    return;
  }
  for (const auto& f : fields) {
    std::string value = f.type == FieldType::kStr ? stats::csv_escape(f.value) : f.value;
    if (format == Format::kTyped) {
      *out += fmt::format("{}.{}.1:{}:{}:{}", f.pos, f.name, f.tags,
                          stats::field_type_name(f.type), value);
    } else {
      *out += fmt::format("{}: {}", f.name, value);
    }
    if (desc) *out += fmt::format(":\"{}\"", f.desc);
    *out += '\n';
  }
}

}  // namespace sluice::cli

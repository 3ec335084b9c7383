#pragma once
// The bodies of the HTTP statistics page (`stats uri`, as HAProxy 3.5 serves it) and of the
// Prometheus exporter. StatsPageQuery is what a request asks for, parsed from the options after
// the URI prefix (`;csv`, `;up`, `scope=`...) or from the exporter's query string by
// HttpService (stats/http_service.h); render_stats_page() turns it into a body. Any thread
// (reads the StatsSource, which any thread may).
#include <cstdint>
#include <string>
#include <vector>

#include "stats/snapshot.h"
#include "stats/stat_table.h"

namespace sluice::stats {

struct StatsPageQuery {
  // kPrometheus: `http-request use-service prometheus-exporter` (same counters, Prometheus
  // text exposition with HAProxy's metric names).
  enum class Format { kHtml, kCsv, kTyped, kJson, kPrometheus };
  Format format = Format::kHtml;
  bool hide_down = false;                 // `;up`
  bool hide_maint = false;                // `;no-maint`
  bool show_legends = false;              // `stats show-legends`: addr, cookie, algo filled
  std::vector<std::string> scope_names;   // `stats scope`: exact names; empty = every proxy
  std::string scope_text;                 // URI `scope=`: case-insensitive substring
  // HTML only.
  std::string uri;                        // the page's URI prefix, for its links
  uint32_t refresh_s = 0;                 // 0: not refreshing
  bool hide_version = false;
  std::string node;                       // shown when not empty
  std::string desc;
  std::string status;                     // `;st=<CODE>`: the result banner
  // `stats admin` applies: each backend with servers is a form (a checkbox per server, the
  // action select) that posts to the page's own URL.
  bool admin = false;
  // Prometheus only: which metric groups (`scope=` query parameters; all by default).
  bool prom_global = true, prom_frontend = true, prom_backend = true, prom_server = true;
};

// The page's body: the `show stat` rows in CSV (without the CLI's final empty line), typed or
// JSON form, sluice's HTML report, or the Prometheus text.
std::string render_stats_page(const StatsSource& source, const StatsPageQuery& q);

// The Prometheus text of the exporter (prometheus.cc) from the process fields and the rows.
void prometheus_text(const ProcessSnapshot& proc, const std::vector<StatRow>& rows,
                     const StatsPageQuery& q, std::string* out);

}  // namespace sluice::stats

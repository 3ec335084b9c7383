#pragma once
// What the HTTP statistics page (`stats uri`, HAProxy's) is asked for by the options after
// the URI prefix (`;csv`, `;up`, `scope=`...): the HTTP session parses the request into this, and the renderer the application installs
// (Process::set_stats_page) turns it into a body. Plain value; any thread.
#include <cstdint>
#include <string>
#include <vector>

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
  // Prometheus only: which metric groups (`scope=` query parameters; all by default).
  bool prom_global = true, prom_frontend = true, prom_backend = true, prom_server = true;
};

}  // namespace sluice::stats

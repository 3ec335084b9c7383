#pragma once
// The `show stat` table: one row per frontend, listener, backend and server, 120 columns fixed
// by position (HAProxy's), built from the process snapshots and written as CSV, typed or JSON
// lines. The CLI's `show stat`, the statistics page and the Prometheus exporter all read it.
// Pure functions of their arguments; any thread.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stats/snapshot.h"

namespace sluice::stats {

// Names of the columns 0-118 followed by "-" (column 119).
inline constexpr std::size_t kStatColumns = 120;
const std::vector<std::string_view>& stat_column_names();
// The position of a column by name (119, the "-" column, when unknown).
std::size_t stat_column(std::string_view name);

// One row; "" is an empty field. `kind` is also the value of the `type` column.
struct StatRow {
  enum Kind : int { kFrontend = 0, kBackend = 1, kServer = 2, kListener = 3 };
  Kind kind = kFrontend;
  int iid = 0;   // the proxy's id
  int sid = 0;   // the server's or listener's id, 0 for a frontend or backend
  std::array<std::string, kStatColumns> v;
};

// Which rows of a proxy are listed.
struct StatFilter {
  // `show stat <iid> <type> <sid>`: -1 is any; `type` is a bit mask (1 frontend, 2 backend,
  // 4 server, 8 listener).
  bool bound = false;
  int64_t iid = -1, type = -1, sid = -1;
  bool hide_down = false;        // `up`: servers DOWN and not changing state, and maintenance
  bool hide_maint = false;       // `no-maint`
  bool show_legends = false;     // addr, cookie and algo filled (operator and admin, legends)
};

// Appends the rows of one proxy that `filter` selects, in `show stat` order.
void stat_rows(const ProxySnapshot& px, const StatFilter& filter, std::vector<StatRow>* rows);

enum class StatFormat { kCsv, kTyped, kJson };
// The rows as `show stat` prints them: CSV with its `# ` header line, typed lines, or a JSON
// array.
void format_stat_rows(const std::vector<StatRow>& rows, StatFormat format, std::string* out);

}  // namespace sluice::stats

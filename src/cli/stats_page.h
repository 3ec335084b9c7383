#pragma once
// The body of the HTTP statistics page (`stats uri`, as HAProxy 3.5 serves it): the `show stat`
// rows in CSV (without the CLI's final empty line), typed or JSON form, or an HTML report. The
// application installs it into the proxy layer (Process::set_stats_page). Any thread (reads
// the StatsSource, which any thread may).
#include <string>

#include "stats/page.h"
#include "stats/snapshot.h"

namespace sluice::cli {

std::string render_stats_page(const stats::StatsSource& source, const stats::StatsPageQuery& q);

}  // namespace sluice::cli

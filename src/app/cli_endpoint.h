#pragma once
// Stats sockets: the listening sockets of `stats socket` lines and the connections on them,
// which feed bytes to a cli::CliSession. Served by the first worker, never sharded.
#include <string>
#include <vector>

#include "base/result.h"
#include "config/model.h"
#include "proxy/process.h"
#include "stats/control.h"
#include "stats/snapshot.h"

namespace sluice::app {

// Main thread, before Process::start(): opens every stats socket and registers it. `stats`
// and `control` (null: management commands change nothing) must outlive the process.
base::Result<void> open_stats_sockets(const config::GlobalConfig& global, proxy::Process& process,
                                      const stats::StatsSource& stats,
                                      stats::ServerControl* control = nullptr);

// Main thread, before Process::start(), in a worker of master-worker mode: `fd` is the
// worker's end of its channel to the master, on which the master forwards the commands of its
// CLI (`@1 show info`) as connections at level admin.
void open_master_channel(int fd, const config::GlobalConfig& global, proxy::Process& process,
                         const stats::StatsSource& stats, stats::ServerControl* control);

}  // namespace sluice::app

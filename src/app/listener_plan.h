#pragma once
// Thread and shard planning at start-up: reads the CPU topology, decides threads and groups,
// resolves each bind line's thread set and splits every listening address into shards
// (docs/threads-and-shards.md). Also renders the plan for `-c --explain`. Main thread only.
#include <string>
#include <vector>

#include "base/result.h"
#include "config/model.h"
#include "core/thread_plan.h"
#include "proxy/settings.h"

namespace sluice::app {

struct ShardingResult {
  core::ThreadPlan threads;
  std::vector<std::string> notices;
  std::vector<std::string> warnings;
  std::vector<std::string> diagnostics;   // shown with -dD
};

// The sysfs root: $SLUICE_SYSFS_ROOT when set (tests point it at a fake tree), else "/sys".
std::string sysfs_root();

// Plans threads from the global section. An error is a start-up error.
base::Result<core::ThreadPlan> plan_thread_layout(const config::GlobalConfig& global);

// Fills `settings.nbthread/nbtgroups/thread_group/thread_cpus` from the plan, and for every
// frontend bind line its per-address shards. `no_reuseport` is -dR. Errors name the bind line.
base::Result<void> plan_listeners(const config::ConfigModel& model, const core::ThreadPlan& plan,
                                  bool no_reuseport, proxy::ProcessSettings& settings,
                                  std::vector<proxy::ProxySettings>& proxies,
                                  ShardingResult& messages);

// Human-readable plan for `sluice -c -f CFG --explain`.
std::string explain(const config::ConfigModel& model, const core::ThreadPlan& plan,
                    const proxy::ProcessSettings& settings,
                    const std::vector<proxy::ProxySettings>& proxies);

}  // namespace sluice::app

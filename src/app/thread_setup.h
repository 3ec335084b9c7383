#pragma once
// Conversions from the configuration model (plain data) to the thread planner's and the shard
// planner's inputs. Main thread only.
#include <vector>

#include "config/model.h"
#include "core/thread_plan.h"
#include "net/shard_plan.h"

namespace sluice::app {

// nbthread, thread-groups, thread-group lines, cpu-map lines and cpu-policy. Each line keeps
// its "parsing [file:line] : " prefix for the planner's messages.
core::ThreadSettings to_thread_settings(const config::GlobalConfig& global);

// A bind line's `thread` items, in order.
std::vector<net::ThreadSetSpec> to_thread_specs(const std::vector<config::ThreadSetConfig>& sets);

// A bind line's `shards` (or the default it copied when it was read).
net::ShardsSetting to_shards(const config::ShardsConfig& shards);

}  // namespace sluice::app

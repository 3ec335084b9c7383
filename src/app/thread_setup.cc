// Configuration model -> thread and shard planner inputs.
#include "app/thread_setup.h"

#include <string>

namespace sluice::app {

namespace {

std::string where(const config::SourceLoc& loc) {
  return "parsing [" + loc.file + ":" + std::to_string(loc.line) + "] : ";
}

core::CpuPolicy to_policy(config::GlobalConfig::CpuPolicy p) {
  using P = config::GlobalConfig::CpuPolicy;
  switch (p) {
    case P::kNone: return core::CpuPolicy::kNone;
    case P::kGroupByCcx: return core::CpuPolicy::kGroupByCcx;
    case P::kPerformance: return core::CpuPolicy::kPerformance;
    case P::kDefault: break;
  }
  return core::CpuPolicy::kDefault;
}

}  // namespace

core::ThreadSettings to_thread_settings(const config::GlobalConfig& global) {
  core::ThreadSettings s;
  s.nbthread = global.nbthread;
  s.thread_groups = global.thread_groups;
  s.max_threads_per_group = global.max_threads_per_group;
  s.thread_hard_limit = global.thread_hard_limit;
  for (const auto& l : global.thread_group_lines) {
    core::ThreadGroupLine t;
    t.group = l.group;
    t.threads = l.threads;
    t.where = where(l.loc);
    s.thread_group_lines.push_back(std::move(t));
  }
  for (const auto& m : global.cpu_maps) {
    core::CpuMapLine c;
    c.automatic = m.automatic;
    c.groups = m.groups;
    c.threads = m.threads;
    c.cpus = m.cpus;
    c.group_range = m.group_range;
    c.thread_range = m.thread_range;
    c.where = where(m.loc);
    s.cpu_maps.push_back(std::move(c));
  }
  s.cpu_policy = to_policy(global.cpu_policy);
  s.cpu_policy_explicit = global.cpu_policy != config::GlobalConfig::CpuPolicy::kDefault;
  return s;
}

std::vector<net::ThreadSetSpec> to_thread_specs(const std::vector<config::ThreadSetConfig>& sets) {
  std::vector<net::ThreadSetSpec> out;
  out.reserve(sets.size());
  for (const auto& t : sets) {
    net::ThreadSetSpec spec;
    spec.relative = t.relative;
    spec.group = t.group;
    spec.ids = t.ids;
    out.push_back(std::move(spec));
  }
  return out;
}

net::ShardsSetting to_shards(const config::ShardsConfig& shards) {
  using C = config::ShardsConfig::Kind;
  using N = net::ShardsSetting::Kind;
  net::ShardsSetting s;
  switch (shards.kind) {
    case C::kByProcess: s.kind = N::kByProcess; break;
    case C::kByGroup: s.kind = N::kByGroup; break;
    case C::kByThread: s.kind = N::kByThread; break;
    case C::kNumber: s.kind = N::kNumber; break;
  }
  s.number = shards.number;
  return s;
}

}  // namespace sluice::app

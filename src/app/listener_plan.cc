#include "app/listener_plan.h"

#include <cstdlib>

#include <fmt/format.h>

#include "app/thread_setup.h"
#include "net/reuseport_steering.h"
#include "net/shard_plan.h"
#include "net/socket.h"

namespace sluice::app {

namespace {

// "1-4,7" from ascending ids; "-" for none.
std::string compact(const std::vector<int>& ids) {
  return ids.empty() ? "-" : core::format_cpu_list(ids);
}

const char* shards_name(const config::ShardsConfig& s) {
  switch (s.kind) {
    case config::ShardsConfig::Kind::kByProcess: return "by-process";
    case config::ShardsConfig::Kind::kByGroup: return "by-group";
    case config::ShardsConfig::Kind::kByThread: return "by-thread";
    case config::ShardsConfig::Kind::kNumber: return "number";
  }
  return "?";
}

std::string proxy_desc(const config::ProxyConfig& p) {
  // HAProxy calls a listen section a "proxy" in these messages.
  return fmt::format("{} '{}'", p.type == "listen" ? "proxy" : p.type, p.name);
}

}  // namespace

std::string sysfs_root() {
  const char* env = std::getenv("SLUICE_SYSFS_ROOT");
  return env && *env ? env : "/sys";
}

base::Result<core::ThreadPlan> plan_thread_layout(const config::GlobalConfig& global) {
  // A replaced sysfs root describes another machine (tests, what-if planning with -c
  // --explain): this process's own affinity mask says nothing about it.
  bool fake = std::getenv("SLUICE_SYSFS_ROOT") != nullptr;
  core::Topology topo =
      core::read_topology(sysfs_root(), fake ? std::vector<int>{} : core::process_affinity());
  return core::plan_threads(to_thread_settings(global), topo);
}

base::Result<void> plan_listeners(const config::ConfigModel& model, const core::ThreadPlan& plan,
                                  bool no_reuseport, proxy::ProcessSettings& settings,
                                  std::vector<proxy::ProxySettings>& proxies,
                                  ShardingResult& messages) {
  settings.nbthread = plan.nbthread;
  settings.nbtgroups = static_cast<int>(plan.groups.size());
  settings.thread_group = plan.thread_group;
  settings.thread_cpus = plan.thread_cpus;
  bool reuseport_off = no_reuseport || model.global.noreuseport;
  settings.reuseport = !reuseport_off;
  for (std::size_t pi = 0; pi < model.proxies.size() && pi < proxies.size(); ++pi) {
    const auto& pc = model.proxies[pi];
    auto& ps = proxies[pi];
    for (std::size_t bi = 0; bi < pc.binds.size() && bi < ps.binds.size(); ++bi) {
      const auto& bc = pc.binds[bi];
      auto& bs = ps.binds[bi];
      auto threads = net::resolve_thread_set(to_thread_specs(bc.threads), plan);
      if (!threads.ok()) {
        base::Error e = threads.error();
        e.message = fmt::format("{}: {} in '{}' at [{}:{}].", proxy_desc(pc), e.message,
                                bc.args_text.empty() ? "bind " + bc.text : bc.args_text,
                                bc.loc.file, bc.loc.line);
        return e;
      }
      bs.shards.clear();
      bs.fell_back.clear();
      bs.steering.clear();
      for (const auto& a : bc.addrs) {
        bool reuseport = false;
        std::string proto = "unix_stream";
        if (a.kind == net::ListenAddress::Kind::kInet) {
          proto = net::proto_name(a.addr);
          // The live probe runs only when more than one socket is wanted, as in HAProxy.
          reuseport = !reuseport_off;
          if (reuseport && net::wanted_shards(to_shards(bc.shards), *threads, plan) > 1)
            reuseport = net::probe_reuseport(a.addr.family());
        } else if (a.kind == net::ListenAddress::Kind::kInheritedFd) {
          // An inherited socket is one kernel socket: sluice cannot add siblings to it.
          proto = "inherited fd";
        }
        auto r = net::plan_shards(to_shards(bc.shards), *threads, plan, reuseport,
                                  proxy_desc(pc), proto);
        for (auto& w : r.warnings) messages.warnings.push_back(w);
        for (auto& d : r.diagnostics) messages.diagnostics.push_back(d);
        std::vector<std::vector<int>> shard_threads;
        for (const auto& s : r.shards) shard_threads.push_back(s.threads);
        bs.shards.push_back(std::move(shard_threads));
        bs.fell_back.push_back(r.fell_back);
        std::vector<int> steer;
        if (settings.steer_by_cpu && r.shards.size() > 1) steer = net::cpu_to_shard_map(r, plan);
        bs.steering.push_back(std::move(steer));
      }
    }
  }
  return {};
}

std::string explain(const config::ConfigModel& model, const core::ThreadPlan& plan,
                    const proxy::ProcessSettings& settings,
                    const std::vector<proxy::ProxySettings>& proxies) {
  std::string out;
  out += fmt::format("threads: {} in {} group{}\n", plan.nbthread, plan.groups.size(),
                     plan.groups.size() == 1 ? "" : "s");
  for (const auto& g : plan.groups) {
    std::vector<int> ids;
    for (int t = g.first_thread; t < g.first_thread + g.count; ++t) ids.push_back(t);
    out += fmt::format("  group {}: threads {}", g.id, compact(ids));
    bool any_cpu = false;
    for (int t : ids) any_cpu |= !plan.thread_cpus[static_cast<std::size_t>(t - 1)].empty();
    if (!any_cpu) {
      out += ", not bound to CPUs\n";
    } else {
      out += "\n";
      for (int t : ids)
        out += fmt::format("    thread {} -> cpus {}\n", t,
                           compact(plan.thread_cpus[static_cast<std::size_t>(t - 1)]));
    }
  }
  out += fmt::format("reuseport: {}; multi-queue: {}; steering: {}\n",
                     settings.reuseport ? "on" : "off (noreuseport or -dR)",
                     settings.multi_queue == proxy::MultiQueue::kOn     ? "on"
                     : settings.multi_queue == proxy::MultiQueue::kFair ? "fair"
                                                                        : "off",
                     settings.steer_by_cpu ? "cpu" : "hash");
  for (std::size_t pi = 0; pi < model.proxies.size() && pi < proxies.size(); ++pi) {
    const auto& pc = model.proxies[pi];
    const auto& ps = proxies[pi];
    if (!ps.frontend) continue;
    for (std::size_t bi = 0; bi < pc.binds.size() && bi < ps.binds.size(); ++bi) {
      const auto& bc = pc.binds[bi];
      const auto& bs = ps.binds[bi];
      out += fmt::format("{} '{}' [{}:{}] shards {}{}\n", proxy_desc(pc),
                         bc.args_text.empty() ? "bind " + bc.text : bc.args_text, bc.loc.file, bc.loc.line,
                         shards_name(bc.shards),
                         bc.shards.kind == config::ShardsConfig::Kind::kNumber
                             ? " " + std::to_string(bc.shards.number)
                             : "");
      for (std::size_t ai = 0; ai < bc.addrs.size() && ai < bs.shards.size(); ++ai) {
        const auto& a = bc.addrs[ai];
        std::string addr = a.kind == net::ListenAddress::Kind::kInet ? a.addr.to_string() : a.text;
        const auto& shards = bs.shards[ai];
        out += fmt::format("  {}: {} socket{}{}\n", addr, shards.size(), shards.size() == 1 ? "" : "s",
                           bs.fell_back[ai] ? " (fell back to one shared socket: no SO_REUSEPORT)" : "");
        for (std::size_t si = 0; si < shards.size(); ++si) {
          std::vector<int> groups;
          for (int t : shards[si]) {
            int g = plan.thread_group[static_cast<std::size_t>(t - 1)];
            if (groups.empty() || groups.back() != g) groups.push_back(g);
          }
          out += fmt::format("    shard {}: group{} {}, threads {}\n", si + 1,
                             groups.size() == 1 ? "" : "s", compact(groups), compact(shards[si]));
        }
      }
    }
  }
  for (const auto& s : model.global.stats_sockets)
    out += fmt::format("stats socket {} [{}:{}]: 1 socket, thread 1 (special listener, never sharded)\n",
                       s.text, s.loc.file, s.loc.line);
  return out;
}

}  // namespace sluice::app

#include "net/shard_plan.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

namespace sluice::net {

namespace {

base::Error plan_error(std::string text) { return base::Error::text(std::move(text)); }

// Group (1-based) that owns global thread `tid`, or 0 if none does. Read from the groups'
// ranges rather than `thread_group`, so that a plan whose per-thread vectors were not filled
// (tests build plans by hand) still resolves, and a thread beyond every group is "absent"
// (threads absent from their group must never be given a socket: in HAProxy that crashed, or
// connections were ignored).
int group_of(const core::ThreadPlan& plan, int tid) {
  for (const core::GroupPlan& g : plan.groups) {
    if (tid >= g.first_thread && tid < g.first_thread + g.count) return g.id;
  }
  return 0;
}

const core::GroupPlan* find_group(const core::ThreadPlan& plan, int group) {
  for (const core::GroupPlan& g : plan.groups) {
    if (g.id == group) return &g;
  }
  return nullptr;
}

}  // namespace

base::Result<std::vector<int>> resolve_thread_set(const std::vector<ThreadSetSpec>& specs,
                                                  const core::ThreadPlan& plan) {
  std::set<int> selected;
  if (specs.empty()) {
    // Since HAProxy 2.8 a bind line without `thread` is served by every thread of every group.
    for (const core::GroupPlan& g : plan.groups) {
      for (int i = 0; i < g.count; ++i) selected.insert(g.first_thread + i);
    }
  }
  // Relative elements accumulate per group before the group's size is applied, as HAProxy's
  // per-group masks do: `thread 1/1-4,1/8-10` on a 4-thread group is valid (1/8-10 alone is
  // not), whether the parser gives one element per comma item or one per group.
  std::map<int, std::set<int>> relative;   // group -> local ids, ascending by group
  for (const ThreadSetSpec& spec : specs) {
    if (!spec.relative) {
      // `all` was expanded to 1..1024 by the parser, so ids beyond the real threads are the
      // normal case, not a mistake: drop them silently, as HAProxy does.
      for (int tid : spec.ids) {
        if (tid >= 1 && tid <= plan.nbthread && group_of(plan, tid) != 0) selected.insert(tid);
      }
      continue;
    }
    relative[spec.group].insert(spec.ids.begin(), spec.ids.end());
  }
  for (const auto& [group, ltids] : relative) {
    const core::GroupPlan* g = find_group(plan, group);
    if (g == nullptr) {
      return plan_error("'thread' directive references non-existing thread group " +
                        std::to_string(group));
    }
    bool any = false;
    for (int ltid : ltids) {
      if (ltid >= 1 && ltid <= g->count) {
        selected.insert(g->first_thread + ltid - 1);
        any = true;
      }
    }
    if (!any) {
      return plan_error("'thread' directive only references threads not belonging to group " +
                        std::to_string(group));
    }
  }
  if (selected.empty()) {
    return plan_error("'thread' directive only references non-existing threads");
  }
  return std::vector<int>(selected.begin(), selected.end());
}

namespace {

// Threads in group-major order, then by local id, as HAProxy orders them. Groups are contiguous
// ranges in ascending order, so this is ascending global id; sorting by
// (group, tid) anyway keeps the split right should a plan ever number groups otherwise.
std::vector<std::pair<int, int>> group_major(const std::vector<int>& threads,
                                             const core::ThreadPlan& plan) {
  std::vector<std::pair<int, int>> order;   // (group, tid)
  order.reserve(threads.size());
  for (int tid : threads) order.emplace_back(group_of(plan, tid), tid);
  std::sort(order.begin(), order.end());
  order.erase(std::unique(order.begin(), order.end()), order.end());
  return order;
}

int count_groups(const std::vector<std::pair<int, int>>& order) {
  std::set<int> groups;
  for (const auto& [g, tid] : order) groups.insert(g);
  return static_cast<int>(groups.size());
}

void fill_groups(Shard& shard, const core::ThreadPlan& plan) {
  std::set<int> groups;
  for (int tid : shard.threads) groups.insert(group_of(plan, tid));
  shard.groups.assign(groups.begin(), groups.end());
}

}  // namespace

int wanted_shards(const ShardsSetting& setting, const std::vector<int>& threads,
                  const core::ThreadPlan& plan) {
  auto order = group_major(threads, plan);
  const int n = static_cast<int>(order.size());
  if (n == 0) return 0;
  int s = 1;
  switch (setting.kind) {
    case ShardsSetting::Kind::kByProcess: s = 1; break;
    case ShardsSetting::Kind::kByGroup: s = count_groups(order); break;
    case ShardsSetting::Kind::kByThread: s = n; break;
    case ShardsSetting::Kind::kNumber: s = std::max(1, setting.number); break;
  }
  return std::min(s, n);   // shards never exceed threads, silently
}

ShardPlanResult plan_shards(const ShardsSetting& setting, const std::vector<int>& threads,
                            const core::ThreadPlan& plan, bool reuseport,
                            const std::string& proxy_desc, const std::string& proto_name) {
  ShardPlanResult result;
  auto order = group_major(threads, plan);
  const int n = static_cast<int>(order.size());
  if (n == 0) return result;

  int s = wanted_shards(setting, threads, plan);
  if (s > 1 && !reuseport) {
    // Without multi-bind every socket after the first would fail to bind (or, worse, steal
    // the port from an old process), so everything collapses onto one shared socket. Only an
    // explicit number is worth a warning: by-group is the default and says nothing about the
    // protocol, and by-thread is a diagnostic in HAProxy.
    switch (setting.kind) {
      case ShardsSetting::Kind::kByThread:
        result.diagnostics.push_back("Disabling per-thread sharding for listener in " +
                                     proxy_desc + " because SO_REUSEPORT is disabled for " +
                                     proto_name + " protocol.");
        break;
      case ShardsSetting::Kind::kNumber:
        result.warnings.push_back("Disabling sharding for listener in " + proxy_desc +
                                  " because SO_REUSEPORT is disabled for " + proto_name +
                                  " protocol.");
        break;
      case ShardsSetting::Kind::kByGroup:
      case ShardsSetting::Kind::kByProcess:
        break;
    }
    result.fell_back = true;
    s = 1;
  }

  if (setting.kind == ShardsSetting::Kind::kByGroup && s > 1) {
    // One shard per group present, even when groups are unequal. HAProxy splits by
    // thread count here and may straddle groups (10 threads in 3,3,2,2 -> 3,2,3,2); a socket
    // per group keeps each socket's accept work inside one CCX.
    for (const auto& [g, tid] : order) {
      if (result.shards.empty() || result.shards.back().groups.front() != g) {
        result.shards.emplace_back();
        result.shards.back().groups.push_back(g);
      }
      result.shards.back().threads.push_back(tid);
    }
    return result;
  }

  // HAProxy's split: contiguous runs whose sizes differ by at most one.
  result.shards.resize(static_cast<size_t>(s));
  for (size_t i = 0; i < order.size(); ++i) {
    const size_t shard = i * static_cast<size_t>(s) / order.size();
    result.shards[shard].threads.push_back(order[i].second);
  }
  for (Shard& shard : result.shards) fill_groups(shard, plan);
  return result;
}

// ---------------------------------------------------------------------------------------------
// SO_REUSEPORT probe: two sockets bound to one port, once per family.

namespace {

// Main thread only (start-up), like every caller of the planner: a plain map is enough.
std::map<int, bool>& probe_cache() {
  static std::map<int, bool> cache;
  return cache;
}

// Binds two SO_REUSEPORT TCP sockets to the same loopback address. Headers defining
// SO_REUSEPORT do not mean the kernel (or a seccomp filter, or an LD_PRELOAD shim) lets the
// second bind through, hence a live test rather than an #ifdef. Loopback rather than the
// wildcard address: the test must not briefly open a port on every interface, and ::1 being
// absent (IPv6 disabled) is a fine reason to say "no" for IPv6.
bool run_probe(int family) {
  sockaddr_storage addr{};
  socklen_t len = 0;
  if (family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&addr);
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    len = sizeof(sockaddr_in);
  } else if (family == AF_INET6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&addr);
    in6->sin6_family = AF_INET6;
    in6->sin6_addr = in6addr_loopback;
    len = sizeof(sockaddr_in6);
  } else {
    // UNIX sockets cannot be multi-bound (each bind unlinks the previous path); anything else
    // is unknown and treated as unsupported.
    return false;
  }

  auto open_bound = [&](sockaddr_storage* where) -> int {
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
    if (fd < 0) return -1;
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0 ||
        bind(fd, reinterpret_cast<sockaddr*>(where), len) != 0) {
      close(fd);
      return -1;
    }
    return fd;
  };

  int a = open_bound(&addr);
  if (a < 0) return false;
  // Port 0 picked an ephemeral port; the second socket must land on exactly that one.
  socklen_t got = sizeof addr;
  if (getsockname(a, reinterpret_cast<sockaddr*>(&addr), &got) != 0) {
    close(a);
    return false;
  }
  int b = open_bound(&addr);
  const bool ok = b >= 0;
  if (b >= 0) close(b);
  close(a);
  return ok;
}

}  // namespace

bool probe_reuseport(int family) {
  auto& cache = probe_cache();
  auto it = cache.find(family);
  if (it != cache.end()) return it->second;
  const bool ok = run_probe(family);
  cache[family] = ok;
  return ok;
}

void reset_reuseport_probe() { probe_cache().clear(); }

void force_reuseport_probe(int family, bool supported) { probe_cache()[family] = supported; }

}  // namespace sluice::net

// Thread and group counts, thread-to-group mapping and CPU binding, as HAProxy 3.5 decides them
// at boot, for the keywords sluice supports: cpu-map, thread-group, max-threads-per-group and
// the cpu-policy values none, group-by-ccx and performance.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/thread_plan.h"

namespace sluice::core {

namespace {

base::Error plan_error(std::string text) { return base::Error::text(std::move(text)); }

int ceil_div(int a, int b) { return (a + b - 1) / b; }

std::string str(int v) { return std::to_string(v); }

// `performance`: drop the clusters whose per-core capacity is below 80% of the best one
// (E-cores, LITTLE cores). A cluster here is CPUs of the same package, node, cluster, L3 and
// capacity, which also splits clusters whose capacity differs, as HAProxy re-composes them.
std::vector<CpuInfo> drop_slow_clusters(const std::vector<CpuInfo>& cpus,
                                        std::vector<std::string>* notices) {
  std::set<int> smt_cores;
  for (const auto& c : cpus)
    if (c.smt_index > 0 && c.core_id >= 0) smt_cores.insert(c.core_id);
  auto capacity = [&](const CpuInfo& c) {
    if (c.capacity > 0) return c.capacity;
    return smt_cores.count(c.core_id) ? 100 : 50;   // HAProxy's value for a missing capacity
  };
  bool any = std::any_of(cpus.begin(), cpus.end(), [](const CpuInfo& c) { return c.capacity > 0; });
  if (!any) return cpus;
  using Key = std::tuple<int, int, int, int, int>;
  struct Cluster {
    double sum = 0;
    int cores = 0;
  };
  std::map<Key, Cluster> clusters;
  auto key = [&](const CpuInfo& c) {
    return Key{c.package_id, c.numa_node, c.cluster_id, c.l3_id, capacity(c)};
  };
  for (const auto& c : cpus) {
    Cluster& cl = clusters[key(c)];
    // A core counts fully once, each extra SMT thread adds a third (cddeea58c: per core).
    if (c.smt_index == 0) {
      cl.sum += capacity(c);
      ++cl.cores;
    } else {
      cl.sum += capacity(c) / 3.0;
    }
  }
  double best = 0;
  for (auto& [k, cl] : clusters) best = std::max(best, cl.sum / std::max(cl.cores, 1));
  std::vector<CpuInfo> kept;
  std::vector<int> dropped;
  for (const auto& c : cpus) {
    const Cluster& cl = clusters[key(c)];
    if (cl.sum / std::max(cl.cores, 1) < 0.8 * best) {
      dropped.push_back(c.id);
    } else {
      kept.push_back(c);
    }
  }
  if (!dropped.empty())
    notices->push_back("cpu-policy performance: not using " + str(static_cast<int>(dropped.size())) +
                       " CPU(s) of lower capacity (" + format_cpu_list(dropped) + ")");
  return kept;
}

// `group-by-ccx`: one group per L3 domain, in order of first CPU; a domain larger than
// `max_per_group` is split into ceil(n/max) groups of fair sizes (84837b6e7). Stops at 32
// groups and `thread_limit` threads (158962110). CPUs without cache information form a single
// domain whose groups all share its CPUs (nothing is known that would justify slicing it).
struct PolicyGroup {
  int threads = 0;
  std::vector<int> cpus;
};

std::vector<PolicyGroup> group_by_ccx(const std::vector<CpuInfo>& cpus, int max_per_group,
                                      int thread_limit) {
  std::vector<int> order;   // l3 ids by first appearance
  std::map<int, std::vector<const CpuInfo*>> domains;
  for (const auto& c : cpus) {
    if (!domains.count(c.l3_id)) order.push_back(c.l3_id);
    domains[c.l3_id].push_back(&c);
  }
  std::vector<PolicyGroup> groups;
  int threads = 0;
  for (int l3 : order) {
    auto members = domains[l3];
    // Keep SMT siblings together when a domain is split.
    std::stable_sort(members.begin(), members.end(), [](const CpuInfo* a, const CpuInfo* b) {
      int ca = a->core_id >= 0 ? a->core_id : a->id + 100000;
      int cb = b->core_id >= 0 ? b->core_id : b->id + 100000;
      return std::tie(ca, a->smt_index, a->id) < std::tie(cb, b->smt_index, b->id);
    });
    int n = std::min(static_cast<int>(members.size()), thread_limit - threads);
    if (n <= 0) break;
    int k = ceil_div(n, max_per_group);
    int room = kMaxGroups - static_cast<int>(groups.size());
    if (k > room) {
      k = room;
      n = std::min(n, k * max_per_group);
    }
    if (k <= 0) break;
    std::vector<int> all;
    for (const auto* m : members) all.push_back(m->id);
    std::sort(all.begin(), all.end());
    int pos = 0;
    for (int g = 0; g < k; ++g) {
      int size = n / k + (g < n % k ? 1 : 0);
      std::vector<int> slice;
      for (int i = 0; i < size; ++i) slice.push_back(members[pos + i]->id);
      pos += size;
      std::sort(slice.begin(), slice.end());
      // The thread count is the slice size; the CPUs are the slice, or the whole domain when
      // the domain is unknown.
      groups.push_back(PolicyGroup{size, l3 < 0 ? all : slice});
    }
    threads += n;
  }
  return groups;
}

}  // namespace

std::string format_cpu_list(const std::vector<int>& cpus) {
  std::vector<int> v = cpus;
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  std::string out;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += str(v[i]);
    if (j > i) out += '-' + str(v[j]);
    i = j + 1;
  }
  return out;
}

base::Result<ThreadPlan> plan_threads(const ThreadSettings& s, const Topology& topo) {
  ThreadPlan plan;
  const int ncpu = static_cast<int>(topo.cpus.size());
  std::vector<int> usable;
  for (const auto& c : topo.cpus) usable.push_back(c.id);
  std::sort(usable.begin(), usable.end());

  const bool nb_set = s.nbthread > 0;
  const bool grp_set = s.thread_groups > 0;
  const int max_tpg = s.max_threads_per_group > 0 ? s.max_threads_per_group : kDefaultMaxThreadsPerGroup;
  if (grp_set && s.max_threads_per_group > 0)
    plan.notices.push_back("max-threads-per-group is ignored when thread-groups is set");
  // A forced group count may fill its groups up to the hard maximum (f5847d11f).
  int cap = grp_set ? kMaxThreadsPerGroupHard : max_tpg;
  const int hard = s.thread_hard_limit;

  // 1.3 steps 1-2: the thread range.
  int thr_max = kMaxThreads;
  int thr_min = 1;
  if (nb_set) {
    thr_min = thr_max = std::min(s.nbthread, kMaxThreads);
    if (hard > 0 && hard < s.nbthread) {
      plan.warnings.push_back("nbthread (" + str(s.nbthread) + ") is above thread-hard-limit (" +
                              str(hard) + "), limiting to " + str(hard) + " threads");
      thr_min = thr_max = hard;
    }
  } else {
    if (ncpu > 0) thr_max = std::min(thr_max, ncpu);
    if (hard > 0) thr_max = std::min(thr_max, hard);
  }

  // Step 3: the group range.
  int grp_min = 1;
  int max_line_group = 0;
  for (const auto& l : s.thread_group_lines) max_line_group = std::max(max_line_group, l.group);
  if (grp_set) {
    grp_min = std::min(s.thread_groups, kMaxGroups);
    if (max_line_group > grp_min)
      return plan_error("thread-group " + str(max_line_group) + " is beyond thread-groups (" +
                        str(grp_min) + ")");
  } else {
    grp_min = std::max({1, ceil_div(thr_min, max_tpg), max_line_group});
    if (grp_min > kMaxGroups) {
      // More threads than 32 groups of max-threads-per-group: fill the groups further rather
      // than cutting a configured nbthread (617df441d).
      grp_min = kMaxGroups;
      cap = std::min(kMaxThreadsPerGroupHard, std::max(cap, ceil_div(thr_min, kMaxGroups)));
    }
  }

  // Steps 4-5: the policy, only when nothing pins the layout.
  const CpuPolicy policy = s.cpu_policy == CpuPolicy::kDefault ? CpuPolicy::kPerformance : s.cpu_policy;
  std::vector<PolicyGroup> policy_groups;
  if (!s.cpu_maps.empty()) {
    if (s.cpu_policy_explicit) plan.notices.push_back("cpu-policy is ignored when cpu-map is set");
  } else if (nb_set || grp_set || !s.thread_group_lines.empty()) {
    if (s.cpu_policy_explicit)
      plan.notices.push_back("cpu-policy is ignored when nbthread, thread-groups or thread-group is set");
  } else if (ncpu > 0 && policy != CpuPolicy::kNone) {
    std::vector<CpuInfo> cpus = topo.cpus;
    if (policy == CpuPolicy::kPerformance) cpus = drop_slow_clusters(cpus, &plan.notices);
    policy_groups = group_by_ccx(cpus, max_tpg, thr_max);
  }

  int nbthread = 0;
  int ngroups = 0;
  std::vector<std::vector<int>> group_cpus;   // per group (policy only)
  std::vector<int> group_sizes;
  if (!policy_groups.empty()) {
    for (auto& g : policy_groups) {
      group_sizes.push_back(g.threads);
      nbthread += g.threads;
      // Binding to every usable CPU is no binding at all.
      group_cpus.push_back(g.cpus == usable ? std::vector<int>{} : g.cpus);
    }
    ngroups = static_cast<int>(policy_groups.size());
  } else {
    // Steps 6-7.
    nbthread = thr_max;
    ngroups = grp_min;
    if (nbthread > cap * ngroups) {
      std::string text = "limiting the number of threads to " + str(cap * ngroups) + " (" +
                         str(ngroups) + " thread group(s) of at most " + str(cap) + " threads)";
      (nb_set ? plan.warnings : plan.notices).push_back(text);
      nbthread = cap * ngroups;
    }
    // Step 8.
    if (grp_set && !nb_set && ncpu > nbthread && (hard == 0 || hard > nbthread))
      plan.notices.push_back("thread-groups " + str(ngroups) + " limits the thread count to " +
                             str(nbthread) + " while " + str(ncpu) + " CPUs are usable");
  }
  if (nbthread < 1) nbthread = 1;
  plan.nbthread = nbthread;

  // 1.4: threads to groups.
  std::vector<int> owner(nbthread + 1, 0);
  std::vector<int> base(ngroups + 1, 0), count(ngroups + 1, 0);
  if (!group_sizes.empty()) {
    int t = 1;
    for (int g = 1; g <= ngroups; ++g) {
      base[g] = t;
      count[g] = group_sizes[g - 1];
      for (int i = 0; i < count[g]; ++i) owner[t++] = g;
    }
  } else {
    std::map<int, std::vector<int>> requested;   // group -> threads as written (last line wins)
    for (const auto& l : s.thread_group_lines) {
      if (l.group < 1 || l.group > ngroups)
        return plan_error(l.where + "thread-group " + str(l.group) + " does not exist");
      requested[l.group] = l.threads;
    }
    // A thread named by two groups belongs to the last line that names it (HAProxy moves it).
    for (const auto& l : s.thread_group_lines) {
      if (requested[l.group] != l.threads) continue;
      for (int t : l.threads)
        if (t >= 1 && t <= nbthread) owner[t] = l.group;
    }
    for (const auto& [g, threads] : requested) {
      std::vector<int> mine;
      for (int t = 1; t <= nbthread; ++t)
        if (owner[t] == g) mine.push_back(t);
      if (mine.empty())
        return plan_error("thread-group " + str(g) + " only references non-existing threads "
                          "(nbthread is " + str(nbthread) + ")");
      if (mine.back() - mine.front() + 1 != static_cast<int>(mine.size()))
        return plan_error("thread-group " + str(g) + " assigned sparse threads, only contiguous supported");
      if (static_cast<int>(mine.size()) > kMaxThreadsPerGroupHard)
        return plan_error("thread-group " + str(g) + " has " + str(static_cast<int>(mine.size())) +
                          " threads, the maximum is " + str(kMaxThreadsPerGroupHard));
      if (mine.size() < threads.size())
        plan.warnings.push_back("Reducing thread-group " + str(g) + " to " +
                                str(static_cast<int>(mine.size())) + " threads");
      base[g] = mine.front();
      count[g] = static_cast<int>(mine.size());
    }
    int ut = 0;
    for (int t = 1; t <= nbthread; ++t) ut += owner[t] == 0;
    int ug = 0;
    for (int g = 1; g <= ngroups; ++g) ug += count[g] == 0;
    if (ug > ut)
      return plan_error("More unassigned thread-groups (" + str(ug) + ") than threads (" + str(ut) +
                        "). Please reduce thread-groups");
    int next = 1;
    for (int g = 1; g <= ngroups && ug > 0; ++g) {
      if (count[g] != 0) continue;
      int want = ut / ug + (ut % ug ? 1 : 0);
      if (want > cap)
        return plan_error("Too many remaining unassigned threads (" + str(ut) + ") for thread groups (" +
                          str(ug) + "). Please increase thread-groups or make sure to keep thread "
                          "numbers contiguous");
      while (next <= nbthread && owner[next] != 0) ++next;
      base[g] = next;
      // Contiguous only: a group stops at the next explicitly placed thread.
      while (next <= nbthread && owner[next] == 0 && count[g] < want) {
        owner[next++] = g;
        ++count[g];
      }
      ut -= count[g];
      --ug;
    }
    if (ut > 0)
      return plan_error("Remaining unassigned threads found (" + str(ut) + ") because all groups are "
                        "in use. Please increase 'thread-groups', reduce 'nbthreads' or remove or "
                        "extend 'thread-group' enumerations.");
    for (int g = 1; g <= ngroups; ++g)
      if (count[g] == 0)
        return plan_error("thread-group " + str(g) + " has no thread");
  }

  plan.thread_group.assign(nbthread, 0);
  plan.thread_local_id.assign(nbthread, 0);
  plan.thread_cpus.assign(nbthread, {});
  for (int g = 1; g <= ngroups; ++g) {
    GroupPlan gp;
    gp.id = g;
    gp.first_thread = base[g];
    gp.count = count[g];
    if (!group_cpus.empty()) gp.cpus = group_cpus[g - 1];
    for (int i = 0; i < count[g]; ++i) {
      int t = base[g] + i;
      plan.thread_group[t - 1] = g;
      plan.thread_local_id[t - 1] = i + 1;
      plan.thread_cpus[t - 1] = gp.cpus;
    }
    plan.groups.push_back(std::move(gp));
  }

  // 1.6: cpu-map, in order, later lines overriding earlier ones.
  for (const auto& m : s.cpu_maps) {
    auto thread_id = [&](int g, int ltid) -> int {
      if (g < 1 || g > ngroups || ltid < 1 || ltid > count[g]) return 0;
      return base[g] + ltid - 1;
    };
    if (m.automatic) {
      // Supported forms, stricter than HAProxy's: a range of groups without threads (group k
      // gets CPU k), or one group with threads (thread k gets CPU k); sizes must match.
      if (m.group_range && !m.threads.empty())
        return plan_error(m.where + "'cpu-map' : 'auto:' supports either a single thread group with "
                          "a thread range, or a range of thread groups without threads");
      std::size_t n = m.threads.empty() ? m.groups.size() : m.threads.size();
      if (n != m.cpus.size())
        return plan_error(m.where + "'cpu-map' : the thread set and the CPU set must have the same "
                          "size to be bound automatically");
      for (std::size_t k = 0; k < n; ++k) {
        std::vector<int> one{m.cpus[k]};
        if (m.threads.empty()) {
          int g = m.groups[k];
          if (g < 1 || g > ngroups) continue;
          for (int lt = 1; lt <= count[g]; ++lt) plan.thread_cpus[thread_id(g, lt) - 1] = one;
        } else if (int t = thread_id(m.groups.front(), m.threads[k]); t != 0) {
          plan.thread_cpus[t - 1] = one;
        }
      }
      continue;
    }
    for (int g : m.groups) {
      if (g < 1 || g > ngroups) continue;   // beyond what exists: ignored, as in HAProxy
      for (int lt = 1; lt <= count[g]; ++lt) {
        if (!m.threads.empty() && !std::count(m.threads.begin(), m.threads.end(), lt)) continue;
        plan.thread_cpus[thread_id(g, lt) - 1] = m.cpus;
      }
    }
  }
  int bound = 0;
  for (const auto& c : plan.thread_cpus) bound += !c.empty();
  const bool partly_bound = !s.cpu_maps.empty() && bound > 0 && bound < nbthread;
  if (!s.cpu_maps.empty()) {
    if (partly_bound)
      plan.warnings.push_back("Found " + str(bound) + " thread(s) mapped to a CPU and " +
                              str(nbthread - bound) + " thread(s) not mapped to any CPU. The "
                              "unmapped threads may run on the same CPUs as mapped ones; "
                              "consider completing or removing the cpu-map");
    for (auto& gp : plan.groups) {
      std::vector<int> all;
      bool complete = true;
      for (int i = 0; i < gp.count; ++i) {
        const auto& c = plan.thread_cpus[gp.first_thread + i - 1];
        if (c.empty()) complete = false;
        all.insert(all.end(), c.begin(), c.end());
      }
      std::sort(all.begin(), all.end());
      all.erase(std::unique(all.begin(), all.end()), all.end());
      gp.cpus = complete ? all : std::vector<int>{};
    }
  }
  // More threads than CPUs to run them (checked after mapping, as HAProxy's
  // thread_detect_more_than_cpus does): threads then take turns on a CPU, and a thread that holds
  // connections waits for its turn. Counted against the CPUs the threads are bound to, plus
  // the usable CPUs when some threads are not bound. A partly bound map has its own warning
  // above, which says more.
  if (!partly_bound) {
    std::vector<int> mapped;
    for (const auto& c : plan.thread_cpus) mapped.insert(mapped.end(), c.begin(), c.end());
    std::sort(mapped.begin(), mapped.end());
    mapped.erase(std::unique(mapped.begin(), mapped.end()), mapped.end());
    std::vector<int> all = mapped;
    if (bound != nbthread) {
      all.insert(all.end(), usable.begin(), usable.end());
      std::sort(all.begin(), all.end());
      all.erase(std::unique(all.begin(), all.end()), all.end());
    }
    const int tot_map = static_cast<int>(mapped.size());
    const int tot_all = static_cast<int>(all.size());
    if (tot_map > 0 && bound > tot_map)
      plan.warnings.push_back("This configuration binds " + str(bound) + " threads to a total of " +
                              str(tot_map) + " CPUs via cpu-map directives: some threads will "
                              "compete for the same CPU, which degrades performance severely. "
                              "Fix the 'cpu-map' directives or set 'nbthread' accordingly.");
    else if (tot_all > 0 && nbthread > tot_all)
      plan.warnings.push_back("This configuration enables " + str(nbthread) +
                              " threads running on a total of " + str(tot_all) +
                              " CPUs: some threads will compete for the same CPU, which "
                              "degrades performance severely. Use 'cpu-map' to choose the CPUs, "
                              "or lower 'nbthread'.");
  }
  return plan;
}

}  // namespace sluice::core

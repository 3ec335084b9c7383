// Thread/group planning and topology detection: counts, thread-to-group mapping, CPU binding and
// policies, as HAProxy 3.5 decides them at boot. Fake sysfs trees live in sysfs/ next to this file (see generate.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "core/thread_plan.h"

namespace sluice::core {
namespace {

std::string sysfs(const std::string& name) {
  std::string here = __FILE__;
  return here.substr(0, here.rfind('/')) + "/sysfs/" + name;
}

std::vector<int> range(int lo, int hi) {
  std::vector<int> v;
  for (int i = lo; i <= hi; ++i) v.push_back(i);
  return v;
}

// `n` CPUs without any cache information.
Topology flat(int n) {
  Topology t;
  for (int i = 0; i < n; ++i) {
    CpuInfo c;
    c.id = i;
    t.cpus.push_back(c);
  }
  return t;
}

std::vector<int> group_sizes(const ThreadPlan& p) {
  std::vector<int> v;
  for (const auto& g : p.groups) v.push_back(g.count);
  return v;
}

bool has(const std::vector<std::string>& msgs, const std::string& part) {
  return std::any_of(msgs.begin(), msgs.end(),
                     [&](const std::string& m) { return m.find(part) != std::string::npos; });
}

ThreadGroupLine tg(int g, std::vector<int> threads) {
  ThreadGroupLine l;
  l.group = g;
  l.threads = std::move(threads);
  l.where = "parsing [f.cfg:1] : ";
  return l;
}

// ---- topology ----

TEST(Topology, ParsesCpuLists) {
  EXPECT_EQ(parse_cpu_list_text("0-2,8,10-11"), (std::vector<int>{0, 1, 2, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list_text(""), std::vector<int>{});
  EXPECT_EQ(format_cpu_list({0, 1, 2, 8, 10, 11}), "0-2,8,10-11");
  EXPECT_EQ(format_cpu_list({}), "");
}

TEST(Topology, Epyc8Ccx) {
  Topology t = read_topology(sysfs("epyc-8ccx"), {});
  ASSERT_EQ(t.cpus.size(), 48u);
  EXPECT_TRUE(t.has_cache_info);
  // cpu 0 and its sibling 24 share core 0 and CCX 0; cpu 3 starts CCX 1.
  EXPECT_EQ(t.cpus[0].l3_id, 0);
  EXPECT_EQ(t.cpus[24].l3_id, 0);
  EXPECT_EQ(t.cpus[3].l3_id, 1);
  EXPECT_EQ(t.cpus[23].l3_id, 7);
  EXPECT_EQ(t.cpus[0].core_id, t.cpus[24].core_id);
  EXPECT_NE(t.cpus[0].core_id, t.cpus[1].core_id);
  EXPECT_EQ(t.cpus[0].smt_index, 0);
  EXPECT_EQ(t.cpus[24].smt_index, 1);
  EXPECT_EQ(t.cpus[5].package_id, 0);
  EXPECT_EQ(t.cpus[5].numa_node, 0);
  EXPECT_EQ(t.cpus[5].cluster_id, 0);    // from core_siblings_list: the whole package
  EXPECT_EQ(t.cpus[5].capacity, 4800);   // 3200 MHz x 1.5 for an SMT core
}

TEST(Topology, AllowedMaskRestricts) {
  Topology t = read_topology(sysfs("epyc-8ccx"), {0, 1, 24, 99});
  ASSERT_EQ(t.cpus.size(), 3u);
  EXPECT_EQ(t.cpus[2].id, 24);
}

TEST(Topology, HybridClustersAndCapacity) {
  Topology t = read_topology(sysfs("hybrid"), {});
  ASSERT_EQ(t.cpus.size(), 8u);
  EXPECT_EQ(t.cpus[0].capacity, 1024);
  EXPECT_EQ(t.cpus[7].capacity, 512);
  EXPECT_NE(t.cpus[0].cluster_id, t.cpus[7].cluster_id);
  EXPECT_EQ(t.cpus[0].l3_id, t.cpus[7].l3_id);
}

TEST(Topology, NoCacheInfo) {
  Topology t = read_topology(sysfs("nocache"), {});
  ASSERT_EQ(t.cpus.size(), 4u);
  EXPECT_FALSE(t.has_cache_info);
  EXPECT_EQ(t.cpus[0].l3_id, -1);
  auto p = plan_threads({}, t);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->nbthread, 4);
  EXPECT_EQ(group_sizes(*p), std::vector<int>{4});
  EXPECT_TRUE(p->thread_cpus[0].empty());   // binding to every CPU is no binding
}

TEST(Topology, MissingRootGivesNothingOrAffinity) {
  EXPECT_TRUE(read_topology("/nonexistent-sysfs", {}).cpus.empty());
  EXPECT_EQ(read_topology("/nonexistent-sysfs", {2, 3}).cpus.size(), 2u);
}

TEST(Topology, RealMachine) {
  auto allowed = process_affinity();
  ASSERT_FALSE(allowed.empty());
  Topology t = read_topology("/sys", allowed);
  EXPECT_FALSE(t.cpus.empty());
  auto p = plan_threads({}, t);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_GE(p->nbthread, 1);
}

TEST(Topology, BindCurrentThread) {
  auto allowed = process_affinity();
  ASSERT_FALSE(allowed.empty());
  bool ok = false;
  std::thread th([&] { ok = bind_current_thread({allowed.front()}) && process_affinity() ==
                                                                         std::vector<int>{allowed.front()}; });
  th.join();
  EXPECT_TRUE(ok);
  EXPECT_TRUE(bind_current_thread({}));
}

// ---- thread and group counts ----

TEST(ThreadPlan, Case1TenThreadsFourGroups) {
  ThreadSettings s;
  s.nbthread = 10;
  s.thread_groups = 4;
  auto p = plan_threads(s, flat(16));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->nbthread, 10);
  EXPECT_EQ(group_sizes(*p), (std::vector<int>{3, 3, 2, 2}));
  EXPECT_EQ(p->groups[0].first_thread, 1);
  EXPECT_EQ(p->groups[1].first_thread, 4);
  EXPECT_EQ(p->groups[2].first_thread, 7);
  EXPECT_EQ(p->groups[3].first_thread, 9);
  EXPECT_EQ(p->thread_group[9], 4);
  EXPECT_EQ(p->thread_local_id[9], 2);
  EXPECT_EQ(p->thread_local_id[3], 1);
  EXPECT_TRUE(p->thread_cpus[0].empty());
}

TEST(ThreadPlan, FillExamples) {
  auto sizes = [](int n, int g) {
    ThreadSettings s;
    s.nbthread = n;
    s.thread_groups = g;
    auto p = plan_threads(s, flat(4));
    return p.ok() ? group_sizes(*p) : std::vector<int>{};
  };
  EXPECT_EQ(sizes(6, 4), (std::vector<int>{2, 2, 1, 1}));
  EXPECT_EQ(sizes(7, 3), (std::vector<int>{3, 2, 2}));
  EXPECT_EQ(sizes(128, 2), (std::vector<int>{64, 64}));
}

TEST(ThreadPlan, Case2MoreGroupsThanThreads) {
  ThreadSettings s;
  s.nbthread = 2;
  s.thread_groups = 3;
  auto p = plan_threads(s, flat(8));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("More unassigned thread-groups (3) than threads (2)"), std::string::npos);
}

TEST(ThreadPlan, Case3SparseThreadGroup) {
  ThreadSettings s;
  s.nbthread = 4;
  s.thread_groups = 2;
  s.thread_group_lines = {tg(1, {1, 2, 3}), tg(1, {1, 3})};
  auto p = plan_threads(s, flat(4));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("assigned sparse threads, only contiguous supported"), std::string::npos)
      << p.error().message;
}

TEST(ThreadPlan, Case4FortyEightThreadsThreeGroups) {
  ThreadSettings s;
  s.nbthread = 48;
  auto p = plan_threads(s, flat(64));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(group_sizes(*p), (std::vector<int>{16, 16, 16}));
  s.max_threads_per_group = 8;
  s.nbthread = 64;
  p = plan_threads(s, flat(64));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->groups.size(), 8u);
}

TEST(ThreadPlan, Case5ThreadGroupsLiftsPerGroupCap) {
  ThreadSettings s;
  s.thread_groups = 2;
  auto p = plan_threads(s, flat(128));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->nbthread, 128);
  EXPECT_EQ(group_sizes(*p), (std::vector<int>{64, 64}));
  // One group caps at 64 with a notice.
  s.thread_groups = 1;
  p = plan_threads(s, flat(128));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->nbthread, 64);
  EXPECT_TRUE(has(p->notices, "thread-groups 1 limits the thread count to 64")) << p->notices.size();
}

TEST(ThreadPlan, Case6ReducingThreadGroup) {
  ThreadSettings s;
  s.nbthread = 4;
  s.thread_groups = 2;
  s.thread_group_lines = {tg(1, {1, 2}), tg(2, range(3, 8))};
  auto p = plan_threads(s, flat(8));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_TRUE(has(p->warnings, "Reducing thread-group 2 to 2 threads"));
  EXPECT_EQ(group_sizes(*p), (std::vector<int>{2, 2}));
  EXPECT_EQ(p->groups[1].first_thread, 3);
  s.thread_group_lines = {tg(1, {1, 2}), tg(2, range(5, 8))};
  p = plan_threads(s, flat(8));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("thread-group 2 only references non-existing threads"), std::string::npos);
}

TEST(ThreadPlan, ExplicitGroupsThenFill) {
  ThreadSettings s;
  s.nbthread = 8;
  s.thread_groups = 3;
  s.thread_group_lines = {tg(2, {1, 2})};
  auto p = plan_threads(s, flat(8));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(group_sizes(*p), (std::vector<int>{3, 2, 3}));
  EXPECT_EQ(p->groups[1].first_thread, 1);
  EXPECT_EQ(p->groups[0].first_thread, 3);
  EXPECT_EQ(p->groups[2].first_thread, 6);
}

TEST(ThreadPlan, LeftoverThreadsAreAnError) {
  ThreadSettings s;
  s.nbthread = 8;
  s.thread_groups = 2;
  s.thread_group_lines = {tg(1, {1, 2}), tg(2, {3, 4})};
  auto p = plan_threads(s, flat(8));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("Remaining unassigned threads found (4)"), std::string::npos);
}

TEST(ThreadPlan, ThreadGroupBeyondThreadGroups) {
  ThreadSettings s;
  s.nbthread = 8;
  s.thread_groups = 2;
  s.thread_group_lines = {tg(3, {1, 2})};
  EXPECT_FALSE(plan_threads(s, flat(8)).ok());
}

TEST(ThreadPlan, ThreadHardLimit) {
  ThreadSettings s;
  s.thread_hard_limit = 6;
  s.cpu_policy = CpuPolicy::kNone;
  auto p = plan_threads(s, flat(32));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->nbthread, 6);
  s.nbthread = 10;
  p = plan_threads(s, flat(32));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->nbthread, 6);
  EXPECT_TRUE(has(p->warnings, "thread-hard-limit"));
}

TEST(ThreadPlan, PolicyNoneCutsToMaxThreadsPerGroup) {
  ThreadSettings s;
  s.cpu_policy = CpuPolicy::kNone;
  s.cpu_policy_explicit = true;
  auto p = plan_threads(s, flat(40));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->nbthread, 16);
  EXPECT_EQ(p->groups.size(), 1u);
  EXPECT_TRUE(has(p->notices, "limiting the number of threads to 16"));
}

TEST(ThreadPlan, NoCacheInfoSplitsWithoutBinding) {
  auto p = plan_threads({}, flat(40));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->nbthread, 40);
  EXPECT_EQ(group_sizes(*p), (std::vector<int>{14, 13, 13}));
  EXPECT_TRUE(p->thread_cpus[39].empty());
}

TEST(ThreadPlan, NeverMoreThan1024ThreadsOr32Groups) {
  ThreadSettings s;
  s.nbthread = 1024;
  auto p = plan_threads(s, flat(4));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->nbthread, 1024);
  EXPECT_EQ(p->groups.size(), 32u);
  EXPECT_EQ(p->groups[0].count, 32);
}

// ---- cpu-map ----

CpuMapLine cpu_map(bool automatic, std::vector<int> groups, std::vector<int> threads, std::vector<int> cpus) {
  CpuMapLine m;
  m.automatic = automatic;
  m.group_range = groups.size() > 1;
  m.thread_range = threads.size() > 1;
  m.groups = std::move(groups);
  m.threads = std::move(threads);
  m.cpus = std::move(cpus);
  m.where = "parsing [f.cfg:2] : ";
  return m;
}

TEST(ThreadPlan, Case12CpuMapAuto) {
  ThreadSettings s;
  s.nbthread = 4;
  s.cpu_maps = {cpu_map(true, {1}, {1, 2, 3, 4}, {0, 1, 2, 3})};
  auto p = plan_threads(s, flat(8));
  ASSERT_TRUE(p.ok()) << p.error().message;
  for (int k = 1; k <= 4; ++k) EXPECT_EQ(p->thread_cpus[k - 1], std::vector<int>{k - 1});
  EXPECT_EQ(p->groups[0].cpus, (std::vector<int>{0, 1, 2, 3}));
  s.cpu_maps = {cpu_map(true, {1}, {1}, {0, 1, 2, 3})};
  p = plan_threads(s, flat(8));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("must have the same size"), std::string::npos);
}

TEST(ThreadPlan, CpuMapAutoGroupRange) {
  ThreadSettings s;
  s.nbthread = 4;
  s.thread_groups = 2;
  s.cpu_maps = {cpu_map(true, {1, 2}, {}, {4, 6})};
  auto p = plan_threads(s, flat(8));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->thread_cpus[1], std::vector<int>{4});
  EXPECT_EQ(p->thread_cpus[2], std::vector<int>{6});
}

TEST(ThreadPlan, CpuMapPlainLaterOverrides) {
  ThreadSettings s;
  s.nbthread = 4;
  s.cpu_maps = {cpu_map(false, {1}, {}, {0, 1}), cpu_map(false, {1}, {4}, {3}),
                cpu_map(false, {2, 3}, {}, {5})};   // groups that do not exist: ignored
  auto p = plan_threads(s, flat(8));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->thread_cpus[0], (std::vector<int>{0, 1}));
  EXPECT_EQ(p->thread_cpus[3], std::vector<int>{3});
  EXPECT_EQ(p->groups[0].cpus, (std::vector<int>{0, 1, 3}));
  // Four threads bound to three CPUs: two of them share one (HAProxy warns too).
  ASSERT_EQ(p->warnings.size(), 1u);
  EXPECT_TRUE(has(p->warnings, "binds 4 threads to a total of 3 CPUs via cpu-map directives"));
}

// Warnings after mapping, as in HAProxy: more threads than the CPUs they may run on.
TEST(ThreadPlan, MoreThreadsThanCpusWarns) {
  ThreadSettings s;
  s.nbthread = 10;
  s.thread_groups = 4;
  auto p = plan_threads(s, flat(2));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_TRUE(has(p->warnings, "enables 10 threads running on a total of 2 CPUs"));
  // As many threads as CPUs, or fewer: silent.
  s.nbthread = 2;
  s.thread_groups = 0;
  p = plan_threads(s, flat(2));
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->warnings.empty());
  // Every thread bound: counted against the mapped CPUs, even if more CPUs are usable.
  s.nbthread = 4;
  s.cpu_maps = {cpu_map(false, {1}, {}, {0, 1})};
  p = plan_threads(s, flat(8));
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(has(p->warnings, "binds 4 threads to a total of 2 CPUs via cpu-map directives"));
  s.cpu_maps = {cpu_map(true, {1}, {1, 2, 3, 4}, {0, 1, 2, 3})};
  p = plan_threads(s, flat(8));
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->warnings.empty());
  // Partly bound: only the discrepancy warning, which says more.
  s.nbthread = 8;
  s.cpu_maps = {cpu_map(false, {1}, {1}, {0})};
  p = plan_threads(s, flat(2));
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->warnings.size(), 1u);
  EXPECT_TRUE(has(p->warnings, "Found 1 thread(s) mapped to a CPU and 7 thread(s) not mapped"));
}

TEST(ThreadPlan, CpuMapPartialWarns) {
  ThreadSettings s;
  s.nbthread = 4;
  s.cpu_maps = {cpu_map(false, {1}, {1}, {0})};
  auto p = plan_threads(s, flat(8));
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(has(p->warnings, "Found 1 thread(s) mapped to a CPU and 3 thread(s) not mapped"));
  EXPECT_TRUE(p->groups[0].cpus.empty());
}

TEST(ThreadPlan, Case13CpuMapDisablesPolicy) {
  ThreadSettings s;
  s.cpu_maps = {cpu_map(false, {1}, {}, {0})};
  s.cpu_policy = CpuPolicy::kGroupByCcx;
  s.cpu_policy_explicit = true;
  auto p = plan_threads(s, read_topology(sysfs("epyc-8ccx"), {}));
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(has(p->notices, "cpu-policy is ignored when cpu-map is set"));
  EXPECT_EQ(p->groups.size(), 1u);
  // Not explicit: no notice.
  s.cpu_policy = CpuPolicy::kDefault;
  s.cpu_policy_explicit = false;
  p = plan_threads(s, read_topology(sysfs("epyc-8ccx"), {}));
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(has(p->notices, "cpu-policy"));
}

TEST(ThreadPlan, ExplicitPolicyIgnoredWithNbthread) {
  ThreadSettings s;
  s.nbthread = 4;
  s.cpu_policy = CpuPolicy::kPerformance;
  s.cpu_policy_explicit = true;
  auto p = plan_threads(s, read_topology(sysfs("epyc-8ccx"), {}));
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(has(p->notices, "cpu-policy is ignored when nbthread"));
  EXPECT_EQ(p->nbthread, 4);
  EXPECT_TRUE(p->thread_cpus[0].empty());
}

// ---- policies on fake sysfs trees ----

TEST(ThreadPlan, Case14GroupPerCcx) {
  Topology t = read_topology(sysfs("epyc-8ccx"), {});
  auto p = plan_threads({}, t);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->nbthread, 48);
  EXPECT_EQ(group_sizes(*p), std::vector<int>(8, 6));
  for (int g = 0; g < 8; ++g) {
    std::vector<int> ccx = {3 * g, 3 * g + 1, 3 * g + 2, 24 + 3 * g, 25 + 3 * g, 26 + 3 * g};
    EXPECT_EQ(p->groups[g].cpus, ccx) << "group " << g + 1;
    EXPECT_EQ(p->thread_cpus[6 * g], ccx);
  }
  ThreadSettings s;
  s.cpu_policy = CpuPolicy::kGroupByCcx;
  auto q = plan_threads(s, t);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(group_sizes(*q), std::vector<int>(8, 6));
}

TEST(ThreadPlan, Case14SplitCcxAboveMaxThreadsPerGroup) {
  ThreadSettings s;
  s.max_threads_per_group = 4;
  auto p = plan_threads(s, read_topology(sysfs("epyc-8ccx"), {}));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->nbthread, 48);
  EXPECT_EQ(group_sizes(*p), std::vector<int>(16, 3));
  // The two halves of CCX 0 are disjoint and together make the CCX; siblings stay together.
  std::vector<int> both = p->groups[0].cpus;
  both.insert(both.end(), p->groups[1].cpus.begin(), p->groups[1].cpus.end());
  std::sort(both.begin(), both.end());
  EXPECT_EQ(both, (std::vector<int>{0, 1, 2, 24, 25, 26}));
  EXPECT_EQ(p->groups[0].cpus, (std::vector<int>{0, 1, 24}));
}

TEST(ThreadPlan, PolicyRespectsThreadHardLimit) {
  ThreadSettings s;
  s.thread_hard_limit = 10;
  auto p = plan_threads(s, read_topology(sysfs("epyc-8ccx"), {}));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->nbthread, 10);
  EXPECT_EQ(group_sizes(*p), (std::vector<int>{6, 4}));
}

TEST(ThreadPlan, Case15PerformanceKeepsFastCluster) {
  Topology t = read_topology(sysfs("hybrid"), {});
  auto p = plan_threads({}, t);   // default policy = performance
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->nbthread, 4);
  ASSERT_EQ(p->groups.size(), 1u);
  EXPECT_EQ(p->groups[0].cpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(has(p->notices, "not using 4 CPU(s) of lower capacity (4-7)"));
  ThreadSettings s;
  s.cpu_policy = CpuPolicy::kGroupByCcx;
  p = plan_threads(s, t);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->nbthread, 8);
  EXPECT_TRUE(p->groups[0].cpus.empty());   // all usable CPUs: no binding
}

}  // namespace
}  // namespace sluice::core

// Listener shard planning: bind-line thread sets, shard counts and layouts, the SO_REUSEPORT
// fallback and probe. HAProxy's results, except that by-group is strictly one shard per group.
#include "net/shard_plan.h"

#include <sys/socket.h>

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

namespace sluice::net {
namespace {

using Kind = ShardsSetting::Kind;

// Plans are built by hand from group sizes (contiguous ranges, as groups are mapped), so these
// tests do not depend on core's planner.
core::ThreadPlan make_plan(const std::vector<int>& sizes) {
  core::ThreadPlan plan;
  plan.nbthread = std::accumulate(sizes.begin(), sizes.end(), 0);
  int next = 1;
  for (size_t g = 0; g < sizes.size(); ++g) {
    core::GroupPlan gp;
    gp.id = static_cast<int>(g) + 1;
    gp.first_thread = next;
    gp.count = sizes[g];
    plan.groups.push_back(gp);
    for (int l = 1; l <= sizes[g]; ++l) {
      plan.thread_group.push_back(gp.id);
      plan.thread_local_id.push_back(l);
      plan.thread_cpus.emplace_back();
    }
    next += sizes[g];
  }
  return plan;
}

std::vector<int> range(int lo, int hi) {
  std::vector<int> v;
  for (int i = lo; i <= hi; ++i) v.push_back(i);
  return v;
}

ThreadSetSpec absolute(std::vector<int> ids) {
  ThreadSetSpec s;
  s.ids = std::move(ids);
  return s;
}

ThreadSetSpec relative(int group, std::vector<int> ids) {
  ThreadSetSpec s;
  s.relative = true;
  s.group = group;
  s.ids = std::move(ids);
  return s;
}

ShardsSetting by(Kind kind, int number = 1) {
  ShardsSetting s;
  s.kind = kind;
  s.number = number;
  return s;
}

std::vector<int> all_threads(const core::ThreadPlan& plan) { return range(1, plan.nbthread); }

std::string resolve_error(const std::vector<ThreadSetSpec>& specs, const core::ThreadPlan& plan) {
  auto r = resolve_thread_set(specs, plan);
  return r.ok() ? "ok" : r.error().message;
}

ShardPlanResult plan(const ShardsSetting& setting, const std::vector<int>& threads,
                     const core::ThreadPlan& tp, bool reuseport = true) {
  return plan_shards(setting, threads, tp, reuseport, "frontend 'fe'", "tcpv4");
}

// Threads of each shard, in shard order.
std::vector<std::vector<int>> layout(const ShardPlanResult& r) {
  std::vector<std::vector<int>> out;
  for (const Shard& s : r.shards) out.push_back(s.threads);
  return out;
}

std::vector<std::vector<int>> groups(const ShardPlanResult& r) {
  std::vector<std::vector<int>> out;
  for (const Shard& s : r.shards) out.push_back(s.groups);
  return out;
}

using VV = std::vector<std::vector<int>>;

// ---- resolve_thread_set: the bind line's `thread` keyword ---------------------------------------

TEST(ResolveThreadSet, NoThreadKeywordMeansEveryThreadOfEveryGroup) {
  auto r = resolve_thread_set({}, make_plan({4, 4}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, range(1, 8));
}

// Test 7: `thread 3-6` with 2x4 threads => 1/3-4 + 2/1-2.
TEST(ResolveThreadSet, AbsoluteIdsSplitAcrossGroups) {
  auto tp = make_plan({4, 4});
  auto r = resolve_thread_set({absolute(range(3, 6))}, tp);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, range(3, 6));
  // The split per group HAProxy writes as 1/3-4,2/1-2.
  std::vector<std::pair<int, int>> split;
  for (int tid : *r) split.emplace_back(tp.thread_group[tid - 1], tp.thread_local_id[tid - 1]);
  EXPECT_EQ(split, (std::vector<std::pair<int, int>>{{1, 3}, {1, 4}, {2, 1}, {2, 2}}));
}

TEST(ResolveThreadSet, AbsoluteAllIsTrimmedToRealThreads) {
  auto r = resolve_thread_set({absolute(range(1, 1024))}, make_plan({3, 3, 2, 2}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, range(1, 10));
}

TEST(ResolveThreadSet, AbsoluteIdsBeyondNbthreadAreDroppedSilently) {
  auto r = resolve_thread_set({absolute({2, 7, 9, 40})}, make_plan({4, 4}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (std::vector<int>{2, 7}));
}

TEST(ResolveThreadSet, OnlyNonExistingAbsoluteIdsIsAnError) {
  EXPECT_EQ(resolve_error({absolute(range(9, 12))}, make_plan({4, 4})),
            "'thread' directive only references non-existing threads");
}

// Test 8: `thread 2/all` with one group.
TEST(ResolveThreadSet, RelativeToMissingGroupIsAnError) {
  EXPECT_EQ(resolve_error({relative(2, range(1, 64))}, make_plan({4})),
            "'thread' directive references non-existing thread group 2");
}

// Test 9: `thread 1/5-8` with a group of 4 threads.
TEST(ResolveThreadSet, RelativeWithoutIntersectionIsAnError) {
  EXPECT_EQ(resolve_error({relative(1, range(5, 8))}, make_plan({4})),
            "'thread' directive only references threads not belonging to group 1");
}

TEST(ResolveThreadSet, RelativeAllIsIntersectedWithTheGroup) {
  auto r = resolve_thread_set({relative(2, range(1, 64))}, make_plan({4, 4}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, range(5, 8));
}

// `thread 1/1-4,1/8-10,2/1` is valid (configuration.txt example): per-group sets accumulate
// before the group size applies, so 1/8-10 is not an error on its own.
TEST(ResolveThreadSet, RelativeElementsAccumulatePerGroup) {
  auto r = resolve_thread_set(
      {relative(1, range(1, 4)), relative(1, range(8, 10)), relative(2, {1})}, make_plan({4, 4}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (std::vector<int>{1, 2, 3, 4, 5}));
}

// Repeated `thread` keywords accumulate; the result is ascending and without duplicates.
TEST(ResolveThreadSet, SetsAccumulateAscendingWithoutDuplicates) {
  auto r = resolve_thread_set({relative(2, {2, 1}), absolute({6, 1, 2})}, make_plan({4, 4}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (std::vector<int>{1, 2, 5, 6}));
}

// Test 6: group 2 reduced to 2 threads (3-4); `thread 2/all` uses threads 3-4.
TEST(ResolveThreadSet, ReducedGroupAllUsesItsRemainingThreads) {
  auto r = resolve_thread_set({relative(2, range(1, 64))}, make_plan({2, 2}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (std::vector<int>{3, 4}));
}

// Test 10: `thread -` is parsed as all; resolution gives every thread.
TEST(ResolveThreadSet, DashIsAll) {
  auto r = resolve_thread_set({absolute(range(1, 1024))}, make_plan({2}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, range(1, 2));
}

// ---- plan_shards: HAProxy's worked distribution table, as sluice resolves it --------------------

// Also test 16.
TEST(PlanShards, FourThreadsTwoGroupsDefaultIsOneShardPerGroup) {
  auto tp = make_plan({2, 2});
  auto r = plan(by(Kind::kByGroup), all_threads(tp), tp);
  EXPECT_EQ(layout(r), (VV{{1, 2}, {3, 4}}));
  EXPECT_EQ(groups(r), (VV{{1}, {2}}));
  EXPECT_FALSE(r.fell_back);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_TRUE(r.diagnostics.empty());
}

TEST(PlanShards, ShardsOneSpansBothGroups) {
  auto tp = make_plan({2, 2});
  auto r = plan(by(Kind::kNumber, 1), all_threads(tp), tp);
  EXPECT_EQ(layout(r), (VV{{1, 2, 3, 4}}));
  EXPECT_EQ(groups(r), (VV{{1, 2}}));
  EXPECT_FALSE(r.fell_back);
}

// Also test 17.
TEST(PlanShards, ByProcessIsOneShardOverAllGroups) {
  auto tp = make_plan({2, 2});
  auto r = plan(by(Kind::kByProcess), all_threads(tp), tp);
  EXPECT_EQ(layout(r), (VV{{1, 2, 3, 4}}));
  EXPECT_EQ(groups(r), (VV{{1, 2}}));
  EXPECT_FALSE(r.fell_back);
  EXPECT_TRUE(r.warnings.empty());
}

// Also test 18.
TEST(PlanShards, ByThreadIsOneShardPerThread) {
  auto tp = make_plan({2, 2});
  auto r = plan(by(Kind::kByThread), all_threads(tp), tp);
  EXPECT_EQ(layout(r), (VV{{1}, {2}, {3}, {4}}));
  EXPECT_EQ(groups(r), (VV{{1}, {1}, {2}, {2}}));
}

// Also test 19: the middle shard spans both groups (g1 thread 4 + g2 threads 1-2).
TEST(PlanShards, ThreeShardsOnTwoGroupsOfFourFollowHaproxySplit) {
  auto tp = make_plan({4, 4});
  auto r = plan(by(Kind::kNumber, 3), all_threads(tp), tp);
  EXPECT_EQ(layout(r), (VV{{1, 2, 3}, {4, 5, 6}, {7, 8}}));
  EXPECT_EQ(groups(r), (VV{{1}, {1, 2}, {2}}));
}

TEST(PlanShards, TwoShardsOnThreeGroupsOfTwo) {
  auto tp = make_plan({2, 2, 2});
  auto r = plan(by(Kind::kNumber, 2), all_threads(tp), tp);
  EXPECT_EQ(layout(r), (VV{{1, 2, 3}, {4, 5, 6}}));
  EXPECT_EQ(groups(r), (VV{{1, 2}, {2, 3}}));
}

// Also test 20: trimmed to the thread count, no warning.
TEST(PlanShards, MoreShardsThanThreadsIsTrimmedSilently) {
  auto tp = make_plan({4});
  auto r = plan(by(Kind::kNumber, 5), all_threads(tp), tp);
  EXPECT_EQ(layout(r), (VV{{1}, {2}, {3}, {4}}));
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_TRUE(r.diagnostics.empty());
  EXPECT_FALSE(r.fell_back);
  EXPECT_EQ(wanted_shards(by(Kind::kNumber, 5), all_threads(tp), tp), 4);
}

TEST(PlanShards, ThreeShardsOnFourThreads) {
  auto tp = make_plan({4});
  auto r = plan(by(Kind::kNumber, 3), all_threads(tp), tp);
  EXPECT_EQ(layout(r), (VV{{1, 2}, {3}, {4}}));
}

TEST(PlanShards, EpycEightGroupsOfSixGiveOneShardPerCcx) {
  auto tp = make_plan({6, 6, 6, 6, 6, 6, 6, 6});
  auto r = plan(by(Kind::kByGroup), all_threads(tp), tp);
  ASSERT_EQ(r.shards.size(), 8u);
  for (int g = 0; g < 8; ++g) {
    EXPECT_EQ(r.shards[g].threads, range(g * 6 + 1, g * 6 + 6));
    EXPECT_EQ(r.shards[g].groups, (std::vector<int>{g + 1}));
  }
}

TEST(PlanShards, ByGroupWithoutReuseportFallsBackSilently) {
  auto tp = make_plan({4, 4});
  auto r = plan(by(Kind::kByGroup), all_threads(tp), tp, /*reuseport=*/false);
  EXPECT_EQ(layout(r), (VV{range(1, 8)}));
  EXPECT_EQ(groups(r), (VV{{1, 2}}));
  EXPECT_TRUE(r.fell_back);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_TRUE(r.diagnostics.empty());
}

TEST(PlanShards, NumericWithoutReuseportWarns) {
  auto tp = make_plan({4, 4});
  auto r = plan(by(Kind::kNumber, 4), all_threads(tp), tp, /*reuseport=*/false);
  EXPECT_EQ(layout(r), (VV{range(1, 8)}));
  EXPECT_EQ(groups(r), (VV{{1, 2}}));
  EXPECT_TRUE(r.fell_back);
  EXPECT_EQ(r.warnings, (std::vector<std::string>{
                            "Disabling sharding for listener in frontend 'fe' because "
                            "SO_REUSEPORT is disabled for tcpv4 protocol."}));
  EXPECT_TRUE(r.diagnostics.empty());
}

TEST(PlanShards, ByGroupOnOneGroupOfTheThreadSet) {
  auto tp = make_plan({4, 4});
  auto threads = resolve_thread_set({relative(2, range(1, 64))}, tp);
  ASSERT_TRUE(threads.ok());
  auto r = plan(by(Kind::kByGroup), *threads, tp);
  EXPECT_EQ(layout(r), (VV{{5, 6, 7, 8}}));
  EXPECT_EQ(groups(r), (VV{{2}}));
}

TEST(PlanShards, ByGroupOnThreadsThreeToSix) {
  auto tp = make_plan({4, 4});
  auto threads = resolve_thread_set({absolute(range(3, 6))}, tp);
  ASSERT_TRUE(threads.ok());
  auto r = plan(by(Kind::kByGroup), *threads, tp);
  EXPECT_EQ(layout(r), (VV{{3, 4}, {5, 6}}));
  EXPECT_EQ(groups(r), (VV{{1}, {2}}));
}

// HAProxy gives g1/1-2 | g1/3+g2/1 here; sluice keeps each shard inside its group.
TEST(PlanShards, ByGroupOnUnequalGroupsThreePlusOne) {
  auto tp = make_plan({3, 1});
  auto r = plan(by(Kind::kByGroup), all_threads(tp), tp);
  EXPECT_EQ(layout(r), (VV{{1, 2, 3}, {4}}));
  EXPECT_EQ(groups(r), (VV{{1}, {2}}));
}

// ---- plan_shards: the numbered cases ------------------------------------------------------------

// Test 21, one shard per group: 10 threads in 3,3,2,2 => 4 sockets of 3,3,2,2, none straddling.
TEST(PlanShards, ByGroupTenThreadsFourGroupsIsOneShardPerGroup) {
  auto tp = make_plan({3, 3, 2, 2});
  auto r = plan(by(Kind::kByGroup), all_threads(tp), tp);
  EXPECT_EQ(layout(r), (VV{{1, 2, 3}, {4, 5, 6}, {7, 8}, {9, 10}}));
  EXPECT_EQ(groups(r), (VV{{1}, {2}, {3}, {4}}));
}

// A numeric count keeps HAProxy's split even where by-group would not: n=10, S=4 => 3,2,3,2.
TEST(PlanShards, NumericFourOnTenThreadsIsHaproxySplit) {
  auto tp = make_plan({3, 3, 2, 2});
  auto r = plan(by(Kind::kNumber, 4), all_threads(tp), tp);
  EXPECT_EQ(layout(r), (VV{{1, 2, 3}, {4, 5}, {6, 7, 8}, {9, 10}}));
  EXPECT_EQ(groups(r), (VV{{1}, {2}, {2, 3}, {4}}));
}

// Test 22: single group, default => exactly one socket, and no live probe is needed.
TEST(PlanShards, SingleGroupByGroupIsOneShard) {
  for (int n : {1, 2, 7, 64}) {
    auto tp = make_plan({n});
    EXPECT_EQ(wanted_shards(by(Kind::kByGroup), all_threads(tp), tp), 1);
    auto r = plan(by(Kind::kByGroup), all_threads(tp), tp);
    EXPECT_EQ(layout(r), (VV{range(1, n)})) << n;
    EXPECT_EQ(groups(r), (VV{{1}}));
    EXPECT_FALSE(r.fell_back);
  }
}

// Test 23: `noreuseport` with 2 groups.
TEST(PlanShards, NoReuseportDefaultIsOneSocketWithoutWarning) {
  auto tp = make_plan({2, 2});
  auto r = plan(by(Kind::kByGroup), all_threads(tp), tp, false);
  EXPECT_EQ(layout(r), (VV{{1, 2, 3, 4}}));
  EXPECT_EQ(groups(r), (VV{{1, 2}}));   // one socket, one FD per group
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_TRUE(r.diagnostics.empty());
}

TEST(PlanShards, NoReuseportByThreadGivesADiagnosticOnly) {
  auto tp = make_plan({2, 2});
  auto r = plan(by(Kind::kByThread), all_threads(tp), tp, false);
  EXPECT_EQ(layout(r), (VV{{1, 2, 3, 4}}));
  EXPECT_TRUE(r.fell_back);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(r.diagnostics, (std::vector<std::string>{
                               "Disabling per-thread sharding for listener in frontend 'fe' "
                               "because SO_REUSEPORT is disabled for tcpv4 protocol."}));
}

TEST(PlanShards, NoReuseportShardsFourWarnsNamingTheProtocol) {
  auto tp = make_plan({2, 2});
  auto r = plan_shards(by(Kind::kNumber, 4), all_threads(tp), tp, false, "frontend 'web'",
                       "tcpv6");
  EXPECT_EQ(r.shards.size(), 1u);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0],
            "Disabling sharding for listener in frontend 'web' because SO_REUSEPORT is "
            "disabled for tcpv6 protocol.");
}

TEST(PlanShards, NoReuseportShardsOneNeedsNoProbeAndWarnsNothing) {
  auto tp = make_plan({2, 2});
  EXPECT_EQ(wanted_shards(by(Kind::kNumber, 1), all_threads(tp), tp), 1);
  EXPECT_EQ(wanted_shards(by(Kind::kByProcess), all_threads(tp), tp), 1);
  auto r = plan(by(Kind::kNumber, 1), all_threads(tp), tp, false);
  EXPECT_EQ(r.shards.size(), 1u);
  EXPECT_FALSE(r.fell_back);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_TRUE(r.diagnostics.empty());
}

// Wanting more than one shard is what triggers the probe (never for one shard).
TEST(PlanShards, WantedShardsBeforeFallback) {
  auto tp = make_plan({3, 3, 2, 2});
  auto all = all_threads(tp);
  EXPECT_EQ(wanted_shards(by(Kind::kByGroup), all, tp), 4);
  EXPECT_EQ(wanted_shards(by(Kind::kByThread), all, tp), 10);
  EXPECT_EQ(wanted_shards(by(Kind::kNumber, 3), all, tp), 3);
  EXPECT_EQ(wanted_shards(by(Kind::kByGroup), {4, 5, 6}, tp), 1);
  EXPECT_EQ(wanted_shards(by(Kind::kByThread), {7}, tp), 1);
}

// A by-thread set of one thread wanted one shard: nothing was disabled, nothing is said.
TEST(PlanShards, NoReuseportByThreadOnOneThreadSaysNothing) {
  auto tp = make_plan({2, 2});
  auto r = plan(by(Kind::kByThread), {3}, tp, false);
  EXPECT_EQ(layout(r), (VV{{3}}));
  EXPECT_FALSE(r.fell_back);
  EXPECT_TRUE(r.diagnostics.empty());
}

// Test 25: UNIX sockets never multi-bind: shards 4 warns, by-group is silent.
TEST(PlanShards, UnixSocketShardsFourWarnsByGroupSilent) {
  auto tp = make_plan({1, 1});
  auto r = plan_shards(by(Kind::kNumber, 4), all_threads(tp), tp, false, "frontend 'fe'",
                       "unix_stream");
  EXPECT_EQ(r.shards.size(), 1u);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("for unix_stream protocol."), std::string::npos);
  auto g = plan_shards(by(Kind::kByGroup), all_threads(tp), tp, false, "frontend 'fe'",
                       "unix_stream");
  EXPECT_EQ(g.shards.size(), 1u);
  EXPECT_TRUE(g.warnings.empty());
  EXPECT_TRUE(g.diagnostics.empty());
}

// Tests 26/27: each address of a bind line is planned on its own; the planner keeps no state
// between calls, so two ports on 2 groups give 2 + 2 sockets.
TEST(PlanShards, EachAddressIsPlannedIndependently) {
  auto tp = make_plan({2, 2});
  size_t total = 0;
  for (int port = 0; port < 2; ++port) {
    auto r = plan(by(Kind::kByGroup), all_threads(tp), tp);
    EXPECT_EQ(layout(r), (VV{{1, 2}, {3, 4}}));
    total += r.shards.size();
  }
  EXPECT_EQ(total, 4u);
}

TEST(PlanShards, EmptyThreadSetHasNoShards) {
  auto tp = make_plan({2});
  EXPECT_TRUE(plan(by(Kind::kByGroup), {}, tp).shards.empty());
}

// ---- probe_reuseport ----------------------------------------------------------------------------

class ReuseportProbe : public ::testing::Test {
 protected:
  void SetUp() override { reset_reuseport_probe(); }
  void TearDown() override { reset_reuseport_probe(); }
};

TEST_F(ReuseportProbe, LinuxLoopbackIpv4SupportsReuseport) {
  EXPECT_TRUE(probe_reuseport(AF_INET));
  EXPECT_TRUE(probe_reuseport(AF_INET));   // cached
}

TEST_F(ReuseportProbe, UnixAndUnknownFamiliesAreUnsupported) {
  EXPECT_FALSE(probe_reuseport(AF_UNIX));
  EXPECT_FALSE(probe_reuseport(AF_PACKET));
}

// Test 24: a failing family affects that family only.
TEST_F(ReuseportProbe, ForceOverridesPerFamily) {
  force_reuseport_probe(AF_INET, false);
  EXPECT_FALSE(probe_reuseport(AF_INET));
  force_reuseport_probe(AF_INET6, true);
  EXPECT_TRUE(probe_reuseport(AF_INET6));
  EXPECT_FALSE(probe_reuseport(AF_INET));
  reset_reuseport_probe();
  EXPECT_TRUE(probe_reuseport(AF_INET));   // live again after reset
}

// IPv6 may be disabled on a test machine; the answer must then be false, not an error.
TEST_F(ReuseportProbe, Ipv6AnswersWithoutFailing) {
  const bool v6 = probe_reuseport(AF_INET6);
  EXPECT_EQ(v6, probe_reuseport(AF_INET6));
}

}  // namespace
}  // namespace sluice::net

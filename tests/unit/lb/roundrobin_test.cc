#include "lb/roundrobin.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <thread>

#include "lb/backend.h"

namespace sluice::lb {
namespace {

std::vector<ServerSettings> servers(std::vector<int> weights) {
  std::vector<ServerSettings> out;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    ServerSettings s;
    s.name = "s" + std::to_string(i + 1);
    s.id = static_cast<int>(i + 1);
    s.weight = weights[i];
    out.push_back(s);
  }
  return out;
}

TEST(SmoothWeightedOrder, InterleavesByWeight) {
  auto order = smooth_weighted_order({1, 3});
  EXPECT_EQ(order, (std::vector<uint32_t>{1, 0, 1, 1}));
  auto five = smooth_weighted_order({5, 1, 1});
  ASSERT_EQ(five.size(), 7u);
  EXPECT_EQ(five, (std::vector<uint32_t>{0, 0, 1, 0, 2, 0, 0}));
}

TEST(SmoothWeightedOrder, ReducesByGcdAndSkipsZero) {
  EXPECT_EQ(smooth_weighted_order({2, 4}).size(), 3u);
  auto order = smooth_weighted_order({0, 2});
  EXPECT_EQ(order, (std::vector<uint32_t>{1}));
  EXPECT_TRUE(smooth_weighted_order({0, 0}).empty());
}

TEST(Backend, DistributionFollowsWeightsExactly) {
  Backend be("b", servers({1, 3, 0}));
  std::map<std::string, int> count;
  std::vector<Server*> out;
  for (int i = 0; i < 400; ++i) {
    be.candidates(out, 1);
    ASSERT_EQ(out.size(), 1u);
    ++count[out[0]->name()];
  }
  EXPECT_EQ(count["s1"], 100);
  EXPECT_EQ(count["s2"], 300);
  EXPECT_EQ(count["s3"], 0) << "weight 0 takes no load-balanced traffic";
}

TEST(Backend, CandidatesAreDistinctAndOrdered) {
  Backend be("b", servers({1, 1, 1}));
  std::vector<Server*> out;
  be.candidates(out, 10);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_NE(out[0], out[1]);
  EXPECT_NE(out[1], out[2]);
  EXPECT_NE(out[0], out[2]);
}

TEST(Backend, DisabledServersAndBackupFailover) {
  auto s = servers({1, 1, 1});
  s[0].disabled = true;
  s[2].backup = true;
  Backend be("b", s);
  std::vector<Server*> out;
  for (int i = 0; i < 10; ++i) {
    be.candidates(out, 1);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0]->name(), "s2") << "only the usable active server, never the backup";
  }
  auto t = servers({1, 1, 1});
  t[0].disabled = true;
  t[1].disabled = true;
  t[2].backup = true;
  Backend only_backup("b2", t);
  only_backup.candidates(out, 1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]->name(), "s3");
  EXPECT_EQ(only_backup.usable_active(), 0);
  EXPECT_EQ(only_backup.usable_backup(), 1);
}

TEST(Server, MaxconnSlots) {
  ServerSettings st;
  st.maxconn = 2;
  Server s(st, 0);
  EXPECT_TRUE(s.try_acquire());
  EXPECT_TRUE(s.try_acquire());
  EXPECT_FALSE(s.try_acquire());
  EXPECT_EQ(s.current_conns(), 2);
  s.release();
  EXPECT_TRUE(s.try_acquire());
}

TEST(Backend, ExactAcrossThreads) {
  Backend be("b", servers({1, 3}));
  std::atomic<int> c1{0}, c2{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      std::vector<Server*> out;
      for (int i = 0; i < 1000; ++i) {
        be.candidates(out, 1);
        (out[0]->name() == "s1" ? c1 : c2).fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c1.load(), 1000);
  EXPECT_EQ(c2.load(), 3000);
}

}  // namespace
}  // namespace sluice::lb

namespace sluice::lb {
namespace {

TEST(ServerState, DrainMaintAndChecksTakeServersOutOfRotation) {
  Backend be("b", servers({1, 1}));
  Server& s1 = *be.servers()[0];
  std::vector<Server*> out;
  be.set_admin_state(s1, AdminState::kDrain, 1000);
  EXPECT_FALSE(s1.usable());
  EXPECT_EQ(s1.last_change_ms(), 1000u);
  for (int i = 0; i < 4; ++i) {
    be.candidates(out, 1);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0]->name(), "s2");
  }
  be.set_admin_state(s1, AdminState::kReady, 2000);
  EXPECT_TRUE(s1.usable());
  be.set_check_up(s1, false, 3000);
  EXPECT_FALSE(s1.usable()) << "a DOWN check takes it out even when READY";
  be.set_admin_state(s1, AdminState::kMaint, 4000);
  be.set_check_up(s1, true, 5000);
  EXPECT_FALSE(s1.usable()) << "MAINT wins over an UP check";
  be.set_admin_state(s1, AdminState::kReady, 6000);
  EXPECT_TRUE(s1.usable());
  EXPECT_EQ(be.usable_active(), 2);
}

}  // namespace
}  // namespace sluice::lb

#include "proxy/server_pick.h"

#include <gtest/gtest.h>

#include <vector>

namespace sluice::proxy {
namespace {

lb::Backend make_backend(lb::BalanceKind kind, int servers, uint32_t slowstart_ms = 0) {
  std::vector<lb::ServerSettings> v;
  for (int i = 0; i < servers; ++i) {
    lb::ServerSettings s;
    s.name = "s" + std::to_string(i);
    s.id = i + 1;
    s.weight = 10;
    s.slowstart_ms = slowstart_ms;
    v.push_back(s);
  }
  lb::BalanceSettings b;
  b.kind = kind;
  return lb::Backend("be", std::move(v), b);
}

ProxySettings with_redispatch(int redispatch) {
  ProxySettings p;
  p.retries = 3;
  p.redispatch = redispatch;
  return p;
}

TEST(RedispatchNow, NonHashWithSeveralServersGoesAtOnce) {
  for (auto kind : {lb::BalanceKind::kRoundRobin, lb::BalanceKind::kStaticRr,
                    lb::BalanceKind::kLeastConn, lb::BalanceKind::kFirst,
                    lb::BalanceKind::kRandom}) {
    lb::Backend be = make_backend(kind, 3);
    // -1: the interval alone would wait for the last retry (4th attempt).
    EXPECT_TRUE(redispatch_now(with_redispatch(-1), be, *be.servers()[0], 1));
  }
}

TEST(RedispatchNow, HashWaitsForTheInterval) {
  for (auto kind : {lb::BalanceKind::kSource, lb::BalanceKind::kUri, lb::BalanceKind::kHdr}) {
    lb::Backend be = make_backend(kind, 3);
    EXPECT_FALSE(redispatch_now(with_redispatch(-1), be, *be.servers()[0], 1));
    EXPECT_TRUE(redispatch_now(with_redispatch(-1), be, *be.servers()[0], 3));
  }
}

TEST(RedispatchNow, OneUsableServerWaitsForTheInterval) {
  lb::Backend be = make_backend(lb::BalanceKind::kRoundRobin, 2);
  be.set_admin_state(*be.servers()[1], lb::AdminState::kDrain, 1);
  EXPECT_FALSE(redispatch_now(with_redispatch(-1), be, *be.servers()[0], 1));
  EXPECT_TRUE(redispatch_now(with_redispatch(1), be, *be.servers()[0], 1));
}

TEST(RedispatchNow, ServerNotRunningGoesAtOnceEvenWithAHash) {
  lb::Backend be = make_backend(lb::BalanceKind::kSource, 2);
  lb::Server& s0 = *be.servers()[0];
  be.set_check_up(s0, false, 1);
  EXPECT_TRUE(redispatch_now(with_redispatch(-1), be, s0, 1));
  be.set_check_up(s0, true, 2);
  be.set_admin_state(s0, lb::AdminState::kMaint, 3);
  EXPECT_TRUE(redispatch_now(with_redispatch(-1), be, s0, 1));
}

TEST(RedispatchNow, WarmingServerIsNotRunning) {
  lb::Backend be = make_backend(lb::BalanceKind::kSource, 2, 10000);
  lb::Server& s0 = *be.servers()[0];
  be.set_admin_state(s0, lb::AdminState::kMaint, 1000);
  be.set_admin_state(s0, lb::AdminState::kReady, 2000);
  ASSERT_LT(s0.eweight(), s0.weight());
  EXPECT_TRUE(redispatch_now(with_redispatch(-1), be, s0, 1));
}

TEST(RedispatchNow, NeverWithoutOptionRedispatch) {
  lb::Backend be = make_backend(lb::BalanceKind::kRoundRobin, 3);
  lb::Server& s0 = *be.servers()[0];
  be.set_check_up(s0, false, 1);
  EXPECT_FALSE(redispatch_now(with_redispatch(0), be, s0, 1));
}

}  // namespace
}  // namespace sluice::proxy

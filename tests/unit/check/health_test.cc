// The rise/fall counter and the interval choice (src/check/health.h): pure, driven directly.
#include <gtest/gtest.h>

#include "check/health.h"

namespace sluice::check {
namespace {

using Change = Health::Change;

TEST(Health, StartsUpOneFailureFromDown) {
  Health h(2, 3, InitState::kUp);
  EXPECT_TRUE(h.up());
  EXPECT_EQ(h.health(), 2);   // "UP 1/3"
  EXPECT_EQ(h.report(false), Change::kDown);
  EXPECT_EQ(h.health(), 0);
  EXPECT_FALSE(h.up());
  EXPECT_TRUE(h.last_failure_counted());
}

TEST(Health, FirstSuccessMakesFullyHealthy) {
  Health h(2, 3, InitState::kUp);
  EXPECT_EQ(h.report(true), Change::kNone);
  EXPECT_EQ(h.health(), 4);
  EXPECT_TRUE(h.up());
}

TEST(Health, FallFailuresTakeItDown) {
  Health h(2, 3, InitState::kUp);
  h.report(true);
  EXPECT_EQ(h.report(false), Change::kNone);
  EXPECT_EQ(h.health(), 3);   // UP 2/3
  EXPECT_EQ(h.report(false), Change::kNone);
  EXPECT_EQ(h.health(), 2);   // UP 1/3
  EXPECT_EQ(h.report(false), Change::kDown);
  EXPECT_EQ(h.health(), 0);
}

TEST(Health, SuccessInBetweenRestoresTop) {
  Health h(2, 3, InitState::kUp);
  h.report(true);
  h.report(false);
  h.report(false);
  EXPECT_EQ(h.report(true), Change::kNone);
  EXPECT_EQ(h.health(), 4);
}

TEST(Health, RiseSuccessesBringItBack) {
  Health h(3, 2, InitState::kUp);
  h.report(false);
  ASSERT_FALSE(h.up());
  EXPECT_EQ(h.report(true), Change::kNone);
  EXPECT_EQ(h.health(), 1);   // DOWN 1/3
  EXPECT_EQ(h.report(true), Change::kNone);
  EXPECT_EQ(h.health(), 2);
  EXPECT_EQ(h.report(true), Change::kUp);
  EXPECT_EQ(h.health(), 4);   // rise + fall - 1
}

TEST(Health, FailureWhileRisingGoesBackToZero) {
  Health h(3, 2, InitState::kUp);
  h.report(false);
  h.report(true);
  h.report(true);
  EXPECT_EQ(h.report(false), Change::kNone);   // already DOWN: no new transition
  EXPECT_EQ(h.health(), 0);
  EXPECT_TRUE(h.last_failure_counted());
}

TEST(Health, FailuresWhileFullyDownAreNotCounted) {
  Health h(2, 3, InitState::kUp);
  h.report(false);
  EXPECT_EQ(h.report(false), Change::kNone);
  EXPECT_FALSE(h.last_failure_counted());
}

TEST(Health, RiseAndFallOfOne) {
  Health h(1, 1, InitState::kUp);
  EXPECT_EQ(h.health(), 1);
  EXPECT_EQ(h.report(false), Change::kDown);
  EXPECT_EQ(h.report(true), Change::kUp);
  EXPECT_EQ(h.report(true), Change::kNone);
}

TEST(Interval, InterWhenHealthyFastWhenChangingDownWhenDown) {
  Intervals iv{2000, 500, 10000};
  Health h(2, 3, InitState::kUp);
  EXPECT_EQ(next_interval(h, iv), 500u);     // UP 1/3: not yet fully healthy
  h.report(true);
  EXPECT_EQ(next_interval(h, iv), 2000u);    // fully healthy
  h.report(false);
  EXPECT_EQ(next_interval(h, iv), 500u);     // going down
  h.report(false);
  h.report(false);
  ASSERT_FALSE(h.up());
  EXPECT_EQ(next_interval(h, iv), 10000u);   // DOWN
  h.report(true);
  EXPECT_EQ(next_interval(h, iv), 500u);     // coming back
}

TEST(Interval, UnsetOnesFallBackToInter) {
  Intervals iv{1500, 0, 0};
  Health h(2, 3, InitState::kUp);
  EXPECT_EQ(next_interval(h, iv), 1500u);
  h.report(false);
  EXPECT_EQ(next_interval(h, iv), 1500u);
}

// A simulated timeline: with inter 1000 and fall 3, a server that dies at t=0 while fully
// healthy is DOWN after 3 checks; with fastinter it gets there sooner.
TEST(Interval, DownWithinFallTimesInter) {
  for (uint32_t fast : {0u, 200u}) {
    Intervals iv{1000, fast, 0};
    Health h(2, 3, InitState::kUp);
    h.report(true);
    uint64_t t = 0;
    int checks = 0;
    while (h.up()) {
      t += next_interval(h, iv);
      h.report(false);
      ++checks;
    }
    EXPECT_EQ(checks, 3);
    EXPECT_LE(t, 3u * 1000u);
    if (fast) {
      EXPECT_EQ(t, 1000u + 2 * 200u);
    }
  }
}

// init-state, as HAProxy 3.5 starts each (measured with option log-health-checks).
TEST(Health, InitStates) {
  Health none(2, 2);   // the default: UP at 0
  EXPECT_TRUE(none.up());
  EXPECT_EQ(none.health(), 0);
  EXPECT_EQ(none.report(true), Health::Change::kNone);   // "1/2 DOWN" while UP
  EXPECT_EQ(none.health(), 1);
  EXPECT_EQ(none.report(true), Health::Change::kNone);   // "2/2 UP"
  EXPECT_EQ(none.health(), 3);
  Health none2(2, 2);
  EXPECT_EQ(none2.report(false), Health::Change::kDown);   // one failure: DOWN
  Health full(2, 2, InitState::kFullyUp);
  EXPECT_EQ(full.report(false), Health::Change::kNone);    // "1/2 UP"
  EXPECT_EQ(full.report(false), Health::Change::kDown);
  Health down(2, 2, InitState::kDown);
  EXPECT_FALSE(down.up());
  EXPECT_EQ(down.report(true), Health::Change::kUp);       // one success: UP
  Health fdown(2, 2, InitState::kFullyDown);
  EXPECT_EQ(fdown.report(true), Health::Change::kNone);    // "1/2 DOWN"
  EXPECT_EQ(fdown.report(true), Health::Change::kUp);
}

}  // namespace
}  // namespace sluice::check

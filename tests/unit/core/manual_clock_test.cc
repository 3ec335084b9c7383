#include "support/cpp/manual_clock.h"

#include <gtest/gtest.h>

#include "core/event_loop.h"

namespace sluice::test {
namespace {

TEST(ManualClock, MovesOnlyWhenAdvanced) {
  ManualClock clock;
  EXPECT_EQ(clock.now_ms(), ManualClock::kStartMs);
  clock.advance(250);
  EXPECT_EQ(clock.now_ms(), ManualClock::kStartMs + 250);
  base::ClockSource src = clock.source();
  EXPECT_EQ(src.now_ms(), ManualClock::kStartMs + 250);
  ManualClock other(5);
  EXPECT_EQ(other.source().now_ms(), 5u);
}

TEST(ManualClock, ALoopBuiltWithItReadsIt) {
  ManualClock clock(42);
  core::EventLoop loop(clock.source());
  EXPECT_EQ(loop.now_ms(), 42u);
  clock.advance(1000);
  EXPECT_EQ(loop.now_ms(), 42u) << "the loop reads its clock once per turn";
  loop.update_now();
  EXPECT_EQ(loop.now_ms(), 1042u);
}

}  // namespace
}  // namespace sluice::test

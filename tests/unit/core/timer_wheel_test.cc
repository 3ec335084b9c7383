#include "core/timer_wheel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "core/event_loop.h"

namespace sluice::core {
namespace {

struct Recorder : TimerHandler {
  std::vector<uint64_t> fired;
  uint64_t* now = nullptr;
  void on_timer(Timer& t) override { fired.push_back(t.expiry()); }
};

TEST(TimerWheel, FiresOnlyWhenDue) {
  TimerWheel w(1000);
  Recorder r;
  Timer t(&r);
  w.arm(t, 1100);
  EXPECT_EQ(w.advance(1050), 0);
  EXPECT_TRUE(t.armed());
  EXPECT_EQ(w.advance(1100), 1);
  EXPECT_FALSE(t.armed());
  ASSERT_EQ(r.fired.size(), 1u);
}

TEST(TimerWheel, WakingEarlyInTheSameTickDoesNotLoseTheTimer) {
  // Regression: a timer due later within the tick being processed was skipped for a lap.
  uint64_t now = 1176951;
  TimerWheel w(now);
  Recorder r;
  Timer t(&r);
  w.arm(t, now + 300);
  EXPECT_EQ(w.advance(now + 297), 0);
  int64_t next = w.next_timeout_ms(now + 297);
  EXPECT_GE(next, 0);
  EXPECT_LE(next, 3 + static_cast<int64_t>(TimerWheel::kTickMs));
  EXPECT_EQ(w.advance(now + 300 + TimerWheel::kTickMs), 1);
}

TEST(TimerWheel, CancelAndRearmAreIndependentOfOthers) {
  TimerWheel w(0);
  Recorder r;
  Timer a(&r), b(&r), c(&r);
  w.arm(a, 40);
  w.arm(b, 40);
  w.arm(c, 80);
  EXPECT_EQ(w.size(), 3u);
  w.cancel(b);
  w.arm(c, 20);   // re-arm earlier
  EXPECT_EQ(w.size(), 2u);
  EXPECT_EQ(w.advance(30), 1);
  EXPECT_EQ(r.fired, (std::vector<uint64_t>{20}));
  EXPECT_EQ(w.advance(100), 1);
  EXPECT_EQ(w.size(), 0u);
}

TEST(TimerWheel, TimersBeyondTheSpanWaitTheirTurn) {
  TimerWheel w(0);
  Recorder r;
  Timer t(&r);
  uint64_t far = TimerWheel::kTickMs * TimerWheel::kSlots * 3 + 7;
  w.arm(t, far);
  for (uint64_t now = 0; now < far; now += 1000) EXPECT_EQ(w.advance(now), 0);
  EXPECT_EQ(w.advance(far + TimerWheel::kTickMs), 1);
}

TEST(TimerWheel, NextTimeoutIsALowerBound) {
  TimerWheel w(0);
  Recorder r;
  Timer t(&r);
  EXPECT_EQ(w.next_timeout_ms(0), -1);
  w.arm(t, 500);
  int64_t n = w.next_timeout_ms(0);
  EXPECT_GE(n, 500 - static_cast<int64_t>(TimerWheel::kTickMs));
  EXPECT_LE(n, 500);
  // Waking at that bound and advancing eventually fires it.
  uint64_t now = 0;
  for (int i = 0; i < 5 && r.fired.empty(); ++i) {
    now += static_cast<uint64_t>(w.next_timeout_ms(now));
    if (now < 500) now = std::max(now, uint64_t{1});
    w.advance(now + TimerWheel::kTickMs);
  }
  EXPECT_EQ(r.fired.size(), 1u);
}

struct Rearmer : TimerHandler {
  TimerWheel* w = nullptr;
  int count = 0;
  void on_timer(Timer& t) override {
    if (++count < 3) w->arm(t, t.expiry() + 10);
  }
};

TEST(TimerWheel, HandlerMayRearmItself) {
  TimerWheel w(0);
  Rearmer r;
  r.w = &w;
  Timer t(&r);
  w.arm(t, 10);
  w.advance(10 + TimerWheel::kTickMs);
  w.advance(20 + TimerWheel::kTickMs);
  w.advance(30 + TimerWheel::kTickMs);
  EXPECT_EQ(r.count, 3);
  EXPECT_FALSE(t.armed());
}

TEST(TimerWheel, DestroyedTimerUnlinksItself) {
  TimerWheel w(0);
  Recorder r;
  {
    Timer t(&r);
    w.arm(t, 10);
  }
  EXPECT_EQ(w.size(), 0u);
  EXPECT_EQ(w.advance(100), 0);
}

TEST(TimerWheel, LongSleepFiresEverythingOnce) {
  TimerWheel w(0);
  Recorder r;
  std::vector<std::unique_ptr<Timer>> timers;
  for (int i = 0; i < 100; ++i) {
    timers.push_back(std::make_unique<Timer>(&r));
    w.arm(*timers.back(), static_cast<uint64_t>(i * 97));
  }
  EXPECT_EQ(w.advance(1000000), 100);
  EXPECT_EQ(w.size(), 0u);
}

// A wheel of its own (no owner) checks nothing: any one thread at a time may drive it.
TEST(TimerWheel, WithoutAnOwnerAnyThreadMayUseIt) {
  TimerWheel w(0);
  Recorder r;
  Timer t(&r);
  std::thread([&] { w.arm(t, 10); }).join();
  EXPECT_EQ(w.advance(10 + TimerWheel::kTickMs), 1);
}

// The loop's wheel checks the loop's owner: a timer armed from another thread while the loop
// runs would race the loop's advance().
TEST(TimerWheelDeathTest, TheLoopsWheelAbortsOffTheLoopThread) {
#ifdef NDEBUG
  GTEST_SKIP() << "the owner-thread assertion is compiled out of release builds";
#else
  auto arm_from_here = [] {
    EventLoop loop;
    std::atomic<TimerWheel*> wheel{nullptr};
    loop.post([&] { wheel = &loop.timers(); });
    std::thread t([&] { loop.run(); });
    while (!wheel.load()) std::this_thread::yield();
    Timer timer;
    wheel.load()->arm(timer, 0);   // aborts here
    loop.post([&] { loop.stop(); });
    t.join();
  };
  EXPECT_DEATH(arm_from_here(), "core::TimerWheel used off its thread in .*arm");
#endif
}

}  // namespace
}  // namespace sluice::core

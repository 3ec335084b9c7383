#include "support/cpp/loop_runner.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "base/clock.h"
#include "support/cpp/manual_clock.h"
#include "support/cpp/socket_pair.h"

namespace sluice::test {
namespace {

struct Reader : core::IoHandler {
  int fd = -1;
  int bytes = 0;
  void on_io(uint32_t) override {
    char buf[64];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) bytes += static_cast<int>(n);
  }
};

struct Fired : core::TimerHandler {
  int count = 0;
  void on_timer(core::Timer&) override { ++count; }
};

TEST(RunUntil, AConditionAlreadyTrueRunsNoTurn) {
  core::EventLoop loop;
  RunResult r = run_until(loop, [] { return true; });
  EXPECT_TRUE(r.done());
  EXPECT_EQ(r.iterations, 0);
  EXPECT_EQ(loop.loops.load(), 0u);
}

TEST(RunUntil, RunsUntilTheBytesArrive) {
  core::EventLoop loop;
  SocketPair p = unix_stream_pair();
  ASSERT_TRUE(p.ok());
  Reader reader;
  reader.fd = p.b;
  ASSERT_TRUE(loop.add(p.b, EPOLLIN | EPOLLET, &reader));
  ASSERT_EQ(write(p.a, "hello", 5), 5);
  RunResult r = run_until(loop, [&] { return reader.bytes == 5; });
  EXPECT_TRUE(r.done()) << r.describe();
  EXPECT_LE(r.iterations, 2);
  loop.remove(p.b);
}

// A timer 30 s away on a manual clock: the runner neither fires it early nor sleeps for it.
TEST(RunUntil, AManualClockDrivesTimeoutsWithoutSleeping) {
  ManualClock clock;
  core::EventLoop loop(clock.source());
  Fired fired;
  core::Timer t(&fired);
  loop.timers().arm(t, clock.now_ms() + 30'000);
  uint64_t start = base::monotonic_ms();
  RunResult r =
      run_until(loop, [&] { return fired.count > 0; }, {.max_iterations = 3, .max_wait_ms = 0});
  EXPECT_EQ(r.end, RunResult::End::kIterations) << r.describe();
  EXPECT_EQ(r.iterations, 3);
  EXPECT_EQ(fired.count, 0);
  clock.advance(30'000 + core::TimerWheel::kTickMs);
  r = run_until(loop, [&] { return fired.count > 0; });
  EXPECT_TRUE(r.done()) << r.describe();
  EXPECT_EQ(r.iterations, 1) << "the clock is read before the turn: the timer is due at once";
  EXPECT_LT(base::monotonic_ms() - start, 2000u);
}

TEST(RunUntil, StopsAtTheDeadline) {
  core::EventLoop loop;
  uint64_t start = base::monotonic_ms();
  RunResult r = run_until(loop, [] { return false; },
                          {.max_iterations = 1'000'000, .deadline_ms = 50, .max_wait_ms = 10});
  uint64_t took = base::monotonic_ms() - start;
  EXPECT_EQ(r.end, RunResult::End::kDeadline) << r.describe();
  EXPECT_GE(took, 50u);
  EXPECT_LT(took, 2000u);
  EXPECT_GE(r.iterations, 1);
}

TEST(RunUntil, ReportsAStop) {
  core::EventLoop loop;
  loop.post([&] { loop.stop(); });
  RunResult r = run_until(loop, [] { return false; });
  EXPECT_EQ(r.end, RunResult::End::kStopped) << r.describe();
  EXPECT_EQ(r.iterations, 1);
  EXPECT_STREQ(r.describe(), "stopped");
}

TEST(RunTurns, RunsThatManyTurnsWithoutWaiting) {
  core::EventLoop loop;
  uint64_t start = base::monotonic_ms();
  EXPECT_EQ(run_turns(loop, 5), 5);
  EXPECT_EQ(loop.loops.load(), 5u);
  EXPECT_LT(base::monotonic_ms() - start, 1000u);
  loop.post([&] { loop.stop(); });
  EXPECT_EQ(run_turns(loop, 5), 1);
}

}  // namespace
}  // namespace sluice::test

#include "core/event_loop.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

namespace sluice::core {
namespace {

// Posted work runs on the loop's thread, in order; once run() has returned, post() refuses
// (callers waiting for an answer, such as `show sess`, must know nobody will run it).
TEST(EventLoop, PostRunsUntilTheLoopEndsThenRefuses) {
  EventLoop loop;
  std::vector<int> ran;
  std::thread::id loop_thread;
  std::thread t([&] {
    loop_thread = std::this_thread::get_id();
    loop.run();
  });
  EXPECT_TRUE(loop.post([&] { ran.push_back(1); }));
  EXPECT_TRUE(loop.post([&] {
    ran.push_back(2);
    EXPECT_EQ(std::this_thread::get_id(), loop_thread);
    loop.stop();
  }));
  t.join();
  EXPECT_EQ(ran, (std::vector<int>{1, 2}));
  bool called = false;
  EXPECT_FALSE(loop.post([&] { called = true; }));
  EXPECT_FALSE(called);
}

uint64_t read_fake(const void* ctx) { return *static_cast<const uint64_t*>(ctx); }

struct CountingTimer : TimerHandler {
  int fired = 0;
  void on_timer(Timer&) override { ++fired; }
};

// The loop and its timers follow the clock it was given: a test moves time without sleeping.
TEST(EventLoop, TimersFollowAnInjectedClock) {
  uint64_t fake = 50'000;
  EventLoop loop(base::ClockSource{&read_fake, &fake});
  EXPECT_EQ(loop.now_ms(), 50'000u);
  CountingTimer h;
  Timer t(&h);
  loop.timers().arm(t, loop.now_ms() + 30'000);
  // The timer is 30 s away on the fake clock; the cap keeps each turn from sleeping for it.
  EXPECT_TRUE(loop.run_once(0));
  EXPECT_EQ(h.fired, 0);
  fake += 29'999;
  EXPECT_TRUE(loop.run_once(0));
  EXPECT_EQ(loop.now_ms(), 79'999u);
  EXPECT_EQ(h.fired, 0);
  fake += 1 + TimerWheel::kTickMs;
  loop.update_now();   // the turn then sees the timer due and does not wait
  EXPECT_TRUE(loop.run_once(10'000));
  EXPECT_EQ(h.fired, 1);
}

// One turn at a time: work posted earlier runs in the turn; stop() makes the turn say so.
TEST(EventLoop, RunOnceRunsOneTurnAndReportsAStop) {
  EventLoop loop;
  EXPECT_FALSE(loop.is_running());
  int ran = 0;
  loop.post([&] { ++ran; });
  EXPECT_TRUE(loop.run_once(1000));   // the wake-up is an event: no need to wait the second
  EXPECT_EQ(ran, 1);
  EXPECT_TRUE(loop.is_running());
  EXPECT_EQ(loop.loops.load(), 1u);
  loop.post([&] { loop.stop(); });
  EXPECT_FALSE(loop.run_once(1000));
  EXPECT_FALSE(loop.is_running());
  EXPECT_TRUE(loop.post([] {})) << "only run() refuses posts once it returns";
}

// Runs `loop` on a thread of its own for the duration of `fn` (called once the loop is inside
// run()), then stops it.
template <typename Fn>
void while_running_elsewhere(EventLoop& loop, Fn fn) {
  std::atomic<bool> inside{false};
  loop.post([&] { inside = true; });
  std::thread t([&] { loop.run(); });
  while (!inside.load()) std::this_thread::yield();
  fn();
  loop.post([&] { loop.stop(); });
  t.join();
}

// Outside run() no thread owns the loop: built here, registered from another thread before
// it runs, torn down here after it ran, as a worker does.
TEST(EventLoop, OutsideRunAnyOneThreadMayUseIt) {
  EventLoop loop;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  struct Nop : IoHandler {
    void on_io(uint32_t) override {}
  } nop;
  std::thread([&] {
    EXPECT_TRUE(loop.add(fds[0], EPOLLIN, &nop));
    loop.assert_in_loop_thread();
  }).join();
  std::thread t([&] { loop.run(); });
  loop.post([&] { loop.stop(); });
  t.join();
  loop.remove(fds[0]);
  loop.update_now();
  close(fds[0]);
  close(fds[1]);
}

#ifdef NDEBUG
TEST(EventLoop, ReleaseBuildsDoNotCheckTheThread) {
  EventLoop loop;
  while_running_elsewhere(loop, [&] { loop.assert_in_loop_thread(); });
}
#endif

TEST(EventLoopDeathTest, WorkerLocalCallFromAnotherThreadAborts) {
#ifdef NDEBUG
  GTEST_SKIP() << "the owner-thread assertion is compiled out of release builds";
#else
  auto remove_from_here = [] {
    EventLoop loop;
    while_running_elsewhere(loop, [&] { loop.remove(-1); });
  };
  EXPECT_DEATH(remove_from_here(), "core::EventLoop used off its thread in .*remove");
  auto now_from_here = [] {
    EventLoop loop;
    while_running_elsewhere(loop, [&] { (void)loop.now_ms(); });
  };
  EXPECT_DEATH(now_from_here(), "core::EventLoop used off its thread in .*now_ms");
#endif
}

}  // namespace
}  // namespace sluice::core

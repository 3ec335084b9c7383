#include "core/event_loop.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace sluice::core

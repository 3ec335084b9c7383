#include "base/thread_owner.h"

#include <gtest/gtest.h>

#include <thread>

namespace sluice::base {
namespace {

bool allowed_on_another_thread(const ThreadOwner& o) {
  bool allowed = false;
  std::thread([&] { allowed = o.allows_current(); }).join();
  return allowed;
}

TEST(ThreadOwner, UnboundLetsEveryThreadThrough) {
  ThreadOwner o;
  EXPECT_EQ(o.owner(), std::thread::id());
  EXPECT_TRUE(o.allows_current());
  EXPECT_TRUE(allowed_on_another_thread(o));
}

TEST(ThreadOwner, BoundAllowsOnlyItsThreadUntilRestored) {
  ThreadOwner o;
  std::thread::id prev = o.bind_current();
  EXPECT_EQ(prev, std::thread::id());
  EXPECT_EQ(o.owner(), std::this_thread::get_id());
  EXPECT_TRUE(o.allows_current());
  EXPECT_FALSE(allowed_on_another_thread(o));
  o.restore(prev);
  EXPECT_TRUE(allowed_on_another_thread(o));
}

TEST(ThreadOwner, BindIfUnboundKeepsTheFirstOwner) {
  ThreadOwner o;
  std::thread([&] { o.bind_if_unbound(); }).join();
  std::thread::id first = o.owner();
  EXPECT_NE(first, std::thread::id());
  o.bind_if_unbound();   // already owned: no change
  EXPECT_EQ(o.owner(), first);
  EXPECT_FALSE(o.allows_current());
}

// check() itself is not compiled out; the objects that call it are (in release builds).
TEST(ThreadOwnerDeathTest, CheckAbortsOffTheOwnerThreadNamingTheCaller) {
  ThreadOwner o;
  std::thread([&] { o.bind_current(); }).join();   // owned by a thread that is gone
  EXPECT_DEATH(o.check("test::Thing", std::source_location::current()),
               "test::Thing used off its thread in .*CheckAbortsOffTheOwnerThread.*"
               "thread_owner_test.cc:[0-9]+");
}

}  // namespace
}  // namespace sluice::base

#include "base/assert.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice::base {
namespace {

int reach_the_bug_site() {
  SLUICE_BUG("unreachable branch taken");
  return 7;   // the fallback a release build takes
}

// Counting and once-per-site logging, whichever way this build defines SLUICE_BUG.
TEST(Bug, ReportCountsEveryTimeAndLogsOncePerSite) {
  std::atomic<bool> site_a{false};
  std::atomic<bool> site_b{false};
  uint64_t before = bug_count();
  ::testing::internal::CaptureStderr();
  detail::report_bug("a.cc", 10, "first", &site_a);
  detail::report_bug("a.cc", 10, "first", &site_a);
  detail::report_bug("b.cc", 20, "second", &site_b);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(bug_count(), before + 3);
  EXPECT_NE(err.find("BUG at a.cc:10: first"), std::string::npos) << err;
  EXPECT_NE(err.find("BUG at b.cc:20: second"), std::string::npos) << err;
  EXPECT_EQ(err.find("a.cc:10"), err.rfind("a.cc:10")) << "logged twice: " << err;
}

#ifdef NDEBUG
TEST(Bug, ReleaseBuildLogsOnceCountsAndContinues) {
  uint64_t before = bug_count();
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(reach_the_bug_site(), 7);
  EXPECT_EQ(reach_the_bug_site(), 7);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(bug_count(), before + 2);
  auto first = err.find("unreachable branch taken");
  ASSERT_NE(first, std::string::npos) << err;
  EXPECT_EQ(err.find("unreachable branch taken", first + 1), std::string::npos) << err;
  EXPECT_NE(err.find("assert_test.cc:"), std::string::npos) << "names file:line: " << err;
}
#else
TEST(BugDeathTest, DebugBuildAborts) {
  EXPECT_DEATH(reach_the_bug_site(), "BUG at .*assert_test.cc:[0-9]+: unreachable branch taken");
}
#endif

TEST(CheckDeathTest, AbortsInEveryBuild) {
  int x = 1;
  EXPECT_DEATH(SLUICE_CHECK(x == 2), "check failed at .*assert_test.cc:[0-9]+: x == 2");
}

}  // namespace
}  // namespace sluice::base

#include "proxy/log.h"

#include <gtest/gtest.h>

namespace sluice::proxy {
namespace {

// 2026-11-30 05:50:00.123456 UTC
constexpr uint64_t kWall = 1796017800123456ull;

TEST(LogFormat, Rfc3164HasPriorityTagAndPid) {
  LogTarget t;
  t.format = LogFormat::kRfc3164;
  t.facility = 16;   // local0
  std::string line = format_log_line(t, kInfo, "sluice", 42, "host", kWall, "hello");
  EXPECT_EQ(line.rfind("<134>", 0), 0u) << line;
  EXPECT_NE(line.find(" sluice[42]: hello\n"), std::string::npos) << line;
}

TEST(LogFormat, Rfc5424) {
  LogTarget t;
  t.format = LogFormat::kRfc5424;
  t.facility = 16;
  std::string line = format_log_line(t, kNotice, "sluice", 42, "host", kWall, "m");
  EXPECT_EQ(line, "<133>1 2026-11-30T05:50:00.123456+00:00 host sluice 42 - - m\n");
}

TEST(LogFormat, RawShortAndLength) {
  LogTarget t;
  t.format = LogFormat::kRaw;
  EXPECT_EQ(format_log_line(t, kInfo, "x", 1, "h", kWall, "abc"), "abc\n");
  t.format = LogFormat::kShort;
  t.facility = 1;
  EXPECT_EQ(format_log_line(t, kErr, "x", 1, "h", kWall, "abc"), "<11>abc\n");
  // Every message ends with LF on every transport, and `len` counts it, as in HAProxy.
  t.max_len = 5;
  EXPECT_EQ(format_log_line(t, kErr, "x", 1, "h", kWall, "abc"), "<11>\n");
}

TEST(LogFormat, LevelFilterAndFloor) {
  LogTarget t;
  t.format = LogFormat::kShort;
  t.facility = 0;
  t.max_level = kNotice;
  EXPECT_EQ(format_log_line(t, kInfo, "x", 1, "h", kWall, "m"), "");
  t.min_level = kErr;
  EXPECT_EQ(format_log_line(t, kEmerg, "x", 1, "h", kWall, "m"), "<3>m\n");
}

}  // namespace
}  // namespace sluice::proxy

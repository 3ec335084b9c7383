#include "proxy/log.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

namespace sluice::proxy {
namespace {

// 2026-11-30 05:50:00.123456 UTC
constexpr uint64_t kWall = 1796017800123456ull;

// The syslog dates are local time: these tests read them in UTC.
class LogFormatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tz = getenv("TZ");
    saved_ = tz ? tz : "";
    had_ = tz != nullptr;
    setenv("TZ", "UTC", 1);
    tzset();
  }
  void TearDown() override {
    if (had_) setenv("TZ", saved_.c_str(), 1);
    else unsetenv("TZ");
    tzset();
  }
  std::string saved_;
  bool had_ = false;
};

TEST_F(LogFormatTest, Rfc3164HasPriorityTagAndPid) {
  LogTarget t;
  t.format = LogFormat::kRfc3164;
  t.facility = 16;   // local0
  std::string line = format_log_line(t, kInfo, "sluice", 42, "host", kWall, "hello");
  EXPECT_EQ(line, "<134>Nov 30 05:50:00 host sluice[42]: hello\n");
  // Without a host name, HAProxy writes "localhost" (it has no log-send-hostname).
  EXPECT_EQ(format_log_line(t, kInfo, "sluice", 42, "", kWall, "hello"),
            "<134>Nov 30 05:50:00 localhost sluice[42]: hello\n");
  // No `format` word: rfc3164's header, without a host unless one is given (HAProxy 3.5).
  t.format = LogFormat::kDefault;
  EXPECT_EQ(format_log_line(t, kInfo, "sluice", 42, "", kWall, "hello"),
            "<134>Nov 30 05:50:00 sluice[42]: hello\n");
  EXPECT_EQ(format_log_line(t, kInfo, "sluice", 42, "h", kWall, "hello"),
            "<134>Nov 30 05:50:00 h sluice[42]: hello\n");
  // `local`: the same without the host; the day of month is space-padded.
  t.format = LogFormat::kLocal;
  EXPECT_EQ(format_log_line(t, kInfo, "sluice", 42, "host", kWall - 29ull * 86400000000ull, "m"),
            "<134>Nov  1 05:50:00 sluice[42]: m\n");
}

TEST_F(LogFormatTest, Rfc5424) {
  LogTarget t;
  t.format = LogFormat::kRfc5424;
  t.facility = 16;
  std::string line = format_log_line(t, kNotice, "sluice", 42, "host", kWall, "m");
  EXPECT_EQ(line, "<133>1 2026-11-30T05:50:00.123456+00:00 host sluice 42 - - m\n");
  // log-format-sd's structured data in place of the second "-"; no host: "-".
  EXPECT_EQ(format_log_line(t, kNotice, "sluice", 42, "", kWall, "m", "[a@1 x=\"1\"]"),
            "<133>1 2026-11-30T05:50:00.123456+00:00 - sluice 42 - [a@1 x=\"1\"] m\n");
}

TEST_F(LogFormatTest, PriorityTimedIso) {
  LogTarget t;
  t.facility = 16;
  t.format = LogFormat::kPriority;
  EXPECT_EQ(format_log_line(t, kInfo, "x", 1, "h", kWall, "m", "[sd]"), "<134>m\n");
  t.format = LogFormat::kTimed;
  EXPECT_EQ(format_log_line(t, kInfo, "x", 1, "h", kWall, "m"),
            "<6>2026-11-30T05:50:00.123456+00:00 m\n");
  t.format = LogFormat::kIso;
  EXPECT_EQ(format_log_line(t, kInfo, "x", 1, "h", kWall, "m"),
            "2026-11-30T05:50:00.123456+00:00 m\n");
}

TEST_F(LogFormatTest, RawShortAndLength) {
  LogTarget t;
  t.format = LogFormat::kRaw;
  EXPECT_EQ(format_log_line(t, kInfo, "x", 1, "h", kWall, "abc"), "abc\n");
  // `short` writes the level alone, without the facility (HAProxy 3.5: "<6>" for local0 info).
  t.format = LogFormat::kShort;
  t.facility = 1;
  EXPECT_EQ(format_log_line(t, kErr, "x", 1, "h", kWall, "abc"), "<3>abc\n");
  // Every message ends with LF on every transport, and `len` counts it, as in HAProxy: the
  // header, the structured data and the message are cut together.
  t.max_len = 5;
  EXPECT_EQ(format_log_line(t, kErr, "x", 1, "h", kWall, "abc"), "<3>a\n");
  t.format = LogFormat::kRfc5424;
  t.max_len = 80;
  std::string line = format_log_line(t, kErr, "x", 1, "", kWall, std::string(100, 'm'), "[a@1]");
  EXPECT_EQ(line, "<11>1 2026-11-30T05:50:00.123456+00:00 - x 1 - [a@1] " + std::string(26, 'm') + "\n");
}

TEST_F(LogFormatTest, LevelFilterAndFloor) {
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

#include "config/units.h"

#include <gtest/gtest.h>

namespace sluice::config {
namespace {

using S = TimeValue::Status;

TEST(Time, UnitsAndRounding) {
  EXPECT_EQ(parse_time("10", TimeUnit::kMs).value, 10u);
  EXPECT_EQ(parse_time("10ms", TimeUnit::kMs).value, 10u);
  EXPECT_EQ(parse_time("500us", TimeUnit::kMs).value, 1u);
  EXPECT_EQ(parse_time("1001us", TimeUnit::kMs).value, 2u);
  EXPECT_EQ(parse_time("10s", TimeUnit::kMs).value, 10000u);
  EXPECT_EQ(parse_time("2m", TimeUnit::kMs).value, 120000u);
  EXPECT_EQ(parse_time("1h", TimeUnit::kMs).value, 3600000u);
  EXPECT_EQ(parse_time("1d", TimeUnit::kMs).value, 86400000u);
  EXPECT_EQ(parse_time("24d", TimeUnit::kMs).status, S::kOk);
  EXPECT_EQ(parse_time("0", TimeUnit::kMs).value, 0u);
  EXPECT_EQ(parse_time("1500ms", TimeUnit::kS).value, 2u);
}

TEST(Time, Errors) {
  EXPECT_EQ(parse_time("25d", TimeUnit::kMs).status, S::kOverflow);
  EXPECT_EQ(parse_time("597h", TimeUnit::kMs).status, S::kOverflow);
  EXPECT_EQ(parse_time("99999999999", TimeUnit::kMs).status, S::kOverflow);
  EXPECT_EQ(parse_time("", TimeUnit::kMs).status, S::kEmpty);
  for (const char* bad : {"10S", "1.5s", "-1", "s", "10x", "10u"}) {
    auto t = parse_time(bad, TimeUnit::kMs);
    EXPECT_EQ(t.status, S::kBadChar) << bad;
  }
  EXPECT_EQ(parse_time("10S", TimeUnit::kMs).bad, 'S');
  EXPECT_EQ(parse_time("-1", TimeUnit::kMs).bad, '-');
  EXPECT_EQ(parse_time("1.5s", TimeUnit::kMs).bad, '.');
}

TEST(Time, TrailingCharactersOnlyWarn) {
  auto t = parse_time("10sec", TimeUnit::kMs);
  EXPECT_EQ(t.status, S::kOk);
  EXPECT_EQ(t.value, 10000u);
  EXPECT_EQ(t.trailing, 'e');
  EXPECT_EQ(time_trailing_warning('e', "10sec"),
            "unexpected character 'e' after the timer value '10sec', only "
            "(us=microseconds,ms=milliseconds,s=seconds,m=minutes,h=hours,d=days) are supported. "
            "This will be reported as an error in next versions.");
}

TEST(Size, Suffixes) {
  EXPECT_EQ(parse_size("16384", UINT32_MAX).value, 16384u);
  EXPECT_EQ(parse_size("16k", UINT32_MAX).value, 16384u);
  EXPECT_EQ(parse_size("16K", UINT32_MAX).value, 16384u);
  EXPECT_EQ(parse_size("1m", UINT32_MAX).value, 1048576u);
  EXPECT_EQ(parse_size("1G", UINT32_MAX).value, 1073741824u);
}

TEST(Size, ErrorsQuoteTheRest) {
  EXPECT_EQ(parse_size("16kb", UINT32_MAX).rest, "b");
  EXPECT_EQ(parse_size("1.5k", UINT32_MAX).rest, ".5k");
  EXPECT_EQ(parse_size("-1", UINT32_MAX).rest, "-1");
  EXPECT_EQ(parse_size("4g", UINT32_MAX).rest, "g");
  EXPECT_EQ(parse_size("", UINT32_MAX).rest, "");
  EXPECT_FALSE(parse_size("", UINT32_MAX).ok);
}

TEST(Int, Strict) {
  EXPECT_EQ(parse_strict_int("12", 0, 100), 12);
  EXPECT_EQ(parse_strict_int("-1", -1, 100), -1);
  EXPECT_FALSE(parse_strict_int("12abc", 0, 100));
  EXPECT_FALSE(parse_strict_int("10k", 0, 100000));
  EXPECT_FALSE(parse_strict_int("", 0, 100));
  EXPECT_FALSE(parse_strict_int("-", 0, 100));
  EXPECT_FALSE(parse_strict_int("101", 0, 100));
  EXPECT_FALSE(parse_strict_int("99999999999999999999999", 0, 100));
}

}  // namespace
}  // namespace sluice::config

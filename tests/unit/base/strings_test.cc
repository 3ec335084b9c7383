#include "base/strings.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice::base {
namespace {

// RFC 4648 section 10 vectors, and what must be refused (the stats page's Basic credentials).
TEST(Base64, Decodes) {
  std::string out;
  for (auto [enc, dec] : {std::pair{"", ""}, {"Zg==", "f"}, {"Zm8=", "fo"}, {"Zm9v", "foo"},
                          {"Zm9vYg==", "foob"}, {"Zm9vYmE=", "fooba"}, {"Zm9vYmFy", "foobar"},
                          {"YWRtaW46c2VjcmV0", "admin:secret"}, {"+/+/", "\xfb\xff\xbf"}}) {
    EXPECT_TRUE(base64_decode(enc, &out)) << enc;
    EXPECT_EQ(out, dec) << enc;
  }
  for (auto bad : {"Zg", "Zg=", "Z===", "Zg==Zg==", "Zm9v!", "Zm=v", "Zm9v\n"})
    EXPECT_FALSE(base64_decode(bad, &out)) << bad;
}

TEST(HumanDuration, HaproxyStyle) {
  EXPECT_EQ(human_duration(0), "0s");
  EXPECT_EQ(human_duration(59), "59s");
  EXPECT_EQ(human_duration(185), "3m5s");
  EXPECT_EQ(human_duration(7800), "2h10m");
  EXPECT_EQ(human_duration(3 * 86400 + 4 * 3600 + 5), "3d4h");
}

TEST(LogDate, MillisecondsAndLayout) {
  std::string d = log_date(1'700'000'000'123'456);
  ASSERT_EQ(d.size(), 24u) << d;
  EXPECT_EQ(d.substr(d.size() - 4), ".123");
  EXPECT_EQ(d[2], '/');
  EXPECT_EQ(d[6], '/');
  EXPECT_EQ(d[11], ':');
}

TEST(Strings, HexDecodeAndTrim) {
  std::string out = "old";
  EXPECT_TRUE(hex_decode("2b4F4b", &out));
  EXPECT_EQ(out, "+OK");
  EXPECT_TRUE(hex_decode("", &out));
  EXPECT_EQ(out, "");
  EXPECT_FALSE(hex_decode("2b4", &out));
  EXPECT_FALSE(hex_decode("zz", &out));
  EXPECT_EQ(trim("  a b\t"), "a b");
  EXPECT_EQ(trim(" \t "), "");
  EXPECT_EQ(trim("x\r\n", "\r\n"), "x");
}

}  // namespace
}  // namespace sluice::base

// fix_tag_value; expected values from HAProxy 3.5-dev5 on the same messages.
#include <gtest/gtest.h>

#include <string>

#include "sample/expr.h"
#include "sample_support.h"

namespace sluice::sample {
namespace {

using testing::on_body;
using testing::parse_error;

constexpr std::string_view kLogon =
    "8=FIX.4.2\x01" "9=30\x01" "35=A\x01" "49=SENDER\x01" "56=TARGET\x01" "34=1\x01" "10=146\x01";

TEST(ConvFix, TagValue) {
  EXPECT_EQ(on_body(kLogon, ",fix_tag_value(35)"), "A");
  EXPECT_EQ(on_body(kLogon, ",fix_tag_value(MsgType)"), "A");
  EXPECT_EQ(on_body(kLogon, ",fix_tag_value(msgtype)"), "A");
  EXPECT_EQ(on_body(kLogon, ",fix_tag_value(BeginString)"), "FIX.4.2");
  EXPECT_EQ(on_body(kLogon, ",fix_tag_value(SenderCompID)"), "SENDER");
  EXPECT_EQ(on_body(kLogon, ",fix_tag_value(TargetCompID)"), "TARGET");
  EXPECT_EQ(on_body(kLogon, ",fix_tag_value(CheckSum)"), "146");
  EXPECT_EQ(on_body(kLogon, ",fix_tag_value(BodyLength)"), "30");
  EXPECT_EQ(on_body(kLogon, ",fix_tag_value(0034)"), "1");
  EXPECT_EQ(on_body(kLogon, ",fix_tag_value(52)"), "<none>");
  ParseCtx pc;
  EXPECT_EQ(Expr::parse("req.body,fix_tag_value(35)", pc)->type(), Type::kBin);
}

TEST(ConvFix, Fields) {
  EXPECT_EQ(on_body("35=A\x01" "49=a=b\x01" "56=T\x01", ",fix_tag_value(49)"), "a=b");
  EXPECT_EQ(on_body("49=S10=179\x01", ",fix_tag_value(49)"), "S10=179");
  EXPECT_EQ(on_body("56=T\x01" "56=U\x01", ",fix_tag_value(56)"), "T");
  EXPECT_EQ(on_body("049=Z\x01", ",fix_tag_value(49)"), "Z");
  // Empty values give nothing, and the first field with the tag decides.
  EXPECT_EQ(on_body("35=\x01" "49=S\x01", ",fix_tag_value(35)"), "<none>");
  EXPECT_EQ(on_body("35=\x01" "49=S\x01", ",fix_tag_value(49)"), "S");
  EXPECT_EQ(on_body("35=\x01" "35=B\x01", ",fix_tag_value(35)"), "<none>");
  // Tag numbers wrap through 32 bits, as HAProxy's.
  EXPECT_EQ(on_body("4294967345=X\x01" "49=Y\x01", ",fix_tag_value(49)"), "X");
  EXPECT_EQ(on_body("4294967345=X\x01", ",fix_tag_value(4294967345)"), "X");
  EXPECT_EQ(on_body("99999999999=1\x01" "49=S\x01", ",fix_tag_value(49)"), "S");
  EXPECT_EQ(on_body(std::string_view("10=\x00\x01", 5), ",fix_tag_value(10),hex"), "00");
}

TEST(ConvFix, MalformedMessages) {
  for (std::string_view bad : {"", "garbage", "49=S", " 49=S\x01", "x\x01" "49=S\x01",
                               "35=A\x01\x01" "49=S\x01", "35=A\x01" "49\x01",
                               "-1=2\x01" "49=S\x01", "+49=S\x01", "49=\x01", "=x\x01" "49=S\x01"})
    EXPECT_EQ(on_body(bad, ",fix_tag_value(49)"), "<none>") << bad;
}

TEST(ConvFix, ParseErrors) {
  for (std::string_view bad : {"", "abc", "-1", "0", "00", "4294967296", "12a", " 35",
                               "MsgSeqNum"}) {
    EXPECT_EQ(parse_error("req.body,fix_tag_value(" + std::string(bad) + ")"),
              "invalid args in converter 'fix_tag_value' : Unknown FIX tag name '" +
                  std::string(bad) + "'")
        << bad;
  }
  EXPECT_EQ(parse_error("req.body,fix_tag_value"),
            "invalid args in converter 'fix_tag_value' : Unknown FIX tag name ''");
  EXPECT_EQ(parse_error("req.body,fix_tag_value(08)"), "ok");
  EXPECT_EQ(parse_error("req.body,fix_is_valid"),
            "converter 'fix_is_valid' is not supported by sluice yet (it is not implemented yet)");
}

}  // namespace
}  // namespace sluice::sample

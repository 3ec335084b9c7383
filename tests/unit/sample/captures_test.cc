// Capture slots: the capture-req / capture-res converters and the capture.req.hdr /
// capture.res.hdr fetches, as HAProxy 3.5 runs them (checked with `declare capture` and
// `http-request set-header ... %[...]` on haproxy 3.5-dev5).
#include <gtest/gtest.h>

#include "sample/captures.h"
#include "sample/expr.h"
#include "sample_support.h"

namespace sluice::sample {
namespace {

// A frontend with `capture request header Host len 5`, `declare capture request len 4`,
// `declare capture request len 2` and `declare capture response len 10`.
struct Slots {
  CaptureSlots req = {{"Host", 5}, {"", 4}, {"", 2}};
  CaptureSlots res = {{"", 10}};
  Captures caps;
  Slots() { caps.reset(req, res); }
  std::string run(std::string_view text, bool with_caps = true) {
    ParseCtx pc;
    auto r = Expr::parse(text, pc);
    if (!r.ok()) return "parse error: " + r.error().message;
    Ctx ctx;
    ctx.avail = kAtLog;
    ctx.captures = with_caps ? &caps : nullptr;
    std::string out;
    if (!r->eval_text(ctx, out)) return "<none>";
    return out;
  }
};

TEST(Captures, ConverterStoresCutAndPassesTheSampleOnWhole) {
  Slots s;
  EXPECT_EQ(s.run("str(cvalue),capture-req(2)"), "cvalue");
  EXPECT_EQ(s.run("capture.req.hdr(2)"), "cv");
  EXPECT_EQ(s.run("str(resp-value-long),capture-res(0)"), "resp-value-long");
  EXPECT_EQ(s.run("capture.res.hdr(0)"), "resp-value");
  // A later capture replaces the value.
  EXPECT_EQ(s.run("str(z),capture-req(2)"), "z");
  EXPECT_EQ(s.run("capture.req.hdr(2)"), "z");
  // Integers are captured as their text.
  EXPECT_EQ(s.run("int(12345),capture-req(1)"), "12345");
  EXPECT_EQ(s.run("capture.req.hdr(1)"), "1234");
}

TEST(Captures, NoSuchSlotGivesNoSample) {
  Slots s;
  EXPECT_EQ(s.run("str(x),capture-req(3)"), "<none>");
  EXPECT_EQ(s.run("str(x),capture-res(1)"), "<none>");
  EXPECT_EQ(s.run("str(x),capture-req(-1)"), "<none>");
  EXPECT_EQ(s.run("str(x),capture-req(0)", false), "<none>");
  // Unset slots have no value; out of range neither.
  EXPECT_EQ(s.run("capture.req.hdr(1)"), "<none>");
  EXPECT_EQ(s.run("capture.req.hdr(9)"), "<none>");
  EXPECT_EQ(s.run("capture.res.hdr(0)", false), "<none>");
}

// HAProxy 3.5's messages.
TEST(Captures, ConverterArguments) {
  EXPECT_EQ(testing::parse_error("str(x),capture-req"),
            "invalid arg 1 in converter 'capture-req' : expected type 'integer' at position 1, but "
            "got nothing");
  EXPECT_EQ(testing::parse_error("str(x),capture-res(a)"),
            "invalid arg 1 in converter 'capture-res' : failed to parse 'a' as type 'integer' at "
            "position 1");
}

TEST(Captures, HeadersTakeTheLastFieldAndLeaveDeclaredSlots) {
  Slots s;
  std::vector<http::Header> h = {{"host", "first.example"}, {"X", "y"}, {"HOST", "second.example"}};
  s.caps.set_req(1, "keep");
  s.caps.capture_headers(false, h);
  ASSERT_EQ(s.caps.req().size(), 3u);
  EXPECT_EQ(s.caps.req()[0], "secon");
  EXPECT_EQ(s.caps.req()[1], "keep");
  EXPECT_EQ(s.caps.req()[2], "");
  EXPECT_EQ(s.caps.req_value(2), nullptr);
  // A new stream starts with every slot unset.
  s.caps.reset(s.req, s.res);
  EXPECT_EQ(s.caps.req_value(0), nullptr);
  EXPECT_EQ(s.caps.req()[0], "");
}

}  // namespace
}  // namespace sluice::sample

// rfc7239_is_valid, rfc7239_field, rfc7239_n2nn, rfc7239_n2np and date; expected values from
// HAProxy 3.5-dev5 on the same inputs, HAProxy's documented examples first.
#include <gtest/gtest.h>

#include <string>

#include "sample/expr.h"
#include "sample_support.h"

namespace sluice::sample {
namespace {

using testing::on_body;
using testing::parse_error;

std::string fwd_valid(std::string_view v) { return on_body(v, ",rfc7239_is_valid"); }

TEST(ConvRfc7239, DocumentedExamples) {
  EXPECT_EQ(fwd_valid("for=127.0.0.1;proto=http"), "1");
  EXPECT_EQ(fwd_valid("proto=custom"), "0");
  EXPECT_EQ(on_body(R"(proto=https;host="haproxy.org:80")", ",rfc7239_field(host)"),
            "haproxy.org:80");
  EXPECT_EQ(on_body(R"(proto=https;host="haproxy.org:80";for="127.0.0.1:9999")",
                    ",rfc7239_field(for)"),
            "127.0.0.1:9999");
  EXPECT_EQ(on_body("[2001:db8::1]:80", ",rfc7239_n2nn"), "2001:db8::1");
  EXPECT_EQ(on_body("_name:_port", ",rfc7239_n2nn"), "_name");
  EXPECT_EQ(on_body("[2001:db8::1]:4444", ",rfc7239_n2np"), "4444");
  EXPECT_EQ(on_body("_name:_port", ",rfc7239_n2np"), "_port");
}

TEST(ConvRfc7239, Validity) {
  for (std::string_view ok :
       {"for=unknown", "for=_hidden", R"(for="_hidden:_port")", R"(for="[2001:db8::1]:80")",
        R"(for="[2001:db8::1]")", R"(for="1.2.3.4:80")", R"(for="1.2.3.4:08")",
        R"(for="[::1]:_p")", R"(for="unknown:80")", "for=_A-z.9_", "host=example.com",
        R"(host="example.com")", R"(host="[::1]:80")", "host=a..b", "host=300.1.1.1",
        R"(host="ex:80")", "host=ex;proto=http", "by=_a;for=_b;host=h;proto=https;zz",
        "for=1.2.3.4;proto=http;host=h;by=_x;", "proto=http;host=x;for=_y;by=_z,junk",
        R"(by="[::1]:80";proto=http)"})
    EXPECT_EQ(fwd_valid(ok), "1") << ok;
  for (std::string_view bad :
       {"", "FOR=1.2.3.4", "for=1.2.3.4, for=5.6.7.8", "for=1.2.3.4,for=5.6.7.8;proto=http",
        "for=1.2.3.4;for=5.6.7.8", "for=1.2.3.4;", ";for=1.2.3.4", " for=1.2.3.4",
        "for = 1.2.3.4", "for=1.2.3.4 ;proto=http", "for=1.2.3.4; proto=http", "for=_hid$den",
        "for=[2001:db8::1]", R"(for="[2001:db8::zz]")", "for=1.2.3.4:80",
        R"(for="1.2.3.4:123456")", R"(for="1.2.3.4:")", R"(for="1.2.3.4)", "for=300.2.3.4",
        "for=foo.bar", "secret=x;for=1.2.3.4", "for=1.2.3.4;secret=x", "host=example.com:8080",
        "host=ex ample", "host=", "for=", "proto=HTTP", R"(proto="https")", R"(for="1.2.3.4:0")",
        R"(for="1.2.3.4:65536")", "for=01.2.3.4", "for=_", R"(for="1.2.3.4"x)",
        R"(for="[::ffff:1.2.3.4]")", "for=_a:b", "host=a-b.c", "host=a_b.c", "host=[::1]",
        R"(host="::1")", R"(host="a;b")", R"(host="ex:0")", R"(host="[::1]x")"})
    EXPECT_EQ(fwd_valid(bad), "0") << bad;
}

TEST(ConvRfc7239, Fields) {
  constexpr std::string_view kAll = R"(by=_a;for="[::1]:8";host="h:81";proto=https)";
  EXPECT_EQ(on_body(kAll, ",rfc7239_field(by)"), "_a");
  EXPECT_EQ(on_body(kAll, ",rfc7239_field(for)"), "[::1]:8");
  EXPECT_EQ(on_body(kAll, ",rfc7239_field(host)"), "h:81");
  EXPECT_EQ(on_body(kAll, ",rfc7239_field(proto)"), "https");
  EXPECT_EQ(on_body("for=127.0.0.1;proto=http", ",rfc7239_field(proto)"), "http");
  // A field that is not there, an unknown field, an invalid value: no sample.
  EXPECT_EQ(on_body("for=127.0.0.1", ",rfc7239_field(host)"), "<none>");
  EXPECT_EQ(on_body(kAll, ",rfc7239_field(xx)"), "<none>");
  EXPECT_EQ(on_body("for=1.2.3.4;secret=x", ",rfc7239_field(for)"), "<none>");
  EXPECT_EQ(parse_error("req.body,rfc7239_field(xx)"), "ok");   // as HAProxy
  EXPECT_EQ(parse_error("req.body,rfc7239_n2np(1)"),
            "invalid arg 1 in converter 'rfc7239_n2np' : expected ')' before '1)'");
}

TEST(ConvRfc7239, Nodes) {
  EXPECT_EQ(on_body("1.2.3.4", ",rfc7239_n2nn"), "1.2.3.4");
  EXPECT_EQ(on_body("1.2.3.4xyz", ",rfc7239_n2nn"), "1.2.3.4");
  EXPECT_EQ(on_body("1.2.3.4:80", ",rfc7239_n2nn,ipmask(24)"), "1.2.3.0");
  EXPECT_EQ(on_body("unknown:80", ",rfc7239_n2nn"), "unknown");
  EXPECT_EQ(on_body("\"1.2.3.4\"", ",rfc7239_n2nn"), "<none>");
  EXPECT_EQ(on_body("1.2.3.4:", ",rfc7239_n2nn"), "<none>");
  EXPECT_EQ(on_body("1.2.3.4:80", ",rfc7239_n2np,add(1)"), "81");
  EXPECT_EQ(on_body("1.2.3.4", ",rfc7239_n2np"), "<none>");
  EXPECT_EQ(on_body("[2001:db8::1]", ",rfc7239_n2np"), "<none>");
  EXPECT_EQ(on_body("", ",rfc7239_n2nn"), "<none>");
}

TEST(ConvDate, HttpDates) {
  EXPECT_EQ(on_body("Tue, 14 Nov 2023 22:13:20 GMT", ",date"), "1700000000");
  EXPECT_EQ(on_body("Tuesday, 14-Nov-23 22:13:20 GMT", ",date"), "1700000000");
  EXPECT_EQ(on_body("Tue Nov 14 22:13:20 2023", ",date"), "1700000000");
  EXPECT_EQ(on_body("Sun Nov  6 08:49:37 1994", ",date"), "784111777");
  EXPECT_EQ(on_body("Sun Nov 06 08:49:37 1994", ",date"), "784111777");
  EXPECT_EQ(on_body("Sunday, 06-Nov-1994 08:49:37 GMT", ",date"), "784111777");
  EXPECT_EQ(on_body("Thu, 01 Jan 1970 00:00:00 GMT", ",date"), "0");
  EXPECT_EQ(on_body("Fri, 31 Dec 9999 23:59:59 GMT", ",date"), "253402300799");
  EXPECT_EQ(on_body("Mon, 01 Mar 2100 00:00:00 GMT", ",date"), "4107542400");
  EXPECT_EQ(on_body("Mon, 01 Mar 2000 00:00:00 GMT", ",date"), "951868800");
  // HAProxy's leniency: weekday unchecked, fields unchecked, trailing text ignored.
  EXPECT_EQ(on_body("Mon, 14 Nov 2023 22:13:20 GMT", ",date"), "1700000000");
  EXPECT_EQ(on_body("Tue, 14 Nov 2023 22:13:20 GMTx", ",date"), "1700000000");
  EXPECT_EQ(on_body("Tue, 31 Feb 2023 22:13:20 GMT", ",date"), "1677881600");
  EXPECT_EQ(on_body("Tue, 14 Nov 2023 99:99:99 GMT", ",date"), "1700282439");
  EXPECT_EQ(on_body("Mon, 00 Jan 1970 00:00:00 GMT", ",date"), "-86400");
  // Two-digit years: up to 60 are 20xx.
  EXPECT_EQ(on_body("Sunday, 06-Nov-60 08:49:37 GMT", ",date"), "2866956577");
  EXPECT_EQ(on_body("Sunday, 06-Nov-00 08:49:37 GMT", ",date"), "973500577");
  EXPECT_EQ(on_body("Sunday, 06-Nov-99 08:49:37 GMT", ",date"), "941878177");
  // Before 1970 the years' days wrap through 32 bits, as in HAProxy.
  EXPECT_EQ(on_body("Wed, 31 Dec 1969 23:59:59 GMT", ",date"), "371085174374399");
  EXPECT_EQ(on_body("Sunday, 06-Nov-61 08:49:37 GMT", ",date"), "371084917106977");
  EXPECT_EQ(on_body("Mon, 01 Jan 0000 00:00:00 GMT", ",date"), "371023007155200");
  for (std::string_view bad :
       {"", "1700000000", "2023-11-14T22:13:20Z", "Tue, 14 Nov 2023 22:13:20 UTC",
        " Tue, 14 Nov 2023 22:13:20 GMT", "Tue, 14 nov 2023 22:13:20 GMT",
        "tue, 14 Nov 2023 22:13:20 GMT", "Tue, 4 Nov 2023 22:13:20 GMT",
        "Tue, 14 Nov 23 22:13:20 GMT", "Sun, 06-Nov-94 08:49:37 GMT",
        "Sun Nov 6 08:49:37 1994", "Tue, 14 Nov 2023 22:13:20 GM", "Tue, 14 Nov 2023 22:13:20",
        "Tue Nov 14 22:13:20 23", "Tue, 14 Nov 2023 22:13:2a GMT",
        "Monday, 14 Nov 2023 22:13:20 GMT", "Tue,"})
    EXPECT_EQ(on_body(bad, ",date"), "<none>") << bad;
  EXPECT_EQ(parse_error("req.body,date(1)"),
            "invalid arg 1 in converter 'date' : expected ')' before '1)'");
}

}  // namespace
}  // namespace sluice::sample

namespace sluice::sample {
namespace {

std::string eval_expr(std::string_view text) {
  ParseCtx pc;
  auto e = Expr::parse(text, pc);
  if (!e.ok()) return "parse error: " + e.error().message;
  Ctx ctx;
  std::string out;
  if (!e->eval_text(ctx, out)) return "<none>";
  return out;
}

// rfc7239_nn / rfc7239_np; expected values from HAProxy 3.5-dev5.
TEST(ConvRfc7239, NodeNameAndPortFromSamples) {
  EXPECT_EQ(eval_expr("ipv4(127.0.0.1),rfc7239_nn"), "127.0.0.1");
  EXPECT_EQ(eval_expr("ipv6(2001:db8::1),rfc7239_nn"), "[2001:db8::1]");
  EXPECT_EQ(eval_expr("bool(1),rfc7239_nn"), "_1");
  EXPECT_EQ(eval_expr("int(5),rfc7239_nn"), "_5");
  EXPECT_EQ(eval_expr("int(80),rfc7239_np"), "80");
  EXPECT_EQ(eval_expr("int(0),rfc7239_np"), "0");
  EXPECT_EQ(eval_expr("int(70000),rfc7239_np"), "70000");
  EXPECT_EQ(eval_expr("int(-1),rfc7239_np"), "4294967295");
  for (const char* conv : {",rfc7239_nn", ",rfc7239_np"}) {
    EXPECT_EQ(on_body("1.2.3.4", conv), "_1.2.3.4");
    EXPECT_EQ(on_body("abc", conv), "_abc");
    EXPECT_EQ(on_body("a_b-c.d", conv), "_a_b-c.d");
    EXPECT_EQ(on_body("_x", conv), "__x");
    EXPECT_EQ(on_body("8080", conv), "_8080");
    EXPECT_EQ(on_body("Ab9", conv), "_Ab9");
    for (const char* bad : {"::1", "a b", "", "x:y", "[::1]"})
      EXPECT_EQ(on_body(bad, conv), "<none>") << conv << " " << bad;
  }
  ParseCtx pc;
  EXPECT_EQ(Expr::parse("src,rfc7239_nn", pc)->type(), Type::kStr);
}

}  // namespace
}  // namespace sluice::sample

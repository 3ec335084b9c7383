// Encoding converters; expected values from HAProxy 3.5-dev5 (`return lf-string
// "%[req.body,conv]"` with the input as the request body, `-c` for the parse errors).
#include <gtest/gtest.h>

#include "sample/expr.h"
#include "sample_support.h"

namespace sluice::sample {
namespace {

using testing::parse_error;

// Evaluates `text`; `body` is what req.body returns.
std::string run(std::string_view text, std::string_view body = {}) {
  ParseCtx pc;
  auto r = Expr::parse(text, pc);
  if (!r.ok()) return "parse error: " + r.error().message;
  Ctx ctx;
  ctx.avail = kAtHttpRequest;
  ctx.req.method = "POST";
  ctx.req.target = "/";
  ctx.req.version = "HTTP/1.1";
  static const std::vector<http::Header> kNoHeaders;
  ctx.req.headers = &kNoHeaders;
  ctx.req.body = body;
  std::string out;
  if (!r->eval_text(ctx, out)) return "<none>";
  return out;
}

TEST(ConvEncode, Base64) {
  EXPECT_EQ(run("str(abc),base64"), "YWJj");
  EXPECT_EQ(run("str(ab),base64"), "YWI=");
  EXPECT_EQ(run("str(a),base64"), "YQ==");
  EXPECT_EQ(run("str(),base64"), "");
  EXPECT_EQ(run("int(1),base64"), "AAAAAAAAAAE=");
  EXPECT_EQ(run("req.body,base64", std::string_view("\0\xff", 2)), "AP8=");
  EXPECT_EQ(run("str(YWJj),b64dec"), "abc");
  EXPECT_EQ(run("str(YWI=),b64dec"), "ab");
  EXPECT_EQ(run("str(YWJ=),b64dec,hex"), "6162");
  EXPECT_EQ(run("str(YQ==),b64dec"), "a");
  EXPECT_EQ(run("str(YQ==YQ==),b64dec,length"), "2");
  EXPECT_EQ(run("str(),b64dec,length"), "0");
  EXPECT_EQ(run("str(YWI),b64dec"), "<none>");
  EXPECT_EQ(run("str(Y!WI),b64dec"), "<none>");
  EXPECT_EQ(run("str(YW=j),b64dec"), "<none>");
  EXPECT_EQ(run("str(====),b64dec"), "<none>");
  EXPECT_EQ(run("str(YQ=a),b64dec"), "<none>");
  EXPECT_EQ(run("req.body,b64dec", "YW\nJj"), "<none>");
}

TEST(ConvEncode, Base64Url) {
  EXPECT_EQ(run("str(abc),sha1,ub64enc"), "qZk-NkcGgWq6PiVxeFDCbJzQ2J0");
  EXPECT_EQ(run("str(a),ub64enc"), "YQ");
  EXPECT_EQ(run("str(ab),ub64enc"), "YWI");
  EXPECT_EQ(run("str(abc),ub64enc,length"), "4");
  EXPECT_EQ(run("str(qZk-NkcGgWq6PiVxeFDCbJzQ2J0),ub64dec,hex"),
            "A9993E364706816ABA3E25717850C26C9CD0D89D");
  // HAProxy reads a '=' as the value 63.
  EXPECT_EQ(run("str(qZk-NkcGgWq6PiVxeFDCbJzQ2J0=),ub64dec,hex"),
            "A9993E364706816ABA3E25717850C26C9CD0D89D3F");
  EXPECT_EQ(run("str(YWI),ub64dec"), "ab");
  EXPECT_EQ(run("str(Y_I),ub64dec,hex"), "63F2");
  EXPECT_EQ(run("str(Y),ub64dec"), "<none>");
  EXPECT_EQ(run("str(Y+I),ub64dec"), "<none>");
  EXPECT_EQ(run("str(),ub64dec,length"), "0");
  EXPECT_EQ(parse_error("str(a),ub64enc(1)"),
            "invalid arg 1 in converter 'ub64enc' : expected ')' before '1)'");
}

TEST(ConvEncode, HexBase2) {
  EXPECT_EQ(run("str(abc),hex"), "616263");
  EXPECT_EQ(run("str(),hex"), "");
  EXPECT_EQ(run("str(abc),hex,hex"), "363136323633");
  EXPECT_EQ(run("req.body,hex", std::string_view("a\0b", 3)), "610062");
  EXPECT_EQ(run("str(ab),base2"), "0110000101100010");
  EXPECT_EQ(run("int(5),base2"),
            "0000000000000000000000000000000000000000000000000000000000000101");
  EXPECT_EQ(run("str(),base2,length"), "0");
  EXPECT_EQ(run("int(255),hex2i"), "597");
  EXPECT_EQ(run("str(ff),hex2i"), "255");
  EXPECT_EQ(run("str(AB),hex2i"), "171");
  EXPECT_EQ(run("str(abc),hex2i"), "2748");
  EXPECT_EQ(run("str(12345),hex2i"), "74565");
  EXPECT_EQ(run("str(FFFFFFFFFFFFFFFF),hex2i"), "-1");
  EXPECT_EQ(run("str(),hex2i"), "0");
  EXPECT_EQ(run("str(0x10),hex2i"), "<none>");
  EXPECT_EQ(run("str(1g),hex2i"), "<none>");
  EXPECT_EQ(run("str(-1),hex2i"), "<none>");
  EXPECT_EQ(parse_error("str(a),hex2i(1)"),
            "invalid arg 1 in converter 'hex2i' : expected ')' before '1)'");
}

TEST(ConvEncode, Url) {
  EXPECT_EQ(run("str(a%20b+c),url_dec(1)"), "a b c");
  EXPECT_EQ(run("str(a%20b+c),url_dec(0)"), "a b+c");
  EXPECT_EQ(run("str(a+b?c+d),url_dec"), "a+b?c d");
  EXPECT_EQ(run("str(a+b?c+d),url_dec()"), "a+b?c d");
  EXPECT_EQ(run("str(%41%4a%4A),url_dec"), "AJJ");
  EXPECT_EQ(run("str(a%00b),url_dec,hex"), "610062");
  EXPECT_EQ(run("req.body,url_dec", std::string_view("a\0%41", 5)), "a");
  EXPECT_EQ(run("str(a%20b+c%2),url_dec"), "<none>");
  EXPECT_EQ(run("str(a%zzb),url_dec"), "<none>");
  EXPECT_EQ(run("str(a%),url_dec"), "<none>");
  EXPECT_EQ(parse_error("str(a),url_dec(x)"),
            "invalid arg 1 in converter 'url_dec' : failed to parse 'x' as type 'integer' at "
            "position 1");
  EXPECT_EQ(run("req.body,url_enc", "a b&c=d/\xc3\xa9?#~"), "a%20b%26c%3Dd%2F%C3%A9%3F%23~");
  EXPECT_EQ(run("req.body,url_enc(query)", "a b&c=d/\xc3\xa9?#~"),
            "a%20b%26c%3Dd%2F%C3%A9%3F%23~");
  EXPECT_EQ(run("req.body,url_enc", "$:@;=!*~"), "%24%3A%40%3B%3D%21%2A~");
  EXPECT_EQ(run("req.body,url_enc", "a'b()[]"), "a%27b%28%29%5B%5D");
  EXPECT_EQ(run("str(A-Z_a.z~),url_enc"), "A-Z_a.z~");
  EXPECT_EQ(run("str(a),url_enc()"), "a");
  EXPECT_EQ(parse_error("str(a),url_enc(param)"),
            "invalid args in converter 'url_enc' : Unexpected encode type. Allowed value is "
            "'query'");
}

TEST(ConvEncode, Json) {
  EXPECT_EQ(run("req.body,json", "a\"b\\c/d"), "a\\\"b\\\\c\\/d");
  EXPECT_EQ(run("req.body,json", "\xc3\xa9"), "\\u00c3\\u00a9");
  EXPECT_EQ(run("req.body,json(ascii)", "\xc3\xa9"), "\\u00c3\\u00a9");
  EXPECT_EQ(run("req.body,json()", "ab"), "ab");
  EXPECT_EQ(run("req.body,json", "a\tb\rc\x01\x1f\x7f<>&"), "a\\tb\\rc\\u0001\\u001f\\u007f<>&");
  EXPECT_EQ(run("req.body,json(utf8)", "\b\f\n"), "\\b\\f\\n");
  EXPECT_EQ(run("req.body,json", std::string_view("\0a", 2)), "");
  EXPECT_EQ(run("req.body,json(ascii)", "a\xff" "b"), "a\\u00ffb");
  EXPECT_EQ(run("req.body,json(utf8)", "\xc3\xa9"), "\\u00e9");
  EXPECT_EQ(run("req.body,json(utf8p)", "\xc3\xa9"), "\\u00e9");
  EXPECT_EQ(run("req.body,json(utf8)", "\xe2\x82\xac"), "\\u20ac");
  EXPECT_EQ(run("req.body,json(utf8)", "\x7f"), "\\u007f");
  // Bad sequences fail, or are skipped with 's'.
  EXPECT_EQ(run("req.body,json(utf8)", "a\xff" "b"), "<none>");
  EXPECT_EQ(run("req.body,json(utf8p)", "a\xff" "b"), "<none>");
  EXPECT_EQ(run("req.body,json(utf8s)", "a\xff" "b"), "ab");
  EXPECT_EQ(run("req.body,json(utf8ps)", "a\xff" "b"), "ab");
  EXPECT_EQ(run("req.body,json(utf8)", "a\xc3"), "<none>");
  EXPECT_EQ(run("req.body,json(utf8p)", "a\xc3"), "<none>");
  EXPECT_EQ(run("req.body,json(utf8s)", "a\xc3"), "a");
  EXPECT_EQ(run("req.body,json(utf8s)", "\xe2\x82x"), "x");
  EXPECT_EQ(run("req.body,json(utf8ps)", "a\xe2\x82"), "a");
  EXPECT_EQ(run("req.body,json(utf8ps)", "\xf8\x88\x80\x80\x80"), "");
  // Surrogates and code points past U+FFFF are refused; overlong forms pass with 'p'.
  EXPECT_EQ(run("req.body,json(utf8)", "\xed\xa0\x80"), "<none>");
  EXPECT_EQ(run("req.body,json(utf8p)", "\xed\xa0\x80"), "<none>");
  EXPECT_EQ(run("req.body,json(utf8)", "\xc0\x80"), "<none>");
  EXPECT_EQ(run("req.body,json(utf8p)", "\xc0\x80"), "\\u0000");
  EXPECT_EQ(run("req.body,json(utf8ps)", "\xc0\x80x"), "\\u0000x");
  EXPECT_EQ(run("req.body,json(utf8s)", "\xc0\x80x"), "x");
  EXPECT_EQ(run("req.body,json", "\xf0\x9f\x98\x80"), "\\u00f0\\u009f\\u0098\\u0080");
  EXPECT_EQ(run("req.body,json(utf8)", "\xf0\x9f\x98\x80"), "<none>");
  EXPECT_EQ(run("req.body,json(utf8p)", "\xf0\x9f\x98\x80"), "<none>");
  EXPECT_EQ(run("req.body,json(utf8s)", "\xf0\x9f\x98\x80x"), "x");
  EXPECT_EQ(run("req.body,json(utf8ps)", "\xf0\x9f\x98\x80x"), "x");
  EXPECT_EQ(run("req.body,json(utf8)", "\xf4\x90\x80\x80"), "<none>");
  EXPECT_EQ(parse_error("str(a),json(foo)"),
            "invalid args in converter 'json' : Unexpected input code type. Allowed value are "
            "'ascii', 'utf8', 'utf8s', 'utf8p' and 'utf8ps'");
}

}  // namespace
}  // namespace sluice::sample

// Layer-5 fetches (section 7.3.5): values, and kMayChange while more bytes may come.
#include <gtest/gtest.h>

#include <string>

#include "sample/expr.h"
#include "sample_support.h"

namespace sluice::sample {
namespace {

// The start of the ClientHello in tls_hello_test.cc (OpenSSL 3.0, SNI x.example.com): a
// TLS 1.0 record header, then a 0x13a-byte handshake.
const char kHelloHead[] = "\x16\x03\x01\x01\x3a\x01\x00\x01\x36\x03\x03";

struct Eval {
  std::string bytes_;   // the sample points into it
  Ctx ctx;
  Sample s;
  bool got = false;
  Eval(std::string_view text, std::string_view bytes, bool final, uint32_t avail = kAtTcpContent)
      : bytes_(bytes) {
    ctx.avail = avail;
    bytes = bytes_;
    ctx.payload = bytes;
    ctx.payload_final = final;
    ctx.res_payload = bytes;
    ctx.res_payload_final = final;
    ParseCtx pc;
    auto e = Expr::parse(text, pc);
    EXPECT_TRUE(e.ok()) << e.error().message;
    if (e.ok()) got = e->eval(ctx, s);
  }
  bool may_change() const { return s.flags & kMayChange; }
};

using testing::parse_error;

TEST(SampleFetchPayload, LengthGrowsUntilFinal) {
  Eval a("req.len", "abc", false);
  ASSERT_TRUE(a.got);
  EXPECT_EQ(a.s.sint, 3);
  EXPECT_TRUE(a.may_change());
  Eval b("req_len", "abc", true);
  ASSERT_TRUE(b.got);
  EXPECT_FALSE(b.may_change());
  Eval c("res.len", "abcd", true, kAtTcpResponse);
  EXPECT_EQ(c.s.sint, 4);
}

TEST(SampleFetchPayload, PayloadSlices) {
  Eval a("req.payload(1,2)", "abcdef", false);
  ASSERT_TRUE(a.got);
  EXPECT_EQ(a.s.type, Type::kBin);
  EXPECT_EQ(a.s.str, "bc");
  EXPECT_FALSE(a.may_change());   // those bytes are there: more cannot change them
  Eval b("req.payload(4,4)", "abcdef", false);
  EXPECT_FALSE(b.got);
  EXPECT_TRUE(b.may_change());
  Eval c("req.payload(4,4)", "abcdef", true);
  EXPECT_FALSE(c.got);
  EXPECT_FALSE(c.may_change());
  Eval d("req.payload(2,0)", "abcdef", false);   // 0: the rest, which may grow
  ASSERT_TRUE(d.got);
  EXPECT_EQ(d.s.str, "cdef");
  EXPECT_TRUE(d.may_change());
  Eval e("req.payload(0,16385)", "abc", false);   // beyond a buffer: never
  EXPECT_FALSE(e.got);
  EXPECT_FALSE(e.may_change());
  Eval f("payload(0,1)", "xyz", true, kAtTcpResponse);
  EXPECT_EQ(f.s.str, "x");
}

TEST(SampleFetchPayload, LengthPrefixedValues) {
  // A 2-byte length at offset 1, then the value.
  std::string msg = std::string("T\x00\x03", 3) + "abc" + "tail";
  Eval a("req.payload_lv(1,2)", msg, false);
  ASSERT_TRUE(a.got);
  EXPECT_EQ(a.s.str, "abc");
  Eval b("req.payload_lv(1,2,+3)", msg + "xyz", true);   // 3 bytes after the length field
  EXPECT_EQ(b.s.str, "tai");
  Eval c("req.payload_lv(1,2,0)", msg, true);             // absolute offset
  EXPECT_EQ(c.s.str, std::string("T\x00\x03", 3));
  Eval d("req.payload_lv(1,2)", msg.substr(0, 4), false);
  EXPECT_FALSE(d.got);
  EXPECT_TRUE(d.may_change());
  // haproxy's messages
  EXPECT_EQ(parse_error("req.payload_lv(0,0)"),
            "invalid args in fetch method 'req.payload_lv' : payload length must be > 0");
  EXPECT_EQ(parse_error("req.payload_lv(-1,1)"),
            "invalid args in fetch method 'req.payload_lv' : payload offset1 must be positive");
  EXPECT_EQ(parse_error("req.payload_lv(0,1,x)"),
            "invalid args in fetch method 'req.payload_lv' : payload offset2 is not a number");
  EXPECT_EQ(parse_error("req.payload(0,-1)"), "ok");
}

TEST(SampleFetchPayload, TlsHelloFields) {
  std::string head(kHelloHead, sizeof(kHelloHead) - 1);
  Eval a("req.ssl_hello_type", head, false);
  EXPECT_FALSE(a.got);
  EXPECT_TRUE(a.may_change());
  Eval b("req.ssl_ver", head, false);
  EXPECT_FALSE(b.got);
  EXPECT_TRUE(b.may_change());
  std::string whole = head + std::string(0x13a - 6, '\0');
  Eval c("req.ssl_ver", whole, false);
  ASSERT_TRUE(c.got);
  EXPECT_EQ(c.s.sint, 0x30001);   // TLS 1.0 record: "3.1"
  Eval d("req_ssl_hello_type", whole, false);
  ASSERT_TRUE(d.got);
  EXPECT_EQ(d.s.sint, 1);
  Eval e("req.ssl_ver", "GET / HTTP/1.1\r\n", false);
  EXPECT_FALSE(e.got);
  EXPECT_FALSE(e.may_change());
  Eval f("req.ssl_sni", "G", false);
  EXPECT_FALSE(f.got);
  EXPECT_FALSE(f.may_change());
  Eval g("req.ssl_sni", "\x16", false);
  EXPECT_TRUE(g.may_change());
  Eval h("rep_ssl_hello_type", std::string("\x16\x03\x03\x00\x04\x02\x00\x00\x00", 9), true,
         kAtTcpResponse);
  ASSERT_TRUE(h.got);
  EXPECT_EQ(h.s.sint, 2);
}

TEST(SampleFetchPayload, RdpCookie) {
  std::string req = std::string(11, '\x03') + "Cookie: mstshash=alice\r\n";
  Eval a("req.rdp_cookie(mstshash)", req, false);
  ASSERT_TRUE(a.got);
  EXPECT_EQ(a.s.str, "alice");
  Eval b("rdp_cookie", req, false);
  EXPECT_EQ(b.s.str, "alice");
  Eval c("rdp_cookie_cnt(other)", req, false);
  ASSERT_TRUE(c.got);
  EXPECT_EQ(c.s.sint, 0);
  Eval d("req.rdp_cookie_cnt", req.substr(0, 25), false);
  EXPECT_FALSE(d.got);
  EXPECT_TRUE(d.may_change());
}

TEST(SampleFetchPayload, ProtoHttpAndWaitEnd) {
  Eval a("req.proto_http", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", false);
  ASSERT_TRUE(a.got);
  EXPECT_EQ(a.s.sint, 1);
  Eval b("req.proto_http", "GET / HTTP/1.1\r\nHo", false);
  EXPECT_FALSE(b.got);
  EXPECT_TRUE(b.may_change());
  Eval c("req.proto_http", "\x16\x03\x01", false);
  EXPECT_FALSE(c.got);
  EXPECT_FALSE(c.may_change());
  Eval d("wait_end", "", false);
  EXPECT_FALSE(d.got);
  EXPECT_TRUE(d.may_change());
  Eval e("wait_end", "", true);
  ASSERT_TRUE(e.got);
  EXPECT_EQ(e.s.sint, 1);
}

}  // namespace
}  // namespace sluice::sample

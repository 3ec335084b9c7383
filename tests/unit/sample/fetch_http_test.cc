// HTTP fetches (section 7.3.6). Expected values were checked against HAProxy 3.5 where marked
// "haproxy": `http-request return ... lf-string "%[...]"` with the same request.
#include <gtest/gtest.h>

#include <vector>

#include "sample/expr.h"
#include "sample_support.h"

namespace sluice::sample {
namespace {

struct Req {
  std::vector<http::Header> hs;
  std::vector<http::Header> rs;
  net::SocketAddress src = net::SocketAddress::ipv4(0x7f000001, 5555);
  Ctx ctx;
  Req(std::string_view target, std::vector<http::Header> h) : hs(std::move(h)) {
    ctx.avail = kAtAny;
    ctx.req.method = "GET";
    ctx.req.target = target;
    ctx.req.version = "HTTP/1.1";
    ctx.req.headers = &hs;
    ctx.res.headers = &rs;
    ctx.src = &src;
  }
  std::string eval(std::string_view text) {
    ParseCtx pc;
    auto r = Expr::parse(text, pc);
    if (!r.ok()) return "parse error: " + r.error().message;
    std::string out;
    if (!r->eval_text(ctx, out)) return "<none>";
    return out;
  }
  // Every value an ACL would see.
  std::string all(std::string_view text) {
    ParseCtx pc;
    auto r = Expr::parse(text, pc);
    if (!r.ok()) return "parse error: " + r.error().message;
    std::string out;
    FetchIter it;
    it.iterate = true;
    Sample s;
    for (int n = 0; n < 50; ++n) {
      if (!r->eval(ctx, s, it)) break;
      std::string t;
      to_text(s, t);
      out += (out.empty() ? "" : "|") + t;
      if (!(s.flags & kNotLast)) break;
    }
    return out;
  }
};

using testing::parse_error;

Req haproxy_request() {
  return Req("/p/q?a=1;A=2&b=3;x;c=4&a=5",
             {{"Host", "ex.com"},
              {"User-Agent", "curl/7.88.1"},
              {"Accept", "*/*"},
              {"x", "a, b"},
              {"x", "c"},
              {"ip", "1.2.3.4:80"},
              {"ip6", "[::1]"},
              {"v", "12abc"},
              {"Cookie", "x=1; y=2,x=\"3\""},
              {"Cookie", "z=4; $p=1; w"}});
}

TEST(SampleFetchHttp, RequestLineAndTargetAsHaproxy) {
  Req r = haproxy_request();
  EXPECT_EQ(r.eval("base"), "ex.com/p/q");
  EXPECT_EQ(r.eval("baseq"), "ex.com/p/q?a=1;A=2&b=3;x;c=4&a=5");
  EXPECT_EQ(r.eval("base32"), "2055340049");   // haproxy
  EXPECT_EQ(r.eval("url32"), "1226158028");    // haproxy
  EXPECT_EQ(r.eval("pathq"), "/p/q?a=1;A=2&b=3;x;c=4&a=5");
  EXPECT_EQ(r.eval("path"), "/p/q");
  EXPECT_EQ(r.eval("query"), "a=1;A=2&b=3;x;c=4&a=5");
  EXPECT_EQ(r.eval("capture.req.method"), "GET");
  EXPECT_EQ(r.eval("capture.req.uri"), "/p/q?a=1;A=2&b=3;x;c=4&a=5");
  EXPECT_EQ(r.eval("capture.req.ver"), "HTTP/1.1");
  EXPECT_EQ(r.eval("req.ver"), "1.1");
  EXPECT_EQ(r.eval("method"), "GET");
  EXPECT_EQ(r.eval("url_ip"), "<none>");
  Req h("/%c3%a9", {{"Host", "h"}});
  EXPECT_EQ(h.eval("base32"), "2860521367");   // haproxy
  Req ab("/ab", {{"Host", "h"}});
  EXPECT_EQ(ab.eval("base32"), "2095257973");  // haproxy
  Req none("/a", {});
  EXPECT_EQ(none.eval("query"), "<none>");
  EXPECT_EQ(none.eval("base"), "/a");
}

TEST(SampleFetchHttp, HashWithSourceIsBinary) {
  Req r("/p?a=1;A=2&x&b;c=4", {{"Host", "ex.com"}});
  // haproxy: base32+src,hex and url32+src,hex from 127.0.0.1
  Sample s;
  ParseCtx pc;
  auto e = Expr::parse("base32+src", pc);
  ASSERT_TRUE(e.ok()) << e.error().message;
  ASSERT_TRUE(e->eval(r.ctx, s));
  EXPECT_EQ(s.type, Type::kBin);
  EXPECT_EQ(s.str, std::string_view("\x3f\x34\x9e\x58\x7f\x00\x00\x01", 8));
  e = Expr::parse("url32+src", pc);
  ASSERT_TRUE(e->eval(r.ctx, s));
  EXPECT_EQ(s.str, std::string_view("\x7c\x89\x2c\x02\x7f\x00\x00\x01", 8));
}

TEST(SampleFetchHttp, AbsoluteTargetAddress) {
  Req r("http://1.2.3.4:81/x?y", {{"Host", "1.2.3.4:81"}});
  EXPECT_EQ(r.eval("url_ip"), "1.2.3.4");
  EXPECT_EQ(r.eval("url_port"), "81");
  EXPECT_EQ(r.eval("base"), "1.2.3.4:81/x");
  EXPECT_EQ(r.eval("base32"), "1260857869");   // haproxy
  EXPECT_EQ(r.eval("url32"), "1956739047");    // haproxy
  Req p("http://1.2.3.4/x?y", {{"Host", "1.2.3.4"}});
  EXPECT_EQ(p.eval("url_port"), "80");
  EXPECT_EQ(p.eval("url32"), "3741283711");    // haproxy
  Req n("http://ex.com:82/x?y", {{"Host", "ex.com:82"}});
  EXPECT_EQ(n.eval("url_ip"), "<none>");
  EXPECT_EQ(n.eval("url_port"), "<none>");
}

TEST(SampleFetchHttp, UrlParamsAsHaproxy) {
  Req r = haproxy_request();
  EXPECT_EQ(r.eval("url_param(a)"), "1");
  EXPECT_EQ(r.eval("url_param"), "1");
  EXPECT_EQ(r.eval("url_param(b,;)"), "3");
  EXPECT_EQ(r.eval("url_param(A,,i)"), "1");
  EXPECT_EQ(r.eval("url_param(A)"), "2");
  EXPECT_EQ(r.eval("url_param(x)"), "<none>");   // no '='
  EXPECT_EQ(r.eval("url_param(c)"), "4");        // ';' separates too
  EXPECT_EQ(r.all("urlp(a)"), "1|5");
  EXPECT_EQ(r.eval("urlp_val(b)"), "3");
  // sluice's own tests (tests/unit/rules/acl_test.cc)
  Req u("/p?user=bob&id=12&debug=&user=alice", {});
  EXPECT_EQ(u.all("url_param(user)"), "bob|alice");
  EXPECT_EQ(u.eval("url_param(debug)"), "");
  EXPECT_EQ(u.eval("url_param(User)"), "<none>");
}

TEST(SampleFetchHttp, HeadersAsHaproxy) {
  Req r = haproxy_request();
  EXPECT_EQ(r.eval("req.hdr(x)"), "c");
  EXPECT_EQ(r.eval("hdr(x,1)"), "a");
  EXPECT_EQ(r.eval("req.hdr(x,-2)"), "b");
  EXPECT_EQ(r.eval("req.hdr(x,-10)"), "<none>");
  EXPECT_EQ(r.all("hdr(x)"), "a|b|c");
  EXPECT_EQ(r.all("hdr(X,2)"), "b");
  EXPECT_EQ(r.eval("req.fhdr(x)"), "c");
  EXPECT_EQ(r.all("req.fhdr(x)"), "a, b|c");
  EXPECT_EQ(r.eval("req.hdr_cnt(x)"), "3");
  EXPECT_EQ(r.eval("req.fhdr_cnt(x)"), "2");
  EXPECT_EQ(r.eval("hdr_cnt"), "12");
  EXPECT_EQ(r.eval("req.hdr_ip(ip)"), "1.2.3.4");
  EXPECT_EQ(r.eval("req.hdr_ip(ip6)"), "::1");
  EXPECT_EQ(r.eval("hdr_ip(x)"), "<none>");
  EXPECT_EQ(r.eval("req.hdr_val(v)"), "12");
  EXPECT_EQ(r.eval("req.hdr_names"), "host,user-agent,accept,x,x,ip,ip6,v,cookie,cookie");
  EXPECT_EQ(r.eval("req.hdr_names(;)"), "host;user-agent;accept;x;x;ip;ip6;v;cookie;cookie");
  EXPECT_EQ(parse_error("req.hdr(a,-11)"),
            "invalid args in fetch method 'req.hdr' : header occurrence must be >= -10");
  EXPECT_EQ(parse_error("fhdr(a)"), "unknown fetch method 'fhdr'");
}

TEST(SampleFetchHttp, HeaderBlockAsHaproxy) {
  Req r("/p", {{"Host", "ex.com"}, {"X-A", "1"}});
  EXPECT_EQ(r.eval("req.hdrs"), "host: ex.com\r\nx-a: 1\r\n\r\n");
  EXPECT_EQ(r.eval("req.hdrs_bin"), std::string("\x04host\x06" "ex.com\x03x-a\x01" "1\0\0", 20));
  std::string big(300, 'v');
  Req b("/p", {{"a", big}});
  std::string bin = b.eval("req.hdrs_bin");
  // 300 = 240 + (60 << 4) | 12: 0xfc then 0x03
  ASSERT_GT(bin.size(), 4u);
  EXPECT_EQ(static_cast<uint8_t>(bin[2]), 0xfc);
  EXPECT_EQ(static_cast<uint8_t>(bin[3]), 0x03);
}

TEST(SampleFetchHttp, CookiesAsHaproxy) {
  Req r = haproxy_request();
  EXPECT_EQ(r.eval("req.cook(x)"), "\"3\"");
  EXPECT_EQ(r.eval("req.cook"), "1");
  EXPECT_EQ(r.eval("req.cook_cnt(x)"), "2");
  EXPECT_EQ(r.eval("req.cook_cnt"), "4");
  EXPECT_EQ(r.eval("req.cook_names"), "x,y,x,z");
  EXPECT_EQ(r.eval("req.cook_names(;)"), "x;y;x;z");
  EXPECT_EQ(r.all("cook(x)"), "1|\"3\"");
  EXPECT_EQ(r.eval("cook_val(z)"), "4");
  Req e("/", {{"Host", "h"}, {"Cookie", "=v; a=b"}});
  EXPECT_EQ(e.eval("req.cook"), "v");
  EXPECT_EQ(e.eval("req.cook_cnt"), "2");
  EXPECT_EQ(e.eval("req.cook_names"), "a");
  EXPECT_EQ(e.eval("req.cook_cnt(x)"), "0");
}

TEST(SampleFetchHttp, ResponseFields) {
  Req r("/", {});
  r.rs = {{"Set-Cookie", "SID=abc; Path=/; a=b"}, {"Set-Cookie", "t=1"}, {"X", "1, 2"}};
  r.ctx.res.status = 302;
  r.ctx.res.version = "HTTP/1.0";
  EXPECT_EQ(r.eval("status"), "302");
  EXPECT_EQ(r.eval("txn.status"), "302");
  EXPECT_EQ(r.eval("res.ver"), "1.0");
  EXPECT_EQ(r.eval("capture.res.ver"), "HTTP/1.0");
  EXPECT_EQ(r.eval("res.cook(SID)"), "abc");
  EXPECT_EQ(r.eval("scook(a)"), "<none>");   // an attribute, not a cookie
  EXPECT_EQ(r.eval("res.cook_cnt"), "2");
  EXPECT_EQ(r.eval("res.cook_names"), "SID,t");
  EXPECT_EQ(r.eval("shdr(x)"), "2");
  EXPECT_EQ(r.eval("res.hdr_cnt(x)"), "2");
  EXPECT_EQ(r.eval("res.fhdr(x)"), "1, 2");
  EXPECT_EQ(r.eval("res.hdr_names"), "set-cookie,set-cookie,x");
  EXPECT_EQ(parse_error("set-cookie(a)"), "unknown fetch method 'set-cookie'");
}

TEST(SampleFetchHttp, BodiesAndTheirParams) {
  Req r("/", {{"Content-Length", "16"}});
  r.ctx.req.body = "k=v1&z&K=v2&k=v3";
  EXPECT_EQ(r.eval("req.body"), "k=v1&z&K=v2&k=v3");
  EXPECT_EQ(r.eval("req.body_param(k)"), "v1");   // haproxy
  EXPECT_EQ(r.eval("req.body_param"), "v1");      // haproxy
  EXPECT_EQ(r.eval("req.body_param(K,i)"), "v1"); // haproxy
  EXPECT_EQ(r.eval("req.body_param(K)"), "v2");
  EXPECT_EQ(r.all("req.body_param(k)"), "v1|v3");
  EXPECT_EQ(r.eval("req.body_size"), "16");
  EXPECT_EQ(r.eval("req.body_len"), "16");
  r.ctx.req.body_final = false;
  r.ctx.req.body = "k=v";
  Sample s;
  ParseCtx pc;
  auto e = Expr::parse("req.body_len", pc);
  ASSERT_TRUE(e->eval(r.ctx, s));
  EXPECT_EQ(s.sint, 3);
  EXPECT_TRUE(s.flags & kMayChange);
  EXPECT_EQ(r.eval("req.body_size"), "16");
}

TEST(SampleFetchHttp, DeclaresWhatItReads) {
  EXPECT_EQ(find_fetch("method")->out, Type::kMeth);
  EXPECT_EQ(find_fetch("method")->match, "meth");
  EXPECT_EQ(find_fetch("hdr_ip")->match, "ip");
  EXPECT_EQ(find_fetch("req.body")->use & kUseHttpReqBody, kUseHttpReqBody);
  EXPECT_EQ(find_fetch("res.hdr")->use, kUseHttpRes);
  ParseCtx pc;
  pc.avail = kAtHttpRequest;
  auto e = Expr::parse("res.hdr(x)", pc);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message,
            "sample fetch <res.hdr> may not be reliably used here because it needs 'HTTP "
            "response headers' which is not available here");
}

}  // namespace
}  // namespace sluice::sample

// Cookie persistence on header lists (proxy/cookie.h), against what HAProxy 3.5 does with the
// same fields (verified side by side).
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include "proxy/cookie.h"

namespace sluice::proxy {
namespace {

struct States final : ServerStates {
  std::vector<bool> up{true, true};
  bool running(int i) const override { return up[static_cast<std::size_t>(i)]; }
};

CookieSettings settings(CookieSettings::Mode m, bool indirect = false) {
  CookieSettings c;
  c.name = "SRV";
  c.mode = m;
  c.indirect = indirect;
  c.server_cookies = {"A", "B"};
  return c;
}

std::vector<http::Header> req(std::string_view cookie) { return {{"host", "x"}, {"cookie", cookie}}; }

TEST(CookieRequest, InsertIndirect) {
  auto c = settings(CookieSettings::Mode::kInsert, true);
  States st;
  http::StringStore store;
  CookieRequest in;
  in.ck = &c;
  CookieTxn t;
  auto h = req("x=1; SRV=B; y=2");
  EXPECT_TRUE(request_cookies(in, st, h, store, t));
  EXPECT_EQ(t.ck, 'V');
  EXPECT_EQ(t.server, 1);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[1].value, "x=1; y=2");
  t.reset();
  h = req("SRV=A");
  request_cookies(in, st, h, store, t);
  EXPECT_EQ(h.size(), 1u);   // the field goes with its only cookie
  t.reset();
  h = req("SRV=Z");
  request_cookies(in, st, h, store, t);
  EXPECT_EQ(t.ck, 'I');
  EXPECT_EQ(t.server, -1);
  t.reset();
  h = req("x=1, SRV=A");   // ',' separates request cookies too
  request_cookies(in, st, h, store, t);
  EXPECT_EQ(t.ck, 'V');
  EXPECT_EQ(h[1].value, "x=1");
  t.reset();
  h = req("SRVX=A; $Path=/; SRV=\"A\"");
  request_cookies(in, st, h, store, t);
  EXPECT_EQ(t.ck, 'I');
}

TEST(CookieRequest, DownPersistForceIgnore) {
  auto c = settings(CookieSettings::Mode::kInsert, true);
  States st;
  st.up[0] = false;
  http::StringStore store;
  CookieRequest in;
  in.ck = &c;
  CookieTxn t;
  auto h = req("SRV=A");
  request_cookies(in, st, h, store, t);
  EXPECT_EQ(t.ck, 'D');
  EXPECT_EQ(t.server, -1);
  t.reset();
  in.persist = true;
  h = req("SRV=A");
  request_cookies(in, st, h, store, t);
  EXPECT_EQ(t.ck, 'D');
  EXPECT_EQ(t.server, 0);
  in.persist = false;
  t.reset();
  t.force = true;
  h = req("SRV=A");
  request_cookies(in, st, h, store, t);
  EXPECT_EQ(t.server, 0);
  t.reset();
  t.ignore = true;
  h = req("SRV=B");
  request_cookies(in, st, h, store, t);
  EXPECT_EQ(t.ck, 'U');
  EXPECT_EQ(t.server, -1);
}

TEST(CookieRequest, PrefixStripsAndRewriteKeeps) {
  auto c = settings(CookieSettings::Mode::kPrefix);
  States st;
  http::StringStore store;
  CookieRequest in;
  in.ck = &c;
  CookieTxn t;
  auto h = req("a=1; SRV=A~xyz; b=2");
  EXPECT_TRUE(request_cookies(in, st, h, store, t));
  EXPECT_EQ(t.ck, 'V');
  EXPECT_EQ(h[1].value, "a=1; SRV=xyz; b=2");
  auto rw = settings(CookieSettings::Mode::kRewrite);
  in.ck = &rw;
  t.reset();
  h = req("SRV=B~xyz");
  EXPECT_FALSE(request_cookies(in, st, h, store, t));
  EXPECT_EQ(t.ck, 'I');
}

TEST(CookieRequest, Capture) {
  States st;
  http::StringStore store;
  CookieRequest in;
  in.capture = "SRV";
  in.capture_len = 5;
  CookieTxn t;
  auto h = req("a=1; SRVID=abcdef; SRV=B");
  EXPECT_FALSE(request_cookies(in, st, h, store, t));
  EXPECT_TRUE(t.has_cli);
  EXPECT_EQ(t.cli, "SRVID");
}

TEST(CookieDates, Base64AndExpiry) {
  char d[5];
  s30_to_b64(449133430, d);
  EXPECT_EQ(std::string(d, 5), "axTt2");
  EXPECT_EQ(b64_to_s30("axTt2"), 449133430);
  auto c = settings(CookieSettings::Mode::kInsert, true);
  c.maxidle_s = 1800;
  States st;
  http::StringStore store;
  CookieRequest in;
  in.ck = &c;
  in.now_s = 1796533720;
  CookieTxn t;
  auto h = req("SRV=A|aaaaa");
  request_cookies(in, st, h, store, t);
  EXPECT_EQ(t.ck, 'E');
  EXPECT_EQ(t.server, -1);
  t.reset();
  h = req("SRV=A|axTt2");
  request_cookies(in, st, h, store, t);
  EXPECT_EQ(t.ck, 'V');
  EXPECT_EQ(t.last_date, 449133430u << 2);
}

TEST(CookieResponse, InsertAttributesAndDates) {
  auto c = settings(CookieSettings::Mode::kInsert);
  c.maxidle_s = 1800;
  c.maxlife_s = 7200;
  c.domain = ".example.com; domain=.foo.org";
  c.httponly = c.secure = true;
  c.attrs = "SameSite=Lax; Partitioned";
  http::StringStore store;
  CookieResponse in;
  in.ck = &c;
  in.server = 0;
  in.status = 200;
  in.now_s = 1796533720;
  CookieTxn t;
  std::vector<http::Header> h = {{"content-length", "6"}};
  EXPECT_TRUE(response_cookies(in, h, store, t));
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[1].value, "SRV=A|axTt2|axTt2; path=/; domain=.example.com; domain=.foo.org; HttpOnly; "
                        "Secure; SameSite=Lax; Partitioned");
  EXPECT_EQ(t.sck, 'I');
}

TEST(CookieResponse, DeleteRewritePrefixAndNocache) {
  http::StringStore store;
  CookieTxn t;
  auto ins = settings(CookieSettings::Mode::kInsert);
  ins.nocache = true;
  CookieResponse in;
  in.ck = &ins;
  in.server = 0;
  in.direct = true;
  in.status = 200;
  std::vector<http::Header> h = {{"set-cookie", "SRV=foo; path=/"}};
  response_cookies(in, h, store, t);
  EXPECT_TRUE(h.empty());
  EXPECT_EQ(t.sck, 'D');
  // Not direct: ours replaces the server's; cacheable GET with Expires gets cache-control.
  t.reset();
  t.cacheable = true;
  in.direct = false;
  h = {{"expires", "Thu"}, {"set-cookie", "SRV=foo"}};
  response_cookies(in, h, store, t);
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[1].value, "SRV=A; path=/");
  EXPECT_EQ(h[2].name, "cache-control");
  EXPECT_EQ(h[2].value, "private");
  EXPECT_EQ(t.sck, 'I');
  // Without freshness nor validator, HAProxy adds nothing.
  t.reset();
  t.cacheable = true;
  h = {};
  response_cookies(in, h, store, t);
  EXPECT_EQ(h.size(), 1u);
  auto rw = settings(CookieSettings::Mode::kRewrite);
  in.ck = &rw;
  t.reset();
  h = {{"set-cookie", "SRV=foo; path=/"}};
  response_cookies(in, h, store, t);
  EXPECT_EQ(h[0].value, "SRV=A; path=/");
  EXPECT_EQ(t.sck, 'R');
  auto px = settings(CookieSettings::Mode::kPrefix);
  in.ck = &px;
  t.reset();
  h = {{"set-cookie", "SRV=foo"}, {"set-cookie", "x=1, SRV=foo"}};
  response_cookies(in, h, store, t);
  EXPECT_EQ(h[0].value, "SRV=A~foo");
  EXPECT_EQ(h[1].value, "x=1, SRV=foo");   // one cookie per Set-Cookie: this one is `x`
}

TEST(CookieDynamic, HaproxyValue) {
  in_addr a;
  inet_pton(AF_INET, "127.0.0.1", &a);
  EXPECT_EQ(dynamic_cookie("mykey", &a, 4, 20089), "e17dc4ed342621ba");
}

}  // namespace
}  // namespace sluice::proxy

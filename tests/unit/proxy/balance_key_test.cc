// What the hashing balance algorithms hash: uri's options, hdr's use_domain_only, and the
// expression-based algorithms' binary keys.
#include <gtest/gtest.h>

#include "proxy/balance_key.h"

namespace sluice::proxy {
namespace {

lb::BalanceSettings uri(int len = 0, int depth = 0, bool whole = false, bool path_only = false) {
  lb::BalanceSettings b;
  b.kind = lb::BalanceKind::kUri;
  b.uri_len = len;
  b.uri_depth = depth;
  b.uri_whole = whole;
  b.uri_path_only = path_only;
  return b;
}

TEST(BalanceKey, UriOptions) {
  EXPECT_EQ(uri_hash_part("/a/b/c?x=1", uri()), "/a/b/c");
  EXPECT_EQ(uri_hash_part("/a/b/c?x=1", uri(0, 0, true)), "/a/b/c?x=1");
  // depth N keeps N directory levels; len cuts first.
  EXPECT_EQ(uri_hash_part("/a/b/c/d", uri(0, 1)), "/a");
  EXPECT_EQ(uri_hash_part("/a/b/c/d", uri(0, 3)), "/a/b/c");
  EXPECT_EQ(uri_hash_part("/a/b/c/d", uri(0, 9)), "/a/b/c/d");
  EXPECT_EQ(uri_hash_part("/abcdef/g", uri(3)), "/ab");
  EXPECT_EQ(uri_hash_part("/a/bcdef/g", uri(4, 1)), "/a");
  EXPECT_EQ(uri_hash_part("/ab?cd", uri(5, 0, true)), "/ab?c");
  // absolute-form: the authority is part of the URI unless path-only
  EXPECT_EQ(uri_hash_part("http://h.example/p/q?x", uri()), "http://h.example/p/q");
  EXPECT_EQ(uri_hash_part("http://h.example/p/q?x", uri(0, 0, false, true)), "/p/q");
  EXPECT_EQ(uri_hash_part("http://h.example", uri(0, 0, false, true)), "");
  EXPECT_EQ(uri_hash_part("*", uri(0, 0, false, true)), "*");
}

TEST(BalanceKey, DomainOnly) {
  EXPECT_EQ(domain_only("haproxy.1wt.eu"), "1wt");
  EXPECT_EQ(domain_only("1wt.eu"), "1wt");
  EXPECT_EQ(domain_only("www.example.com:8080"), "example");
  EXPECT_EQ(domain_only("localhost"), "localhost");
  EXPECT_EQ(domain_only(".eu"), ".eu");
  EXPECT_EQ(domain_only("a..b"), "a.");
  EXPECT_EQ(domain_only("host."), "host");
  EXPECT_EQ(domain_only(""), "");
}

TEST(BalanceKey, HeaderAndExpressions) {
  lb::BalanceSettings b;
  b.kind = lb::BalanceKind::kHdr;
  b.hdr_name = "host";
  std::vector<http::Header> hs = {{"X-A", "1"}, {"Host", "www.1wt.eu"}, {"host", "other"}};
  rules::RequestView v;
  std::string out;
  ASSERT_TRUE(http_key(b, nullptr, "/", hs, v, out));
  EXPECT_EQ(out, "www.1wt.eu");   // the first field
  b.hdr_domain_only = true;
  ASSERT_TRUE(http_key(b, nullptr, "/", hs, v, out));
  EXPECT_EQ(out, "1wt");
  b.hdr_name = "x-missing";
  EXPECT_FALSE(http_key(b, nullptr, "/", hs, v, out));
  std::vector<http::Header> empty = {{"X-Missing", ""}};
  EXPECT_FALSE(http_key(b, nullptr, "/", empty, v, out));

  // An integer hashes as HAProxy's binary cast: 8 bytes in network order.
  b.kind = lb::BalanceKind::kHash;
  auto e = sample::Expr::parse("int(258)", sample::ParseCtx{});
  ASSERT_TRUE(e.ok());
  ASSERT_TRUE(http_key(b, &e.value(), "/", hs, v, out));
  EXPECT_EQ(out, std::string("\0\0\0\0\0\0\x01\x02", 8));
  auto s = sample::Expr::parse("str(Ab),lower", sample::ParseCtx{});
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(http_key(b, &s.value(), "/", hs, v, out));
  EXPECT_EQ(out, "ab");
  // No sample: no key, the algorithm falls back to round robin.
  auto none = sample::Expr::parse("var(txn.nothing)", sample::ParseCtx{});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(http_key(b, &none.value(), "/", hs, v, out));
  EXPECT_FALSE(http_key(b, nullptr, "/", hs, v, out));
}

}  // namespace
}  // namespace sluice::proxy

// `http-request normalize-uri`: each normalizer on the targets measured on HAProxy 3.5.
#include <gtest/gtest.h>

#include <string>

#include "rules/normalize_uri.h"

namespace sluice::rules {
namespace {

std::string norm(std::string_view name, std::string_view target, bool option = false) {
  const Normalizer* n = find_normalizer(name);
  EXPECT_NE(n, nullptr) << name;
  std::string out;
  if (!n || !normalize_uri(n->kind, option, target, &out)) return "<400>";
  return out;
}

TEST(NormalizeUri, Paths) {
  EXPECT_EQ(norm("path-merge-slashes", "/m//a///b/?x=//y"), "/m/a/b/?x=//y");
  EXPECT_EQ(norm("path-strip-dot", "/./a/./b/."), "/a/b/");
  EXPECT_EQ(norm("path-strip-dot", "/a/.b/./"), "/a/.b/");
  EXPECT_EQ(norm("path-strip-dot", "/."), "/");
  EXPECT_EQ(norm("path-strip-dot", "/a/.?x=/./"), "/a/?x=/./");
  EXPECT_EQ(norm("path-strip-dotdot", "/a/../b/../../c"), "/../c");
  EXPECT_EQ(norm("path-strip-dotdot", "/../x"), "/../x");
  EXPECT_EQ(norm("path-strip-dotdot", "/a/b/.."), "/a/");
  EXPECT_EQ(norm("path-strip-dotdot", "/a/b/../"), "/a/");
  EXPECT_EQ(norm("path-strip-dotdot", "/a/./../b"), "/a/b");
  EXPECT_EQ(norm("path-strip-dotdot", "/a/.."), "/");
  EXPECT_EQ(norm("path-strip-dotdot", "/.."), "/../");
  EXPECT_EQ(norm("path-strip-dotdot", "/a/b/c/../../d?x=/../"), "/a/d?x=/../");
  EXPECT_EQ(norm("path-strip-dotdot", "/../x/../../y", true), "/y");
}

TEST(NormalizeUri, PercentEncoding) {
  EXPECT_EQ(norm("percent-decode-unreserved", "/%41%2f%7e%7E%2D%5F%2e"), "/A%2f~~-_.");
  EXPECT_EQ(norm("percent-decode-unreserved", "/%41%zz"), "/A%zz");
  EXPECT_EQ(norm("percent-decode-unreserved", "/%4"), "/%4");
  EXPECT_EQ(norm("percent-decode-unreserved", "/x?%41=%7e"), "/x?A=~");
  EXPECT_EQ(norm("percent-decode-unreserved", "/%25%41"), "/%25A");
  EXPECT_EQ(norm("percent-decode-unreserved", "/%41%zz", true), "<400>");
  EXPECT_EQ(norm("percent-to-uppercase", "/%aa%2f"), "/%AA%2F");
  EXPECT_EQ(norm("percent-to-uppercase", "/%aa%zZ"), "/%AA%zZ");
  EXPECT_EQ(norm("percent-to-uppercase", "/x?%ab"), "/x?%AB");
  EXPECT_EQ(norm("percent-to-uppercase", "/%aa%zz", true), "<400>");
}

TEST(NormalizeUri, QueryAndFragment) {
  EXPECT_EQ(norm("query-sort-by-name", "/q?c=3&a=1&b=2&a=0&=z&c"), "/q?=z&a=1&a=0&b=2&c=3&c");
  EXPECT_EQ(norm("query-sort-by-name", "/q?"), "/q?");
  EXPECT_EQ(norm("query-sort-by-name", "/q?b&a"), "/q?a&b");
  EXPECT_EQ(norm("query-sort-by-name", "/q"), "/q");
  EXPECT_EQ(norm("fragment-strip", "/x?a#frag"), "/x?a");
  EXPECT_EQ(norm("fragment-encode", "/x#y#z"), "/x%23y%23z");
  EXPECT_EQ(find_normalizer("foo"), nullptr);
}

}  // namespace
}  // namespace sluice::rules

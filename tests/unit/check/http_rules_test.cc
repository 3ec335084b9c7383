// http-check's request and verdicts, on sluice's HTTP parser.
#include <gtest/gtest.h>

#include "check/rules.h"

namespace sluice::check {
namespace {

CheckRule http_expect(CheckRule::Match m, std::string pattern) {
  CheckRule r;
  r.kind = CheckRule::Kind::kExpect;
  r.match = m;
  r.pattern = pattern;
  r.bytes = pattern;
  return r;
}

TEST(HttpRules, Request) {
  CheckRule s;
  s.kind = CheckRule::Kind::kSend;
  s.http = true;
  s.method = "OPTIONS";
  s.uri = "/";
  s.version = "HTTP/1.0";
  auto render = [](int) { return std::string("x"); };
  EXPECT_EQ(http_request(s, render, ""), "OPTIONS / HTTP/1.0\r\n\r\n");
  s.method = "GET";
  s.version = "HTTP/1.1";
  s.fields = {{"Host", "a.example", -1}, {"X-Y", "", 0}};
  s.body = "abc";
  EXPECT_EQ(http_request(s, render, "UP 1/1"),
            "GET / HTTP/1.1\r\nx-haproxy-server-state: UP 1/1\r\nhost: a.example\r\nx-y: x\r\n"
            "content-length: 3\r\nconnection: close\r\n\r\nabc");
}

TEST(HttpRules, Expect) {
  using M = CheckRule::Match;
  using V = ExpectVerdict;
  const std::string ok = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b, c\r\n\r\nhello";
  HttpOutcome o;
  EXPECT_EQ(evaluate_http_expect(http_expect(M::kStatus, "200-299"), "HTTP/1.1 200", false, "GET", "", &o),
            V::kWait);
  EXPECT_EQ(evaluate_http_expect(http_expect(M::kStatus, "200-299,304"), ok, false, "GET", "", &o), V::kPass);
  EXPECT_EQ(o.code, 200);
  EXPECT_EQ(evaluate_http_expect(http_expect(M::kStatus, "404"), ok, false, "GET", "", &o), V::kFail);
  EXPECT_EQ(o.status, lb::CheckStatus::kL7Sts);
  EXPECT_EQ(o.info, "OK");
  // The body: waited for until its length, judged when it is all there or the server closed.
  EXPECT_EQ(evaluate_http_expect(http_expect(M::kBody, "llo"), ok.substr(0, ok.size() - 2), false, "GET", "", &o),
            V::kWait);
  EXPECT_EQ(evaluate_http_expect(http_expect(M::kBody, "llo"), ok, false, "GET", "", &o), V::kPass);
  EXPECT_EQ(evaluate_http_expect(http_expect(M::kBody, "world"), ok, false, "GET", "", &o), V::kFail);
  EXPECT_EQ(o.status, lb::CheckStatus::kL7Rsp);
  EXPECT_EQ(o.info, "HTTP content check did not match");
  EXPECT_EQ(evaluate_http_expect(http_expect(M::kBody, "hel"),
                                 "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n0\r\n\r\n",
                                 false, "GET", "", &o),
            V::kPass);
  // hdr: each comma-separated value; fhdr: the whole line.
  CheckRule h = http_expect(M::kHdr, "x-a");
  h.hdr_name = "X-A";
  h.has_value = true;
  h.bytes = "c";
  EXPECT_EQ(evaluate_http_expect(h, ok, false, "GET", "", &o), V::kPass);
  h.match = M::kFhdr;
  EXPECT_EQ(evaluate_http_expect(h, ok, false, "GET", "", &o), V::kFail);
  h.bytes = "b, c";
  EXPECT_EQ(evaluate_http_expect(h, ok, false, "GET", "", &o), V::kPass);
  // Not HTTP: a socket error, as HAProxy reports it.
  EXPECT_EQ(evaluate_http_expect(http_expect(M::kStatus, "200"), "garbage\r\n\r\n", false, "GET", "", &o),
            V::kFail);
  EXPECT_EQ(o.status, lb::CheckStatus::kSockErr);
  EXPECT_TRUE(status_matches(304, "200-299,304"));
  EXPECT_FALSE(status_matches(305, "200-299,304"));
}

}  // namespace
}  // namespace sluice::check

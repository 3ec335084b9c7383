// HTTP check request building and response judgement (src/check/http_check.h).
#include <gtest/gtest.h>

#include "check/http_check.h"

namespace sluice::check {
namespace {

using lb::CheckStatus;

HttpExpect expect(HttpExpect::Kind k, std::string arg = "", bool neg = false) {
  HttpExpect e;
  e.kind = k;
  e.arg = std::move(arg);
  e.negate = neg;
  return e;
}

TEST(HttpRequest, DefaultIsOptionsHttp10) {
  EXPECT_EQ(build_request({}), "OPTIONS / HTTP/1.0\r\nConnection: close\r\n\r\n");
}

TEST(HttpRequest, HeadersAndBody) {
  HttpRequestSpec s;
  s.method = "POST";
  s.uri = "/health";
  s.version = "HTTP/1.1";
  s.headers = {{"Host", "example.com"}};
  s.body = "ping";
  EXPECT_EQ(build_request(s),
            "POST /health HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n"
            "Content-Length: 4\r\n\r\nping");
}

TEST(HttpResponse, NeedsAWholeStatusLine) {
  auto v = evaluate_response("HTTP/1.1 200", false, {});
  EXPECT_FALSE(v.done);
}

TEST(HttpResponse, DefaultAccepts2xxAnd3xx) {
  auto v = evaluate_response("HTTP/1.1 200 OK\r\n", false, {});
  ASSERT_TRUE(v.done);
  EXPECT_EQ(v.status, CheckStatus::kL7Ok);
  EXPECT_EQ(v.code, 200);
  EXPECT_EQ(v.text, "OK");
  v = evaluate_response("HTTP/1.0 302 Found\r\n\r\n", true, {});
  EXPECT_EQ(v.status, CheckStatus::kL7Ok);
  v = evaluate_response("HTTP/1.0 500 Internal Server Error\r\n\r\n", true, {});
  EXPECT_EQ(v.status, CheckStatus::kL7Sts);
  EXPECT_EQ(v.code, 500);
  EXPECT_EQ(v.text, "Internal Server Error");
  v = evaluate_response("HTTP/1.1 404 Not Found\r\n", false, {});
  EXPECT_EQ(v.status, CheckStatus::kL7Sts);
}

TEST(HttpResponse, GarbageIsL7Rsp) {
  auto v = evaluate_response("SSH-2.0-OpenSSH\r\n", false, {});
  ASSERT_TRUE(v.done);
  EXPECT_EQ(v.status, CheckStatus::kL7Rsp);
  v = evaluate_response("HTTP/1.1 2x0 OK\r\n", false, {});
  EXPECT_EQ(v.status, CheckStatus::kL7Rsp);
  v = evaluate_response("", true, {});
  EXPECT_EQ(v.status, CheckStatus::kL7Rsp);
  v = evaluate_response("HTTP/1.1 200", true, {});   // closed before the end of the line
  EXPECT_EQ(v.status, CheckStatus::kL7Rsp);
}

TEST(HttpResponse, ExpectStatusList) {
  auto e = expect(HttpExpect::Kind::kStatus, "200,204-206");
  EXPECT_EQ(evaluate_response("HTTP/1.1 205 X\r\n", false, e).status, CheckStatus::kL7Ok);
  EXPECT_EQ(evaluate_response("HTTP/1.1 301 X\r\n", false, e).status, CheckStatus::kL7Sts);
  auto n = expect(HttpExpect::Kind::kStatus, "500", true);
  EXPECT_EQ(evaluate_response("HTTP/1.1 200 OK\r\n", false, n).status, CheckStatus::kL7Ok);
  EXPECT_EQ(evaluate_response("HTTP/1.1 500 X\r\n", false, n).status, CheckStatus::kL7Sts);
}

TEST(HttpResponse, ExpectRstatus) {
  auto e = expect(HttpExpect::Kind::kRstatus, "^(2|4)");
  EXPECT_EQ(evaluate_response("HTTP/1.1 404 X\r\n", false, e).status, CheckStatus::kL7Ok);
  EXPECT_EQ(evaluate_response("HTTP/1.1 500 X\r\n", false, e).status, CheckStatus::kL7Sts);
}

TEST(HttpResponse, ExpectStringReadsTheBody) {
  auto e = expect(HttpExpect::Kind::kString, "alive");
  EXPECT_FALSE(evaluate_response("HTTP/1.1 200 OK\r\nX: y\r\n", false, e).done);
  EXPECT_FALSE(evaluate_response("HTTP/1.1 200 OK\r\n\r\nal", false, e).done);
  auto v = evaluate_response("HTTP/1.1 200 OK\r\n\r\nI am alive\n", false, e);
  EXPECT_EQ(v.status, CheckStatus::kL7Ok);
  v = evaluate_response("HTTP/1.1 200 OK\r\n\r\nI am dead\n", true, e);
  EXPECT_EQ(v.status, CheckStatus::kL7Rsp);
  // Content-Length says the body is complete without waiting for the close.
  v = evaluate_response("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nnope!", false, e);
  ASSERT_TRUE(v.done);
  EXPECT_EQ(v.status, CheckStatus::kL7Rsp);
  // Any status passes when the string is there (HAProxy: string matches ignore the status).
  v = evaluate_response("HTTP/1.1 503 X\r\n\r\nalive", true, e);
  EXPECT_EQ(v.status, CheckStatus::kL7Ok);
}

TEST(HttpResponse, ExpectNotString) {
  auto e = expect(HttpExpect::Kind::kString, "maintenance", true);
  EXPECT_EQ(evaluate_response("HTTP/1.1 200 OK\r\n\r\nfine", true, e).status, CheckStatus::kL7Ok);
  EXPECT_EQ(evaluate_response("HTTP/1.1 200 OK\r\n\r\nmaintenance", false, e).status,
            CheckStatus::kL7Rsp);
}

TEST(StatusList, Matches) {
  EXPECT_TRUE(status_matches(200, "200"));
  EXPECT_TRUE(status_matches(302, "200-299,302"));
  EXPECT_FALSE(status_matches(301, "200-299,302"));
  EXPECT_FALSE(status_matches(200, ""));
  EXPECT_FALSE(status_matches(200, "abc"));
}

}  // namespace
}  // namespace sluice::check

// Health-check keywords: server check options, default-server, option httpchk / tcp-check,
// http-check send/expect, timeout check, and the "neither service port nor check port" error.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/loader.h"
#include "parse_run.h"

namespace sluice::config {
namespace {

using testing::parse;
using testing::Run;

const ProxyConfig& proxy(const Run& r, const std::string& name) {
  for (const auto& p : r.r.model->proxies)
    if (p.name == name) return p;
  throw std::runtime_error("no proxy " + name);
}

TEST(CheckKeywords, ServerOptionsAndDefaults) {
  auto r = parse(
      "backend b\n"
      "  server s1 127.0.0.1:80 check\n"
      "  server s2 127.0.0.1:81 check inter 500ms fastinter 100 downinter 5s rise 3 fall 1 port 8080 addr 127.0.0.2\n"
      "  server s3 127.0.0.1:82\n"
      "  server s4 127.0.0.1:83 check on-marked-down shutdown-sessions\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& s = proxy(r, "b").servers;
  EXPECT_TRUE(s[0].check);
  EXPECT_EQ(s[0].inter_ms, 2000u);
  EXPECT_EQ(s[0].rise, 2);
  EXPECT_EQ(s[0].fall, 3);
  EXPECT_EQ(s[0].fastinter_ms, 0u);
  EXPECT_EQ(s[1].inter_ms, 500u);
  EXPECT_EQ(s[1].fastinter_ms, 100u);
  EXPECT_EQ(s[1].downinter_ms, 5000u);
  EXPECT_EQ(s[1].rise, 3);
  EXPECT_EQ(s[1].fall, 1);
  EXPECT_EQ(s[1].check_port, 8080);
  EXPECT_TRUE(s[1].has_check_addr);
  EXPECT_EQ(s[1].check_addr.host_string(), "127.0.0.2");
  EXPECT_FALSE(s[2].check);
  EXPECT_TRUE(s[3].shutdown_on_down);
  EXPECT_FALSE(s[0].shutdown_on_down);
}

TEST(CheckKeywords, DefaultServerAppliesToLaterServers) {
  auto r = parse(
      "defaults\n"
      "  default-server inter 3s fall 5\n"
      "backend b\n"
      "  server s0 127.0.0.1:79\n"
      "  default-server check rise 4\n"
      "  server s1 127.0.0.1:80\n"
      "  server s2 127.0.0.1:81 no-check weight 7\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& s = proxy(r, "b").servers;
  EXPECT_FALSE(s[0].check);
  EXPECT_EQ(s[0].inter_ms, 3000u);
  EXPECT_EQ(s[0].fall, 5);
  EXPECT_TRUE(s[1].check);
  EXPECT_EQ(s[1].rise, 4);
  EXPECT_EQ(s[1].inter_ms, 3000u);
  EXPECT_FALSE(s[2].check);
  EXPECT_EQ(s[2].weight, 7);
}

TEST(CheckKeywords, Errors) {
  EXPECT_TRUE(parse("backend b\n  server s 1.1.1.1:1 rise 0\n").contains("'rise' has to be > 0"));
  EXPECT_TRUE(parse("backend b\n  server s 1.1.1.1:1 inter 0\n").contains("'inter' expects a strictly positive delay"));
  EXPECT_TRUE(parse("backend b\n  server s 1.1.1.1:1 inter 1x\n").contains("unexpected character 'x'"));
  EXPECT_TRUE(parse("backend b\n  server s 1.1.1.1:1 port 70000\n").contains("'port' expects a valid port"));
  EXPECT_TRUE(parse("backend b\n  server s 1.1.1.1:1 on-marked-down foo\n").contains("'on-marked-down' expects 'shutdown-sessions' but got 'foo'."));
  EXPECT_TRUE(parse("backend b\n  server s 1.1.1.1:1 agent-check\n").contains("'agent-check' is not supported by sluice yet."));
}

TEST(CheckKeywords, NeitherServicePortNorCheckPort) {
  auto r = parse("listen l\n  server s9 127.0.0.1 check\n");
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.contains("proxy 'l': server 's9' has neither service port nor check port.")) << r.all();
  auto ok = parse("listen l\n  server s9 127.0.0.1 check port 80\n");
  EXPECT_TRUE(ok.r.model) << ok.all();
  EXPECT_TRUE(parse("listen l\n  server s9 127.0.0.1\n").r.model);
}

TEST(CheckKeywords, OptionHttpchk) {
  auto r = parse(
      "backend a\n  option httpchk\n"
      "backend b\n  option httpchk /health\n"
      "backend c\n  option httpchk GET /h HTTP/1.1 example.com\n"
      "backend d\n  option httpchk\n  option tcp-check\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& a = proxy(r, "a");
  EXPECT_EQ(a.check_type, ProxyConfig::CheckType::kHttp);
  EXPECT_EQ(a.http_check.method, "OPTIONS");
  EXPECT_EQ(a.http_check.uri, "/");
  EXPECT_EQ(a.http_check.version, "HTTP/1.0");
  EXPECT_EQ(proxy(r, "b").http_check.uri, "/health");
  EXPECT_EQ(proxy(r, "b").http_check.method, "OPTIONS");
  const auto& c = proxy(r, "c");
  EXPECT_EQ(c.http_check.method, "GET");
  EXPECT_EQ(c.http_check.version, "HTTP/1.1");
  ASSERT_EQ(c.http_check.headers.size(), 1u);
  EXPECT_EQ(c.http_check.headers[0].second, "example.com");
  EXPECT_EQ(proxy(r, "d").check_type, ProxyConfig::CheckType::kTcp);
}

TEST(CheckKeywords, HttpCheckSendAndExpect) {
  auto r = parse(
      "backend b\n  option httpchk\n"
      "  http-check send meth GET uri /status ver HTTP/1.1 hdr Host x.example\n"
      "  http-check expect ! string maintenance\n"
      "backend c\n  http-check expect rstatus ^2\n"
      "backend d\n  http-check expect status 200-299,304\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& b = proxy(r, "b").http_check;
  EXPECT_EQ(b.method, "GET");
  EXPECT_EQ(b.uri, "/status");
  EXPECT_EQ(b.version, "HTTP/1.1");
  ASSERT_EQ(b.headers.size(), 1u);
  EXPECT_EQ(b.headers[0].first, "Host");
  EXPECT_EQ(b.expect, HttpCheckConfig::Expect::kString);
  EXPECT_TRUE(b.expect_negate);
  EXPECT_EQ(b.expect_arg, "maintenance");
  EXPECT_EQ(proxy(r, "c").http_check.expect, HttpCheckConfig::Expect::kRstatus);
  EXPECT_EQ(proxy(r, "d").http_check.expect_arg, "200-299,304");
  EXPECT_TRUE(parse("backend b\n  http-check expect rstatus (\n").contains("invalid regex"));
  EXPECT_TRUE(parse("backend b\n  http-check expect foo bar\n").contains("unknown match 'foo'"));
  EXPECT_TRUE(parse("backend b\n  http-check send meth\n").contains("'meth' expects a value"));
  EXPECT_TRUE(parse("backend b\n  http-check disable-on-404\n").contains("'http-check disable-on-404' is not supported by sluice yet."));
}

TEST(CheckKeywords, TimeoutCheck) {
  auto r = parse("defaults\n  timeout check 750ms\nbackend b\n  server s 1.1.1.1:1\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(proxy(r, "b").timeouts.check, 750u);
}

}  // namespace
}  // namespace sluice::config

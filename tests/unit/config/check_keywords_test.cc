// Health-check keywords: server check options, default-server, option httpchk / tcp-check,
// http-check send/expect, timeout check, and the "neither service port nor check port" error.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "config/loader.h"
#include "parse_run.h"

namespace sluice::config {
namespace {

using testing::parse;
using testing::proxy;
using testing::Run;

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
}

// observe / error-limit / on-error: HAProxy 3.5's messages, double dots included.
TEST(CheckKeywords, ObserveOptions) {
  auto r = parse(
      "backend b\n"
      "  mode http\n"
      "  default-server observe layer7 error-limit 4\n"
      "  server s1 1.1.1.1:1 check\n"
      "  server s2 1.1.1.1:2 check observe layer4 on-error sudden-death\n"
      "  server s3 1.1.1.1:3 check observe none on-error mark-down\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.r.alerts, 0) << r.all();
  const auto& s = proxy(r, "b").servers;
  EXPECT_EQ(s[0].observe, 2);
  EXPECT_EQ(s[0].error_limit, 4);
  EXPECT_EQ(s[0].on_error, 1);   // fail-check, HAProxy's default
  EXPECT_EQ(s[1].observe, 1);
  EXPECT_EQ(s[1].on_error, 2);   // sudden-death
  EXPECT_EQ(s[2].observe, 0);
  EXPECT_EQ(s[2].on_error, 3);   // mark-down
  const std::string head = "[f.cfg:2] : 'server b/s' : ";
  EXPECT_TRUE(parse("backend b\n  server s 1.1.1.1:1 observe\n").has(head + "'observe' expects <mode> as argument.."));
  EXPECT_TRUE(parse("backend b\n  server s 1.1.1.1:1 observe foo\n").has(head + "'observe' expects one of 'none', 'layer4', 'layer7' but got 'foo'."));
  EXPECT_TRUE(parse("backend b\n  server s 1.1.1.1:1 error-limit\n").has(head + "'error-limit' expects an integer argument.."));
  for (const char* bad : {"0", "-1", "x"})
    EXPECT_TRUE(parse(std::string("backend b\n  server s 1.1.1.1:1 error-limit ") + bad + "\n").has(head + "error-limit has to be > 0.."));
  EXPECT_TRUE(parse("backend b\n  server s 1.1.1.1:1 on-error foo\n").has(head + "'on-error' expects one of 'fastinter', 'fail-check', 'sudden-death' or 'mark-down' but got 'foo'."));
  // layer7 in a TCP proxy: HAProxy's warning, and the server is not observed.
  auto tcp = parse("backend b\n  server s 1.1.1.1:1 check observe layer7\n");
  ASSERT_TRUE(tcp.r.model) << tcp.all();
  EXPECT_TRUE(tcp.has(head + "'layer7' can only be used in http proxies..")) << tcp.all();
  EXPECT_EQ(proxy(tcp, "b").servers[0].observe, 0);
  // Without a check nothing is observed (HAProxy is silent): a warning says so.
  auto unchecked = parse("backend b\n  server s 1.1.1.1:1 observe layer4\n");
  ASSERT_TRUE(unchecked.r.model) << unchecked.all();
  EXPECT_TRUE(unchecked.has(head + "'observe' has no effect without 'check'.")) << unchecked.all();
}

// socks4 / check-via-socks4: HAProxy 3.5's messages; sluice's own for what SOCKS4 cannot do.
TEST(CheckKeywords, Socks4Options) {
  auto r = parse("backend b\n  server s 1.1.1.1:1 socks4 127.0.0.1:1080 check check-via-socks4\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.r.alerts, 0) << r.all();
  const auto& s = proxy(r, "b").servers[0];
  EXPECT_TRUE(s.has_socks4);
  EXPECT_EQ(s.socks4.to_string(), "127.0.0.1:1080");
  EXPECT_TRUE(s.check_via_socks4);
  const std::string head = "[f.cfg:2] : 'server b/s' : ";
  EXPECT_TRUE(parse("backend b\n  server s 1.1.1.1:1 socks4\n").has(head + "'socks4' expects <addr>:<port> as argument.."));
  EXPECT_TRUE(parse("backend b\n  server s 1.1.1.1:1 socks4 127.0.0.1\n").has(head + "'socks4 127.0.0.1' : missing port specification in '127.0.0.1'."));
  EXPECT_TRUE(parse("backend b\n  server s [::1]:80 socks4 127.0.0.1:1080\n").has(head + "'socks4' : SOCKS4 can only reach an IPv4 address; the server's is '[::1]:80'."));
  auto v = parse("backend b\n  option tcp-check\n  tcp-check connect via-socks4\n"
                 "  server s 1.1.1.1:1 check\n  server t 1.1.1.1:1 check socks4 127.0.0.1:1080\n");
  ASSERT_TRUE(v.r.model) << v.all();
  EXPECT_TRUE(v.has("[f.cfg:4] : 'server b/s' : 'connect via-socks4' of the check rules has no "
                    "effect: the server has no 'socks4'."))
      << v.all();
  EXPECT_FALSE(v.contains("'server b/t' : 'connect via-socks4'")) << v.all();
  auto w = parse("backend b\n  server s 1.1.1.1:1 check check-via-socks4\n");
  ASSERT_TRUE(w.r.model) << w.all();
  EXPECT_TRUE(w.has(head + "'check-via-socks4' has no effect without 'socks4'.")) << w.all();
}

// Spec 3.1: characters after a valid unit only warn and the value is kept, as for `timeout`.
TEST(CheckKeywords, ServerTimeTrailingCharactersOnlyWarn) {
  auto r = parse(
      "backend b\n"
      "  default-server downinter 3sec\n"
      "  server s 1.1.1.1:1 inter 10sec fastinter 2msx slowstart 5sec\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.r.alerts, 0) << r.all();
  const auto& s = proxy(r, "b").servers[0];
  EXPECT_EQ(s.inter_ms, 10000u);
  EXPECT_EQ(s.fastinter_ms, 2u);
  EXPECT_EQ(s.downinter_ms, 3000u);
  EXPECT_EQ(s.slowstart_ms, 5000u);
  EXPECT_TRUE(r.has("unexpected character 'e' after the timer value '10sec', only "
                    "(us=microseconds,ms=milliseconds,s=seconds,m=minutes,h=hours,d=days) are "
                    "supported. This will be reported as an error in next versions."))
      << r.all();
  EXPECT_TRUE(r.contains("unexpected character 'x' after the timer value '2msx'")) << r.all();
  EXPECT_TRUE(r.contains("unexpected character 'e' after the timer value '3sec'")) << r.all();
  EXPECT_TRUE(r.contains("unexpected character 'e' after the timer value '5sec'")) << r.all();
  EXPECT_EQ(r.all().find('\0'), std::string::npos);
}

// Spec 3.1 (QUIRK): every check interval names 'agent-inter' and the text ends in "..".
TEST(CheckKeywords, ServerTimeBadCharacter) {
  for (std::string kw : {"inter", "fastinter", "downinter"}) {
    auto r = parse("backend b\n  server s7 1.1.1.1:1 " + kw + " 1x\n");
    EXPECT_FALSE(r.r.model);
    EXPECT_TRUE(r.has("[f.cfg:2] : 'server b/s7' : unexpected character 'x' in 'agent-inter' "
                      "argument of server s7.."))
        << kw << ": " << r.all();
  }
  auto ss = parse("backend b\n  server s7 1.1.1.1:1 slowstart 1x\n");
  EXPECT_TRUE(ss.has("[f.cfg:2] : 'server b/s7' : unexpected character 'x' in argument to <slowstart>."))
      << ss.all();
  auto sign = parse("backend b\n  server s7 1.1.1.1:1 inter -1\n");
  EXPECT_TRUE(sign.contains("unexpected character '-' in 'agent-inter'")) << sign.all();
}

// Spec 3.1: a unit-less check interval below 100 (milliseconds) warns; the value is kept.
TEST(CheckKeywords, ServerIntervalSuspiciouslySmall) {
  auto r = parse(
      "backend b\n"
      "  default-server fastinter 50\n"
      "  server s1 1.1.1.1:1 inter 10 downinter 99\n"
      "  server s2 1.1.1.1:1 inter 100 downinter 10ms slowstart 10\n");
  ASSERT_TRUE(r.r.model) << r.all();
  int small = 0;
  for (const auto& d : r.diags) small += d.text.find("suspiciously small") != std::string::npos;
  EXPECT_EQ(small, 3) << r.all();
  EXPECT_TRUE(r.has("[f.cfg:2] : 'default-server' : 'fastinter 50' in server '' is suspiciously "
                    "small for a value in milliseconds. Please use an explicit unit ('50ms') if "
                    "that was the intent."))
      << r.all();
  EXPECT_TRUE(r.has("[f.cfg:3] : 'server b/s1' : 'inter 10' in server 's1' is suspiciously small "
                    "for a value in milliseconds. Please use an explicit unit ('10ms') if that "
                    "was the intent."))
      << r.all();
  EXPECT_TRUE(r.contains("'downinter 99' in server 's1' is suspiciously small")) << r.all();
  EXPECT_EQ(proxy(r, "b").servers[0].inter_ms, 10u);
}

// Spec 1.4 (QUIRK): server `addr` is an address argument, so `$NAME` and `${NAME}` expand
// whatever the quoting, as in the server address.
TEST(CheckKeywords, AddrGetsAddressExpansion) {
  ::setenv("SLUICE_TEST_CHK_IP", "127.0.0.9", 1);
  auto r = parse(
      "backend b\n"
      "  server s1 1.1.1.1:1 addr $SLUICE_TEST_CHK_IP\n"
      "  server s2 1.1.1.1:1 addr '${SLUICE_TEST_CHK_IP}'\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& s = proxy(r, "b").servers;
  EXPECT_TRUE(s[0].has_check_addr);
  EXPECT_EQ(s[0].check_addr.to_string(), "127.0.0.9:0");
  EXPECT_EQ(s[1].check_addr.to_string(), "127.0.0.9:0");
  auto empty = parse("backend b\n  server s1 1.1.1.1:1 addr $SLUICE_TEST_CHK_NOPE\n");
  EXPECT_TRUE(empty.has("parsing [f.cfg:2] : 'addr' : '$SLUICE_TEST_CHK_NOPE' resolves to an empty "
                        "address (environment variable missing?)"))
      << empty.all();
  ::unsetenv("SLUICE_TEST_CHK_IP");
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
  // The old way of adding headers, refused by HAProxy 3.5 with this text.
  r = parse("backend e\n  option httpchk GET /h HTTP/1.1\\r\\nHost:\\ x\n");
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.contains("parsing [f.cfg:2] : 'option httpchk' : hiding headers or body at the end "
                         "of the version string is unsupported.Use 'http-check send' directive "
                         "instead..")) << r.all();
}

TEST(CheckKeywords, HttpCheckSendAndExpect) {
  using check::CheckRule;
  auto r = parse(
      "backend b\n  option httpchk\n"
      "  http-check send meth GET uri /status ver HTTP/1.1 hdr Host x.example body-lf %[srv_name]\n"
      "  http-check expect ! string maintenance\n"
      "  http-check disable-on-404\n  http-check send-state\n"
      "backend c\n  http-check expect rstatus ^2\n"
      "backend d\n  http-check expect status 200-299,304 comment ok error-status L7RSP\n"
      "backend e\n  http-check expect hdr name -m beg x-a value -m reg ^b\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& b = proxy(r, "b");
  ASSERT_EQ(b.http_check_rules.rules.size(), 2u);
  const CheckRule& send = b.http_check_rules.rules[0];
  EXPECT_TRUE(send.http);
  EXPECT_EQ(send.method, "GET");
  EXPECT_EQ(send.uri, "/status");
  EXPECT_EQ(send.version, "HTTP/1.1");
  ASSERT_EQ(send.fields.size(), 1u);
  EXPECT_EQ(send.fields[0].name, "Host");
  EXPECT_GE(send.fields[0].fmt, 0);
  EXPECT_GE(send.body_fmt, 0);
  const CheckRule& ex = b.http_check_rules.rules[1];
  EXPECT_EQ(ex.match, CheckRule::Match::kBody);
  EXPECT_TRUE(ex.negate);
  EXPECT_EQ(ex.bytes, "maintenance");
  EXPECT_TRUE(b.http_check.disable_on_404);
  EXPECT_TRUE(b.http_check.send_state);
  EXPECT_EQ(proxy(r, "c").http_check_rules.rules[0].match, CheckRule::Match::kRstatus);
  const CheckRule& d = proxy(r, "d").http_check_rules.rules[0];
  EXPECT_EQ(d.pattern, "200-299,304");
  EXPECT_EQ(d.comment, "ok");
  EXPECT_TRUE(d.error_status_set);
  const CheckRule& e = proxy(r, "e").http_check_rules.rules[0];
  EXPECT_EQ(e.match, CheckRule::Match::kHdr);
  EXPECT_EQ(e.name_cmp, CheckRule::Cmp::kBeg);
  EXPECT_EQ(e.hdr_name, "x-a");
  EXPECT_EQ(e.value_cmp, CheckRule::Cmp::kReg);
  EXPECT_TRUE(e.re);

  // HAProxy 3.5's messages.
  const std::pair<std::string, std::string> cases[] = {
      {"http-check expect rstatus (",
       "'http-check expect' : regex '(' is invalid (error=missing closing parenthesis, erroffset=1)."},
      {"http-check expect foo bar",
       "'http-check expect' : 'only supports min-recv, [!]string', '[!]rstring', '[!]string-lf', "
       "'[!]status', '[!]rstatus', [!]hdr, [!]fhdr or comment but got 'foo' as argument.."},
      {"http-check send meth", "'http-check send' : 'meth' expects a string as argument.."},
      {"http-check send foo", "'http-check send' : expects 'comment', 'meth', 'uri', 'uri-lf', "
                              "'ver', 'hdr', 'body' or 'body-lf' but got 'foo' as argument.."},
      {"http-check expect", "'http-check expect' : expects at least a matching pattern as arguments."},
      {"http-check expect status", "'http-check expect' : 'status' expects a <pattern> as argument."},
      {"http-check expect hdr x", "'http-check expect' : 'hdr' expects at the name keyword as first "
                                  "argument followed by a pattern."},
      {"http-check expect hdr name a value",
       "'http-check expect' : 'hdr' expect a pattern with the value keyword."},
      {"http-check expect hdr name -m foo a",
       "'http-check expect' : 'hdr' : '-m' only supports 'str', 'beg', 'end', 'sub' or 'reg' (got 'foo')."},
      {"http-check expect status abc",
       "'http-check expect' : invalid character 'a' in the list of status codes."},
      {"http-check connect foo",
       "'http-check connect' : expects 'comment', 'port', 'addr', 'send-proxy', 'ssl', 'sni', "
       "'alpn' or 'via-socks4', 'linger', 'default' but got 'foo' as argument.."},
      {"http-check foo", "'http-check' only supports 'disable-on-404', 'send-state', 'comment', "
                         "'connect', 'send', 'expect', 'set-var-fmt(*)', 'set-var(*)', "
                         "'unset-var(*)'. but got 'foo'"},
      {"http-check disable-on-404 x", "'http-check' cannot handle unexpected argument 'x'."},
      {"http-check send uri-lf %[nosuch]",
       "'http-check send' : '%[nosuch]' invalid log-format string (failed to parse sample "
       "expression <nosuch]> : unknown fetch method 'nosuch')."},
      {"http-check connect\n  http-check send meth HEAD\n  http-check expect status 200\n"
       "  http-check send meth GET",
       "'http-check send' : unable to add http-check send rule at step 3 (missing connect rule).."},
  };
  for (const auto& [rule, msg] : cases) {
    const std::string all = parse("backend b\n  option httpchk\n  " + rule + "\n").all();
    EXPECT_NE(all.find(msg), std::string::npos) << rule << "\n" << all;
  }
}

TEST(CheckKeywords, TimeoutCheck) {
  auto r = parse("defaults\n  timeout check 750ms\nbackend b\n  server s 1.1.1.1:1\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(proxy(r, "b").timeouts.check, 750u);
}

}  // namespace
}  // namespace sluice::config

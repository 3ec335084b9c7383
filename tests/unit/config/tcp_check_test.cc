// `tcp-check` rules and `option tcp-check` / `option log-health-checks`: what the parser builds
// and HAProxy 3.5's messages (measured with `haproxy -c`) unless sluice's own is said.
#include <gtest/gtest.h>

#include <string>

#include "parse_run.h"

namespace sluice::config {
namespace {

using check::CheckRule;
using testing::kTimeouts;
using testing::parse;
using testing::proxy;

const std::string kHead = std::string("defaults\n  mode tcp\n") + kTimeouts +
                          "backend b\n  option tcp-check\n";

TEST(TcpCheck, Rules) {
  auto r = parse(kHead +
                 "  option log-health-checks\n"
                 "  tcp-check comment greeting\n"
                 "  tcp-check connect port 2525 addr 127.0.0.2 send-proxy linger\n"
                 "  tcp-check expect min-recv 4 rstring ^220 error-status L7STS tout-status L6TOUT\n"
                 "  tcp-check send-binary 50494e47 comment ping\n"
                 "  tcp-check send-lf \"HELO %[srv_name]\\r\\n\"\n"
                 "  tcp-check expect ! binary 2d on-success \"ok %[srv_name]\" ok-status L6OK\n"
                 "  server s 127.0.0.1:1 check\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& b = proxy(r, "b");
  EXPECT_TRUE(b.option_tcp_check);
  EXPECT_TRUE(b.option_log_health_checks);
  const auto& rules = b.tcp_check.rules;
  ASSERT_EQ(rules.size(), 6u);
  EXPECT_EQ(rules[0].kind, CheckRule::Kind::kComment);
  EXPECT_EQ(rules[1].kind, CheckRule::Kind::kConnect);
  EXPECT_EQ(rules[1].port, 2525);
  EXPECT_TRUE(rules[1].has_addr);
  EXPECT_TRUE(rules[1].send_proxy);
  EXPECT_TRUE(rules[1].linger);
  EXPECT_EQ(rules[1].comment, "greeting");   // a comment rule names the rule after it
  EXPECT_EQ(rules[2].match, CheckRule::Match::kRstring);
  EXPECT_EQ(rules[2].min_recv, 4);
  EXPECT_TRUE(rules[2].re);
  EXPECT_EQ(rules[2].error_status, lb::CheckStatus::kL7Sts);
  EXPECT_EQ(rules[2].tout_status, lb::CheckStatus::kL6Tout);
  EXPECT_EQ(rules[3].data, "PING");
  EXPECT_EQ(rules[3].comment, "ping");
  EXPECT_EQ(rules[4].fmt, 0);
  EXPECT_TRUE(rules[5].negate);
  EXPECT_EQ(rules[5].bytes, "-");
  EXPECT_EQ(rules[5].on_success, 1);
  EXPECT_EQ(rules[5].ok_status, lb::CheckStatus::kL6Ok);
  EXPECT_EQ(b.tcp_check.compiled.size(), 2u);
}

// A defaults section's rules are the backends' until a backend writes its own first rule.
TEST(TcpCheck, DefaultsInheritance) {
  auto r = parse(std::string("defaults\n  mode tcp\n") + kTimeouts +
                 "  option tcp-check\n  tcp-check expect string A\n"
                 "backend b\n  server s 127.0.0.1:1 check\n"
                 "backend c\n  tcp-check expect string C\n  tcp-check expect string D\n"
                 "  server s 127.0.0.1:1 check\n");
  ASSERT_TRUE(r.r.model) << r.all();
  ASSERT_EQ(proxy(r, "b").tcp_check.rules.size(), 1u);
  EXPECT_EQ(proxy(r, "b").tcp_check.rules[0].pattern, "A");
  ASSERT_EQ(proxy(r, "c").tcp_check.rules.size(), 2u);
  EXPECT_EQ(proxy(r, "c").tcp_check.rules[0].pattern, "C");
}

TEST(TcpCheck, ConnectSsl) {
  auto r = parse(kHead +
                 "  tcp-check connect ssl sni a.test alpn h2,http/1.1\n"
                 "  tcp-check connect port 2 sni b.test\n"
                 "  server s 127.0.0.1:1 check verify none\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& rules = proxy(r, "b").tcp_check.rules;
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_TRUE(rules[0].ssl);
  EXPECT_EQ(rules[0].sni, "a.test");
  EXPECT_EQ(rules[0].alpn, (std::vector<std::string>{"h2", "http/1.1"}));
  // A server without ssl gets a context for the step.
  EXPECT_TRUE(proxy(r, "b").servers[0].tls.rule_context);
  // sni without ssl would do nothing: a warning with the line says so.
  EXPECT_TRUE(r.contains("'tcp-check connect' : 'sni' has no effect without 'ssl'.")) << r.all();
}

TEST(TcpCheck, RulesWithoutTheOptionWarn) {
  auto r = parse(std::string("defaults\n  mode tcp\n") + kTimeouts +
                 "backend c\n  tcp-check expect string NOPE\n  server s 127.0.0.1:1 check\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.contains("backend 'c' uses tcp-check rules without 'option tcp-check', so the "
                         "rules are ignored."))
      << r.all();
}

TEST(TcpCheck, Errors) {
  auto err = [](const std::string& rule) {
    return parse(kHead + "  " + rule + "\n  server s 127.0.0.1:1 check\n").all();
  };
  const std::pair<std::string, std::string> cases[] = {
      {"tcp-check", "parsing [f.cfg:8] : 'tcp-check' only supports 'comment', 'connect', 'send', "
                    "'send-binary', 'expect', 'set-var-fmt(*)', 'set-var(*)', 'unset-var(*)'. but got ''"},
      {"tcp-check foo", "but got 'foo'"},
      {"tcp-check expect", "'tcp-check expect' : expects at least a matching pattern as arguments."},
      {"tcp-check expect string", "'tcp-check expect' : 'string' expects a <pattern> as argument."},
      {"tcp-check expect foo bar", "'tcp-check expect' : 'only supports min-recv, '[!]binary', "
                                   "'[!]string', '[!]rstring', '[!]string-lf''[!]rbinary', "
                                   "'[!]binary-lf' or comment but got 'foo' as argument.."},
      {"tcp-check expect ok-status L9OK string a",
       "'tcp-check expect' : 'ok-status' only supports 'L4OK', 'L6OK', 'L7OK' or 'L7OKC' status "
       "(got 'L9OK').."},
      {"tcp-check expect error-status L7OK string a",
       "'error-status' only supports 'L4CON', 'L6RSP', 'L7RSP' or 'L7STS' status (got 'L7OK').."},
      {"tcp-check expect binary 2b4",
       "'tcp-check expect' : invalid binary string (an even number of hex digit is expected)."},
      {"tcp-check expect binary zz",
       "'tcp-check expect' : invalid binary string (an hex digit is expected (found 'z'))."},
      {"tcp-check expect rstring (",
       "'tcp-check expect' : regex '(' is invalid (error=missing closing parenthesis, erroffset=1)."},
      {"tcp-check send", "'tcp-check send' : 'string' expects a send as argument."},
      {"tcp-check send-binary 2",
       "'tcp-check send-binary' : '2' invalid binary string (an even number of hex digit is expected)."},
      {"tcp-check send a b", "'tcp-check send' : expects 'comment' but got 'b' as argument.."},
      {"tcp-check connect port",
       "'tcp-check connect' : 'port' expects a port number or a sample expression as argument.."},
      {"tcp-check connect foo",
       "'tcp-check connect' : expects 'comment', 'port', 'addr', 'send-proxy', 'ssl', 'sni', "
       "'alpn' or 'via-socks4', 'linger', 'default' but got 'foo' as argument.."},
      {"tcp-check comment", "'tcp-check comment' : expects a string as argument."},
      {"tcp-check expect string a comment", "'tcp-check expect' : 'comment' expects a string as argument."},
      {"tcp-check send-lf %[nosuch]",
       "'tcp-check send-lf' : '%[nosuch]' invalid log-format string (failed to parse sample "
       "expression <nosuch]> : unknown fetch method 'nosuch')."},
      {"tcp-check connect port 0",
       "'tcp-check connect' : expects a valid TCP port (from range 1 to 65535) or a sample "
       "expression, got 0.."},
      {"tcp-check connect port 70000", "or a sample expression, got 70000.."},
      {"tcp-check connect port foo",
       "'tcp-check connect' : error detected while parsing port expression : unknown fetch "
       "method 'foo'."},
      {"tcp-check set-var(check.x)", "'tcp-check set-var(check.x)' : 'set-var' : missing fetch method."},
      {"tcp-check set-var(check.x) foo",
       "'tcp-check set-var(check.x)' : 'set-var' : unknown fetch method 'foo'."},
      {"tcp-check set-var(x) int(1)",
       "'tcp-check set-var(x)' : 'set-var' : invalid variable name 'x'. A variable name must "
       "start with its scope. The scope can be 'proc', '(p)sess', '(p)txn', '(p)req', '(p)res' or "
       "'check'."},
      {"tcp-check set-var(check.x) req.hdr(host)",
       "'tcp-check set-var(check.x)' : 'set-var' : fetch method 'set-var(check.x)' extracts "
       "information from 'HTTP request headers', none of which is available here."},
      {"tcp-check set-var(check.x,nope) int(1)", "'set-var' : unknown condition \"nope\"."},
      {"tcp-check connect ssl sni", "'tcp-check connect' : 'sni' expects a string as argument.."},
      {"tcp-check connect ssl alpn", "'tcp-check connect' : 'alpn' : missing the comma-delimited ALPN protocol suite."},
      // sluice's own: what it cannot do yet, or would silently ignore, says so.
      {"tcp-check unset-var(check.x) foo",
       "'tcp-check unset-var(check.x)' : unexpected argument 'foo' (a check step takes no "
       "condition)."},
      {"tcp-check set-var(txn.x) int(1)",
       "'tcp-check set-var(txn.x)' : a health check keeps only 'check.' and 'proc.' variables "
       "(got 'txn')."},
  };
  for (const auto& [rule, msg] : cases) {
    const std::string all = err(rule);
    EXPECT_NE(all.find(msg), std::string::npos) << rule << "\n" << all;
  }
}

// Variable steps and a port expression: actions and expressions kept by index, before the
// first connect without an implicit connect in front of them.
TEST(TcpCheck, VariablesAndPortExpression) {
  auto r = parse(kHead + "  tcp-check set-var(check.p,ifnotset) int(80)\n"
                 "  tcp-check unset-var(check.q)\n"
                 "  tcp-check connect port var(check.p)\n"
                 "  tcp-check set-var-fmt(proc.last) \"%[srv_name]\"\n"
                 "  server s 127.0.0.1:1 check\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& tc = proxy(r, "b").tcp_check;
  ASSERT_EQ(tc.rules.size(), 4u);
  using K = check::CheckRule::Kind;
  EXPECT_EQ(tc.rules[0].kind, K::kSetVar);
  EXPECT_EQ(tc.rules[0].action, 0);
  EXPECT_EQ(tc.rules[1].kind, K::kUnsetVar);
  EXPECT_EQ(tc.rules[1].action, 1);
  EXPECT_EQ(tc.rules[2].kind, K::kConnect);
  EXPECT_EQ(tc.rules[2].port_expr, 0);
  EXPECT_EQ(tc.rules[3].action, 2);
  ASSERT_EQ(tc.actions.size(), 3u);
  EXPECT_EQ(tc.actions[0]->conds, sample::kIfNotSet);
  EXPECT_EQ(tc.exprs.size(), 1u);
  check::RuleSet rs;
  rs.rules = tc.rules;
  EXPECT_TRUE(rs.starts_with_connect());
}

// The protocol options are rule sets of the same language.
TEST(TcpCheck, ProtocolOptions) {
  auto r = parse(std::string("defaults\n  mode tcp\n") + kTimeouts +
                 "backend r\n  option redis-check\n  server s 127.0.0.1:1 check\n"
                 "backend m\n  option smtpchk EHLO me.example\n  server s 127.0.0.1:1 check\n"
                 "backend p\n  option pgsql-check user bob\n  server s 127.0.0.1:1 check\n"
                 "backend y\n  option mysql-check user bob post-41\n  server s 127.0.0.1:1 check\n"
                 "backend l\n  option ldap-check\n  server s 127.0.0.1:1 check\n"
                 "backend h\n  option ssl-hello-chk\n  server s 127.0.0.1:1 check\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(proxy(r, "r").tcp_check.protocol, "redis-check");
  EXPECT_TRUE(proxy(r, "r").option_tcp_check);
  EXPECT_EQ(proxy(r, "r").tcp_check.rules[1].data, "*1\r\n$4\r\nPING\r\n");
  bool ehlo = false;
  for (const auto& rule : proxy(r, "m").tcp_check.rules) ehlo = ehlo || rule.data == "EHLO me.example\r\n";
  EXPECT_TRUE(ehlo);
  EXPECT_EQ(proxy(r, "y").tcp_check.rules.back().match, CheckRule::Match::kMysqlReply);
  EXPECT_EQ(proxy(r, "l").tcp_check.rules.back().match, CheckRule::Match::kLdapBind);
  EXPECT_EQ(proxy(r, "h").tcp_check.ok_info, "");

  auto err = [](const std::string& opt) {
    return parse(std::string("defaults\n  mode tcp\n") + kTimeouts + "backend b\n  " + opt +
                 "\n  server s 127.0.0.1:1 check\n").all();
  };
  EXPECT_NE(err("option pgsql-check").find("'option pgsql-check' expects 'user <username>' as argument."),
            std::string::npos);
  EXPECT_NE(err("option spop-check").find("'option spop-check' is not supported by sluice"),
            std::string::npos);
  EXPECT_NE(err("option mysql-check user bob pre-40").find("'option mysql-check user <user>' only "
                                                        "supports optional values: 'pre-41' and "
                                                        "'post-41'."),
            std::string::npos);
  EXPECT_EQ(err("option mysql-check user bob pre-41").find("pre-41"), std::string::npos);
  EXPECT_NE(err("option redis-check x").find("cannot handle unexpected argument 'x'"),
            std::string::npos)
      << err("option redis-check x");
}

TEST(TcpCheck, SpreadChecks) {
  auto r = parse("global\n  spread-checks 25\n  max-spread-checks 2s\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.global().spread_checks, 25);
  EXPECT_EQ(r.global().max_spread_checks_ms, 2000u);
  EXPECT_TRUE(parse("global\n  spread-checks 60\n").contains(
      "parsing [f.cfg:2] : 'spread-checks' needs a positive value in range 0..50."));
  EXPECT_TRUE(parse("global\n  max-spread-checks x\n").contains(
      "unsupported character 'x' in 'max-spread-checks' (wants an integer delay)."));
}

// track [<backend>/]<server>: resolved after parsing, with HAProxy 3.5's messages.
TEST(TcpCheck, Track) {
  const std::string head = std::string("defaults\n  mode tcp\n") + kTimeouts;
  auto r = parse(head + "backend b\n  server s1 127.0.0.1:1 check\n  server s2 127.0.0.1:2 track s1\n"
                        "backend c\n  server s3 127.0.0.1:3 track b/s2\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(proxy(r, "b").servers[1].track_proxy, 0);
  EXPECT_EQ(proxy(r, "b").servers[1].track_server, 0);
  EXPECT_EQ(proxy(r, "c").servers[0].track_server, 1);
  auto err = [&](const std::string& srv) {
    return parse(head + "backend b\n  server s 127.0.0.1:1 " + srv +
                 "\n  server s2 127.0.0.1:2 check\n  server s4 127.0.0.1:2\n"
                 "backend c\n  server s3 127.0.0.1:3 check\n").all();
  };
  const std::pair<std::string, std::string> cases[] = {
      {"check track s2", "[f.cfg:7] : 'server b/s' : unable to enable checks and tracking at the same time!"},
      {"track nosuch", "[f.cfg:7] : 'server b/s' : unable to find required server 'nosuch' for tracking."},
      {"track x/s3", "[f.cfg:7] : 'server b/s' : unable to find required proxy 'x' for tracking."},
      {"track s4", "[f.cfg:7] : 'server b/s' : unable to use b/s4 for tracking as it does not have "
                   "any check nor agent enabled."},
  };
  for (const auto& [srv, msg] : cases) {
    const std::string all = err(srv);
    EXPECT_NE(all.find(msg), std::string::npos) << srv << "\n" << all;
  }
  auto ok = parse(head + "backend b\n  server s 127.0.0.1:1 track c/s3\n"
                        "backend c\n  server s3 127.0.0.1:3 check\n");
  ASSERT_TRUE(ok.r.model) << ok.all();
  EXPECT_EQ(ok.r.alerts, 0) << ok.all();
  // A loop never reaches a check.
  EXPECT_TRUE(parse(head + "backend b\n  server a 127.0.0.1:1 track c\n  server c 127.0.0.1:1 track a\n")
                  .contains("the chain of tracked servers loops and reaches no check."));
}

// agent-check and its options, HAProxy 3.5's messages.
TEST(TcpCheck, AgentOptions) {
  const std::string head = std::string("defaults\n  mode tcp\n") + kTimeouts + "backend b\n";
  auto r = parse(head + "  server s 127.0.0.1:1 agent-check agent-port 9000 agent-addr 127.0.0.2 "
                        "agent-inter 3s agent-send \"hi\\n\"\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& s = proxy(r, "b").servers[0];
  EXPECT_TRUE(s.agent_check);
  EXPECT_EQ(s.agent_port, 9000);
  EXPECT_TRUE(s.has_agent_addr);
  EXPECT_EQ(s.agent_inter_ms, 3000u);
  EXPECT_EQ(s.agent_send, "hi\n");
  auto nop = parse(head + "  server s 127.0.0.1:1 agent-check\n");
  ASSERT_TRUE(nop.r.model) << nop.all();
  EXPECT_TRUE(nop.contains("[f.cfg:7] : 'server b/s' : server s does not have agent port. Agent "
                           "check has been disabled."))
      << nop.all();
  EXPECT_FALSE(proxy(nop, "b").servers[0].agent_check);
  EXPECT_TRUE(parse(head + "  server s 127.0.0.1:1 agent-check agent-port 9 agent-inter x\n")
                  .contains("unexpected character 'x' in 'agent-inter' argument of server s.."));
  EXPECT_TRUE(parse(head + "  server s 127.0.0.1:1 agent-check agent-port 9 agent-addr no..host\n")
                  .contains("parsing agent-addr failed. Check if 'no..host' is correct address.."));
  // A server with an agent and no check may be tracked.
  EXPECT_TRUE(parse(head + "  server s 127.0.0.1:1 agent-check agent-port 9\n"
                           "  server t 127.0.0.1:1 track s\n").r.model);
}

// option external-check and its keywords, HAProxy 3.5's messages.
TEST(TcpCheck, ExternalCheck) {
  const std::string be = std::string("defaults\n  mode tcp\n") + kTimeouts +
                         "backend b\n  option external-check\n  external-check command /bin/true\n"
                         "  external-check path /usr/bin\n  server s 127.0.0.1:1 check\n";
  auto r = parse("global\n  external-check\n  insecure-fork-wanted\n" + be);
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(proxy(r, "b").check_type, ProxyConfig::CheckType::kExternal);
  EXPECT_EQ(proxy(r, "b").external_check_command, "/bin/true");
  EXPECT_EQ(proxy(r, "b").external_check_path, "/usr/bin");
  EXPECT_TRUE(parse(be).contains(
      "Proxy 'b' : 'option external-check' unable to find required 'global.external-check'."));
  EXPECT_TRUE(parse("global\n  external-check\n" + be).contains(
      "Proxy 'b' : 'insecure-fork-wanted' not enabled in the global section, 'option "
      "external-check' will likely fail."));
  EXPECT_TRUE(parse("global\n  external-check\n  insecure-fork-wanted\n" +
                    std::string("defaults\n  mode tcp\n") + kTimeouts +
                    "backend b\n  option external-check\n  server s 127.0.0.1:1 check\n")
                  .contains("Proxy 'b' : 'option external-check' unable to find required "
                            "'external-check command'."));
  EXPECT_TRUE(parse("backend b\n  external-check foo x\n").contains(
      "'external-check' only supports 'command' and 'path'. but got 'foo'."));
  EXPECT_TRUE(parse("backend b\n  external-check path\n").contains("missing argument after 'path'."));
}

}  // namespace
}  // namespace sluice::config

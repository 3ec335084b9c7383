// Keywords of defaults / frontend / backend / listen sections: mode, bind, timeouts, integers,
// options, TCP socket options, log, server, balance, id / disabled / description and unknown
// keywords. The HTTP, health-check and tcp-request keywords have their own tests.
#include <gtest/gtest.h>

#include <string>

#include "parse_run.h"

namespace sluice::config {
namespace {

using testing::parse;
using testing::kTimeouts;

TEST(Proxy, Mode) {
  EXPECT_TRUE(parse("defaults\n  mode tcp\n").r.model);
  auto http = parse("defaults\n  mode http\nbackend b\n");
  ASSERT_TRUE(http.r.model) << http.all();
  EXPECT_EQ(http.r.model->proxies[0].mode, Mode::kHttp);
  EXPECT_TRUE(parse("defaults\n  mode log\n").has("parsing [f.cfg:2] : 'mode log' is not supported by sluice yet."));
  EXPECT_TRUE(parse("defaults\n  mode http x\n").contains("'mode' cannot handle unexpected argument 'x'."));
  EXPECT_TRUE(parse("defaults\n  mode HTTP\n").has("parsing [f.cfg:2] : unknown proxy mode 'HTTP'."));
}

TEST(Proxy, Bind) {
  auto r = parse("frontend f\n  bind 127.0.0.1:8000-8002,:9000 name web maxconn 10 backlog 20\n"
                 "  bind /tmp/x.sock mode 660\n  timeout client 1s\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& b = r.r.model->proxies[0].binds;
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].addrs.size(), 4u);
  EXPECT_EQ(b[0].name, "web");
  EXPECT_EQ(b[0].maxconn, 10);
  EXPECT_EQ(b[0].backlog, 20);
  EXPECT_EQ(b[0].text, "127.0.0.1:8000-8002,:9000");
  EXPECT_EQ(b[1].unix_mode, 0660);
  EXPECT_TRUE(parse("frontend f\n  bind\n").has("parsing [f.cfg:2] : 'bind' expects {<path>|[addr1]:port1[-end1]}{,[addr]:port[-end]}... as arguments."));
  EXPECT_TRUE(parse("frontend f\n  bind 127.0.0.1\n").has("parsing [f.cfg:2] : 'bind' : missing port specification in '127.0.0.1'"));
  EXPECT_TRUE(parse("frontend f\n  bind :18092 maxconnn 4\n").has(
      "parsing [f.cfg:2] : 'bind :18092' in section 'frontend': unknown keyword 'maxconnn'; did you mean 'maxconn' maybe ?"));
  EXPECT_TRUE(parse("frontend f\n  bind :1 process 1\n").has(
      "parsing [f.cfg:2] : 'bind :1' : 'process 1' on 'bind' lines is not supported anymore, please use 'thread' instead."));
  EXPECT_TRUE(parse("frontend f\n  bind :1 maxconn\n").has("parsing [f.cfg:2] : 'bind :1' : 'maxconn' : missing value"));
  EXPECT_TRUE(parse("frontend f\n  bind :1 ssl\n").contains("no SSL certificate specified for bind ':1' (use 'crt')."));
  EXPECT_TRUE(parse("defaults\n  bind :1\n").has("parsing [f.cfg:2] : 'bind' not allowed in 'defaults' section."));
  r = parse("backend b\n  bind :1\n");
  EXPECT_TRUE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : 'bind' ignored because backend 'b' has no frontend capability."));
}

TEST(Proxy, Timeouts) {
  auto r = parse("defaults\n  timeout client 10\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : 'timeout client 10' in defaults '' is suspiciously small for a value in "
                    "milliseconds. Please use an explicit unit ('10ms') if that was the intent."))
      << r.all();
  EXPECT_EQ(r.r.warnings, 1);
  EXPECT_TRUE(parse("defaults\n  timeout client 10x\n").has("parsing [f.cfg:2] : unexpected character 'x' in 'timeout client'"));
  EXPECT_TRUE(parse("defaults\n  timeout client 1.5s\n").has("parsing [f.cfg:2] : unexpected character '.' in 'timeout client'"));
  EXPECT_TRUE(parse("defaults\n  timeout client 25d\n").has(
      "parsing [f.cfg:2] : timer overflow in argument '25d' to 'timeout client' (maximum value is 2147483647 ms or ~24.8 days)"));
  EXPECT_TRUE(parse("defaults\n  timeout client\n").has("parsing [f.cfg:2] : 'timeout client' expects an integer value (in milliseconds)"));
  EXPECT_TRUE(parse("defaults\n  timeout client 10 20\n").has(
      "parsing [f.cfg:2] : 'timeout client' : unexpected extra argument '20' after value '10'."));
  EXPECT_TRUE(parse("defaults\n  timeout clientt 1s\n").has(
      "parsing [f.cfg:2] : 'timeout' supports 'client', 'server', 'connect', 'check', 'queue', 'handshake', "
      "'http-keep-alive', 'http-request', 'tunnel', 'tarpit', 'client-fin' and 'server-fin' (got 'clientt')"));
  EXPECT_EQ(proxy(parse("defaults\n  timeout tarpit 1s\nfrontend f\n  bind :1\n"), "f").timeouts.tarpit,
            1000u);
  EXPECT_TRUE(parse("defaults\n  timeout handshake 1s\n").has("parsing [f.cfg:2] : 'timeout handshake' is not supported by sluice yet."));
  r = parse("defaults\n  timeout client 10sec\n");
  EXPECT_TRUE(r.r.model);
  EXPECT_TRUE(r.has("unexpected character 'e' after the timer value '10sec', only (us=microseconds,ms=milliseconds,s=seconds,m=minutes,h=hours,d=days) are supported. This will be reported as an error in next versions."));
  r = parse("frontend f\n  bind :1\n  timeout client 1s\n  timeout client 2s\n  timeout server 1s\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:4] : overwriting 'timeout client' which was already specified"));
  EXPECT_TRUE(r.has("parsing [f.cfg:5] : 'timeout server' will be ignored because frontend 'f' has no backend capability"));
  EXPECT_EQ(r.r.model->proxies[0].timeouts.client, 2000u);
  r = parse("defaults\n  timeout client 1s\nfrontend f\n  bind :1\n  timeout client 2s\n  timeout client-fin 500us\n");
  EXPECT_EQ(r.r.warnings, 0) << r.all();
  EXPECT_EQ(r.r.model->proxies[0].timeouts.client_fin, 1u);
}

TEST(Proxy, IntegersAreStrict) {
  EXPECT_TRUE(parse("frontend f\n  maxconn 12abc\n").has("parsing [f.cfg:2] : cannot parse 'maxconn' value '12abc', an integer is expected."));
  EXPECT_TRUE(parse("backend b\n  retries x\n").contains("cannot parse 'retries' value 'x'"));
  auto r = parse("frontend f\n  bind :1\n  maxconn 100\n  backlog 50\n");
  EXPECT_EQ(r.r.model->proxies[0].maxconn, 100);
  EXPECT_EQ(r.r.model->proxies[0].backlog, 50);
  r = parse("backend b\n  maxconn 5\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : 'maxconn' ignored because backend 'b' has no frontend capability. Maybe you want 'fullconn' instead ?"));
}

TEST(Proxy, Options) {
  auto r = parse("defaults\n  option redispatch 2\n  option tcplog\n  option dontlognull\nlisten l\n  bind :1\n"
                 "  no option dontlognull\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& l = r.r.model->proxies[0];
  EXPECT_EQ(l.redispatch, 2);
  EXPECT_TRUE(l.option_tcplog);
  EXPECT_FALSE(l.option_dontlognull);
  EXPECT_EQ(parse("backend b\n  option redispatch\n  no option redispatch\n").r.model->proxies[0].redispatch, 0);
  r = parse("backend b\n  option dontlognull\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : 'option dontlognull' ignored because backend 'b' has no frontend capability."));
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : unknown option 'dontlognull'; did you mean 'dontlognull' maybe ?"));
  r = parse("backend b\n  option tcplog\n");
  EXPECT_TRUE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : backend 'b' : 'option tcplog' directive is ignored in backends."));
  r = parse("frontend f\n  bind :1\n  option redispatch\n");
  EXPECT_TRUE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:3] : 'option redispatch' ignored because frontend 'f' has no backend capability."));
  // Spec 5.2: the check options are special-cased in HAProxy, so they only warn.
  r = parse("frontend f\n  bind :1\n  option httpchk GET /\n  option tcp-check\n");
  EXPECT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.has("parsing [f.cfg:3] : 'option httpchk' ignored because frontend 'f' has no backend capability."));
  EXPECT_TRUE(r.has("parsing [f.cfg:4] : 'option tcp-check' ignored because frontend 'f' has no backend capability."));
  EXPECT_FALSE(r.contains("unknown option")) << r.all();
  EXPECT_TRUE(parse("defaults\n  option httpslog\n").r.model);
  EXPECT_TRUE(parse("defaults\n  option tcplgo\n").has("parsing [f.cfg:2] : unknown option 'tcplgo'; did you mean 'tcplog' maybe ?"));
}

TEST(Proxy, TcpSocketOptions) {
  // Defaults carry the options and tunings; a section can take them back.
  auto r = parse(std::string("defaults\n") + kTimeouts + "  option tcpka\n  clitcpka-idle 7\n  clitcpka-intvl 3s\n  clitcpka-cnt 4\n"
                 "  srvtcpka-idle 1m\n  srvtcpka-intvl 1500ms\n  srvtcpka-cnt 0\n  option nolinger\n"
                 "listen l\n  bind :1\nfrontend f\n  bind :2\n  no option clitcpka\n  no option nolinger\n"
                 "backend b\n  no option tcpka\n  no option tcp-smart-connect\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.r.warnings, 0) << r.all();
  const auto& l = r.r.model->proxies[0];
  EXPECT_TRUE(l.option_clitcpka);
  EXPECT_TRUE(l.option_srvtcpka);
  EXPECT_EQ(l.clitcpka_idle, 7);
  EXPECT_EQ(l.clitcpka_intvl, 3);
  EXPECT_EQ(l.clitcpka_cnt, 4);
  EXPECT_EQ(l.srvtcpka_idle, 60);
  EXPECT_EQ(l.srvtcpka_intvl, 2);   // rounded up to whole seconds
  EXPECT_EQ(l.srvtcpka_cnt, 0);
  EXPECT_TRUE(l.option_nolinger);
  EXPECT_TRUE(l.option_tcp_smart_connect);   // sluice's default
  const auto& f = r.r.model->proxies[1];
  EXPECT_FALSE(f.option_clitcpka);
  EXPECT_TRUE(f.option_srvtcpka);
  EXPECT_FALSE(f.option_nolinger);
  const auto& b = r.r.model->proxies[2];
  EXPECT_FALSE(b.option_clitcpka);
  EXPECT_FALSE(b.option_srvtcpka);
  EXPECT_FALSE(b.option_tcp_smart_connect);
  EXPECT_TRUE(parse("backend b\n  no option tcp-smart-connect\n  default option tcp-smart-connect\n")
                  .r.model->proxies[0].option_tcp_smart_connect);

  // Values the kernel refuses are clamped, with a warning.
  r = parse("frontend f\n  bind :1\n  clitcpka-idle 1d\n  clitcpka-cnt 500\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.r.model->proxies[0].clitcpka_idle, 32767);
  EXPECT_EQ(r.r.model->proxies[0].clitcpka_cnt, 127);
  EXPECT_TRUE(r.has("parsing [f.cfg:3] : 'clitcpka-idle 1d' is above the kernel's limit; 32767 is used instead."));
  EXPECT_TRUE(r.has("parsing [f.cfg:4] : 'clitcpka-cnt 500' is above the kernel's limit; 127 is used instead."));

  // Bad values are errors with the line; the wrong side warns and is ignored.
  EXPECT_TRUE(parse("defaults\n  clitcpka-idle\n").has("parsing [f.cfg:2] : 'clitcpka-idle' expects an integer value"));
  EXPECT_TRUE(parse("defaults\n  srvtcpka-intvl 5x\n").has("parsing [f.cfg:2] : unexpected character 'x' in argument to <srvtcpka-intvl>."));
  EXPECT_TRUE(parse("defaults\n  srvtcpka-cnt -1\n").has("parsing [f.cfg:2] : 'srvtcpka-cnt' value -1 is out of range (0..2147483647)."));
  EXPECT_TRUE(parse("defaults\n  clitcpka-cnt 3 4\n").has("parsing [f.cfg:2] : 'clitcpka-cnt' cannot handle unexpected argument '4'."));
  EXPECT_TRUE(parse("defaults\n  option tcpka now\n").contains("cannot handle unexpected argument 'now'"));
  r = parse("backend b\n  clitcpka-idle 5\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : 'clitcpka-idle' ignored because backend 'b' has no frontend capability.")) << r.all();
  EXPECT_EQ(r.r.model->proxies[0].clitcpka_idle, 0);
  r = parse("frontend f\n  bind :1\n  option srvtcpka\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:3] : 'option srvtcpka' ignored because frontend 'f' has no backend capability.")) << r.all();
  // A tuning written in a proxy that never turns keep-alive on for that side would do nothing.
  r = parse(std::string("defaults\n") + kTimeouts + "frontend f\n  bind :1\n  clitcpka-idle 5\n"
            "frontend g\n  bind :2\n  option tcpka\n  clitcpka-idle 5\nbackend b\n  srvtcpka-cnt 3\n"
            "  server s 127.0.0.1:1\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.has("parsing [f.cfg:7] : 'clitcpka-*' tunings have no effect in frontend 'f' "
                    "without 'option clitcpka' or 'option tcpka'.")) << r.all();
  EXPECT_TRUE(r.has("parsing [f.cfg:13] : 'srvtcpka-*' tunings have no effect in backend 'b' "
                    "without 'option srvtcpka' or 'option tcpka'.")) << r.all();
  EXPECT_EQ(r.r.warnings, 2) << r.all();
  // Refused as HAProxy 3.5 refuses it.
  EXPECT_TRUE(parse("defaults\n  option transparent\n").has("parsing [f.cfg:2] : support for option 'transparent' was removed in version 3.5."));
}

TEST(Proxy, LogGlobal) {
  auto r = parse("global\n  log stdout local0\ndefaults\n  log global\nbackend b\n  log stderr local1\n");
  ASSERT_TRUE(r.r.model);
  ASSERT_EQ(r.r.model->proxies[0].logs.size(), 2u);
  EXPECT_EQ(r.r.model->proxies[0].logs[1].kind, LogTarget::Kind::kStderr);
  EXPECT_TRUE(parse("global\n  log global\n").contains("only valid in proxies"));
}

TEST(Proxy, Server) {
  auto r = parse("backend b\n  server s1 127.0.0.1:80 weight 10 maxconn 5 backup\n  server s2 [::1]:81 disabled\n"
                 "  server s3 10.0.0.1\n  server s4 10.0.0.1:+1000 enabled\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& s = r.r.model->proxies[0].servers;
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].weight, 10);
  EXPECT_EQ(s[0].maxconn, 5);
  EXPECT_TRUE(s[0].backup);
  EXPECT_EQ(s[0].addr_text, "127.0.0.1:80");
  EXPECT_TRUE(s[1].disabled);
  EXPECT_EQ(s[1].addr.addr.to_string(), "[::1]:81");
  EXPECT_TRUE(s[2].addr.port_mapped);
  EXPECT_EQ(s[3].addr.port_offset, 1000);
  EXPECT_EQ(s[3].id, 4);
  EXPECT_TRUE(parse("backend b\n  server s 1.1.1.1:1 weight 300\n").has(
      "[f.cfg:2] : 'server b/s' : weight of server s is not within 0 and 256 (300)."));
  EXPECT_TRUE(parse("backend b\n  server s 1.1.1.1:1 weight 3.7\n").contains("'weight' expects an integer argument, got '3.7'."));
  EXPECT_TRUE(parse("backend b\n  server s 1.1.1.1:1 minconn 4\n").has("[f.cfg:2] : 'server b/s' : 'minconn' is not supported by sluice yet."));
  EXPECT_TRUE(parse("backend b\n  server s 1.1.1.1:1 weigth 3\n").has(
      "[f.cfg:2] : 'server b/s' : unknown keyword 'weigth'; did you mean 'weight' maybe ?"));
  // An unbracketed "::1" is host ":" and port 1, which does not resolve: with the default
  // init-addr (last,libc) only a saved state could still give an address, so the start-up
  // decides (app::apply_saved_addresses()), as HAProxy's server address initialisation does.
  auto unresolved = parse("backend b\n  server s ::1\n");
  ASSERT_TRUE(unresolved.r.model) << unresolved.all();
  const auto& u = unresolved.r.model->proxies[0].servers.at(0);
  EXPECT_TRUE(u.needs_last && u.unresolved && u.init_last);
  EXPECT_EQ(u.fqdn, ":");
  EXPECT_TRUE(parse("backend b\n  server s ::1 init-addr libc\n").has(
      "[f.cfg:2] : 'server b/s' : no method found to resolve address ':'."));
  EXPECT_TRUE(parse("backend b\n  server s\n").contains("'server' expects <name> and <addr>[:<port>] as arguments."));
  EXPECT_TRUE(parse("frontend f\n  server s 1.1.1.1:1\n").has(
      "[f.cfg:2] : parsing [f.cfg:2] : 'server' not allowed because frontend 'f' has no backend capability."));
  EXPECT_TRUE(parse("defaults\n  server s 1.1.1.1:1\n").has("parsing [f.cfg:2] : 'server' not allowed in 'defaults' section."));
}

TEST(Proxy, Balance) {
  EXPECT_TRUE(parse("backend b\n  balance roundrobin\n").r.model);
  const std::string kOnly =
      "parsing [f.cfg:2] : balance only supports 'roundrobin', 'static-rr', 'leastconn', 'source', "
      "'uri', 'url_param', 'hash', 'hdr(name)', 'rdp-cookie(name)', 'log-hash' and 'sticky' options.";
  EXPECT_TRUE(parse("backend b\n  balance roundrobni\n").has(kOnly));
  EXPECT_TRUE(parse("backend b\n  balance hdr\n").has(kOnly));
  EXPECT_TRUE(parse("backend b\n  balance sticky\n").contains("balance 'sticky' is not supported by sluice yet"));
  auto r = parse("frontend f\n  bind :1\n  balance roundrobin\n");
  EXPECT_TRUE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:3] : 'balance' ignored because frontend 'f' has no backend capability."));
}

// uri's options, hdr's use_domain_only and url_param, with HAProxy 3.5's messages.
TEST(Proxy, BalanceOptions) {
  auto r = parse("backend b\n  mode http\n  balance uri len 10 depth 2 whole path-only\n");
  ASSERT_TRUE(r.r.model);
  const auto& p = r.r.model->proxies[0];
  EXPECT_EQ(p.balance, config::Balance::kUri);
  EXPECT_EQ(p.balance_uri_len, 10);
  EXPECT_EQ(p.balance_uri_depth, 2);
  EXPECT_TRUE(p.balance_uri_whole);
  EXPECT_TRUE(p.balance_uri_path_only);
  EXPECT_TRUE(parse("backend b\n  balance uri foo\n").has(
      "parsing [f.cfg:2] : balance uri only accepts parameters 'len', 'depth', 'path-only', and 'whole' (got 'foo')."));
  EXPECT_TRUE(parse("backend b\n  balance uri len\n").has("parsing [f.cfg:2] : balance uri : 'len' expects a positive integer (got '')."));
  EXPECT_TRUE(parse("backend b\n  balance uri depth 0\n").has("parsing [f.cfg:2] : balance uri : 'depth' expects a positive integer (got '0')."));
  EXPECT_TRUE(parse("backend b\n  balance uri len x\n").has("parsing [f.cfg:2] : balance uri : 'len' expects a positive integer (got 'x')."));
  auto h = parse("backend b\n  mode http\n  balance hdr(host) use_domain_only\n");
  ASSERT_TRUE(h.r.model);
  EXPECT_TRUE(h.r.model->proxies[0].balance_hdr_domain_only);
  EXPECT_TRUE(parse("backend b\n  balance hdr(host) foo\n").has(
      "parsing [f.cfg:2] : balance hdr(host) only accepts 'use_domain_only' modifier (got 'foo')."));
  EXPECT_TRUE(parse("backend b\n  balance hdr()\n").has("parsing [f.cfg:2] : balance hdr requires an http header field name."));
  auto u = parse("backend b\n  mode http\n  balance url_param user\n");
  ASSERT_TRUE(u.r.model);
  EXPECT_EQ(u.r.model->proxies[0].balance, config::Balance::kUrlParam);
  ASSERT_TRUE(u.r.model->proxies[0].balance_expr);
  EXPECT_EQ(u.r.model->proxies[0].balance_expr_text, "url_param(user)");
  EXPECT_TRUE(parse("backend b\n  balance url_param\n").has("parsing [f.cfg:2] : balance url_param requires an URL parameter name."));
  EXPECT_TRUE(parse("backend b\n  balance url_param a b\n").has(
      "parsing [f.cfg:2] : balance url_param only accepts 'check_post' modifier (got 'b')."));
  EXPECT_TRUE(parse("backend b\n  balance url_param a check_post\n").contains("'check_post' is not supported by sluice yet"));
  // A name that would end an expression's argument is quoted into it.
  auto q = parse("backend b\n  mode http\n  balance url_param a,b)\n");
  ASSERT_TRUE(q.r.model);
  EXPECT_EQ(q.r.model->proxies[0].balance_expr_text, "url_param(\"a,b)\")");
  ASSERT_TRUE(q.r.model->proxies[0].balance_expr);
  // Layer-7 hashes in TCP mode fall back to round robin, with HAProxy's warning.
  auto t = parse("backend b\n  balance uri\n");
  ASSERT_TRUE(t.r.model);
  EXPECT_EQ(t.r.model->proxies[0].balance, config::Balance::kRoundRobin);
  EXPECT_TRUE(t.contains("Layer 7 hash not possible for backend 'b' (needs 'mode http'). Falling back to round robin."));
}

// rdp-cookie and hash <expr>: compiled in the check phase, messages at the proxy's line.
TEST(Proxy, BalanceExpressions) {
  auto r = parse("backend b\n  balance rdp-cookie\n");
  ASSERT_TRUE(r.r.model);
  EXPECT_EQ(r.r.model->proxies[0].balance, config::Balance::kRdpCookie);
  EXPECT_EQ(r.r.model->proxies[0].balance_expr_text, "rdp_cookie(mstshash)");
  EXPECT_EQ(parse("backend b\n  balance rdp-cookie(user)\n").r.model->proxies[0].balance_expr_text, "rdp_cookie(user)");
  EXPECT_TRUE(parse("backend b\n  balance rdp-cookie()\n").has("parsing [f.cfg:2] : balance rdp-cookie : missing cookie name."));
  auto h = parse("backend b\n  mode http\n  balance hash req.hdr(host),lower\n");
  ASSERT_TRUE(h.r.model);
  ASSERT_TRUE(h.r.model->proxies[0].balance_expr);
  EXPECT_EQ(h.r.model->proxies[0].balance_expr->text(), "req.hdr(host),lower");
  EXPECT_TRUE(parse("backend b\n  balance hash\n").has("parsing [f.cfg:2] : balance hash requires a sample expression."));
  EXPECT_TRUE(parse("backend b\n  balance hash path lower\n").has("parsing [f.cfg:2] : balance hash takes no other argument (got 'lower')."));
  EXPECT_TRUE(parse("backend b\n  mode http\n  balance hash path,lower,foo\n").contains(
      "backend 'b' [f.cfg:1]: failed to parse 'balance hash' expression 'path,lower,foo' in : unknown converter 'foo'."));
  EXPECT_TRUE(parse("backend b\n  mode http\n  balance hash res.payload(0,1)\n").contains(
      "backend 'b' [f.cfg:1]: error detected while parsing 'balance hash' expression 'res.payload(0,1)' which "
      "requires information from response buffer, which is not available here."));
  auto w = parse("backend b\n  mode http\n  balance hash req.payload(0,4)\n");
  ASSERT_TRUE(w.r.model);
  EXPECT_TRUE(w.contains("backend 'b' [f.cfg:1]: L6 sample fetch <req.payload(0,4)> will be ignored in 'balance hash' expression in HTTP mode."));
}

TEST(Proxy, IdDisabledDescription) {
  auto r = parse("backend a\n  id 7\n  description the a team\nbackend b\n  disabled\nbackend c\n  disabled\n  enabled\n");
  ASSERT_TRUE(r.r.model);
  const auto& p = r.r.model->proxies;
  EXPECT_EQ(p[0].id, 7);
  EXPECT_EQ(p[0].description, "the a team");
  EXPECT_EQ(p[1].id, 2);
  EXPECT_TRUE(p[1].disabled);
  EXPECT_FALSE(p[2].disabled);
  EXPECT_TRUE(parse("backend a\n  id 0\n").contains("custom id has to be > 0."));
  EXPECT_TRUE(parse("defaults\n  id 3\n").has("parsing [f.cfg:2] : 'id' not allowed in 'defaults' section."));
  EXPECT_TRUE(parse("backend a\n  id 2\nbackend b\n  id 2\n").contains("backend b reuses same custom id as backend a (declared at"));
}

TEST(Proxy, UnknownKeywords) {
  EXPECT_TRUE(parse("backend b\n  stick-table type ip size 1k\n").has("parsing [f.cfg:2] : 'stick-table' is not supported by sluice yet."));
  EXPECT_TRUE(parse("backend b\n  retires 3\n").has("parsing [f.cfg:2] : unknown keyword 'retires' in 'backend' section; did you mean 'retries' maybe ?"));
  EXPECT_TRUE(parse("listen l\n  xyzzy\n").has("parsing [f.cfg:2] : unknown keyword 'xyzzy' in 'listen' section"));
}

}  // namespace
}  // namespace sluice::config

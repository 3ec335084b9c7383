// HAProxy tunables sluice accepts: global tune.* switches, localpeer / -L, the server id and
// idle-pool options, log-steps and the options that shape sockets and logging. Messages are
// HAProxy 3.5's (measured with `haproxy -c`) unless sluice's own is said.
#include <gtest/gtest.h>

#include <string>

#include "parse_run.h"

namespace sluice::config {
namespace {

using testing::kTimeouts;
using testing::parse;
using testing::proxy;

const std::string kDefaults = std::string("defaults\n  mode http\n") + kTimeouts;

TEST(Tunables, GlobalDefaults) {
  auto r = parse("global\n  nbthread 1\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.global().tune_maxrewrite, -1);
  EXPECT_EQ(r.global().tune_http_maxhdr, 101);
  EXPECT_EQ(r.global().tune_http_cookielen, 63);
  EXPECT_EQ(r.global().tune_http_logurilen, 1024);
  EXPECT_FALSE(r.global().localpeer.empty());   // the host name
}

TEST(Tunables, IdlePoolSharedAndZeroCopy) {
  for (const char* v : {"on", "off", "full"}) {
    auto r = parse(std::string("global\n  tune.idle-pool.shared ") + v + "\n");
    EXPECT_TRUE(r.r.model) << r.all();
    EXPECT_EQ(r.r.warnings, 0) << r.all();
  }
  EXPECT_TRUE(parse("global\n  tune.idle-pool.shared maybe\n").has(
      "parsing [f.cfg:2] : 'tune.idle-pool.shared' expects 'full', 'on' or 'off' but got 'maybe'."));
  EXPECT_TRUE(parse("global\n  tune.idle-pool.shared\n").has(
      "parsing [f.cfg:2] : 'tune.idle-pool.shared' expects 'full', 'on' or 'off' but got ''."));
  EXPECT_TRUE(parse("global\n  tune.h1.zero-copy-fwd-recv off\n  tune.h1.zero-copy-fwd-send on\n").r.model);
  EXPECT_TRUE(parse("global\n  tune.h1.zero-copy-fwd-recv maybe\n").has(
      "parsing [f.cfg:2] : 'tune.h1.zero-copy-fwd-recv' expects 'on' or 'off'."));
  EXPECT_TRUE(parse("global\n  tune.h1.zero-copy-fwd-send\n").has(
      "parsing [f.cfg:2] : 'tune.h1.zero-copy-fwd-send' expects 'on' or 'off'."));
}

TEST(Tunables, Maxrewrite) {
  EXPECT_EQ(parse("global\n  tune.maxrewrite 2048\n").global().tune_maxrewrite, 2048);
  EXPECT_EQ(parse("global\n  tune.maxrewrite 0\n").global().tune_maxrewrite, 0);
  EXPECT_TRUE(parse("global\n  tune.maxrewrite\n").has(
      "parsing [f.cfg:2] : 'tune.maxrewrite' expects an integer argument."));
  EXPECT_TRUE(parse("global\n  tune.maxrewrite -5\n").has(
      "parsing [f.cfg:2] : 'tune.maxrewrite' expects a positive integer argument."));
  // sluice's own: HAProxy's atol() would read 0.
  EXPECT_TRUE(parse("global\n  tune.maxrewrite abc\n").has(
      "parsing [f.cfg:2] : 'tune.maxrewrite' expects an integer argument, got 'abc'."));
}

TEST(Tunables, HttpMaxhdr) {
  EXPECT_EQ(parse("global\n  tune.http.maxhdr 32767\n").global().tune_http_maxhdr, 32767);
  EXPECT_EQ(parse("global\n  tune.http.maxhdr 1\n").global().tune_http_maxhdr, 1);
  for (const char* v : {"0", "32768", "x", ""})
    EXPECT_TRUE(parse(std::string("global\n  tune.http.maxhdr ") + v + "\n").has(
        "parsing [f.cfg:2] : 'tune.http.maxhdr' expects a numeric value between 1 and 32767"))
        << v;
}

TEST(Tunables, CookielenAndLogurilen) {
  auto r = parse("global\n  tune.http.cookielen 10\n  tune.http.logurilen 20\n" + kDefaults +
                 "frontend f\n  bind :8080\n  capture cookie SID len 40\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.global().tune_http_cookielen, 10);
  EXPECT_EQ(r.global().tune_http_logurilen, 20);
  EXPECT_EQ(proxy(r, "f").capture_cookie_len, 10);
  EXPECT_TRUE(r.has("truncating capture length to 10 bytes for frontend 'f'.")) << r.all();
  EXPECT_TRUE(parse("global\n  tune.http.logurilen\n").has(
      "parsing [f.cfg:2] : 'tune.http.logurilen' expects an integer argument."));
  EXPECT_TRUE(parse("global\n  tune.http.cookielen\n").has(
      "parsing [f.cfg:2] : 'tune.http.cookielen' expects an integer argument."));
  EXPECT_TRUE(parse("global\n  tune.http.cookielen 5 6\n").has(
      "parsing [f.cfg:2] : 'tune.http.cookielen' cannot handle unexpected argument '6'."));
}

TEST(Tunables, InsecureForkWanted) {
  auto r = parse("global\n  insecure-fork-wanted\n");
  EXPECT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(parse("global\n  insecure-fork-wanted foo\n").has(
      "parsing [f.cfg:2] : 'insecure-fork-wanted' cannot handle unexpected argument 'foo'."));
}

TEST(Tunables, Localpeer) {
  // Set in the first pass, so an earlier line already sees it (HAProxy 3.5 does the same).
  auto r = parse("global\n  .notice \"lp=$HAPROXY_LOCALPEER\"\n  localpeer abc\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.global().localpeer, "abc");
  EXPECT_TRUE(r.contains("'lp=abc'")) << r.all();
  EXPECT_TRUE(parse("global\n  localpeer\n").has("parsing [f.cfg:2] : 'localpeer' expects a name as an argument."));
  EXPECT_TRUE(parse("global\n  localpeer a b\n").has(
      "parsing [f.cfg:2] : 'localpeer' cannot handle unexpected argument 'b'."));
  // QUIRK kept from HAProxy 3.5: a second localpeer gets the -L message.
  EXPECT_TRUE(parse("global\n  localpeer a\n  localpeer b\n").has(
      "parsing [f.cfg:3] : 'localpeer' ignored since it is already set by using the '-L' command "
      "line argument."));
}

TEST(Tunables, CommandLineLocalpeer) {
  testing::Run run;
  LoadOptions o;
  o.localpeer = "foo";
  run.r = load_text("global\n  .notice \"lp=$HAPROXY_LOCALPEER\"\n", "f.cfg", o,
                    [&](const Diagnostic& d) { run.diags.push_back(d); });
  ASSERT_TRUE(run.r.model) << run.all();
  EXPECT_EQ(run.global().localpeer, "foo");
  EXPECT_TRUE(run.contains("'lp=foo'")) << run.all();
  testing::Run twice;
  twice.r = load_text("global\n  localpeer a\n", "f.cfg", o,
                      [&](const Diagnostic& d) { twice.diags.push_back(d); });
  EXPECT_FALSE(twice.r.model);
  EXPECT_TRUE(twice.has("parsing [f.cfg:2] : 'localpeer' ignored since it is already set by using "
                        "the '-L' command line argument."))
      << twice.all();
}

TEST(Tunables, ServerIds) {
  auto r = parse(kDefaults + "backend b\n  server s1 127.0.0.1:80\n  server s2 127.0.0.1:81 id 1\n"
                 "  server s3 127.0.0.1:82\n  server s4 127.0.0.1:83 id 3\n  server s5 127.0.0.1:84\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& sv = proxy(r, "b").servers;
  // What HAProxy 3.5's show stat says (sid): 2, 1, 4, 3, 6.
  ASSERT_EQ(sv.size(), 5u);
  EXPECT_EQ(sv[0].id, 2);
  EXPECT_EQ(sv[1].id, 1);
  EXPECT_EQ(sv[2].id, 4);
  EXPECT_EQ(sv[3].id, 3);
  EXPECT_EQ(sv[4].id, 6);
  EXPECT_TRUE(parse(kDefaults + "backend b\n  server s1 127.0.0.1:80 id 5\n  server s2 127.0.0.1:81 id 5\n")
                  .has("[f.cfg:8] : 'server b/s2' : 'id' : custom id 5 already used at f.cfg:7 ('server s1')."));
  for (const char* v : {"0", "-3", "x"})
    EXPECT_TRUE(parse(kDefaults + "backend b\n  server s1 127.0.0.1:80 id " + v + "\n")
                    .has("[f.cfg:7] : 'server b/s1' : 'id' : custom id has to be between 1 and 4294967295.."))
        << v;
  EXPECT_TRUE(parse(kDefaults + "backend b\n  server s1 127.0.0.1:80 id\n")
                  .has("[f.cfg:7] : 'server b/s1' : 'id' : expects an integer argument."));
  EXPECT_TRUE(parse(kDefaults + "backend b\n  default-server id 4\n  server s1 127.0.0.1:80\n")
                  .has("[f.cfg:7] : 'id' option is not accepted in default-server sections"));
}

TEST(Tunables, ServerPoolOptions) {
  auto r = parse(kDefaults + "  default-server pool-purge-delay 2s max-reuse 3\n"
                 "backend b\n  server s1 127.0.0.1:80 pool-max-conn 10 pool-low-conn 4\n"
                 "  server s2 127.0.0.1:81 pool-purge-delay 0 max-reuse -1 pool-max-conn 0\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& sv = proxy(r, "b").servers;
  EXPECT_EQ(sv[0].pool_max_conn, 10);
  EXPECT_EQ(sv[0].pool_low_conn, 4);
  EXPECT_EQ(sv[0].pool_purge_delay_ms, 2000u);
  EXPECT_EQ(sv[0].max_reuse, 3);
  EXPECT_EQ(sv[1].pool_max_conn, 0);
  EXPECT_EQ(sv[1].pool_purge_delay_ms, 0u);
  EXPECT_EQ(sv[1].max_reuse, -1);
  const std::string b = kDefaults + "backend b\n  server s1 127.0.0.1:80 ";
  EXPECT_TRUE(parse(b + "pool-max-conn -2\n").has("[f.cfg:7] : 'server b/s1' : 'pool-max-conn' must be >= -1."));
  for (const char* o : {"pool-max-conn", "pool-low-conn", "pool-purge-delay", "max-reuse"})
    EXPECT_TRUE(parse(b + o + "\n").has(std::string("[f.cfg:7] : 'server b/s1' : '") + o +
                                       "' expects <value> as argument..")) << o;
  EXPECT_TRUE(parse(b + "pool-purge-delay x\n").has(
      "[f.cfg:7] : 'server b/s1' : unexpected character 'x' in argument to <pool-purge-delay>.."));
  // sluice's own: HAProxy's atoi() would read 0.
  EXPECT_TRUE(parse(b + "max-reuse x\n").has("[f.cfg:7] : 'server b/s1' : 'max-reuse' expects an integer argument, got 'x'."));
}

TEST(Tunables, LogSteps) {
  auto r = parse(kDefaults + "  log-steps close\nfrontend f\n  bind :8080\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(proxy(r, "f").log_steps, 1u << 4);
  EXPECT_TRUE(parse(kDefaults + "frontend f\n  bind :8080\n  log-steps\n").r.model);
  const std::string f = kDefaults + "frontend f\n  bind :8080\n  log-steps ";
  const std::string names = "accept, request, connect, response, close, http-req, http-res, "
                            "http-after-res, tcp-req-conn, tcp-req-sess, tcp-req-cont, tcp-res-cont";
  EXPECT_TRUE(parse(f + "foo\n").has("parsing [f.cfg:8] : invalid log step name (foo). Expected values are: " + names));
  EXPECT_TRUE(parse(f + "accept,error\n").has("parsing [f.cfg:8] : invalid log step name (error). Expected values are: " + names));
  auto steps = parse(f + "accept,connect,close\n");
  ASSERT_TRUE(steps.r.model) << steps.all();
  EXPECT_EQ(proxy(steps, "f").log_steps, 1u | 4u | 16u);
  auto all = parse(f + "all\n");
  ASSERT_TRUE(all.r.model) << all.all();
  EXPECT_EQ(proxy(all, "f").log_steps, (1u << 12) - 1);
  auto be = parse(kDefaults + "backend b\n  log-steps close\n");
  ASSERT_TRUE(be.r.model) << be.all();
  EXPECT_TRUE(be.has("parsing [f.cfg:7] : log-steps will be ignored because backend 'b' has no frontend capability"));
}

TEST(Tunables, Options) {
  auto r = parse(kDefaults + "  option dontlog-normal\n  option http-no-delay\n"
                 "frontend f\n  bind :8080\n  option socket-stats\n  option tcp-smart-accept\n"
                 "  option splice-auto\n  option splice-request\n  option splice-response\n"
                 "  no option http-no-delay\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.r.warnings, 0) << r.all();
  const auto& f = proxy(r, "f");
  EXPECT_TRUE(f.option_dontlog_normal);
  EXPECT_TRUE(f.option_socket_stats);
  EXPECT_EQ(f.option_tcp_smart_accept, 1);
  EXPECT_EQ(proxy(parse(kDefaults + "  no option tcp-smart-accept\nfrontend f\n  bind :1\n"), "f")
                .option_tcp_smart_accept, -1);
  EXPECT_FALSE(f.option_http_no_delay);
  EXPECT_TRUE(parse(kDefaults + "frontend f\n  bind :8080\n  option socket-stats x\n")
                  .has("parsing [f.cfg:8] : 'option socket-stats' cannot handle unexpected argument 'x'."));
  // Frontend options in a backend: HAProxy 3.5 warns, then fails on the option as unknown.
  for (const char* o : {"socket-stats", "dontlog-normal", "tcp-smart-accept"}) {
    auto be = parse(kDefaults + "backend b\n  option " + o + "\n");
    EXPECT_FALSE(be.r.model) << o;
    EXPECT_TRUE(be.contains(std::string("unknown option '") + o + "'; did you mean '" + o + "' maybe ?")) << be.all();
  }
}

}  // namespace
}  // namespace sluice::config

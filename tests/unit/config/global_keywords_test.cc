// Keywords of the global section (the thread and sharding ones are in thread_keywords_test).
#include <gtest/gtest.h>

#include <string>

#include "net/address.h"
#include "sample/vars.h"
#include "parse_run.h"

namespace sluice::config {
namespace {

using testing::parse;
using testing::kTimeouts;

TEST(Global, Nbthread) {
  EXPECT_EQ(parse("global\n  nbthread 4\n  nbthread 8\n").r.model->global.nbthread, 8);
  EXPECT_TRUE(parse("global\n  nbthread abc\n").has("parsing [f.cfg:2] : passed a missing or unparsable integer value in 'abc'"));
  EXPECT_TRUE(parse("global\n  nbthread 4x\n").contains("unparsable integer value in '4x'"));
  EXPECT_TRUE(parse("global\n  nbthread 0\n").contains("between 1 and 1024"));
  EXPECT_TRUE(parse("global\n  nbthread 1025\n").contains("between 1 and 1024"));
}

TEST(Global, Maxconn) {
  auto r = parse("global\n  maxconn 10\n  maxconn 20\n");
  ASSERT_TRUE(r.r.model);
  EXPECT_EQ(r.r.model->global.maxconn, 10);
  EXPECT_EQ(r.r.alerts, 1);
  EXPECT_TRUE(r.has("parsing [f.cfg:3] : 'maxconn' already specified. Continuing."));
  EXPECT_TRUE(parse("global\n  maxconn 10k\n").has("parsing [f.cfg:2] : cannot parse 'maxconn' value '10k', an integer is expected."));
  // 0 is "automatic" as in HAProxy: the model's "not set", derived from ulimit -n at start-up.
  auto zero = parse("global\n  maxconn 0\n");
  ASSERT_TRUE(zero.r.model) << zero.all();
  EXPECT_EQ(zero.r.alerts, 0);
  EXPECT_EQ(zero.global().maxconn, 0);
  EXPECT_TRUE(parse("global\n  maxconn -1\n").has("parsing [f.cfg:2] : cannot parse 'maxconn' value '-1', an integer is expected."));
}

TEST(Global, TlsLimits) {
  auto r = parse("global\n  maxsslconn 100\n  maxsslrate 20\n  tune.ssl.maxrecord 1400\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.global().max_ssl_conn, 100);
  EXPECT_EQ(r.global().max_ssl_rate, 20);
  EXPECT_EQ(r.global().tune_ssl_maxrecord, 1400);
  // HAProxy 3.5's messages.
  EXPECT_TRUE(parse("global\n  maxsslconn abc\n").has("parsing [f.cfg:2] : 'maxsslconn' expects an integer argument."));
  EXPECT_TRUE(parse("global\n  maxsslrate -1\n").has("parsing [f.cfg:2] : 'maxsslrate' expects an integer argument."));
  EXPECT_TRUE(parse("global\n  maxsslconn 5 6\n").has("parsing [f.cfg:2] : 'maxsslconn' cannot handle unexpected argument '6'."));
  EXPECT_TRUE(parse("global\n  tune.ssl.maxrecord x\n").has("parsing [f.cfg:2] : 'tune.ssl.maxrecord' expects an integer argument."));
}

TEST(Global, Maxaccept) {
  // HAProxy turns 0 into its default (4); -1 is unlimited.
  auto zero = parse("global\n  tune.maxaccept 0\n");
  ASSERT_TRUE(zero.r.model) << zero.all();
  EXPECT_EQ(zero.r.alerts, 0);
  EXPECT_EQ(zero.global().tune_maxaccept, 4);
  EXPECT_EQ(parse("global\n  tune.maxaccept 64\n").global().tune_maxaccept, 64);
  EXPECT_TRUE(parse("global\n  tune.maxaccept -2\n").has(
      "parsing [f.cfg:2] : 'tune.maxaccept' expects -1 (unlimited) or an integer from 0 to 2147483647 "
      "(0 = the default), got '-2'."));
}

TEST(Global, StatsSocket) {
  auto r = parse("global\n  stats socket /tmp/s.sock level admin mode 600\n  stats socket ipv4@127.0.0.1:9999\n"
                 "  stats timeout 30s\n  stats maxconn 5\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& g = r.r.model->global;
  ASSERT_EQ(g.stats_sockets.size(), 2u);
  EXPECT_EQ(g.stats_sockets[0].level, CliLevel::kAdmin);
  EXPECT_EQ(g.stats_sockets[0].unix_mode, 0600);
  EXPECT_EQ(g.stats_sockets[0].addr.kind, net::ListenAddress::Kind::kUnix);
  EXPECT_EQ(g.stats_sockets[1].level, CliLevel::kOperator);
  EXPECT_EQ(g.stats_sockets[1].addr.addr.to_string(), "127.0.0.1:9999");
  EXPECT_EQ(g.stats_timeout_ms, 30000u);
  EXPECT_EQ(g.stats_maxconn, 5);
  EXPECT_TRUE(parse("global\n  stats socket :1-2\n").contains("must be a single address"));
  EXPECT_TRUE(parse("global\n  stats socket /s level god\n").contains("'level' only supports"));
  EXPECT_TRUE(parse("global\n  stats socket /s levl admin\n").contains("did you mean 'level' maybe ?"));
  EXPECT_TRUE(parse("global\n  stats socket /s level admin expose-fd listeners\n")
                  .global().stats_sockets[0].expose_listeners);
  EXPECT_TRUE(parse("global\n  stats socket /s expose-fd foo\n").has(
      "parsing [f.cfg:2] : 'stats socket' : ''expose-fd' only supports 'listeners' (got 'foo')'"));
  EXPECT_TRUE(parse("global\n  stats timeout 0\n").has("parsing [f.cfg:2] : 'stats timeout' expects a positive value"));
  EXPECT_TRUE(parse("global\n  stats maxconn 0\n").has("parsing [f.cfg:2] : 'stats maxconn' expects a positive value"));
  EXPECT_TRUE(parse("global\n  stats enable\n").contains("'stats' supports"));
}

TEST(Global, Misc) {
  auto r = parse("global\n  daemon\n  pidfile /a\n  pidfile /b\n  hard-stop-after 1m\n  tune.bufsize 16k\n"
                 "  tune.maxaccept -1\n  node n1\n  description my lb\n  zero-warning\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& g = r.r.model->global;
  EXPECT_TRUE(g.daemon);
  EXPECT_EQ(g.pidfile, "/a");
  EXPECT_EQ(r.r.warnings, 1);
  EXPECT_EQ(g.hard_stop_after_ms, 60000u);
  EXPECT_EQ(g.tune_bufsize, 16384);
  EXPECT_EQ(g.tune_maxaccept, -1);
  EXPECT_EQ(g.node, "n1");
  EXPECT_EQ(g.description, "my lb");
  EXPECT_TRUE(g.zero_warning);
  EXPECT_EQ(parse("global\n  tune.bufsize 1000\n").r.model->global.tune_bufsize, 1008);
  EXPECT_TRUE(parse("global\n  tune.bufsize 16kb\n").has("parsing [f.cfg:2] : unexpected 'b' after size passed to 'tune.bufsize'"));
  EXPECT_TRUE(parse("global\n  tune.bufsize 4g\n").has("parsing [f.cfg:2] : unexpected 'g' after size passed to 'tune.bufsize'"));
  EXPECT_TRUE(parse("global\n  tune.bufsize 0\n").contains("expects a positive integer argument."));
  EXPECT_TRUE(parse("global\n  daemon x\n").has("parsing [f.cfg:2] : 'daemon' cannot handle unexpected argument 'x'."));
  EXPECT_TRUE(parse("global\n  lua-load /x\n").has("parsing [f.cfg:2] : 'lua-load' is not supported by sluice yet (it needs Lua)."));
  EXPECT_EQ(parse("global\n  chroot /x\n  uid 7\n  gid 8\n").r.model->global.chroot, "/x");
  EXPECT_EQ(parse("global\n  uid 7\n").r.model->global.uid, 7);
  EXPECT_EQ(parse("global\n  gid 8\n").r.model->global.gid, 8);
  EXPECT_EQ(parse("global\n  user root\n  group root\n").r.model->global.gid, 0);
  EXPECT_TRUE(parse("global\n  maxconm 5\n").has("parsing [f.cfg:2] : unknown keyword 'maxconm' in 'global' section; did you mean 'maxconn' maybe ?"));
}

// Spec 7: a buffer of 256 MiB or more is fatal as soon as a proxy is in HTTP mode.
TEST(Global, HugeBufsizeNeedsTcpOnly) {
  std::string proxies = std::string("defaults\n") + kTimeouts +
                        "frontend f\n  bind :1\n  default_backend b\nbackend b\n  server s 1.1.1.1:1\n";
  auto tcp = parse("global\n  tune.bufsize 256m\n" + proxies);
  EXPECT_TRUE(tcp.r.model) << tcp.all();
  std::string http = std::string("defaults\n") + kTimeouts + "  mode http\n" +
                     "frontend f\n  bind :1\n  default_backend b\nbackend b\n  server s 1.1.1.1:1\n";
  auto r = parse("global\n  tune.bufsize 256m\n" + http);
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.has("global.tune.bufsize must be below 256 MB when HTTP is in use (current value = "
                    "268435456)."))
      << r.all();
  int n = 0;
  for (const auto& d : r.diags) n += d.text.find("tune.bufsize") != std::string::npos;
  EXPECT_EQ(n, 1) << r.all();
  auto below = parse("global\n  tune.bufsize 268435440\n" + http);
  EXPECT_TRUE(below.r.model) << below.all();
  // A disabled proxy is not validated.
  auto disabled = parse("global\n  tune.bufsize 1g\n" + std::string("defaults\n") + kTimeouts +
                        "backend b\n  mode http\n  disabled\n");
  EXPECT_TRUE(disabled.r.model) << disabled.all();
}

TEST(Global, Log) {
  auto r = parse("global\n  log stdout format raw local0\n  log 127.0.0.1 len 2048 local1 info notice\n"
                 "  log /dev/log daemon\n  log \"${SLUICE_LOCAL-127.0.0.2}:515\" user\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& l = r.r.model->global.logs;
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(l[0].kind, LogTarget::Kind::kStdout);
  EXPECT_EQ(l[0].format, LogFormat::kRaw);
  EXPECT_EQ(l[0].facility, 16);
  EXPECT_EQ(l[1].kind, LogTarget::Kind::kUdp);
  EXPECT_EQ(l[1].addr.to_string(), "127.0.0.1:514");
  EXPECT_EQ(l[1].max_len, 2048);
  EXPECT_EQ(l[1].max_level, 6);
  EXPECT_EQ(l[1].min_level, 5);
  EXPECT_EQ(l[2].kind, LogTarget::Kind::kUnixDgram);
  EXPECT_EQ(l[3].addr.to_string(), "127.0.0.2:515");
  EXPECT_TRUE(parse("global\n  log stdout bogus\n").has("parsing [f.cfg:2] : unknown log facility 'bogus'"));
  EXPECT_TRUE(parse("global\n  log\n").has("parsing [f.cfg:2] : log : expects <address> and <facility> or global as arguments"));
  EXPECT_TRUE(parse("global\n  log stdout local0 loud\n").contains("unknown optional log level 'loud'"));
  r = parse("global\n  log stdout local0\n  no log\n");
  EXPECT_TRUE(r.r.model->global.logs.empty());
}


// Global set-var / set-var-fmt run while the file is read (a later line sees the value);
// tune.vars.* are kept for start-up. HAProxy 3.5's messages.
TEST(Global, Variables) {
  auto r = parse("global\n  set-var proc.gv_a str(hello)\n  set-var proc.gv_n int(40),add(2)\n"
                 "  set-var-fmt proc.gv_f \"%[var(proc.gv_a)]-x\"\n  tune.vars.txn-max-size 64\n"
                 "  tune.vars.proc-max-size\n");
  ASSERT_TRUE(r.r.model);
  EXPECT_EQ(r.r.model->global.vars_limits.txn, 64u);
  EXPECT_EQ(r.r.model->global.vars_limits.proc, 0u);
  auto get = [](std::string_view name) {
    sample::Sample s;
    std::string text;
    uint32_t id = sample::VarNames::global().find(name);
    if (id && sample::ProcVars::instance().get(id, s, sample::thread_scratch())) sample::to_text(s, text);
    return text;
  };
  EXPECT_EQ(get("proc.gv_a"), "hello");
  EXPECT_EQ(get("proc.gv_n"), "42");
  EXPECT_EQ(get("proc.gv_f"), "hello-x");
  EXPECT_TRUE(parse("global\n  set-var txn.a str(x)\n").has(
      "parsing [f.cfg:2] : 'set-var': cannot set variable 'txn.a', only scope 'proc' is permitted in the global section."));
  EXPECT_TRUE(parse("global\n  set-var proc.a\n").has(
      "parsing [f.cfg:2] : 'set-var' requires a process-wide variable name ('proc.<name>') and a sample expression."));
  EXPECT_TRUE(parse("global\n  set-var-fmt proc.a\n").has(
      "parsing [f.cfg:2] : 'set-var-fmt' requires a process-wide variable name ('proc.<name>') and a format string."));
  EXPECT_TRUE(parse("global\n  set-var proc.a foo\n").has("parsing [f.cfg:2] : unknown fetch method 'foo'"));
  EXPECT_TRUE(parse("global\n  set-var a str(x)\n").contains("invalid variable name 'a'."));
  EXPECT_TRUE(parse("global\n  set-var proc.a src\n").contains("not available here"));
  EXPECT_TRUE(parse("global\n  tune.vars.proc-max-size 10k\n").has(
      "parsing [f.cfg:2] : tune.vars.proc-max-size: '10k' is an invalid size"));
  EXPECT_TRUE(parse("global\n  tune.vars.foo-max-size 5\n").contains("'tune.vars.foo-max-size' is not supported by sluice yet."));
  // health checks have no variables yet: their limit would bound nothing
  EXPECT_EQ(parse("global\n  tune.vars.check-max-size 500\n").global().vars_limits.check, 500u);
}

// server-state-file, server-state-base, load-server-state-from-file, server-state-file-name:
// HAProxy 3.5's messages (its "expect" typo included).
TEST(Global, ServerStateFile) {
  auto r = parse("global\n  server-state-file st\n  server-state-base /var/lib/s\n"
                 "defaults\n  load-server-state-from-file global\n"
                 "backend a\n  server s 1.1.1.1:1\n"
                 "backend b\n  load-server-state-from-file local\n  server-state-file-name mine\n"
                 "  server s 1.1.1.1:1\n"
                 "backend c\n  load-server-state-from-file none\n  server-state-file-name use-backend-name\n"
                 "  server s 1.1.1.1:1\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.global().server_state_file, "st");
  EXPECT_EQ(r.global().server_state_base, "/var/lib/s");
  using F = ProxyConfig::StateFrom;
  EXPECT_EQ(testing::proxy(r, "a").state_from, F::kGlobal);
  EXPECT_EQ(testing::proxy(r, "b").state_from, F::kLocal);
  EXPECT_EQ(testing::proxy(r, "b").state_file_name, "mine");
  EXPECT_EQ(testing::proxy(r, "c").state_from, F::kNone);
  EXPECT_EQ(testing::proxy(r, "c").state_file_name, "");
  EXPECT_TRUE(parse("global\n  server-state-file\n").has(
      "parsing [f.cfg:2] : 'server-state-file' expect one argument: a file path."));
  EXPECT_TRUE(parse("global\n  server-state-base\n").has(
      "parsing [f.cfg:2] : 'server-state-base' expects one argument: a directory path."));
  EXPECT_TRUE(parse("backend b\n  load-server-state-from-file foo\n").has(
      "parsing [f.cfg:2] : 'load-server-state-from-file' expects 'global', 'local' or 'none'. "
      "Got 'foo'"));
  EXPECT_TRUE(parse("backend b\n  server-state-file-name x\n  server s 1.1.1.1:1\n").has(
      "backend 'b' : 'server-state-file-name' has no effect without 'load-server-state-from-file "
      "local'."));
  EXPECT_TRUE(parse("backend b\n  server-state-file-name x y\n").has(
      "parsing [f.cfg:2] : 'server-state-file-name' cannot handle unexpected argument 'y'."));
  EXPECT_TRUE(parse("backend b\n  load-server-state-from-file global\n  server s 1.1.1.1:1\n")
                  .has("backend 'b' configured to load server state file from global section "
                       "'server-state-file' directive. Unfortunately, 'server-state-file' is not "
                       "set!"));
}

}  // namespace
}  // namespace sluice::config

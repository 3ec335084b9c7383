// Internal-state fetches (HAProxy 7.3.2): constants, the process, proxies and servers through
// Env, dates, random numbers, UUIDs. Expected texts and values were checked against HAProxy
// 3.5 (`lf-string "%[...]"` on a loopback port, and `-c` for the parse errors).
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "sample/expr.h"

namespace sluice::sample {
namespace {

// An Env that answers from maps, and records the names it was asked about.
class TestEnv : public Env {
 public:
  std::map<Query, int64_t> q;
  std::map<TextQuery, std::string> t;
  std::map<ProxyStat, int64_t> ps;
  mutable std::string last_proxy, last_server;
  int thread = 3;
  bool stop = false;

  bool query(Query k, int64_t* out) const override {
    auto it = q.find(k);
    if (it == q.end()) return false;
    *out = it->second;
    return true;
  }
  bool text(TextQuery k, std::string_view* out) const override {
    auto it = t.find(k);
    if (it == t.end()) return false;
    *out = it->second;
    return true;
  }
  bool proxy_stat(ProxyStat k, std::string_view proxy, std::string_view server,
                  int64_t* out) const override {
    last_proxy = proxy;
    last_server = server;
    auto it = ps.find(k);
    if (it == ps.end()) return false;
    *out = it->second;
    return true;
  }
  int nbsrv(std::string_view backend) const override {
    last_proxy = backend;
    return backend == "empty" ? 0 : 2;
  }
  int be_conn(std::string_view backend) const override { return 7; }
  int fe_conn(std::string_view frontend) const override { return 9; }
  int srv_conn(std::string_view backend, std::string_view server) const override {
    last_proxy = backend;
    last_server = server;
    return 4;
  }
  bool stopping() const override { return stop; }
  int thread_id() const override { return thread; }
};

ParseCtx known_names() {
  ParseCtx pc;
  pc.backend_exists = [](const void*, std::string_view n) { return n == "be" || n == "empty"; };
  pc.frontend_exists = [](const void*, std::string_view n) { return n == "fe"; };
  pc.server_exists = [](const void*, std::string_view be, std::string_view srv) {
    return srv == "s1";
  };
  return pc;
}

std::string parse_error(std::string_view text, const ParseCtx& pc = ParseCtx{}) {
  auto r = Expr::parse(text, pc);
  return r.ok() ? std::string("ok") : r.error().message;
}

std::string eval(std::string_view text, const Ctx& ctx = Ctx{}) {
  ParseCtx pc;
  auto r = Expr::parse(text, pc);
  if (!r.ok()) return "parse error: " + r.error().message;
  std::string out;
  if (!r->eval_text(ctx, out)) return "<none>";
  return out;
}

Sample eval_sample(std::string_view text, const Ctx& ctx = Ctx{}) {
  ParseCtx pc;
  auto r = Expr::parse(text, pc);
  EXPECT_TRUE(r.ok()) << text;
  Sample s;
  if (r.ok()) {
    EXPECT_TRUE(r->eval(ctx, s)) << text;
  }
  // The text may point into the expression's arguments (str(), bin()), gone with `r`: kept
  // here for the test's life.
  static std::deque<std::string> kept;
  if (!s.str.empty()) s.str = kept.emplace_back(s.str);
  return s;
}

TEST(FetchInternal, Constants) {
  EXPECT_EQ(eval("always_true"), "1");
  EXPECT_EQ(eval("always_false"), "0");
  EXPECT_EQ(eval("int(-42)"), "-42");
  EXPECT_EQ(eval("str(abc)"), "abc");
  EXPECT_EQ(eval("str"), "");
  EXPECT_EQ(eval("bool(true)"), "1");
  EXPECT_EQ(eval("bool(TRUE)"), "1");
  EXPECT_EQ(eval("bool(false)"), "0");
  EXPECT_EQ(eval("bool(0)"), "0");
  EXPECT_EQ(eval("bool(1)"), "1");
  EXPECT_EQ(parse_error("bool(3)"),
            "invalid args in fetch method 'bool' : Expects 'true', 'false', '0' or '1'");
  EXPECT_EQ(parse_error("bool( 1)"),
            "invalid args in fetch method 'bool' : Expects 'true', 'false', '0' or '1'");
  EXPECT_EQ(eval("ipv4(1.2.3.4)"), "1.2.3.4");
  EXPECT_EQ(eval("ipv6(::ffff:1.2.3.4)"), "::ffff:1.2.3.4");
  EXPECT_EQ(parse_error("ipv4(1.2.3)"),
            "fetch method 'ipv4' : failed to parse '1.2.3' as type 'IPv4 address' at position 1");
  EXPECT_EQ(eval_sample("ipv6(::1)").type, Type::kIpv6);
}

TEST(FetchInternal, BinDecodesHexOnce) {
  Sample s = eval_sample("bin(41ff)");
  EXPECT_EQ(s.type, Type::kBin);
  EXPECT_EQ(s.str, std::string_view("A\xff", 2));
  EXPECT_EQ(parse_error("bin(zz)"),
            "invalid args in fetch method 'bin' : an hex digit is expected (found 'z')");
  EXPECT_EQ(parse_error("bin(0G)"),
            "invalid args in fetch method 'bin' : an hex digit is expected (found 'G')");
  EXPECT_EQ(parse_error("bin(abc)"),
            "invalid args in fetch method 'bin' : an even number of hex digit is expected");
  EXPECT_EQ(parse_error("bin(zzz)"),
            "invalid args in fetch method 'bin' : an even number of hex digit is expected");
  EXPECT_EQ(parse_error("bin()"), "invalid args in fetch method 'bin' : (null)");
}

TEST(FetchInternal, MethodIsATypedConstant) {
  Sample s = eval_sample("meth(GET)");
  EXPECT_EQ(s.type, Type::kMeth);
  EXPECT_EQ(s.sint, static_cast<int64_t>(Method::kGet));
  EXPECT_EQ(eval("meth(PURGE)"), "PURGE");
  EXPECT_EQ(eval("meth(get)"), "get");
  EXPECT_EQ(eval("meth"), "");
  EXPECT_EQ(parse_error("meth(GE T)"), "invalid args in fetch method 'meth' : expects valid method.");
}

TEST(FetchInternal, DatesFollowTheEventTime) {
  Ctx ctx;
  ctx.now_us = 1796202158798123;
  EXPECT_EQ(eval("date", ctx), "1796202158");
  EXPECT_EQ(eval("date(10)", ctx), "1796202168");
  EXPECT_EQ(eval("date(-5)", ctx), "1796202153");
  EXPECT_EQ(eval("date(0,ms)", ctx), "1796202158798");
  EXPECT_EQ(eval("date(10,ms)", ctx), "1796202158808");
  EXPECT_EQ(eval("date(1,us)", ctx), "1796202158798124");
  EXPECT_EQ(eval("date(0,s)", ctx), "1796202158");
  EXPECT_EQ(eval("date_us", ctx), "798123");
  EXPECT_EQ(parse_error("date(1,xx)"),
            "invalid args in fetch method 'date' : expects 's', 'ms' or 'us', got 'xx'");
  EXPECT_EQ(parse_error("date(1,MS)"),
            "invalid args in fetch method 'date' : expects 's', 'ms' or 'us', got 'MS'");
  EXPECT_EQ(parse_error("date(1,)"),
            "invalid args in fetch method 'date' : expects 's', 'ms' or 'us', got ''");
  EXPECT_EQ(parse_error("date(x)"),
            "fetch method 'date' : failed to parse 'x' as type 'integer' at position 1");
  // Without an event time, the clock.
  int64_t now = std::stoll(eval("date"));
  EXPECT_NEAR(static_cast<double>(now), static_cast<double>(time(nullptr)), 2.0);
}

TEST(FetchInternal, RandStaysInItsRange) {
  std::set<int64_t> seen;
  for (int i = 0; i < 2000; ++i) {
    int64_t v = std::stoll(eval("rand(10)"));
    ASSERT_GE(v, 0);
    ASSERT_LT(v, 10);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 10u);
  EXPECT_EQ(eval("rand(1)"), "0");
  EXPECT_EQ(eval("rand(0)"), "0");
  for (int i = 0; i < 100; ++i) {
    int64_t v = std::stoll(eval("rand"));
    ASSERT_GE(v, 0);
    ASSERT_LE(v, 0xffffffffLL);
  }
  EXPECT_EQ(parse_error("rand(x)"),
            "fetch method 'rand' : failed to parse 'x' as type 'integer' at position 1");
  EXPECT_EQ(parse_error("rand(1,2)"), "fetch method 'rand' : expected ')' before ',2)'");
}

// Whether `s` is an RFC 9562 UUID text of `version`: 8-4-4-4-12 lowercase hex digits, the
// version digit, and the variant bits 10.
bool is_uuid(const std::string& s, char version) {
  if (s.size() != 36) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !std::isxdigit(static_cast<unsigned char>(s[i])) || std::isupper(static_cast<unsigned char>(s[i])))
      return false;
  }
  return s[14] == version && std::string_view("89ab").find(s[19]) != std::string_view::npos;
}

TEST(FetchInternal, UuidVersions4And7) {
  std::string a = eval("uuid"), b = eval("uuid(4)");
  EXPECT_TRUE(is_uuid(a, '4')) << a;
  EXPECT_TRUE(is_uuid(b, '4')) << b;
  EXPECT_NE(a, b);
  Ctx ctx;
  ctx.now_us = 1796202158798123;   // 1796202158798 ms = 0x01a235fddace
  std::string c = eval("uuid(7)", ctx);
  EXPECT_TRUE(is_uuid(c, '7')) << c;
  EXPECT_EQ(c.substr(0, 14), "01a235fd-dace-") << c;
  EXPECT_EQ(parse_error("uuid(5)"),
            "invalid args in fetch method 'uuid' : Unsupported UUID version: '5'");
  EXPECT_EQ(parse_error("uuid(0)"),
            "invalid args in fetch method 'uuid' : Unsupported UUID version: '0'");
  EXPECT_EQ(parse_error("uuid(x)"),
            "fetch method 'uuid' : failed to parse 'x' as type 'integer' at position 1");
}

TEST(FetchInternal, TheProcess) {
  setenv("SLUICE_FETCH_TEST", "value 1", 1);
  EXPECT_EQ(eval("env(SLUICE_FETCH_TEST)"), "value 1");
  unsetenv("SLUICE_FETCH_TEST_NOPE");
  EXPECT_EQ(eval("env(SLUICE_FETCH_TEST_NOPE)"), "<none>");
  EXPECT_EQ(eval("env"), "<none>");
  EXPECT_EQ(parse_error("env(HOME,x)"), "fetch method 'env' : expected ')' before ',x)'");
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  EXPECT_EQ(eval("hostname"), host);
  EXPECT_EQ(eval("nbproc"), "1");
  EXPECT_EQ(eval("proc"), "1");
  EXPECT_EQ(eval("pid"), std::to_string(getpid()));
  EXPECT_EQ(eval("thread"), "0");
  EXPECT_EQ(eval("tgroup"), "0");
  EXPECT_EQ(eval("stopping"), "0");
  TestEnv env;
  env.stop = true;
  env.q[Env::Query::kThreadGroup] = 2;
  Ctx ctx;
  ctx.env = &env;
  EXPECT_EQ(eval("thread", ctx), "3");
  EXPECT_EQ(eval("tgroup", ctx), "2");
  EXPECT_EQ(eval("stopping", ctx), "1");
}

TEST(FetchInternal, StreamAndProcessStateThroughEnv) {
  // Unknown to the Env: no sample.
  for (auto name : {"act_conn", "uptime", "cpu_calls", "cpu_ns_avg", "cpu_ns_tot", "lat_ns_avg",
                    "lat_ns_tot", "prio_class", "prio_offset", "txn.id32", "txn.conn_retries",
                    "txn.redispatched", "txn.sess_term_state", "last_rule_file",
                    "last_rule_line", "last_entity", "cpu_usage_thr"})
    EXPECT_EQ(eval(name), "<none>") << name;
  TestEnv env;
  env.q[Env::Query::kActConn] = 12;
  env.q[Env::Query::kUptime] = 3600;
  env.q[Env::Query::kCpuCalls] = 4;
  env.q[Env::Query::kCpuNsTot] = 1000;
  env.q[Env::Query::kLatNsTot] = 10;
  env.q[Env::Query::kPrioClass] = 5;
  env.q[Env::Query::kPrioOffset] = -250;
  env.q[Env::Query::kTxnId32] = 0;
  env.q[Env::Query::kConnRetries] = 2;
  env.q[Env::Query::kRedispatched] = 1;
  env.q[Env::Query::kLastRuleLine] = 42;
  env.q[Env::Query::kCpuUsageProc] = 17;
  env.t[Env::TextQuery::kTermState] = "LR";
  env.t[Env::TextQuery::kLastRuleFile] = "/etc/haproxy.cfg";
  env.t[Env::TextQuery::kLastEntity] = "/etc/haproxy.cfg:42";
  Ctx ctx;
  ctx.env = &env;
  EXPECT_EQ(eval("act_conn", ctx), "12");
  EXPECT_EQ(eval("uptime", ctx), "3600");
  EXPECT_EQ(eval("cpu_calls", ctx), "4");
  EXPECT_EQ(eval("cpu_ns_tot", ctx), "1000");
  EXPECT_EQ(eval("cpu_ns_avg", ctx), "250");
  EXPECT_EQ(eval("lat_ns_avg", ctx), "2");
  EXPECT_EQ(eval("prio_class", ctx), "5");
  EXPECT_EQ(eval("prio_offset", ctx), "-250");
  EXPECT_EQ(eval("txn.id32", ctx), "0");
  EXPECT_EQ(eval("txn.conn_retries", ctx), "2");
  EXPECT_EQ(eval("txn.redispatched", ctx), "1");
  EXPECT_EQ(eval("txn.sess_term_state", ctx), "LR");
  EXPECT_EQ(eval("last_rule_file", ctx), "/etc/haproxy.cfg");
  EXPECT_EQ(eval("last_rule_line", ctx), "42");
  EXPECT_EQ(eval("last_entity", ctx), "/etc/haproxy.cfg:42");
  EXPECT_EQ(eval("cpu_usage_proc", ctx), "17");
  env.q[Env::Query::kCpuCalls] = 0;
  EXPECT_EQ(eval("cpu_ns_avg", ctx), "0");
}

TEST(FetchInternal, ProxiesAndServersByName) {
  TestEnv env;
  env.ps[Env::ProxyStat::kAvgQueue] = 3;
  env.ps[Env::ProxyStat::kQueue] = 6;
  env.ps[Env::ProxyStat::kConnSlots] = -1;
  env.ps[Env::ProxyStat::kBeSessRate] = 20;
  env.ps[Env::ProxyStat::kFeReqRate] = 30;
  env.ps[Env::ProxyStat::kSrvIsUp] = 1;
  env.ps[Env::ProxyStat::kSrvWeight] = 7;
  Ctx ctx;
  ctx.env = &env;
  EXPECT_EQ(eval("avg_queue", ctx), "3");
  EXPECT_EQ(env.last_proxy, "");   // the current backend
  EXPECT_EQ(eval("avg_queue(be)", ctx), "3");
  EXPECT_EQ(env.last_proxy, "be");
  EXPECT_EQ(eval("queue(other)", ctx), "6");
  EXPECT_EQ(env.last_proxy, "other");
  EXPECT_EQ(eval("connslots", ctx), "-1");   // unlimited, as HAProxy says it
  EXPECT_EQ(eval("be_sess_rate", ctx), "20");
  EXPECT_EQ(eval("fe_req_rate(fe)", ctx), "30");
  EXPECT_EQ(eval("fe_sess_rate", ctx), "<none>");
  EXPECT_EQ(eval("be_conn_free", ctx), "<none>");
  EXPECT_EQ(eval("nbsrv", ctx), "2");
  EXPECT_EQ(eval("nbsrv(empty)", ctx), "0");
  EXPECT_EQ(eval("be_conn", ctx), "7");
  EXPECT_EQ(eval("fe_conn", ctx), "9");
  EXPECT_EQ(eval("srv_conn(be/s1)", ctx), "4");
  EXPECT_EQ(env.last_proxy, "be");
  EXPECT_EQ(env.last_server, "s1");
  EXPECT_EQ(eval("srv_is_up(s1)", ctx), "1");
  EXPECT_EQ(env.last_proxy, "");
  EXPECT_EQ(env.last_server, "s1");
  EXPECT_EQ(eval_sample("srv_is_up(s1)", ctx).type, Type::kBool);
  EXPECT_EQ(eval("srv_weight(be/s1)", ctx), "7");
  EXPECT_EQ(eval("srv_queue(be/s1)", ctx), "<none>");
  // No Env: nothing.
  EXPECT_EQ(eval("nbsrv"), "<none>");
  EXPECT_EQ(eval("srv_conn(s1)"), "<none>");
}

TEST(FetchInternal, NamedArgumentsMustExist) {
  ParseCtx pc = known_names();
  EXPECT_EQ(parse_error("nbsrv(be)", pc), "ok");
  EXPECT_EQ(parse_error("nbsrv", pc), "ok");
  EXPECT_EQ(parse_error("nbsrv(nope)", pc),
            "invalid args in fetch method 'nbsrv' : unable to find backend 'nope'");
  EXPECT_EQ(parse_error("queue(nope)", pc),
            "invalid args in fetch method 'queue' : unable to find backend 'nope'");
  EXPECT_EQ(parse_error("fe_conn(nope)", pc),
            "invalid args in fetch method 'fe_conn' : unable to find frontend 'nope'");
  EXPECT_EQ(parse_error("srv_conn(be/s1)", pc), "ok");
  EXPECT_EQ(parse_error("srv_conn(be/nope)", pc),
            "invalid args in fetch method 'srv_conn' : unable to find server 'nope' in proxy 'be'");
  EXPECT_EQ(parse_error("srv_conn(nope)", pc),
            "invalid args in fetch method 'srv_conn' : unable to find server 'nope'");
  EXPECT_EQ(parse_error("srv_conn(be/)", pc),
            "invalid args in fetch method 'srv_conn' : missing server name");
  EXPECT_EQ(parse_error("srv_is_up(x/s1)", pc),
            "invalid args in fetch method 'srv_is_up' : unable to find backend 'x'");
}

TEST(FetchInternal, TableRows) {
  struct Row {
    const char* name;
    Type out;
    uint32_t use;
    const char* match;
  };
  for (const Row& r : {Row{"always_true", Type::kBool, kUseInternal, ""},
                       Row{"bin", Type::kBin, kUseInternal, "bin"},
                       Row{"meth", Type::kMeth, kUseInternal, "meth"},
                       Row{"ipv4", Type::kIpv4, kUseInternal, "ip"},
                       Row{"date", Type::kSint, kUseInternal, "int"},
                       Row{"nbsrv", Type::kSint, kUseInternal, "int"},
                       Row{"srv_is_up", Type::kBool, kUseInternal, "bool"},
                       Row{"uuid", Type::kStr, kUseInternal, "str"},
                       Row{"txn.conn_retries", Type::kSint, kUseL4Srv, "int"},
                       Row{"var", Type::kAny, kUseInternal, ""}}) {
    const FetchDef* f = find_fetch(r.name);
    ASSERT_NE(f, nullptr) << r.name;
    EXPECT_EQ(f->out, r.out) << r.name;
    EXPECT_EQ(f->use, r.use) << r.name;
    EXPECT_EQ(f->match, r.match) << r.name;
  }
  // Without a proxy's ACLs to resolve against, every name is unknown (HAProxy's message).
  EXPECT_EQ(parse_error("acl(foo)"), "invalid args in fetch method 'acl' : ACL 'foo' not found");
  EXPECT_EQ(parse_error("table_cnt"),
            "fetch method 'table_cnt' is not supported by sluice yet (it needs stick tables)");
  EXPECT_EQ(parse_error("txn.conn_retries", ParseCtx{kAtHttpRequest}),
            "sample fetch <txn.conn_retries> may not be reliably used here because it needs "
            "'server address' which is not available here");
}

}  // namespace
}  // namespace sluice::sample

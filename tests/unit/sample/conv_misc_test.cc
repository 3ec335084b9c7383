// ipmask, the date converters, param, set-var/unset-var, debug and the process state
// converters; expected values from HAProxy 3.5-dev5 (`return lf-string "%[...]"`, TZ=UTC).
#include <gtest/gtest.h>

#include "sample/expr.h"
#include "sample_support.h"
#include "sample/vars.h"

namespace sluice::sample {
namespace {

using testing::parse_error;

// An Env that knows backend "be" with 2 usable servers, its server "s1" up with 3 queued,
// and the frontend "fe".
struct TestEnv : Env {
  int nbsrv(std::string_view be) const override { return be == "be" ? 2 : -1; }
  bool proxy_stat(ProxyStat st, std::string_view px, std::string_view srv,
                  int64_t* out) const override {
    if (px != "be" || srv != "s1") return false;
    if (st == ProxyStat::kSrvIsUp) *out = 1;
    else if (st == ProxyStat::kSrvQueue) *out = 3;
    else return false;
    return true;
  }
  int frontend_exists(std::string_view fe) const override { return fe == "fe"; }
};

VarStore& txn() {
  static VarStore t(Scope::kTxn);
  return t;
}

std::string run(std::string_view text, const Env& env = null_env()) {
  ParseCtx pc;
  auto r = Expr::parse(text, pc);
  if (!r.ok()) return "parse error: " + r.error().message;
  Ctx ctx;
  ctx.txn_vars = &txn();
  ctx.env = &env;
  std::string out;
  if (!r->eval_text(ctx, out)) return "<none>";
  return out;
}

TEST(ConvMisc, Ipmask) {
  EXPECT_EQ(run("ipv4(192.168.1.77),ipmask(24)"), "192.168.1.0");
  EXPECT_EQ(run("ipv4(192.168.1.77),ipmask(255.255.0.0)"), "192.168.0.0");
  EXPECT_EQ(run("ipv6(2001:db8::1),ipmask(24,32)"), "2001:db8::");
  EXPECT_EQ(run("ipv6(2001:db8::1),ipmask(24)"), "<none>");
  EXPECT_EQ(run("str(10.1.2.3),ipmask(8)"), "10.0.0.0");
  EXPECT_EQ(parse_error("str(a),ipmask(33)"),
            "invalid arg 1 in converter 'ipmask' : failed to parse '33' as type 'IPv4 mask' at "
            "position 1");
  EXPECT_EQ(parse_error("str(a),ipmask(24,200)"),
            "invalid arg 2 in converter 'ipmask' : failed to parse '200' as type 'IPv6 mask' at "
            "position 2");
}

TEST(ConvMisc, Dates) {
  EXPECT_EQ(run("int(1700000000),utime(%Y-%m-%d %H:%M:%S)"), "2023-11-14 22:13:20");
  EXPECT_EQ(run("int(1700000000),utime(%s,3600)"), "1700003600");
  EXPECT_EQ(run("int(1700000000123),ms_utime(%Y %3N)"), "2023 123");
  EXPECT_EQ(run("int(1700000000123456),us_utime(%Y %6N %3N)"), "2023 123456 123");
  EXPECT_EQ(parse_error("str(a),ltime(%Y,x)"),
            "invalid arg 2 in converter 'ltime' : failed to parse 'x' as type 'integer' at "
            "position 2");
}

TEST(ConvMisc, HttpDateReverseDom) {
  EXPECT_EQ(run("int(1700000000),http_date"), "Tue, 14 Nov 2023 22:13:20 GMT");
  EXPECT_EQ(run("int(1700000000),http_date(3600)"), "Tue, 14 Nov 2023 23:13:20 GMT");
  EXPECT_EQ(run("int(1700000000123),http_date(0,ms)"), "Tue, 14 Nov 2023 22:13:20.123 GMT");
  EXPECT_EQ(run("int(1700000000123456),http_date(1,us)"),
            "Tue, 14 Nov 2023 22:13:20.123457 GMT");
  EXPECT_EQ(parse_error("int(1),http_date(0,xs)"),
            "invalid args in converter 'http_date' : expects 's', 'ms' or 'us', got 'xs'");
  EXPECT_EQ(run("str(www.example.com),reverse_dom"), "com.example.www");
  EXPECT_EQ(run("str(com),reverse_dom"), "com");
  EXPECT_EQ(run("str(a..b.),reverse_dom"), "<none>");
  EXPECT_EQ(run("str(.a),reverse_dom"), "<none>");
  EXPECT_EQ(run("str(),reverse_dom"), "<none>");
}

TEST(ConvMisc, Param) {
  EXPECT_EQ(run("str(a=1&b=2),param(b)"), "2");
  EXPECT_EQ(run("str(a=1;b=2),param(b,;)"), "2");
  EXPECT_EQ(run("str(a=1;b=2),param(b,0x3b)"), "2");
  EXPECT_EQ(run("str(ab;c),param(b,0x3b)"), "<none>");
  EXPECT_EQ(run("str(a=1&b=2),param(c)"), "<none>");
  EXPECT_EQ(run("str(a=1&b),param(b)"), "<none>");
  EXPECT_EQ(run("str(a=1&a=2),param(a)"), "1");
  EXPECT_EQ(parse_error("str(a),param(a,bc)"),
            "invalid args in converter 'param' : Delimiter must be either exactly 1 character, "
            "or 0xHH for an ASCII code .");
}

TEST(ConvMisc, Vars) {
  txn().clear();
  EXPECT_EQ(run("str(a),set-var(txn.z),concat(-,txn.z)"), "a-a");
  EXPECT_EQ(run("str(b),set-var(txn.z,ifnotexists),concat(-,txn.z)"), "b-a");
  EXPECT_EQ(run("str(c),unset-var(txn.z),concat(-,txn.z)"), "c-");
  EXPECT_EQ(parse_error("str(a),set-var(foo)"),
            "invalid args in converter 'set-var' : invalid variable name 'foo'. A variable name "
            "must start with its scope. The scope can be 'proc', '(p)sess', '(p)txn', '(p)req', "
            "'(p)res' or 'check'");
  EXPECT_EQ(parse_error("str(a),set-var(txn.a,ifbad)"),
            "invalid args in converter 'set-var' : unknown condition \"ifbad\"");
  EXPECT_EQ(parse_error("str(a),unset-var"),
            "invalid args in converter 'unset-var' : Empty variable name cannot be accepted");
}

TEST(ConvMisc, RefusedWithReason) {
  EXPECT_EQ(parse_error("str(a),x509_v_err_str"),
            "converter 'x509_v_err_str' is not supported by sluice yet (sluice's TLS does not report it yet)");
  EXPECT_EQ(parse_error("str(a),protobuf(1)"),
            "converter 'protobuf' is not supported by sluice yet (it needs gRPC support)");
  EXPECT_EQ(parse_error("str(a),tcp.win"),
            "converter 'tcp.win' is not supported by sluice yet (it needs the bind option "
            "tcp-ss)");
}

TEST(ConvMisc, DebugPassesOn) {
  EXPECT_EQ(run("str(a),debug"), "a");
  EXPECT_EQ(run("int(3),debug(p,buf0),add(1)"), "4");
}

TEST(ConvMisc, ProcessState) {
  TestEnv env;
  EXPECT_EQ(run("str(be),nbsrv", env), "2");
  EXPECT_EQ(run("str(nope),nbsrv", env), "<none>");
  EXPECT_EQ(run("str(be),nbsrv"), "<none>");
  EXPECT_EQ(run("str(be/s1),srv_queue", env), "3");
  EXPECT_EQ(run("str(be/s1),srv_is_up", env), "1");
  EXPECT_EQ(run("str(be/s2),srv_is_up", env), "<none>");
  EXPECT_EQ(run("str(s1),srv_queue", env), "<none>");
  EXPECT_EQ(run("str(fe),fe_exists", env), "1");
  EXPECT_EQ(run("str(xx),fe_exists", env), "0");
  EXPECT_EQ(run("str(fe),fe_exists"), "<none>");
  EXPECT_EQ(parse_error("str(a),nbsrv(nope)"),
            "invalid arg 1 in converter 'nbsrv' : expected ')' before 'nope)'");
}

}  // namespace
}  // namespace sluice::sample

// dump_all_vars; the formats are HAProxy 3.5-dev5's on the same variables (its order is a
// per-process random one, sluice's the order of first set).
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <string>

#include "sample/expr.h"
#include "sample_support.h"

namespace sluice::sample {
namespace {

struct Vars {
  VarNames names;
  VarStore sess{Scope::kSess}, txn{Scope::kTxn}, req{Scope::kReq}, res{Scope::kRes};
  Ctx ctx;
  Vars() {
    ctx.sess_vars = &sess;
    ctx.txn_vars = &txn;
    ctx.req_vars = &req;
    ctx.res_vars = &res;
  }
  void set(VarStore& st, std::string_view name, const Sample& s) {
    VarRef r;
    std::string err;
    ASSERT_TRUE(names.parse(name, &r, &err)) << err;
    st.set(r.id, s);
  }
  std::string dump(std::string_view expr) {
    ParseCtx pc;
    pc.var_names = &names;
    auto e = Expr::parse(expr, pc);
    if (!e.ok()) return "parse error: " + e.error().message;
    std::string out;
    if (!e->eval_text(ctx, out)) return "<none>";
    return out;
  }
};

TEST(FetchVars, DumpAllVars) {
  Vars v;
  v.set(v.txn, "txn.zeta", Sample::integer(42));
  v.set(v.txn, "txn.alpha", Sample::string("x"));
  v.set(v.txn, "txn.bool", Sample::boolean(true));
  Sample ip;
  ip.type = Type::kIpv4;
  inet_pton(AF_INET, "127.0.0.1", &ip.v4);
  v.set(v.txn, "txn.ip", ip);
  Sample ip6;
  ip6.type = Type::kIpv6;
  inet_pton(AF_INET6, "::1", &ip6.v6);
  v.set(v.txn, "txn.ip6", ip6);
  Sample meth;
  meth.type = Type::kMeth;
  meth.sint = static_cast<int64_t>(Method::kGet);
  meth.str = "GET";
  v.set(v.txn, "txn.meth", meth);
  Sample bin = Sample::string("Hello");
  bin.type = Type::kBin;
  v.set(v.txn, "txn.bin", bin);
  v.set(v.txn, "txn.empty", Sample::string(""));
  v.set(v.txn, "txn.abc.def", Sample::string("dotted"));
  v.set(v.sess, "sess.s1", Sample::string("a\"b\\c"));
  v.set(v.req, "req.r1", Sample::string("r"));
  const std::string all =
      "txn.zeta=42, txn.alpha=\"x\", txn.bool=true, txn.ip=127.0.0.1, txn.ip6=::1, "
      "txn.meth=\"GET\", txn.bin=48656C6C6F, txn.empty=\"\", txn.abc.def=\"dotted\"";
  EXPECT_EQ(v.dump("dump_all_vars"), all);
  EXPECT_EQ(v.dump("dump_all_vars()"), all);
  EXPECT_EQ(v.dump("dump_all_vars(txn)"), all);
  EXPECT_EQ(v.dump("dump_all_vars(sess)"), "sess.s1=\"a\\\"b\\\\c\"");
  EXPECT_EQ(v.dump("dump_all_vars(req)"), "req.r1=\"r\"");
  EXPECT_EQ(v.dump("dump_all_vars(res)"), "");
  EXPECT_EQ(v.dump("dump_all_vars(check)"), "");
  EXPECT_EQ(v.dump("dump_all_vars(txn,a)"), "txn.alpha=\"x\", txn.abc.def=\"dotted\"");
  EXPECT_EQ(v.dump("dump_all_vars(txn,txn.a)"), "");
  EXPECT_EQ(v.dump("dump_all_vars(txn,zzz)"), "");
  EXPECT_EQ(v.dump("dump_all_vars(txn,,;)"),
            "txn.zeta=42;txn.alpha=\"x\";txn.bool=true;txn.ip=127.0.0.1;txn.ip6=::1;"
            "txn.meth=\"GET\";txn.bin=48656C6C6F;txn.empty=\"\";txn.abc.def=\"dotted\"");
  EXPECT_EQ(v.dump("dump_all_vars(txn,a),length"), "35");
}

TEST(FetchVars, DumpEscapes) {
  Vars v;
  v.set(v.txn, "txn.b",
        Sample::string(std::string_view("a\r\nb\x08" "d\x1b" "e\"\\\t\x7f\0z", 14)));
  EXPECT_EQ(v.dump("dump_all_vars"), "txn.b=\"a\\r\\nb\\bd\x1b" "e\\\"\\\\\t\x7f\"");
}

TEST(FetchVars, DumpParseErrors) {
  Vars v;
  EXPECT_EQ(v.dump("dump_all_vars(foo)"),
            "parse error: invalid args in fetch method 'dump_all_vars' : invalid scope 'foo', "
            "must be one of: sess, txn, req, res, proc");
  EXPECT_EQ(v.dump("dump_all_vars(TXN)"),
            "parse error: invalid args in fetch method 'dump_all_vars' : invalid scope 'TXN', "
            "must be one of: sess, txn, req, res, proc");
  EXPECT_EQ(v.dump("dump_all_vars(psess)").substr(0, 60),
            "parse error: invalid args in fetch method 'dump_all_vars' : ");
  EXPECT_EQ(v.dump("dump_all_vars(txn,a,b,c)"),
            "parse error: fetch method 'dump_all_vars' : expected ')' before ',c)'");
}

}  // namespace
}  // namespace sluice::sample

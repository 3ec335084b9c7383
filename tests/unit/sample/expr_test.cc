// Sample expressions: parsing (HAProxy's messages), types and casts, evaluation, variables.
#include "sample/expr.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace sluice::sample {
namespace {

std::string parse_error(std::string_view text, uint32_t avail = kAtAny) {
  ParseCtx pc;
  pc.avail = avail;
  auto r = Expr::parse(text, pc);
  return r.ok() ? std::string("ok") : r.error().message;
}

std::string eval_text(std::string_view text, Ctx ctx = {}) {
  ParseCtx pc;
  auto r = Expr::parse(text, pc);
  if (!r.ok()) return "parse error: " + r.error().message;
  std::string out;
  if (!r->eval_text(ctx, out)) return "<none>";
  return out;
}

TEST(SampleExpr, ParsesAFetchAndItsConverters) {
  ParseCtx pc;
  std::size_t end = 0;
  auto r = Expr::parse("str(AbC),lower,upper] tail", pc, &end);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(end, 20u);
  EXPECT_EQ(r->text(), "str(AbC),lower,upper");
  EXPECT_EQ(r->type(), Type::kStr);
  EXPECT_EQ(r->last_name(), "upper");
  EXPECT_EQ(eval_text("str(AbC),lower"), "abc");
  EXPECT_EQ(eval_text("int(-42)"), "-42");
  EXPECT_EQ(eval_text("bool(1)"), "1");
}

TEST(SampleExpr, ReportsHaproxyParseErrors) {
  EXPECT_EQ(parse_error("foo]"), "unknown fetch method 'foo'");
  EXPECT_EQ(parse_error("str(a),lowerx]"), "unknown converter 'lowerx'");
  EXPECT_EQ(parse_error("str(a),lower,]"), "unknown converter ''");
  EXPECT_EQ(parse_error("str(a),lower(1)]"),
            "invalid arg 1 in converter 'lower' : expected ')' before '1)]'");
  EXPECT_EQ(parse_error("str(a,b)]"), "fetch method 'str' : expected ')' before ',b)]'");
  EXPECT_EQ(parse_error("int(x)]"),
            "fetch method 'int' : failed to parse 'x' as type 'integer' at position 1");
  // HAProxy 3.5: no parentheses is one empty argument, fine for a string.
  EXPECT_EQ(parse_error("str]"), "ok");
  EXPECT_EQ(parse_error("int]"),
            "fetch method 'int' : expected type 'integer' at position 1, but got nothing");
  EXPECT_EQ(parse_error("int()]"),
            "fetch method 'int' : expected type 'integer' at position 1, but got nothing");
  // Optional arguments: left out without parentheses, one empty argument with "()".
  EXPECT_EQ(parse_error("fc_rtt]"), "ok");
  EXPECT_EQ(parse_error("fc_rtt()]"),
            "invalid args in fetch method 'fc_rtt' : expects 'us' or 'ms', got ''");
  EXPECT_EQ(parse_error("date()]"), "ok");
  EXPECT_EQ(parse_error("str(a"), "fetch method 'str' : expected ')'");
  EXPECT_EQ(parse_error("var(foo.x)]"),
            "invalid args in fetch method 'var' : invalid variable name 'foo.x'. A variable "
            "name must start with its scope. The scope can be 'proc', '(p)sess', '(p)txn', "
            "'(p)req', '(p)res' or 'check'");
  EXPECT_EQ(parse_error("ssl_fc_npn"), "fetch method 'ssl_fc_npn' is not supported by sluice yet (sluice's TLS does not report it yet)");
}

TEST(SampleExpr, ChecksTypesAtParseTime) {
  EXPECT_EQ(parse_error("int(1),lower"), "ok");   // integers cast to strings
}

TEST(SampleCast, FollowsHaproxysTable) {
  Scratch sc;
  Sample s = Sample::string("12abc");
  ASSERT_TRUE(cast(s, Type::kSint, sc));
  EXPECT_EQ(s.sint, 12);
  s = Sample::string("");
  EXPECT_FALSE(cast(s, Type::kSint, sc));
  s = Sample::string("10.0.0.1");
  ASSERT_TRUE(cast(s, Type::kIpv4, sc));
  ASSERT_TRUE(cast(s, Type::kSint, sc));
  EXPECT_EQ(s.sint, 0x0a000001);
  ASSERT_TRUE(cast(s, Type::kIpv4, sc));
  ASSERT_TRUE(cast(s, Type::kIpv6, sc));
  ASSERT_TRUE(cast(s, Type::kStr, sc));
  EXPECT_EQ(s.str, "::ffff:10.0.0.1");
  s = Sample::string("nope");
  EXPECT_FALSE(cast(s, Type::kIpv4, sc));
  s = Sample::integer(258);   // HAProxy: int(258),hex is 0000000000000102
  ASSERT_TRUE(cast(s, Type::kBin, sc));
  EXPECT_EQ(s.str, std::string_view("\0\0\0\0\0\0\x01\x02", 8));
  EXPECT_FALSE(can_cast(Type::kBin, Type::kSint));
  EXPECT_TRUE(can_cast(Type::kIpv4, Type::kStr));
  EXPECT_FALSE(can_cast(Type::kIpv6, Type::kSint));
}

TEST(SampleVars, StoreWithConditionsAndLimits) {
  VarNames names;
  VarRef a, b;
  std::string err;
  ASSERT_TRUE(names.parse("txn.a", &a, &err));
  ASSERT_TRUE(names.parse("txn.b", &b, &err));
  VarRef again;
  ASSERT_TRUE(names.parse("txn.a", &again, &err));
  EXPECT_EQ(again.id, a.id);
  EXPECT_FALSE(names.parse("txn.", &again, &err));
  // Each variable costs kVarOverhead plus its string's bytes, as in HAProxy.
  VarStore st(Scope::kTxn, 2 * kVarOverhead + 8);
  EXPECT_TRUE(st.set(a.id, Sample::string("hello")));
  EXPECT_FALSE(st.set(b.id, Sample::string("world")));   // 10 bytes > 8
  EXPECT_TRUE(st.set(b.id, Sample::integer(5)));
  // ifgt: only when the current value is greater than the new one (HAProxy 3.5).
  EXPECT_FALSE(st.set(b.id, Sample::integer(6), kIfGt));
  EXPECT_TRUE(st.set(b.id, Sample::integer(4), kIfGt));
  EXPECT_EQ(st.get(b.id)->sint, 4);
  EXPECT_FALSE(st.set(b.id, Sample::integer(3), kIfLt));
  EXPECT_TRUE(st.set(b.id, Sample::integer(6), kIfLt));
  EXPECT_FALSE(st.set(a.id, Sample::string("x"), kIfNotExists));
  st.unset(a.id);
  EXPECT_EQ(st.get(a.id), nullptr);
  EXPECT_TRUE(st.set(a.id, Sample::string("x"), kIfNotExists));
  EXPECT_EQ(st.size_used(), 2 * kVarOverhead + 1);
}

TEST(SampleVars, VarFetchReadsItsScope) {
  ParseCtx pc;
  auto e = Expr::parse("var(txn.host),upper", pc);
  ASSERT_TRUE(e.ok()) << e.error().message;
  VarStore txn(Scope::kTxn);
  Ctx ctx;
  std::string out;
  EXPECT_FALSE(e->eval_text(ctx, out));
  ctx.txn_vars = &txn;
  txn.set(VarNames::global().find("txn.host"), Sample::string("example.org"));
  ASSERT_TRUE(e->eval_text(ctx, out));
  EXPECT_EQ(out, "EXAMPLE.ORG");
  EXPECT_EQ(eval_text("var(txn.none,dflt)"), "dflt");
}

}  // namespace
}  // namespace sluice::sample

namespace sluice::sample {
namespace {

// Found by comparing what the sample_expr fuzzer's corpus parses with HAProxy 3.5 (`-c` on
// `http-request set-var(txn.x) <expr>` and `set-header x %[<expr>]`).
TEST(SampleExpr, EmptyConvertersAsHaproxy) {
  EXPECT_EQ(eval_text("str(x),,,upper"), "X");
  EXPECT_EQ(eval_text("str(x),lower,,"), "x");
  EXPECT_EQ(eval_text("str(x),"), "x");
  ParseCtx pc;
  std::size_t end = 0;
  auto r = Expr::parse("str(x),,", pc, &end);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(end, 8u);
  // Before anything but the end of the text, a comma needs a converter.
  EXPECT_EQ(parse_error("str(x),,]"), "unknown converter ''");
  EXPECT_EQ(parse_error("str(x),(]"), "unknown converter ''");
  EXPECT_EQ(parse_error("str(x),)lower"), "unknown converter ''");
  EXPECT_EQ(parse_error("str(x),,lower(]"),
            "invalid arg 1 in converter 'lower' : expected ')' before ']'");
}

// capture.res.ver may stand in request rules, capture.res.hdr may not, as in HAProxy (which
// names what the latter needs 'HTTP response').
TEST(SampleExpr, ResponseCapturesWhereHaproxyTakesThem) {
  EXPECT_EQ(parse_error("capture.res.ver", kAtHttpRequest), "ok");
  EXPECT_EQ(eval_text("capture.res.ver"), "<none>");
  EXPECT_EQ(parse_error("capture.res.hdr(0)", kAtHttpRequest),
            "sample fetch <capture.res.hdr> may not be reliably used here because it needs "
            "'HTTP response' which is not available here");
}

// The names HAProxy 3.5's messages give what a fetch needs, where sluice once said only
// 'server' or 'HTTP response headers'.
TEST(SampleExpr, WhatAFetchNeedsAsHaproxyNamesIt) {
  const auto needs = [](std::string_view fetch, std::string_view what) {
    return fmt::format("sample fetch <{}> may not be reliably used here because it needs '{}' "
                       "which is not available here", fetch, what);
  };
  EXPECT_EQ(parse_error("status", kAtHttpRequest), needs("status", "HTTP response"));
  EXPECT_EQ(parse_error("res.ver", kAtHttpRequest), needs("res.ver", "HTTP response"));
  EXPECT_EQ(parse_error("res.hdr(a)", kAtHttpRequest), needs("res.hdr", "HTTP response headers"));
  EXPECT_EQ(parse_error("bc_src", kAtHttpRequest), needs("bc_src", "server address"));
  EXPECT_EQ(parse_error("txn.redispatched", kAtHttpRequest),
            needs("txn.redispatched", "server address"));
  EXPECT_EQ(parse_error("bc_nb_streams", kAtHttpRequest),
            needs("bc_nb_streams", "server-side connection"));
  EXPECT_EQ(parse_error("srv_name", kAtHttpRequest), needs("srv_name", "server"));
  // Where the server and the response are, all of them are.
  for (const char* f : {"status", "res.ver", "bc_src", "bc_nb_streams", "srv_name"})
    EXPECT_EQ(parse_error(f, kAtHttpResponse), "ok") << f;
}

}  // namespace
}  // namespace sluice::sample

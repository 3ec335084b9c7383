// when(<condition>): HAProxy 3.5's parse errors, and the conditions sluice answers.
#include <gtest/gtest.h>

#include <string>

#include "sample/expr.h"
#include "sample_support.h"

namespace sluice::sample {
namespace {

using testing::parse_error;

struct CondStoppingEnv : Env {
  bool stopping() const override { return true; }
};

std::string cond_run(std::string_view text, const Env& env) {
  ParseCtx pc;
  auto r = Expr::parse(text, pc);
  if (!r.ok()) return "parse error: " + r.error().message;
  Ctx ctx;
  ctx.env = &env;
  std::string out;
  if (!r->eval_text(ctx, out)) return "<none>";
  return out;
}

TEST(ConvWhen, Stopping) {
  CondStoppingEnv stopping;
  EXPECT_EQ(cond_run("str(a),when(stopping)", stopping), "a");
  EXPECT_EQ(cond_run("str(a),when(!stopping)", stopping), "<none>");
  EXPECT_EQ(cond_run("str(a),when(stopping)", null_env()), "<none>");
  EXPECT_EQ(cond_run("int(7),when(!stopping),add(1)", null_env()), "8");
  EXPECT_EQ(parse_error("str(a),when(stopping,x)"), "ok");   // as HAProxy: ignored
  ParseCtx pc;
  EXPECT_EQ(Expr::parse("int(7),when(stopping)", pc)->type(), Type::kSint);
}

TEST(ConvWhen, ParseErrors) {
  constexpr std::string_view kList =
      "invalid args in converter 'when' : expects a supported keyword among "
      "{stopping,normal,error,forwarded,toapplet,processed,acl} but got ";
  EXPECT_EQ(parse_error("str(a),when(foo)"), std::string(kList) + "'foo'");
  EXPECT_EQ(parse_error("str(a),when"), std::string(kList) + "''");
  EXPECT_EQ(parse_error("str(a),when(!)"), std::string(kList) + "''");
  EXPECT_EQ(parse_error("str(a),when(!!normal)"), std::string(kList) + "'!normal'");
  EXPECT_EQ(parse_error("str(a),when(Normal)"), std::string(kList) + "'Normal'");
  EXPECT_EQ(parse_error("str(a),when(acl:foo)"), std::string(kList) + "'acl:foo'");
  EXPECT_EQ(parse_error("str(a),when(acl)"),
            "invalid args in converter 'when' : 'acl' selector requires an extra argument with "
            "the ACL name");
  EXPECT_EQ(parse_error("str(a),when(stopping,1,2)"), "ok");   // three arguments, as HAProxy
  EXPECT_EQ(parse_error("str(a),when(stopping,1,2,3)"),
            "invalid arg 3 in converter 'when' : expected ')' before ',3)'");
}

TEST(ConvWhen, RefusedConditions) {
  EXPECT_EQ(parse_error("str(a),when(normal)"),
            "invalid args in converter 'when' : condition 'normal' is not supported by sluice "
            "yet (it needs the stream's error state)");
  EXPECT_EQ(parse_error("str(a),when(!error)"),
            "invalid args in converter 'when' : condition 'error' is not supported by sluice "
            "yet (it needs the stream's error state)");
  for (std::string_view c : {"forwarded", "toapplet", "processed"})
    EXPECT_EQ(parse_error("str(a),when(" + std::string(c) + ")"),
              "invalid args in converter 'when' : condition '" + std::string(c) +
                  "' is not supported by sluice yet (it needs the stream's forwarding state)");
  // Outside a proxy's lines there is no ACL (the rules tests resolve real ones).
  EXPECT_EQ(parse_error("str(a),when(acl,foo)"), "invalid args in converter 'when' : ACL 'foo' not found");
}

TEST(ConvWhen, StillRefusedConverters) {
  EXPECT_EQ(parse_error("str(a),ungrpc"),
            "converter 'ungrpc' is not supported by sluice yet (it needs gRPC support)");
  EXPECT_EQ(parse_error("str(a),datex"), "unknown converter 'datex'");
  EXPECT_EQ(parse_error("when(stopping)"), "unknown fetch method 'when'");
}

}  // namespace
}  // namespace sluice::sample

// Conditions: if/unless, negation, AND/OR groups, anonymous ACLs and their errors.
#include <gtest/gtest.h>

#include "rules_support.h"

namespace sluice::rules {
namespace {

using testing::Msg;
using testing::split;

class ConditionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(reg.parse_acl(split("is_api path_beg /api")).ok());
    ASSERT_TRUE(reg.parse_acl(split("is_get method GET")).ok());
    ASSERT_TRUE(reg.parse_acl(split("local src 127.0.0.0/8")).ok());
  }
  bool eval(const std::string& cond) {
    auto c = parse_condition(split(cond), reg);
    EXPECT_TRUE(c.ok()) << cond << ": " << (c.ok() ? "" : c.error().message);
    return c.ok() && c->eval(m.view());
  }
  std::string error(const std::string& cond) {
    auto c = parse_condition(split(cond), reg);
    return c.ok() ? "" : c.error().message;
  }
  AclRegistry reg;
  Msg m;
};

TEST_F(ConditionTest, AndOrNot) {
  m.target = "/api/x";
  EXPECT_TRUE(eval("if is_api"));
  EXPECT_FALSE(eval("unless is_api"));
  EXPECT_TRUE(eval("if is_api is_get"));
  EXPECT_FALSE(eval("if is_api local"));
  EXPECT_TRUE(eval("if is_api !local"));
  EXPECT_TRUE(eval("if is_api ! local"));
  EXPECT_FALSE(eval("if !!is_api local"));
  EXPECT_TRUE(eval("if local || is_api"));
  EXPECT_TRUE(eval("if local or is_api"));
  EXPECT_TRUE(eval("if local OR is_api"));
  EXPECT_FALSE(eval("if local || !is_api"));
  EXPECT_TRUE(eval("if local is_api || is_get is_api"));
  EXPECT_FALSE(eval("unless local is_api || is_get is_api"));
  EXPECT_TRUE(eval("unless local"));
  m.target = "/web";
  EXPECT_FALSE(eval("if is_api is_get"));
  EXPECT_TRUE(eval("if !is_api is_get"));
}

TEST_F(ConditionTest, AnonymousAcls) {
  m.target = "/api/x";
  m.fields = {{"Host", "a.example.com"}};
  EXPECT_TRUE(eval("if { path_beg /api }"));
  EXPECT_FALSE(eval("if !{ path_beg /api }"));
  EXPECT_FALSE(eval("if ! { path_beg /api }"));
  EXPECT_TRUE(eval("if { hdr(host) -i A.EXAMPLE.COM } is_api"));
  EXPECT_TRUE(eval("if { path /nope } || { hdr_end(host) .com }"));
  EXPECT_TRUE(eval("unless { path /nope }"));
}

TEST_F(ConditionTest, Empty) {
  Condition always;
  EXPECT_TRUE(always.empty());
  EXPECT_TRUE(always.eval(m.view()));
  auto c = parse_condition(split("unless FALSE"), reg);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->empty());
  EXPECT_TRUE(c->eval(m.view()));
}

TEST_F(ConditionTest, Errors) {
  EXPECT_EQ(error("if nope"), "no such ACL : 'nope'");
  EXPECT_EQ(error("if is_api nope"), "no such ACL : 'nope'");
  EXPECT_EQ(error("if"), "missing condition after 'if'");
  EXPECT_EQ(error("unless"), "missing condition after 'unless'");
  EXPECT_NE(error("if is_api ||").find("missing condition after 'or'"), std::string::npos);
  EXPECT_NE(error("if || is_api").find("missing condition before '||'"), std::string::npos);
  EXPECT_NE(error("if { path /a").find("missing closing '}'"), std::string::npos);
  EXPECT_NE(error("if path /a }").find("no such ACL : 'path'"), std::string::npos);
  EXPECT_NE(error("if }").find("unexpected '}'"), std::string::npos);
  EXPECT_NE(error("if { }").find("empty anonymous ACL"), std::string::npos);
  EXPECT_NE(error("if { foo x }").find("unknown fetch method 'foo' in ACL expression 'foo'"), std::string::npos);
  EXPECT_NE(error("if !").find("missing ACL after '!'"), std::string::npos);
  EXPECT_NE(error("when is_api").find("conditions must start with either 'if' or 'unless'"), std::string::npos);
  EXPECT_EQ(error("if WAIT_END"), "");   // predefined: wait_end, true once inspect-delay ends
  EXPECT_NE(error("if { path,nope /a }").find("unknown converter 'nope' in ACL expression 'path,nope'"),
            std::string::npos);
}

TEST_F(ConditionTest, ResponseOnlyAcl) {
  ASSERT_TRUE(reg.parse_acl(split("bad status 500:599")).ok());
  auto c = parse_condition(split("if is_api bad"), reg);
  ASSERT_TRUE(c.ok());
  ASSERT_NE(c->response_only_acl(), nullptr);
  EXPECT_EQ(c->response_only_acl()->name, "bad");
  auto d = parse_condition(split("if is_api"), reg);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->response_only_acl(), nullptr);
}

TEST_F(ConditionTest, LaterAclLinesExtendEarlierUses) {
  // HAProxy keeps a reference to the ACL: lines declared after the rule still count.
  auto c = parse_condition(split("if is_api"), reg);
  ASSERT_TRUE(c.ok());
  m.target = "/v2";
  EXPECT_FALSE(c->eval(m.view()));
  ASSERT_TRUE(reg.parse_acl(split("is_api path_beg /v2")).ok());
  EXPECT_TRUE(c->eval(m.view()));
}

}  // namespace
}  // namespace sluice::rules

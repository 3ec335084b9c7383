// The agent protocol's answers (agent-check).
#include <gtest/gtest.h>

#include "check/checker.h"

namespace sluice::check {
namespace {

TEST(Agent, Replies) {
  using S = AgentReply::State;
  using A = AgentReply::Admin;
  AgentReply r = parse_agent_reply("up");
  EXPECT_EQ(r.state, S::kUp);
  EXPECT_EQ(r.admin, A::kNone);
  r = parse_agent_reply("maxconn:7 75%,drain\r");
  EXPECT_EQ(r.state, S::kNone);
  EXPECT_EQ(r.weight_pct, 75);
  EXPECT_EQ(r.maxconn, 7);
  EXPECT_EQ(r.admin, A::kDrain);
  r = parse_agent_reply("fail # broken disk ");
  EXPECT_EQ(r.state, S::kFail);
  EXPECT_EQ(r.state_word, "fail");
  EXPECT_EQ(r.reason, "broken disk");
  r = parse_agent_reply("stopped\tmaint");
  EXPECT_EQ(r.state, S::kStopped);
  EXPECT_EQ(r.admin, A::kMaint);
  // Unknown words, a bare '%' or a bad maxconn change nothing.
  r = parse_agent_reply("garbage % maxconn:x 12x%");
  EXPECT_EQ(r.state, S::kNone);
  EXPECT_EQ(r.weight_pct, -1);
  EXPECT_EQ(r.maxconn, -1);
  EXPECT_EQ(r.admin, A::kNone);
}

}  // namespace
}  // namespace sluice::check

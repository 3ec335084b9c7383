#include "log/termination.h"

#include <gtest/gtest.h>

namespace sluice::log {
namespace {

TEST(Termination, LettersAreHaproxys) {
  EXPECT_EQ(letters({}), "--");
  EXPECT_EQ(letters({Cause::kServerClose, FinalState::kConnect}), "SC");
  EXPECT_EQ(letters({Cause::kClientTimeout, FinalState::kRequest}), "cR");
  EXPECT_EQ(letters({Cause::kServerTimeout, FinalState::kQueue}), "sQ");
  EXPECT_EQ(letters({Cause::kProxy, FinalState::kRequest}), "PR");
  EXPECT_EQ(letters({Cause::kResource, FinalState::kData}), "RD");
  EXPECT_EQ(letters({Cause::kInternal, FinalState::kHeaders}), "IH");
  EXPECT_EQ(letters({Cause::kKilled, FinalState::kData}), "KD");
  EXPECT_EQ(letters({Cause::kDown, FinalState::kData}), "DD");
  EXPECT_EQ(letters({Cause::kUp, FinalState::kData}), "UD");
  EXPECT_EQ(letters({Cause::kLocal, FinalState::kRequest}), "LR");
  EXPECT_EQ(letters({Cause::kClientClose, FinalState::kLast}), "CL");
  EXPECT_EQ(letters({Cause::kProxy, FinalState::kTarpit}), "PT");
}

TEST(Termination, SidesAreTheCauseNotTheState) {
  EXPECT_TRUE((Termination{Cause::kClientClose, FinalState::kData}).client_side());
  EXPECT_TRUE((Termination{Cause::kClientTimeout, FinalState::kRequest}).client_side());
  EXPECT_TRUE((Termination{Cause::kServerTimeout, FinalState::kQueue}).server_side());
  EXPECT_FALSE((Termination{Cause::kProxy, FinalState::kConnect}).server_side());
  EXPECT_TRUE(Termination{}.ended_normally());
}

}  // namespace
}  // namespace sluice::log

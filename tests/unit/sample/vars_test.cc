// Variable memory accounting up the scopes (tune.vars.*-max-size), as HAProxy counts it.
#include <gtest/gtest.h>

#include <string>

#include "sample/vars.h"

namespace sluice::sample {
namespace {

// Sets the process-wide limits for one test and puts the previous ones back.
struct Limits {
  VarLimits saved = var_limits();
  explicit Limits(VarLimits l) { var_limits() = l; }
  ~Limits() { var_limits() = saved; }
};

Sample str(std::size_t n) {
  static const std::string big(4096, 'x');
  return Sample::string(std::string_view(big).substr(0, n));
}

constexpr std::size_t O = kVarOverhead;   // what a variable costs besides its value

TEST(VarAccounting, HaproxysLimitsAdmitTheSameVariables) {
  // HAProxy 3.5 with tune.vars.txn-max-size and set-var of str(x), int(5), str(0123456789):
  // 89 admits the first, 177 it and the integer, 275 all three. At 88 HAProxy keeps the
  // string variable that did not fit (with a garbage value), and its room then refuses the
  // integer; sluice refuses the string whole, so the integer (88 bytes) fits.
  Limits lim({});
  for (auto [max, sets] : std::initializer_list<std::pair<std::size_t, int>>{{88, 1}, {89, 1}, {176, 1}, {177, 2}, {274, 2}, {275, 3}}) {
    VarAccount txn(max);
    VarStore t(Scope::kTxn, 0, &txn);
    int n = t.set(1, str(1)) + t.set(2, Sample::integer(5)) + t.set(3, str(10));
    EXPECT_EQ(n, sets) << max;
  }
}

TEST(VarAccounting, ScopesCountUpwards) {
  Limits lim({});
  // a session limit bounds its transactions' variables too; then txn; then reqres
  VarAccount sess(4 * O + 10);
  VarAccount txn(3 * O + 8, &sess);
  VarAccount reqres(2 * O + 5, &txn);
  VarStore s(Scope::kSess, 0, &sess), t(Scope::kTxn, 0, &txn);
  VarStore req(Scope::kReq, 0, &reqres), res(Scope::kRes, 0, &reqres);
  EXPECT_TRUE(req.set(1, str(3)));
  EXPECT_FALSE(res.set(2, str(3)));   // req and res share the reqres room: 6 > 5
  EXPECT_TRUE(res.set(2, str(2)));
  EXPECT_EQ(reqres.used(), 2 * O + 5);
  EXPECT_EQ(txn.used(), 2 * O + 5);
  EXPECT_EQ(sess.used(), 2 * O + 5);
  EXPECT_FALSE(t.set(3, str(4)));     // txn room: 5 + 4 > 8
  EXPECT_TRUE(t.set(3, str(3)));
  EXPECT_FALSE(s.set(4, str(3)));     // sess room: 8 + 3 > 10
  EXPECT_TRUE(s.set(4, str(2)));
  EXPECT_EQ(sess.used(), 4 * O + 10);
  // replacing a value counts the difference; a new integer costs the overhead alone
  EXPECT_TRUE(req.set(1, str(1)));
  EXPECT_EQ(reqres.used(), 2 * O + 3);
  EXPECT_FALSE(req.set(5, Sample::integer(42)));   // no room left for a third variable
  // unset and clear give the room back all the way up
  req.unset(1);
  EXPECT_EQ(txn.used(), 2 * O + 5);
  res.clear();
  t.clear();
  EXPECT_EQ(txn.used(), 0u);
  EXPECT_EQ(sess.used(), O + 2);
}

TEST(VarAccounting, ProcessTotalAndStoreLifetime) {
  Limits lim({.global = 0, .proc = 2 * O + 12});
  const std::size_t base = VarAccount::process_used();
  VarAccount sess;
  {
    VarStore s(Scope::kSess, 0, &sess);
    EXPECT_TRUE(s.set(1, str(10)));
    EXPECT_EQ(VarAccount::process_used(), base + O + 10);
    VarStore proc(Scope::kProc);   // no account: the process level only
    EXPECT_FALSE(proc.set(2, str(5)));   // 10 + 5 > 12
    EXPECT_TRUE(proc.set(2, str(2)));
    EXPECT_EQ(VarAccount::process_used(), base + 2 * O + 12);
  }
  // destroyed stores give their bytes back
  EXPECT_EQ(VarAccount::process_used(), base);
  EXPECT_EQ(sess.used(), 0u);
}

TEST(VarAccounting, GlobalLimitBoundsTheSameTotal) {
  Limits lim({.global = O + 4, .proc = 0});
  VarStore s(Scope::kTxn);
  EXPECT_FALSE(s.set(1, str(5)));
  EXPECT_TRUE(s.set(1, str(4)));
  s.clear();
}

TEST(VarAccounting, StoreOwnLimitStillApplies) {
  Limits lim({});
  VarStore s(Scope::kTxn, O + 3);
  EXPECT_FALSE(s.set(1, str(4)));
  EXPECT_TRUE(s.set(1, str(3)));
}

}  // namespace
}  // namespace sluice::sample

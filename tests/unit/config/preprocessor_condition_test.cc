// `.if` expressions (spec section 2) through eval_condition and evaluate_condition (-cc).
#include "config/preprocessor_condition.h"

#include <gtest/gtest.h>

#include "base/regex.h"
#include "config/loader.h"

namespace sluice::config {
namespace {

class CondTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.set("A", "1", true);
    env_.set("EMPTY", "", true);
    env_.unset("NOPE");
  }
  int eval(std::string_view e) {
    err_ = {};
    return eval_condition(e, env_, &err_);
  }
  Env env_;
  ConditionError err_;
};

TEST_F(CondTest, Integers) {
  EXPECT_EQ(eval("1"), 1);
  EXPECT_EQ(eval("0"), 0);
  EXPECT_EQ(eval("0x10"), 1);
  EXPECT_EQ(eval("-1"), 1);
  EXPECT_EQ(eval(""), 0);
  EXPECT_EQ(eval("   "), 0);
}

TEST_F(CondTest, Predicates) {
  EXPECT_EQ(eval("defined(A)"), 1);
  EXPECT_EQ(eval("defined(EMPTY)"), 1);
  EXPECT_EQ(eval("defined(NOPE)"), 0);
  EXPECT_EQ(eval("defined( A )"), 0);   // spaces are part of the argument
  EXPECT_EQ(eval("feature(THREAD)"), 1);
  EXPECT_EQ(eval("feature(EPOLL)"), 1);
  EXPECT_EQ(eval("feature(PCRE2)"), 1);
  EXPECT_EQ(eval("feature(PCRE2_JIT)"), base::Regex::jit_supported() ? 1 : 0);
  EXPECT_EQ(eval("feature(PCRE)"), 0);
  EXPECT_EQ(eval("feature(OPENSSL)"), 1);   // bind ... ssl
  EXPECT_EQ(eval("feature(QUIC)"), 0);
  EXPECT_EQ(eval("feature(THREA)"), 0);
  EXPECT_EQ(eval("streq(a,a)"), 1);
  EXPECT_EQ(eval("streq(a, a)"), 0);
  EXPECT_EQ(eval("strneq(a,b)"), 1);
  EXPECT_EQ(eval("strneq(a,a)"), 0);
  EXPECT_EQ(eval("strstr(abc,b)"), 1);
  EXPECT_EQ(eval("strstr(abc,)"), 1);
  EXPECT_EQ(eval("strstr(abc,d)"), 0);
  EXPECT_EQ(eval("streq('a,b',\"a,b\")"), 1);
  EXPECT_EQ(eval("enabled(EPOLL)"), 1);
  EXPECT_EQ(eval("enabled(REUSEPORT)"), 1);
  EXPECT_EQ(eval("enabled(POLL)"), 0);
  EXPECT_EQ(eval("enabled(WHATEVER)"), 0);
  EXPECT_EQ(eval("fips_mode"), 0);
  EXPECT_EQ(eval("fips_mode()"), 0);
  EXPECT_EQ(eval("ssllib_name_startswith(OpenSSL)"), 1);
  EXPECT_EQ(eval("ssllib_name_startswith(BoringSSL)"), 0);
}

TEST_F(CondTest, Versions) {
  EXPECT_EQ(eval("version_atleast(3.2)"), 1);
  EXPECT_EQ(eval("version_atleast(3.1.9)"), 1);
  EXPECT_EQ(eval("version_atleast(3.2-dev1)"), 1);
  EXPECT_EQ(eval("version_atleast(3.2.1)"), 0);
  EXPECT_EQ(eval("version_atleast(3.5)"), 0);
  EXPECT_EQ(eval("version_before(3.3)"), 1);
  EXPECT_EQ(eval("version_before(3.2)"), 0);
  EXPECT_EQ(eval("version_atleast(garbage)"), 1);
  EXPECT_EQ(eval("version_before(garbage)"), 0);
  int cmp = 0;
  ASSERT_TRUE(compare_version("3.2-rc1", &cmp));
  EXPECT_LT(cmp, 0);
  ASSERT_TRUE(compare_version("3.2-dev9", &cmp));
  EXPECT_LT(cmp, 0);
}

TEST_F(CondTest, OperatorsAndPrecedence) {
  EXPECT_EQ(eval("1 && 0"), 0);
  EXPECT_EQ(eval("1 || 0"), 1);
  EXPECT_EQ(eval("!0"), 1);
  EXPECT_EQ(eval("!!1"), 1);
  EXPECT_EQ(eval("! 1"), 0);
  EXPECT_EQ(eval("1 || 1 && 0"), 1);   // && binds tighter
  EXPECT_EQ(eval("(1 || 1) && 0"), 0);
  EXPECT_EQ(eval("!(0 || 0)"), 1);
  EXPECT_EQ(eval("defined(A) && streq(a,a) || 0"), 1);
}

TEST_F(CondTest, ShortCircuitSkipsEvaluationErrors) {
  EXPECT_EQ(eval("0 && openssl_version_atleast(1.0)"), 0);
  EXPECT_EQ(eval("1 || openssl_version_atleast(1.0)"), 1);
  EXPECT_EQ(eval("openssl_version_atleast(1.0)"), 1);   // Debian 12's OpenSSL 3
  EXPECT_EQ(eval("openssl_version_before(3.0.0)"), 0);
  EXPECT_EQ(eval("openssl_version_atleast(99.0.0)"), 0);
  EXPECT_EQ(err_.pos, 0);
  // ...but a syntax error anywhere is still an error.
  EXPECT_EQ(eval("1 || bogus(1)"), -1);
}

TEST_F(CondTest, Errors) {
  EXPECT_EQ(eval("yes"), -1);
  EXPECT_EQ(err_.message, "unparsable conditional expression 'yes'");
  EXPECT_EQ(err_.pos, 1);
  EXPECT_EQ(eval("${X}"), -1);
  EXPECT_EQ(err_.message, "unparsable conditional expression '${X}'");
  EXPECT_EQ(eval("1 2"), -1);
  EXPECT_EQ(err_.message, "unexpected character '2' at the end of conditional expression '1 2'");
  EXPECT_EQ(err_.pos, 3);
  EXPECT_EQ(eval("streq(a,b"), -1);
  EXPECT_EQ(err_.message,
            "expected ')' in argument 1 of predicate 'streq' used in conditional expression");
  EXPECT_EQ(err_.pos, 10);
  EXPECT_EQ(eval("streq(a)"), -1);
  EXPECT_EQ(err_.message,
            "missing arguments (got 1/2), type 'string' expected in argument 1 of predicate "
            "'streq' used in conditional expression");
  EXPECT_EQ(eval("defined"), -1);
  EXPECT_EQ(eval("(1"), -1);
  EXPECT_EQ(eval("1 &&"), -1);
  std::string deep(200, '(');
  EXPECT_EQ(eval(deep + "1"), -1);
}

TEST(EvaluateCondition, MinusCc) {
  std::string err;
  EXPECT_EQ(evaluate_condition("1", &err), 1);
  EXPECT_EQ(evaluate_condition("streq(\"a#b\",a#b)", &err), 1);
  EXPECT_EQ(evaluate_condition("foo(1)", &err), -1);
  EXPECT_EQ(err, "Failed to evaluate condition: unparsable conditional expression 'foo(1)'");
  EXPECT_EQ(evaluate_condition("streq(\"a,b)", &err), -1);
  EXPECT_EQ(err, "Syntax Error in condition: Unmatched quote.");
}

TEST(BuildFeatures, ListsOnlyWhatSluiceHas) {
  const auto& f = build_features();
  EXPECT_NE(std::find(f.begin(), f.end(), "THREAD"), f.end());
  EXPECT_NE(std::find(f.begin(), f.end(), "EPOLL"), f.end());
  EXPECT_NE(std::find(f.begin(), f.end(), "OPENSSL"), f.end());
  EXPECT_EQ(std::find(f.begin(), f.end(), "QUIC"), f.end());
  // Regexes are PCRE2 (base/regex.h), JIT-compiled where the library supports it.
  EXPECT_NE(std::find(f.begin(), f.end(), "PCRE2"), f.end());
  EXPECT_EQ(std::find(f.begin(), f.end(), "PCRE2_JIT") != f.end(), base::Regex::jit_supported());
  EXPECT_EQ(std::find(f.begin(), f.end(), "PCRE"), f.end());
}

}  // namespace
}  // namespace sluice::config

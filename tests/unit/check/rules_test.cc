// The pure parts of the tcp-check rule language: an expect's verdict on what arrived so far,
// and HAProxy 3.5's texts for failures and steps.
#include "check/rules.h"

#include "base/strings.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace sluice::check {
namespace {

CheckRule expect(CheckRule::Match m, std::string pattern, bool negate = false) {
  CheckRule r;
  r.kind = CheckRule::Kind::kExpect;
  r.match = m;
  r.pattern = pattern;
  r.negate = negate;
  if (m == CheckRule::Match::kBinary) EXPECT_TRUE(base::hex_decode(pattern, &r.bytes));
  else r.bytes = pattern;
  if (m == CheckRule::Match::kRstring || m == CheckRule::Match::kRbinary) {
    auto re = std::make_shared<base::Regex>();
    std::string err;
    EXPECT_TRUE(re->compile(pattern, &err)) << err;
    r.re = re;
  }
  return r;
}

TEST(CheckRules, ExpectWaitsUntilItCanJudge) {
  using M = CheckRule::Match;
  using V = ExpectVerdict;
  const CheckRule s = expect(M::kString, "+OK");
  EXPECT_EQ(evaluate_expect(s, "", false), V::kWait);
  EXPECT_EQ(evaluate_expect(s, "+O", false), V::kWait);
  EXPECT_EQ(evaluate_expect(s, "x+OK\r\n", false), V::kPass);
  EXPECT_EQ(evaluate_expect(s, "-ERR", true), V::kFail);
  // Negated: present fails at once; absent passes only once nothing more can come.
  const CheckRule n = expect(M::kString, "+OK", true);
  EXPECT_EQ(evaluate_expect(n, "+OK", false), V::kFail);
  EXPECT_EQ(evaluate_expect(n, "-ERR", false), V::kWait);
  EXPECT_EQ(evaluate_expect(n, "-ERR", true), V::kPass);
  // min-recv: not before that many bytes, unless the server closed.
  CheckRule m = expect(M::kString, "+OK");
  m.min_recv = 10;
  EXPECT_EQ(evaluate_expect(m, "+OK", false), V::kWait);
  EXPECT_EQ(evaluate_expect(m, "+OK", true), V::kPass);
  EXPECT_EQ(evaluate_expect(m, "+OK ready\r\n", false), V::kPass);
  // rbinary runs on the upper-case hexadecimal dump, as HAProxy's does.
  EXPECT_EQ(evaluate_expect(expect(M::kRbinary, "^2B4F4B"), "+OK", false), V::kPass);
  EXPECT_EQ(evaluate_expect(expect(M::kRbinary, "^2b4f4b"), "+OK", true), V::kFail);
  EXPECT_EQ(evaluate_expect(expect(M::kBinary, "00ff"), std::string("a\0\xff", 3), false), V::kPass);
  EXPECT_EQ(evaluate_expect(expect(M::kRstring, "^2[0-9]{2} "), "220 mail\r\n", false), V::kPass);
  CheckRule lf = expect(M::kStringLf, "%[srv_name]");
  EXPECT_EQ(evaluate_expect(lf, "hello s1", false, "s1"), V::kPass);
}

TEST(CheckRules, Texts) {
  using M = CheckRule::Match;
  EXPECT_EQ(expect_failure_text(expect(M::kString, "NOPE"), 1),
            "TCPCHK did not match content 'NOPE' at step 1");
  EXPECT_EQ(expect_failure_text(expect(M::kString, "+OK", true), 3),
            "TCPCHK matched unwanted content '+OK' at step 3");
  CheckRule c = expect(M::kRstring, "^x");
  c.comment = "greeting";
  EXPECT_EQ(expect_failure_text(c, 2), "TCPCHK did not match content (regex) at step 2 comment: greeting");
  EXPECT_EQ(expect_failure_text(expect(M::kBinary, "2b"), 1), "TCPCHK did not match content (binary) at step 1");
  EXPECT_EQ(expect_failure_text(expect(M::kRbinary, "^2B"), 1),
            "TCPCHK did not match content (binary regex) at step 1");
  EXPECT_EQ(step_text(expect(M::kString, "+OK")), "expect string '+OK'");
  EXPECT_EQ(step_text(expect(M::kString, "+OK", true)), "expect ! string '+OK'");
  CheckRule conn;
  conn.kind = CheckRule::Kind::kConnect;
  conn.port = 9590;
  EXPECT_EQ(step_text(conn), "connect port 9590");
  EXPECT_EQ(errno_report(ECONNREFUSED), "ECONNREFUSED returned by OS (Connection refused)");
  std::string out;
  EXPECT_FALSE(base::hex_decode("2b4", &out));
  EXPECT_FALSE(base::hex_decode("zz", &out));
  EXPECT_TRUE(base::hex_decode("2B4f", &out));
  EXPECT_EQ(out, "+O");
}

}  // namespace
}  // namespace sluice::check

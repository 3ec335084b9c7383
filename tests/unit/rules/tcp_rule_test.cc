// tcp-request accept/reject rules: parsing, the layer-4 restriction, evaluation order.
#include <gtest/gtest.h>

#include "rules_support.h"

namespace sluice::rules {
namespace {

using testing::addr;
using testing::split;

class TcpRuleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(reg.parse_acl(split("lan src 10.0.0.0/8")).ok());
    ASSERT_TRUE(reg.parse_acl(split("api path_beg /api")).ok());
  }
  std::vector<TcpRule> rules(std::initializer_list<std::string> lines,
                             TcpRuleStage stage = TcpRuleStage::kConnection) {
    std::vector<TcpRule> out;
    for (const auto& l : lines) {
      auto r = parse_tcp_rule(split(l), stage, reg);
      EXPECT_TRUE(r.ok()) << l << ": " << (r.ok() ? "" : r.error().message);
      if (r.ok()) out.push_back(std::move(r.value()));
    }
    return out;
  }
  std::string error(const std::string& line, TcpRuleStage stage = TcpRuleStage::kConnection) {
    auto r = parse_tcp_rule(split(line), stage, reg);
    return r.ok() ? "" : r.error().message;
  }
  bool accepts(const std::vector<TcpRule>& rs, const std::string& src, uint16_t dst_port = 80) {
    net::SocketAddress s = addr(src, 40000), d = addr("127.0.0.1", dst_port);
    RequestView v;
    v.src = &s;
    v.dst = &d;
    v.dst_port = dst_port;
    return tcp_rules_accept(rs, v);
  }
  std::vector<TcpRule> content(std::initializer_list<std::string> lines) {
    return rules(lines, TcpRuleStage::kContent);
  }
  // The verdict on `payload` received from 10.0.0.1, final or not.
  TcpVerdict verdict(const std::vector<TcpRule>& rs, std::string_view payload, bool final) {
    net::SocketAddress s = addr("10.0.0.1", 40000);
    RequestView v;
    v.src = &s;
    v.dst_port = 443;
    v.payload = payload;
    v.payload_final = final;
    return tcp_rules_verdict(rs, v);
  }
  AclRegistry reg;
};

// The first 9 bytes of a ClientHello record that announces more: a hello still incomplete.
std::string hello_prefix() { return std::string("\x16\x03\x01\x00\x30\x01\x00\x00\x2c", 9); }

TEST_F(TcpRuleTest, ContentRulesWaitWhileAFetchMayStillChange) {
  using V = TcpVerdict;
  auto len = content({"accept if { req.len ge 4 }", "reject"});
  EXPECT_EQ(verdict(len, "", false), V::kWait);
  EXPECT_EQ(verdict(len, "abc", false), V::kWait);
  EXPECT_EQ(verdict(len, "abcd", false), V::kAccept);
  EXPECT_EQ(verdict(len, "abc", true), V::kReject);   // final: the length is what it is
  // A length that already matches decides at once, even though it may grow.
  EXPECT_EQ(verdict(content({"reject if { req.len lt 4 }"}), "", false), V::kReject);
  // The hello type: not TLS is final from the first byte, a partial record waits.
  auto tls = content({"reject unless { req_ssl_hello_type 1 }"});
  EXPECT_EQ(verdict(tls, "G", false), V::kReject);
  EXPECT_EQ(verdict(tls, "", false), V::kWait);
  EXPECT_EQ(verdict(tls, hello_prefix(), false), V::kWait);
  EXPECT_EQ(verdict(tls, hello_prefix(), true), V::kReject);
  // `!` and `unless` keep "no answer yet".
  EXPECT_EQ(verdict(content({"reject if !{ req.ssl_sni -m found }"}), hello_prefix(), false), V::kWait);
  // Waiting stops at the first rule without an answer, even when a later one would match
  // (HAProxy), and a rule that matches first decides without looking at the payload.
  EXPECT_EQ(verdict(content({"accept if { req.len ge 100 }", "reject if { src 10.0.0.1 }"}), "x",
                    false), V::kWait);
  EXPECT_EQ(verdict(content({"reject if { src 10.0.0.1 }", "accept if { req.len ge 100 }"}), "",
                    false), V::kReject);
  // OR: one matching group is enough; AND: one failing term is enough.
  EXPECT_EQ(verdict(content({"reject if { req.len ge 100 } || { src 10.0.0.1 }"}), "", false), V::kReject);
  EXPECT_EQ(verdict(content({"reject if { req.len ge 100 } { src 10.9.9.9 }"}), "", false), V::kAccept);
  EXPECT_EQ(verdict(content({"reject if { req.len ge 100 } { src 10.0.0.1 }"}), "", false), V::kWait);
  // The same rules, judged final through tcp_rules_accept.
  net::SocketAddress src = addr("10.0.0.1", 40000);
  RequestView v;
  v.src = &src;
  v.payload = "abcd";
  EXPECT_TRUE(tcp_rules_accept(len, v));
  v.payload = "ab";
  EXPECT_FALSE(tcp_rules_accept(len, v));
}

TEST_F(TcpRuleTest, FirstMatchDecidesAndNoMatchAccepts) {
  EXPECT_TRUE(accepts({}, "1.2.3.4"));
  auto rs = rules({"accept if { src 10.1.0.0/16 }", "reject if lan"});
  EXPECT_TRUE(accepts(rs, "10.1.2.3"));    // the accept comes first
  EXPECT_FALSE(accepts(rs, "10.2.2.3"));
  EXPECT_TRUE(accepts(rs, "192.168.1.1"));  // nothing matches: accept
  EXPECT_FALSE(accepts(rules({"reject"}), "1.2.3.4"));
  EXPECT_TRUE(accepts(rules({"accept", "reject"}), "1.2.3.4"));
  auto un = rules({"reject unless { dst_port 80 443 }"});
  EXPECT_TRUE(accepts(un, "1.2.3.4", 443));
  EXPECT_FALSE(accepts(un, "1.2.3.4", 8080));
  EXPECT_FALSE(accepts(rules({"reject if { src_port 40000 } { always_true }"}), "1.2.3.4"));
  EXPECT_TRUE(accepts(rules({"reject if { always_false } || { dst 10.0.0.1 }"}), "1.2.3.4"));
  EXPECT_FALSE(accepts(rules({"reject if TRUE"}), "1.2.3.4"));
  EXPECT_FALSE(accepts(rules({"reject if LOCALHOST"}), "127.0.0.2"));
}

// HAProxy accepts any fetch in any rule and warns, once the section is read, about ACLs that
// cannot match where they are used.
TEST_F(TcpRuleTest, StageWarnings) {
  auto warn = [&](const std::string& line, TcpRuleStage stage = TcpRuleStage::kConnection) {
    auto r = parse_tcp_rule(split(line), stage, reg);
    EXPECT_TRUE(r.ok()) << line << ": " << (r.ok() ? "" : r.error().message);
    auto w = r.ok() ? check_stage(r->cond, stage) : std::vector<std::string>{};
    EXPECT_LE(w.size(), 1u);
    return w.empty() ? std::string() : w[0];
  };
  EXPECT_EQ(warn("reject if { path /x }"),
            "anonymous acl will never match in 'tcp-request connection' because it uses keyword "
            "'path' which is incompatible with 'frontend tcp-request connection rule'");
  EXPECT_EQ(warn("accept if HTTP"),
            "acl 'HTTP' will never match in 'tcp-request connection' because it only involves "
            "keywords that are incompatible with 'frontend tcp-request connection rule'");
  EXPECT_EQ(warn("reject if { req.len gt 0 }"),
            "anonymous acl will never match in 'tcp-request connection' because it uses keyword "
            "'req.len' which is incompatible with 'frontend tcp-request connection rule'");
  // Content rules have the client's bytes and the HTTP request.
  EXPECT_EQ(warn("reject if lan api", TcpRuleStage::kContent), "");
  EXPECT_EQ(warn("reject if { req_ssl_sni -i a } { req.len gt 0 } { req_ssl_hello_type 1 }",
                 TcpRuleStage::kContent), "");
  EXPECT_EQ(warn("reject if { status 200 }", TcpRuleStage::kContent),
            "anonymous acl will never match in 'tcp-request content' because it uses keyword "
            "'status' which is incompatible with 'frontend tcp-request content rule'");
  // An ACL with one usable term may still match: the weaker warning.
  ASSERT_TRUE(reg.parse_acl(split("mixed src 1.2.3.4")).ok());
  ASSERT_TRUE(reg.parse_acl(split("mixed path /x")).ok());
  EXPECT_EQ(warn("reject if mixed"),
            "acl 'mixed' involves keyword 'path' which is incompatible with 'frontend tcp-request "
            "connection rule'");
  EXPECT_EQ(warn("reject if lan"), "");
  // Bad patterns are still errors.
  EXPECT_EQ(error("reject if { dst_port x }", TcpRuleStage::kContent),
            "error detected while parsing a 'tcp-request content reject' condition : 'x' is not "
            "a number.");
}

TEST_F(TcpRuleTest, ActionErrors) {
  EXPECT_EQ(error("expect-proxy layer4"), "'tcp-request connection expect-proxy' is not supported by sluice yet.");
  EXPECT_EQ(error("silent-drop"), "'tcp-request connection silent-drop' is not supported by sluice yet.");
  EXPECT_EQ(error("track-sc0 src"), "'tcp-request connection track-sc0' is not supported by sluice yet.");
  EXPECT_EQ(error("set-var(sess.x) src", TcpRuleStage::kContent),
            "'tcp-request content set-var(sess.x)' is not supported by sluice yet.");
  EXPECT_EQ(error("lua.foo", TcpRuleStage::kContent), "'tcp-request content lua.foo' is not supported by sluice yet.");
  EXPECT_EQ(error("capture src len 10", TcpRuleStage::kContent),
            "'tcp-request content capture' is not supported by sluice yet.");
  EXPECT_EQ(error("deny"), "'tcp-request connection' expects 'accept' or 'reject' (the actions sluice "
                           "supports) but got 'deny'.");
  EXPECT_EQ(error(""), "'tcp-request connection' expects 'accept' or 'reject' (the actions sluice "
                       "supports) but got ''.");
  EXPECT_EQ(error("reject extra"), "'tcp-request connection reject' only accepts 'if' or 'unless' (got 'extra').");
  EXPECT_EQ(error("accept if nope"), "error detected while parsing a 'tcp-request connection accept' "
                                     "condition : no such ACL : 'nope'.");
  EXPECT_EQ(error("accept if"), "error detected while parsing a 'tcp-request connection accept' "
                                "condition : missing condition after 'if'.");
}

TEST_F(TcpRuleTest, UsesDst) {
  EXPECT_FALSE(uses_dst(rules({"reject if lan"})[0].cond));
  EXPECT_TRUE(uses_dst(rules({"reject if lan || { dst 10.0.0.1 }"})[0].cond));
}

}  // namespace
}  // namespace sluice::rules

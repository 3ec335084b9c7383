// tcp-request accept/reject rules: parsing, the layer-4 restriction, evaluation order.
#include <gtest/gtest.h>

#include "rules_support.h"
#include "sample/captures.h"
#include "sample/var_read.h"

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
    v.avail = sample::kAtTcpContent;
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
  // HAProxy 3.5's words for what it refuses, and sluice's for what it lacks, naming the need.
  EXPECT_EQ(error("expect-proxy"),
            "'tcp-request connection expect-proxy' only supports 'layer4' (got '')");
  EXPECT_EQ(error("track-sc0 src"), "'tcp-request connection track-sc0' is not supported by sluice "
                                    "yet (it needs stick tables).");
  EXPECT_EQ(error("sc-inc-gpc0(0)", TcpRuleStage::kSession),
            "'tcp-request session sc-inc-gpc0(0)' is not supported by sluice yet (it needs stick tables).");
  EXPECT_EQ(error("do-resolve(txn.ip,dns) src", TcpRuleStage::kContent),
            "'tcp-request content do-resolve(txn.ip,dns)' is not supported by sluice yet (it needs "
            "DNS resolvers).");
  EXPECT_EQ(error("switch-mode http", TcpRuleStage::kContent),
            "'tcp-request content switch-mode' is not supported by sluice yet (it needs an upgrade "
            "from TCP to HTTP).");
  EXPECT_EQ(error("lua.foo", TcpRuleStage::kContent),
            "'tcp-request content lua.foo' is not supported by sluice yet (it needs Lua).");
  EXPECT_EQ(error("capture src len 10", TcpRuleStage::kSession),
            "'capture src' is not allowed in 'tcp-request session' rules");
  EXPECT_EQ(error("set-var(sess.x) src"),
            "'tcp-request connection set-var(sess.x)' is not supported by sluice yet (connection "
            "rules run before the session exists: use 'tcp-request session').");
  // An action of another stage is unknown there, as in HAProxy.
  EXPECT_NE(error("close", TcpRuleStage::kContent)
                .find("'tcp-request content' expects 'accept', 'reject', 'capture', "),
            std::string::npos);
  EXPECT_NE(error("set-src src", TcpRuleStage::kResponse)
                .find("'tcp-response content' expects 'accept', 'close', 'reject', "),
            std::string::npos);
  EXPECT_EQ(error("deny").substr(0, 60), "'tcp-request connection' expects 'accept', 'reject', 'captur");
  EXPECT_NE(error("deny").find("'silent-drop' (got 'deny')."), std::string::npos);
  EXPECT_NE(error("").find("(got '')."), std::string::npos);
  EXPECT_EQ(error("reject extra"), "'tcp-request connection reject' only accepts 'if' or 'unless' (got 'extra')");
  EXPECT_EQ(error("accept if nope"), "error detected while parsing a 'tcp-request connection accept' "
                                     "condition : no such ACL : 'nope'.");
  EXPECT_EQ(error("accept if"), "error detected while parsing a 'tcp-request connection accept' "
                                "condition : missing condition after 'if'.");
  // Arguments, as HAProxy words them.
  EXPECT_EQ(error("set-src", TcpRuleStage::kSession), "missing fetch method");
  EXPECT_EQ(error("set-src if TRUE", TcpRuleStage::kSession), "missing fetch method");
  EXPECT_EQ(error("set-dst-port foo()", TcpRuleStage::kContent), "unknown fetch method 'foo'");
  EXPECT_EQ(error("silent-drop junk", TcpRuleStage::kContent),
            "'tcp-request content silent-drop' only accepts 'if' or 'unless' (got 'junk')");
  EXPECT_EQ(error("set-var(txn.a) res.len", TcpRuleStage::kContent),
            "fetch method 'set-var(txn.a)' extracts information from 'response buffer', none of "
            "which is available here");
  EXPECT_EQ(error("set-var(sess.a) req.len", TcpRuleStage::kSession),
            "fetch method 'set-var(sess.a)' extracts information from 'request buffer', none of "
            "which is available here");
  EXPECT_EQ(error("set-var(txn.a,ifzz) int(1)", TcpRuleStage::kContent), "unknown condition \"ifzz\"");
  EXPECT_EQ(error("set-var(foo) int(1)", TcpRuleStage::kContent),
            "invalid variable name 'foo'. A variable name must start with its scope. The scope can "
            "be 'proc', '(p)sess', '(p)txn', '(p)req', '(p)res' or 'check'");
  EXPECT_EQ(error("set-var(txn.a int(1)", TcpRuleStage::kContent),
            "incomplete argument after action 'set-var(txn.a'. Expects 'set-var(<var-name>)', "
            "'set-var-fmt(<var-name>)' or 'unset-var(<var-name>)'");
  EXPECT_EQ(error("unset-var(txn.x,ifset)", TcpRuleStage::kContent),
            "unset-var does not expect parameters after the variable name. Only \"set-var\" and "
            "\"set-var-fmt\" manage conditions");
  EXPECT_EQ(error("unset-var(txn.a) junk", TcpRuleStage::kContent),
            "'tcp-request content unset-var(txn.a)' only accepts 'if' or 'unless' (got 'junk')");
  // What HAProxy accepts.
  for (const char* ok : {"set-var-fmt(txn.x)", "set-var(txn.x) src if TRUE", "set-src str(zz)",
                         "set-var(res.z) int(1)", "set-var-fmt(txn.b) \"%[src]:%[req.len]\""})
    EXPECT_EQ(error(ok, TcpRuleStage::kContent), "") << ok;
  for (const char* ok : {"close if { res.len gt 0 }", "set-var(txn.x) res.payload(0,3)",
                         "silent-drop", "accept if WAIT_END", "set-var(req.r) int(1)"})
    EXPECT_EQ(error(ok, TcpRuleStage::kResponse), "") << ok;
  EXPECT_EQ(error("set-src int(1)"), "");
  EXPECT_EQ(error("silent-drop"), "");
}

// The actions run in order and the rules after them see what they changed.
TEST_F(TcpRuleTest, ActionsRunInOrder) {
  sample::VarStore sess(sample::Scope::kSess), txn(sample::Scope::kTxn);
  net::SocketAddress src = addr("10.0.0.1", 40000), dst = addr("127.0.0.1", 80), local;
  RequestView v;
  v.src = &src;
  v.dst = &dst;
  v.dst_port = 80;
  v.sess_vars = &sess;
  v.txn_vars = &txn;
  v.avail = sample::kAtTcpContent;
  v.payload = "hello";
  auto rs = content({"set-var(sess.a) req.len", "set-var-fmt(txn.b) %[src]:%[var(sess.a)]",
                     "set-src ipv4(192.168.1.2)", "set-dst-port int(8080)",
                     "set-var(txn.c) src", "reject if { src 192.168.1.2 } { dst_port 8080 }"});
  EXPECT_EQ(run_tcp_rules(rs, v, {&src, &local}), TcpVerdict::kReject);
  auto text = [&](std::string_view name) {
    sample::Sample s;
    sample::VarRef ref;
    std::string err;
    EXPECT_TRUE(sample::VarNames::global().parse(name, &ref, &err)) << err;
    std::string out;
    if (sample::read_var(ref, v, s)) sample::to_text(s, out);
    return out;
  };
  EXPECT_EQ(text("sess.a"), "5");
  EXPECT_EQ(text("txn.b"), "10.0.0.1:5");
  EXPECT_EQ(text("txn.c"), "192.168.1.2");
  // set-src keeps the port; set-dst-port copies the listener's address first, then changes it.
  EXPECT_EQ(src.to_string(), "192.168.1.2:40000");
  EXPECT_EQ(dst.to_string(), "127.0.0.1:80");
  EXPECT_EQ(v.dst, &local);
  EXPECT_EQ(local.to_string(), "127.0.0.1:8080");
  // unset-var, then the final actions of each stage.
  EXPECT_EQ(run_tcp_rules(content({"unset-var(sess.a)", "silent-drop"}), v, {}), TcpVerdict::kSilentDrop);
  EXPECT_EQ(text("sess.a"), "");
  EXPECT_EQ(run_tcp_rules(rules({"close"}, TcpRuleStage::kResponse), v, {}), TcpVerdict::kClose);
  // set-src-port on an address without a port (UNIX): 0.0.0.0 as HAProxy does.
  net::SocketAddress unix_src = net::SocketAddress::unix_path("/tmp/x").value();
  v.src = &unix_src;
  run_tcp_rules(rules({"set-src-port int(7)"}, TcpRuleStage::kSession), v, {&unix_src, nullptr});
  EXPECT_EQ(unix_src.to_string(), "0.0.0.0:7");
}

// The predefined ACLs of content inspection: HTTP (a complete HTTP/1 request head in the raw
// bytes), HTTP_1.0 / HTTP_1.1, REQ_CONTENT, RDP_COOKIE and WAIT_END (only once the inspection
// is over).
TEST_F(TcpRuleTest, PredefinedContentAcls) {
  using V = TcpVerdict;
  auto http = content({"accept if HTTP", "reject"});
  EXPECT_EQ(verdict(http, "GET / HTTP/1.1\r\nHost: a\r\n\r\n", false), V::kAccept);
  EXPECT_EQ(verdict(http, "GET / HTTP/1.1\r\nHost: a\r\n", false), V::kWait);
  EXPECT_EQ(verdict(http, "GET / HTTP/1.1\r\nHost: a\r\n", true), V::kReject);
  EXPECT_EQ(verdict(http, "\x16\x03\x01", false), V::kReject);
  EXPECT_EQ(verdict(content({"reject if HTTP_1.0"}), "GET / HTTP/1.0\r\n\r\n", false), V::kReject);
  EXPECT_EQ(verdict(content({"reject if HTTP_1.1"}), "GET / HTTP/1.0\r\n\r\n", true), V::kAccept);
  EXPECT_EQ(verdict(content({"reject if REQ_CONTENT"}), "", true), V::kAccept);
  EXPECT_EQ(verdict(content({"reject if REQ_CONTENT"}), "x", false), V::kReject);
  auto wait_end = content({"accept if WAIT_END", "reject"});
  EXPECT_EQ(verdict(wait_end, "anything", false), V::kWait);
  EXPECT_EQ(verdict(wait_end, "anything", true), V::kAccept);
  auto rdp = content({"accept if RDP_COOKIE", "reject"});
  const std::string tpkt("\x03\x00\x00\x2a\x25\xe0\x00\x00\x00\x00\x00", 11);
  EXPECT_EQ(verdict(rdp, tpkt + "Cookie: mstshash=bob\r\n", false), V::kAccept);
  EXPECT_EQ(verdict(rdp, tpkt + "Cookie: msts", false), V::kWait);
  EXPECT_EQ(verdict(rdp, tpkt, true), V::kReject);
}

TEST_F(TcpRuleTest, UsesDst) {
  EXPECT_FALSE(uses_dst(rules({"reject if lan"})[0].cond));
  EXPECT_TRUE(uses_dst(rules({"reject if lan || { dst 10.0.0.1 }"})[0].cond));
}

// tcp-request content capture <expr> len <n>: HAProxy 3.5's messages, and the sample stored in
// the rule's slot cut to its length.
TEST_F(TcpRuleTest, ContentCaptureParses) {
  auto rs = rules({"capture req.payload(0,4) len 3", "capture src,lower len 3x if TRUE"},
                  TcpRuleStage::kContent);
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0].action, TcpRule::Action::kCapture);
  EXPECT_EQ(rs[0].capture_len, 3);
  EXPECT_EQ(rs[1].capture_len, 3);   // atoi(), as HAProxy
  EXPECT_FALSE(rs[1].cond.empty());
  EXPECT_EQ(rs[0].capture_id, -1);   // the frontend gives it its slot
  const auto c = TcpRuleStage::kContent;
  const std::string pre = "'tcp-request content capture' : ";
  EXPECT_EQ(error("capture", c), pre + "missing fetch method");
  EXPECT_EQ(error("capture if TRUE", c), pre + "missing fetch method");
  EXPECT_EQ(error("capture src", c), pre + "a positive 'len' argument is mandatory");
  EXPECT_EQ(error("capture src foo 3", c), pre + "a positive 'len' argument is mandatory");
  EXPECT_EQ(error("capture src id 0", c), pre + "a positive 'len' argument is mandatory");
  EXPECT_EQ(error("capture src len", c), pre + "length must be > 0");
  EXPECT_EQ(error("capture src len 0", c), pre + "length must be > 0");
  EXPECT_EQ(error("capture nosuch len 3", c), pre + "unknown fetch method 'nosuch'");
  EXPECT_EQ(error("capture res.hdr(x) len 3", c),
            pre + "fetch method 'res.hdr(x)' extracts information from 'HTTP response headers', "
                  "none of which is available here");
  EXPECT_EQ(error("capture src len 3 foo", c),
            "'tcp-request content capture' only accepts 'if' or 'unless' (got 'foo')");
  auto r = parse_tcp_rule(split("capture src len 3"), c, reg, "backend 'be'", true);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, pre + "proxy 'be' has no frontend capability");
}

TEST_F(TcpRuleTest, ContentCaptureFillsItsSlot) {
  auto rs = rules({"capture req.payload(0,4) len 3", "capture src len 20",
                   "capture src len 5 if { src 10.0.0.0/8 }"},
                  TcpRuleStage::kContent);
  ASSERT_EQ(rs.size(), 3u);
  for (int i = 0; i < 3; ++i) rs[static_cast<std::size_t>(i)].capture_id = i;
  sample::CaptureSlots req = {{"", 3}, {"", 20}, {"", 5}}, res;
  sample::Captures caps;
  caps.reset(req, res);
  net::SocketAddress s = addr("127.0.0.1", 40000);
  RequestView v;
  v.avail = sample::kAtTcpContent;
  v.src = &s;
  v.payload = "GET / HTTP/1.0\r\n\r\n";
  // Without slots the action does nothing.
  EXPECT_EQ(run_tcp_rules(rs, v, {}), TcpVerdict::kAccept);
  v.captures = &caps;
  EXPECT_EQ(run_tcp_rules(rs, v, {}), TcpVerdict::kAccept);
  ASSERT_NE(caps.req_value(0), nullptr);
  EXPECT_EQ(*caps.req_value(0), "GET");
  ASSERT_NE(caps.req_value(1), nullptr);
  EXPECT_EQ(*caps.req_value(1), "127.0.0.1");
  EXPECT_EQ(caps.req_value(2), nullptr);   // its condition did not match
}

}  // namespace
}  // namespace sluice::rules

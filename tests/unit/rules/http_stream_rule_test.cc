// The HTTP rule actions on the stream: capture, set-log-level, set-timeout, set-src,
// set-src-port, set-dst, set-dst-port (messages and behaviour from HAProxy 3.5).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "rules_support.h"
#include "sample/captures.h"

namespace sluice::rules {
namespace {

using testing::Msg;
using testing::split;

class StreamRuleTest : public ::testing::Test {
 protected:
  base::Result<HttpRule> parse(const std::string& line, RuleSide side = RuleSide::kRequest,
                               const RuleOwner& owner = {}) {
    return parse_http_rule(split(line), side, reg, "", "frontend", owner);
  }
  HttpRule rule(const std::string& line, RuleSide side = RuleSide::kRequest) {
    auto r = parse(line, side);
    EXPECT_TRUE(r.ok()) << line << ": " << (r.ok() ? "" : r.error().message);
    return r.ok() ? std::move(r.value()) : HttpRule{};
  }
  std::string error(const std::string& line, RuleSide side = RuleSide::kRequest,
                    const RuleOwner& owner = {}) {
    auto r = parse(line, side, owner);
    return r.ok() ? "" : r.error().message;
  }
  // Runs `lines` on `m`'s request (or response, when it has a status) with `st`.
  // Returns the header fields the rules left, "name: value\n" each.
  std::string run(const std::vector<std::string>& lines, Msg& m, StreamEdit& st,
                  RuleSide side = RuleSide::kRequest, sample::Captures* caps = nullptr) {
    std::vector<HttpRule> rs;
    for (const auto& l : lines) rs.push_back(rule(l, side));
    RequestView v = m.view();
    v.captures = caps;
    HeadEdit edit;
    edit.method = m.method;
    edit.target = m.target;
    edit.headers = side == RuleSide::kRequest ? m.hs : m.rhs;
    apply_rules(rs, side, edit, v, &st);
    std::string out;
    for (const auto& h : edit.headers) out += fmt::format("{}: {}\n", h.name, h.value);
    return out;
  }
  AclRegistry reg;
};

std::string wrap(std::string_view action, std::string_view why) {
  return fmt::format("error detected while parsing 'http-request {}' rule : {}.", action, why);
}

TEST_F(StreamRuleTest, CaptureParsesLenAndId) {
  HttpRule r = rule("capture req.hdr(host) len 10");
  EXPECT_EQ(r.action, HttpRule::Action::kCapture);
  EXPECT_EQ(r.capture_len, 10);
  r = rule("capture req.hdr(host),lower id 2 if TRUE");
  EXPECT_EQ(r.capture_len, 0);
  EXPECT_EQ(r.capture_id, 2);
  r = rule("capture res.hdr(server) id 0", RuleSide::kResponse);
  EXPECT_EQ(r.capture_id, 0);
  r = rule("capture status id 1", RuleSide::kAfterResponse);
  EXPECT_EQ(r.capture_id, 1);
  // atoi(): trailing characters after the length are ignored, as in HAProxy.
  EXPECT_EQ(rule("capture path len 3x").capture_len, 3);
}

TEST_F(StreamRuleTest, CaptureErrorsAreHaproxys) {
  const std::string usage = "expects <expression> [ 'len' <length> | id <idx> ]";
  EXPECT_EQ(error("capture"), wrap("capture", usage));
  EXPECT_EQ(error("capture req.hdr(host)"), wrap("capture", usage));
  EXPECT_EQ(error("capture req.hdr(host) len"), wrap("capture", usage));
  EXPECT_EQ(error("capture req.hdr(host) len if TRUE"), wrap("capture", usage));
  EXPECT_EQ(error("capture req.hdr(host) len 0"), wrap("capture", "length must be > 0"));
  EXPECT_EQ(error("capture req.hdr(host) len x"), wrap("capture", "length must be > 0"));
  EXPECT_EQ(error("capture req.hdr(host) id x"), wrap("capture", "cannot parse id 'x'"));
  EXPECT_EQ(error("capture req.hdr(host) id -1"), wrap("capture", "cannot parse id '-1'"));
  EXPECT_EQ(error("capture req.hdr(host) foo 3"),
            wrap("capture", "expects 'len' or 'id', found 'foo'"));
  EXPECT_EQ(error("capture req.hdr(host),foo len 3"), wrap("capture", "unknown converter 'foo'"));
  EXPECT_EQ(error("capture res.hdr(host) len 3"),
            wrap("capture", "fetch method 'res.hdr(host)' extracts information from 'HTTP "
                            "response headers', none of which is available here"));
  EXPECT_EQ(error("capture req.hdr(host) len 3 id 3"),
            "'http-request capture' expects either 'if' or 'unless' followed by a condition but "
            "found 'id'.");
  EXPECT_EQ(error("capture req.hdr(host) len 3", RuleSide::kRequest, {"b", false, true}),
            wrap("capture", "proxy 'b' has no frontend capability"));
  EXPECT_EQ(error("capture res.hdr(x) len 3", RuleSide::kResponse),
            "error detected while parsing 'http-response capture' rule : expects 'id', found 'len'.");
  EXPECT_EQ(error("capture res.hdr(x)", RuleSide::kResponse),
            "error detected while parsing 'http-response capture' rule : expects <expression> id "
            "<idx>.");
  EXPECT_EQ(error("capture res.hdr(x) len 2", RuleSide::kAfterResponse),
            "error detected while parsing 'http-after-response capture' rule : expects 'id', found "
            "'len'.");
}

TEST_F(StreamRuleTest, CaptureWritesItsSlotCutToItsLength) {
  sample::CaptureSlots req = {{"host", 5}, {"", 4}, {"", 3}};
  sample::CaptureSlots res = {{"", 6}};
  sample::Captures caps;
  caps.reset(req, res);
  Msg m;
  m.fields = {{"Host", "example.com"}, {"X-A", "abcdef"}};
  m.view();
  caps.capture_headers(false, m.hs);
  StreamEdit st;
  run({"capture req.hdr(x-a) id 1", "capture req.hdr(x-a) id 2", "capture req.hdr(x-a) id 7",
       "capture req.hdr(x-none) id 0"},
      m, st, RuleSide::kRequest, &caps);
  ASSERT_EQ(caps.req().size(), 3u);
  EXPECT_EQ(caps.req()[0], "examp");   // the header capture; an absent sample leaves it
  EXPECT_EQ(caps.req()[1], "abcd");
  EXPECT_EQ(caps.req()[2], "abc");
  m.status = 200;
  m.res_fields = {{"Server", "srv-long-name"}};
  run({"capture res.hdr(server) id 0"}, m, st, RuleSide::kResponse, &caps);
  EXPECT_EQ(caps.res()[0], "srv-lo");
  // Without capture slots (the frontend declares none) the rule does nothing.
  run({"capture res.hdr(server) id 0"}, m, st, RuleSide::kResponse, nullptr);
}

TEST_F(StreamRuleTest, SetLogLevel) {
  EXPECT_EQ(rule("set-log-level silent").log_level, -1);
  EXPECT_EQ(rule("set-log-level emerg").log_level, 1);
  EXPECT_EQ(rule("set-log-level err if TRUE").log_level, 4);
  EXPECT_EQ(rule("set-log-level debug", RuleSide::kAfterResponse).log_level, 8);
  const std::string usage = "expects exactly 1 argument (log level name or 'silent')";
  EXPECT_EQ(error("set-log-level"), wrap("set-log-level", usage));
  EXPECT_EQ(error("set-log-level foo"), wrap("set-log-level", usage));
  EXPECT_EQ(error("set-log-level err foo"),
            "'http-request set-log-level' expects either 'if' or 'unless' followed by a condition "
            "but found 'foo'.");
  Msg m;
  StreamEdit st;
  run({"set-log-level err", "set-log-level notice if FALSE"}, m, st);
  EXPECT_EQ(st.log_level, 4);
  run({"set-log-level silent"}, m, st);
  EXPECT_EQ(st.log_level, -1);
}

TEST_F(StreamRuleTest, SetTimeoutParses) {
  HttpRule r = rule("set-timeout server 3s");
  EXPECT_EQ(r.action, HttpRule::Action::kSetTimeout);
  EXPECT_EQ(r.timeout_kind, StreamEdit::kServer);
  EXPECT_EQ(r.timeout_ms, 3000u);
  r = rule("set-timeout tunnel 2m", RuleSide::kResponse);
  EXPECT_EQ(r.timeout_kind, StreamEdit::kTunnel);
  EXPECT_EQ(r.timeout_ms, 120000u);
  r = rule("set-timeout client req.hdr(x-t)");
  EXPECT_EQ(r.timeout_kind, StreamEdit::kClient);
  EXPECT_TRUE(r.expr);
  // HAProxy does not check where this expression runs.
  EXPECT_TRUE(rule("set-timeout server res.hdr(x)").expr);
}

TEST_F(StreamRuleTest, SetTimeoutErrorsAreHaproxys) {
  EXPECT_EQ(error("set-timeout"), wrap("set-timeout", "expects exactly 2 arguments"));
  EXPECT_EQ(error("set-timeout server"), wrap("set-timeout", "expects exactly 2 arguments"));
  EXPECT_EQ(error("set-timeout foo 3s"),
            wrap("set-timeout", "'set-timeout' rule supports "
                                "'client'/'connect'/'queue'/'server'/'tarpit'/'tunnel' (got 'foo')"));
  EXPECT_EQ(error("set-timeout server 3x"),
            wrap("set-timeout", "unexpected character 'x' in rule 'set-timeout server'"));
  EXPECT_EQ(error("set-timeout server -1"),
            wrap("set-timeout", "unexpected character '-' in rule 'set-timeout server'"));
  EXPECT_EQ(error("set-timeout server req.hdr(x),foo"),
            wrap("set-timeout", "unexpected character 'r' in rule 'set-timeout server'"));
  EXPECT_EQ(error("set-timeout server 0"),
            wrap("set-timeout", "null value is not valid for a 'set-timeout server' rule"));
  EXPECT_EQ(error("set-timeout server 30d"),
            wrap("set-timeout", "timer overflow in argument '30d' to rule 'set-timeout server' "
                                "(maximum value is 2147483647 ms or ~24.8 days)"));
  EXPECT_EQ(error("set-timeout server 3s foo"),
            "'http-request set-timeout' expects either 'if' or 'unless' followed by a condition "
            "but found 'foo'.");
  EXPECT_EQ(error("set-timeout server 3s", RuleSide::kRequest, {"f", true, false}),
            wrap("set-timeout", "'f' has no backend capability"));
  EXPECT_EQ(error("set-timeout client 3s", RuleSide::kRequest, {"b", false, true}),
            wrap("set-timeout", "'b' has no frontend capability"));
  EXPECT_NE(error("set-timeout connect 3s").find("not supported by sluice yet"), std::string::npos);
  // Not an http-after-response action.
  EXPECT_NE(error("set-timeout server 1s", RuleSide::kAfterResponse).find("expects"),
            std::string::npos);
}

TEST_F(StreamRuleTest, SetTimeoutApplies) {
  Msg m;
  m.fields = {{"X-T", "2500"}, {"X-Bad", "-5"}};
  m.view();
  StreamEdit st;
  run({"set-timeout server 3s", "set-timeout client req.hdr(x-t)",
       "set-timeout tunnel req.hdr(x-none)", "set-timeout tunnel req.hdr(x-bad)"},
      m, st);
  EXPECT_TRUE(st.has_timeout(StreamEdit::kServer));
  EXPECT_EQ(st.timeout(StreamEdit::kServer, 9), 3000u);
  EXPECT_EQ(st.timeout(StreamEdit::kClient, 9), 2500u);
  // No sample, or a negative one: unchanged.
  EXPECT_FALSE(st.has_timeout(StreamEdit::kTunnel));
  EXPECT_EQ(st.timeout(StreamEdit::kTunnel, 9), 9u);
}

TEST_F(StreamRuleTest, SetSrcAndDst) {
  EXPECT_EQ(error("set-src"), wrap("set-src", "missing fetch method"));
  EXPECT_EQ(error("set-dst if TRUE"), wrap("set-dst", "missing fetch method"));
  EXPECT_EQ(error("set-src foo"), wrap("set-src", "unknown fetch method 'foo'"));
  EXPECT_EQ(error("set-src hdr(x) foo"),
            "'http-request set-src' expects either 'if' or 'unless' followed by a condition but "
            "found 'foo'.");
  // Request rules only.
  EXPECT_NE(error("set-src hdr(x)", RuleSide::kResponse).find("'http-response' expects"),
            std::string::npos);
  Msg m;
  m.fields = {{"X-Src", "10.9.8.7"}, {"X-Sport", "99"}, {"X-Dst", "2001:db8::2"},
              {"X-Dport", "70000"}};
  StreamEdit st;
  run({"set-src req.hdr(x-src)", "set-src-port req.hdr(x-sport)", "set-dst req.hdr(x-dst)",
       "set-dst-port req.hdr(x-dport)"},
      m, st);
  ASSERT_TRUE(st.addrs);
  EXPECT_TRUE(st.addrs->src_set);
  EXPECT_EQ(st.addrs->src.to_string(), "10.9.8.7:99");
  // The port is kept across a change of family; the low 16 bits of 70000 are 4464.
  EXPECT_EQ(st.addrs->dst.host_string(), "2001:db8::2");
  EXPECT_EQ(st.addrs->dst.port(), 4464);
}

TEST_F(StreamRuleTest, SetSrcKeepsThePortAndIgnoresWhatIsNoAddress) {
  Msg m;
  m.fields = {{"X-Src", "::1"}, {"X-Bad", "not-an-ip"}, {"X-Neg", "-1"}};
  StreamEdit st;
  run({"set-dst req.hdr(x-bad)", "set-src req.hdr(x-src)", "set-dst-port req.hdr(x-neg)"}, m, st);
  ASSERT_TRUE(st.addrs);
  EXPECT_EQ(st.addrs->src.host_string(), "::1");
  EXPECT_EQ(st.addrs->src.port(), 40000);
  // The bad address changed nothing; the port -1 is 65535.
  EXPECT_EQ(st.addrs->dst.host_string(), "127.0.0.1");
  EXPECT_EQ(st.addrs->dst.port(), 65535);
  // The src and dst fetches of later rules see the new addresses.
  StreamEdit st2;
  std::string h = run({"set-header x-before %[src]:%[src_port]", "set-src str(192.0.2.1)",
                       "set-dst-port int(81)", "set-header x-after %[src]:%[src_port]/%[dst]:%[dst_port]"},
                      m, st2);
  EXPECT_NE(h.find("x-before: 10.1.2.3:40000\n"), std::string::npos) << h;
  EXPECT_NE(h.find("x-after: 192.0.2.1:40000/127.0.0.1:81\n"), std::string::npos) << h;
}

TEST_F(StreamRuleTest, DoResolveIsRefusedNamingDns) {
  EXPECT_EQ(error("do-resolve(txn.ip,dns) hdr(host)"),
            "'http-request do-resolve' is not supported by sluice yet (it needs DNS resolvers).");
  EXPECT_EQ(error("do-resolve"),
            "'http-request do-resolve' is not supported by sluice yet (it needs DNS resolvers).");
}

}  // namespace
}  // namespace sluice::rules

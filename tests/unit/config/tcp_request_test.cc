// tcp-request connection|content accept|reject and inspect-delay: where they are allowed, what
// the model keeps, and the file:line errors for what sluice does not support.
#include <gtest/gtest.h>

#include <string>

#include "config/loader.h"
#include "parse_run.h"

namespace sluice::config {
namespace {

using testing::parse;
using testing::proxy;
using testing::Run;

// Frontend f (mode `mode`) on :1, `body` from line 7, then backend b.
std::string fe(const std::string& body, const std::string& mode = "tcp") {
  return "defaults\n  timeout client 1s\n  timeout connect 1s\n  timeout server 1s\n"
         "frontend f\n  mode " + mode + "\n" + body + "  bind :1\n  default_backend b\n"
         "backend b\n  mode " + mode + "\n  server s 127.0.0.1:80\n";
}

// The first diagnostic of fe() with `line` in the frontend; the load must fail.
std::string first_error(const std::string& line) {
  auto r = parse(fe("  " + line + "\n"));
  EXPECT_FALSE(r.r.model) << line;
  return r.diags.empty() ? std::string() : r.diags.front().text;
}

TEST(TcpRequest, RulesKeptInOrderInFrontendAndListen) {
  for (const char* mode : {"tcp", "http"}) {
    auto r = parse(fe("  acl lan src 10.0.0.0/8\n"
                      "  tcp-request connection accept if { src 10.1.0.0/16 }\n"
                      "  tcp-request connection reject if lan\n"
                      "  tcp-request content reject unless { dst_port 1 }\n"
                      "  tcp-request inspect-delay 5s\n",
                      mode));
    ASSERT_TRUE(r.r.model) << r.all();
    EXPECT_TRUE(r.diags.empty()) << r.all();
    const auto& f = proxy(r, "f");
    ASSERT_EQ(f.tcp_request_connection.size(), 2u);
    EXPECT_FALSE(f.tcp_request_connection[0].rule.reject());
    EXPECT_TRUE(f.tcp_request_connection[1].rule.reject());
    EXPECT_EQ(f.tcp_request_connection[1].loc.line, 9);
    ASSERT_EQ(f.tcp_request_content.size(), 1u);
    EXPECT_TRUE(f.tcp_request_content[0].rule.reject());
    EXPECT_TRUE(f.tcp_request_content[0].rule.cond.unless_);
    EXPECT_EQ(f.tcp_inspect_delay_ms, 5000u);
  }
  auto r = parse("listen l\n  bind :1\n  timeout client 1s\n  tcp-request connection reject\n"
                 "  tcp-request content accept\n  server s 127.0.0.1:80\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(proxy(r, "l").tcp_request_connection.size(), 1u);
  EXPECT_EQ(proxy(r, "l").tcp_request_content.size(), 1u);
}

TEST(TcpRequest, ConnectionRuleAfterContentRuleWarns) {
  auto r = parse(fe("  tcp-request content reject if { src 1.2.3.4 }\n"
                    "  tcp-request connection reject if { src 1.2.3.5 }\n"));
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.has("parsing [f.cfg:8] : a 'tcp-request connection' rule placed after a 'tcp-request content' "
                    "rule will still be processed before."))
      << r.all();
}

// Loads fe(body, mode), which must fail.
Run refused(const std::string& body, const std::string& mode = "tcp") {
  auto r = parse(fe(body, mode));
  EXPECT_FALSE(r.r.model) << body;
  return r;
}

// HAProxy accepts any fetch in a tcp-request rule and warns, at the rule's line, about an ACL
// that cannot match there.
TEST(TcpRequest, FetchesTheStageLacksWarn) {
  auto r = parse(fe("  tcp-request connection reject if { path /x }\n", "http"));
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.has("parsing [f.cfg:7] : anonymous acl will never match in 'tcp-request "
                    "connection' because it uses keyword 'path' which is incompatible with "
                    "'frontend tcp-request connection rule'")) << r.all();
  r = parse(fe("  acl h status 200\n  tcp-request content accept if h\n", "http"));
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.has("parsing [f.cfg:8] : acl 'h' will never match in 'tcp-request content' "
                    "because it only involves keywords that are incompatible with 'frontend "
                    "tcp-request content rule'")) << r.all();
  // A later `acl` line joins the ACL that the rule already uses: judged after parsing.
  r = parse(fe("  acl a src 10.0.0.0/8\n  tcp-request connection reject if a\n  acl a path /x\n", "http"));
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.has("parsing [f.cfg:8] : acl 'a' involves keyword 'path' which is incompatible "
                    "with 'frontend tcp-request connection rule'")) << r.all();
  // Content rules of an HTTP frontend see the parsed request.
  r = parse(fe("  tcp-request content accept if { hdr(host) -i a }\n", "http"));
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.r.warnings, 0) << r.all();
  // Bad patterns fail with file:line; req_ssl_ver takes dotted versions.
  r = parse(fe("  tcp-request content reject if { req_ssl_ver 3.1 3.0:3.3 }\n"));
  ASSERT_TRUE(r.r.model) << r.all();
  r = parse(fe("  tcp-request content reject if { req_ssl_ver x }\n"));
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:7] : error detected while parsing a 'tcp-request content "
                    "reject' condition : 'x' is not a dotted number.")) << r.all();
}

// req.len, req.ssl_sni and req.ssl_hello_type read the client's buffered bytes: content rules
// and use_backend of TCP frontends only.
TEST(TcpRequest, PayloadFetchesInTcpContentRulesAndUseBackend) {
  auto r = parse(fe("  tcp-request inspect-delay 5s\n"
                    "  tcp-request content reject if { req.len gt 100 }\n"
                    "  tcp-request content accept if { req_ssl_hello_type 1 }\n"
                    "  use_backend b if { req_ssl_sni -i a.example.com }\n"
                    "  use_backend b if { req.ssl_sni -m end .b.example.com } || { req_len 0 }\n"));
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.diags.empty()) << r.all();
  // Without inspect-delay HAProxy 2.6 says nothing for accept/reject rules (it warns for
  // track-sc and capture only), and neither does sluice: the rules judge what has arrived.
  r = parse(fe("  tcp-request content accept if { req.ssl_hello_type 1 }\n"));
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.diags.empty()) << r.all();
}

TEST(TcpRequest, PayloadFetchesRefusedElsewhere) {
  auto r = parse(fe("  tcp-request connection reject if { req_ssl_sni -i a }\n"));
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.has("parsing [f.cfg:7] : anonymous acl will never match in 'tcp-request "
                    "connection' because it uses keyword 'req_ssl_sni' which is incompatible with "
                    "'frontend tcp-request connection rule'")) << r.all();
  // HTTP mode parses requests itself: HAProxy ignores these fetches there with a warning ("L6
  // sample fetches ignored on HTTP proxies"), sluice refuses them.
  r = refused("  tcp-request inspect-delay 1s\n  tcp-request content reject if { req_ssl_sni -i a }\n",
              "http");
  EXPECT_TRUE(r.has("parsing [f.cfg:8] : fetch 'req_ssl_sni' is only available in 'tcp-request "
                    "content' rules and 'use_backend' of TCP mode frontends in sluice (here in "
                    "'tcp-request content' in HTTP mode of frontend 'f').")) << r.all();
  r = refused("  acl a req.ssl_sni a\n  use_backend b if a\n", "http");
  EXPECT_TRUE(r.has("parsing [f.cfg:8] : acl 'a' uses fetch 'req.ssl_sni', which is only available "
                    "in 'tcp-request content' rules and 'use_backend' of TCP mode frontends in "
                    "sluice (here in 'use_backend' in HTTP mode of frontend 'f').")) << r.all();
  // The mode may come after the rule (or from defaults): judged once the section is complete.
  r = parse("frontend f\n  tcp-request content reject if { req.len gt 1 }\n  mode http\n"
            "  bind :1\n  timeout client 1s\n");
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.contains("parsing [f.cfg:2] : fetch 'req.len' is only available")) << r.all();
  r = refused("  http-request deny if { req.len gt 1 }\n", "http");
  EXPECT_TRUE(r.has("parsing [f.cfg:7] : fetch 'req.len' is only available in 'tcp-request "
                    "content' rules and 'use_backend' of TCP mode frontends in sluice (here in an "
                    "'http-request' rule of frontend 'f').")) << r.all();
  // A named ACL that an `acl` line after the rule extends: judged once the section is complete,
  // at the section's line.
  r = refused("  acl x src 1.2.3.4\n  http-response deny if x\n  acl x req.len gt 1\n", "http");
  EXPECT_TRUE(r.contains("parsing [f.cfg:5] : acl 'x' uses fetch 'req.len', which is only "
                         "available")) << r.all();
}

TEST(TcpRequest, UnsupportedActionsAndStages) {
  const auto err = first_error;
  // expect-proxy: HAProxy 3.5's messages.
  EXPECT_EQ(err("tcp-request connection expect-proxy layer5"),
            "parsing [f.cfg:7] : 'tcp-request connection expect-proxy' only supports 'layer4' in "
            "frontend 'f' (got 'layer5')");
  EXPECT_EQ(err("tcp-request session expect-proxy layer4"),
            "parsing [f.cfg:7] : 'expect-proxy layer4' is not allowed in 'tcp-request session' "
            "rules in frontend 'f'");
  EXPECT_EQ(err("tcp-request content set-bc-mark 1"),
            "parsing [f.cfg:7] : 'tcp-request content set-bc-mark' is not supported by sluice yet "
            "(it needs socket marks).");
  EXPECT_EQ(err("tcp-request connection drop"),
            "parsing [f.cfg:7] : 'tcp-request connection' expects 'accept', 'reject', 'capture', "
            "'expect-proxy', 'expect-netscaler-cip', 'track-sc0' ... 'track-sc2', 'sc-add-gpc(*)', "
            "'sc-inc-gpc(*)', 'sc-inc-gpc0(*)', 'sc-inc-gpc1(*)', 'sc-set-gpt(*)', 'sc-set-gpt0(*)', "
            "'set-var-fmt(*)', 'set-var(*)', 'unset-var(*)', 'do-log', 'set-dst', 'set-dst-port', "
            "'set-fc-mark', 'set-fc-tos', 'set-mark', 'set-src', 'set-src-port', 'set-tos', "
            "'silent-drop' in frontend 'f' (got 'drop').");
  EXPECT_EQ(err("tcp-request connection reject foo"),
            "parsing [f.cfg:7] : 'tcp-request connection reject' only accepts 'if' or 'unless', in "
            "frontend 'f' (got 'foo')");
  EXPECT_EQ(err("tcp-request session capture req.len len 10"),
            "parsing [f.cfg:7] : 'capture req.len' is not allowed in 'tcp-request session' rules in "
            "frontend 'f'");
  EXPECT_EQ(err("tcp-request foo reject"),
            "parsing [f.cfg:7] : 'tcp-request' expects 'inspect-delay', 'connection', or 'content' "
            "in frontend 'f' (got 'foo')");
  EXPECT_EQ(err("tcp-request"), "parsing [f.cfg:7] : missing argument for 'tcp-request' in frontend 'f'");
  EXPECT_EQ(err("tcp-response content accept"),
            "parsing [f.cfg:7] : tcp-response content is only allowed in 'backend' sections or "
            "'defaults' section with a name");
  EXPECT_EQ(err("tcp-response inspect-delay 1s"),
            "parsing [f.cfg:7] : tcp-response inspect-delay is only allowed in 'backend' sections "
            "or 'defaults' section with a name");
}

TEST(TcpRequest, SessionAndResponseRulesKept) {
  auto r = parse(fe("  tcp-request session set-var(sess.a) src\n"
                    "  tcp-request connection accept\n") +
                 "  tcp-response inspect-delay 2s\n  tcp-response content close if { res.len gt 1 }\n"
                 "  tcp-request content set-src ipv4(1.2.3.4)\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.has("parsing [f.cfg:8] : a 'tcp-request connection' rule placed after a "
                    "'tcp-request session' rule will still be processed before."))
      << r.all();
  EXPECT_EQ(proxy(r, "f").tcp_request_session.size(), 1u);
  const auto& b = proxy(r, "b");
  ASSERT_EQ(b.tcp_response_content.size(), 1u);
  EXPECT_EQ(b.tcp_response_content[0].rule.action, rules::TcpRule::Action::kClose);
  EXPECT_EQ(b.tcp_response_inspect_delay_ms, 2000u);
  EXPECT_EQ(b.tcp_request_content.size(), 1u);
  // A session rule reading the client's bytes can never match (HAProxy's warning).
  r = parse(fe("  tcp-request session reject if { req.len gt 0 }\n"));
  EXPECT_TRUE(r.has("parsing [f.cfg:7] : anonymous acl will never match in 'tcp-request session' "
                    "because it uses keyword 'req.len' which is incompatible with 'frontend "
                    "tcp-request session rule'"))
      << r.all();
  // HTTP mode runs session rules too (once per connection), and response rules on response
  // heads, without the raw response's fetches.
  r = parse(fe("  tcp-request session set-var(sess.a) src\n  tcp-request session set-dst ipv4(1.2.3.4)\n"
               "  tcp-request session silent-drop\n", "http"));
  EXPECT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(proxy(r, "f").tcp_request_session.size(), 3u);
  r = parse("backend b\n  mode http\n  tcp-response content accept\n  server s 127.0.0.1:80\n");
  EXPECT_TRUE(r.r.model) << r.all();
  r = parse("backend b\n  mode http\n  tcp-response content reject if { res.len gt 0 }\n"
            "  server s 127.0.0.1:80\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:3] : fetch 'res.len' reads the raw response, which HTTP "
                    "mode does not keep: not supported by sluice in 'tcp-response content' of "
                    "HTTP mode backend 'b'."))
      << r.all();
}

TEST(TcpRequest, InspectDelayErrors) {
  const auto err = first_error;
  EXPECT_EQ(err("tcp-request inspect-delay"),
            "parsing [f.cfg:7] : 'tcp-request inspect-delay' expects a positive delay in "
            "milliseconds, in frontend 'f'");
  EXPECT_EQ(err("tcp-request inspect-delay 2x"),
            "parsing [f.cfg:7] : 'tcp-request inspect-delay' expects a positive delay in "
            "milliseconds, in frontend 'f' (unexpected character 'x')");
  EXPECT_NE(err("tcp-request inspect-delay 2s 3").find("parsing [f.cfg:7] : "), std::string::npos);
}

TEST(TcpRequest, BackendAndDefaults) {
  auto r = parse(fe("") + "  tcp-request connection reject\n");
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:12] : tcp-request connection is not allowed because backend "
                    "b is not a frontend"))
      << r.all();
  r = parse(fe("") + "  tcp-request session reject\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:12] : tcp-request session is not allowed because backend "
                    "b is not a frontend"))
      << r.all();
  r = parse(fe("") + "  tcp-request content reject if { src 1.2.3.4 }\n  tcp-request inspect-delay 1s\n");
  EXPECT_TRUE(r.r.model) << r.all();
  // Waiting for bytes in a backend is not there yet.
  r = parse(fe("") + "  tcp-request content reject if { req.len lt 4 }\n  tcp-request inspect-delay 1s\n");
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.contains("parsing [f.cfg:12] : waiting for the client's bytes")) << r.all();
  r = parse("defaults\n  tcp-request connection reject\n" + fe(""));
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : tcp-request connection is not allowed in anonymous "
                    "'defaults' sections"))
      << r.all();
  r = parse("defaults\n  tcp-response content accept\n" + fe(""));
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : tcp-response content is only allowed in 'backend' "
                    "sections or 'defaults' section with a name"))
      << r.all();
}

// A named defaults section's rules run before the proxy's own; HAProxy's limits on who may
// inherit them, with its messages (no space before the colon in these).
TEST(TcpRequest, RulesInheritedFromNamedDefaults) {
  const std::string t = "  mode tcp\n  timeout client 1s\n  timeout server 1s\n  timeout connect 1s\n";
  auto r = parse("defaults d\n" + t + "  tcp-request content reject if { src 1.2.3.4 }\n"
                 "  tcp-request inspect-delay 1s\n"
                 "frontend f from d\n  bind :1\n  tcp-request connection accept\n"
                 "  tcp-request content accept\n  default_backend b\n"
                 "defaults e\n" + t + "backend b from e\n  server s 127.0.0.1:80\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.diags.empty()) << r.all();   // an inherited content rule does not warn
  const auto& f = proxy(r, "f");
  ASSERT_EQ(f.tcp_request_content.size(), 2u);
  EXPECT_TRUE(f.tcp_request_content[0].inherited);
  EXPECT_TRUE(f.tcp_request_content[0].rule.reject());
  EXPECT_FALSE(f.tcp_request_content[1].inherited);
  EXPECT_EQ(f.tcp_inspect_delay_ms, 1000u);

  auto err = [&](const std::string& rule, const std::string& users) {
    auto x = parse("defaults d\n" + t + "  " + rule + "\n" + users);
    return x.all();
  };
  const std::string be = "backend b from d\n  server s 127.0.0.1:80\n";
  const std::string fe_ = "frontend f from d\n  bind :1\n  default_backend b2\nbackend b2\n  server s 127.0.0.1:80\n";
  EXPECT_NE(err("tcp-request session accept", be).find(
                "parsing [f.cfg:7]: a backend section cannot inherit from a defaults section "
                "defining 'tcp-request connection' or 'tcp-request session' rules (defaults "
                "section at f.cfg:1)."),
            std::string::npos);
  EXPECT_NE(err("tcp-response content accept", fe_).find(
                "parsing [f.cfg:7]: a frontend section cannot inherit from a defaults section "
                "defining 'tcp-response content' rules (defaults section at f.cfg:1)."),
            std::string::npos);
  EXPECT_NE(err("tcp-request content accept", "listen l from d\n  bind :1\n  server s 127.0.0.1:80\n")
                .find("parsing [f.cfg:7]: a listen section cannot inherit from a defaults section "
                      "defining TCP/HTTP rules."),
            std::string::npos);
  EXPECT_NE(err("tcp-request content accept",
                "frontend f from d\n  bind :1\n  default_backend b\n" + be)
                .find("parsing [f.cfg:10]: frontends and backends cannot inherit from the same "
                      "defaults section if it defines TCP/HTTP rules (defaults section at f.cfg:1)."),
            std::string::npos);
  EXPECT_NE(err("tcp-request content accept", "defaults d2 from d\n" + be)
                .find("parsing [f.cfg:7]: a defaults section cannot inherit from a defaults "
                      "section defining TCP/HTTP rules (defaults section at f.cfg:1)."),
            std::string::npos);
}

// tcp-request content capture declares the next request capture slot, after the capture
// lines before it; HTTP mode runs it (and the variable actions) for each request, but not on
// the client's raw bytes; a backend cannot inherit captures (HAProxy 3.5's messages).
TEST(TcpRequest, ContentCaptureDeclaresSlots) {
  for (const char* mode : {"tcp", "http"}) {
    auto r = parse(fe("  declare capture request len 4\n"
                      "  tcp-request content capture src len 20\n"
                      "  tcp-request content set-var(txn.a) src\n"
                      "  declare capture request len 5\n",
                      mode));
    ASSERT_TRUE(r.r.model) << mode << ": " << r.all();
    const auto& f = proxy(r, "f");
    ASSERT_EQ(f.capture_request.size(), 3u);
    EXPECT_EQ(f.capture_request[1].len, 20);
    ASSERT_EQ(f.tcp_request_content.size(), 2u);
    EXPECT_EQ(f.tcp_request_content[0].rule.capture_id, 1);
  }
  auto r = parse(fe("  tcp-request content capture req.len len 5\n", "http"));
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:7] : fetch 'req.len' is only available in 'tcp-request "
                    "content' rules and 'use_backend' of TCP mode frontends in sluice (here in "
                    "'tcp-request content' in HTTP mode of frontend 'f').")) << r.all();
  r = parse(fe("  tcp-request content silent-drop\n  tcp-request content set-src-port int(1)\n",
               "http"));
  EXPECT_TRUE(r.r.model) << r.all();
  r = parse("backend b\n  tcp-request content capture src len 3\n  server s 127.0.0.1:80\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : 'tcp-request content capture' : proxy 'b' has no "
                    "frontend capability")) << r.all();
  const std::string d = "defaults d\n  mode tcp\n  timeout client 1s\n  timeout server 1s\n"
                        "  timeout connect 1s\n  tcp-request content capture src len 3\n";
  r = parse(d + "frontend f from d\n  bind :1\n  default_backend b\nbackend b from d\n"
                "  server s 127.0.0.1:80\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:10]: backend or defaults sections cannot inherit from a "
                    "defaults section defining captures (defaults section at f.cfg:1).")) << r.all();
  // (A backend written after the defaults section would inherit it implicitly.)
  r = parse("backend b\n  timeout connect 1s\n  timeout server 1s\n  server s 127.0.0.1:80\n" + d +
            "frontend f from d\n  bind :1\n  default_backend b\n");
  ASSERT_TRUE(r.r.model) << r.all();
  ASSERT_EQ(proxy(r, "f").capture_request.size(), 1u);
  EXPECT_EQ(proxy(r, "f").tcp_request_content[0].rule.capture_id, 0);
}

}  // namespace
}  // namespace sluice::config

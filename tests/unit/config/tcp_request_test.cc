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
    EXPECT_FALSE(f.tcp_request_connection[0].rule.reject);
    EXPECT_TRUE(f.tcp_request_connection[1].rule.reject);
    EXPECT_EQ(f.tcp_request_connection[1].loc.line, 9);
    ASSERT_EQ(f.tcp_request_content.size(), 1u);
    EXPECT_TRUE(f.tcp_request_content[0].rule.reject);
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
  EXPECT_TRUE(r.has("parsing [f.cfg:8] : a 'tcp-request' rule placed after a 'tcp-request content' "
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
  EXPECT_EQ(err("tcp-request connection expect-proxy layer4"),
            "parsing [f.cfg:7] : 'tcp-request connection expect-proxy' is not supported by sluice yet.");
  EXPECT_EQ(err("tcp-request connection silent-drop if { src 1.2.3.4 }"),
            "parsing [f.cfg:7] : 'tcp-request connection silent-drop' is not supported by sluice yet.");
  EXPECT_EQ(err("tcp-request connection track-sc0 src"),
            "parsing [f.cfg:7] : 'tcp-request connection track-sc0' is not supported by sluice yet.");
  EXPECT_EQ(err("tcp-request content set-var(sess.x) src"),
            "parsing [f.cfg:7] : 'tcp-request content set-var(sess.x)' is not supported by sluice yet.");
  EXPECT_EQ(err("tcp-request content do-resolve(txn.ip,dns) src"),
            "parsing [f.cfg:7] : 'tcp-request content do-resolve(txn.ip,dns)' is not supported by sluice yet.");
  EXPECT_EQ(err("tcp-request content set-src src"),
            "parsing [f.cfg:7] : 'tcp-request content set-src' is not supported by sluice yet.");
  EXPECT_EQ(err("tcp-request content lua.hello"),
            "parsing [f.cfg:7] : 'tcp-request content lua.hello' is not supported by sluice yet.");
  EXPECT_EQ(err("tcp-request content capture src len 10"),
            "parsing [f.cfg:7] : 'tcp-request content capture' is not supported by sluice yet.");
  EXPECT_EQ(err("tcp-request connection drop"),
            "parsing [f.cfg:7] : 'tcp-request connection' expects 'accept' or 'reject' (the actions "
            "sluice supports) but got 'drop'.");
  EXPECT_EQ(err("tcp-request connection reject foo"),
            "parsing [f.cfg:7] : 'tcp-request connection reject' only accepts 'if' or 'unless' (got 'foo').");
  EXPECT_EQ(err("tcp-request session reject"),
            "parsing [f.cfg:7] : 'tcp-request session' is not supported by sluice yet.");
  EXPECT_EQ(err("tcp-request foo reject"),
            "parsing [f.cfg:7] : 'tcp-request' expects 'inspect-delay', 'connection', or 'content' "
            "in frontend 'f' (got 'foo')");
  EXPECT_EQ(err("tcp-request"), "parsing [f.cfg:7] : missing argument for 'tcp-request' in frontend 'f'");
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
                    "'b' is not a frontend"))
      << r.all();
  r = parse(fe("") + "  tcp-request content reject if { src 1.2.3.4 }\n");
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:12] : 'tcp-request content' in a backend is not supported by "
                    "sluice yet."))
      << r.all();
  r = parse(fe("") + "  tcp-request inspect-delay 1s\n");
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:12] : 'tcp-request inspect-delay' in a backend is not "
                    "supported by sluice yet."))
      << r.all();
  r = parse("defaults\n  tcp-request connection reject\n" + fe(""));
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : tcp-request connection is not allowed in anonymous "
                    "'defaults' sections"))
      << r.all();
  r = parse("defaults d\n  tcp-request inspect-delay 1s\n" + fe(""));
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : 'tcp-request inspect-delay' in a 'defaults' section is "
                    "not supported by sluice yet."))
      << r.all();
}

}  // namespace
}  // namespace sluice::config

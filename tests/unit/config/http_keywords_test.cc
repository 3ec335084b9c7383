// HTTP-mode keywords: mode http, connection-mode options, forwardfor, httplog, timeouts,
// http-reuse, acl, http-request/response, use_backend, errorfile, and the TCP-mode warnings.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "config/loader.h"
#include "parse_run.h"

namespace sluice::config {
namespace {

using testing::parse;
using testing::proxy;
using testing::Run;

// Frontend f (http) on :1 with timeouts, then `body` lines in it, then backend b (mode `be_mode`).
std::string fe(const std::string& body, const std::string& be_mode = "http") {
  return "defaults\n  timeout client 1s\n  timeout connect 1s\n  timeout server 1s\n"
         "frontend f\n  mode http\n  bind :1\n" + body +
         "backend b\n  mode " + be_mode + "\n  server s 127.0.0.1:80\n";
}

TEST(HttpMode, AcceptedEverywhereAndInherited) {
  auto r = parse("defaults\n  mode http\nfrontend f\n  bind :1\n  default_backend b\nbackend b\nlisten l\n  bind :2\n"
                 "  mode tcp\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(proxy(r, "f").mode, Mode::kHttp);
  EXPECT_EQ(proxy(r, "b").mode, Mode::kHttp);
  EXPECT_EQ(proxy(r, "l").mode, Mode::kTcp);
}

TEST(HttpMode, FrontendAndBackendModesMustAgree) {
  auto r = parse(fe("  default_backend b\n", "tcp"));
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.has("http frontend 'f' (f.cfg:5) tries to use incompatible tcp backend 'b' (f.cfg:9) as its "
                    "default backend (see 'mode')."))
      << r.all();
  r = parse(fe("  use_backend b if { path_beg /x }\n", "tcp"));
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.has("http frontend 'f' (f.cfg:5) tries to use incompatible tcp backend 'b' (f.cfg:9) in a "
                    "'use_backend' rule (see 'mode')."))
      << r.all();
  // A tcp frontend may use an http backend.
  r = parse("frontend f\n  bind :1\n  timeout client 1s\n  default_backend b\n  use_backend b\n"
            "backend b\n  mode http\n");
  EXPECT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(parse(fe("  default_backend b\n")).r.model);
}

TEST(UseBackend, ResolvedInOrder) {
  auto r = parse(fe("  acl api path_beg /api\n  use_backend b if api\n  use_backend c unless api || { src 10.0.0.0/8 }\n"
                    "  use_backend b\n") + "backend c\n  mode http\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& f = proxy(r, "f");
  ASSERT_EQ(f.use_backends.size(), 3u);
  EXPECT_EQ(f.use_backends[0].name, "b");
  EXPECT_EQ(f.use_backends[0].loc.line, 9);
  EXPECT_EQ(r.r.model->proxies[static_cast<std::size_t>(f.use_backends[0].backend_index)].name, "b");
  EXPECT_EQ(r.r.model->proxies[static_cast<std::size_t>(f.use_backends[1].backend_index)].name, "c");
  EXPECT_FALSE(f.use_backends[0].cond.empty());
  EXPECT_TRUE(f.use_backends[1].cond.unless_);
  EXPECT_TRUE(f.use_backends[2].cond.empty());
}

TEST(UseBackend, Errors) {
  EXPECT_TRUE(parse(fe("  use_backend nope\n")).has("Proxy 'f': unable to find required use_backend: 'nope'."));
  EXPECT_TRUE(parse(fe("  use_backend f\n")).has("Proxy 'f': loop detected for use_backend: 'f'."));
  auto r = parse(fe("  use_backend g\n") + "frontend g\n  mode http\n  bind :2\n");
  EXPECT_TRUE(r.has("Proxy 'f': unable to find required use_backend: 'g'.")) << r.all();
  EXPECT_TRUE(parse(fe("  use_backend\n")).has("parsing [f.cfg:8] : 'use_backend' expects a backend name."));
  EXPECT_TRUE(parse(fe("  use_backend b when x\n")).has(
      "parsing [f.cfg:8] : unexpected keyword 'when' after switching rule, only 'if' and 'unless' are allowed."));
  EXPECT_TRUE(parse(fe("  use_backend b if nope\n")).has(
      "parsing [f.cfg:8] : error detected while parsing switching rule : no such ACL : 'nope'."));
  EXPECT_TRUE(parse(fe("  use_backend b if\n")).has(
      "parsing [f.cfg:8] : error detected while parsing switching rule : missing condition after 'if'."));
  EXPECT_TRUE(parse("defaults\n  use_backend b\n").has("parsing [f.cfg:2] : 'use_backend' not allowed in 'defaults' section."));
  r = parse("backend x\n  use_backend b\nbackend b\n");
  EXPECT_TRUE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : 'use_backend' ignored because backend 'x' has no frontend capability."));
  r = parse(fe("  use_backend b if { status 500 }\n"));
  EXPECT_TRUE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:8] : anonymous acl will never match because it uses keyword "
                    "'status' which is incompatible with 'frontend use-backend rule'")) << r.all();
}

TEST(HttpOptions, ConnectionModeLastWins) {
  auto r = parse("defaults\n  option httpclose\nbackend a\nbackend b\n  option http-server-close\n"
                 "backend c\n  option http-server-close\n  option http-keep-alive\n"
                 "backend d\n  no option httpclose\nbackend e\n  no option http-server-close\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(proxy(r, "a").http_conn_mode, HttpConnMode::kClose);
  EXPECT_TRUE(proxy(r, "a").http_conn_mode_set);
  EXPECT_EQ(proxy(r, "b").http_conn_mode, HttpConnMode::kServerClose);
  EXPECT_EQ(proxy(r, "c").http_conn_mode, HttpConnMode::kKeepAlive);
  EXPECT_EQ(proxy(r, "d").http_conn_mode, HttpConnMode::kKeepAlive);
  // `no option X` only cancels X when it is the current mode.
  EXPECT_EQ(proxy(r, "e").http_conn_mode, HttpConnMode::kClose);
  auto plain = parse("backend a\n");
  EXPECT_FALSE(plain.r.model->proxies[0].http_conn_mode_set);
  EXPECT_EQ(plain.r.model->proxies[0].http_conn_mode, HttpConnMode::kKeepAlive);
  EXPECT_TRUE(parse("defaults\n  default option httpclose\n").has(
      "parsing [f.cfg:2] : negation/default is not supported for option 'httpclose'."));
  EXPECT_TRUE(parse("defaults\n  option httpclose x\n").contains("cannot handle unexpected argument 'x'"));
}

TEST(HttpOptions, ForwardFor) {
  auto r = parse(fe("  option forwardfor except 10.0.0.0/8 header X-Client if-none\n") +
                 "backend c\n  mode http\n  option forwardfor\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& ff = proxy(r, "f").forwardfor;
  EXPECT_TRUE(ff.enabled);
  EXPECT_TRUE(ff.has_except);
  EXPECT_EQ(ff.except.prefix, 8);
  EXPECT_EQ(ff.header, "X-Client");
  EXPECT_TRUE(ff.if_none);
  const auto& c = proxy(r, "c").forwardfor;
  EXPECT_TRUE(c.enabled);
  EXPECT_EQ(c.header, "x-forwarded-for");
  EXPECT_FALSE(c.has_except);
  EXPECT_FALSE(c.if_none);
  EXPECT_TRUE(parse("defaults\n  option forwardfor except\n").has(
      "parsing [f.cfg:2] : 'option forwardfor except' expects <address>[/mask] as argument."));
  EXPECT_TRUE(parse("defaults\n  option forwardfor except nope\n").contains("expects <address>[/mask]"));
  EXPECT_TRUE(parse("defaults\n  option forwardfor header\n").has(
      "parsing [f.cfg:2] : 'option forwardfor header' expects <header_name> as argument."));
  EXPECT_TRUE(parse("defaults\n  option forwardfor always\n").has(
      "parsing [f.cfg:2] : 'option forwardfor' only supports optional values: 'except', 'header' and 'if-none'."));
  EXPECT_TRUE(parse("defaults\n  no option forwardfor\n").has(
      "parsing [f.cfg:2] : negation/default is not supported for option 'forwardfor'."));
  // Inherited from defaults.
  r = parse("defaults\n  mode http\n  option forwardfor header X-Real-IP\nbackend b\n");
  EXPECT_EQ(r.r.model->proxies[0].forwardfor.header, "X-Real-IP");
}

TEST(HttpOptions, HttpLog) {
  auto r = parse("defaults\n  mode http\n  option httplog\nfrontend f\n  bind :1\n  timeout client 1s\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(proxy(r, "f").option_httplog);
  EXPECT_FALSE(proxy(r, "f").option_tcplog);
  // As HAProxy: a format with nowhere to send it warns, and nothing is logged.
  EXPECT_EQ(r.r.warnings, 1) << r.all();
  EXPECT_TRUE(r.has("log format ignored for frontend 'f' since it has no log address.")) << r.all();
  EXPECT_FALSE(proxy(r, "f").log_fmt);
  r = parse("defaults\n  mode http\n  option httplog clf\nfrontend f\n  bind :1\n  log stdout local0\n  timeout client 1s\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(proxy(r, "f").log_format_kind, config::ProxyConfig::LogFormatKind::kClfHttpLog);
  ASSERT_TRUE(proxy(r, "f").log_fmt);
  EXPECT_EQ(proxy(r, "f").log_fmt->text(), log::kClfHttpLogFormat);
  EXPECT_TRUE(parse("defaults\n  option httplog x\n").has("parsing [f.cfg:2] : keyword 'httplog' only supports option 'clf'."));
  EXPECT_TRUE(parse("defaults\n  no option httplog\n").has("parsing [f.cfg:2] : negation/default is not supported for option 'httplog'."));
  r = parse("backend b\n  option httplog\n");
  EXPECT_TRUE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : backend 'b' : 'option httplog' directive is ignored in backends."));
  r = parse("defaults\n  option tcplog\n  option httplog\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:3]: 'option httplog' overrides previous 'option tcplog' in 'defaults' section."));
  r = parse("defaults\n  option httplog\n  option tcplog\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:3]: 'option tcplog' overrides previous 'option httplog' in 'defaults' section."));
  // TCP mode: warning with the option's location, falls back to tcplog.
  r = parse("defaults\n  option httplog\nfrontend f\n  bind :1\n  timeout client 1s\nbackend b\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : 'option httplog' not usable with frontend 'f' (needs 'mode http'). "
                    "Falling back to 'option tcplog'."))
      << r.all();
  EXPECT_FALSE(proxy(r, "f").option_httplog);
  EXPECT_TRUE(proxy(r, "f").option_tcplog);
  EXPECT_FALSE(r.contains("backend 'b' (needs"));
}

TEST(HttpOptions, AcceptUnsafeViolations) {
  auto r = parse(fe("  option accept-unsafe-violations-in-http-request\n"));
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(proxy(r, "f").accept_unsafe_requests);
  r = parse(fe("  option accept-invalid-http-request\n"));
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(proxy(r, "f").accept_unsafe_requests);
  EXPECT_TRUE(r.contains("option 'accept-invalid-http-request' is deprecated"));
  r = parse("defaults\n  option accept-unsafe-violations-in-http-request\nfrontend f\n  mode http\n  bind :1\n"
            "  timeout client 1s\n  no option accept-unsafe-violations-in-http-request\n");
  EXPECT_FALSE(proxy(r, "f").accept_unsafe_requests);
  // A frontend option in a backend: HAProxy 3.5 warns and then fails (table-driven options).
  r = parse("backend b\n  option accept-unsafe-violations-in-http-request\n");
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : 'option accept-unsafe-violations-in-http-request' ignored because "
                    "backend 'b' has no frontend capability."));
  r = parse("frontend f\n  bind :1\n  timeout client 1s\n  option accept-unsafe-violations-in-http-request\n");
  EXPECT_TRUE(r.has("'option accept-unsafe-violations-in-http-request' ignored for frontend 'f' as it requires HTTP mode."));
  EXPECT_FALSE(proxy(r, "f").accept_unsafe_requests);
}

TEST(HttpTimeouts, ParsedAndInherited) {
  auto r = parse("defaults\n  timeout http-request 5s\n  timeout http-keep-alive 1s\nfrontend f\n  bind :1\n"
                 "  timeout client 1s\n  timeout http-keep-alive 2s\nbackend b\n  timeout http-request 3s\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(proxy(r, "f").timeouts.http_request, 5000u);
  EXPECT_EQ(proxy(r, "f").timeouts.http_keep_alive, 2000u);
  // The HTTP timeouts are the client side's: a backend's own line warns and is not kept.
  EXPECT_TRUE(r.has("parsing [f.cfg:9] : 'timeout http-request' will be ignored because backend 'b' "
                    "has no frontend capability"));
  EXPECT_EQ(proxy(r, "b").timeouts.http_request, 5000u);
  EXPECT_TRUE(parse("defaults\n  timeout http-request\n").has(
      "parsing [f.cfg:2] : 'timeout http-request' expects an integer value (in milliseconds)"));
  EXPECT_TRUE(parse("defaults\n  timeout http-keep-alive 1x\n").has(
      "parsing [f.cfg:2] : unexpected character 'x' in 'timeout http-keep-alive'"));
}

TEST(HttpReuse, Values) {
  auto r = parse("defaults\n  http-reuse always\nbackend a\nbackend b\n  http-reuse never\nlisten c\n  http-reuse aggressive\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(proxy(r, "a").http_reuse, HttpReuse::kAlways);
  EXPECT_EQ(proxy(r, "b").http_reuse, HttpReuse::kNever);
  EXPECT_EQ(proxy(r, "c").http_reuse, HttpReuse::kAggressive);
  EXPECT_EQ(parse("backend b\n").r.model->proxies[0].http_reuse, HttpReuse::kSafe);
  EXPECT_TRUE(parse("backend b\n  http-reuse sometimes\n").has(
      "parsing [f.cfg:2] : 'http-reuse' only supports 'never', 'safe', 'aggressive', 'always'"));
  EXPECT_TRUE(parse("backend b\n  http-reuse safe x\n").contains("cannot handle unexpected argument 'x'"));
  r = parse("frontend f\n  bind :1\n  timeout client 1s\n  http-reuse never\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:4] : 'http-reuse' ignored because frontend 'f' has no backend capability."));
}

TEST(Acl, DeclaredInProxies) {
  auto r = parse(fe("  acl a path_beg /a\n  acl a path_beg /b\n") + "listen l\n  acl x always_true\n");
  ASSERT_TRUE(r.r.model) << r.all();
  auto a = proxy(r, "f").acls.find("a");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->terms.size(), 2u);
  EXPECT_TRUE(proxy(r, "l").acls.find("x"));
  EXPECT_FALSE(proxy(r, "b").acls.find("a"));
}

TEST(Acl, Errors) {
  auto r = parse(fe("  acl a foo bar\n"));
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:8] : error detected while parsing ACL 'a' : unknown fetch method 'foo' in "
                    "ACL expression 'foo'."))
      << r.all();
  EXPECT_TRUE(parse(fe("  acl a@ path /\n")).has("parsing [f.cfg:8] : character '@' is not permitted in acl name 'a@'."));
  EXPECT_TRUE(parse(fe("  acl a src -f /nonexistent/x.lst\n"))
                  .has("parsing [f.cfg:8] : error detected while parsing ACL 'a' : failed to open pattern "
                       "file </nonexistent/x.lst>."));
  EXPECT_TRUE(parse(fe("  acl a path_beg\n")).contains("no pattern to match against"));
  EXPECT_TRUE(parse("defaults\n  acl a path /\n").has("parsing [f.cfg:2] : 'acl' not allowed in anonymous 'defaults' section."));
  EXPECT_TRUE(parse("defaults d\n  acl a path /\n").has(
      "parsing [f.cfg:2] : 'acl' in a 'defaults' section is not supported by sluice yet."));
  // Several errors are reported (not an aborting error).
  r = parse(fe("  acl a foo\n  acl b bar\n"));
  EXPECT_TRUE(r.contains("'foo'"));
  EXPECT_TRUE(r.contains("'bar'"));
}

TEST(HttpRules, Parsed) {
  auto r = parse(fe("  acl api path_beg /api\n  http-request set-header X-A 1 if api\n  http-request deny if { src 10.0.0.0/8 }\n"
                    "  http-response del-header Server\n  http-request redirect scheme https code 301 unless api\n"));
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& f = proxy(r, "f");
  ASSERT_EQ(f.http_request_rules.size(), 3u);
  EXPECT_EQ(f.http_request_rules[0].action, rules::HttpRule::Action::kSetHeader);
  EXPECT_EQ(f.http_request_rules[2].action, rules::HttpRule::Action::kRedirect);
  EXPECT_EQ(f.http_request_rules[2].reply.status, 301);
  ASSERT_EQ(f.http_response_rules.size(), 1u);
  EXPECT_EQ(f.http_response_rules[0].side, rules::RuleSide::kResponse);
  EXPECT_EQ(r.r.warnings, 0) << r.all();
  // In a backend too.
  r = parse(fe("") + "  http-request set-header X-B 2\n  http-response set-header X-C 3\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(proxy(r, "b").http_request_rules.size(), 1u);
  EXPECT_EQ(proxy(r, "b").http_response_rules.size(), 1u);
}

TEST(HttpRules, ReturnFileRelativeToWorkingDirectory) {
  char dir[] = "/tmp/sluice_rulefileXXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/body.txt";
  {
    std::ofstream f(path);
    f << "hello";
  }
  auto r = parse(fe("  http-request return status 200 content-type text/plain file " + path + "\n"));
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(proxy(r, "f").http_request_rules[0].reply.body, "hello");
  std::remove(path.c_str());
  rmdir(dir);
}

TEST(HttpRules, ErrorsAbortWithLocation) {
  auto r = parse(fe("  http-request foo\n  http-request bar\n"));
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.contains("parsing [f.cfg:8] : 'http-request' expects 'add-header', 'allow', "));
  EXPECT_FALSE(r.contains("'bar'")) << "an invalid rule aborts the load: " << r.all();
  EXPECT_TRUE(parse(fe("  http-request set-header X\n")).has(
      "parsing [f.cfg:8] : error detected in frontend 'f' while parsing 'http-request set-header' rule : "
      "expects exactly 2 arguments."));
  EXPECT_TRUE(parse(fe("  http-response deny if nope\n")).has(
      "parsing [f.cfg:8] : error detected while parsing an 'http-response deny' condition : no such ACL : 'nope'."));
  EXPECT_TRUE(parse(fe("  http-request normalize-uri path-merge-slashes\n")).has(
      "parsing [f.cfg:8] : 'normalize-uri' action is experimental, must be allowed via a global "
      "'expose-experimental-directives'"));
  EXPECT_TRUE(parse("global\n  expose-experimental-directives\n" +
                    fe("  http-request normalize-uri path-strip-dotdot full\n")).r.model);
  EXPECT_TRUE(parse(fe("  http-request track-sc0 src\n")).has(
      "parsing [f.cfg:8] : 'http-request track-sc0' is not supported by sluice yet."));
  EXPECT_TRUE(parse(fe("  http-request set-var(txn.a) str(b)\n")).r.model);
  EXPECT_TRUE(parse(fe("  http-request set-var(txn.a)\n")).has(
      "parsing [f.cfg:8] : error detected in frontend 'f' while parsing 'http-request set-var(txn.a)' "
      "rule : missing fetch method.")) << parse(fe("  http-request set-var(txn.a)\n")).all();
  EXPECT_TRUE(parse(fe("  http-request allow foo\n")).has(
      "parsing [f.cfg:8] : 'http-request allow' expects either 'if' or 'unless' followed by a condition but found 'foo'."));
  EXPECT_TRUE(parse("defaults\n  http-request deny\n").has(
      "parsing [f.cfg:2] : 'http-request' not allowed in anonymous 'defaults' section."));
  EXPECT_TRUE(parse("defaults d\n  http-response deny\n").has(
      "parsing [f.cfg:2] : 'http-response' in a 'defaults' section is not supported by sluice yet."));
  // Empty arguments are fatal before the rule is even parsed (spec 8.11).
  EXPECT_FALSE(parse(fe("  http-request set-header X \"\"\n")).r.model);
}

TEST(HttpRules, Warnings) {
  auto r = parse(fe("  http-request deny\n  http-request set-header X 1\n"));
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.has("parsing [f.cfg:9] : previous 'http-request' action is final and has no condition "
                    "attached, further entries are NOOP."))
      << r.all();
  r = parse(fe("  http-request deny if { path / }\n  http-request set-header X 1\n"));
  EXPECT_EQ(r.r.warnings, 0) << r.all();
  r = parse(fe("  http-request return content-type text/plain\n"));
  EXPECT_TRUE(r.has("parsing [f.cfg:8] : content-type 'text/plain' ignored by the http reply when used with an empty payload."))
      << r.all();
  r = parse(fe("  http-request deny if { status 500 }\n"));
  EXPECT_TRUE(r.has("parsing [f.cfg:8] : anonymous acl will never match because it uses keyword "
                    "'status' which is incompatible with 'frontend http-request header rule'"))
      << r.all();
}

TEST(HttpRules, IgnoredInTcpMode) {
  auto r = parse("frontend f\n  bind :1\n  timeout client 1s\n  http-request deny\n  http-response deny\n"
                 "  option forwardfor\n  default_backend b\nbackend b\n  option forwardfor\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.has("'http-request' rules ignored for frontend 'f' as they require HTTP mode.")) << r.all();
  EXPECT_TRUE(r.has("'http-response' rules ignored for frontend 'f' as they require HTTP mode."));
  EXPECT_TRUE(r.has("'option forwardfor' ignored for frontend 'f' as it requires HTTP mode."));
  EXPECT_TRUE(r.has("'option forwardfor' ignored for backend 'b' as it requires HTTP mode."));
  EXPECT_TRUE(proxy(r, "f").http_request_rules.empty());
  EXPECT_TRUE(proxy(r, "f").http_response_rules.empty());
  EXPECT_FALSE(proxy(r, "f").forwardfor.enabled);
  // ACLs and use_backend work in TCP mode.
  r = parse("frontend f\n  bind :1\n  timeout client 1s\n  acl local src 127.0.0.1\n  use_backend b if local\nbackend b\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(proxy(r, "f").use_backends.size(), 1u);
}

class ErrorFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sluice_errfXXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir = tmpl;
  }
  void TearDown() override {
    for (const auto& f : files) std::remove(f.c_str());
    rmdir(dir.c_str());
  }
  std::string write(const std::string& name, const std::string& text) {
    std::string path = dir + "/" + name;
    std::ofstream f(path, std::ios::binary);
    f << text;
    files.push_back(path);
    return path;
  }
  std::string dir;
  std::vector<std::string> files;
};

TEST_F(ErrorFile, ReadAndInherited) {
  std::string ok = write("503.http", "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/html\r\n"
                                     "Content-Length: 4\r\n\r\ndown");
  std::string ok2 = write("503b.http", "HTTP/1.1 503 Busy\r\n\r\n");
  std::string empty = write("empty.http", "");
  std::string noclen = write("403.http", "HTTP/1.0 403 Forbidden\r\nContent-Type: text/plain\r\n\r\nno\n");
  auto r = parse("defaults\n  errorfile 503 " + ok + "\n  errorfile 403 " + noclen + "\nbackend a\nbackend b\n"
                 "  errorfile 503 " + ok2 + "\n  errorfile 408 " + empty + "\n  errorfile 503 " + ok + "\n  errorfile 503 " + ok2 + "\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& a = proxy(r, "a").errorfiles;
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].status, 503);
  EXPECT_EQ(a[0].response.substr(a[0].response.size() - 4), "down");
  EXPECT_EQ(a[0].loc.line, 2);
  const auto& b = proxy(r, "b").errorfiles;
  // Later lines override earlier ones (one entry per status).
  ASSERT_EQ(b.size(), 3u);
  int n503 = 0;
  for (const auto& e : b) {
    if (e.status == 503) {
      ++n503;
      EXPECT_EQ(e.response, "HTTP/1.1 503 Busy\r\n\r\n");
      EXPECT_EQ(e.loc.line, 9);
    }
    if (e.status == 408) {
      EXPECT_TRUE(e.response.empty());
    }
  }
  EXPECT_EQ(n503, 1);
}

TEST_F(ErrorFile, Errors) {
  std::string ok = write("ok.http", "HTTP/1.1 503 x\r\n\r\n");
  EXPECT_TRUE(parse("defaults\n  errorfile 599 " + ok + "\n").has("parsing [f.cfg:2] : status code '599' not handled."));
  EXPECT_TRUE(parse("defaults\n  errorfile abc " + ok + "\n").has("parsing [f.cfg:2] : status code 'abc' not handled."));
  EXPECT_TRUE(parse("defaults\n  errorfile 503\n").has(
      "parsing [f.cfg:2] : 'errorfile' expects <status_code> and <file> as arguments."));
  EXPECT_TRUE(parse("defaults\n  errorfile 503 " + ok + " extra\n").has(
      "parsing [f.cfg:2] : 'errorfile' expects <status_code> and <file> as arguments."));
  EXPECT_TRUE(parse("defaults\n  errorfile 503 " + dir + "/missing\n").has(
      "parsing [f.cfg:2] : error opening file '" + dir + "/missing'."));
  EXPECT_TRUE(parse("defaults\n  errorfile 503 " + dir + "\n").has("parsing [f.cfg:2] : error reading file '" + dir + "'."));
  std::string garbage = write("bad.http", "this is not http\n");
  auto r = parse("defaults\n  errorfile 503 " + garbage + "\n");
  EXPECT_TRUE(r.contains("parsing [f.cfg:2] : '" + garbage + "': unable to parse headers")) << r.all();
  std::string partial = write("partial.http", "HTTP/1.1 503 x\r\nContent-Type: a\r\n");
  EXPECT_TRUE(parse("defaults\n  errorfile 503 " + partial + "\n").contains("unable to parse headers (incomplete response head)"));
  std::string mismatch = write("cl.http", "HTTP/1.1 503 x\r\nContent-Length: 10\r\n\r\nabc");
  EXPECT_TRUE(parse("defaults\n  errorfile 503 " + mismatch + "\n").contains(
      "payload size does not match the announced content-length (3 != 10)."));
  std::string chunked = write("ch.http", "HTTP/1.1 503 x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
  EXPECT_TRUE(parse("defaults\n  errorfile 503 " + chunked + "\n").contains("chunk-encoded payload not supported."));
  std::string big = write("big.http", "HTTP/1.1 503 x\r\n\r\n" + std::string(15400, 'x'));
  EXPECT_TRUE(parse("defaults\n  errorfile 503 " + big + "\n").contains("is too large"));
}

// `stats ...`: any of uri, refresh, realm, auth and scope enables the page; defaults pass it
// on; HAProxy's messages for missing arguments.
// `line` written in frontend f (line 8 of fe()'s configuration) is refused with `msg`.
void bad(const std::string& line, const std::string& msg) {
  auto r = parse(fe("  " + line + "\n"));
  EXPECT_FALSE(r.r.model) << line;
  EXPECT_TRUE(r.has("parsing [f.cfg:8] : " + msg)) << r.all();
}

// `stats admin if|unless <cond>` and `stats http-request` rules: kept in order, they enable
// the page; refused in defaults and beside `stats auth|realm`, as in HAProxy.
TEST(StatsPage, AdminAndRules) {
  auto r = parse(fe("  stats admin if { src 10.0.0.0/8 }\n  stats admin unless TRUE\n"
                    "  stats http-request deny if { path /x }\n  stats http-request allow\n"));
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& st = r.r.model->proxies[0].stats;
  EXPECT_TRUE(st.enabled);
  EXPECT_EQ(st.admin.size(), 2u);
  ASSERT_EQ(st.http_request.size(), 2u);
  EXPECT_EQ(st.http_request[0].action, rules::HttpRule::Action::kDeny);
  EXPECT_EQ(st.http_request[1].action, rules::HttpRule::Action::kAllow);
  EXPECT_TRUE(parse("defaults\n  stats admin if TRUE\n")
                  .has("parsing [f.cfg:2] : 'stats admin' not allowed in 'defaults' section."));
  EXPECT_TRUE(parse("defaults\n  stats http-request deny\n")
                  .has("parsing [f.cfg:2] : 'stats' not allowed in 'defaults' section."));
  auto both = parse(fe("  stats auth a:b\n  stats http-request deny\n"));
  EXPECT_FALSE(both.r.model);
  EXPECT_TRUE(both.contains("proxy 'f': stats 'auth'/'realm' and 'http-request' can't be used at "
                            "the same time.")) << both.all();
}

TEST(StatsPage, KeywordsAndInheritance) {
  auto r = parse("defaults\n  mode http\n  timeout client 1s\n  stats uri /st\n"
                 "frontend f\n  bind :1\n  stats refresh 5s\n  stats auth a:b\n  stats auth c:d\n"
                 "  stats scope .\n  stats scope b\n  stats hide-version\n  stats show-legends\n"
                 "  stats show-node n1\n  stats show-desc some text\nbackend b\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const StatsPageConfig& f = proxy(r, "f").stats;
  EXPECT_TRUE(f.enabled);
  EXPECT_EQ(f.uri, "/st");
  EXPECT_EQ(f.refresh_s, 5u);
  EXPECT_EQ(f.auth, (std::vector<std::string>{"a:b", "c:d"}));
  EXPECT_EQ(f.scope, (std::vector<std::string>{".", "b"}));
  EXPECT_TRUE(f.hide_version && f.show_legends && f.show_node && f.show_desc);
  EXPECT_EQ(f.node, "n1");
  EXPECT_EQ(f.desc, "some text");
  // The backend inherits `stats uri` from defaults, so it serves the page too.
  EXPECT_TRUE(proxy(r, "b").stats.enabled);
  EXPECT_EQ(proxy(r, "b").stats.uri, "/st");
  // `stats enable` alone: HAProxy's default URI.
  r = parse(fe("  stats enable\n"));
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(proxy(r, "f").stats.uri, "/haproxy?stats");
  // hide-version alone does not enable it.
  r = parse(fe("  stats hide-version\n"));
  EXPECT_FALSE(proxy(r, "f").stats.enabled);
}

TEST(StatsPage, Errors) {
  bad("stats", "missing keyword in 'stats', expects 'uri', 'realm', 'auth', 'scope', 'enable', "
               "'refresh', 'hide-version', 'show-node', 'show-desc' or 'show-legends'.");
  bad("stats frob", "unknown stats parameter 'frob', expects 'uri', 'realm', 'auth', 'scope', "
                    "'enable', 'refresh', 'hide-version', 'show-node', 'show-desc' or 'show-legends'.");
  bad("stats uri", "'uri' needs an URI prefix.");
  bad("stats realm", "'realm' needs an realm name.");
  bad("stats refresh", "'refresh' needs a refresh delay.");
  bad("stats refresh 5x", "unexpected character 'x' in argument to stats refresh interval.");
  bad("stats auth", "'auth' needs a user:password account.");
  bad("stats auth admin", "'stats auth' : 'admin' is not a user:password account.");
  bad("stats scope", "'scope' needs a proxy name.");
  bad("stats admin", "'stats admin' requires either 'if' or 'unless' followed by a condition.");
  bad("stats admin when TRUE",
      "'stats admin' requires either 'if' or 'unless' followed by a condition.");
  bad("stats show-modules", "'stats show-modules' is not supported yet.");
  bad("stats socket /tmp/x", "'stats socket' is only allowed in the 'global' section.");
  bad("stats enable now", "'stats enable' : unexpected extra argument 'now'.");
}

TEST(StatsPage, IgnoredWithAWarningInTcpMode) {
  auto r = parse("listen l\n  bind :1\n  timeout client 1s\n  stats enable\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.has("'stats' statement ignored for proxy 'l' as it requires HTTP mode.")) << r.all();
  EXPECT_FALSE(proxy(r, "l").stats.enabled);
}

TEST(MonitorUri, KeywordsAndMessages) {
  auto r = parse(fe("  monitor-uri /healthz\n  monitor fail if { path_beg /x }\n"
                    "  monitor fail unless { method GET }\n"));
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(proxy(r, "f").monitor_uri, "/healthz");
  EXPECT_EQ(proxy(r, "f").monitor_fail.size(), 2u);
  EXPECT_EQ(r.r.warnings, 0) << r.all();
  // Without monitor-uri a `monitor fail` line can change nothing: said so, with its line.
  r = parse(fe("  monitor fail if { path_beg /x }\n"));
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.has("parsing [f.cfg:8] : 'monitor fail' has no effect in frontend 'f' without "
                    "'monitor-uri'."))
      << r.all();
  bad("monitor-uri", "'monitor-uri' expects an URI.");
  bad("monitor-uri /a /b", "'monitor-uri' cannot handle unexpected argument '/b'.");
  bad("monitor", "'monitor' only supports 'fail'.");
  bad("monitor foo", "'monitor' only supports 'fail'.");
  bad("monitor fail", "'monitor fail' requires either 'if' or 'unless' followed by a condition.");
  bad("monitor fail foo", "'monitor fail' requires either 'if' or 'unless' followed by a condition.");
  // HAProxy's warnings: a backend has no frontend side; TCP mode has no URI.
  r = parse("backend b\n  mode http\n  monitor-uri /x\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.has("parsing [f.cfg:3] : 'monitor-uri' ignored because backend 'b' has no frontend "
                    "capability."))
      << r.all();
  EXPECT_EQ(proxy(r, "b").monitor_uri, "");
  r = parse("listen l\n  bind :1\n  timeout client 1s\n  monitor-uri /x\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.has("monitor-uri will be ignored for proxy 'l' (needs 'mode http').")) << r.all();
  EXPECT_EQ(proxy(r, "l").monitor_uri, "");
}

TEST(Capture, KeywordsAndMessages) {
  auto r = parse(fe("  capture request header Host len 32\n  capture response header Content-Type len 8\n"
                    "  capture request header User-Agent len 5\n"));
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& f = proxy(r, "f");
  ASSERT_EQ(f.capture_request.size(), 2u);
  EXPECT_EQ(f.capture_request[1].name, "User-Agent");
  EXPECT_EQ(f.capture_request[1].len, 5);
  EXPECT_EQ(f.capture_response.at(0).len, 8);
  bad("capture", "'capture' expects 'cookie' or 'request header' or 'response header'.");
  bad("capture foo", "'capture' expects 'cookie' or 'request header' or 'response header'.");
  bad("capture request header Host", "'capture request' expects 'header' <header_name> 'len' <len>.");
  bad("capture response header ct len", "'capture response' expects 'header' <header_name> 'len' <len>.");
  bad("capture request header Host len 0",
      "'capture request header' : invalid length '0', expects 1 to 65535.");
  r = parse("backend b\n  mode http\n  capture request header Host len 4\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.has("parsing [f.cfg:3] : 'capture' ignored because backend 'b' has no frontend capability."))
      << r.all();
  r = parse("listen l\n  bind :1\n  timeout client 1s\n  capture request header Host len 4\n");
  ASSERT_TRUE(r.r.model) << r.all();
  // HAProxy 3.5 keeps captures in TCP mode without a word (tcp-request content capture uses
  // declared slots there).
  EXPECT_FALSE(r.contains("'capture' ignored")) << r.all();
  EXPECT_EQ(proxy(r, "l").capture_request.size(), 1u);
}

TEST(Capture, Declare) {
  auto r = parse(
      "frontend f\n  bind :1\n  mode http\n  timeout client 1s\n"
      "  capture request header Host len 5\n  declare capture request len 4\n"
      "  http-request capture req.hdr(x-a) len 3\n  declare capture response len 10\n"
      "  capture response header X-S len 3\n  http-request capture req.hdr(x-b) id 1\n"
      "  http-response capture res.hdr(x) id 1\n  declare capture request len 2 ignored\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& f = proxy(r, "f");
  ASSERT_EQ(f.capture_request.size(), 4u);
  EXPECT_EQ(f.capture_request[0].name, "Host");
  EXPECT_EQ(f.capture_request[1].name, "");
  EXPECT_EQ(f.capture_request[1].len, 4);
  EXPECT_EQ(f.capture_request[2].len, 3);
  EXPECT_EQ(f.capture_request[3].len, 2);
  ASSERT_EQ(f.capture_response.size(), 2u);
  EXPECT_EQ(f.capture_response[0].len, 10);
  EXPECT_EQ(f.capture_response[1].name, "X-S");
  ASSERT_EQ(f.http_request_rules.size(), 2u);
  EXPECT_EQ(f.http_request_rules[0].capture_id, 2);
  EXPECT_EQ(f.http_request_rules[1].capture_id, 1);

  auto bad = [](const std::string& body, const std::string& msg) {
    auto res = parse("frontend f\n  bind :1\n  mode http\n  timeout client 1s\n" + body);
    EXPECT_FALSE(res.r.model) << body;
    EXPECT_TRUE(res.contains(msg)) << body << "\n" << res.all();
  };
  bad("  declare\n", "parsing [f.cfg:5] : 'declare' needs a second keyword that specify the type of "
                    "declaration ('capture')");
  bad("  declare foo\n", "unknown declaration type 'foo' (supports 'capture')");
  bad("  declare capture\n", "'declare capture' requires a direction ('request' or 'response')");
  bad("  declare capture foo len 3\n", "'declare capture' requires a direction ('request' or 'response')");
  bad("  declare capture request\n", "'declare capture' requires a capture length ('len')");
  bad("  declare capture request leng 3\n", "'declare capture' requires a capture length ('len')");
  bad("  declare capture request len\n",
      "'declare capture': 'len' requires a numeric value that represents the capture length");
  bad("  declare capture request len x\n", "'declare capture': cannot parse the length 'x'.");
  bad("  declare capture request len 0\n", "parsing [f.cfg:5] : length must be > 0");
  bad("  declare capture request len -1\n", "length must be > 0");
  bad("  http-request capture req.hdr(host) id 0\n",
      "Proxy 'f': unable to find capture id '0' referenced by http-request capture rule.");
  bad("  declare capture request len 1\n  http-response capture res.hdr(x) id 0\n",
      "Proxy 'f': unable to find capture id '0' referenced by http-response capture rule.");
  bad("  http-after-response capture res.hdr(x) id 0\n",
      "Proxy 'f': unable to find capture id '0' referenced by http-response capture rule.");
  r = parse("backend b\n  mode http\n  declare capture request len 3\n");
  EXPECT_TRUE(r.contains("parsing [f.cfg:3] : 'declare' only available in frontend or listen section"))
      << r.all();
  r = parse("defaults\n  mode http\n  declare capture request len 3\n");
  EXPECT_TRUE(r.contains("parsing [f.cfg:3] : 'declare' not available in default section")) << r.all();
  r = parse("backend b\n  mode http\n  http-request capture req.hdr(host) len 3\n");
  EXPECT_TRUE(r.contains("error detected in backend 'b' while parsing 'http-request capture' rule "
                         ": proxy 'b' has no frontend capability.")) << r.all();
  // A backend's rule names a slot of each stream's frontend: not checked here.
  r = parse("backend b\n  mode http\n  http-request capture req.hdr(host) id 3\n");
  EXPECT_TRUE(r.r.model) << r.all();
}

// `option http-buffer-request`: frontends and backends, inherited from defaults, `no option`
// cancels it.
TEST(HttpMode, BufferRequest) {
  auto r = parse("defaults\n  option http-buffer-request\nfrontend f\n  bind :1\n"
                 "  default_backend b\nbackend b\n  no option http-buffer-request\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(proxy(r, "f").option_http_buffer_request);
  EXPECT_FALSE(proxy(r, "b").option_http_buffer_request);
}

}  // namespace
}  // namespace sluice::config

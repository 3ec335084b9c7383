// http-request / http-response rule parsing and evaluation.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "rules_support.h"

namespace sluice::rules {
namespace {

using testing::Msg;
using testing::split;
using Kind = Verdict::Kind;

struct Req {
  Msg m;
  HeadEdit edit;
  std::vector<http::Header> original;
  RequestView view;
  explicit Req(Msg msg) : m(std::move(msg)) {
    view = m.view();
    edit.method = m.method;
    edit.target = m.target;
    edit.headers = m.hs;
  }
  std::string hdrs() const {
    std::string s;
    for (const auto& h : edit.headers) s += std::string(h.name) + ": " + std::string(h.value) + "\n";
    return s;
  }
};

class RuleTest : public ::testing::Test {
 protected:
  HttpRule rule(const std::string& line, RuleSide side = RuleSide::kRequest, const std::string& base = "") {
    auto r = parse_http_rule(split(line), side, reg, base);
    EXPECT_TRUE(r.ok()) << line << ": " << (r.ok() ? "" : r.error().message);
    return r.ok() ? std::move(r.value()) : HttpRule{};
  }
  std::string error(const std::string& line, RuleSide side = RuleSide::kRequest) {
    auto r = parse_http_rule(split(line), side, reg);
    return r.ok() ? "" : r.error().message;
  }
  Verdict run(const std::vector<std::string>& lines, Req& q, RuleSide side = RuleSide::kRequest) {
    std::vector<HttpRule> rs;
    for (const auto& l : lines) rs.push_back(rule(l, side));
    return apply_rules(rs, side, q.edit, q.view);
  }
  AclRegistry reg;
};

Msg basic() {
  Msg m;
  m.target = "/a/b?x=1";
  m.fields = {{"Host", "example.com"}, {"X-Test", "one"}, {"Accept", "a, b"}, {"x-test", "two"}};
  return m;
}

TEST_F(RuleTest, SetAddDelHeader) {
  Req q(basic());
  auto v = run({"set-header X-Test new", "add-header X-Added %[src]", "del-header accept"}, q);
  EXPECT_EQ(v.kind, Kind::kContinue);
  EXPECT_TRUE(q.edit.changed);
  EXPECT_EQ(q.hdrs(), "Host: example.com\nX-Test: new\nX-Added: 10.1.2.3\n");
}

TEST_F(RuleTest, SetHeaderAppendsWhenAbsentAndSeesOldValue) {
  Req q(basic());
  run({"set-header X-New fresh", "set-header X-Test %[hdr(x-test)]-seen"}, q);
  EXPECT_EQ(q.hdrs(), "Host: example.com\nAccept: a, b\nX-New: fresh\nX-Test: two-seen\n");
}

TEST_F(RuleTest, LaterRulesSeeEarlierChanges) {
  Req q(basic());
  ASSERT_TRUE(reg.parse_acl(split("has_flag hdr(x-flag) -m found")).ok());
  run({"add-header X-Flag 1", "set-header X-Seen yes if has_flag", "set-path /new",
       "set-header X-Path %[path] if { path /new }"}, q);
  EXPECT_EQ(q.edit.target, "/new?x=1");
  EXPECT_NE(q.hdrs().find("X-Seen: yes"), std::string::npos);
  EXPECT_NE(q.hdrs().find("X-Path: /new"), std::string::npos);
}

TEST_F(RuleTest, DelHeaderMatchMethods) {
  Msg m;
  m.fields = {{"X-Foo-1", "a"}, {"X-Foo-2", "b"}, {"Y-Foo", "c"}, {"X-Bar", "d"}, {"Z", "e"}};
  {
    Req q(m);
    run({"del-header x-foo -m beg"}, q);
    EXPECT_EQ(q.hdrs(), "Y-Foo: c\nX-Bar: d\nZ: e\n");
  }
  {
    Req q(m);
    run({"del-header FOO -m end"}, q);
    EXPECT_EQ(q.hdrs(), "X-Foo-1: a\nX-Foo-2: b\nX-Bar: d\nZ: e\n");
  }
  {
    Req q(m);
    run({"del-header foo -m sub"}, q);
    EXPECT_EQ(q.hdrs(), "X-Bar: d\nZ: e\n");
  }
  {
    Req q(m);
    run({"del-header ^x-(foo|bar) -m reg"}, q);
    EXPECT_EQ(q.hdrs(), "Y-Foo: c\nZ: e\n");
  }
  {
    // Case-sensitive against the lower-cased names, as HAProxy: upper case matches nothing.
    Req q(m);
    run({"del-header ^X-(FOO|bar) -m reg"}, q);
    EXPECT_EQ(q.hdrs(), "X-Foo-1: a\nX-Foo-2: b\nY-Foo: c\nX-Bar: d\nZ: e\n");
  }
  {
    Req q(m);
    run({"del-header z -m str"}, q);
    EXPECT_EQ(q.hdrs(), "X-Foo-1: a\nX-Foo-2: b\nY-Foo: c\nX-Bar: d\n");
  }
  {
    Req q(m);
    run({"del-header nothing"}, q);
    EXPECT_FALSE(q.edit.changed);
  }
}

TEST_F(RuleTest, ReplaceHeaderWholeValue) {
  Msg m;
  m.fields = {{"User-Agent", "curl/7.47.0"}, {"Cookie", "C=1; expires=x, y"}, {"Accept", "a, bb"}};
  Req q(m);
  run({"replace-header User-Agent curl foo", "replace-header Cookie (C=[^;]*);(.*) \\1;ip=%[src];\\2",
       "replace-header accept ^b.* zz"}, q);
  // The whole value is replaced, even when the regex matched part of it; the comma list is
  // one value for replace-header.
  EXPECT_EQ(q.hdrs(), "User-Agent: foo\nCookie: C=1;ip=10.1.2.3; expires=x, y\nAccept: a, bb\n");
}

TEST_F(RuleTest, ReplaceValueEachValue) {
  Msg m;
  m.fields = {{"X-Forwarded-For", "1.1.1.1, 2.2.2.2,3.3.3.3"}, {"Other", "1.1.1.1"}};
  Req q(m);
  run({"replace-value X-Forwarded-For ^([0-9]+)\\..* \\1.x"}, q);
  // A replaced element loses the blanks around it; untouched ones keep theirs (HAProxy).
  EXPECT_EQ(q.hdrs(), "X-Forwarded-For: 1.x,2.x,3.x\nOther: 1.1.1.1\n");
  Req q2(m);
  run({"replace-value X-Forwarded-For ^2\\. \\xff"}, q2);
  EXPECT_EQ(q2.edit.headers[0].value, "1.1.1.1,\xff,3.3.3.3");
  Msg m4;
  m4.fields = {{"X-Forwarded-For", "192.168.10.1, 192.168.13.24, 10.0.0.37"}};
  Req q4(m4);
  run({"replace-value X-Forwarded-For ^192\\.168\\.(.*)$ 172.16.\\1"}, q4);
  EXPECT_EQ(q4.edit.headers[0].value, "172.16.10.1,172.16.13.24, 10.0.0.37");
  Req q3(m);
  run({"replace-value x-forwarded-for ^9 nine"}, q3);
  EXPECT_FALSE(q3.edit.changed);
}

TEST_F(RuleTest, SetPath) {
  Msg m;
  m.target = "http://h:80/old/p?q=1";
  Req q(m);
  run({"set-path /new%[path]"}, q);
  EXPECT_EQ(q.edit.target, "http://h:80/new/old/p?q=1");
  m.target = "/x";
  Req q2(m);
  run({"set-path /y"}, q2);
  EXPECT_EQ(q2.edit.target, "/y");
  m.target = "http://h?q";
  Req q3(m);
  run({"set-path /z"}, q3);
  EXPECT_EQ(q3.edit.target, "http://h/z?q");
}

TEST_F(RuleTest, Deny) {
  Req q(basic());
  auto v = run({"set-header A 1", "deny if { path_beg /a }", "set-header B 2"}, q);
  EXPECT_EQ(v.kind, Kind::kDeny);
  EXPECT_EQ(v.status, 403);
  EXPECT_FALSE(v.has_body);
  EXPECT_EQ(q.hdrs().find("B: 2"), std::string::npos);
  Req q2(basic());
  v = run({"deny deny_status 429 content-type text/plain string slow hdr Retry-After 10 unless { path /x }"}, q2);
  EXPECT_EQ(v.kind, Kind::kDeny);
  EXPECT_EQ(v.status, 429);
  EXPECT_TRUE(v.has_body);
  EXPECT_EQ(v.content_type, "text/plain");
  EXPECT_EQ(v.body, "slow");
  ASSERT_EQ(v.extra_headers.size(), 1u);
  EXPECT_EQ(v.extra_headers[0].first, "Retry-After");
  EXPECT_EQ(v.extra_headers[0].second, "10");
  Req q3(basic());
  v = run({"deny if { path /nope }"}, q3);
  EXPECT_EQ(v.kind, Kind::kContinue);
  Req q4(basic());
  v = run({"deny"}, q4, RuleSide::kResponse);
  EXPECT_EQ(v.status, 502);
}

// tarpit: a deny whose default status is 500; reject and silent-drop: final, no answer.
TEST_F(RuleTest, TarpitRejectSilentDrop) {
  Req q(basic());
  auto v = run({"tarpit if { path_beg /a }", "set-header B 2"}, q);
  EXPECT_EQ(v.kind, Kind::kTarpit);
  EXPECT_EQ(v.status, 500);
  EXPECT_TRUE(v.errorpage);
  EXPECT_EQ(q.hdrs().find("B: 2"), std::string::npos);
  Req q2(basic());
  v = run({"tarpit deny_status 403"}, q2);
  EXPECT_EQ(v.kind, Kind::kTarpit);
  EXPECT_EQ(v.status, 403);
  Req q3(basic());
  v = run({"tarpit status 429 content-type text/plain string slow"}, q3);
  EXPECT_EQ(v.status, 429);
  EXPECT_EQ(v.body, "slow");
  Req q4(basic());
  EXPECT_EQ(run({"reject", "deny"}, q4).kind, Kind::kReject);
  Req q5(basic());
  EXPECT_EQ(run({"silent-drop if { path_beg /a }", "deny"}, q5).kind, Kind::kSilentDrop);
  EXPECT_NE(error("reject foo").find("'if' or 'unless'"), std::string::npos) << error("reject foo");
  Req q6(basic());
  v = run({"silent-drop rst-ttl 5"}, q6);
  EXPECT_EQ(v.kind, Kind::kSilentDrop);
  EXPECT_EQ(v.rst_ttl, 5);
  EXPECT_EQ(run({"silent-drop"}, q6).rst_ttl, 0);
  EXPECT_NE(error("silent-drop rst-ttl 256").find("valid rst-ttl values are [1-255]"),
            std::string::npos);
  EXPECT_NE(error("silent-drop rst-ttl 5x").find("invalid character starting at 'x'"),
            std::string::npos);
  EXPECT_NE(error("silent-drop rst-ttl").find("missing rst-ttl value"), std::string::npos);
  EXPECT_NE(error("tarpit deny_status 99").find("status code"), std::string::npos);
  EXPECT_NE(error("reject", RuleSide::kResponse).find("'http-response' expects"), std::string::npos);
}

TEST_F(RuleTest, Return) {
  Req q(basic());
  auto v = run({"return"}, q);
  EXPECT_EQ(v.kind, Kind::kReturn);
  EXPECT_EQ(v.status, 200);
  EXPECT_FALSE(v.has_body);
  Req q2(basic());
  v = run({"return status 404 content-type text/html string nf hdr X-Path %[path] hdr X-Lit lit"}, q2);
  EXPECT_EQ(v.status, 404);
  EXPECT_EQ(v.body, "nf");
  EXPECT_EQ(v.content_type, "text/html");
  ASSERT_EQ(v.extra_headers.size(), 2u);
  EXPECT_EQ(v.extra_headers[0].second, "/a/b");
  EXPECT_EQ(v.extra_headers[1].second, "lit");
  Req q3(basic());
  v = run({"return status 503 default-errorfiles"}, q3);
  EXPECT_EQ(v.status, 503);
  EXPECT_FALSE(v.has_body);
  EXPECT_TRUE(v.errorpage);
  // Without a payload a return is empty; a bare deny sends the error page (HAProxy).
  Req q4(basic());
  v = run({"return status 404"}, q4);
  EXPECT_FALSE(v.errorpage);
  Req q5(basic());
  v = run({"deny deny_status 429"}, q5);
  EXPECT_EQ(v.status, 429);
  EXPECT_TRUE(v.errorpage);
}

TEST_F(RuleTest, ReturnFile) {
  char dir[] = "/tmp/sluice_rulesXXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/page.html";
  {
    std::ofstream f(path);
    f << "<p>hi</p>\n";
  }
  auto r = rule("return status 200 content-type text/html file page.html", RuleSide::kRequest, dir);
  EXPECT_EQ(r.reply.body, "<p>hi</p>\n");
  EXPECT_TRUE(r.reply.has_body);
  auto abs = rule("return content-type text/html file " + path);
  EXPECT_EQ(abs.reply.body, "<p>hi</p>\n");
  EXPECT_NE(error("return content-type text/html file " + std::string(dir) + "/missing").find("error opening file '"),
            std::string::npos);
  std::remove(path.c_str());
  rmdir(dir);
}

TEST_F(RuleTest, Redirect) {
  Msg m = basic();
  {
    Req q(m);
    auto v = run({"redirect location /login"}, q);
    EXPECT_EQ(v.kind, Kind::kRedirect);
    EXPECT_EQ(v.status, 302);
    EXPECT_EQ(v.location, "/login");
  }
  {
    Req q(m);
    auto v = run({"redirect location https://%[hdr(host)]%[path] code 301"}, q);
    EXPECT_EQ(v.status, 301);
    EXPECT_EQ(v.location, "https://example.com/a/b");
  }
  {
    Req q(m);
    auto v = run({"redirect prefix https://new.example code 308"}, q);
    EXPECT_EQ(v.status, 308);
    EXPECT_EQ(v.location, "https://new.example/a/b?x=1");
  }
  {
    Req q(m);
    auto v = run({"redirect prefix /v2 drop-query"}, q);
    EXPECT_EQ(v.location, "/v2/a/b");
  }
  {
    Req q(m);
    auto v = run({"redirect prefix /"}, q);
    EXPECT_EQ(v.location, "/a/b?x=1");
  }
  {
    Req q(m);
    auto v = run({"redirect scheme https code 303"}, q);
    EXPECT_EQ(v.status, 303);
    EXPECT_EQ(v.location, "https://example.com/a/b?x=1");
  }
  {
    Req q(m);
    auto v = run({"redirect scheme https drop-query code 307 if { hdr(host) example.com }"}, q);
    EXPECT_EQ(v.status, 307);
    EXPECT_EQ(v.location, "https://example.com/a/b");
  }
  {
    Req q(m);
    auto v = run({"redirect location /x"}, q, RuleSide::kResponse);
    EXPECT_EQ(v.location, "/x");
  }
}

TEST_F(RuleTest, AllowStops) {
  Req q(basic());
  auto v = run({"allow if { path_beg /a }", "deny"}, q);
  EXPECT_EQ(v.kind, Kind::kContinue);
  Req q2(basic());
  v = run({"allow if { path_beg /z }", "deny"}, q2);
  EXPECT_EQ(v.kind, Kind::kDeny);
}

TEST_F(RuleTest, ResponseSide) {
  Msg m = basic();
  m.status = 500;
  m.res_fields = {{"Server", "apache"}, {"Set-Cookie", "a=1"}};
  Req q(m);
  HeadEdit res;
  res.headers = q.m.rhs;
  std::vector<HttpRule> rs = {rule("del-header server", RuleSide::kResponse),
                              rule("set-header X-Status %[status]-%[capture.req.uri]", RuleSide::kResponse),
                              rule("replace-value set-cookie (.*) \\1;Secure", RuleSide::kResponse),
                              rule("set-header X-Seen 1 if { res.hdr(x-status) -m found }", RuleSide::kResponse),
                              // HAProxy: the request's URI is gone here, an ACL on it never
                              // matches (and its negation always does).
                              rule("set-header X-Never 1 if { path_beg /a }", RuleSide::kResponse),
                              rule("set-header X-Always 1 unless { path_beg /a }", RuleSide::kResponse),
                              rule("deny deny_status 503 if { status 500 } { capture.req.uri -m beg /a }", RuleSide::kResponse)};
  auto v = apply_rules(rs, RuleSide::kResponse, res, q.view);
  EXPECT_EQ(v.kind, Kind::kDeny);
  EXPECT_EQ(v.status, 503);
  std::string s;
  for (const auto& h : res.headers) s += std::string(h.name) + ": " + std::string(h.value) + "\n";
  EXPECT_EQ(s, "Set-Cookie: a=1;Secure\nX-Status: 500-/a/b?x=1\nX-Seen: 1\nX-Always: 1\n");
  EXPECT_EQ(rule("set-header X-Never 1 if { path_beg /a }", RuleSide::kResponse).warnings.size(), 1u);
}

// http-response wait-for-body: parsed as on requests; the evaluation stops at it (when its
// condition matches) and says where to resume, the rules after it waiting for the body.
TEST_F(RuleTest, ResponseWaitForBody) {
  constexpr RuleSide kRes = RuleSide::kResponse;
  HttpRule w = rule("wait-for-body time 2s at-least 4k", kRes);
  EXPECT_EQ(w.action, HttpRule::Action::kWaitForBody);
  EXPECT_EQ(w.wait_ms, 2000u);
  EXPECT_EQ(w.wait_at_least, 4096u);
  EXPECT_EQ(error("wait-for-body", kRes), "error detected while parsing 'http-response "
                                          "wait-for-body' rule : expects time <time> [ at-least "
                                          "<bytes> ].");
  EXPECT_EQ(error("wait-for-body time 1x", kRes), "error detected while parsing 'http-response "
                                                  "wait-for-body' rule : unexpected character 'x'.");
  EXPECT_EQ(error("wait-for-body time 1s at-least", kRes),
            "error detected while parsing 'http-response wait-for-body' rule : missing argument "
            "for 'at-least'.");
  EXPECT_NE(error("wait-for-body time 1s foo", kRes).find("'if' or 'unless'"), std::string::npos);
  // Not an http-after-response action (HAProxy 3.5 refuses it there too).
  EXPECT_NE(error("wait-for-body time 1s", RuleSide::kAfterResponse).find("expects"),
            std::string::npos);

  Msg m = basic();
  m.status = 200;
  Req q(m);
  HeadEdit res;
  std::vector<HttpRule> rs = {rule("set-header X-A 1", kRes),
                              rule("wait-for-body time 1s if { status 404 }", kRes),
                              rule("wait-for-body time 300ms at-least 10", kRes),
                              rule("set-header X-B 1", kRes)};
  auto v = apply_rules(rs, kRes, res, q.view);
  EXPECT_EQ(v.kind, Kind::kWaitBody);
  EXPECT_EQ(v.wait_ms, 300u);
  EXPECT_EQ(v.wait_at_least, 10u);
  EXPECT_EQ(v.resume, 3u);
  ASSERT_EQ(res.headers.size(), 1u);
  EXPECT_EQ(res.headers[0].name, "X-A");
  v = apply_rules(rs, kRes, res, q.view, nullptr, v.resume);
  EXPECT_EQ(v.kind, Kind::kContinue);
  ASSERT_EQ(res.headers.size(), 2u);
  EXPECT_EQ(res.headers[1].name, "X-B");
  // On requests the mux waited before the rules: the evaluation goes on.
  Req q2(basic());
  EXPECT_EQ(run({"wait-for-body time 1s", "set-header X-C 1"}, q2).kind, Kind::kContinue);
  EXPECT_NE(q2.hdrs().find("X-C: 1"), std::string::npos);
}

TEST_F(RuleTest, ParseDetails) {
  auto r = rule("set-header X-A b if { path / }");
  EXPECT_EQ(r.action, HttpRule::Action::kSetHeader);
  EXPECT_EQ(r.name, "X-A");
  EXPECT_FALSE(r.cond.empty());
  EXPECT_FALSE(r.is_final());
  EXPECT_TRUE(rule("deny").is_final());
  EXPECT_TRUE(rule("allow").is_final());
  EXPECT_TRUE(rule("redirect location /").is_final());
  EXPECT_TRUE(rule("return").is_final());
  auto ct = rule("return content-type text/plain");
  ASSERT_EQ(ct.warnings.size(), 1u);
  EXPECT_NE(ct.warnings[0].find("content-type 'text/plain' ignored"), std::string::npos);
  auto hdr = rule("return content-type text/plain string x hdr content-length 5");
  ASSERT_EQ(hdr.warnings.size(), 1u);
  EXPECT_TRUE(hdr.reply_headers.empty());
  ASSERT_TRUE(reg.parse_acl(split("err status 500")).ok());
  auto never = rule("deny if err");
  ASSERT_EQ(never.warnings.size(), 1u);
  EXPECT_NE(never.warnings[0].find("acl 'err' will never match"), std::string::npos);
  EXPECT_TRUE(rule("deny if err", RuleSide::kResponse).warnings.empty());
}

TEST_F(RuleTest, Errors) {
  std::string unknown = error("foo");
  EXPECT_EQ(unknown.rfind("'http-request' expects 'add-header', 'allow', 'del-header', 'deny', 'redirect', ", 0), 0u)
      << unknown;
  EXPECT_NE(unknown.find(", but got 'foo'."), std::string::npos);
  EXPECT_NE(error("set-headr X y").find("Did you mean 'set-header' maybe ?"), std::string::npos);
  EXPECT_NE(error("").find("(missing argument)"), std::string::npos);
  EXPECT_EQ(error("auth realm x"), "");
  EXPECT_EQ(error("auth realm"),
            "error detected while parsing 'http-request auth' rule : missing realm value.\n.");
  EXPECT_EQ(error("set-var(txn.x) str(a)"), "");
  EXPECT_EQ(error("set-var(txn.x)"),
            "error detected while parsing 'http-request set-var(txn.x)' rule : missing fetch method.");
  EXPECT_NE(error("set-var(foo.x) str(a)").find("set-var"), std::string::npos);
  EXPECT_EQ(error("set-var(txn.x) res.hdr(a)"),
            "error detected while parsing 'http-request set-var(txn.x)' rule : fetch method "
            "'set-var(txn.x)' extracts information from 'HTTP response headers', none of which is "
            "available here.");
  EXPECT_EQ(error("lua.foo"), "'http-request lua.foo' is not supported by sluice yet.");
  EXPECT_EQ(error("track-sc0 src"), "'http-request track-sc0' is not supported by sluice yet.");
  EXPECT_EQ(error("normalize-uri"), "error detected while parsing 'http-request normalize-uri' "
                                    "rule : missing argument <normalizer>.");
  EXPECT_EQ(error("normalize-uri foo"), "error detected while parsing 'http-request "
                                        "normalize-uri' rule : unknown normalizer 'foo'.");
  EXPECT_EQ(error("normalize-uri path-strip-dotdot bar"),
            "error detected while parsing 'http-request normalize-uri' rule : unknown argument "
            "'bar' for 'path-strip-dotdot' normalizer.");
  EXPECT_NE(error("normalize-uri path-merge-slashes strict").find("'if' or 'unless'"),
            std::string::npos);
  EXPECT_EQ(error("normalize-uri percent-to-uppercase strict if TRUE"), "");
  EXPECT_EQ(error("wait-for-body time 1s at-least 1k"), "");
  EXPECT_EQ(rule("wait-for-body time 1s at-least 1k").wait_at_least, 1024u);
  EXPECT_EQ(rule("wait-for-body time 1500").wait_ms, 1500u);
  EXPECT_EQ(error("wait-for-body"), "error detected while parsing 'http-request wait-for-body' "
                                    "rule : expects time <time> [ at-least <bytes> ].");
  EXPECT_EQ(error("wait-for-body time"), "error detected while parsing 'http-request "
                                         "wait-for-body' rule : missing argument for 'time'.");
  EXPECT_EQ(error("wait-for-body time 1x"), "error detected while parsing 'http-request "
                                            "wait-for-body' rule : unexpected character 'x'.");
  EXPECT_EQ(error("wait-for-body time 1s at-least"),
            "error detected while parsing 'http-request wait-for-body' rule : missing argument "
            "for 'at-least'.");
  EXPECT_EQ(error("set-path /x", RuleSide::kResponse), "'http-response set-path' is not supported by sluice yet.");
  EXPECT_EQ(error("set-status 500", RuleSide::kResponse), "");
  EXPECT_NE(error("set-status 99", RuleSide::kResponse).find("set-status"), std::string::npos);
  EXPECT_NE(error("foo", RuleSide::kResponse).find("'http-response' expects "), std::string::npos);
  // http-after-response: header, status and variable actions only.
  EXPECT_EQ(error("set-header X %[status]", RuleSide::kAfterResponse), "");
  EXPECT_EQ(error("set-status 299", RuleSide::kAfterResponse), "");
  EXPECT_EQ(error("set-var(txn.a) status", RuleSide::kAfterResponse), "");
  EXPECT_NE(error("deny", RuleSide::kAfterResponse).find("'http-after-response' expects 'add-header', "),
            std::string::npos);
  EXPECT_EQ(error("deny", RuleSide::kAfterResponse).find("'deny',"), std::string::npos);
  EXPECT_EQ(error("do-log", RuleSide::kAfterResponse),
            "'http-after-response do-log' is not supported by sluice yet.");
  EXPECT_EQ(error("foo", RuleSide::kResponse).find("set-path"), std::string::npos);
  EXPECT_EQ(error("set-header X"),
            "error detected while parsing 'http-request set-header' rule : expects exactly 2 arguments.");
  EXPECT_NE(error("set-header X a b").find("expects exactly 2 arguments"), std::string::npos);
  EXPECT_NE(error("add-header").find("expects exactly 2 arguments"), std::string::npos);
  EXPECT_NE(error("replace-header X a").find("expects exactly 3 arguments"), std::string::npos);
  EXPECT_EQ(error("replace-value X ( b"),
            "error detected while parsing 'http-request replace-value' rule : regex '(' is invalid "
            "(error=missing closing parenthesis, erroffset=1).");
  EXPECT_EQ(error("replace-path ( b"),
            "error detected while parsing 'http-request replace-path' rule : failed to parse the "
            "regex : regex '(' is invalid (error=missing closing parenthesis, erroffset=1).");
  EXPECT_EQ(error("del-header [a -m reg"),
            "error detected while parsing 'http-request del-header' rule : regex '[a' is invalid "
            "(error=missing terminating ] for character class, erroffset=2).");
  EXPECT_EQ(error("replace-uri ^/v\\d+/(.*) /\\1"), "");   // Perl syntax (PCRE2)
  EXPECT_NE(error("del-header").find("expects at least 1 argument"), std::string::npos);
  EXPECT_NE(error("del-header x -m foo").find("'-m' expects"), std::string::npos);
  EXPECT_NE(error("set-path").find("expects exactly 1 argument"), std::string::npos);
  EXPECT_NE(error("set-header X %[nope]").find("unknown fetch method 'nope'"), std::string::npos);
  EXPECT_EQ(error("set-header X %[path,lower]"), "");
  EXPECT_NE(error("set-header X %[path,nope]").find("unknown converter 'nope'"), std::string::npos);
  EXPECT_EQ(error("deny foo"),
            "error detected while parsing 'http-request deny' rule : 'http-request deny' expects 'deny_status', "
            "'status', 'content-type', 'string', 'file', 'default-errorfiles' or 'hdr' (got 'foo').");
  EXPECT_NE(error("deny deny_status 600").find("between 200 and 599"), std::string::npos);
  EXPECT_NE(error("deny deny_status abc").find("between 200 and 599"), std::string::npos);
  EXPECT_NE(error("return status").find("between 200 and 599"), std::string::npos);
  EXPECT_NE(error("return string x").find("a content type must be defined"), std::string::npos);
  EXPECT_NE(error("return content-type a string x string y").find("only one payload"), std::string::npos);
  EXPECT_EQ(error("return lf-string x"),
            "error detected while parsing 'http-request return' rule : a content type must be "
            "defined with a log-format payload.");
  EXPECT_NE(error("return content-type text/plain lf-string %[foo]").find("unknown fetch method 'foo'"),
            std::string::npos);
  EXPECT_EQ(error("return content-type text/plain lf-string %[path]"), "");
  EXPECT_NE(error("return hdr X").find("'hdr' expects <name> and <fmt>"), std::string::npos);
  EXPECT_EQ(error("redirect"),
            "error detected while parsing 'http-request redirect' rule : redirection type expected "
            "('prefix', 'location', or 'scheme').");
  EXPECT_EQ(error("redirect location"),
            "error detected while parsing 'http-request redirect' rule : missing argument for 'location'.");
  EXPECT_NE(error("redirect location /x code 304").find("unsupported HTTP code '304'"), std::string::npos);
  EXPECT_NE(error("redirect location /x foo").find("(was 'foo')"), std::string::npos);
  EXPECT_EQ(error("redirect prefix /x append-slash drop-query keep-query ignore-empty set-cookie a=b"), "");
  EXPECT_NE(error("redirect prefix /x", RuleSide::kResponse).find("only 'location'"), std::string::npos);
  EXPECT_EQ(error("allow foo"),
            "'http-request allow' expects either 'if' or 'unless' followed by a condition but found 'foo'.");
  EXPECT_EQ(error("deny if nope"),
            "error detected while parsing an 'http-request deny' condition : no such ACL : 'nope'.");
  EXPECT_EQ(error("deny if"),
            "error detected while parsing an 'http-request deny' condition : missing condition after 'if'.");
  EXPECT_NE(error("deny if { path /").find("missing closing '}'"), std::string::npos);
}

// `use-service prometheus-exporter`: a final action on the request side only; other services
// (Lua ones) are refused.
TEST_F(RuleTest, UseService) {
  Req q(basic());
  auto v = run({"use-service prometheus-exporter if { path /metrics }", "deny"}, q);
  EXPECT_EQ(v.kind, Kind::kDeny);
  Req m(basic());
  m.view.req.target = m.edit.target = "/metrics";
  v = run({"use-service prometheus-exporter if { path /metrics }", "deny"}, m);
  EXPECT_EQ(v.kind, Kind::kService);
  EXPECT_EQ(error("use-service"),
            "'http-request use-service' expects a service name ('prometheus-exporter').");
  EXPECT_EQ(error("use-service lua.hello"),
            "'http-request use-service' : unknown service 'lua.hello'; sluice supports "
            "'prometheus-exporter' only.");
  EXPECT_NE(error("use-service prometheus-exporter", RuleSide::kResponse).find("use-service"),
            std::string::npos);
  EXPECT_EQ(error("use-service prometheus-exporter foo"),
            "'http-request use-service' expects either 'if' or 'unless' followed by a condition but "
            "found 'foo'.");
}

}  // namespace
}  // namespace sluice::rules

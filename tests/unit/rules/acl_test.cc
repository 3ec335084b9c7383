// ACL criteria, match methods, flags and their errors.
#include <gtest/gtest.h>

#include "rules_support.h"

namespace sluice::rules {
namespace {

using testing::acl_error;
using testing::acl_matches;
using testing::Msg;

TEST(Network, ParseAndContains) {
  auto n = parse_network("10.0.0.0/8");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->family, AF_INET);
  EXPECT_EQ(n->prefix, 8);
  EXPECT_TRUE(n->contains(testing::addr("10.200.1.1", 1)));
  EXPECT_FALSE(n->contains(testing::addr("11.0.0.1", 1)));
  auto host = parse_network("192.168.1.7");
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(host->prefix, 32);
  EXPECT_TRUE(host->contains(testing::addr("192.168.1.7", 9)));
  EXPECT_FALSE(host->contains(testing::addr("192.168.1.8", 9)));
  auto mask = parse_network("172.16.0.0/255.240.0.0");
  ASSERT_TRUE(mask.ok());
  EXPECT_EQ(mask->prefix, 12);
  EXPECT_TRUE(mask->contains(testing::addr("172.31.255.255", 1)));
  EXPECT_FALSE(mask->contains(testing::addr("172.32.0.0", 1)));
  // Host bits are dropped from the network address.
  auto loose = parse_network("10.1.2.3/16");
  ASSERT_TRUE(loose.ok());
  EXPECT_TRUE(loose->contains(testing::addr("10.1.99.99", 1)));
  auto v6 = parse_network("2001:db8::/32");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->family, AF_INET6);
  EXPECT_TRUE(v6->contains(testing::addr("2001:db8:1::5", 1)));
  EXPECT_FALSE(v6->contains(testing::addr("2001:db9::1", 1)));
  EXPECT_FALSE(v6->contains(testing::addr("10.0.0.1", 1)));
  auto one6 = parse_network("::1");
  ASSERT_TRUE(one6.ok());
  EXPECT_EQ(one6->prefix, 128);
  EXPECT_TRUE(one6->contains(testing::addr("::1", 1)));
  // IPv4-mapped IPv6 clients match IPv4 networks.
  EXPECT_TRUE(n->contains(testing::addr("::ffff:10.0.0.1", 1)));
  auto un = net::SocketAddress::unix_path("/tmp/x");
  ASSERT_TRUE(un.ok());
  EXPECT_FALSE(n->contains(un.value()));
}

TEST(Network, Errors) {
  for (auto bad : {"10.0.0.0/33", "10.0.0", "abc", "10.0.0.0/x", "::1/129", "", "10.0.0.0/255.0.255.0", "1.2.3.4/"})
    EXPECT_FALSE(parse_network(bad).ok()) << bad;
  EXPECT_NE(parse_network("host.example").error().message.find("not a valid IPv4 or IPv6"), std::string::npos);
}

TEST(Target, PathAndQuery) {
  EXPECT_EQ(path_of("/a/b?x=1"), "/a/b");
  EXPECT_EQ(path_of("/a/b"), "/a/b");
  EXPECT_EQ(path_of("http://h:80/p?q"), "/p");
  EXPECT_EQ(path_of("http://h"), "");
  EXPECT_EQ(path_of("http://h?q"), "");
  EXPECT_EQ(path_of("*"), "*");
  EXPECT_EQ(path_of("h:443"), "");
  EXPECT_EQ(query_of("/a?x=1&y"), "x=1&y");
  EXPECT_EQ(query_of("/a"), "");
  EXPECT_EQ(query_of("http://h/p?q"), "q");
}

TEST(Acl, PathCriteria) {
  Msg m;
  m.target = "/static/img/logo.PNG?v=2";
  EXPECT_TRUE(acl_matches("path /static/img/logo.PNG", m));
  EXPECT_FALSE(acl_matches("path /static", m));
  EXPECT_TRUE(acl_matches("path_beg /static /other", m));
  EXPECT_FALSE(acl_matches("path_beg /img", m));
  EXPECT_TRUE(acl_matches("path_end .png .PNG", m));
  EXPECT_FALSE(acl_matches("path_end .png", m));
  EXPECT_TRUE(acl_matches("path_end -i .png", m));
  EXPECT_TRUE(acl_matches("path_sub img/", m));
  EXPECT_TRUE(acl_matches("path_dir img", m));
  EXPECT_TRUE(acl_matches("path_dir /static/img/", m));
  EXPECT_FALSE(acl_matches("path_dir im", m));
  EXPECT_TRUE(acl_matches("path_reg ^/static/.*\\.(png|PNG)$", m));
  EXPECT_FALSE(acl_matches("path_reg ^/img", m));
  EXPECT_TRUE(acl_matches("path_len 20", m));
  EXPECT_TRUE(acl_matches("path_len gt 10", m));
  EXPECT_FALSE(acl_matches("path_len lt 10", m));
  EXPECT_TRUE(acl_matches("path_dom img", m));
  EXPECT_TRUE(acl_matches("query v=2", m));
  // Absolute-form targets: the path is after the authority.
  m.target = "http://example.com/api/v1?x";
  EXPECT_TRUE(acl_matches("path_beg /api", m));
  EXPECT_TRUE(acl_matches("url_beg http://", m));
  EXPECT_FALSE(acl_matches("path_beg http", m));
}

TEST(Acl, UrlAndBase) {
  Msg m;
  m.target = "/a/b?x=1";
  m.fields = {{"Host", "www.example.com"}};
  EXPECT_TRUE(acl_matches("url /a/b?x=1", m));
  EXPECT_TRUE(acl_matches("url_beg /a/", m));
  EXPECT_TRUE(acl_matches("url_end x=1", m));
  EXPECT_TRUE(acl_matches("url_sub ?x", m));
  EXPECT_TRUE(acl_matches("url_reg x=[0-9]$", m));
  EXPECT_TRUE(acl_matches("url_len 8", m));
  EXPECT_TRUE(acl_matches("url_dir a", m));
  EXPECT_FALSE(acl_matches("url_dir b", m));   // "b?x=1" is the last word
  EXPECT_TRUE(acl_matches("base www.example.com/a/b", m));
  EXPECT_TRUE(acl_matches("base_beg www.example.com/a", m));
  EXPECT_TRUE(acl_matches("base_end /b", m));
  EXPECT_TRUE(acl_matches("base_sub example", m));
  EXPECT_TRUE(acl_matches("base_reg ^www\\.", m));
}

TEST(Acl, HeaderCriteria) {
  Msg m;
  m.fields = {{"Host", "WWW.Example.com:8080"},
              {"Accept", "text/html, application/json;q=0.9"},
              {"X-Forwarded-For", "1.1.1.1"},
              {"x-forwarded-for", "2.2.2.2, 3.3.3.3"},
              {"Content-Length", "42"},
              {"X-Empty", ""}};
  EXPECT_TRUE(acl_matches("hdr(host) -i www.example.com:8080", m));
  EXPECT_FALSE(acl_matches("hdr(host) www.example.com:8080", m));
  EXPECT_TRUE(acl_matches("req.hdr(HOST) WWW.Example.com:8080", m));
  EXPECT_TRUE(acl_matches("hdr_beg(host) -i www.", m));
  EXPECT_TRUE(acl_matches("hdr_end(host) :8080", m));
  EXPECT_TRUE(acl_matches("hdr_sub(host) Example", m));
  EXPECT_TRUE(acl_matches("hdr_reg(host) ^WWW\\.", m));
  EXPECT_TRUE(acl_matches("hdr_reg(host) -i ^www\\.", m));
  EXPECT_TRUE(acl_matches("hdr_dom(host) -i example", m));
  EXPECT_TRUE(acl_matches("hdr_dom(host) -i www.example.com", m));
  EXPECT_FALSE(acl_matches("hdr_dom(host) -i exam", m));
  EXPECT_TRUE(acl_matches("hdr_len(host) 20", m));
  // hdr() splits values at commas: each value is tested.
  EXPECT_TRUE(acl_matches("hdr(accept) application/json;q=0.9", m));
  EXPECT_TRUE(acl_matches("req.fhdr(accept) -m beg text/html,", m));
  EXPECT_FALSE(acl_matches("req.fhdr(accept) text/html", m));
  EXPECT_TRUE(acl_matches("hdr(x-forwarded-for) 3.3.3.3", m));
  EXPECT_TRUE(acl_matches("hdr_ip(x-forwarded-for) 3.3.3.0/24", m));
  EXPECT_FALSE(acl_matches("hdr_ip(x-forwarded-for) 4.0.0.0/8", m));
  // Occurrences: 1 is the first value, -1 the last.
  EXPECT_TRUE(acl_matches("hdr(x-forwarded-for,1) 1.1.1.1", m));
  EXPECT_FALSE(acl_matches("hdr(x-forwarded-for,1) 2.2.2.2", m));
  EXPECT_TRUE(acl_matches("hdr(x-forwarded-for,-1) 3.3.3.3", m));
  EXPECT_TRUE(acl_matches("hdr(x-forwarded-for,2) 2.2.2.2", m));
  EXPECT_TRUE(acl_matches("hdr_cnt(x-forwarded-for) 3", m));
  EXPECT_TRUE(acl_matches("hdr_cnt(x-forwarded-for) ge 2", m));
  EXPECT_TRUE(acl_matches("hdr_cnt(x-missing) 0", m));
  EXPECT_TRUE(acl_matches("hdr_cnt(x-missing) eq 0", m));
  EXPECT_TRUE(acl_matches("hdr_val(content-length) gt 40", m));
  EXPECT_FALSE(acl_matches("hdr_val(content-length) lt 40", m));
  EXPECT_TRUE(acl_matches("hdr(x-empty) -m found", m));
  EXPECT_TRUE(acl_matches("hdr(x-empty) -m len 0", m));
  EXPECT_TRUE(acl_matches("hdr(host) -m found", m));
  EXPECT_FALSE(acl_matches("hdr(x-missing) -m found", m));
  EXPECT_TRUE(acl_matches("hdr(content-length) -m int 42", m));
  EXPECT_TRUE(acl_matches("hdr(content-length) -m int 40:50", m));
  EXPECT_FALSE(acl_matches("hdr(host) -m int 42", m));
  EXPECT_TRUE(acl_matches("hdr(host) -m sub -i EXAMPLE", m));
  // No name: every field.
  EXPECT_TRUE(acl_matches("hdr_cnt gt 5", m));
  EXPECT_TRUE(acl_matches("hdr 42", m));
}

TEST(Acl, Method) {
  Msg m;
  m.method = "GET";
  EXPECT_TRUE(acl_matches("method GET", m));
  EXPECT_TRUE(acl_matches("method POST GET", m));
  EXPECT_FALSE(acl_matches("method POST", m));
  // Well-known methods compare exactly, like HAProxy's method identity; -i does not change it.
  EXPECT_FALSE(acl_matches("method get", m));
  // An unknown pattern name only matches unknown methods, even with -i (HAProxy 2.6).
  EXPECT_FALSE(acl_matches("method -i get", m));
  m.method = "POST";
  EXPECT_FALSE(acl_matches("method -i post", m));
  m.method = "get";
  EXPECT_TRUE(acl_matches("method -i get", m));
  m.method = "PURGE";
  EXPECT_TRUE(acl_matches("method PURGE", m));
  EXPECT_FALSE(acl_matches("method purge", m));
  EXPECT_TRUE(acl_matches("method -i purge", m));
  m.method = "get";
  EXPECT_FALSE(acl_matches("method GET", m));
  EXPECT_TRUE(acl_matches("method -m str get", m));
}

TEST(Acl, AddressesAndPorts) {
  Msg m;
  EXPECT_TRUE(acl_matches("src 10.0.0.0/8", m));
  EXPECT_TRUE(acl_matches("src 192.168.0.0/16 10.1.2.3", m));
  EXPECT_FALSE(acl_matches("src 192.168.0.0/16", m));
  EXPECT_TRUE(acl_matches("src -n 10.1.2.3/32", m));
  EXPECT_TRUE(acl_matches("src_port 40000", m));
  EXPECT_TRUE(acl_matches("dst 127.0.0.1", m));
  EXPECT_TRUE(acl_matches("dst_port 8080", m));
  EXPECT_TRUE(acl_matches("dst_port 80 8080", m));
  EXPECT_TRUE(acl_matches("dst_port 8000:8100", m));
  EXPECT_TRUE(acl_matches("dst_port :8080", m));
  EXPECT_TRUE(acl_matches("dst_port 8080:", m));
  EXPECT_FALSE(acl_matches("dst_port 8081:", m));
  EXPECT_FALSE(acl_matches("dst_port 1:1024", m));
  EXPECT_TRUE(acl_matches("dst_port eq 8080", m));
  EXPECT_FALSE(acl_matches("dst_port ne 8080", m));
  EXPECT_TRUE(acl_matches("dst_port ne 80", m));
  EXPECT_TRUE(acl_matches("dst_port lt 8081", m));
  EXPECT_FALSE(acl_matches("dst_port lt 8080", m));
  EXPECT_TRUE(acl_matches("dst_port le 8080", m));
  EXPECT_TRUE(acl_matches("dst_port gt 8079", m));
  EXPECT_FALSE(acl_matches("dst_port gt 8080", m));
  EXPECT_TRUE(acl_matches("dst_port ge 8080", m));
  // An operator applies to the next value only.
  EXPECT_TRUE(acl_matches("dst_port lt 10 8080", m));
  EXPECT_TRUE(acl_matches("src -m str 10.1.2.3", m));
  m.src = testing::addr("2001:db8::7", 1234);
  EXPECT_TRUE(acl_matches("src 2001:db8::/64", m));
  EXPECT_FALSE(acl_matches("src 10.0.0.0/8", m));
}

TEST(Acl, UrlParam) {
  Msg m;
  m.target = "/p?user=bob&id=12&debug=&user=alice";
  EXPECT_TRUE(acl_matches("url_param(user) bob", m));
  EXPECT_TRUE(acl_matches("url_param(user) alice", m));
  EXPECT_FALSE(acl_matches("url_param(User) bob", m));
  EXPECT_TRUE(acl_matches("urlp(id) 12", m));
  EXPECT_TRUE(acl_matches("urlp_val(id) gt 10", m));
  EXPECT_TRUE(acl_matches("urlp_beg(user) al", m));
  EXPECT_TRUE(acl_matches("urlp_reg(user) ^b.b$", m));
  EXPECT_TRUE(acl_matches("url_param(debug) -m found", m));
  EXPECT_FALSE(acl_matches("url_param(nope) -m found", m));
  m.target = "/p";
  EXPECT_FALSE(acl_matches("url_param(user) -m found", m));
}

TEST(Acl, ResponseCriteria) {
  Msg m;
  m.status = 404;
  m.res_fields = {{"Content-Type", "text/html"}, {"Set-Cookie", "a=1"}, {"Set-Cookie", "b=2"}};
  EXPECT_TRUE(acl_matches("status 404", m));
  EXPECT_TRUE(acl_matches("status 400:499", m));
  EXPECT_FALSE(acl_matches("status lt 400", m));
  EXPECT_TRUE(acl_matches("res.hdr(content-type) -m beg text/", m));
  EXPECT_TRUE(acl_matches("shdr(set-cookie) b=2", m));
  EXPECT_TRUE(acl_matches("shdr_sub(content-type) html", m));
  EXPECT_TRUE(acl_matches("res.hdr_cnt(set-cookie) 2", m));
  EXPECT_TRUE(acl_matches("res.hdr(x-none) -m len 0", m) == false);
  m.status = 0;   // a request: no response yet
  EXPECT_FALSE(acl_matches("status 404", m));
  EXPECT_FALSE(acl_matches("res.hdr(content-type) -m found", m));
}

TEST(Acl, VersionAndBooleans) {
  Msg m;
  EXPECT_TRUE(acl_matches("req.ver 1.1", m));
  EXPECT_TRUE(acl_matches("always_true", m));
  EXPECT_FALSE(acl_matches("always_false", m));
}

TEST(Acl, DashDashEndsFlags) {
  Msg m;
  m.fields = {{"X-Flag", "-i"}};
  EXPECT_TRUE(acl_matches("hdr(x-flag) -- -i", m));
  m.fields = {{"X-N", "-5"}};
  EXPECT_TRUE(acl_matches("hdr_val(x-n) -- -5", m));
}

TEST(Acl, SameNameLinesAreOred) {
  AclRegistry reg;
  ASSERT_TRUE(reg.parse_acl(testing::split("api path_beg /api")).ok());
  ASSERT_TRUE(reg.parse_acl(testing::split("api hdr(host) -i api.example.com")).ok());
  auto acl = reg.find("api");
  ASSERT_TRUE(acl);
  EXPECT_EQ(acl->terms.size(), 2u);
  auto c = parse_condition({"if", "api"}, reg);
  ASSERT_TRUE(c.ok());
  Msg m;
  m.target = "/api/x";
  EXPECT_TRUE(c->eval(m.view()));
  m.target = "/web";
  EXPECT_FALSE(c->eval(m.view()));
  m.fields = {{"Host", "API.example.com"}};
  EXPECT_TRUE(c->eval(m.view()));
}

TEST(Acl, Errors) {
  EXPECT_EQ(acl_error("foo bar"),
            "error detected while parsing ACL 'x' : unknown fetch method 'foo' in ACL expression 'foo'.");
  EXPECT_EQ(acl_error("foo(a) bar"),
            "error detected while parsing ACL 'x' : unknown fetch method 'foo' in ACL expression 'foo(a)'.");
  EXPECT_NE(acl_error("path_beg").find("no pattern to match against"), std::string::npos);
  EXPECT_EQ(acl_error("src -f /nonexistent/ips.lst"),
            "error detected while parsing ACL 'x' : failed to open pattern file </nonexistent/ips.lst>.");
  EXPECT_EQ(acl_error("hdr(a) -u x foo"),
            "error detected while parsing ACL 'x' : '-u' expects a positive integer as unique identifier (got 'x').");
  EXPECT_EQ(acl_error("path,foo /a"),
            "error detected while parsing ACL 'x' : unknown converter 'foo' in ACL expression 'path,foo'.");
  EXPECT_EQ(acl_error("path,lower(x) /a"),
            "error detected while parsing ACL 'x' : ACL keyword 'path' : invalid arg 1 in converter "
            "'lower' : expected ')' before 'x)'.");
  EXPECT_EQ(acl_error("path,add(1 /a"),
            "error detected while parsing ACL 'x' : ACL keyword 'path' : invalid arg 2 in converter "
            "'add' : expected ')'.");
  EXPECT_EQ(acl_error("path,field(x) a"),
            "error detected while parsing ACL 'x' : invalid arg 1 in converter 'field' : failed to "
            "parse 'x' as type 'integer' at position 1 in ACL expression 'path,field(x)'.");
  // As HAProxy 3.5: commas in a row are one, a comma that ends the expression is accepted.
  EXPECT_EQ(acl_error("path,lower,,upper a"), "");
  EXPECT_EQ(acl_error("path, a"), "");
  EXPECT_EQ(acl_error("path,add /a"), "error detected while parsing ACL 'x' : '/a' is not a number.");
  EXPECT_NE(acl_error("path -x /a").find("'-x' is not a valid ACL option"), std::string::npos);
  EXPECT_NE(acl_error("path -m foo /a").find("unknown matching method 'foo'"), std::string::npos);
  EXPECT_NE(acl_error("path -m bool").find("matching method 'bool' cannot be used with fetch keyword 'path'"), std::string::npos);
  EXPECT_NE(acl_error("src -m meth x").find("unknown matching method 'meth'"), std::string::npos);
  EXPECT_EQ(acl_error("path_reg ("), "error detected while parsing ACL 'x' : regex '(' is invalid "
                                     "(error=missing closing parenthesis, erroffset=1).");
  EXPECT_NE(acl_error("path -m reg -i a\\").find("regex 'a\\' is invalid (error=\\ at end of pattern, erroffset=2)"),
            std::string::npos);
  EXPECT_NE(acl_error("src 10.0.0.0/40").find("not a valid IPv4 or IPv6"), std::string::npos);
  EXPECT_NE(acl_error("dst_port abc").find("'abc' is not a number."), std::string::npos);
  EXPECT_NE(acl_error("dst_port 10:5").find("'10:5' is not a valid number range."), std::string::npos);
  EXPECT_NE(acl_error("dst_port gt").find("missing value after operator 'gt'"), std::string::npos);
  EXPECT_NE(acl_error("dst_port gt 1:5").find("not a valid integer after operator"), std::string::npos);
  EXPECT_EQ(acl_error("hdr(host -m found"),
            "error detected while parsing ACL 'x' : ACL keyword 'hdr' : expected ')'.");
  EXPECT_EQ(acl_error("path(x) /"),
            "error detected while parsing ACL 'x' : ACL keyword 'path' : expected ')' before 'x)'.");
  EXPECT_EQ(acl_error("hdr(a,b) x"),
            "error detected while parsing ACL 'x' : ACL keyword 'hdr' : failed to parse 'b' as type "
            "'integer' at position 2.");
  EXPECT_NE(acl_error("hdr(a) -m found x").find("takes no pattern"), std::string::npos);
  EXPECT_NE(acl_error("always_true x").find("takes no pattern"), std::string::npos);
  AclRegistry reg;
  EXPECT_EQ(reg.parse_acl({"a@b", "always_true"}).error().message,
            "character '@' is not permitted in acl name 'a@b'.");
  EXPECT_NE(reg.parse_acl({"or", "always_true"}).error().message.find("will never match"), std::string::npos);
  EXPECT_NE(reg.parse_acl({"name"}).error().message.find("missing ACL expression"), std::string::npos);
}

TEST(Acl, Predefined) {
  AclRegistry reg;
  auto eval = [&](const std::string& name, Msg& m) {
    auto c = parse_condition({"if", name}, reg);
    EXPECT_TRUE(c.ok()) << name;
    return c.ok() && c->eval(m.view());
  };
  Msg m;
  EXPECT_TRUE(eval("TRUE", m));
  EXPECT_FALSE(eval("FALSE", m));
  EXPECT_TRUE(eval("METH_GET", m));
  m.method = "HEAD";
  EXPECT_TRUE(eval("METH_GET", m));   // HAProxy: GET or HEAD
  EXPECT_TRUE(eval("METH_HEAD", m));
  for (auto [meth, acl] : std::vector<std::pair<std::string, std::string>>{
           {"POST", "METH_POST"}, {"PUT", "METH_PUT"}, {"DELETE", "METH_DELETE"},
           {"OPTIONS", "METH_OPTIONS"}, {"TRACE", "METH_TRACE"}, {"CONNECT", "METH_CONNECT"}}) {
    m.method = meth;
    EXPECT_TRUE(eval(acl, m)) << acl;
    EXPECT_FALSE(eval("METH_GET", m)) << meth;
  }
  m.method = "GET";
  EXPECT_TRUE(eval("HTTP_1.1", m));
  EXPECT_FALSE(eval("HTTP_1.0", m));
  m.version = "HTTP/1.0";
  EXPECT_TRUE(eval("HTTP_1.0", m));
  EXPECT_FALSE(eval("LOCALHOST", m));
  m.src = testing::addr("127.0.0.5", 1);
  EXPECT_TRUE(eval("LOCALHOST", m));
  m.src = testing::addr("::1", 1);
  EXPECT_TRUE(eval("LOCALHOST", m));
  m.target = "/x";
  EXPECT_TRUE(eval("HTTP_URL_SLASH", m));
  EXPECT_FALSE(eval("HTTP_URL_ABS", m));
  m.target = "http://h/x";
  EXPECT_TRUE(eval("HTTP_URL_ABS", m));
  EXPECT_FALSE(eval("HTTP_CONTENT", m));
  m.fields = {{"Content-Length", "3"}};
  EXPECT_TRUE(eval("HTTP_CONTENT", m));
  m.fields = {{"Content-Length", "0"}};
  EXPECT_FALSE(eval("HTTP_CONTENT", m));
  // A user ACL of the same name wins over the predefined one.
  ASSERT_TRUE(reg.parse_acl({"TRUE", "always_false"}).ok());
  EXPECT_FALSE(eval("TRUE", m));
}

}  // namespace
}  // namespace sluice::rules

namespace sluice::rules {
namespace {

using testing::Msg;

// The acl() fetch: the ACLs declared so far in the registry being parsed, ANDed, '!' negating.
TEST(AclFetch, ResolvesDeclaredAcls) {
  AclRegistry reg;
  sample::AclResolverScope scope(&reg);
  ASSERT_TRUE(reg.parse_acl(testing::split("is_a path_beg /a")).ok());
  ASSERT_TRUE(reg.parse_acl(testing::split("is_get method GET")).ok());
  // as an ACL criterion (a boolean)
  ASSERT_TRUE(reg.parse_acl(testing::split("both acl(is_a,is_get)")).ok());
  ASSERT_TRUE(reg.parse_acl(testing::split("a_not_get acl(is_a,!is_get)")).ok());
  auto both = parse_condition({"if", "both"}, reg);
  auto a_not_get = parse_condition({"if", "a_not_get"}, reg);
  ASSERT_TRUE(both.ok() && a_not_get.ok());
  Msg m;
  m.method = "GET";
  m.target = "/a/x";
  EXPECT_TRUE(both->eval(m.view()));
  EXPECT_FALSE(a_not_get->eval(m.view()));
  m.method = "POST";
  EXPECT_FALSE(both->eval(m.view()));
  EXPECT_TRUE(a_not_get->eval(m.view()));
  // in a format, with converters, and with a predefined ACL
  auto f = ValueFormat::parse("%[acl(is_a)]-%[acl(!is_a),not]-%[acl(TRUE)]");
  ASSERT_TRUE(f.ok()) << f.error().message;
  std::string out;
  f->render(m.view(), out);
  EXPECT_EQ(out, "1-1-1");
  m.target = "/b";
  out.clear();
  f->render(m.view(), out);
  EXPECT_EQ(out, "0-0-1");
}

TEST(AclFetch, Errors) {
  AclRegistry reg;
  {
    sample::AclResolverScope scope(&reg);
    ASSERT_TRUE(reg.parse_acl(testing::split("is_a path_beg /a")).ok());
    auto later = ValueFormat::parse("%[acl(is_a,!is_c)]");
    ASSERT_FALSE(later.ok());
    EXPECT_EQ(later.error().message,
              "failed to parse sample expression <acl(is_a,!is_c)]> : invalid args in fetch method "
              "'acl' : ACL 'is_c' not found");
    // an ACL line cannot reach its own ACL, directly or through another one
    ASSERT_TRUE(reg.parse_acl(testing::split("uses_a acl(is_a)")).ok());
    EXPECT_NE(reg.parse_acl(testing::split("is_a acl(uses_a)")).error().message.find(
                  "ACL 'is_a' would evaluate itself through ACL 'uses_a'"),
              std::string::npos);
    EXPECT_NE(reg.parse_acl(testing::split("is_a acl(is_a)")).error().message.find("would evaluate itself"),
              std::string::npos);
    // a first definition does not see itself: not found, as in HAProxy
    EXPECT_NE(reg.parse_acl(testing::split("fresh acl(fresh)")).error().message.find("ACL 'fresh' not found"),
              std::string::npos);
  }
  // outside a proxy's parsing there are no ACLs
  auto none = ValueFormat::parse("%[acl(is_a)]");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("ACL 'is_a' not found"), std::string::npos);
}

}  // namespace
}  // namespace sluice::rules

namespace sluice::rules {
namespace {

// when(acl,<name>): the sample passes when the ACL matches; `!acl` inverts; the name itself
// takes no '!', as in HAProxy.
TEST(AclFetch, WhenAcl) {
  AclRegistry reg;
  sample::AclResolverScope scope(&reg);
  ASSERT_TRUE(reg.parse_acl(testing::split("is_a path_beg /a")).ok());
  auto f = ValueFormat::parse("[%[str(y),when(acl,is_a)]|%[str(n),when(!acl,is_a)]]");
  ASSERT_TRUE(f.ok()) << f.error().message;
  testing::Msg m;
  m.target = "/a";
  std::string out;
  f->render(m.view(), out);
  EXPECT_EQ(out, "[y|]");
  m.target = "/b";
  out.clear();
  f->render(m.view(), out);
  EXPECT_EQ(out, "[|n]");
  auto bad = ValueFormat::parse("%[str(y),when(acl,!is_a)]");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("invalid args in converter 'when' : ACL '!is_a' not found"), std::string::npos);
}

}  // namespace
}  // namespace sluice::rules

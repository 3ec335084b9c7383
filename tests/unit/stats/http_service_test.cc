// The statistics page and the Prometheus exporter as HTTP services: which requests are theirs
// and what they answer.
#include "stats/http_service.h"

#include <gtest/gtest.h>

#include "fake_control.h"
#include "fake_source.h"

namespace sluice::stats {
namespace {

using K = Reply::Kind;
using M = ServiceRequest::Method;

PageSettings page() {
  PageSettings s;
  s.enabled = true;
  s.uri = "/stats";
  s.realm = "HAProxy Statistics";
  return s;
}

Reply ask(std::string_view target, const PageSettings& s = page(), M method = M::kGet,
          std::optional<std::string_view> auth = std::nullopt) {
  testing::FakeSource src;
  ServiceRequest r;
  r.method = method;
  r.target = target;
  r.authorization = auth;
  return HttpService(src).stats_page(r, s);
}

TEST(statsHttpService, WhichRequestsArePages) {
  EXPECT_EQ(ask("/stats").kind, K::kPage);
  EXPECT_EQ(ask("/statsfoo").kind, K::kPage);   // a prefix, as in HAProxy
  EXPECT_EQ(ask("/other").kind, K::kNotMine);
  EXPECT_EQ(ask("http://h:1/stats;csv").kind, K::kPage);   // absolute form: from the path on
  EXPECT_EQ(ask("http://h:1").kind, K::kNotMine);
  EXPECT_EQ(ask("/stats", page(), M::kHead).kind, K::kPage);
  EXPECT_EQ(ask("/stats", page(), M::kOther).kind, K::kNotMine);
  PageSettings off = page();
  off.enabled = false;
  EXPECT_EQ(ask("/stats", off).kind, K::kNotMine);
}

TEST(statsHttpService, FormsAndHeaders) {
  Reply html = ask("/stats");
  EXPECT_EQ(html.content_type, "text/html");
  EXPECT_EQ(html.headers, "");
  EXPECT_TRUE(html.body.starts_with("<!DOCTYPE html>"));
  Reply csv = ask("/stats;csv;up");
  EXPECT_EQ(csv.content_type, "text/plain");
  EXPECT_TRUE(csv.body.starts_with("# pxname,"));
  EXPECT_EQ(csv.body.find("s2<b>"), std::string::npos);   // `;up` hides maintenance
  EXPECT_EQ(ask("/stats;json").content_type, "application/json");
  EXPECT_EQ(ask("/stats;typed").content_type, "text/plain");
  EXPECT_EQ(ask("/stats;json-schema").kind, K::kNotFound);
  PageSettings refresh = page();
  refresh.refresh_s = 10;
  EXPECT_EQ(ask("/stats", refresh).headers, "refresh: 10\r\n");
  EXPECT_EQ(ask("/stats;norefresh", refresh).headers, "");
}

TEST(statsHttpService, ScopeOption) {
  std::string body = ask("/stats;csv?scope=be").body;
  EXPECT_EQ(body.find("\nfe,"), std::string::npos);
  EXPECT_NE(body.find("\nbe,"), std::string::npos);
  // Not a name: ignored.
  EXPECT_NE(ask("/stats;csv?scope=a/b").body.find("\nfe,"), std::string::npos);
}

TEST(statsHttpService, PostIsDenied) {
  Reply r = ask("/stats", page(), M::kPost);
  EXPECT_EQ(r.kind, K::kRedirect);
  EXPECT_EQ(r.location, "/stats;st=DENY");
  EXPECT_NE(ask("/stats;st=DENY").body.find("<b>Action denied.</b>"), std::string::npos);
}

// A POST with `stats admin` applying, against the fake control.
struct AdminPost {
  testing::FakeSource src;
  testing::FakeControl control;
  ServiceRequest req;
  AdminPost() {
    req.method = M::kPost;
    req.target = "/stats;up;st=NONE";
    req.admin = true;
  }
  Reply send(ServerControl* c) const { return HttpService(src, c).stats_page(req, page()); }
  Reply send() { return send(&control); }
};

TEST(statsHttpService, AdminPost) {
  AdminPost p;
  // The body first: the transaction waits for it and asks again.
  EXPECT_EQ(p.send().kind, K::kNeedBody);
  p.req.body_state = ServiceRequest::Body::kComplete;
  p.req.body = "s=s1&s=s2&action=maint&b=%233";
  Reply r = p.send();
  EXPECT_EQ(r.kind, K::kRedirect);
  // Always the configured prefix, whatever the POST's target carried.
  EXPECT_EQ(r.location, "/stats;st=DONE");
  EXPECT_EQ(p.control.calls, (std::vector<std::string>{"admin s2 maint", "admin s1 maint"}));
  p.req.body = "s=s1&s=zz&action=ready&b=be";
  EXPECT_EQ(p.send().location, "/stats;st=PART");
  p.req.body = "";
  EXPECT_EQ(p.send().location, "/stats;st=NONE");
  p.req.body = "s=s1&action=ready&b=nobe";
  EXPECT_EQ(p.send().location, "/stats;st=ERRP");
  p.req.body_state = ServiceRequest::Body::kTooLarge;
  EXPECT_EQ(p.send().location, "/stats;st=EXCD");
  // Without admin rights, or without a control to apply it: denied, the body unread.
  p.req.body_state = ServiceRequest::Body::kNotRead;
  EXPECT_EQ(p.send(nullptr).location, "/stats;st=DENY");
  p.req.admin = false;
  EXPECT_EQ(p.send().location, "/stats;st=DENY");
}

TEST(statsHttpService, Claims) {
  PageSettings s = page();
  ServiceRequest r;
  r.target = "/stats;csv";
  EXPECT_TRUE(HttpService::claims(r, s));
  r.target = "http://h:8080/stats?x";
  EXPECT_TRUE(HttpService::claims(r, s));
  r.target = "/other";
  EXPECT_FALSE(HttpService::claims(r, s));
  r.target = "/stats";
  r.method = M::kOther;
  EXPECT_FALSE(HttpService::claims(r, s));
  r.method = M::kPost;
  EXPECT_TRUE(HttpService::claims(r, s));
  s.enabled = false;
  EXPECT_FALSE(HttpService::claims(r, s));
}

TEST(statsHttpService, AdminPage) {
  testing::FakeSource src;
  ServiceRequest r;
  r.target = "/stats";
  EXPECT_EQ(HttpService(src).stats_page(r, page()).body.find("<form method=\"post\">"),
            std::string::npos);
  r.admin = true;
  EXPECT_NE(HttpService(src).stats_page(r, page()).body.find("<form method=\"post\">"),
            std::string::npos);
}

TEST(statsHttpService, StatusCodeOption) {
  auto banner = [](std::string_view target) {
    std::string body = ask(target).body;
    std::size_t at = body.find("<p><div class=");
    if (at == std::string::npos) return std::string();
    return body.substr(at, body.find("</div>", at) + 6 - at);
  };
  EXPECT_EQ(banner("/stats;st=DONE"),
            "<p><div class=active_up><a class=lfsb href=\"/stats\" title=\"Remove this "
            "message\">[X]</a> Action processed successfully.</div>");
  // The first four characters are the code, whatever follows; fewer than four: no banner.
  EXPECT_NE(banner("/stats;st=DONEXX").find("Action processed successfully."), std::string::npos);
  EXPECT_NE(banner("/stats;st=NONE?scope=be").find("Nothing has changed."), std::string::npos);
  EXPECT_NE(banner("/stats;st=done").find("Unexpected result."), std::string::npos);
  EXPECT_NE(banner("/stats;st=DON;").find("Unexpected result."), std::string::npos);
  EXPECT_EQ(banner("/stats;st=DON"), "");
  EXPECT_EQ(banner("/stats;st="), "");
  // The [X] keeps `;up` and the scope, not `;norefresh`.
  EXPECT_NE(banner("/stats;up;norefresh;st=DONE?scope=be").find("href=\"/stats;up?scope=be\""),
            std::string::npos);
}

TEST(statsHttpService, BasicAuth) {
  PageSettings s = page();
  s.auth = {"admin:secret"};
  s.realm = "Mine";
  Reply r = ask("/stats", s);
  EXPECT_EQ(r.kind, K::kUnauthorized);
  EXPECT_EQ(r.realm, "Mine");
  EXPECT_EQ(ask("/stats", s, M::kGet, "Basic YWRtaW46c2VjcmV0").kind, K::kPage);
  EXPECT_EQ(ask("/stats", s, M::kGet, "basic  YWRtaW46c2VjcmV0 ").kind, K::kPage);
  EXPECT_EQ(ask("/stats", s, M::kGet, "Basic YWRtaW46b3RoZXI=").kind, K::kUnauthorized);
  EXPECT_EQ(ask("/stats", s, M::kGet, "Bearer YWRtaW46c2VjcmV0").kind, K::kUnauthorized);
  // Before the POST check: a POST without credentials is a 401.
  EXPECT_EQ(ask("/stats", s, M::kPost).kind, K::kUnauthorized);
}

TEST(statsHttpService, Prometheus) {
  testing::FakeSource src;
  ServiceRequest r;
  r.target = "/metrics";
  Reply all = HttpService(src).prometheus(r);
  EXPECT_EQ(all.kind, K::kPage);
  EXPECT_EQ(all.content_type, "text/plain; version=0.0.4");
  EXPECT_NE(all.body.find("haproxy_server_"), std::string::npos);
  r.target = "/metrics?scope=frontend&scope=backend";
  Reply some = HttpService(src).prometheus(r);
  EXPECT_NE(some.body.find("haproxy_frontend_"), std::string::npos);
  EXPECT_NE(some.body.find("haproxy_backend_"), std::string::npos);
  EXPECT_EQ(some.body.find("haproxy_server_"), std::string::npos);
  r.target = "/metrics?no-maint";
  EXPECT_EQ(HttpService(src).prometheus(r).body.find("s2<b>"), std::string::npos);
}

}  // namespace
}  // namespace sluice::stats

// The statistics page and the Prometheus exporter as HTTP services: which requests are theirs
// and what they answer.
#include "stats/http_service.h"

#include <gtest/gtest.h>

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
  EXPECT_NE(ask("/stats;st=DENY").body.find("Action denied. (DENY)"), std::string::npos);
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

// The bodies of the statistics page and of the Prometheus exporter.
#include "stats/page.h"

#include <gtest/gtest.h>

#include "fake_source.h"

namespace sluice::stats {
namespace {

std::string render(const StatsPageQuery& q) { return render_stats_page(testing::FakeSource(), q); }

TEST(statsPage, CsvHasNoFinalEmptyLine) {
  StatsPageQuery q;
  q.format = StatsPageQuery::Format::kCsv;
  std::string body = render(q);
  EXPECT_TRUE(body.starts_with("# pxname,")) << body;
  EXPECT_FALSE(body.ends_with("\n\n"));
  EXPECT_NE(body.find("\nbe,s2<b>,"), std::string::npos);
}

TEST(statsPage, Scopes) {
  StatsPageQuery q;
  q.format = StatsPageQuery::Format::kCsv;
  q.scope_names = {"be"};
  std::string body = render(q);
  EXPECT_EQ(body.find("\nfe,"), std::string::npos);
  EXPECT_NE(body.find("\nbe,BACKEND,"), std::string::npos);
  q.scope_names.clear();
  q.scope_text = "FE";   // case-insensitive substring
  body = render(q);
  EXPECT_NE(body.find("\nfe,FRONTEND,"), std::string::npos);
  EXPECT_EQ(body.find("\nbe,"), std::string::npos);
  q.hide_maint = true;
  q.scope_text.clear();
  EXPECT_EQ(render(q).find("s2<b>"), std::string::npos);
}

TEST(statsPage, Html) {
  StatsPageQuery q;
  q.uri = "/st";
  q.node = "n1";
  q.refresh_s = 5;
  q.status = "DENY";
  std::string body = render(q);
  EXPECT_TRUE(body.starts_with("<!DOCTYPE html>\n<html><head><title>Statistics Report for sluice on n1</title>"))
      << body;
  EXPECT_NE(body.find("<p>sluice 9.9, pid = 4242, nbthread = 2, uptime = 0d 0h01m43s, current "
                      "connections = 3, maxconn = 50, refresh every 5 s</p>"),
            std::string::npos);
  EXPECT_NE(body.find("<p class=\"status\">Action denied. (DENY)</p>"), std::string::npos);
  EXPECT_NE(body.find("<a href=\"/st;csv\">CSV export</a>"), std::string::npos);
  EXPECT_NE(body.find("<tr class=\"maint\"><td class=\"n\">s2&lt;b&gt;</td>"), std::string::npos);
  EXPECT_NE(body.find("<td>1h2m</td>"), std::string::npos) << body;   // lastchg 3725 s
  EXPECT_EQ(body.find("sock-1"), std::string::npos);   // listener rows are summed in FRONTEND
  EXPECT_TRUE(body.ends_with("</body></html>\n"));
  q.hide_version = true;
  EXPECT_EQ(render(q).find("sluice 9.9"), std::string::npos);
}

TEST(statsPage, PrometheusGroups) {
  StatsPageQuery q;
  q.format = StatsPageQuery::Format::kPrometheus;
  std::string all = render(q);
  EXPECT_NE(all.find("haproxy_frontend_current_sessions{proxy=\"fe\"}"), std::string::npos) << all;
  EXPECT_NE(all.find("haproxy_server_sessions_total{proxy=\"be\",server=\"s1\"} 7"),
            std::string::npos);
  q.prom_global = q.prom_backend = q.prom_server = false;
  std::string fe = render(q);
  EXPECT_NE(fe.find("haproxy_frontend_"), std::string::npos);
  EXPECT_EQ(fe.find("haproxy_server_"), std::string::npos);
  EXPECT_EQ(fe.find("haproxy_backend_"), std::string::npos);
}

}  // namespace
}  // namespace sluice::stats

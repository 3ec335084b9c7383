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
  EXPECT_NE(body.find("<p><div class=active_down><a class=lfsb href=\"/st\" title=\"Remove "
                      "this message\">[X]</a> <b>Action denied.</b></div>\n"),
            std::string::npos);
  EXPECT_NE(body.find("<a href=\"/st;csv\">CSV export</a>"), std::string::npos);
  EXPECT_NE(body.find("<tr class=\"maint\"><td class=\"n\">s2&lt;b&gt;</td>"), std::string::npos);
  EXPECT_NE(body.find("<td>1h2m</td>"), std::string::npos) << body;   // lastchg 3725 s
  EXPECT_EQ(body.find("sock-1"), std::string::npos);   // listener rows are summed in FRONTEND
  EXPECT_TRUE(body.ends_with("</body></html>\n"));
  // Without admin: no form, no checkbox, no action select.
  EXPECT_EQ(body.find("<form"), std::string::npos);
  EXPECT_EQ(body.find("checkbox"), std::string::npos);
  EXPECT_EQ(body.find("<select"), std::string::npos);
  q.hide_version = true;
  EXPECT_EQ(render(q).find("sluice 9.9"), std::string::npos);
}

TEST(statsPage, Banners) {
  StatsPageQuery q;
  q.uri = "/st";
  auto banner = [&](const char* code) {
    q.status = code;
    std::string body = render(q);
    std::size_t at = body.find("<p><div class=");
    EXPECT_NE(at, std::string::npos) << code;
    // After the header, before the first proxy.
    EXPECT_LT(body.find("CSV export"), at);
    EXPECT_GT(body.find("<h3>"), at);
    return body.substr(at, body.find('\n', at) - at);
  };
  const std::string x = "<a class=lfsb href=\"/st\" title=\"Remove this message\">[X]</a> ";
  EXPECT_EQ(banner("DONE"),
            "<p><div class=active_up>" + x + "Action processed successfully.</div>");
  EXPECT_EQ(banner("NONE"), "<p><div class=active_going_down>" + x + "Nothing has changed.</div>");
  EXPECT_EQ(banner("PART"), "<p><div class=active_going_down>" + x +
                                "Action partially processed.<br>Some server names are probably "
                                "unknown or ambiguous (duplicated names in the backend).</div>");
  EXPECT_EQ(banner("ERRP"),
            "<p><div class=active_down>" + x +
                "Action not processed because of invalid parameters.<ul><li>The action is maybe "
                "unknown.</li><li>Invalid key parameter (empty or too long).</li><li>The backend "
                "name is probably unknown or ambiguous (duplicated names).</li><li>Some server "
                "names are probably unknown or ambiguous (duplicated names in the "
                "backend).</li></ul></div>");
  EXPECT_EQ(banner("EXCD"), "<p><div class=active_down>" + x +
                                "<b>Action not processed : the buffer couldn't store all the "
                                "data.<br>You should retry with less servers at a time.</b></div>");
  EXPECT_EQ(banner("DENY"), "<p><div class=active_down>" + x + "<b>Action denied.</b></div>");
  EXPECT_EQ(banner("IVAL"), "<p><div class=active_down>" + x +
                                "<b>Invalid requests (unsupported method or chunked encoded "
                                "request).</b></div>");
  EXPECT_EQ(banner("ABCD"), "<p><div class=active_no_check>" + x + "Unexpected result.</div>");
  q.status.clear();
  EXPECT_EQ(render(q).find("<p><div class="), std::string::npos);
}

TEST(statsPage, AdminForm) {
  StatsPageQuery q;
  q.uri = "/st";
  q.admin = true;
  std::string body = render(q);
  // One form, for be (fe has no servers), enclosing its title and table, no action attribute.
  std::size_t form = body.find("<form method=\"post\"><h3>be (3, mode http)</h3>");
  ASSERT_NE(form, std::string::npos) << body;
  EXPECT_EQ(body.find("<form", form + 1), std::string::npos);
  EXPECT_LT(body.find("<h3>fe"), form);
  // A checkbox per server (names escaped), an empty first cell on the backend row, and a
  // header box that ticks them all.
  EXPECT_NE(body.find("<tr class=\"srv\"><td><input class='be-checkbox' type=\"checkbox\" "
                      "name=\"s\" value=\"s1\"></td><td class=\"n\">s1</td>"),
            std::string::npos);
  EXPECT_NE(body.find("<td><input class='be-checkbox' type=\"checkbox\" name=\"s\" "
                      "value=\"s2&lt;b&gt;\"></td><td class=\"n\">s2&lt;b&gt;</td>"),
            std::string::npos);
  EXPECT_NE(body.find("<tr class=\"be\"><td></td><td class=\"n\">BACKEND</td>"),
            std::string::npos);
  EXPECT_NE(body.find("<tr><th><input type=\"checkbox\" title=\"Select all\""),
            std::string::npos);
  // fe's table has no checkbox column.
  EXPECT_NE(body.find("<tr class=\"fe\"><td class=\"n\">FRONTEND</td>"), std::string::npos);
  EXPECT_NE(
      body.find("</table></div>\nChoose the action to perform on the checked servers : <select "
                "name=action><option value=\"\"></option><option value=\"ready\">Set state to "
                "READY</option><option value=\"drain\">Set state to DRAIN</option><option "
                "value=\"maint\">Set state to MAINT</option><option value=\"dhlth\">Health: "
                "disable checks</option><option value=\"ehlth\">Health: enable "
                "checks</option><option value=\"hrunn\">Health: force UP</option><option "
                "value=\"hnolb\">Health: force NOLB</option><option value=\"hdown\">Health: "
                "force DOWN</option><option value=\"dagent\">Agent: disable "
                "checks</option><option value=\"eagent\">Agent: enable checks</option><option "
                "value=\"arunn\">Agent: force UP</option><option value=\"adown\">Agent: force "
                "DOWN</option><option value=\"shutdown\">Kill Sessions</option></select><input "
                "type=\"hidden\" name=\"b\" value=\"#3\">&nbsp;<input type=\"submit\" "
                "value=\"Apply\"></form>\n"),
      std::string::npos)
      << body;
  // The page is at most 1280 px wide; tables scroll inside it.
  EXPECT_NE(body.find(".page{max-width:1280px"), std::string::npos);
  EXPECT_NE(body.find("<body><div class=\"page\">"), std::string::npos);
  // The form stays even when `;no-maint` hides a server.
  q.hide_maint = true;
  body = render(q);
  EXPECT_NE(body.find("<form method=\"post\">"), std::string::npos);
  EXPECT_EQ(body.find("value=\"s2&lt;b&gt;\""), std::string::npos);
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

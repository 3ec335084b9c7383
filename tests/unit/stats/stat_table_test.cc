// The `show stat` table: columns by position, rows per object, filters and the three forms.
#include "stats/stat_table.h"

#include <gtest/gtest.h>

#include "fake_source.h"

namespace sluice::stats {
namespace {

std::vector<StatRow> rows_of(const StatFilter& f) {
  std::vector<StatRow> rows;
  for (const auto& px : testing::FakeSource().proxies()) stat_rows(px, f, &rows);
  return rows;
}

TEST(statsStatTable, ColumnsByPosition) {
  const auto& names = stat_column_names();
  ASSERT_EQ(names.size(), kStatColumns);
  EXPECT_EQ(names[0], "pxname");
  EXPECT_EQ(names[17], "status");
  EXPECT_EQ(names[119], "-");
  EXPECT_EQ(stat_column("svname"), 1u);
  EXPECT_EQ(stat_column("no-such-column"), 119u);
}

TEST(statsStatTable, RowsInShowStatOrder) {
  std::vector<StatRow> rows = rows_of({});
  ASSERT_EQ(rows.size(), 5u);   // FRONTEND, sock-1, s1, s2, BACKEND
  EXPECT_EQ(rows[0].kind, StatRow::kFrontend);
  EXPECT_EQ(rows[0].v[1], "FRONTEND");
  EXPECT_EQ(rows[1].kind, StatRow::kListener);
  EXPECT_EQ(rows[1].v[1], "sock-1");
  EXPECT_EQ(rows[2].kind, StatRow::kServer);
  EXPECT_EQ(rows[2].v[stat_column("type")], "2");
  EXPECT_EQ(rows[2].v[stat_column("stot")], "7");
  EXPECT_EQ(rows[4].kind, StatRow::kBackend);
  EXPECT_EQ(rows[4].v[1], "BACKEND");
  // addr is a legend: empty unless asked for.
  EXPECT_EQ(rows[2].v[stat_column("addr")], "");
  StatFilter legends;
  legends.show_legends = true;
  EXPECT_EQ(rows_of(legends)[2].v[stat_column("addr")], "127.0.0.1:18081");
}

TEST(statsStatTable, Filters) {
  StatFilter no_maint;
  no_maint.hide_maint = true;
  EXPECT_EQ(rows_of(no_maint).size(), 4u);   // s2 is left out
  StatFilter servers;
  servers.bound = true;
  servers.iid = 3;
  servers.type = 4;
  servers.sid = 1;
  std::vector<StatRow> rows = rows_of(servers);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].v[1], "s1");
}

TEST(statsStatTable, Forms) {
  StatFilter f;
  f.bound = true;
  f.iid = 2;
  f.type = 1;
  f.sid = -1;
  std::vector<StatRow> rows;
  for (const auto& px : testing::FakeSource().proxies())
    if (px.id == 2) stat_rows(px, f, &rows);
  ASSERT_EQ(rows.size(), 1u);
  std::string csv;
  format_stat_rows(rows, StatFormat::kCsv, &csv);
  EXPECT_TRUE(csv.starts_with("# pxname,svname,qcur,")) << csv;
  EXPECT_NE(csv.find("\nfe,FRONTEND,"), std::string::npos) << csv;
  EXPECT_TRUE(csv.ends_with(",-,\n")) << csv;
  std::string typed;
  format_stat_rows(rows, StatFormat::kTyped, &typed);
  EXPECT_TRUE(typed.starts_with("F.2.0.0.pxname.1:KNSV:str:fe\n")) << typed;
  std::string json;
  format_stat_rows(rows, StatFormat::kJson, &json);
  EXPECT_TRUE(json.starts_with(R"([[{"objType":"Frontend","proxyId":2,"id":0,"field":{"pos":0,"name":"pxname"})"))
      << json;
  EXPECT_TRUE(json.ends_with("]]\n"));
}

}  // namespace
}  // namespace sluice::stats

// Value formats shared by show info, show stat and the statistics page.
#include "stats/fields.h"

#include <gtest/gtest.h>

namespace sluice::stats {
namespace {

TEST(statsFields, CsvEscape) {
  EXPECT_EQ(csv_escape("plain"), "plain");
  EXPECT_EQ(csv_escape("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_escape("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_escape("l1\r\nl2  "), "\"l1 l2\"");
  EXPECT_EQ(csv_escape("trail  "), "trail");
}

TEST(statsFields, Uptime) {
  EXPECT_EQ(format_uptime(103), "0d 0h01m43s");
  EXPECT_EQ(format_uptime(86400 * 2 + 3600 * 5 + 7), "2d 5h00m07s");
}

TEST(statsFields, JsonEscape) {
  EXPECT_EQ(json_escape("a\"b\\c\n\t"), "a\\\"b\\\\c\\n\\t");
  EXPECT_EQ(json_escape(std::string_view("\x01", 1)), "\\u0001");
}

TEST(statsFields, TypedValues) {
  EXPECT_STREQ(field_type_name(FieldType::kU64), "u64");
  EXPECT_EQ(json_tags("MCPP"), R"({"origin":"Metric","nature":"Counter","scope":"Process"})");
  EXPECT_EQ(json_tags(""), R"({"origin":"Unknown","nature":"Unknown","scope":"Unknown"})");
  EXPECT_EQ(json_value(FieldType::kU32, "12"), R"({"type":"u32","value":12})");
  EXPECT_EQ(json_value(FieldType::kStr, "a\"b"), R"({"type":"str","value":"a\"b"})");
}

}  // namespace
}  // namespace sluice::stats

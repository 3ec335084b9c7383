// docs/config-compat.md must list exactly what the keyword tables say: its two keyword tables
// are the rendering of keyword_docs(), so changing a table's help text means updating the doc.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "config/loader.h"

namespace sluice::config {
namespace {

std::string escape(const std::string& s, bool lt) {
  std::string out;
  for (char c : s) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '<' && lt) {
      out += "&lt;";
    } else {
      out += c;
    }
  }
  return out;
}

std::string table(const std::string& section) {
  std::string t = "| keyword | syntax / notes |\n|---|---|\n";
  for (const auto& d : keyword_docs())
    if (d.section == section) t += "| `" + escape(d.keyword, false) + "` | " + escape(d.help, true) + " |\n";
  return t;
}

TEST(Docs, ConfigCompatTablesMatchTheKeywordTables) {
  // SLUICE_SOURCE_DIR from CMake: under ccache's base_dir __FILE__ is relative.
  std::string root = SLUICE_SOURCE_DIR;
  std::ifstream in(root + "/docs/config-compat.md");
  ASSERT_TRUE(in) << "cannot read " << root << "/docs/config-compat.md";
  std::stringstream ss;
  ss << in.rdbuf();
  std::string doc = ss.str();
  for (const char* section : {"global", "proxies"}) {
    std::string t = table(section);
    EXPECT_NE(doc.find("### " + std::string(section) + "\n\n" + t), std::string::npos)
        << "docs/config-compat.md: the '" << section << "' table should read:\n" << t;
  }
}

TEST(Docs, EveryTableKeywordHasHelp) {
  auto docs = keyword_docs();
  EXPECT_GT(docs.size(), 30u);
  for (const auto& d : docs) EXPECT_FALSE(d.help.empty()) << d.keyword;
}

}  // namespace
}  // namespace sluice::config

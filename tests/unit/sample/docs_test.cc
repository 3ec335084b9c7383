// docs/config-compat.md lists every fetch and every converter of HAProxy 3.5 (the names its
// `haproxy -dKsmp` and `-dKcnv` print, sections 7.3.1 to 7.3.6 of its manual) with sluice's
// status, and that status is the registry's: "supported" when sluice/sample has it, else
// "refused: <reason>" with the reason the parser gives (registry.cc's refusal lists). A fetch
// or converter added, or a reason changed, without the doc fails here, with the table to paste.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sample/expr.h"

namespace sluice::sample {
namespace {

std::string read_doc() {
  std::ifstream in(std::string(SLUICE_SOURCE_DIR) + "/docs/config-compat.md");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Table {
  std::string text;                // the table as written, header included
  std::vector<std::string> names;  // its first column
};

// The table right after `heading` ("### Fetches\n\n| ..."), up to the first line that is not
// a table row.
Table find_table(const std::string& doc, const std::string& heading) {
  Table t;
  std::size_t p = doc.find(heading + "\n\n");
  if (p == std::string::npos) return t;
  p += heading.size() + 2;
  int row = 0;
  while (p < doc.size() && doc[p] == '|') {
    std::size_t eol = doc.find('\n', p);
    if (eol == std::string::npos) eol = doc.size();
    std::string line = doc.substr(p, eol - p);
    t.text += line + "\n";
    if (row++ >= 2) {
      std::size_t a = line.find('`'), b = line.find('`', a + 1);
      if (a != std::string::npos && b != std::string::npos)
        t.names.push_back(line.substr(a + 1, b - a - 1));
    }
    p = eol + 1;
  }
  return t;
}

std::string status(bool provided, std::string_view why) {
  if (provided) return "supported";
  if (why.empty()) return "";
  return "refused: " + std::string(why);
}

void check(const std::string& heading, const char* what, const std::vector<std::string_view>& ours,
           bool (*provided)(std::string_view), std::string_view (*refused)(std::string_view)) {
  std::string doc = read_doc();
  ASSERT_FALSE(doc.empty()) << "cannot read " << SLUICE_SOURCE_DIR << "/docs/config-compat.md";
  Table t = find_table(doc, heading);
  ASSERT_GT(t.names.size(), 100u) << "docs/config-compat.md has no table under '" << heading << "'";
  EXPECT_TRUE(std::is_sorted(t.names.begin(), t.names.end())) << heading << ": not sorted";
  std::set<std::string> listed(t.names.begin(), t.names.end());
  EXPECT_EQ(listed.size(), t.names.size()) << heading << ": a name is listed twice";
  for (std::string_view n : ours)
    EXPECT_TRUE(listed.count(std::string(n)))
        << "sluice provides the " << what << " '" << n << "', which '" << heading
        << "' does not list (HAProxy 3.5 has no such name?)";
  std::string want = "| " + std::string(what) + " | status in sluice |\n|---|---|\n";
  for (const auto& n : t.names) {
    std::string st = status(provided(n), refused(n));
    EXPECT_FALSE(st.empty()) << "HAProxy's " << what << " '" << n
                             << "' is neither provided nor refused with a reason "
                                "(src/sample/registry.cc)";
    want += "| `" + n + "` | " + st + " |\n";
  }
  // Not EXPECT_EQ: its diff of two long texts is cut; this prints the table whole.
  if (t.text != want)
    ADD_FAILURE() << "docs/config-compat.md: the table under '" << heading
                  << "' should read:\n" << want;
}

TEST(Docs, FetchTableMatchesTheRegistry) {
  check("### Sample fetches", "fetch", fetch_names(),
        [](std::string_view n) { return find_fetch(n) != nullptr; }, unsupported_fetch);
}

TEST(Docs, ConverterTableMatchesTheRegistry) {
  check("### Converters", "converter", conv_names(),
        [](std::string_view n) { return find_conv(n) != nullptr; }, unsupported_conv);
}

}  // namespace
}  // namespace sluice::sample

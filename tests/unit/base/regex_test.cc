#include "base/regex.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace sluice::base {
namespace {

Regex compiled(const std::string& pattern, bool icase = false, bool captures = true,
               bool jit = true) {
  Regex re;
  std::string err;
  EXPECT_TRUE(re.compile(pattern, &err, icase, captures, jit)) << err;
  return re;
}

// Every behaviour test runs on the JIT-compiled code and on PCRE2's interpreter: the fallback
// HAProxy takes where the library cannot JIT must give the same answers.
class RegexModes : public ::testing::TestWithParam<bool> {
 protected:
  Regex make(const std::string& pattern, bool icase = false, bool captures = true) {
    return compiled(pattern, icase, captures, GetParam());
  }
};

INSTANTIATE_TEST_SUITE_P(JitAndInterpreter, RegexModes, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "Jit" : "Interpreter"; });

TEST_P(RegexModes, RunsTheModeItWasAskedFor) {
  Regex re = make("^/api/");
  EXPECT_EQ(re.jit(), GetParam() && Regex::jit_supported());
}

TEST_P(RegexModes, SearchesAnywhere) {
  Regex re = make("b+c");
  EXPECT_TRUE(re.search("abbbcd"));
  EXPECT_FALSE(re.search("abd"));
  EXPECT_FALSE(re.search(""));
  EXPECT_TRUE(make("^$").search(""));
}

TEST_P(RegexModes, PerlSyntax) {
  // What POSIX ERE did not have: \d, lazy quantifiers, lookarounds, non-capturing groups.
  EXPECT_TRUE(make(R"(^/v\d+/)").search("/v12/users"));
  EXPECT_FALSE(make(R"(^/v\d+/)").search("/vx/users"));
  EXPECT_TRUE(make(R"(foo(?=bar))").search("foobar"));
  EXPECT_FALSE(make(R"(foo(?!bar))").search("foobar"));
  Regex::Groups g;
  ASSERT_TRUE(make("<(.+?)>").search_groups("<a><b>", &g));
  EXPECT_EQ(g[1], std::make_pair(1, 2));
  ASSERT_TRUE(make("(?:ab)+(c)").search_groups("ababc", &g));
  EXPECT_EQ(g[1], std::make_pair(4, 5));
}

TEST_P(RegexModes, IgnoresCaseOnRequest) {
  EXPECT_FALSE(make("^www\\.", false).search("WWW.example.com"));
  EXPECT_TRUE(make("^www\\.", true).search("WWW.example.com"));
}

TEST_P(RegexModes, Captures) {
  Regex re = make("^/(\\w+)/(\\d+)?(x)?");
  Regex::Groups g;
  ASSERT_TRUE(re.search_groups("/users/42/rest", &g));
  EXPECT_EQ(g[0], std::make_pair(0, 9));
  EXPECT_EQ(g[1], std::make_pair(1, 6));
  EXPECT_EQ(g[2], std::make_pair(7, 9));
  EXPECT_EQ(g[3], std::make_pair(-1, -1));   // did not take part
  EXPECT_EQ(g[9], std::make_pair(-1, -1));
  EXPECT_EQ(Regex::expand("\\2:\\1\\3", "/users/42/rest", g), "42:users");
}

TEST_P(RegexModes, WithoutCapturesParenthesesOnlyGroup) {
  // HAProxy compiles ACL patterns without auto-capture: only the whole match is known, and a
  // back-reference to a plain group does not exist.
  Regex re = make("(a)(b)", false, false);
  Regex::Groups g;
  ASSERT_TRUE(re.search_groups("xab", &g));
  EXPECT_EQ(g[0], std::make_pair(1, 3));
  EXPECT_EQ(g[1], std::make_pair(-1, -1));
  Regex bad;
  std::string err;
  EXPECT_FALSE(bad.compile("(a)\\1", &err, false, false, GetParam()));
  EXPECT_TRUE(make("(a)\\1", false, true).search("aa"));
}

TEST_P(RegexModes, MoreGroupsThanTenStillMatch) {
  Regex re = make("(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)");
  Regex::Groups g;
  ASSERT_TRUE(re.search_groups("abcdefghijk", &g));
  EXPECT_EQ(g[0], std::make_pair(0, 11));
  EXPECT_EQ(g[9], std::make_pair(8, 9));
}

TEST_P(RegexModes, NulBytesAreOrdinary) {
  using namespace std::string_literals;
  std::string text = "ab\0cd"s;
  EXPECT_TRUE(make("cd$").search(text));   // not cut at the NUL
  EXPECT_TRUE(make("b\\x00c").search(text));
  Regex::Groups g;
  ASSERT_TRUE(make("\\x00(.)").search_groups(text, &g));
  EXPECT_EQ(g[1], std::make_pair(3, 4));
  // Only the view's bytes are read, not what follows it in memory.
  std::string_view part(text.data(), 2);
  EXPECT_FALSE(make("c").search(part));
}

TEST_P(RegexModes, MatchesFromAnOffset) {
  Regex re = make("(\\d+)");
  Regex::Groups g;
  ASSERT_TRUE(re.match("a1b22", 2, &g));
  EXPECT_EQ(g[1], std::make_pair(3, 5));   // offsets stay relative to the whole text
  EXPECT_FALSE(re.match("a1b22", 5, &g));
  EXPECT_FALSE(re.match("a1b22", 6, &g));   // past the end
  // What precedes the offset still counts: \b and lookbehinds see it, `^` is not there.
  EXPECT_FALSE(make("\\bb").match("ab", 1, nullptr));
  EXPECT_TRUE(make("(?<=a)b").match("ab", 1, nullptr));
  EXPECT_FALSE(make("^b").match("ab", 1, nullptr));
  EXPECT_TRUE(make("$").match("ab", 2, nullptr));
}

TEST_P(RegexModes, NotBolRefusesTheCaret) {
  Regex re = make("^a");
  EXPECT_TRUE(re.match("abc", 0, nullptr, false));
  EXPECT_FALSE(re.match("abc", 0, nullptr, true));
  EXPECT_TRUE(make("a$").match("ba", 0, nullptr, true));   // the end is still the end
  EXPECT_TRUE(make("(?m)^a").match("b\na", 0, nullptr, true));   // after a newline it is a line start
}

TEST_P(RegexModes, SharedByThreads) {
  // One compiled pattern, matched concurrently: the match state is per thread.
  Regex re = make("^/(item)/(\\d+)$");
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Regex::Groups g;
      for (int i = 0; i < 2000; ++i) {
        std::string path = "/item/" + std::to_string(t * 10000 + i);
        if (re.search_groups(path, &g) && g[2].second == static_cast<int>(path.size()) &&
            !re.search(path + "x"))
          ++ok[static_cast<std::size_t>(t)];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int n : ok) EXPECT_EQ(n, 2000);
}

TEST(Regex, HaproxyErrorMessages) {
  Regex re;
  std::string err;
  EXPECT_FALSE(re.compile("(", &err));
  EXPECT_EQ(err, "regex '(' is invalid (error=missing closing parenthesis, erroffset=1)");
  EXPECT_FALSE(re.compile("[a", &err));
  EXPECT_EQ(err, "regex '[a' is invalid (error=missing terminating ] for character class, erroffset=2)");
  EXPECT_FALSE(re.compile("a\\", &err));
  EXPECT_EQ(err, "regex 'a\\' is invalid (error=\\ at end of pattern, erroffset=2)");
  EXPECT_FALSE(re.compiled());
  EXPECT_FALSE(re.search("("));
}

TEST(Regex, RecompileAndMove) {
  Regex re = compiled("a");
  EXPECT_TRUE(re.compile("b", nullptr));
  EXPECT_FALSE(re.search("a"));
  EXPECT_TRUE(re.search("b"));
  Regex moved(std::move(re));
  EXPECT_TRUE(moved.search("b"));
  EXPECT_FALSE(re.compiled());   // NOLINT(bugprone-use-after-move): the moved-from state is defined
  Regex other;
  other = std::move(moved);
  EXPECT_TRUE(other.search("b"));
  EXPECT_FALSE(re.compile("(", nullptr));
}

TEST(Regex, LibraryFacts) {
  // "10.42 2022-12-11": a version number then a date.
  std::string v = Regex::library_version();
  ASSERT_GE(v.size(), 5u);
  EXPECT_TRUE(v[0] >= '1' && v[0] <= '9');
  EXPECT_NE(v.find('.'), std::string::npos);
  EXPECT_NE(v.find(' '), std::string::npos);
  Regex re = compiled("x");
  EXPECT_EQ(re.jit(), Regex::jit_supported());
}

TEST(Regex, Expand) {
  Regex::Groups g;
  g.fill({-1, -1});
  g[0] = {0, 3};
  g[1] = {1, 2};
  EXPECT_EQ(Regex::expand("[\\1]\\x41\\\\\\", "abc", g), "[b]A\\\\");
  EXPECT_EQ(Regex::expand("\\5x", "abc", g), "x");
}

}  // namespace
}  // namespace sluice::base

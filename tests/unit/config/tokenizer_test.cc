// The tokenizer table of spec 1.3, env expansion of 1.4 and error positions of 1.6.
#include "config/tokenizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice::config {
namespace {

class TokenizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.set("FOO", "foo", true);
    env_.set("FOO_d", "food", true);
    env_.set("EMPTY", "", true);
    env_.set("LIST", "10.0.0.1:80 weight 5", true);
    env_.unset("UNSET");
  }
  std::vector<std::string> words(std::string_view line) {
    TokenizeContext ctx{&env_, "f.cfg", 7, "global", true};
    auto t = tokenize_line(line, ctx);
    EXPECT_FALSE(t.error) << *t.error;
    std::vector<std::string> out;
    for (auto& w : t.words) out.push_back(w.text);
    return out;
  }
  TokenizedLine raw(std::string_view line) {
    TokenizeContext ctx{&env_, "f.cfg", 7, "global", true};
    return tokenize_line(line, ctx);
  }
  Env env_;
};

using W = std::vector<std::string>;

TEST_F(TokenizerTest, SplitsOnBlanks) {
  EXPECT_EQ(words("  a\tb \v c\fd  "), (W{"a", "b", "c", "d"}));
  EXPECT_EQ(words(""), W{});
  EXPECT_EQ(words("   "), W{});
}

TEST_F(TokenizerTest, QuotesJoinWithoutSplitting) {
  EXPECT_EQ(words("\"a\"'b'c"), W{"abc"});
  EXPECT_EQ(words("\"a b\" 'c d'"), (W{"a b", "c d"}));
}

TEST_F(TokenizerTest, HashStartsComment) {
  EXPECT_EQ(words("x#y z"), W{"x"});
  EXPECT_EQ(words("\"x#y\""), W{"x#y"});
  EXPECT_EQ(words("'x#y'"), W{"x#y"});
  EXPECT_EQ(words("x\\#y"), W{"x#y"});
  EXPECT_EQ(words("# only a comment"), W{});
}

TEST_F(TokenizerTest, QuotesInsideOtherQuotesAreLiteral) {
  EXPECT_EQ(words("\"it's\""), W{"it's"});
  EXPECT_EQ(words("'say \"hi\"'"), W{"say \"hi\""});
}

TEST_F(TokenizerTest, DollarOnlyExpandsInDoubleQuotes) {
  EXPECT_EQ(words("$FOO"), W{"$FOO"});
  EXPECT_EQ(words("'$FOO'"), W{"$FOO"});
  EXPECT_EQ(words("\"$FOO\""), W{"foo"});
  EXPECT_EQ(words("${FOO}"), W{"${FOO}"});
}

TEST_F(TokenizerTest, BackslashEscapes) {
  EXPECT_EQ(words("a\\\\b"), W{"a\\b"});
  EXPECT_EQ(words("a\\ b"), W{"a b"});
  EXPECT_EQ(words("\\t\\n\\r"), W{"\t\n\r"});
  EXPECT_EQ(words("\\x41\\x6a"), W{"Aj"});
  EXPECT_EQ(words("\\'\\\""), W{"'\""});
  EXPECT_EQ(words("\\$x"), W{"\\$x"});
  EXPECT_EQ(words("\"\\$x\""), W{"$x"});
  EXPECT_EQ(words("\\q\\1"), W{"\\q\\1"});
  EXPECT_EQ(words("'a\\tb'"), W{"a\\tb"});
  EXPECT_EQ(words("\"a\\tb\""), W{"a\tb"});
  EXPECT_EQ(words("trailing\\"), W{"trailing\\"});
}

// Words are C strings in HAProxy: a `\x00` ends the word there, but the word still exists.
TEST_F(TokenizerTest, HexNulEndsTheWord) {
  EXPECT_EQ(words("maxconn \"1\\x002\""), (W{"maxconn", "1"}));
  EXPECT_EQ(words("a\\x00bc d"), (W{"a", "d"}));
  EXPECT_EQ(words("'x'\\x00\"$FOO\""), W{"x"});
  auto t = raw("a \\x00 b");
  ASSERT_FALSE(t.error);
  ASSERT_EQ(t.words.size(), 3u);
  EXPECT_EQ(t.words[1].text, "");
  EXPECT_EQ(t.words[1].pos, 3);
  t = raw("a \\x00\\x4g");   // what follows the NUL is still read, and still checked
  ASSERT_TRUE(t.error);
  EXPECT_EQ(t.error_pos, 7);
}

TEST_F(TokenizerTest, HighBytesPassThrough) { EXPECT_EQ(words("caf\xc3\xa9"), W{"caf\xc3\xa9"}); }

TEST_F(TokenizerTest, BadHexIsFatal) {
  auto t = raw("a \\x4g");
  ASSERT_TRUE(t.error);
  EXPECT_EQ(*t.error, "truncated or invalid hexadecimal sequence");
  EXPECT_EQ(t.error_pos, 3);
  t = raw("a\\x4");
  ASSERT_TRUE(t.error);
  EXPECT_EQ(t.error_pos, 2);
}

TEST_F(TokenizerTest, EmptyQuotesMakeEmptyWord) {
  auto t = raw("a \"\" b");
  ASSERT_FALSE(t.error);
  ASSERT_EQ(t.words.size(), 3u);
  EXPECT_EQ(t.words[1].text, "");
  EXPECT_EQ(t.words[1].pos, 3);
  EXPECT_EQ(raw("''").words.size(), 1u);
}

TEST_F(TokenizerTest, EnvNames) {
  EXPECT_EQ(words("\"$FOO.c\""), W{"foo.c"});
  EXPECT_EQ(words("\"$FOO_d\""), W{"food"});
  EXPECT_EQ(words("\"${FOO}_d\""), W{"foo_d"});
  EXPECT_EQ(words("\"x${UNSET}y\""), W{"xy"});
}

TEST_F(TokenizerTest, EnvDefaults) {
  EXPECT_EQ(words("\"${UNSET-def}\""), W{"def"});
  EXPECT_EQ(words("\"${FOO-def}\""), W{"foo"});
  // A set but empty variable stays empty: the default is only for unset ones.
  EXPECT_EQ(words("\"${EMPTY-def}x\""), W{"x"});
  // The default is raw text up to the first '}'.
  EXPECT_EQ(words("\"${UNSET-a\\\"b}\""), W{"a\\\"b"});
  EXPECT_EQ(words("\"${UNSET-127.0.0.1}:514\""), W{"127.0.0.1:514"});
}

TEST_F(TokenizerTest, EnvStarSplitsIntoWords) {
  EXPECT_EQ(words("server s \"${LIST[*]}\""), (W{"server", "s", "10.0.0.1:80", "weight", "5"}));
  EXPECT_EQ(words("server s \"${UNSET[*]}\" 1.2.3.4:80"), (W{"server", "s", "1.2.3.4:80"}));
  EXPECT_EQ(words("\"${UNSET[*]-a b}\""), (W{"a", "b"}));
  EXPECT_EQ(words("\"${LIST}\""), W{"10.0.0.1:80 weight 5"});
}

TEST_F(TokenizerTest, PseudoVariables) {
  EXPECT_EQ(words("\"${.LINE}\" \"${.FILE}\" \"${.SECTION}\""), (W{"7", "f.cfg", "global"}));
}

TEST_F(TokenizerTest, EnvErrorsPointAtTheirCharacter) {
  struct Case {
    const char* line;
    const char* what;
    int pos;
  } cases[] = {
      {"a \"price $5\"", "forbidden first char in environment variable name", 11},
      {"\"tail$\"", "forbidden first char in environment variable name", 7},
      {"  \"${.FOO}\"", "forbidden first char in environment variable name", 6},
      {"\"${FOO\"", "unmatched brace in environment variable name", 3},
      {"\"${FOO-x\"", "unmatched brace in environment variable name", 3},
      {"\"${FOO[x]}\"", "truncated or invalid word expansion sequence", 7},
      {"a \"b", "unmatched quote", 3},
      {"  a 'b", "unmatched quote", 5},
  };
  for (const auto& c : cases) {
    auto t = raw(c.line);
    ASSERT_TRUE(t.error) << c.line;
    EXPECT_EQ(*t.error, c.what) << c.line;
    EXPECT_EQ(t.error_pos, c.pos) << c.line;
  }
}

TEST_F(TokenizerTest, EmptyVariableCaretPointsAtName) {
  auto t = raw("    server s3 \"${UNDEF}\" 127.0.0.1:8001");
  ASSERT_FALSE(t.error);
  ASSERT_EQ(t.words.size(), 4u);
  EXPECT_EQ(t.words[2].text, "");
  EXPECT_EQ(t.words[2].caret, 18);
  EXPECT_EQ(caret_display("    server s3 \"${UNDEF}\" 127.0.0.1:8001", 18),
            "  server s3 \"${UNDEF}\" 127.0.0.1:8001\n               ^");
}

TEST_F(TokenizerTest, SixtyFourWordsMax) {
  std::string line;
  for (int i = 0; i < 64; ++i) line += "w" + std::to_string(i) + " ";
  EXPECT_EQ(words(line).size(), 64u);
  auto t = raw(line + "w64");
  ASSERT_TRUE(t.error);
  EXPECT_EQ(t.error_pos, 0);
  EXPECT_EQ(*t.error, "too many words, truncating after word 64, position 243: <w63>.");
}

TEST_F(TokenizerTest, HashLiteralForCc) {
  TokenizeContext ctx{&env_, "", 0, "", false};
  auto t = tokenize_line("a#b", ctx);
  ASSERT_EQ(t.words.size(), 1u);
  EXPECT_EQ(t.words[0].text, "a#b");
}

TEST_F(TokenizerTest, AddressReexpansion) {
  EXPECT_EQ(expand_address_env("$FOO:80", env_), "foo:80");
  EXPECT_EQ(expand_address_env("${FOO}:80", env_), "foo:80");
  EXPECT_EQ(expand_address_env("$UNSET", env_), "");
  EXPECT_EQ(expand_address_env("a$", env_), "a$");
  EXPECT_EQ(expand_address_env("1.2.3.4:80", env_), "1.2.3.4:80");
}

TEST(EnvTest, OverlayDoesNotTouchProcess) {
  ::setenv("SLUICE_TEST_VAR", "x", 1);
  Env e;
  EXPECT_EQ(e.get("SLUICE_TEST_VAR"), "x");
  e.set("SLUICE_TEST_VAR", "y", false);
  EXPECT_EQ(e.get("SLUICE_TEST_VAR"), "x");
  e.set("SLUICE_TEST_VAR", "y", true);
  EXPECT_EQ(e.get("SLUICE_TEST_VAR"), "y");
  EXPECT_STREQ(std::getenv("SLUICE_TEST_VAR"), "x");
  e.unset("SLUICE_TEST_VAR");
  EXPECT_FALSE(e.defined("SLUICE_TEST_VAR"));
  e.set("KEEP", "1", true);
  e.reset({"KEEP"});
  EXPECT_FALSE(e.defined("HOME"));
  EXPECT_EQ(e.get("KEEP"), "1");
}

}  // namespace
}  // namespace sluice::config

// The parser's line and section handling: lines and words, `.if` blocks and the message
// directives, sections, proxy names and defaults inheritance.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "parse_run.h"

namespace sluice::config {
namespace {

using testing::parse;

// ---- files and lines ----

TEST(Lines, MissingLfOnLastLine) {
  auto r = parse("global\n  daemon");
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:2]: Missing LF on last line, file might have been truncated at position 9."))
      << r.all();
  EXPECT_TRUE(r.has("Error(s) found in configuration file : f.cfg"));
  EXPECT_TRUE(r.has("Fatal errors found in configuration."));
}

TEST(Lines, StrayNul) {
  auto r = parse(std::string("global\n  dae\0mon\n  daemon\n", 25));
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:2]: Stray NUL character at position 6.")) << r.all();
  auto last = parse(std::string("global\n  dae\0mon\n", 17));
  EXPECT_TRUE(last.contains("Missing LF on last line")) << last.all();
}

TEST(Lines, CrEndsTheLine) {
  auto r = parse("global\r\n  daemon\r\n  maxconn 5\rgarbage\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.r.model->global.daemon);
  EXPECT_EQ(r.r.model->global.maxconn, 5);
}

TEST(Lines, OutOfSection) {
  auto r = parse("maxconn 5\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:1]: unknown keyword 'maxconn' out of section.")) << r.all();
}

TEST(Lines, TokenizerErrorShowsCaret) {
  auto r = parse("global\n  node \"abc\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:2]: unmatched quote at position 8:\n  node \"abc\n       ^")) << r.all();
}

TEST(Lines, EmptyArgumentIsFatalWithHintOnce) {
  auto r = parse("backend b\n    server s3 \"${UNDEF_SLUICE}\" 127.0.0.1:8001\n  server s4 \"\" 1.1.1.1:1\n");
  ASSERT_GE(r.diags.size(), 2u);
  EXPECT_EQ(r.diags[0].text,
            "parsing [f.cfg:2]: argument number 2 at position 18 is empty and marks the end of the "
            "argument list:\n  server s3 \"${UNDEF_SLUICE}\" 127.0.0.1:8001\n               ^\n"
            "Aborting to prevent all subsequent arguments from being silently ignored. If this is "
            "caused by an environment variable expansion, please have a look at section 2.3 of the "
            "configuration manual to find solutions to address this.");
  EXPECT_EQ(r.diags[1].text.find("Aborting"), std::string::npos);
}

// A `\x00` escape ends the word (HAProxy's words are C strings), so nothing after it reaches
// a keyword parser or a message.
TEST(Lines, HexNulEndsTheWord) {
  auto r = parse("global\n  maxconn \"1\\x002\"\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.global().maxconn, 1);
  auto bad = parse("global\n  maxconn \"x\\x00y\"\n");
  EXPECT_TRUE(bad.has("parsing [f.cfg:2] : cannot parse 'maxconn' value 'x', an integer is expected."))
      << bad.all();
  auto empty = parse("global\n  maxconn \\x0012\n");
  EXPECT_TRUE(empty.contains("parsing [f.cfg:2]: argument number 1 at position 11 is empty")) << empty.all();
  for (const auto* run : {&r, &bad, &empty}) EXPECT_EQ(run->all().find('\0'), std::string::npos);
}

TEST(Lines, TooManyWords) {
  std::string line = "global\n  description";
  for (int i = 0; i < 64; ++i) line += " w";
  auto r = parse(line + "\n");
  EXPECT_TRUE(r.contains("too many words, truncating after word 64")) << r.all();
  EXPECT_FALSE(r.r.model);
}

TEST(Lines, StopsAfterFiftyFatalErrors) {
  std::string text = "global\n";
  for (int i = 0; i < 60; ++i) text += "  bogus\n";
  auto r = parse(text);
  EXPECT_TRUE(r.has("too many fatal errors (50), stopping now.")) << r.all();
  EXPECT_FALSE(r.has("Fatal errors found in configuration."));
}

TEST(Lines, NoDefaultPrefix) {
  const std::string msg =
      "parsing [f.cfg:2]: negation/default currently supported only for options, log, "
      "busy-polling, set-dumpable, strict-limits, insecure-fork-wanted and numa-cpu-mapping.";
  EXPECT_TRUE(parse("global\n  no maxconn\n").has(msg));
  EXPECT_TRUE(parse("defaults\n  no timeout client\n").has(msg));
  EXPECT_TRUE(parse("defaults\n  default maxconn 4\n").has(msg));
  auto r = parse("defaults\n  no option tcplog\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : negation/default is not supported for option 'tcplog'.")) << r.all();
  EXPECT_TRUE(parse("defaults\n  no option dontlognull\n  no log\n").r.model);
}

TEST(Lines, QuotedKeywordWorksCaseMatters) {
  EXPECT_TRUE(parse("global\n  \"daemon\"\n").r.model);
  auto r = parse("global\n  Daemon\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : unknown keyword 'Daemon' in 'global' section; did you mean 'daemon' maybe ?"))
      << r.all();
}

// ---- .if blocks ----

TEST(Cond, Blocks) {
  auto r = parse(".if 1\nglobal\n  maxconn 1\n.elif 1\n  maxconn 2\n.else\n  maxconn 3\n.endif\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.r.model->global.maxconn, 1);
  r = parse("global\n.if 0\n  maxconn 1\n.elif 1\n  maxconn 2\n.else\n  maxconn 3\n.endif\n");
  EXPECT_EQ(r.r.model->global.maxconn, 2);
  r = parse("global\n.if 0\n  maxconn 1\n.elif 0\n  maxconn 2\n.else\n  maxconn 3\n.endif\n");
  EXPECT_EQ(r.r.model->global.maxconn, 3);
  r = parse("global\n.if 1\n.if 0\n  maxconn 1\n.else\n  maxconn 4\n.endif\n.endif # done\n");
  EXPECT_EQ(r.r.model->global.maxconn, 4);
}

TEST(Cond, FalseBlocksAreTokenizedButNotParsed) {
  EXPECT_TRUE(parse(".if 0\n  garbage keyword here\n.endif\n").r.model);
  auto r = parse(".if 0\n  garbage \"unterminated\n.endif\n");
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.contains("unmatched quote")) << r.all();
  // Conditions inside a false block are never evaluated.
  EXPECT_TRUE(parse(".if 0\n.if bogus(\n.endif\n.endif\n").r.model);
  EXPECT_TRUE(parse(".if 1\n.elif bogus(\n.endif\n").r.model);
}

// Spec 1.2: scope lines are handled before `.if`, so they are checked in false blocks too.
TEST(Cond, ScopeLinesAreCheckedInFalseBlocks) {
  EXPECT_TRUE(parse("[ok]\n.if 0\n[also-ok] # c\n.endif\n").r.model);
  auto empty = parse(".if 0\n  []\n.endif\n");
  EXPECT_FALSE(empty.r.model);
  EXPECT_TRUE(empty.has("parsing [f.cfg:2]: empty scope name is forbidden.")) << empty.all();
  auto junk = parse(".if 0\n[a] junk\n.endif\nglobal\n  bogus\n");
  EXPECT_FALSE(junk.r.model);
  EXPECT_TRUE(junk.has("parsing [f.cfg:2]: invalid scope declaration '[a] junk'.")) << junk.all();
  EXPECT_FALSE(junk.contains("bogus")) << junk.all();   // aborted
  auto bad = parse(".if 0\n[a b]\n.endif\n");
  EXPECT_FALSE(bad.r.model);
  // As outside a block.
  EXPECT_TRUE(parse("[]\n").has("parsing [f.cfg:1]: empty scope name is forbidden."));
}

TEST(Cond, ConditionsSeeJoinedWords) {
  ::setenv("SLUICE_T_A", "1", 1);
  auto r = parse("global\n.if streq(\"$SLUICE_T_A\", 1)\n  maxconn 1\n.else\n  maxconn 2\n.endif\n");
  EXPECT_EQ(r.r.model->global.maxconn, 2) << r.all();
  r = parse("global\n.if \"${SLUICE_T_A}\"\n  maxconn 1\n.endif\n");
  EXPECT_EQ(r.r.model->global.maxconn, 1);
  r = parse("global\n.if \"${SLUICE_T_UNSET}\"\n  maxconn 1\n.endif\n");
  EXPECT_EQ(r.r.model->global.maxconn, 0);
  ::setenv("SLUICE_T_YES", "yes", 1);
  r = parse(".if \"${SLUICE_T_YES}\"\n.endif\n");
  EXPECT_TRUE(r.contains("unparsable conditional expression 'yes'")) << r.all();
}

TEST(Cond, Errors) {
  auto r = parse("global\n.if streq(a,b\n.endif\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:2]: expected ')' in argument 1 of predicate 'streq' used in "
                    "conditional expression in '.if' at position 10:\n  .if streq(a,b\n               ^"))
      << r.all();
  EXPECT_FALSE(r.has("Fatal errors found in configuration."));
  EXPECT_TRUE(parse(".else\n").has("parsing [f.cfg:1]: lone '.else' with no matching '.if'."));
  EXPECT_TRUE(parse(".endif\n").has("parsing [f.cfg:1]: lone '.endif' with no matching '.if'."));
  EXPECT_TRUE(parse(".elif 1\n").has("parsing [f.cfg:1]: lone '.elif' with no matching '.if'."));
  EXPECT_TRUE(parse(".if 1\n.else\n.elif 1\n.endif\n").has("parsing [f.cfg:3]: '.elif' after '.else' is not permitted."));
  EXPECT_TRUE(parse(".if 1\n.else\n.else\n.endif\n").has("parsing [f.cfg:3]: '.else' after '.else' is not permitted."));
  EXPECT_TRUE(parse(".if 1\n\n").has("parsing [f.cfg:2]: non-terminated '.if' block."));
  EXPECT_TRUE(parse(".if 1\n.else foo\n.endif\n").has("parsing [f.cfg:2]: Unexpected argument 'foo' for '.else'."));
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += ".if 1\n";
  EXPECT_TRUE(parse(deep).has("parsing [f.cfg:100]: too many nested '.if', max is 100."));
}

TEST(Cond, MessageDirectives) {
  auto r = parse(".notice \"hello\"\n.warning \"careful\"\n");
  ASSERT_TRUE(r.r.model) << r.all();
  ASSERT_EQ(r.diags.size(), 2u);
  EXPECT_EQ(r.diags[0].severity, Severity::kNotice);
  EXPECT_EQ(r.diags[0].text, "parsing [f.cfg:1]: 'hello'.");
  EXPECT_EQ(r.diags[1].severity, Severity::kWarning);
  EXPECT_EQ(r.r.warnings, 1);
  r = parse(".notice two words\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:1]: Unexpected argument 'words' for '.notice'. Use quotes if the "
                    "message should contain spaces."));
  EXPECT_FALSE(r.r.model);
  r = parse(".alert \"x\"\nglobal\n  bogus\n");
  EXPECT_EQ(r.r.alerts, 2);   // the alert and the per-file summary; parsing stopped
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(parse(".diag \"d\"\n").diags.empty());
  EXPECT_EQ(parse(".diag \"d\"\n", true).diags.size(), 1u);
  r = parse(".foo\nglobal\n  bogus\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:1]: unknown directive '.foo'."));
  EXPECT_FALSE(r.contains("bogus"));
  EXPECT_TRUE(parse(".if 0\n.notice a b c\n.endif\n").diags.empty());
}

// ---- sections ----

TEST(Sections, GlobalArgumentsAndMerging) {
  EXPECT_TRUE(parse("global foo\n").has("parsing [f.cfg:1] : 'global' cannot handle unexpected argument 'foo'."));
  auto r = parse("global\n  maxconn 5\nglobal\n  daemon\n");
  ASSERT_TRUE(r.r.model);
  EXPECT_EQ(r.r.model->global.maxconn, 5);
  EXPECT_TRUE(r.r.model->global.daemon);
  r = parse("backend b\nglobal\n  daemon\n", true);
  EXPECT_TRUE(r.contains("global section detected after a non-global one"));
}

TEST(Sections, NbthreadAfterNonGlobal) {
  auto r = parse("frontend f\n  bind :1\nglobal\n  nbthread 4\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:4] : 'nbthread' not allowed if a non-global section was "
                    "previously defined. This parameter must be declared in the first global section"))
      << r.all();
}

TEST(Sections, NbthreadInFirstGlobalBeforeProxies) {
  // Regression: the discovery pass saw the later sections and made the full pass refuse
  // nbthread in the very first global section.
  auto r = parse("global\n  nbthread 4\nfrontend f\n  bind :1\n  timeout client 1s\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.r.model->global.nbthread, 4);
}

TEST(Sections, UnsupportedSections) {
  auto r = parse("peers p\n  peer a 1.2.3.4:1\nglobal\n  daemon\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:1] : section 'peers' is not supported by sluice.")) << r.all();
  EXPECT_EQ(r.r.alerts, 3);   // the section, the file summary, the fatal summary
}

TEST(Sections, ProxyNames) {
  EXPECT_TRUE(parse("frontend\n").has("parsing [f.cfg:1] : 'frontend' expects an <id> argument"));
  EXPECT_TRUE(parse("frontend f@x\n").has("parsing [f.cfg:1] : character '@' is not permitted in 'frontend' name 'f@x'."));
  EXPECT_TRUE(parse("frontend f :80\n").has("parsing [f.cfg:1] : please use the 'bind' keyword for listening addresses."));
  EXPECT_TRUE(parse("backend b extra\n").has("parsing [f.cfg:1] : 'backend' cannot handle unexpected argument 'extra'."));
}

TEST(Sections, UniqueNames) {
  auto r = parse("frontend dup\n  bind :1\nbackend dup\n");
  EXPECT_TRUE(r.has("Parsing [f.cfg:3]: backend 'dup' has the same name as frontend 'dup' declared at "
                    "f.cfg:1. This is no longer supported as of 3.3. Please rename one or the other."))
      << r.all();
  EXPECT_FALSE(r.has("Fatal errors found in configuration."));
  r = parse("backend dup\nbackend dup\n");
  EXPECT_TRUE(r.has("Parsing [f.cfg:2]: backend 'dup' has the same name as backend 'dup' declared at f.cfg:1."));
  r = parse("defaults a\nbackend a\n");
  EXPECT_TRUE(r.contains("backend 'a' has the same name as defaults 'a' declared at f.cfg:1.")) << r.all();
}

TEST(Sections, DefaultsInheritanceByPosition) {
  auto r = parse(
      "defaults\n  timeout connect 5s\n  retries 7\n  option redispatch\n  maxconn 9\n"
      "backend b1\ndefaults\nbackend b2\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& p = r.r.model->proxies;
  EXPECT_EQ(p[0].timeouts.connect, 5000u);
  EXPECT_EQ(p[0].retries, 7);
  EXPECT_EQ(p[0].redispatch, -1);
  EXPECT_EQ(p[0].maxconn, 9);
  // A bare defaults resets to the built-in settings.
  EXPECT_EQ(p[1].timeouts.connect, 0u);
  EXPECT_EQ(p[1].retries, 3);
  EXPECT_EQ(p[1].redispatch, 0);
}

TEST(Sections, NamedDefaultsAndFrom) {
  auto r = parse(
      "defaults base\n  timeout client 3s\n  log stdout local0\n"
      "defaults child from base\n  retries 1\n"
      "defaults\n"
      "frontend f from child\n  bind :1\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& f = r.r.model->proxies[0];
  EXPECT_EQ(f.timeouts.client, 3000u);
  EXPECT_EQ(f.retries, 1);
  ASSERT_EQ(f.logs.size(), 1u);
  r = parse("frontend f from nope\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:1] : defaults section 'nope' not found for frontend 'f'.")) << r.all();
  r = parse("defaults d\nbackend b from d\ndefaults d\n");
  EXPECT_FALSE(r.r.model);
}

TEST(Sections, DefaultsAfterProxyDoNotAffectIt) {
  auto r = parse("backend b\ndefaults\n  retries 9\n");
  EXPECT_EQ(r.r.model->proxies[0].retries, 3);
}

TEST(Sections, EachFileEndsSection) {
  auto r = parse("global\n  daemon\n");
  EXPECT_TRUE(r.r.model);
}

}  // namespace
}  // namespace sluice::config

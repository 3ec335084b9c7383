// Whole-file behaviour: sections, keywords, messages, inheritance and validation.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "config/loader.h"
#include "parse_run.h"
#include "net/address.h"

namespace sluice::config {
namespace {

using testing::parse;
using testing::Run;

constexpr const char* kTimeouts = "  timeout client 1s\n  timeout server 1s\n  timeout connect 1s\n";

TEST(Loader, MinimalValidConfig) {
  auto r = parse(std::string("global\n  maxconn 100\ndefaults\n") + kTimeouts +
                 "frontend fe\n  bind :8080\n  default_backend be\nbackend be\n  server s1 127.0.0.1:80\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.r.alerts, 0);
  EXPECT_EQ(r.r.warnings, 0) << r.all();
  const auto& m = *r.r.model;
  EXPECT_EQ(m.global.maxconn, 100);
  ASSERT_EQ(m.proxies.size(), 2u);
  EXPECT_EQ(m.proxies[0].name, "fe");
  EXPECT_EQ(m.proxies[0].id, 2);
  EXPECT_EQ(m.proxies[1].id, 3);
  EXPECT_EQ(m.proxies[0].default_backend_index, 1);
  EXPECT_EQ(m.proxies[0].binds[0].addrs[0].addr.to_string(), "0.0.0.0:8080");
  EXPECT_EQ(m.proxies[1].servers[0].id, 1);
  EXPECT_EQ(m.proxies[1].timeouts.connect, 1000u);
  EXPECT_EQ(m.files, std::vector<std::string>{"f.cfg"});
}

TEST(Loader, EmptyFileIsValid) {
  auto r = parse("");
  EXPECT_TRUE(r.r.model);
  EXPECT_EQ(r.r.alerts, 0);
}


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

// ---- environment ----

// Spec 1.4: HAPROXY_LOCALPEER is set before the second pass; without -L and `localpeer`
// (sluice has neither) it is the host name.
TEST(Env, LocalPeerIsTheHostName) {
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  auto r = parse("global\n  node \"${HAPROXY_LOCALPEER}\"\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.global().node, host);
}

TEST(Env, SetenvIsVisibleToEarlierLines) {
  auto r = parse("global\n  node \"${SLUICE_LATE}\"\n  setenv SLUICE_LATE late\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.r.model->global.node, "late");
  EXPECT_EQ(std::getenv("SLUICE_LATE"), nullptr);   // load_text never touches the process
}

TEST(Env, PresetUnsetReset) {
  auto r = parse("global\n  setenv SLUICE_X a\n  presetenv SLUICE_X b\n  node \"$SLUICE_X\"\n");
  EXPECT_EQ(r.r.model->global.node, "a");
  r = parse("global\n  setenv SLUICE_X a\n  unsetenv SLUICE_X\n  node \"x${SLUICE_X}\"\n");
  EXPECT_EQ(r.r.model->global.node, "x");
  r = parse("global\n  setenv SLUICE_K k\n  resetenv SLUICE_K\n  node \"${SLUICE_K}${HOME}\"\n");
  EXPECT_EQ(r.r.model->global.node, "k");
  r = parse("global\n  setenv SLUICE_X\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : 'setenv' expects environment variable value for 'SLUICE_X'."));
}

TEST(Env, HaproxyVariables) {
  auto r = parse("global\n  node \"${HAPROXY_BRANCH}\"\n  description \"${HAPROXY_CFGFILES}\"\n");
  EXPECT_EQ(r.r.model->global.node, "3.2");
  EXPECT_EQ(r.r.model->global.description, "f.cfg");
}

TEST(Env, AddressQuirk) {
  ::setenv("SLUICE_IP", "127.0.0.1", 1);
  auto r = parse("backend b\n  server s $SLUICE_IP:80\nfrontend f\n  bind '$SLUICE_IP:81'\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.r.model->proxies[0].servers[0].addr.addr.to_string(), "127.0.0.1:80");
  EXPECT_EQ(r.r.model->proxies[1].binds[0].addrs[0].addr.to_string(), "127.0.0.1:81");
  r = parse("frontend f\n  bind $SLUICE_NOPE\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : 'bind' : '$SLUICE_NOPE' resolves to an empty address "
                    "(environment variable missing?)")) << r.all();
}

TEST(Env, StarExpansionOnServerLine) {
  ::setenv("SLUICE_SRV", "10.0.0.1:80 weight 5", 1);
  auto r = parse("backend b\n  server s \"${SLUICE_SRV[*]}\"\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.r.model->proxies[0].servers[0].weight, 5);
  r = parse("backend b\n  server s \"${SLUICE_SRV}\"\n");
  EXPECT_FALSE(r.r.model);
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

// ---- global keywords ----

TEST(Global, Nbthread) {
  EXPECT_EQ(parse("global\n  nbthread 4\n  nbthread 8\n").r.model->global.nbthread, 8);
  EXPECT_TRUE(parse("global\n  nbthread abc\n").has("parsing [f.cfg:2] : passed a missing or unparsable integer value in 'abc'"));
  EXPECT_TRUE(parse("global\n  nbthread 4x\n").contains("unparsable integer value in '4x'"));
  EXPECT_TRUE(parse("global\n  nbthread 0\n").contains("between 1 and 1024"));
  EXPECT_TRUE(parse("global\n  nbthread 1025\n").contains("between 1 and 1024"));
}

TEST(Global, Maxconn) {
  auto r = parse("global\n  maxconn 10\n  maxconn 20\n");
  ASSERT_TRUE(r.r.model);
  EXPECT_EQ(r.r.model->global.maxconn, 10);
  EXPECT_EQ(r.r.alerts, 1);
  EXPECT_TRUE(r.has("parsing [f.cfg:3] : 'maxconn' already specified. Continuing."));
  EXPECT_TRUE(parse("global\n  maxconn 10k\n").has("parsing [f.cfg:2] : cannot parse 'maxconn' value '10k', an integer is expected."));
  // 0 is "automatic" as in HAProxy: the model's "not set", derived from ulimit -n at start-up.
  auto zero = parse("global\n  maxconn 0\n");
  ASSERT_TRUE(zero.r.model) << zero.all();
  EXPECT_EQ(zero.r.alerts, 0);
  EXPECT_EQ(zero.global().maxconn, 0);
  EXPECT_TRUE(parse("global\n  maxconn -1\n").has("parsing [f.cfg:2] : cannot parse 'maxconn' value '-1', an integer is expected."));
}

TEST(Global, Maxaccept) {
  // HAProxy turns 0 into its default (4); -1 is unlimited.
  auto zero = parse("global\n  tune.maxaccept 0\n");
  ASSERT_TRUE(zero.r.model) << zero.all();
  EXPECT_EQ(zero.r.alerts, 0);
  EXPECT_EQ(zero.global().tune_maxaccept, 4);
  EXPECT_EQ(parse("global\n  tune.maxaccept 64\n").global().tune_maxaccept, 64);
  EXPECT_TRUE(parse("global\n  tune.maxaccept -2\n").has(
      "parsing [f.cfg:2] : 'tune.maxaccept' expects -1 (unlimited) or an integer from 0 to 2147483647 "
      "(0 = the default), got '-2'."));
}

TEST(Global, StatsSocket) {
  auto r = parse("global\n  stats socket /tmp/s.sock level admin mode 600\n  stats socket ipv4@127.0.0.1:9999\n"
                 "  stats timeout 30s\n  stats maxconn 5\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& g = r.r.model->global;
  ASSERT_EQ(g.stats_sockets.size(), 2u);
  EXPECT_EQ(g.stats_sockets[0].level, CliLevel::kAdmin);
  EXPECT_EQ(g.stats_sockets[0].unix_mode, 0600);
  EXPECT_EQ(g.stats_sockets[0].addr.kind, net::ListenAddress::Kind::kUnix);
  EXPECT_EQ(g.stats_sockets[1].level, CliLevel::kOperator);
  EXPECT_EQ(g.stats_sockets[1].addr.addr.to_string(), "127.0.0.1:9999");
  EXPECT_EQ(g.stats_timeout_ms, 30000u);
  EXPECT_EQ(g.stats_maxconn, 5);
  EXPECT_TRUE(parse("global\n  stats socket :1-2\n").contains("must be a single address"));
  EXPECT_TRUE(parse("global\n  stats socket /s level god\n").contains("'level' only supports"));
  EXPECT_TRUE(parse("global\n  stats socket /s levl admin\n").contains("did you mean 'level' maybe ?"));
  EXPECT_TRUE(parse("global\n  stats timeout 0\n").has("parsing [f.cfg:2] : 'stats timeout' expects a positive value"));
  EXPECT_TRUE(parse("global\n  stats maxconn 0\n").has("parsing [f.cfg:2] : 'stats maxconn' expects a positive value"));
  EXPECT_TRUE(parse("global\n  stats enable\n").contains("'stats' supports"));
}

TEST(Global, Misc) {
  auto r = parse("global\n  daemon\n  pidfile /a\n  pidfile /b\n  hard-stop-after 1m\n  tune.bufsize 16k\n"
                 "  tune.maxaccept -1\n  node n1\n  description my lb\n  zero-warning\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& g = r.r.model->global;
  EXPECT_TRUE(g.daemon);
  EXPECT_EQ(g.pidfile, "/a");
  EXPECT_EQ(r.r.warnings, 1);
  EXPECT_EQ(g.hard_stop_after_ms, 60000u);
  EXPECT_EQ(g.tune_bufsize, 16384);
  EXPECT_EQ(g.tune_maxaccept, -1);
  EXPECT_EQ(g.node, "n1");
  EXPECT_EQ(g.description, "my lb");
  EXPECT_TRUE(g.zero_warning);
  EXPECT_EQ(parse("global\n  tune.bufsize 1000\n").r.model->global.tune_bufsize, 1008);
  EXPECT_TRUE(parse("global\n  tune.bufsize 16kb\n").has("parsing [f.cfg:2] : unexpected 'b' after size passed to 'tune.bufsize'"));
  EXPECT_TRUE(parse("global\n  tune.bufsize 4g\n").has("parsing [f.cfg:2] : unexpected 'g' after size passed to 'tune.bufsize'"));
  EXPECT_TRUE(parse("global\n  tune.bufsize 0\n").contains("expects a positive integer argument."));
  EXPECT_TRUE(parse("global\n  daemon x\n").has("parsing [f.cfg:2] : 'daemon' cannot handle unexpected argument 'x'."));
  EXPECT_TRUE(parse("global\n  lua-load /x\n").has("parsing [f.cfg:2] : 'lua-load' is not supported by sluice yet."));
  EXPECT_EQ(parse("global\n  chroot /x\n  uid 7\n  gid 8\n").r.model->global.chroot, "/x");
  EXPECT_EQ(parse("global\n  uid 7\n").r.model->global.uid, 7);
  EXPECT_EQ(parse("global\n  gid 8\n").r.model->global.gid, 8);
  EXPECT_EQ(parse("global\n  user root\n  group root\n").r.model->global.gid, 0);
  EXPECT_TRUE(parse("global\n  maxconm 5\n").has("parsing [f.cfg:2] : unknown keyword 'maxconm' in 'global' section; did you mean 'maxconn' maybe ?"));
}

// Spec 7: a buffer of 256 MiB or more is fatal as soon as a proxy is in HTTP mode.
TEST(Global, HugeBufsizeNeedsTcpOnly) {
  std::string proxies = std::string("defaults\n") + kTimeouts +
                        "frontend f\n  bind :1\n  default_backend b\nbackend b\n  server s 1.1.1.1:1\n";
  auto tcp = parse("global\n  tune.bufsize 256m\n" + proxies);
  EXPECT_TRUE(tcp.r.model) << tcp.all();
  std::string http = std::string("defaults\n") + kTimeouts + "  mode http\n" +
                     "frontend f\n  bind :1\n  default_backend b\nbackend b\n  server s 1.1.1.1:1\n";
  auto r = parse("global\n  tune.bufsize 256m\n" + http);
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.has("global.tune.bufsize must be below 256 MB when HTTP is in use (current value = "
                    "268435456)."))
      << r.all();
  int n = 0;
  for (const auto& d : r.diags) n += d.text.find("tune.bufsize") != std::string::npos;
  EXPECT_EQ(n, 1) << r.all();
  auto below = parse("global\n  tune.bufsize 268435440\n" + http);
  EXPECT_TRUE(below.r.model) << below.all();
  // A disabled proxy is not validated.
  auto disabled = parse("global\n  tune.bufsize 1g\n" + std::string("defaults\n") + kTimeouts +
                        "backend b\n  mode http\n  disabled\n");
  EXPECT_TRUE(disabled.r.model) << disabled.all();
}

TEST(Global, Log) {
  auto r = parse("global\n  log stdout format raw local0\n  log 127.0.0.1 len 2048 local1 info notice\n"
                 "  log /dev/log daemon\n  log \"${SLUICE_LOCAL-127.0.0.2}:515\" user\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& l = r.r.model->global.logs;
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(l[0].kind, LogTarget::Kind::kStdout);
  EXPECT_EQ(l[0].format, LogFormat::kRaw);
  EXPECT_EQ(l[0].facility, 16);
  EXPECT_EQ(l[1].kind, LogTarget::Kind::kUdp);
  EXPECT_EQ(l[1].addr.to_string(), "127.0.0.1:514");
  EXPECT_EQ(l[1].max_len, 2048);
  EXPECT_EQ(l[1].max_level, 6);
  EXPECT_EQ(l[1].min_level, 5);
  EXPECT_EQ(l[2].kind, LogTarget::Kind::kUnixDgram);
  EXPECT_EQ(l[3].addr.to_string(), "127.0.0.2:515");
  EXPECT_TRUE(parse("global\n  log stdout bogus\n").has("parsing [f.cfg:2] : unknown log facility 'bogus'"));
  EXPECT_TRUE(parse("global\n  log\n").has("parsing [f.cfg:2] : log : expects <address> and <facility> or global as arguments"));
  EXPECT_TRUE(parse("global\n  log stdout local0 loud\n").contains("unknown optional log level 'loud'"));
  r = parse("global\n  log stdout local0\n  no log\n");
  EXPECT_TRUE(r.r.model->global.logs.empty());
}

// ---- proxy keywords ----

TEST(Proxy, Mode) {
  EXPECT_TRUE(parse("defaults\n  mode tcp\n").r.model);
  auto http = parse("defaults\n  mode http\nbackend b\n");
  ASSERT_TRUE(http.r.model) << http.all();
  EXPECT_EQ(http.r.model->proxies[0].mode, Mode::kHttp);
  EXPECT_TRUE(parse("defaults\n  mode log\n").has("parsing [f.cfg:2] : 'mode log' is not supported by sluice yet."));
  EXPECT_TRUE(parse("defaults\n  mode http x\n").contains("'mode' cannot handle unexpected argument 'x'."));
  EXPECT_TRUE(parse("defaults\n  mode HTTP\n").has("parsing [f.cfg:2] : unknown proxy mode 'HTTP'."));
}

TEST(Proxy, Bind) {
  auto r = parse("frontend f\n  bind 127.0.0.1:8000-8002,:9000 name web maxconn 10 backlog 20\n"
                 "  bind /tmp/x.sock mode 660\n  timeout client 1s\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& b = r.r.model->proxies[0].binds;
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].addrs.size(), 4u);
  EXPECT_EQ(b[0].name, "web");
  EXPECT_EQ(b[0].maxconn, 10);
  EXPECT_EQ(b[0].backlog, 20);
  EXPECT_EQ(b[0].text, "127.0.0.1:8000-8002,:9000");
  EXPECT_EQ(b[1].unix_mode, 0660);
  EXPECT_TRUE(parse("frontend f\n  bind\n").has("parsing [f.cfg:2] : 'bind' expects {<path>|[addr1]:port1[-end1]}{,[addr]:port[-end]}... as arguments."));
  EXPECT_TRUE(parse("frontend f\n  bind 127.0.0.1\n").has("parsing [f.cfg:2] : 'bind' : missing port specification in '127.0.0.1'"));
  EXPECT_TRUE(parse("frontend f\n  bind :18092 maxconnn 4\n").has(
      "parsing [f.cfg:2] : 'bind :18092' in section 'frontend': unknown keyword 'maxconnn'; did you mean 'maxconn' maybe ?"));
  EXPECT_TRUE(parse("frontend f\n  bind :1 process 1\n").has(
      "parsing [f.cfg:2] : 'bind :1' : 'process 1' on 'bind' lines is not supported anymore, please use 'thread' instead."));
  EXPECT_TRUE(parse("frontend f\n  bind :1 maxconn\n").has("parsing [f.cfg:2] : 'bind :1' : 'maxconn' : missing value"));
  EXPECT_TRUE(parse("frontend f\n  bind :1 ssl\n").contains("'ssl' is not supported by sluice yet."));
  EXPECT_TRUE(parse("defaults\n  bind :1\n").has("parsing [f.cfg:2] : 'bind' not allowed in 'defaults' section."));
  r = parse("backend b\n  bind :1\n");
  EXPECT_TRUE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : 'bind' ignored because backend 'b' has no frontend capability."));
}

TEST(Proxy, Timeouts) {
  auto r = parse("defaults\n  timeout client 10\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : 'timeout client 10' in defaults '' is suspiciously small for a value in "
                    "milliseconds. Please use an explicit unit ('10ms') if that was the intent."))
      << r.all();
  EXPECT_EQ(r.r.warnings, 1);
  EXPECT_TRUE(parse("defaults\n  timeout client 10x\n").has("parsing [f.cfg:2] : unexpected character 'x' in 'timeout client'"));
  EXPECT_TRUE(parse("defaults\n  timeout client 1.5s\n").has("parsing [f.cfg:2] : unexpected character '.' in 'timeout client'"));
  EXPECT_TRUE(parse("defaults\n  timeout client 25d\n").has(
      "parsing [f.cfg:2] : timer overflow in argument '25d' to 'timeout client' (maximum value is 2147483647 ms or ~24.8 days)"));
  EXPECT_TRUE(parse("defaults\n  timeout client\n").has("parsing [f.cfg:2] : 'timeout client' expects an integer value (in milliseconds)"));
  EXPECT_TRUE(parse("defaults\n  timeout client 10 20\n").has(
      "parsing [f.cfg:2] : 'timeout client' : unexpected extra argument '20' after value '10'."));
  EXPECT_TRUE(parse("defaults\n  timeout clientt 1s\n").has(
      "parsing [f.cfg:2] : 'timeout' supports 'client', 'server', 'connect', 'check', 'queue', 'handshake', "
      "'http-keep-alive', 'http-request', 'tunnel', 'tarpit', 'client-fin' and 'server-fin' (got 'clientt')"));
  EXPECT_TRUE(parse("defaults\n  timeout tarpit 1s\n").has("parsing [f.cfg:2] : 'timeout tarpit' is not supported by sluice yet."));
  r = parse("defaults\n  timeout client 10sec\n");
  EXPECT_TRUE(r.r.model);
  EXPECT_TRUE(r.has("unexpected character 'e' after the timer value '10sec', only (us=microseconds,ms=milliseconds,s=seconds,m=minutes,h=hours,d=days) are supported. This will be reported as an error in next versions."));
  r = parse("frontend f\n  bind :1\n  timeout client 1s\n  timeout client 2s\n  timeout server 1s\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:4] : overwriting 'timeout client' which was already specified"));
  EXPECT_TRUE(r.has("parsing [f.cfg:5] : 'timeout server' will be ignored because frontend 'f' has no backend capability"));
  EXPECT_EQ(r.r.model->proxies[0].timeouts.client, 2000u);
  r = parse("defaults\n  timeout client 1s\nfrontend f\n  bind :1\n  timeout client 2s\n  timeout client-fin 500us\n");
  EXPECT_EQ(r.r.warnings, 0) << r.all();
  EXPECT_EQ(r.r.model->proxies[0].timeouts.client_fin, 1u);
}

TEST(Proxy, IntegersAreStrict) {
  EXPECT_TRUE(parse("frontend f\n  maxconn 12abc\n").has("parsing [f.cfg:2] : cannot parse 'maxconn' value '12abc', an integer is expected."));
  EXPECT_TRUE(parse("backend b\n  retries x\n").contains("cannot parse 'retries' value 'x'"));
  auto r = parse("frontend f\n  bind :1\n  maxconn 100\n  backlog 50\n");
  EXPECT_EQ(r.r.model->proxies[0].maxconn, 100);
  EXPECT_EQ(r.r.model->proxies[0].backlog, 50);
  r = parse("backend b\n  maxconn 5\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : 'maxconn' ignored because backend 'b' has no frontend capability. Maybe you want 'fullconn' instead ?"));
}

TEST(Proxy, Options) {
  auto r = parse("defaults\n  option redispatch 2\n  option tcplog\n  option dontlognull\nlisten l\n  bind :1\n"
                 "  no option dontlognull\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& l = r.r.model->proxies[0];
  EXPECT_EQ(l.redispatch, 2);
  EXPECT_TRUE(l.option_tcplog);
  EXPECT_FALSE(l.option_dontlognull);
  EXPECT_EQ(parse("backend b\n  option redispatch\n  no option redispatch\n").r.model->proxies[0].redispatch, 0);
  r = parse("backend b\n  option dontlognull\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : 'option dontlognull' ignored because backend 'b' has no frontend capability."));
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : unknown option 'dontlognull'; did you mean 'dontlognull' maybe ?"));
  r = parse("backend b\n  option tcplog\n");
  EXPECT_TRUE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : backend 'b' : 'option tcplog' directive is ignored in backends."));
  r = parse("frontend f\n  bind :1\n  option redispatch\n");
  EXPECT_TRUE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:3] : 'option redispatch' ignored because frontend 'f' has no backend capability."));
  // Spec 5.2: the check options are special-cased in HAProxy, so they only warn.
  r = parse("frontend f\n  bind :1\n  option httpchk GET /\n  option tcp-check\n");
  EXPECT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.has("parsing [f.cfg:3] : 'option httpchk' ignored because frontend 'f' has no backend capability."));
  EXPECT_TRUE(r.has("parsing [f.cfg:4] : 'option tcp-check' ignored because frontend 'f' has no backend capability."));
  EXPECT_FALSE(r.contains("unknown option")) << r.all();
  EXPECT_TRUE(parse("defaults\n  option httpslog\n").has("parsing [f.cfg:2] : 'option httpslog' is not supported by sluice yet."));
  EXPECT_TRUE(parse("defaults\n  option tcplgo\n").has("parsing [f.cfg:2] : unknown option 'tcplgo'; did you mean 'tcplog' maybe ?"));
}

TEST(Proxy, TcpSocketOptions) {
  // Defaults carry the options and tunings; a section can take them back.
  auto r = parse(std::string("defaults\n") + kTimeouts + "  option tcpka\n  clitcpka-idle 7\n  clitcpka-intvl 3s\n  clitcpka-cnt 4\n"
                 "  srvtcpka-idle 1m\n  srvtcpka-intvl 1500ms\n  srvtcpka-cnt 0\n  option nolinger\n"
                 "listen l\n  bind :1\nfrontend f\n  bind :2\n  no option clitcpka\n  no option nolinger\n"
                 "backend b\n  no option tcpka\n  no option tcp-smart-connect\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.r.warnings, 0) << r.all();
  const auto& l = r.r.model->proxies[0];
  EXPECT_TRUE(l.option_clitcpka);
  EXPECT_TRUE(l.option_srvtcpka);
  EXPECT_EQ(l.clitcpka_idle, 7);
  EXPECT_EQ(l.clitcpka_intvl, 3);
  EXPECT_EQ(l.clitcpka_cnt, 4);
  EXPECT_EQ(l.srvtcpka_idle, 60);
  EXPECT_EQ(l.srvtcpka_intvl, 2);   // rounded up to whole seconds
  EXPECT_EQ(l.srvtcpka_cnt, 0);
  EXPECT_TRUE(l.option_nolinger);
  EXPECT_TRUE(l.option_tcp_smart_connect);   // sluice's default
  const auto& f = r.r.model->proxies[1];
  EXPECT_FALSE(f.option_clitcpka);
  EXPECT_TRUE(f.option_srvtcpka);
  EXPECT_FALSE(f.option_nolinger);
  const auto& b = r.r.model->proxies[2];
  EXPECT_FALSE(b.option_clitcpka);
  EXPECT_FALSE(b.option_srvtcpka);
  EXPECT_FALSE(b.option_tcp_smart_connect);
  EXPECT_TRUE(parse("backend b\n  no option tcp-smart-connect\n  default option tcp-smart-connect\n")
                  .r.model->proxies[0].option_tcp_smart_connect);

  // Values the kernel refuses are clamped, with a warning.
  r = parse("frontend f\n  bind :1\n  clitcpka-idle 1d\n  clitcpka-cnt 500\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_EQ(r.r.model->proxies[0].clitcpka_idle, 32767);
  EXPECT_EQ(r.r.model->proxies[0].clitcpka_cnt, 127);
  EXPECT_TRUE(r.has("parsing [f.cfg:3] : 'clitcpka-idle 1d' is above the kernel's limit; 32767 is used instead."));
  EXPECT_TRUE(r.has("parsing [f.cfg:4] : 'clitcpka-cnt 500' is above the kernel's limit; 127 is used instead."));

  // Bad values are errors with the line; the wrong side warns and is ignored.
  EXPECT_TRUE(parse("defaults\n  clitcpka-idle\n").has("parsing [f.cfg:2] : 'clitcpka-idle' expects an integer value"));
  EXPECT_TRUE(parse("defaults\n  srvtcpka-intvl 5x\n").has("parsing [f.cfg:2] : unexpected character 'x' in argument to <srvtcpka-intvl>."));
  EXPECT_TRUE(parse("defaults\n  srvtcpka-cnt -1\n").has("parsing [f.cfg:2] : 'srvtcpka-cnt' value -1 is out of range (0..2147483647)."));
  EXPECT_TRUE(parse("defaults\n  clitcpka-cnt 3 4\n").has("parsing [f.cfg:2] : 'clitcpka-cnt' cannot handle unexpected argument '4'."));
  EXPECT_TRUE(parse("defaults\n  option tcpka now\n").contains("cannot handle unexpected argument 'now'"));
  r = parse("backend b\n  clitcpka-idle 5\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:2] : 'clitcpka-idle' ignored because backend 'b' has no frontend capability.")) << r.all();
  EXPECT_EQ(r.r.model->proxies[0].clitcpka_idle, 0);
  r = parse("frontend f\n  bind :1\n  option srvtcpka\n");
  EXPECT_TRUE(r.has("parsing [f.cfg:3] : 'option srvtcpka' ignored because frontend 'f' has no backend capability.")) << r.all();
  // A tuning written in a proxy that never turns keep-alive on for that side would do nothing.
  r = parse(std::string("defaults\n") + kTimeouts + "frontend f\n  bind :1\n  clitcpka-idle 5\n"
            "frontend g\n  bind :2\n  option tcpka\n  clitcpka-idle 5\nbackend b\n  srvtcpka-cnt 3\n"
            "  server s 127.0.0.1:1\n");
  ASSERT_TRUE(r.r.model) << r.all();
  EXPECT_TRUE(r.has("parsing [f.cfg:7] : 'clitcpka-*' tunings have no effect in frontend 'f' "
                    "without 'option clitcpka' or 'option tcpka'.")) << r.all();
  EXPECT_TRUE(r.has("parsing [f.cfg:13] : 'srvtcpka-*' tunings have no effect in backend 'b' "
                    "without 'option srvtcpka' or 'option tcpka'.")) << r.all();
  EXPECT_EQ(r.r.warnings, 2) << r.all();
  // Still refused: the one TCP option sluice does not implement.
  EXPECT_TRUE(parse("defaults\n  option tcp-smart-accept\n").has("parsing [f.cfg:2] : 'option tcp-smart-accept' is not supported by sluice yet."));
}

TEST(Proxy, LogGlobal) {
  auto r = parse("global\n  log stdout local0\ndefaults\n  log global\nbackend b\n  log stderr local1\n");
  ASSERT_TRUE(r.r.model);
  ASSERT_EQ(r.r.model->proxies[0].logs.size(), 2u);
  EXPECT_EQ(r.r.model->proxies[0].logs[1].kind, LogTarget::Kind::kStderr);
  EXPECT_TRUE(parse("global\n  log global\n").contains("only valid in proxies"));
}

TEST(Proxy, Server) {
  auto r = parse("backend b\n  server s1 127.0.0.1:80 weight 10 maxconn 5 backup\n  server s2 [::1]:81 disabled\n"
                 "  server s3 10.0.0.1\n  server s4 10.0.0.1:+1000 enabled\n");
  ASSERT_TRUE(r.r.model) << r.all();
  const auto& s = r.r.model->proxies[0].servers;
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].weight, 10);
  EXPECT_EQ(s[0].maxconn, 5);
  EXPECT_TRUE(s[0].backup);
  EXPECT_EQ(s[0].addr_text, "127.0.0.1:80");
  EXPECT_TRUE(s[1].disabled);
  EXPECT_EQ(s[1].addr.addr.to_string(), "[::1]:81");
  EXPECT_TRUE(s[2].addr.port_mapped);
  EXPECT_EQ(s[3].addr.port_offset, 1000);
  EXPECT_EQ(s[3].id, 4);
  EXPECT_TRUE(parse("backend b\n  server s 1.1.1.1:1 weight 300\n").has(
      "[f.cfg:2] : 'server b/s' : weight of server s is not within 0 and 256 (300)."));
  EXPECT_TRUE(parse("backend b\n  server s 1.1.1.1:1 weight 3.7\n").contains("'weight' expects an integer argument, got '3.7'."));
  EXPECT_TRUE(parse("backend b\n  server s 1.1.1.1:1 track b/t\n").has("[f.cfg:2] : 'server b/s' : 'track' is not supported by sluice yet."));
  EXPECT_TRUE(parse("backend b\n  server s 1.1.1.1:1 weigth 3\n").has(
      "[f.cfg:2] : 'server b/s' : unknown keyword 'weigth'; did you mean 'weight' maybe ?"));
  EXPECT_TRUE(parse("backend b\n  server s ::1\n").has("[f.cfg:2] : 'server b/s' : could not resolve address ':'."));
  EXPECT_TRUE(parse("backend b\n  server s\n").contains("'server' expects <name> and <addr>[:<port>] as arguments."));
  EXPECT_TRUE(parse("frontend f\n  server s 1.1.1.1:1\n").has(
      "[f.cfg:2] : parsing [f.cfg:2] : 'server' not allowed because frontend 'f' has no backend capability."));
  EXPECT_TRUE(parse("defaults\n  server s 1.1.1.1:1\n").has("parsing [f.cfg:2] : 'server' not allowed in 'defaults' section."));
}

TEST(Proxy, Balance) {
  EXPECT_TRUE(parse("backend b\n  balance roundrobin\n").r.model);
  EXPECT_TRUE(parse("backend b\n  balance url_param id\n").has("parsing [f.cfg:2] : balance 'url_param' is not supported by sluice yet."));
  EXPECT_TRUE(parse("backend b\n  balance roundrobni\n").contains("did you mean 'roundrobin' maybe ?"));
  auto r = parse("frontend f\n  bind :1\n  balance roundrobin\n");
  EXPECT_TRUE(r.r.model);
  EXPECT_TRUE(r.has("parsing [f.cfg:3] : 'balance' ignored because frontend 'f' has no backend capability."));
}

TEST(Proxy, IdDisabledDescription) {
  auto r = parse("backend a\n  id 7\n  description the a team\nbackend b\n  disabled\nbackend c\n  disabled\n  enabled\n");
  ASSERT_TRUE(r.r.model);
  const auto& p = r.r.model->proxies;
  EXPECT_EQ(p[0].id, 7);
  EXPECT_EQ(p[0].description, "the a team");
  EXPECT_EQ(p[1].id, 2);
  EXPECT_TRUE(p[1].disabled);
  EXPECT_FALSE(p[2].disabled);
  EXPECT_TRUE(parse("backend a\n  id 0\n").contains("custom id has to be > 0."));
  EXPECT_TRUE(parse("defaults\n  id 3\n").has("parsing [f.cfg:2] : 'id' not allowed in 'defaults' section."));
  EXPECT_TRUE(parse("backend a\n  id 2\nbackend b\n  id 2\n").contains("has the same ID (2)"));
}

TEST(Proxy, UnknownKeywords) {
  EXPECT_TRUE(parse("backend b\n  stick-table type ip size 1k\n").has("parsing [f.cfg:2] : 'stick-table' is not supported by sluice yet."));
  EXPECT_TRUE(parse("backend b\n  retires 3\n").has("parsing [f.cfg:2] : unknown keyword 'retires' in 'backend' section; did you mean 'retries' maybe ?"));
  EXPECT_TRUE(parse("listen l\n  xyzzy\n").has("parsing [f.cfg:2] : unknown keyword 'xyzzy' in 'listen' section"));
}

// ---- validation ----

TEST(Validate, DefaultBackend) {
  auto r = parse("frontend fe\n  bind :1\n  default_backend nope\n");
  EXPECT_FALSE(r.r.model);
  ASSERT_TRUE(r.has("Proxy 'fe': unable to find required default_backend: 'nope'.")) << r.all();
  EXPECT_FALSE(r.diags.back().in_config_phase);
  EXPECT_TRUE(parse("frontend fe\n  bind :1\n  default_backend fe2\nfrontend fe2\n  bind :2\n").contains("unable to find required default_backend: 'fe2'."));
  EXPECT_TRUE(parse("listen x\n  bind :1\n  default_backend x\n").has("Proxy 'x': loop detected for default_backend: 'x'."));
  EXPECT_TRUE(parse("frontend fe\n  bind :1\n  disabled\n  default_backend nope\n").r.model);
  r = parse("listen l\n  bind :1\n  timeout client 1s\n  timeout connect 1s\n  timeout server 1s\n  server s 1.1.1.1:1\n  default_backend b\nbackend b\n");
  EXPECT_TRUE(r.r.model);
  EXPECT_TRUE(r.contains("servers will never be used")) << r.all();
}

TEST(Validate, DuplicateServers) {
  auto r = parse("backend b\n  server s1 1.1.1.1:1\n  server s1 1.1.1.1:2\n");
  EXPECT_FALSE(r.r.model);
  EXPECT_TRUE(r.has("[f.cfg:3] : 'server b/s1' : another server named 's1' was already defined at line 2, please use a distinct name."))
      << r.all();
}

TEST(Validate, Warnings) {
  auto r = parse("frontend f\n  timeout client 1s\n");
  EXPECT_TRUE(r.has("frontend 'f' has no 'bind' directive. Please declare it as a backend if this was intended."));
  r = parse("backend be\n  server s 1.1.1.1:1\n");
  EXPECT_TRUE(r.has("missing timeouts for backend 'be'.\n"
                    "   | While not properly invalid, you will certainly encounter various problems\n"
                    "   | with such a configuration. To fix this, please ensure that all following\n"
                    "   | timeouts are set to a non-zero value: 'client', 'connect', 'server'."));
  EXPECT_TRUE(r.r.model);
  // A tcp backend with a tunnel timeout is excused for its server timeout; no servers, no warning.
  EXPECT_EQ(parse("backend be\n  timeout connect 1s\n  timeout tunnel 1m\n  server s 1.1.1.1:1\n").r.warnings, 0);
  EXPECT_EQ(parse("backend be\n").r.warnings, 0);
}

TEST(Load, MissingFileAndDirectory) {
  std::vector<Diagnostic> d;
  LoadOptions o;
  o.paths = {"/nonexistent/x.cfg"};
  auto r = load(o, [&](const Diagnostic& x) { d.push_back(x); });
  EXPECT_FALSE(r.model);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].text, "Cannot open configuration file/directory /nonexistent/x.cfg : No such file or directory");

  char tmpl[] = "/tmp/sluice_cfgXXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  auto write = [&](const std::string& n, const std::string& t) {
    FILE* f = std::fopen((dir + "/" + n).c_str(), "w");
    std::fputs(t.c_str(), f);
    std::fclose(f);
  };
  write("b.cfg", "backend b\n");
  write("a.cfg", "backend a\n");
  write(".hidden.cfg", "bogus\n");
  write("c.conf", "bogus\n");
  o.paths = {dir};
  d.clear();
  r = load(o, [&](const Diagnostic& x) { d.push_back(x); });
  ASSERT_TRUE(r.model);
  ASSERT_EQ(r.model->files.size(), 2u);
  EXPECT_EQ(r.model->proxies[0].name, "a");
  EXPECT_EQ(r.model->proxies[1].name, "b");
  for (auto n : {"a.cfg", "b.cfg", ".hidden.cfg", "c.conf"}) std::remove((dir + "/" + n).c_str());
  rmdir(dir.c_str());
}

TEST(Docs, EveryTableKeywordHasHelp) {
  auto docs = keyword_docs();
  EXPECT_GT(docs.size(), 30u);
  for (const auto& d : docs) EXPECT_FALSE(d.help.empty()) << d.keyword;
}

}  // namespace
}  // namespace sluice::config

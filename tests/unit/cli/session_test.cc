// Framing and protocol of the stats socket (spec 1.2-1.3 and the section 9 checklist).
#include <gtest/gtest.h>

#include <string>

#include "base/version.h"
#include "cli/cli.h"
#include "cli/server_commands.h"

namespace sluice::cli {
namespace {

class UptimeStats : public stats::StatsSource {
 public:
  stats::ProcessSnapshot process() const override {
    stats::ProcessSnapshot p;
    p.uptime_s = 82 + 3600 * 25;   // 1 day, 1 hour, 1 min 22 s
    return p;
  }
  std::vector<stats::ProxySnapshot> proxies() const override { return {}; }
  stats::ActivitySnapshot activity(int t) const override { return {}; }
};

struct Result {
  std::string out;
  bool open;
};

// Feeds each chunk in turn, as separate reads; stops at the first close like the runtime does.
Result run(CliSession& s, std::initializer_list<std::string_view> chunks) {
  Result r{"", true};
  for (auto c : chunks) {
    r.open = s.feed(c, &r.out);
    if (!r.open) break;
  }
  return r;
}

Result run(Level level, std::initializer_list<std::string_view> chunks) {
  static UptimeStats st;
  CliSession s(level, &st, 1);
  return run(s, chunks);
}

const std::string kVer = base::kVersion;

TEST(cliProtocol, NothingWithoutLf) {                       // checklist 2
  auto r = run(Level::kAdmin, {"show info"});
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(r.open);
}

TEST(cliProtocol, NonInteractiveAnswersFirstLineThenCloses) {   // rule 3
  auto r = run(Level::kAdmin, {"show version\nshow cli level\n"});
  EXPECT_EQ(r.out, kVer + "\n\n");
  EXPECT_FALSE(r.open);
}

TEST(cliProtocol, LaterCallsAfterCloseProduceNothing) {
  CliSession s(Level::kAdmin, nullptr, 1);
  std::string out;
  EXPECT_FALSE(s.feed("echo a\n", &out));
  EXPECT_FALSE(s.feed("echo b\n", &out));
  EXPECT_EQ(out, "a\n\n");
}

TEST(cliProtocol, SemicolonSplitsCommands) {                // checklist 25
  auto r = run(Level::kAdmin, {"show version;show cli level\n"});
  EXPECT_EQ(r.out, kVer + "\n\nadmin\n\n");
  EXPECT_FALSE(r.open);
}

TEST(cliProtocol, EscapedSemicolon) {                       // checklist 29
  auto r = run(Level::kAdmin, {"echo a\\;b;echo c\n"});
  EXPECT_EQ(r.out, "a;b\n\nc\n\n");
}

TEST(cliProtocol, EscapesAndBlanks) {
  auto r = run(Level::kAdmin, {"echo a\\ b   c \"x  y\" \\\\z\n"});
  EXPECT_EQ(r.out, "a b c \"x y\" \\z\n\n");
  r = run(Level::kAdmin, {"  \t echo\t\tx  \t\n"});
  EXPECT_EQ(r.out, "x\n\n");
  r = run(Level::kAdmin, {"echo trailing\\\n"});
  EXPECT_EQ(r.out, "trailing\n\n");
}

TEST(cliProtocol, CrlfGivesOneTerminator) {
  auto r = run(Level::kAdmin, {"show version\r\n"});
  EXPECT_EQ(r.out, kVer + "\n\n");
}

TEST(cliProtocol, EmptyCommands) {
  EXPECT_EQ(run(Level::kAdmin, {"\n"}).out, "\n");
  EXPECT_EQ(run(Level::kAdmin, {"   \n"}).out, "\n");
  EXPECT_EQ(run(Level::kAdmin, {";;\n"}).out, "\n\n\n");
  // A trailing ';' adds one more terminator, as in HAProxy (spec 8.1).
  EXPECT_EQ(run(Level::kAdmin, {"echo x;\n"}).out, "x\n\n\n");
}

TEST(cliProtocol, CaseSensitiveKeywords) {
  auto r = run(Level::kAdmin, {"SHOW VERSION\n"});
  EXPECT_EQ(r.out.rfind("Unknown command: 'SHOW', but maybe", 0), 0u) << r.out;
}

TEST(cliProtocol, ByteByByte) {
  std::string in = "prompt\nshow version;echo a\\;b\r\necho  x\nquit\n";
  CliSession s(Level::kAdmin, nullptr, 1);
  std::string out;
  bool open = true;
  for (char c : in) {
    open = s.feed(std::string_view(&c, 1), &out);
    if (!open) break;
  }
  EXPECT_FALSE(open);
  EXPECT_EQ(out, "\n> " + kVer + "\n\na;b\n\n> x\n\n> ");
}

TEST(cliProtocol, PromptTranscript) {                       // checklist 26 and the spec transcript
  auto r = run(Level::kAdmin,
               {"prompt\n", "show version\n", "show version;show cli level\n", "quit\n"});
  EXPECT_EQ(r.out, "\n> " + kVer + "\n\n> " + kVer + "\n\nadmin\n\n> ");
  EXPECT_FALSE(r.open);
}

TEST(cliProtocol, QuitMidLineStopsAtOnce) {
  auto r = run(Level::kAdmin, {"prompt i\n", "echo a;quit;echo b\n"});
  EXPECT_EQ(r.out, "\na\n\n");
  EXPECT_FALSE(r.open);
}

TEST(cliProtocol, InteractiveStaysOpen) {                   // checklist 27
  CliSession s(Level::kAdmin, nullptr, 1);
  auto r = run(s, {"prompt i\n", "show version\n", "show cli level\n"});
  EXPECT_EQ(r.out, "\n" + kVer + "\n\nadmin\n\n");
  EXPECT_TRUE(r.open);
  EXPECT_TRUE(s.interactive());
}

TEST(cliProtocol, PromptToggleBackClosesAfterLine) {
  CliSession s(Level::kAdmin, nullptr, 1);
  auto r = run(s, {"prompt\n", "prompt;echo still\n", "echo never\n"});
  EXPECT_EQ(r.out, "\n> \nstill\n\n");
  EXPECT_FALSE(r.open);
  EXPECT_FALSE(s.interactive());
}

TEST(cliProtocol, PromptForcedModes) {
  auto r = run(Level::kAdmin, {"prompt p\n", "prompt p\n", "prompt n\n"});
  EXPECT_EQ(r.out, "\n> \n> \n");
  EXPECT_FALSE(r.open);
  r = run(Level::kAdmin, {"prompt i\n", "prompt p\n", "prompt i\n", "echo z\n"});
  EXPECT_EQ(r.out, "\n\n> \nz\n\n");
  EXPECT_TRUE(r.open);
}

TEST(cliProtocol, PromptTimed) {
  auto r = run(Level::kAdmin, {"prompt timed\n", "echo x\n"});
  EXPECT_EQ(r.out, "\n[1:01:01:22]> x\n\n[1:01:01:22]> ");
}

TEST(cliProtocol, PromptHelp) {
  auto r = run(Level::kAdmin, {"prompt help\n"});
  EXPECT_EQ(r.out.rfind("Usage: prompt [help | n | i | p | timed]*\n", 0), 0u);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 9);   // 8 lines + terminator
  EXPECT_FALSE(r.open);
  auto bad = run(Level::kAdmin, {"prompt zz\n"});
  EXPECT_EQ(bad.out, r.out);
}

TEST(cliProtocol, WordLimit) {
  std::string words = "echo";
  for (int i = 1; i < 64; ++i) words += " w";
  auto ok = run(Level::kAdmin, {words + "\n"});          // 64 words
  EXPECT_EQ(ok.out.size(), 63 * 2 - 1 + 2u);
  auto r = run(Level::kAdmin, {words + " w\n"});         // 65 words
  EXPECT_EQ(r.out, "Too many arguments. Commands must have at most 64 arguments.\n\n");
}

TEST(cliProtocol, LineTooBig) {
  std::string big(kMaxLineBytes, 'a');
  CliSession s(Level::kAdmin, nullptr, 1);
  std::string out;
  EXPECT_FALSE(s.feed(big, &out));
  EXPECT_EQ(out,
            "The command line is too big for the buffer size. Please change 'tune.bufsize' in "
            "the configuration to use a bigger command.\n\n");
  // The same line arriving whole with its LF is refused too.
  auto r = run(Level::kAdmin, {"echo " + big + "\n"});
  EXPECT_EQ(r.out, out);
  // Just under the limit is fine.
  std::string fits = "echo " + std::string(kMaxLineBytes - 6, 'b') + "\n";
  auto f = run(Level::kAdmin, {fits});
  EXPECT_EQ(f.out.size(), kMaxLineBytes - 6 + 2);
}

TEST(cliProtocol, LineLimitFollowsBufsize) {                // spec 1.2: tune.bufsize
  std::string line = "echo " + std::string(20000, 'a') + "\n";
  CliSession big(Level::kAdmin, nullptr, 1, nullptr, 65536);
  std::string out;
  big.feed(line, &out);
  EXPECT_EQ(out, std::string(20000, 'a') + "\n\n");
  CliSession small(Level::kAdmin, nullptr, 1, nullptr, 1024);
  out.clear();
  EXPECT_FALSE(small.feed("echo " + std::string(1100, 'a'), &out));
  EXPECT_EQ(out.rfind("The command line is too big", 0), 0u);
}

// Spec 1.3 (HAProxy parses the next command only when its output buffer has room): with an
// output limit, commands wait in the session instead of piling answers up.
TEST(cliProtocol, OutputLimitHoldsCommandsBack) {
  std::string input = "prompt i\n";
  for (int i = 0; i < 100; ++i) input += "echo " + std::to_string(i) + ";echo x\n";
  CliSession ref(Level::kAdmin, nullptr, 1);
  std::string want;
  ASSERT_TRUE(ref.feed(input, &want));

  CliSession s(Level::kAdmin, nullptr, 1);
  std::string out;
  ASSERT_TRUE(s.feed(input, &out, 10));
  EXPECT_TRUE(s.blocked());
  // It stops between two commands (of one line too): at most one answer beyond the limit.
  EXPECT_LT(out.size(), 20u);
  std::string all = out;
  int rounds = 0;
  while (s.blocked() && rounds++ < 1000) {
    out.clear();           // the runtime sent it all
    ASSERT_TRUE(s.feed({}, &out, 10));
    EXPECT_LT(out.size(), 20u);
    all += out;
  }
  EXPECT_FALSE(s.blocked());
  EXPECT_EQ(all, want);
  // New input after the backlog is served as usual.
  out.clear();
  ASSERT_TRUE(s.feed("echo end\n", &out));
  EXPECT_EQ(out, "end\n\n");
}

TEST(cliProtocol, OutputLimitKeepsNonInteractiveFraming) {
  std::string line;
  for (int i = 0; i < 50; ++i) line += "echo " + std::to_string(i) + ";";
  line += "\nshow version\n";   // a second line: never run in the default mode
  CliSession ref(Level::kAdmin, nullptr, 1);
  std::string want;
  EXPECT_FALSE(ref.feed(line, &want));
  CliSession s(Level::kAdmin, nullptr, 1);
  std::string all, out;
  bool open = s.feed(line, &out, 8);
  all += out;
  int rounds = 0;
  while (open && s.blocked() && rounds++ < 1000) {
    out.clear();
    open = s.feed({}, &out, 8);
    all += out;
  }
  EXPECT_FALSE(open);
  EXPECT_EQ(all, want);
}

TEST(cliProtocol, PermissionDenied) {                       // checklists 21 and 22
  auto r = run(Level::kUser, {"show activity\n"});
  EXPECT_EQ(r.out, "Permission denied\n\n");
  r = run(Level::kUser, {"operator\n"});
  EXPECT_EQ(r.out, "Permission denied\n\n");
}

TEST(cliProtocol, LevelChanges) {
  auto r = run(Level::kAdmin, {"show cli level;operator;show cli level;user;show cli level;operator\n"});
  EXPECT_EQ(r.out, "admin\n\n\noperator\n\n\nuser\n\nPermission denied\n\n");
  r = run(Level::kOperator, {"show cli level\n"});
  EXPECT_EQ(r.out, "operator\n\n");
}

TEST(cliProtocol, SetTimeoutCli) {
  CliSession s(Level::kUser, nullptr, 1);
  std::string out;
  EXPECT_TRUE(s.feed("prompt i\nset timeout cli 5\n", &out));
  EXPECT_EQ(out, "\n\n");
  EXPECT_EQ(s.idle_timeout_ms(10000), 5000u);
  out.clear();
  s.feed("set timeout cli\nset timeout cli abc\nset timeout cli 500ms\nset timeout server 3\n",
         &out);
  EXPECT_EQ(out,
            "Expects an integer value.\n\nInvalid timeout value.\n\nInvalid timeout value.\n\n"
            "'set timeout' only supports 'cli'.\n\n");
  EXPECT_EQ(s.idle_timeout_ms(10000), 5000u);
  out.clear();
  s.feed("set timeout cli 2m\n", &out);
  EXPECT_EQ(s.idle_timeout_ms(10000), 120000u);
  CliSession fresh(Level::kUser, nullptr, 1);
  EXPECT_EQ(fresh.idle_timeout_ms(10000), 10000u);
}

TEST(cliProtocol, Payload) {
  Command c;
  c.words = {"test-payload"};
  c.usage = "test-payload <<";
  c.help = "echo the payload (test only)";
  c.run = [](const CommandContext& ctx, const std::vector<std::string>& w, std::string* out) {
    *out += std::to_string(w.size()) + ":" + std::string(ctx.payload);
  };
  register_command(c);
  auto r = run(Level::kAdmin, {"prompt\n", "test-payload a <<\n", "l1\n", "l2\n", "\n", "echo x\n"});
  EXPECT_EQ(r.out, "\n> + + + 2:l1\nl2\n\n> x\n\n> ");
  r = run(Level::kAdmin, {"test-payload <<END\nl1\n\nEND\n"});
  EXPECT_EQ(r.out, "1:l1\n\n");
  EXPECT_FALSE(r.open);
}

TEST(cliProtocol, AnswersNeverHoldAnEmptyLine) {
  Command c;
  c.words = {"test-blank"};
  c.run = [](const CommandContext&, const std::vector<std::string>&, std::string* out) {
    *out += "\na\n\n\nb\n\n\n";
  };
  register_command(c);
  EXPECT_EQ(run(Level::kAdmin, {"test-blank\n"}).out, " \na\n \n \nb\n\n");
}

TEST(cliProtocol, UnknownCommand) {                         // checklist 23
  auto r = run(Level::kAdmin, {"foo bar\n"});
  EXPECT_EQ(r.out.rfind("Unknown command: 'foo', but maybe one of the following ones is a better "
                        "match:\n", 0), 0u);
  std::string tail =
      "  help [<command>]                        : list matching or all commands\n"
      "  prompt [help | n | i | p | timed ]*     : toggle interactive mode with prompt\n"
      "  quit                                    : disconnect\n\n";
  ASSERT_GE(r.out.size(), tail.size());
  EXPECT_EQ(r.out.substr(r.out.size() - tail.size()), tail);
}

TEST(cliProtocol, UnknownSubcommandSuggestsClose) {
  auto r = run(Level::kAdmin, {"show inf\n"});
  EXPECT_EQ(r.out,
            "Unknown command: 'show', but maybe one of the following ones is a better match:\n"
            "  show info [desc|json|typed|float]*      : report information about the running process\n"
            "  help [<command>]                        : list matching or all commands\n"
            "  prompt [help | n | i | p | timed ]*     : toggle interactive mode with prompt\n"
            "  quit                                    : disconnect\n\n");
}

// The suggestion lines of an unknown command's answer (between the first line and the three
// fixed ones).
std::vector<std::string> suggestions(const std::string& answer) {
  std::vector<std::string> lines;
  std::size_t pos = answer.find('\n') + 1;
  while (pos < answer.size()) {
    std::size_t e = answer.find('\n', pos);
    lines.push_back(answer.substr(pos, e - pos));
    pos = e + 1;
  }
  // The three fixed lines, then the terminator's empty line.
  return {lines.begin(), lines.end() - std::min<std::size_t>(lines.size(), 4)};
}

// Spec 1.6: compared keyword by keyword, so an unknown second word still finds the commands
// that start with the first one.
TEST(cliProtocol, UnknownSecondWordSuggestsSameFirstWord) {
  register_server_commands();   // the `set ...` and `get weight` commands, as main() does
  for (const char* typed : {"set foo\n", "set\n"}) {
    auto r = run(Level::kAdmin, {typed});
    EXPECT_EQ(r.out.rfind("Unknown command: 'set', but maybe", 0), 0u) << r.out;
    auto s = suggestions(r.out);
    EXPECT_GE(s.size(), 1u) << typed;
    EXPECT_LE(s.size(), 5u) << typed;
    for (const auto& l : s) EXPECT_EQ(l.rfind("  set ", 0), 0u) << typed << l;
  }
  // HAProxy 3.5 lists get acl, get map, get var and get weight.
  auto g = run(Level::kAdmin, {"get foo\n"});
  auto s = suggestions(g.out);
  ASSERT_EQ(s.size(), 4u) << g.out;
  EXPECT_EQ(s[0].rfind("  get acl ", 0), 0u);
  EXPECT_EQ(s[1].rfind("  get map ", 0), 0u);
  EXPECT_EQ(s[2].rfind("  get var ", 0), 0u);
  EXPECT_EQ(s[3].rfind("  get weight ", 0), 0u);
}

TEST(cliProtocol, UnknownAtMostFiveSuggestions) {
  auto r = run(Level::kAdmin, {"show\n"});
  int lines = static_cast<int>(std::count(r.out.begin(), r.out.end(), '\n'));
  EXPECT_LE(lines, 1 + 5 + 3 + 1);
  EXPECT_NE(r.out.find("  show "), std::string::npos);
}

TEST(cliProtocol, Help) {                                   // checklist 24
  auto r = run(Level::kUser, {"help\n"});
  EXPECT_EQ(r.out.rfind("The following commands are valid at this level:\n", 0), 0u);
  // Not filtered by level (spec 8.7): operator-only commands are listed to users too.
  EXPECT_NE(r.out.find("  show activity [-1|0|thread_num]         : show per-thread"),
            std::string::npos);
  EXPECT_NE(r.out.find("  echo <text>                             : print text to the output\n"),
            std::string::npos);
  // Every listed line is "  " + usage padded to 40 + ": ".
  std::size_t pos = r.out.find('\n') + 1;
  std::vector<std::string> usages;
  while (pos < r.out.size() - 1) {
    std::size_t e = r.out.find('\n', pos);
    std::string line = r.out.substr(pos, e - pos);
    EXPECT_EQ(line.substr(0, 2), "  ") << line;
    EXPECT_EQ(line.find(": ", 2) >= 42 || line.substr(42, 2) == ": ", true) << line;
    if (line.size() > 42 && line[42] == ':') usages.push_back(line);
    pos = e + 1;
  }
  EXPECT_EQ(r.out.substr(r.out.size() - 2), "\n\n");
  auto tail = r.out.substr(r.out.size() - 200);
  EXPECT_NE(tail.find("  quit                                    : disconnect\n\n"),
            std::string::npos);
}

TEST(cliProtocol, HelpSortedAndFiltered) {
  auto r = run(Level::kAdmin, {"help show servers\n"});
  EXPECT_EQ(r.out,
            "The following commands are valid at this level:\n"
            "  show servers state [<backend>]          : dump volatile server information (all "
            "or for a single backend)\n"
            "  help [<command>]                        : list matching or all commands\n"
            "  prompt [help | n | i | p | timed ]*     : toggle interactive mode with prompt\n"
            "  quit                                    : disconnect\n\n");
  auto all = run(Level::kAdmin, {"help\n"}).out;
  auto echo = all.find("  echo ");
  auto info = all.find("  show info ");
  auto user = all.find("  user ");
  EXPECT_LT(echo, info);
  EXPECT_LT(info, user);
}

}  // namespace
}  // namespace sluice::cli

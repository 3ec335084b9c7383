// `get var`, `set var`, `expert-mode` and `experimental-mode`, with HAProxy 3.5's answers.
#include <gtest/gtest.h>

#include <string>

#include "cli/cli.h"
#include "sample/vars.h"

namespace sluice::cli {
namespace {

// One input line (commands separated by ';') on a fresh non-interactive session.
std::string line(std::string_view text, Level level = Level::kAdmin) {
  CliSession s(level, nullptr, 1);
  std::string out;
  s.feed(std::string(text) + "\n", &out);
  return out;
}

// The variables the "configuration" names (names are interned while it loads).
uint32_t declare(std::string_view name) {
  sample::VarRef ref;
  std::string err;
  EXPECT_TRUE(sample::VarNames::global().parse(name, &ref, &err)) << err;
  return ref.id;
}

TEST(CliVars, GetVar) {
  uint32_t a = declare("proc.cli_get_a");
  declare("proc.cli_get_unset");
  sample::ProcVars::instance().set(a, sample::Sample::string("hello"));
  EXPECT_EQ(line("get var proc.cli_get_a"), "proc.cli_get_a: type=str value=<hello>\n\n");
  EXPECT_EQ(line("get var proc.cli_get_a", Level::kOperator), "proc.cli_get_a: type=str value=<hello>\n\n");
  EXPECT_EQ(line("get var proc.cli_get_a", Level::kUser), "Permission denied\n\n");
  EXPECT_EQ(line("get var proc.cli_get_unset"), "Variable not found.\n\n");
  EXPECT_EQ(line("get var proc.never_declared"), "Variable not found.\n\n");
  EXPECT_EQ(line("get var txn.cli_get_a"), "Variable not found.\n\n");
  EXPECT_EQ(line("get var"), "Missing process-wide variable identifier.\n\n");
}

TEST(CliVars, ModesAndExperimentalGate) {
  declare("proc.cli_set_a");
  EXPECT_EQ(line("expert-mode"), "expert-mode is OFF\n\n");
  EXPECT_EQ(line("expert-mode on; expert-mode"), "\nexpert-mode is ON\n\n");
  EXPECT_EQ(line("experimental-mode on; experimental-mode off; experimental-mode"),
            "\n\nexperimental-mode is OFF\n\n");
  EXPECT_EQ(line("experimental-mode foo; experimental-mode"), "\nexperimental-mode is OFF\n\n");
  EXPECT_EQ(line("expert-mode on", Level::kOperator), "Permission denied\n\n");
  EXPECT_EQ(line("set var proc.cli_set_a str(x)"), "This command is restricted to experimental mode only.\n\n");
  EXPECT_EQ(line("expert-mode on; set var proc.cli_set_a str(x)"),
            "\nThis command is restricted to experimental mode only.\n\n");
  // help lists `set var` only in experimental mode
  EXPECT_EQ(line("help").find("set var <name>"), std::string::npos);
  EXPECT_NE(line("experimental-mode on; help").find(
                "  set var <name> [fmt|expr] {<fmt>|<expr>}: set variable from an expression or a format\n"),
            std::string::npos);
  EXPECT_NE(line("help").find("  get var <name>                          : retrieve contents of a process-wide variable\n"),
            std::string::npos);
}

TEST(CliVars, SetVar) {
  declare("proc.cli_set_b");
  declare("proc.cli_set_src");
  auto set = [](std::string_view rest) {
    return line("experimental-mode on; set var " + std::string(rest) + "; get var proc.cli_set_b");
  };
  EXPECT_EQ(set("proc.cli_set_b str(x)"), "\n\nproc.cli_set_b: type=str value=<x>\n\n");
  EXPECT_EQ(set("proc.cli_set_b expr int(3),add(4)"), "\n\nproc.cli_set_b: type=sint value=<7>\n\n");
  EXPECT_EQ(set("proc.cli_set_b fmt %[int(2)]-y"), "\n\nproc.cli_set_b: type=str value=<2-y>\n\n");
  EXPECT_EQ(set("proc.cli_set_b ipv4(1.2.3.4)"), "\n\nproc.cli_set_b: type=ipv4 value=<1.2.3.4>\n\n");
  EXPECT_EQ(set("proc.cli_set_b bool(1)"), "\n\nproc.cli_set_b: type=bool value=<1>\n\n");
  EXPECT_EQ(set("proc.cli_set_b meth(GET)"), "\n\nproc.cli_set_b: type=meth value=<GET>\n\n");
  // a binary value prints as a C string: up to its first NUL byte
  EXPECT_EQ(set("proc.cli_set_b bin(410042)"), "\n\nproc.cli_set_b: type=bin value=<A>\n\n");
  EXPECT_EQ(set("proc.cli_set_b bin(410142)"), "\n\nproc.cli_set_b: type=bin value=<A.B>\n\n");
  // `fmt` alone is an expression (an unknown fetch), the words after the format are ignored
  EXPECT_EQ(set("proc.cli_set_b fmt"), "\nunknown fetch method 'fmt'\n\nproc.cli_set_b: type=bin value=<A.B>\n\n");
  EXPECT_EQ(set("proc.cli_set_b fmt a b c"), "\n\nproc.cli_set_b: type=str value=<a>\n\n");
  EXPECT_EQ(line("experimental-mode on; set var proc.cli_set_b"), "\nMissing either 'expr', 'fmt' or expression.\n\n");
  EXPECT_EQ(line("experimental-mode on; set var proc.cli_set_b str(q) int(3)"),
            "\n'set var': arg type must be either 'expr' or 'fmt' but got 'str(q)'.\n\n");
  EXPECT_EQ(line("experimental-mode on; set var txn.c str(1)"),
            "\n'set var': cannot set variable 'txn.c', only scope 'proc' is permitted here.\n\n");
  EXPECT_EQ(line("experimental-mode on; set var proc.cli_set_b expr str(1),foo"), "\nunknown converter 'foo'\n\n");
  EXPECT_NE(line("experimental-mode on; set var proc.cli_set_src src").find("not available here"), std::string::npos);
  EXPECT_NE(line("experimental-mode on; set var proc.not_in_config str(1)").find("unknown variable 'proc.not_in_config'"),
            std::string::npos);
  EXPECT_EQ(line("experimental-mode on; set var proc.cli_set_b str(1)", Level::kOperator),
            "Permission denied\n\nThis command is restricted to experimental mode only.\n\n");
}

}  // namespace
}  // namespace sluice::cli

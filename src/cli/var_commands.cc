// `get var <name>` and `set var <name> [fmt|expr] {<fmt>|<expr>}`: the process-wide (proc.*)
// variables from the CLI, as HAProxy 3.5 answers them. `set var` is experimental (it needs
// `experimental-mode on`) and only sets a variable the configuration names: names are interned
// while the configuration loads and read-only afterwards.
#include <algorithm>

#include <fmt/format.h>

#include "cli/builtin.h"
#include "rules/rules.h"
#include "sample/vars.h"

namespace sluice::cli {

namespace {

// HAProxy's names of the sample types, as `get var` prints them.
std::string_view smp_type_name(sample::Type t) {
  switch (t) {
    case sample::Type::kBool: return "bool";
    case sample::Type::kSint: return "sint";
    case sample::Type::kIpv4: return "ipv4";
    case sample::Type::kIpv6: return "ipv6";
    case sample::Type::kStr: return "str";
    case sample::Type::kBin: return "bin";
    case sample::Type::kMeth: return "meth";
    case sample::Type::kAny: break;
  }
  return "any";
}

// The scope word of `scope.name`, or empty when it is none of HAProxy's.
bool known_scope(std::string_view name, std::string_view* scope) {
  auto dot = name.find('.');
  if (dot == std::string_view::npos) return false;
  *scope = name.substr(0, dot);
  for (std::string_view s : {"proc", "sess", "txn", "req", "res", "check", "psess", "ptxn", "preq", "pres"})
    if (*scope == s) return dot + 1 < name.size();
  return false;
}

}  // namespace

void cmd_get_var(const CommandContext&, const std::vector<std::string>& words, std::string* out) {
  if (words.size() < 3 || words[2].empty()) {
    *out += "Missing process-wide variable identifier.\n";
    return;
  }
  const std::string& name = words[2];
  uint32_t id = name.starts_with("proc.") ? sample::VarNames::global().find(name) : 0;
  sample::Sample s;
  sample::Scratch& sc = sample::thread_scratch();
  if (!id || !sample::ProcVars::instance().get(id, s, sc)) {
    *out += "Variable not found.\n";
    return;
  }
  const sample::Type type = s.type;
  std::string text;
  if (type == sample::Type::kBin) {
    // HAProxy prints the raw bytes as a C string: up to the first NUL, the bytes that are not
    // printable as '.'.
    for (char c : s.str) {
      if (c == '\0') break;
      text += (c >= 0x20 && c < 0x7f) ? c : '.';
    }
  } else if (!sample::to_text(s, text)) {
    text.clear();
  }
  *out += fmt::format("{}: type={} value=<{}>\n", name, smp_type_name(type), text);
}

void cmd_getvars(const CommandContext&, const std::vector<std::string>&, std::string* out) {
  *out += sample::ProcVars::instance().dump();
}

void cmd_set_var(const CommandContext&, const std::vector<std::string>& words, std::string* out) {
  if (words.size() < 4 || words[3].empty()) {
    *out += "Missing either 'expr', 'fmt' or expression.\n";
    return;
  }
  bool is_fmt = false;
  std::string_view text = words[3];
  if (words.size() > 4) {
    if (words[3] != "expr" && words[3] != "fmt") {
      *out += fmt::format("'set var': arg type must be either 'expr' or 'fmt' but got '{}'.\n", words[3]);
      return;
    }
    is_fmt = words[3] == "fmt";
    text = words[4];
  }
  const std::string& name = words[2];
  std::string_view scope;
  if (!known_scope(name, &scope)) {
    *out += fmt::format("invalid variable name '{}'. A variable name must start with its scope. The "
                        "scope can be 'proc', '(p)sess', '(p)txn', '(p)req', '(p)res' or 'check'\n",
                        name);
    return;
  }
  if (scope != "proc") {
    *out += fmt::format("'set var': cannot set variable '{}', only scope 'proc' is permitted here.\n", name);
    return;
  }
  // HAProxy answers "Out of memory." for a name the configuration never uses; sluice says why.
  uint32_t id = sample::VarNames::global().find(name);
  if (!id) {
    *out += fmt::format("'set var': unknown variable '{}' (only a variable that the configuration "
                        "uses can be set).\n", name);
    return;
  }
  std::string err = rules::set_proc_var(id, text, is_fmt, "'set var'");
  if (!err.empty()) *out += err + "\n";
}

}  // namespace sluice::cli

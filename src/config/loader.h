#pragma once
// Entry points of the configuration module. Main thread only.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/model.h"

namespace sluice::config {

// A message for the operator. app prints it in HAProxy's shape:
//   [ALERT]    (<pid>) : config : parsing [f.cfg:3] : unknown keyword 'foo' in 'global' section
// `text` is everything after the context ("parsing [f.cfg:3] : ..."), possibly several lines.
enum class Severity { kDiag, kNotice, kWarning, kAlert };
struct Diagnostic {
  Severity severity;
  bool in_config_phase = true;   // prints the "config : " context (parsing), false = check phase
  std::string text;
};
using DiagnosticSink = std::function<void(const Diagnostic&)>;

struct LoadOptions {
  std::vector<std::string> paths;   // -f arguments, in order; directories expand to *.cfg
  bool diag = false;                // -dD: run `.diag` directives
  std::string localpeer;            // -L <name>: the local peer name ("" = not given)
};

struct LoadResult {
  std::optional<ConfigModel> model;  // set when there was no fatal error
  int alerts = 0;
  int warnings = 0;                  // includes .warning and, with -dD, diagnostics
};

// Reads, parses and validates. Every problem goes to `sink`; the model is returned only when
// the configuration is usable.
LoadResult load(const LoadOptions& options, const DiagnosticSink& sink);

// Parses text as if it were one file named `name` (tests, fuzzing).
LoadResult load_text(std::string_view text, std::string_view name, const LoadOptions& options,
                     const DiagnosticSink& sink);

// `-cc <condition>`: evaluates an `.if` expression. Returns 1 true, 0 false, -1 error (message
// in *error).
// On error, *error is the whole message to print after "[ALERT]    (<pid>) : ", e.g.
// "Failed to evaluate condition: unparsable conditional expression 'foo(1)'" or
// "Syntax Error in condition: Unmatched quote.".
int evaluate_condition(std::string_view text, std::string* error);

// One supported keyword, for `docs/config-compat.md` and `-vv`-style listings: section is
// "global" or "proxies"; a sub-keyword (bind/server option, option name) has keyword
// "<parent> <name>".
struct KeywordDoc {
  std::string section;
  std::string keyword;
  std::string help;
};
std::vector<KeywordDoc> keyword_docs();

// The feature words listed by `-vv` and tested by `feature()`: e.g. "THREAD", "EPOLL", ...
const std::vector<std::string>& build_features();

}  // namespace sluice::config

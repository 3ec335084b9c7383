// The `global` section's variable keywords: `set-var` and `set-var-fmt`, run while the
// configuration is read (a later line sees the value), and the `tune.vars.*-max-size` limits.
#include <fmt/format.h>

#include "config/global_var_keywords.h"
#include "rules/rules.h"
#include "sample/vars.h"

namespace sluice::config {

namespace {

// The proc variable named on a global set-var line, with HAProxy's messages.
sample::VarRef proc_var(const Line& l) {
  sample::VarRef ref;
  std::string err;
  if (!sample::VarNames::global().parse(l.args[1], &ref, &err)) throw ConfigError{l.where + err};
  if (ref.scope != sample::Scope::kProc)
    throw ConfigError{fmt::format("{}'{}': cannot set variable '{}', only scope 'proc' is permitted in "
                                  "the global section.", l.where, l.args[0], l.args[1])};
  return ref;
}

}  // namespace

// `set-var <proc.name> <expr>` / `set-var-fmt <proc.name> <fmt>`: only what needs no traffic
// is available (constants, env(), other proc variables, ...).
void kw_global_set_var(Parser&, Line& l) {
  const bool fmt_form = l.args[0] == "set-var-fmt";
  if (l.args.size() < 3 || l.args[1].empty() || l.args[2].empty())
    throw ConfigError{fmt::format("{}'{}' requires a process-wide variable name ('proc.<name>') and {}.",
                                  l.where, l.args[0], fmt_form ? "a format string" : "a sample expression")};
  sample::VarRef ref = proc_var(l);
  std::string err = rules::set_proc_var(ref.id, l.args[2], fmt_form, fmt::format("'{}'", l.args[0]));
  if (!err.empty()) throw ConfigError{l.where + err};
}

// tune.vars.<scope>-max-size <bytes>: digits only ("10k" is refused); empty is 0 (unlimited).
void kw_tune_vars(Parser& p, Line& l) {
  const std::string& kw = l.args[0];
  const std::string v = l.args.size() > 1 ? l.args[1] : "";
  std::size_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9' || n > (SIZE_MAX - 9) / 10)
      throw ConfigError{fmt::format("{}{}: '{}' is an invalid size", l.where, kw, v)};
    n = n * 10 + static_cast<std::size_t>(c - '0');
  }
  sample::VarLimits& lim = p.global.vars_limits;
  std::string_view scope = std::string_view(kw).substr(10);   // after "tune.vars."
  scope = scope.substr(0, scope.size() - 9);                   // before "-max-size"
  if (scope == "global") lim.global = n;
  else if (scope == "proc") lim.proc = n;
  else if (scope == "sess") lim.sess = n;
  else if (scope == "txn") lim.txn = n;
  else if (scope == "check") lim.check = n;
  else lim.reqres = n;   // the table has no other tune.vars keyword
}

}  // namespace sluice::config

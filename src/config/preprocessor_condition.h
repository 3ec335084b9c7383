#pragma once
// The expressions of `.if` / `.elif` conditional blocks (and of -cc). Main thread only.
#include <string>
#include <string_view>

#include "config/tokenizer.h"

namespace sluice::config {

struct ConditionError {
  std::string message;
  int pos = 0;   // 1-based inside the expression; 0 for evaluation errors (no caret)
};

// Parses all of `expr` (so a syntax error anywhere is reported), then evaluates it left to
// right with short-circuits. Returns 1 true, 0 false, -1 error.
int eval_condition(std::string_view expr, const Env& env, ConditionError* error);

// HAProxy's version ordering: -devN < -preN/-rcN < release; missing parts are 0. Returns
// false when `text` is not a version.
bool compare_version(std::string_view text, int* cmp_to_running);

}  // namespace sluice::config

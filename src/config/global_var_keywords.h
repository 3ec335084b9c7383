#pragma once
// Handlers of the global section's variable keywords (global_var_keywords.cc), for the table in
// global_keywords.cc.
#include "config/parser.h"

namespace sluice::config {

void kw_global_set_var(Parser& p, Line& l);
void kw_tune_vars(Parser& p, Line& l);

}  // namespace sluice::config

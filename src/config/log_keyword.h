#pragma once
// The `log` keyword, shared by global and proxy sections. Internal to config/.
#include <vector>

#include "config/model.h"
#include "config/parser.h"

namespace sluice::config {

// `log <target> [len N] [format F] <facility> [max [min]]`, `log global` (proxies only) and
// `no log`. Appends to (or clears) `logs`.
void parse_log(Parser& p, Line& l, std::vector<LogTarget>* logs, bool in_global);

}  // namespace sluice::config

#pragma once
// Shared by the sample language's unit tests.
#include <string>
#include <string_view>

#include "sample/expr.h"

namespace sluice::sample::testing {

// The parse error of `text` as HAProxy words it (without location), or "ok".
inline std::string parse_error(std::string_view text) {
  ParseCtx pc;
  auto r = Expr::parse(text, pc);
  return r.ok() ? std::string("ok") : r.error().message;
}

}  // namespace sluice::sample::testing

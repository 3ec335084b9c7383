#pragma once
// HAProxy's number syntaxes: times, sizes and strict integers.
// Pure functions; any thread.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/time_units.h"

namespace sluice::config {

using base::TimeUnit;
using base::TimeValue;
using base::parse_time;
using base::time_trailing_warning;

struct SizeValue {
  bool ok = false;
  uint64_t value = 0;
  std::string rest;   // when !ok: the unparsed tail the message quotes
};

// `<digits>[k|K|m|M|g|G]`, binary multipliers; the result must not exceed `max`.
SizeValue parse_size(std::string_view text, uint64_t max);

// The whole word must be an optionally signed decimal integer within [lo, hi].
std::optional<long long> parse_strict_int(std::string_view text, long long lo, long long hi);

}  // namespace sluice::config

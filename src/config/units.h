#pragma once
// HAProxy's number syntaxes: times, sizes and strict integers.
// Pure functions; any thread.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::config {

enum class TimeUnit { kMs, kS };

struct TimeValue {
  enum class Status { kOk, kEmpty, kBadChar, kOverflow, kUnderflow };
  Status status = Status::kOk;
  uint32_t value = 0;      // in the requested unit, rounded up
  char bad = 0;            // kBadChar: the offending character
  // kOk with characters after a valid unit ("10sec"): HAProxy only warns and keeps the value.
  char trailing = 0;
};

// `<digits>[us|ms|s|m|h|d]`; a bare number is in `unit`. The result must stay below 2^31.
TimeValue parse_time(std::string_view text, TimeUnit unit);

// The warning HAProxy prints for trailing characters after a timer value (no file:line).
std::string time_trailing_warning(char c, std::string_view text);

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

#pragma once
// HAProxy's time syntax, `<digits>[us|ms|s|m|h|d]`, for the configuration and for the rules
// that take a time (set-timeout). Pure functions; any thread.
#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::base {

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

}  // namespace sluice::base

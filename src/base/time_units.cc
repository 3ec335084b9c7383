#include "base/time_units.h"

#include <fmt/format.h>

namespace sluice::base {

namespace {
bool is_digit(char c) { return c >= '0' && c <= '9'; }
}  // namespace

TimeValue parse_time(std::string_view text, TimeUnit unit) {
  TimeValue r;
  if (text.empty()) {
    r.status = TimeValue::Status::kEmpty;
    return r;
  }
  std::size_t i = 0;
  uint64_t v = 0;
  if (!is_digit(text[0])) {
    r.status = TimeValue::Status::kBadChar;
    r.bad = text[0];
    return r;
  }
  while (i < text.size() && is_digit(text[i])) {
    v = v * 10 + static_cast<uint64_t>(text[i] - '0');
    if (v > 0xffffffffULL) {   // HAProxy reads into 32 bits: more digits is an overflow
      r.status = TimeValue::Status::kOverflow;
      return r;
    }
    ++i;
  }
  // Conversion to microseconds keeps every unit exact before rounding up to the target.
  uint64_t us_per = unit == TimeUnit::kMs ? 1000 : 1000000;
  uint64_t mult_us = us_per;   // no unit: the keyword's own unit
  std::string_view rest = text.substr(i);
  std::size_t ulen = 0;
  if (rest.starts_with("us")) {
    mult_us = 1, ulen = 2;
  } else if (rest.starts_with("ms")) {
    mult_us = 1000, ulen = 2;
  } else if (rest.starts_with("s")) {
    mult_us = 1000000, ulen = 1;
  } else if (rest.starts_with("m")) {
    mult_us = 60000000, ulen = 1;
  } else if (rest.starts_with("h")) {
    mult_us = 3600000000ULL, ulen = 1;
  } else if (rest.starts_with("d")) {
    mult_us = 86400000000ULL, ulen = 1;
  } else if (!rest.empty()) {
    r.status = TimeValue::Status::kBadChar;
    r.bad = rest[0];
    return r;
  }
  if (ulen < rest.size()) r.trailing = rest[ulen];
  // v < 2^32 and mult_us < 2^37: the product fits in 64 bits.
  uint64_t total_us = v * mult_us;
  uint64_t out = (total_us + us_per - 1) / us_per;
  if (out > 0x7fffffffULL) {
    r.status = TimeValue::Status::kOverflow;
    return r;
  }
  if (v != 0 && out == 0) {
    r.status = TimeValue::Status::kUnderflow;
    return r;
  }
  r.value = static_cast<uint32_t>(out);
  return r;
}

std::string time_trailing_warning(char c, std::string_view text) {
  return fmt::format(
      "unexpected character '{}' after the timer value '{}', only "
      "(us=microseconds,ms=milliseconds,s=seconds,m=minutes,h=hours,d=days) are supported. "
      "This will be reported as an error in next versions.",
      c, text);
}

}  // namespace sluice::base

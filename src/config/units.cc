#include "config/units.h"

#include <fmt/format.h>

namespace sluice::config {

namespace {
bool is_digit(char c) { return c >= '0' && c <= '9'; }
}  // namespace

SizeValue parse_size(std::string_view text, uint64_t max) {
  SizeValue r;
  std::size_t i = 0;
  uint64_t v = 0;
  while (i < text.size() && is_digit(text[i])) {
    v = v * 10 + static_cast<uint64_t>(text[i] - '0');
    if (v > max) {
      r.rest = std::string(text.substr(i));
      return r;
    }
    ++i;
  }
  if (i == 0) {
    r.rest = std::string(text);
    return r;
  }
  if (i < text.size()) {
    uint64_t mult = 0;
    switch (text[i]) {
      case 'k': case 'K': mult = 1024; break;
      case 'm': case 'M': mult = 1024 * 1024; break;
      case 'g': case 'G': mult = 1024ULL * 1024 * 1024; break;
      default: break;
    }
    if (mult == 0 || i + 1 < text.size()) {
      r.rest = std::string(text.substr(mult == 0 ? i : i + 1));
      return r;
    }
    if (v > max / mult) {   // the message points at the suffix that overflowed
      r.rest = std::string(text.substr(i));
      return r;
    }
    v *= mult;
  }
  r.ok = true;
  r.value = v;
  return r;
}

std::optional<long long> parse_strict_int(std::string_view text, long long lo, long long hi) {
  std::size_t i = 0;
  bool neg = false;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    neg = text[0] == '-';
    i = 1;
  }
  if (i >= text.size()) return std::nullopt;
  long long v = 0;
  for (; i < text.size(); ++i) {
    if (!is_digit(text[i])) return std::nullopt;
    if (v > 100000000000000LL) return std::nullopt;   // far beyond any keyword's range
    v = v * 10 + (text[i] - '0');
  }
  if (neg) v = -v;
  if (v < lo || v > hi) return std::nullopt;
  return v;
}

}  // namespace sluice::config

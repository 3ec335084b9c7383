// Number parsing shared by the commands: HAProxy's atoi().
#include <cctype>
#include <limits>

#include "cli/builtin.h"

namespace sluice::cli {

int64_t parse_atoi(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  bool neg = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
  int64_t v = 0;
  constexpr int64_t kCap = std::numeric_limits<int32_t>::max();
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
    v = v * 10 + (s[i] - '0');
    // atoi() is a 32-bit int; clamp rather than wrap so that huge ids simply match nothing.
    if (v > kCap) v = kCap;
  }
  return neg ? -v : v;
}

}  // namespace sluice::cli

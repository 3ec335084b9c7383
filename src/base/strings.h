#pragma once
// Small string helpers shared by config, cli and app. Any thread.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::base {

// Levenshtein distance, used for "did you mean" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, or "" if none is close enough to be a useful suggestion.
std::string closest_match(std::string_view word, const std::vector<std::string_view>& candidates);

bool starts_with(std::string_view s, std::string_view prefix);

// The value of a hexadecimal digit, -1 for any other character.
inline int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Bytes to lower-case hexadecimal text ("+O" -> "2b4f").
std::string hex_encode(std::string_view bytes);

// Hexadecimal text to bytes ("2b4F" -> "+O"), replacing *out; false unless `hex` is an even
// run of hexadecimal digits.
bool hex_decode(std::string_view hex, std::string* out);

// `s` without the characters of `chars` at either end (spaces and tabs by default).
std::string_view trim(std::string_view s, std::string_view chars = " \t");

// ASCII case-insensitive equality. Inline: HTTP field names are compared this way many times
// per message.
inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto x = static_cast<unsigned char>(a[i]), y = static_cast<unsigned char>(b[i]);
    if (x == y) continue;
    // Equal apart from case only if both are the same letter.
    unsigned lx = x | 0x20u;
    if (lx != (y | 0x20u) || lx - 'a' > 25u) return false;
  }
  return true;
}

// HAProxy's log date with milliseconds, local time: "30/Nov/2026:18:33:24.011" (logs, show
// sess, show errors).
std::string log_date(uint64_t wall_us);

// HAProxy's short human durations: "0s", "42s", "3m5s", "2h10m", "4d3h".
std::string human_duration(uint64_t seconds);

// Standard base64 (RFC 4648, with padding) decoded into *out; false on any other character,
// bad padding or a length that is not a multiple of 4.
bool base64_decode(std::string_view in, std::string* out);

}  // namespace sluice::base

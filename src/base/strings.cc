#include "base/strings.h"

#include <algorithm>
#include <cstdint>
#include <ctime>

#include <fmt/format.h>

namespace sluice::base {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closest_match(std::string_view word, const std::vector<std::string_view>& candidates) {
  std::string_view best;
  std::size_t best_d = static_cast<std::size_t>(-1);
  for (auto c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  // Close enough: at most a third of the word's letters differ (and at least one edit allowed).
  std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  if (best.empty() || best_d > limit) return {};
  return std::string(best);
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string log_date(uint64_t wall_us) {
  time_t secs = static_cast<time_t>(wall_us / 1000000);
  tm tm{};
  localtime_r(&secs, &tm);
  char date[32];
  strftime(date, sizeof date, "%d/%b/%Y:%H:%M:%S", &tm);
  return fmt::format("{}.{:03}", date, (wall_us / 1000) % 1000);
}

std::string human_duration(uint64_t s) {
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{}s", s / 60, s % 60);
  if (s < 86400) return fmt::format("{}h{}m", s / 3600, (s / 60) % 60);
  return fmt::format("{}d{}h", s / 86400, (s / 3600) % 24);
}

bool base64_decode(std::string_view in, std::string* out) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  out->clear();
  if (in.size() % 4 != 0) return false;
  for (std::size_t i = 0; i < in.size(); i += 4) {
    bool last = i + 4 == in.size();
    int pad = 0;
    uint32_t bits = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      char c = in[i + k];
      if (c == '=' && last && k >= 2) {
        ++pad;
        bits <<= 6;
        continue;
      }
      int v = value(c);
      if (v < 0 || pad) return false;   // '=' only at the end
      bits = (bits << 6) | static_cast<uint32_t>(v);
    }
    out->push_back(static_cast<char>((bits >> 16) & 0xff));
    if (pad < 2) out->push_back(static_cast<char>((bits >> 8) & 0xff));
    if (pad < 1) out->push_back(static_cast<char>(bits & 0xff));
  }
  return true;
}

std::string hex_encode(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

bool hex_decode(std::string_view hex, std::string* out) {
  if (hex.size() % 2 != 0) return false;
  out->clear();
  out->reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int hi = hex_value(hex[i]), lo = hex_value(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
  }
  return true;
}

std::string_view trim(std::string_view s, std::string_view chars) {
  const std::size_t b = s.find_first_not_of(chars);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(chars) - b + 1);
}

}  // namespace sluice::base

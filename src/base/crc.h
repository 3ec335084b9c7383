#pragma once
// Reflected CRC-32 checksums: IEEE 802.3 (crc32, polynomial 0xEDB88320) and Castagnoli
// (crc32c, 0x82F63B78), byte at a time from constexpr tables. Pure; any thread.
#include <array>
#include <cstdint>
#include <string_view>

namespace sluice::base {

namespace detail {
constexpr std::array<uint32_t, 256> crc_table(uint32_t poly) {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = c & 1 ? (c >> 1) ^ poly : c >> 1;
    t[i] = c;
  }
  return t;
}
}  // namespace detail

template <uint32_t kPoly>
uint32_t crc(std::string_view in) {
  static constexpr auto kTable = detail::crc_table(kPoly);
  uint32_t c = ~uint32_t{0};
  for (char ch : in) c = kTable[(c ^ static_cast<uint8_t>(ch)) & 0xff] ^ (c >> 8);
  return ~c;
}

inline constexpr uint32_t kCrc32Poly = 0xEDB88320u;
inline constexpr uint32_t kCrc32cPoly = 0x82F63B78u;
inline uint32_t crc32(std::string_view in) { return crc<kCrc32Poly>(in); }
inline uint32_t crc32c(std::string_view in) { return crc<kCrc32cPoly>(in); }

}  // namespace sluice::base

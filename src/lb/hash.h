#pragma once
// Hash functions of `hash-type` (HAProxy's src/hash.c, same results) and the avalanche
// modifier (Thomas Wang's 32-bit integer hash, HAProxy's full_hash()). Pure functions.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sluice::net {
class SocketAddress;
}

namespace sluice::lb {

enum class HashFunction { kSdbm, kDjb2, kWt6, kCrc32, kNone };

struct HashSettings {
  bool consistent = false;                   // map-based (default) or consistent
  HashFunction function = HashFunction::kSdbm;
  bool avalanche = false;
};

uint32_t hash_sdbm(const void* data, std::size_t len);
uint32_t hash_djb2(const void* data, std::size_t len);
uint32_t hash_wt6(const void* data, std::size_t len);
uint32_t hash_crc32(const void* data, std::size_t len);
uint32_t full_hash(uint32_t a);

// The configured function, then avalanche when asked. `none` takes the first four bytes as a
// big-endian integer (HAProxy uses it for keys that already are well-spread integers).
uint32_t hash_key(const HashSettings& h, const void* data, std::size_t len);
inline uint32_t hash_key(const HashSettings& h, std::string_view s) {
  return hash_key(h, s.data(), s.size());
}
// The client's IP address bytes (4 for IPv4, 16 for IPv6, the path for UNIX), hashed.
uint32_t hash_address(const HashSettings& h, const net::SocketAddress& a);

}  // namespace sluice::lb

#include "lb/hash.h"

#include <netinet/in.h>
#include <sys/un.h>

#include <cstring>

#include "net/address.h"

namespace sluice::lb {

namespace {
inline uint32_t rotl(uint32_t v, unsigned n) {
  n &= 31;
  return n ? (v << n) | (v >> (32 - n)) : v;
}
}  // namespace

uint32_t hash_sdbm(const void* data, std::size_t len) {
  const auto* k = static_cast<const unsigned char*>(data);
  uint32_t h = 0;
  while (len--) h = *k++ + (h << 6) + (h << 16) - h;
  return h;
}

uint32_t hash_djb2(const void* data, std::size_t len) {
  const auto* k = static_cast<const unsigned char*>(data);
  uint32_t h = 5381;
  while (len--) h = ((h << 5) + h) + *k++;
  return h;
}

uint32_t hash_wt6(const void* data, std::size_t len) {
  const auto* k = static_cast<const unsigned char*>(data);
  uint32_t h0 = 0xa53c965aU, h1 = 0x5ca6953aU;
  unsigned step0 = 6, step1 = 18;
  for (; len > 0; --len) {
    uint32_t t = *k++;
    h0 = ~(h0 ^ t);
    h1 = ~(h1 + t);
    t = rotl(h1, step0);
    h1 = rotl(h0, step1);
    h0 = t;
    t = ((h0 >> 16) ^ h1) & 0xffff;
    step0 = t & 0x1f;
    step1 = t >> 11;
  }
  return h0 ^ h1;
}

uint32_t hash_crc32(const void* data, std::size_t len) {
  const auto* k = static_cast<const unsigned char*>(data);
  uint32_t h = ~0u;
  while (len--) {
    h ^= *k++;
    for (int bit = 0; bit < 8; ++bit) h = (h >> 1) ^ ((h & 1) ? 0xedb88320u : 0u);
  }
  return ~h;
}

uint32_t full_hash(uint32_t a) {
  a = (a + 0x7ed55d16) + (a << 12);
  a = (a ^ 0xc761c23c) ^ (a >> 19);
  a = (a + 0x165667b1) + (a << 5);
  a = (a + 0xd3a2646c) ^ (a << 9);
  a = (a + 0xfd7046c5) + (a << 3);
  a = (a ^ 0xb55a4f09) ^ (a >> 16);
  return a;
}

uint32_t hash_key(const HashSettings& h, const void* data, std::size_t len) {
  uint32_t v = 0;
  switch (h.function) {
    case HashFunction::kSdbm: v = hash_sdbm(data, len); break;
    case HashFunction::kDjb2: v = hash_djb2(data, len); break;
    case HashFunction::kWt6: v = hash_wt6(data, len); break;
    case HashFunction::kCrc32: v = hash_crc32(data, len); break;
    case HashFunction::kNone: {
      const auto* k = static_cast<const unsigned char*>(data);
      for (std::size_t i = 0; i < len && i < 4; ++i) v = (v << 8) | k[i];
      break;
    }
  }
  return h.avalanche ? full_hash(v) : v;
}

uint32_t hash_address(const HashSettings& h, const net::SocketAddress& a) {
  if (a.family() == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(a.sa());
    return hash_key(h, &in->sin_addr, 4);
  }
  if (a.family() == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(a.sa());
    return hash_key(h, &in6->sin6_addr, 16);
  }
  if (a.family() == AF_UNIX) {
    const auto* un = reinterpret_cast<const sockaddr_un*>(a.sa());
    return hash_key(h, un->sun_path, strnlen(un->sun_path, sizeof un->sun_path));
  }
  return 0;
}

}  // namespace sluice::lb

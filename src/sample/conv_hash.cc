// Hash converters (HAProxy's section 7.3.1): crc32, crc32c, djb2, sdbm, wt6 (each with
// HAProxy's optional avalanche argument), xxh3, xxh32, xxh64 (with a seed), and the digests
// sha1, sha2, digest and hmac from OpenSSL's libcrypto.
//
// The 32-bit hashes give their value as an unsigned integer; xxh3 and xxh64 give their 64
// bits as a signed integer, as HAProxy does. The digests give binary.
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <xxhash.h>

#include <array>
#include <memory>
#include <string>

#include "base/crc.h"
#include "sample/codec.h"
#include "sample/tables.h"
#include "sample/var_read.h"

namespace sluice::sample::tables {

namespace {

void set_bin(Sample& s, const std::string& b) {
  s.type = Type::kBin;
  s.str = b;
  s.flags &= ~kConst;
}

// Bob Jenkins' 32-bit integer mix, then a multiplication by a prime near 3/4 of the space
// (HAProxy's full_hash), for the avalanche argument.
uint32_t avalanche(uint32_t a) {
  a = (a + 0x7ed55d16) + (a << 12);
  a = (a ^ 0xc761c23c) ^ (a >> 19);
  a = (a + 0x165667b1) + (a << 5);
  a = (a + 0xd3a2646c) ^ (a << 9);
  a = (a + 0xfd7046c5) + (a << 3);
  a = (a ^ 0xb55a4f09) ^ (a >> 16);
  return a * 3221225473u;
}

uint32_t djb2(std::string_view in) {
  uint32_t h = 5381;
  for (char c : in) h = (h << 5) + h + static_cast<uint8_t>(c);
  return h;
}

uint32_t sdbm(std::string_view in) {
  uint32_t h = 0;
  for (char c : in) h = static_cast<uint8_t>(c) + (h << 6) + (h << 16) - h;
  return h;
}

// Rotation as x86 shifts it: a count of 0 leaves the value as it is.
uint32_t rotl(uint32_t v, uint32_t n) { return (v << (n & 31)) | (v >> ((32 - n) & 31)); }

// Willy Tarreau's wt6 hash.
uint32_t wt6(std::string_view in) {
  uint32_t h0 = 0xa53c965a, h1 = 0x5ca6953a;
  uint32_t step0 = 6, step1 = 18;
  for (char ch : in) {
    uint32_t t = static_cast<uint8_t>(ch);
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

template <uint32_t (*Hash)(std::string_view)>
bool c_hash32(const Arg* a, Sample& s, const Ctx&) {
  uint32_t h = Hash(s.str);
  if (a[0].given && a[0].sint) h = avalanche(h);
  s = Sample::integer(h);
  return true;
}

bool c_xxh32(const Arg* a, Sample& s, const Ctx&) {
  auto seed = static_cast<uint32_t>(a[0].given ? a[0].sint : 0);
  s = Sample::integer(XXH32(s.str.data(), s.str.size(), seed));
  return true;
}

bool c_xxh64(const Arg* a, Sample& s, const Ctx&) {
  auto seed = static_cast<uint64_t>(a[0].given ? a[0].sint : 0);
  s = Sample::integer(static_cast<int64_t>(XXH64(s.str.data(), s.str.size(), seed)));
  return true;
}

bool c_xxh3(const Arg* a, Sample& s, const Ctx&) {
  auto seed = static_cast<uint64_t>(a[0].given ? a[0].sint : 0);
  s = Sample::integer(
      static_cast<int64_t>(XXH3_64bits_withSeed(s.str.data(), s.str.size(), seed)));
  return true;
}

// The digest of `in` with `md` into the scratch; false when libcrypto fails.
bool digest_into(const EVP_MD* md, Sample& s, const Ctx& ctx) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!md || !EVP_Digest(s.str.data(), s.str.size(), out, &len, md, nullptr)) return false;
  std::string& b = ctx.sc().next();
  b.assign(reinterpret_cast<const char*>(out), len);
  set_bin(s, b);
  return true;
}

bool c_sha1(const Arg*, Sample& s, const Ctx& ctx) { return digest_into(EVP_sha1(), s, ctx); }

// sha2([<bits>]): 224, 256 (the default), 384 or 512.
std::string check_sha2(Arg* a, const ParseCtx&) {
  int64_t bits = a[0].given ? a[0].sint : 256;
  if (bits != 224 && bits != 256 && bits != 384 && bits != 512)
    return "Unsupported number of bits: '" + std::to_string(bits) + "'";
  a[0].sint = bits;
  return {};
}

bool c_sha2(const Arg* a, Sample& s, const Ctx& ctx) {
  int64_t bits = a[0].given ? a[0].sint : 256;
  const EVP_MD* md = bits == 224   ? EVP_sha224()
                     : bits == 384 ? EVP_sha384()
                     : bits == 512 ? EVP_sha512()
                                   : EVP_sha256();
  return digest_into(md, s, ctx);
}

// digest(<alg>) / hmac(<alg>,<key>): the algorithm is one of OpenSSL's digest names, looked
// up once. libcrypto's built-in digests are static: Arg::obj points at one without owning it.
std::string check_alg(Arg& alg) {
  const EVP_MD* md = EVP_get_digestbyname(alg.str.c_str());
  if (!md) return "algorithm must be a valid OpenSSL message digest name.";
  alg.obj = std::shared_ptr<const void>(md, [](const void*) {});
  return {};
}

std::string check_digest(Arg* a, const ParseCtx&) { return check_alg(a[0]); }

bool c_digest(const Arg* a, Sample& s, const Ctx& ctx) {
  return digest_into(static_cast<const EVP_MD*>(a[0].obj.get()), s, ctx);
}

// The key is base64, or a variable whose value is base64 (decoded at run time); an empty key
// is an empty key. HAProxy takes any text that names a variable as one.
std::string check_hmac(Arg* a, const ParseCtx& pc) {
  std::string err = check_alg(a[0]);
  if (!err.empty()) return err;
  Arg& key = a[1];
  if (key.str.empty()) return {};
  VarNames& names = pc.var_names ? *pc.var_names : VarNames::global();
  std::string verr;
  if (names.parse(key.str, &key.var, &verr)) {
    key.type = ArgType::kVar;
    return {};
  }
  std::string dec;
  if (!base64_decode(key.str, dec))
    return "failed to parse key : argument needs to be base64 encoded, and can either be a "
           "string or a variable";
  key.str = std::move(dec);
  return {};
}

bool c_hmac(const Arg* a, Sample& s, const Ctx& ctx) {
  const auto* md = static_cast<const EVP_MD*>(a[0].obj.get());
  std::string_view key = a[1].str;
  std::string& kb = ctx.sc().next();
  if (a[1].type == ArgType::kVar) {
    Sample v;
    if (!read_var_as(a[1].var, Type::kStr, ctx, v)) return false;
    std::string dec;
    if (!base64_decode(v.str, dec)) return false;
    kb = std::move(dec);
    key = kb;
  }
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  static const unsigned char kEmpty = 0;
  const void* kp = key.empty() ? &kEmpty : static_cast<const void*>(key.data());
  if (!md || !HMAC(md, kp, static_cast<int>(key.size()),
                   reinterpret_cast<const unsigned char*>(s.str.data()), s.str.size(), out,
                   &len))
    return false;
  std::string& b = ctx.sc().next();
  b.assign(reinterpret_cast<const char*>(out), len);
  set_bin(s, b);
  return true;
}

constexpr ArgSpec kOptInt = args(0, ArgType::kSint);

constexpr ConvDef kConvs[] = {
    {"crc32", c_hash32<base::crc32>, kOptInt, nullptr, Type::kBin, Type::kSint},
    {"crc32c", c_hash32<base::crc32c>, kOptInt, nullptr, Type::kBin, Type::kSint},
    {"digest", c_digest, args(1, ArgType::kStr), check_digest, Type::kBin, Type::kBin},
    {"djb2", c_hash32<djb2>, kOptInt, nullptr, Type::kBin, Type::kSint},
    {"hmac", c_hmac, args(2, ArgType::kStr, ArgType::kStr), check_hmac, Type::kBin, Type::kBin},
    {"sdbm", c_hash32<sdbm>, kOptInt, nullptr, Type::kBin, Type::kSint},
    {"sha1", c_sha1, no_args(), nullptr, Type::kBin, Type::kBin},
    {"sha2", c_sha2, kOptInt, check_sha2, Type::kBin, Type::kBin},
    {"wt6", c_hash32<wt6>, kOptInt, nullptr, Type::kBin, Type::kSint},
    {"xxh3", c_xxh3, kOptInt, nullptr, Type::kBin, Type::kSint},
    {"xxh32", c_xxh32, kOptInt, nullptr, Type::kBin, Type::kSint},
    {"xxh64", c_xxh64, kOptInt, nullptr, Type::kBin, Type::kSint},
};

}  // namespace

std::span<const ConvDef> hash_convs() { return kConvs; }

}  // namespace sluice::sample::tables

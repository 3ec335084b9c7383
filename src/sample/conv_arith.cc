// Arithmetic and bitwise converters (HAProxy's section 7.3.1): add, sub, mul, div, mod, neg,
// and, or, xor, cpl, the tests not, odd, even, bool, and the binary forms htonl, be2dec,
// le2dec and be2hex.
//
// The operand of add() and its kin is "an integer or a variable name": the argument is a
// string that the check turns into an integer (Arg::sint, type kSint) or a variable
// (Arg::var, type kVar). Results saturate at the bounds of a signed 64-bit integer, as
// HAProxy's arith helpers do; division by zero gives the largest value, modulo by zero 0.
#include <algorithm>
#include <charconv>
#include <limits>
#include <string>

#include "sample/tables.h"
#include "sample/var_read.h"

namespace sluice::sample::tables {

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// An integer as HAProxy's argument reader takes it: optional sign then digits only; values
// past the range saturate.
bool parse_int_arg(std::string_view s, int64_t* out) {
  std::size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
  if (i == s.size()) return false;
  uint64_t v = 0;
  bool over = false;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    if (v > (uint64_t{1} << 63) / 10) over = true;
    v = v * 10 + static_cast<uint64_t>(s[i] - '0');
    if (v > (uint64_t{1} << 63)) over = true;
  }
  if (over) {
    *out = neg ? kMin : kMax;
  } else if (neg) {
    *out = v == (uint64_t{1} << 63) ? kMin : -static_cast<int64_t>(v);
  } else {
    *out = v > static_cast<uint64_t>(kMax) ? kMax : static_cast<int64_t>(v);
  }
  return true;
}

// add(<value>) and kin: an empty value is 0 (HAProxy accepts `add` and `add()`).
std::string check_int_or_var(Arg* a, const ParseCtx& pc) {
  Arg& v = a[0];
  if (v.str.empty()) {
    v.type = ArgType::kSint;
    v.sint = 0;
    return {};
  }
  if (parse_int_arg(v.str, &v.sint)) {
    v.type = ArgType::kSint;
    return {};
  }
  VarNames& names = pc.var_names ? *pc.var_names : VarNames::global();
  std::string err;
  if (names.parse(v.str, &v.var, &err)) {
    v.type = ArgType::kVar;
    return {};
  }
  return "expects an integer or a variable name";
}

// The operand's value: the integer, or the variable cast to an integer (false when unset).
bool operand(const Arg& a, const Ctx& ctx, int64_t* out) {
  if (a.type != ArgType::kVar) {
    *out = a.sint;
    return true;
  }
  Sample v;
  if (!read_var_as(a.var, Type::kSint, ctx, v)) return false;
  *out = v.sint;
  return true;
}

int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? kMax : kMin;
  return r;
}

int64_t sat_sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return b < 0 ? kMax : kMin;
  return r;
}

int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return (a < 0) != (b < 0) ? kMin : kMax;
  return r;
}

template <int64_t (*Op)(int64_t, int64_t)>
bool c_binop(const Arg* a, Sample& s, const Ctx& ctx) {
  int64_t v;
  if (!operand(a[0], ctx, &v)) return false;
  s.sint = Op(s.sint, v);
  s.type = Type::kSint;
  return true;
}

int64_t op_div(int64_t a, int64_t b) {
  if (b == 0) return kMax;
  if (a == kMin && b == -1) return kMax;
  return a / b;
}
int64_t op_mod(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  return a % b;
}
int64_t op_and(int64_t a, int64_t b) { return a & b; }
int64_t op_or(int64_t a, int64_t b) { return a | b; }
int64_t op_xor(int64_t a, int64_t b) { return a ^ b; }

bool c_neg(const Arg*, Sample& s, const Ctx&) {
  s.sint = s.sint == kMin ? kMax : -s.sint;
  return true;
}

bool c_cpl(const Arg*, Sample& s, const Ctx&) {
  s.sint = ~s.sint;
  return true;
}

bool c_not(const Arg*, Sample& s, const Ctx&) {
  s = Sample::boolean(s.sint == 0);
  return true;
}

bool c_bool(const Arg*, Sample& s, const Ctx&) {
  s = Sample::boolean(s.sint != 0);
  return true;
}

bool c_odd(const Arg*, Sample& s, const Ctx&) {
  s = Sample::boolean((s.sint & 1) != 0);
  return true;
}

bool c_even(const Arg*, Sample& s, const Ctx&) {
  s = Sample::boolean((s.sint & 1) == 0);
  return true;
}

// htonl: the low 32 bits in network order, 4 bytes of binary.
bool c_htonl(const Arg*, Sample& s, const Ctx& ctx) {
  std::string& b = ctx.sc().next();
  auto v = static_cast<uint32_t>(s.sint);
  for (int i = 3; i >= 0; --i) b += static_cast<char>((v >> (i * 8)) & 0xff);
  s.type = Type::kBin;
  s.str = b;
  s.flags &= ~kConst;
  return true;
}

// be2dec/le2dec(<separator>,<chunk_size>[,<truncate>])
std::string check_truncate(const Arg& a) {
  int64_t t = a.given ? a.sint : 0;
  if (t != 0 && t != 1) return "Unsupported truncate value (" + std::to_string(t) + ")";
  return {};
}

std::string check_2dec(Arg* a, const ParseCtx&) {
  int64_t chunk = a[1].given ? a[1].sint : 0;
  if (chunk < 1 || chunk > 8)
    return "chunk_size out of [1..8] range (" + std::to_string(chunk) + ")";
  return check_truncate(a[2]);
}

// Each <chunk_size> bytes as one unsigned number, <separator> between them; the last, shorter
// chunk is dropped with <truncate>.
template <bool kBigEndian>
bool c_2dec(const Arg* a, Sample& s, const Ctx& ctx) {
  std::string_view in = s.str;
  auto chunk = static_cast<std::size_t>(a[1].sint);
  bool trunc = a[2].given && a[2].sint == 1;
  std::string& b = ctx.sc().next();
  for (std::size_t i = 0; i < in.size(); i += chunk) {
    std::size_t n = std::min(chunk, in.size() - i);
    if (n < chunk && trunc) break;
    uint64_t v = 0;
    for (std::size_t k = 0; k < n; ++k) {
      auto byte = static_cast<uint8_t>(in[i + (kBigEndian ? k : n - 1 - k)]);
      v = (v << 8) | byte;
    }
    if (i) b += a[0].str;
    char num[24];
    auto r = std::to_chars(num, num + sizeof(num), v);
    b.append(num, r.ptr);
  }
  s.type = Type::kStr;
  s.str = b;
  s.flags &= ~kConst;
  return true;
}

// be2hex([<separator>[,<chunk_size>[,<truncate>]]]): the chunk size is checked only with a
// separator, as HAProxy does.
std::string check_2hex(Arg* a, const ParseCtx&) {
  int64_t chunk = a[1].given ? a[1].sint : 0;
  if (!a[0].str.empty() && chunk <= 0)
    return "chunk_size needs to be positive (" + std::to_string(chunk) + ")";
  return check_truncate(a[2]);
}

bool c_2hex(const Arg* a, Sample& s, const Ctx& ctx) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string_view in = s.str;
  int64_t chunk = a[1].given ? a[1].sint : 0;
  bool trunc = a[2].given && a[2].sint == 1;
  if (chunk > 0 && trunc) in = in.substr(0, in.size() - in.size() % static_cast<std::size_t>(chunk));
  std::string& b = ctx.sc().next();
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (i && chunk > 0 && i % static_cast<std::size_t>(chunk) == 0) b += a[0].str;
    auto byte = static_cast<uint8_t>(in[i]);
    b += kHex[byte >> 4];
    b += kHex[byte & 15];
  }
  s.type = Type::kStr;
  s.str = b;
  s.flags &= ~kConst;
  return true;
}

constexpr ArgSpec kIntOrVar = args(1, ArgType::kStr);
constexpr ArgSpec kBinFmt = args(1, ArgType::kStr, ArgType::kSint, ArgType::kSint);

constexpr ConvDef kConvs[] = {
    {"add", c_binop<sat_add>, kIntOrVar, check_int_or_var, Type::kSint, Type::kSint},
    {"and", c_binop<op_and>, kIntOrVar, check_int_or_var, Type::kSint, Type::kSint},
    {"be2dec", c_2dec<true>, kBinFmt, check_2dec, Type::kBin, Type::kStr},
    {"be2hex", c_2hex, kBinFmt, check_2hex, Type::kBin, Type::kStr},
    {"bool", c_bool, no_args(), nullptr, Type::kSint, Type::kBool},
    {"cpl", c_cpl, no_args(), nullptr, Type::kSint, Type::kSint},
    {"div", c_binop<op_div>, kIntOrVar, check_int_or_var, Type::kSint, Type::kSint},
    {"even", c_even, no_args(), nullptr, Type::kSint, Type::kBool},
    {"htonl", c_htonl, no_args(), nullptr, Type::kSint, Type::kBin},
    {"le2dec", c_2dec<false>, kBinFmt, check_2dec, Type::kBin, Type::kStr},
    {"mod", c_binop<op_mod>, kIntOrVar, check_int_or_var, Type::kSint, Type::kSint},
    {"mul", c_binop<sat_mul>, kIntOrVar, check_int_or_var, Type::kSint, Type::kSint},
    {"neg", c_neg, no_args(), nullptr, Type::kSint, Type::kSint},
    {"not", c_not, no_args(), nullptr, Type::kSint, Type::kBool},
    {"odd", c_odd, no_args(), nullptr, Type::kSint, Type::kBool},
    {"or", c_binop<op_or>, kIntOrVar, check_int_or_var, Type::kSint, Type::kSint},
    {"sub", c_binop<sat_sub>, kIntOrVar, check_int_or_var, Type::kSint, Type::kSint},
    {"xor", c_binop<op_xor>, kIntOrVar, check_int_or_var, Type::kSint, Type::kSint},
};

}  // namespace

std::span<const ConvDef> arith_convs() { return kConvs; }

}  // namespace sluice::sample::tables

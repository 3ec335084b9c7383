// String converters (HAProxy's section 7.3.1): case, trimming, slicing, words and fields,
// host and port of a Host value, and the small tests (length, has_ctl, iif). Those that read
// variables or patterns (concat, add_item, strcmp, regsub, language) are in conv_text.cc.
#include <algorithm>
#include <cstdio>
#include <string>

#include "sample/tables.h"
#include "sample/var_read.h"

namespace sluice::sample::tables {

namespace {

// Points `s` at `b`, a string built in the scratch.
void set_built(Sample& s, const std::string& b, Type t = Type::kStr) {
  s.type = t;
  s.str = b;
  s.flags &= ~kConst;
}

bool c_lower(const Arg*, Sample& s, const Ctx& ctx) {
  std::string& b = ctx.sc().next();
  b.assign(s.str);
  for (char& c : b)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  set_built(s, b);
  return true;
}

bool c_upper(const Arg*, Sample& s, const Ctx& ctx) {
  std::string& b = ctx.sc().next();
  b.assign(s.str);
  for (char& c : b)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  set_built(s, b);
  return true;
}

// ltrim(<chars>) / rtrim(<chars>): only the view moves.
bool c_ltrim(const Arg* a, Sample& s, const Ctx&) {
  std::size_t i = s.str.find_first_not_of(a[0].str);
  s.str = i == std::string_view::npos ? s.str.substr(s.str.size()) : s.str.substr(i);
  return true;
}

bool c_rtrim(const Arg* a, Sample& s, const Ctx&) {
  std::size_t i = s.str.find_last_not_of(a[0].str);
  s.str = s.str.substr(0, i == std::string_view::npos ? 0 : i + 1);
  return true;
}

bool c_length(const Arg*, Sample& s, const Ctx&) {
  s = Sample::integer(static_cast<int64_t>(s.str.size()));
  return true;
}

bool c_cut_crlf(const Arg*, Sample& s, const Ctx&) {
  std::size_t i = s.str.find_first_of("\r\n");
  if (i != std::string_view::npos) s.str = s.str.substr(0, i);
  return true;
}

bool c_reverse(const Arg*, Sample& s, const Ctx& ctx) {
  std::string& b = ctx.sc().next();
  b.assign(s.str.rbegin(), s.str.rend());
  set_built(s, b);
  return true;
}

// bytes(<offset>[,<length>]): each an integer or a variable name.
std::string check_bytes(Arg* a, const ParseCtx& pc) {
  VarNames& names = pc.var_names ? *pc.var_names : VarNames::global();
  for (int i = 0; i < 2; ++i) {
    Arg& v = a[i];
    if (!v.given) continue;
    if (v.str.empty()) {
      v.type = ArgType::kSint;
      v.sint = 0;
    } else {
      std::string_view t = v.str;
      std::size_t k = t[0] == '-' || t[0] == '+' ? 1 : 0;
      bool digits = k < t.size() && std::all_of(t.begin() + static_cast<long>(k), t.end(),
                                                [](char c) { return c >= '0' && c <= '9'; });
      std::string err;
      if (digits) {
        v.type = ArgType::kSint;
        v.sint = leading_int(t);
      } else if (names.parse(t, &v.var, &err)) {
        v.type = ArgType::kVar;
        continue;
      } else {
        return "expects an integer or a variable name";
      }
    }
    if (i == 0 && v.sint < 0) return "expects a non-negative integer";
    if (i == 1 && v.sint <= 0) return "expects a positive integer";
  }
  return {};
}

bool bytes_operand(const Arg& a, const Ctx& ctx, int64_t* out) {
  if (a.type != ArgType::kVar) {
    *out = a.sint;
    return true;
  }
  Sample v;
  if (!read_var_as(a.var, Type::kSint, ctx, v)) return false;
  *out = v.sint;
  return true;
}

bool c_bytes(const Arg* a, Sample& s, const Ctx& ctx) {
  int64_t off = 0, len = -1;
  if (a[0].given && !bytes_operand(a[0], ctx, &off)) return false;
  if (a[1].given && !bytes_operand(a[1], ctx, &len)) return false;
  if (off < 0 || (a[1].given && len < 0)) return false;
  auto o = static_cast<std::size_t>(off);
  s.str = o >= s.str.size() ? s.str.substr(s.str.size()) : s.str.substr(o);
  if (a[1].given) s.str = s.str.substr(0, static_cast<std::size_t>(len));
  return true;
}

// field/word(<index>,<delimiters>[,<count>])
std::string check_field(Arg* a, const ParseCtx&) {
  if (a[0].sint == 0) return "Unexpected value 0 for index";
  if (a[1].str.empty()) return "Empty separators list";
  return {};
}

// The pieces of `in` between delimiters: fields (empty ones count) or words (they do not).
// Finds piece number `index` (1-based) from the left or, negative, from the right, and the
// span of `count` pieces from it towards the other end (0 or less, or more pieces than are
// left: up to that end of the string).
template <bool kWords>
bool slice(std::string_view in, std::string_view delims, int64_t index, int64_t count,
           std::string_view* out) {
  auto is_delim = [&](char c) { return delims.find(c) != std::string_view::npos; };
  // Pieces as [begin, end) offsets, collected lazily from the chosen side.
  struct Span { std::size_t b, e; };
  auto next_left = [&](std::size_t* pos, Span* sp) {   // from *pos rightwards
    std::size_t p = *pos;
    if (kWords) {
      while (p < in.size() && is_delim(in[p])) ++p;
      if (p >= in.size()) return false;
    } else if (p > in.size()) {
      return false;
    }
    std::size_t e = p;
    while (e < in.size() && !is_delim(in[e])) ++e;
    *sp = {p, e};
    *pos = e + 1;
    return true;
  };
  auto next_right = [&](std::size_t* pos, Span* sp) {   // *pos: one past the end, leftwards
    std::size_t p = *pos;
    if (kWords) {
      while (p > 0 && is_delim(in[p - 1])) --p;
      if (p == 0) return false;
    } else if (p == std::string_view::npos) {
      return false;
    }
    std::size_t b = p;
    while (b > 0 && !is_delim(in[b - 1])) --b;
    *sp = {b, p};
    *pos = b == 0 ? std::string_view::npos : b - 1;
    if (kWords && b == 0) *pos = 0;
    return true;
  };
  Span first{}, last{};
  if (index > 0) {
    std::size_t pos = 0;
    for (int64_t i = 0; i < index; ++i)
      if (!next_left(&pos, &first)) return false;
    if (count <= 0) {
      *out = in.substr(first.b);
      return true;
    }
    // Fewer pieces than <count> left: up to the end of the string.
    last = first;
    Span sp{};
    for (int64_t i = 1; i < count; ++i) {
      if (!next_left(&pos, &sp)) {
        *out = in.substr(first.b);
        return true;
      }
      last = sp;
    }
    *out = in.substr(first.b, last.e - first.b);
    return true;
  }
  std::size_t pos = in.size();
  for (int64_t i = 0; i < -index; ++i)
    if (!next_right(&pos, &last)) return false;
  if (count <= 0) {
    *out = in.substr(0, last.e);
    return true;
  }
  first = last;
  Span sp{};
  for (int64_t i = 1; i < count; ++i) {
    if (!next_right(&pos, &sp)) {
      *out = in.substr(0, last.e);
      return true;
    }
    first = sp;
  }
  *out = in.substr(first.b, last.e - first.b);
  return true;
}

template <bool kWords>
bool c_slice(const Arg* a, Sample& s, const Ctx&) {
  std::string_view out;
  int64_t count = a[2].given ? a[2].sint : 1;
  if (!slice<kWords>(s.str, a[1].str, a[0].sint, count, &out)) return false;
  s.str = out;
  return true;
}

// has_ctl([<mask>]): bit N for byte N (0..31), bit 32 for DEL; default: all but tab.
constexpr uint64_t kCtlAll = 0x1ffffffffULL;
constexpr uint64_t kCtlDefault = kCtlAll & ~(uint64_t{1} << '\t');

std::string check_has_ctl(Arg* a, const ParseCtx&) {
  Arg& m = a[0];
  if (!m.given || m.str.empty()) {
    m.sint = static_cast<int64_t>(kCtlDefault);
    return {};
  }
  std::string_view t = m.str;
  std::size_t i = 0;
  bool neg = t[0] == '-';
  if (neg || t[0] == '+') ++i;
  int base = 10;
  if (t.size() - i > 2 && t[i] == '0' && (t[i + 1] == 'x' || t[i + 1] == 'X')) {
    base = 16;
    i += 2;
  }
  uint64_t v = 0;
  const std::size_t start = i;
  for (; i < t.size(); ++i) {
    char c = t[i];
    int d = c >= '0' && c <= '9' ? c - '0'
            : base == 16 && c >= 'a' && c <= 'f' ? c - 'a' + 10
            : base == 16 && c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                 : -1;
    if (d < 0) break;
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  if (i == start || i < t.size())
    return "cannot parse value '" + m.str + "', problem at position " +
           std::to_string(i) +
           "; expecting an integer value (decimal or hex with '0x' prefix)";
  if (neg) v = ~v + 1;
  if (v & ~kCtlAll) {
    char hex[24];
    snprintf(hex, sizeof(hex), "%llx", static_cast<unsigned long long>(v & ~kCtlAll));
    return std::string("unsupported excess bits 0x") + hex + " in argument value " + m.str;
  }
  m.sint = static_cast<int64_t>(v);
  return {};
}

bool c_has_ctl(const Arg* a, Sample& s, const Ctx&) {
  auto mask = static_cast<uint64_t>(a[0].sint);
  bool found = false;
  for (char ch : s.str) {
    auto c = static_cast<uint8_t>(ch);
    int bit = c < 32 ? c : c == 0x7f ? 32 : -1;
    if (bit >= 0 && (mask >> bit) & 1) {
      found = true;
      break;
    }
  }
  s = Sample::boolean(found);
  return true;
}

bool c_iif(const Arg* a, Sample& s, const Ctx&) {
  s = Sample::string(s.sint ? a[0].str : a[1].str, kConst);
  return true;
}

// A Host value's host and port: the port follows the last ':' after any "[v6]" part.
std::size_t port_colon(std::string_view h) {
  std::size_t from = 0;
  if (!h.empty() && h.find(']') != std::string_view::npos) from = h.rfind(']');
  std::size_t c = h.rfind(':');
  return c != std::string_view::npos && c >= from ? c : std::string_view::npos;
}

bool c_host_only(const Arg*, Sample& s, const Ctx& ctx) {
  std::size_t c = port_colon(s.str);
  std::string_view host = c == std::string_view::npos ? s.str : s.str.substr(0, c);
  std::string& b = ctx.sc().next();
  b.assign(host);
  for (char& ch : b)
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  set_built(s, b);
  return true;
}

// HAProxy reads the port without checking its digits, in a 32-bit unsigned number.
bool c_port_only(const Arg*, Sample& s, const Ctx&) {
  std::size_t c = port_colon(s.str);
  uint32_t port = 0;
  if (c != std::string_view::npos)
    for (char ch : s.str.substr(c + 1))
      port = port * 10 + static_cast<uint32_t>(static_cast<unsigned char>(ch) - '0');
  s = Sample::integer(port);
  return true;
}

constexpr ConvDef kConvs[] = {
    {"bytes", c_bytes, args(1, ArgType::kStr, ArgType::kStr), check_bytes, Type::kBin,
     Type::kBin},
    {"cut_crlf", c_cut_crlf, no_args(), nullptr, Type::kStr, Type::kStr},
    {"field", c_slice<false>, args(2, ArgType::kSint, ArgType::kStr, ArgType::kSint),
     check_field, Type::kStr, Type::kStr},
    {"has_ctl", c_has_ctl, args(0, ArgType::kStr), check_has_ctl, Type::kBin, Type::kBool},
    {"host_only", c_host_only, no_args(), nullptr, Type::kStr, Type::kStr},
    {"iif", c_iif, args(2, ArgType::kStr, ArgType::kStr), nullptr, Type::kBool, Type::kStr},
    {"length", c_length, no_args(), nullptr, Type::kStr, Type::kSint},
    {"lower", c_lower, no_args(), nullptr, Type::kStr, Type::kStr},
    {"ltrim", c_ltrim, args(1, ArgType::kStr), nullptr, Type::kStr, Type::kStr},
    {"port_only", c_port_only, no_args(), nullptr, Type::kStr, Type::kSint},
    {"reverse", c_reverse, no_args(), nullptr, Type::kStr, Type::kStr},
    {"rtrim", c_rtrim, args(1, ArgType::kStr), nullptr, Type::kStr, Type::kStr},
    {"upper", c_upper, no_args(), nullptr, Type::kStr, Type::kStr},
    {"word", c_slice<true>, args(2, ArgType::kSint, ArgType::kStr, ArgType::kSint),
     check_field, Type::kStr, Type::kStr},
};

}  // namespace

std::span<const ConvDef> string_convs() { return kConvs; }

}  // namespace sluice::sample::tables

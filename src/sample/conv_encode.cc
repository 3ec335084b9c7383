// Encoding converters (HAProxy's section 7.3.1): base64, b64dec, ub64enc, ub64dec, hex,
// hex2i, base2, url_dec, url_enc and json.
#include <cstdint>
#include <string>

#include "base/strings.h"
#include "sample/codec.h"
#include "sample/tables.h"

namespace sluice::sample::tables {

namespace {

void set_built(Sample& s, const std::string& b, Type t) {
  s.type = t;
  s.str = b;
  s.flags &= ~kConst;
}

bool c_base64(const Arg*, Sample& s, const Ctx& ctx) {
  std::string& b = ctx.sc().next();
  base64_encode(s.str, b);
  set_built(s, b, Type::kStr);
  return true;
}

bool c_b64dec(const Arg*, Sample& s, const Ctx& ctx) {
  std::string& b = ctx.sc().next();
  if (!base64_decode(s.str, b)) return false;
  set_built(s, b, Type::kBin);
  return true;
}

bool c_ub64enc(const Arg*, Sample& s, const Ctx& ctx) {
  std::string& b = ctx.sc().next();
  base64url_encode(s.str, b);
  set_built(s, b, Type::kStr);
  return true;
}

bool c_ub64dec(const Arg*, Sample& s, const Ctx& ctx) {
  std::string& b = ctx.sc().next();
  if (!base64url_decode(s.str, b)) return false;
  set_built(s, b, Type::kBin);
  return true;
}

// hex: two upper-case digits per byte.
bool c_hex(const Arg*, Sample& s, const Ctx& ctx) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string& b = ctx.sc().next();
  for (char ch : s.str) {
    auto c = static_cast<uint8_t>(ch);
    b += kHex[c >> 4];
    b += kHex[c & 15];
  }
  set_built(s, b, Type::kStr);
  return true;
}

// base2: eight binary digits per byte.
bool c_base2(const Arg*, Sample& s, const Ctx& ctx) {
  std::string& b = ctx.sc().next();
  for (char ch : s.str) {
    auto c = static_cast<uint8_t>(ch);
    for (int i = 7; i >= 0; --i) b += (c >> i) & 1 ? '1' : '0';
  }
  set_built(s, b, Type::kStr);
  return true;
}

// hex2i: hex digits only (no sign, no 0x), into 64 bits that wrap; empty is 0.
bool c_hex2i(const Arg*, Sample& s, const Ctx&) {
  uint64_t v = 0;
  for (char c : s.str) {
    int d = base::hex_value(c);
    if (d < 0) return false;
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  s = Sample::integer(static_cast<int64_t>(v));
  return true;
}

// url_dec([<in_form>]): "%XX" decoded (a bad escape fails), '+' becomes a space once a '?'
// was seen or everywhere with a non-zero <in_form>. HAProxy decodes a C string: the input
// ends at its first NUL byte (a decoded %00 stays).
bool c_url_dec(const Arg* a, Sample& s, const Ctx& ctx) {
  bool in_form = a[0].given && a[0].sint != 0;
  std::string_view in = s.str;
  std::string& b = ctx.sc().next();
  for (std::size_t i = 0; i < in.size() && in[i] != 0; ++i) {
    char c = in[i];
    if (c == '+') {
      b += in_form ? ' ' : '+';
    } else if (c == '%') {
      int h = i + 1 < in.size() ? base::hex_value(in[i + 1]) : -1;
      int l = i + 2 < in.size() ? base::hex_value(in[i + 2]) : -1;
      if (h < 0 || l < 0) return false;
      b += static_cast<char>((h << 4) | l);
      i += 2;
    } else {
      if (c == '?') in_form = true;
      b += c;
    }
  }
  set_built(s, b, Type::kStr);
  return true;
}

// url_enc([query]): every byte but the unreserved ones (RFC 3986) as %XX.
std::string check_url_enc(Arg* a, const ParseCtx&) {
  if (a[0].given && !a[0].str.empty() && a[0].str != "query")
    return "Unexpected encode type. Allowed value is 'query'";
  return {};
}

bool c_url_enc(const Arg*, Sample& s, const Ctx& ctx) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string& b = ctx.sc().next();
  for (char ch : s.str) {
    auto c = static_cast<uint8_t>(ch);
    bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                c == '-' || c == '.' || c == '_' || c == '~';
    if (keep) {
      b += ch;
    } else {
      b += '%';
      b += kHex[c >> 4];
      b += kHex[c & 15];
    }
  }
  set_built(s, b, Type::kStr);
  return true;
}

// json([<input-code>]): "ascii" (the default) escapes each byte; the utf8 forms decode UTF-8
// and fail on a bad sequence, or skip it ('s'); 'p' lets overlong forms pass.
enum JsonMode : int64_t { kAscii = 0, kUtf8 = 1, kSkip = 2, kPermissive = 4 };

std::string check_json(Arg* a, const ParseCtx&) {
  std::string_view m = a[0].given ? std::string_view(a[0].str) : std::string_view();
  if (m.empty() || m == "ascii") a[0].sint = kAscii;
  else if (m == "utf8") a[0].sint = kUtf8;
  else if (m == "utf8s") a[0].sint = kUtf8 | kSkip;
  else if (m == "utf8p") a[0].sint = kUtf8 | kPermissive;
  else if (m == "utf8ps") a[0].sint = kUtf8 | kSkip | kPermissive;
  else
    return "Unexpected input code type. Allowed value are 'ascii', 'utf8', 'utf8s', 'utf8p' "
           "and 'utf8ps'";
  return {};
}

// One UTF-8 character at the start of `in` (HAProxy's utf8_next): its code in *c, the bytes it
// takes in *len, and whether it is a bad or truncated sequence, an overlong form, or a code
// point that is a surrogate or U+FFFE/U+FFFF.
struct Utf8 {
  uint32_t c = 0;
  std::size_t len = 1;
  bool bad = false, overlong = false, invalid = false;
};

Utf8 utf8_next(std::string_view in) {
  Utf8 u;
  auto p = static_cast<uint8_t>(in[0]);
  int more;
  if (p < 0x80) { u.c = p; return u; }
  if (p < 0xc0 || p >= 0xfe) { u.c = p; u.bad = true; return u; }
  if (p < 0xe0) { u.c = p & 0x1f; more = 1; }
  else if (p < 0xf0) { u.c = p & 0x0f; more = 2; }
  else if (p < 0xf8) { u.c = p & 0x07; more = 3; }
  else if (p < 0xfc) { u.c = p & 0x03; more = 4; }
  else { u.c = p & 0x01; more = 5; }
  std::size_t i = 1;
  for (; more > 0 && i < in.size(); --more, ++i) {
    auto b = static_cast<uint8_t>(in[i]);
    if ((b & 0xc0) != 0x80) {
      u.len = i;
      u.bad = true;
      return u;
    }
    u.c = (u.c << 6) | (b & 0x3f);
  }
  u.len = i;
  if (more > 0) u.bad = true;
  if ((i <= 2 && u.c < 0x80) || (i == 3 && u.c < 0x800) || (i == 4 && u.c < 0x10000))
    u.overlong = true;
  if ((u.c >= 0xd800 && u.c <= 0xdfff) || u.c == 0xfffe || u.c == 0xffff) u.invalid = true;
  return u;
}

bool c_json(const Arg* a, Sample& s, const Ctx& ctx) {
  int64_t mode = a[0].sint;
  std::string_view in = s.str;
  std::string& b = ctx.sc().next();
  std::size_t i = 0;
  while (i < in.size() && in[i] != 0) {   // a C string, as in HAProxy
    uint32_t c;
    if (mode & kUtf8) {
      Utf8 u = utf8_next(in.substr(i));
      bool err = u.bad || u.invalid || (u.overlong && !(mode & kPermissive)) || u.c > 0xffff;
      i += u.len;
      if (err) {
        if (!(mode & kSkip)) return false;
        continue;
      }
      c = u.c;
    } else {
      c = static_cast<uint8_t>(in[i++]);
    }
    switch (c) {
      case '"': b += "\\\""; break;
      case '\\': b += "\\\\"; break;
      case '/': b += "\\/"; break;
      case '\b': b += "\\b"; break;
      case '\f': b += "\\f"; break;
      case '\r': b += "\\r"; break;
      case '\n': b += "\\n"; break;
      case '\t': b += "\\t"; break;
      default:
        if (c < 0x20 || c > 0x7e) {
          static constexpr char kHex[] = "0123456789abcdef";
          b += "\\u";
          for (int k = 12; k >= 0; k -= 4) b += kHex[(c >> k) & 15];
        } else {
          b += static_cast<char>(c);
        }
    }
  }
  set_built(s, b, Type::kStr);
  return true;
}

constexpr ConvDef kConvs[] = {
    {"b64dec", c_b64dec, no_args(), nullptr, Type::kStr, Type::kBin},
    {"base2", c_base2, no_args(), nullptr, Type::kBin, Type::kStr},
    {"base64", c_base64, no_args(), nullptr, Type::kBin, Type::kStr},
    {"hex", c_hex, no_args(), nullptr, Type::kBin, Type::kStr},
    {"hex2i", c_hex2i, no_args(), nullptr, Type::kStr, Type::kSint},
    {"json", c_json, args(0, ArgType::kStr), check_json, Type::kStr, Type::kStr},
    {"ub64dec", c_ub64dec, no_args(), nullptr, Type::kStr, Type::kBin},
    {"ub64enc", c_ub64enc, no_args(), nullptr, Type::kBin, Type::kStr},
    {"url_dec", c_url_dec, args(0, ArgType::kSint), nullptr, Type::kStr, Type::kStr},
    {"url_enc", c_url_enc, args(0, ArgType::kStr), check_url_enc, Type::kStr, Type::kStr},
};

}  // namespace

std::span<const ConvDef> encode_convs() { return kConvs; }

}  // namespace sluice::sample::tables

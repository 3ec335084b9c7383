// Base64 codecs of the converters (sample/codec.h).
#include "sample/codec.h"

#include <cstdint>

namespace sluice::sample {

namespace {

constexpr char kStd[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr char kUrl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr int kPad = 64;

// A byte's 6-bit value in the alphabet (`url`: '-' and '_' instead of '+' and '/'); '=' is
// kPad; -1 for anything else.
int value(char c, bool url) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == (url ? '-' : '+')) return 62;
  if (c == (url ? '_' : '/')) return 63;
  if (c == '=') return kPad;
  return -1;
}

void encode(std::string_view in, std::string& out, const char* alpha, bool pad) {
  std::size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    uint32_t v = (uint32_t{static_cast<uint8_t>(in[i])} << 16) |
                 (uint32_t{static_cast<uint8_t>(in[i + 1])} << 8) | static_cast<uint8_t>(in[i + 2]);
    out += alpha[v >> 18];
    out += alpha[(v >> 12) & 63];
    out += alpha[(v >> 6) & 63];
    out += alpha[v & 63];
  }
  std::size_t rest = in.size() - i;
  if (rest == 0) return;
  uint32_t v = uint32_t{static_cast<uint8_t>(in[i])} << 16;
  if (rest == 2) v |= uint32_t{static_cast<uint8_t>(in[i + 1])} << 8;
  out += alpha[v >> 18];
  out += alpha[(v >> 12) & 63];
  if (rest == 2) out += alpha[(v >> 6) & 63];
  if (pad) out.append(rest == 1 ? "==" : "=");
}

// Appends the bytes of one group of 4 values, less `pad` bytes.
void emit(const int* t, int pad, std::string& out) {
  char b[3] = {static_cast<char>((t[0] << 2) | (t[1] >> 4)),
               static_cast<char>((t[1] << 4) | (t[2] >> 2)),
               static_cast<char>((t[2] << 6) | t[3])};
  out.append(b, static_cast<std::size_t>(3 - pad));
}

}  // namespace

void base64_encode(std::string_view in, std::string& out) { encode(in, out, kStd, true); }
void base64url_encode(std::string_view in, std::string& out) { encode(in, out, kUrl, false); }

bool base64_decode(std::string_view in, std::string& out) {
  if (in.size() % 4) return false;
  int t[4];
  int i = 0, pad = 0;
  for (char c : in) {
    int b = value(c, false);
    if (b < 0) return false;
    if (pad && b != kPad) return false;   // padding is continuous
    if (pad && i < 2) return false;       // "XX==" or "XXX=", never "X===" or "===="
    if (b == kPad) ++pad;
    t[i++] = b;
    if (i == 4) {
      emit(t, pad, out);
      i = pad = 0;
    }
  }
  return true;
}

bool base64url_decode(std::string_view in, std::string& out) {
  int missing = 0;
  switch (in.size() & 3) {
    case 0: break;
    case 2: missing = 2; break;
    case 3: missing = 1; break;
    default: return false;
  }
  int t[4];
  int i = 0;
  for (char c : in) {
    int b = value(c, true);
    if (b < 0) return false;
    t[i++] = b == kPad ? 63 : b;
    if (i == 4) {
      emit(t, 0, out);
      i = 0;
    }
  }
  if (missing) {
    while (i < 4) t[i++] = 0;
    emit(t, missing, out);
  }
  return true;
}

}  // namespace sluice::sample

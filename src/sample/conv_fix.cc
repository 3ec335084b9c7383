// fix_tag_value(<tag>) (HAProxy's section 7.3.1): the value of a tag in a FIX (Financial
// Information eXchange) message, HAProxy's way, checked against HAProxy 3.5:
//   - the message is read from its start as `<digits>=<value>\x01` fields; a field that is not
//     one (no digits, no '=', no final \x01) ends the search with no sample;
//   - the first field with the tag answers: its value, binary, or no sample when it is empty;
//   - tag numbers, in the message and in the argument, wrap through 32 bits (as HAProxy's do);
//     the argument is a number other than 0, or one of the names BeginString, BodyLength,
//     CheckSum, MsgType, SenderCompID and TargetCompID (any case).
//
// fix_is_valid: whether the input starts with a whole, valid FIX message, HAProxy's way (checked
// against HAProxy 3.5): fewer than 26 bytes, or a field not complete yet (no '=' after its tag,
// no \x01 after its value) is "not known yet": no sample (more bytes may arrive). Else the
// fields are BeginString (8) with FIX.4.0 to FIX.4.4 or FIXT.1.1, BodyLength (9) with a decimal
// value, MsgType (35), any fields with numeric tags (values may be empty), then CheckSum (10):
// the body length counts the bytes from after BodyLength's field to CheckSum's tag, the checksum
// is three digits worth the sum of the bytes before its tag, modulo 256. Bytes after it are not
// read.
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "http/http.h"
#include "sample/tables.h"

namespace sluice::sample::tables {

namespace {

constexpr char kFixSoh = '\x01';

std::string check_fix_tag(Arg* a, const ParseCtx&) {
  static constexpr struct {
    std::string_view name;
    uint32_t tag;
  } kNames[] = {{"BeginString", 8},   {"BodyLength", 9},    {"CheckSum", 10},
                {"MsgType", 35},      {"SenderCompID", 49}, {"TargetCompID", 56}};
  uint32_t tag = 0;
  if (!digits_u32(a[0].str, &tag)) {
    for (const auto& n : kNames)
      if (http::iequals(a[0].str, n.name)) tag = n.tag;
  }
  if (tag == 0) return fmt::format("Unknown FIX tag name '{}'", a[0].str);
  a[0].sint = tag;
  return {};
}

bool c_fix_tag_value(const Arg* a, Sample& s, const Ctx&) {
  std::string_view m = s.str;
  auto want = static_cast<uint32_t>(a[0].sint);
  std::size_t p = 0;
  while (p < m.size()) {
    std::size_t eq = m.find('=', p);
    uint32_t tag = 0;
    if (eq == std::string_view::npos || !digits_u32(m.substr(p, eq - p), &tag)) return false;
    std::size_t soh = m.find(kFixSoh, eq + 1);
    if (soh == std::string_view::npos) return false;
    if (tag == want) {
      if (soh == eq + 1) return false;
      s.type = Type::kBin;
      s.str = m.substr(eq + 1, soh - eq - 1);
      return true;
    }
    p = soh + 1;
  }
  return false;
}

enum class FixCheck : uint8_t { kValid, kInvalid, kNeedMore };

// The field at m[*p]: its tag up to the next '=' (digits, wrapping), its value up to the next
// \x01; both must be there before the tag is judged. Moves *p past it.
FixCheck fix_field(std::string_view m, std::size_t* p, uint32_t* tag, std::string_view* value) {
  std::size_t eq = m.find('=', *p);
  if (eq == std::string_view::npos) return FixCheck::kNeedMore;
  std::size_t soh = m.find(kFixSoh, eq + 1);
  if (soh == std::string_view::npos) return FixCheck::kNeedMore;
  if (!digits_u32(m.substr(*p, eq - *p), tag)) return FixCheck::kInvalid;
  *value = m.substr(eq + 1, soh - eq - 1);
  *p = soh + 1;
  return FixCheck::kValid;
}

FixCheck fix_validate(std::string_view m) {
  constexpr std::size_t kMinSize = 26;
  if (m.size() < kMinSize) return FixCheck::kNeedMore;
  std::size_t p = 0;
  uint32_t tag = 0;
  std::string_view v;
  FixCheck r = fix_field(m, &p, &tag, &v);
  if (r != FixCheck::kValid) return r;
  if (tag != 8 || (v != "FIX.4.0" && v != "FIX.4.1" && v != "FIX.4.2" && v != "FIX.4.3" &&
                   v != "FIX.4.4" && v != "FIXT.1.1"))
    return FixCheck::kInvalid;
  if ((r = fix_field(m, &p, &tag, &v)) != FixCheck::kValid) return r;
  uint32_t body_len = 0;
  if (tag != 9 || !digits_u32(v, &body_len)) return FixCheck::kInvalid;
  const std::size_t body = p;
  if ((r = fix_field(m, &p, &tag, &v)) != FixCheck::kValid) return r;
  if (tag != 35) return FixCheck::kInvalid;
  while (true) {
    std::size_t start = p;
    if ((r = fix_field(m, &p, &tag, &v)) != FixCheck::kValid) return r;
    if (tag != 10) continue;
    if (static_cast<uint32_t>(start - body) != body_len || v.size() != 3)
      return FixCheck::kInvalid;
    unsigned want = 0;
    for (char c : v) {
      if (c < '0' || c > '9') return FixCheck::kInvalid;
      want = want * 10 + static_cast<unsigned>(c - '0');
    }
    unsigned sum = 0;
    for (std::size_t i = 0; i < start; ++i) sum += static_cast<unsigned char>(m[i]);
    return sum % 256 == want ? FixCheck::kValid : FixCheck::kInvalid;
  }
}

bool c_fix_is_valid(const Arg*, Sample& s, const Ctx&) {
  FixCheck r = fix_validate(s.str);
  if (r == FixCheck::kNeedMore) return false;
  s = Sample::boolean(r == FixCheck::kValid);
  return true;
}

constexpr ConvDef kConvs[] = {
    {"fix_is_valid", c_fix_is_valid, no_args(), nullptr, Type::kBin, Type::kBool},
    {"fix_tag_value", c_fix_tag_value, args(1, ArgType::kStr), check_fix_tag, Type::kBin,
     Type::kBin},
};

}  // namespace

std::span<const ConvDef> fix_convs() { return kConvs; }

}  // namespace sluice::sample::tables

// fix_tag_value(<tag>) (HAProxy's section 7.3.1): the value of a tag in a FIX (Financial
// Information eXchange) message, HAProxy's way, checked against HAProxy 3.5:
//   - the message is read from its start as `<digits>=<value>\x01` fields; a field that is not
//     one (no digits, no '=', no final \x01) ends the search with no sample;
//   - the first field with the tag answers: its value, binary, or no sample when it is empty;
//   - tag numbers, in the message and in the argument, wrap through 32 bits (as HAProxy's do);
//     the argument is a number other than 0, or one of the names BeginString, BodyLength,
//     CheckSum, MsgType, SenderCompID and TargetCompID (any case).
// fix_is_valid is not provided yet (sample/registry.cc refuses it).
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "http/http.h"
#include "sample/tables.h"

namespace sluice::sample::tables {

namespace {

constexpr char kFixSoh = '\x01';

// A run of digits as a 32-bit tag number (wrapping); false when `s` is not all digits.
bool fix_tag_number(std::string_view s, uint32_t* out) {
  if (s.empty()) return false;
  uint32_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint32_t>(c - '0');
  }
  *out = v;
  return true;
}

std::string check_fix_tag(Arg* a, const ParseCtx&) {
  static constexpr struct {
    std::string_view name;
    uint32_t tag;
  } kNames[] = {{"BeginString", 8},   {"BodyLength", 9},    {"CheckSum", 10},
                {"MsgType", 35},      {"SenderCompID", 49}, {"TargetCompID", 56}};
  uint32_t tag = 0;
  if (!fix_tag_number(a[0].str, &tag)) {
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
    if (eq == std::string_view::npos || !fix_tag_number(m.substr(p, eq - p), &tag)) return false;
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

constexpr ConvDef kConvs[] = {
    {"fix_tag_value", c_fix_tag_value, args(1, ArgType::kStr), check_fix_tag, Type::kBin,
     Type::kBin},
};

}  // namespace

std::span<const ConvDef> fix_convs() { return kConvs; }

}  // namespace sluice::sample::tables

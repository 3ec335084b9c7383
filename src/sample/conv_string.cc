// String converters (HAProxy's section 7.3.1): case, trimming, slicing, words and fields.
#include "sample/tables.h"

namespace sluice::sample::tables {

namespace {

bool c_lower(const Arg*, Sample& s, const Ctx& ctx) {
  std::string& b = ctx.sc().next();
  b.assign(s.str);
  for (char& c : b)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  s.str = b;
  s.flags &= ~kConst;
  return true;
}

bool c_upper(const Arg*, Sample& s, const Ctx& ctx) {
  std::string& b = ctx.sc().next();
  b.assign(s.str);
  for (char& c : b)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  s.str = b;
  s.flags &= ~kConst;
  return true;
}

constexpr ConvDef kConvs[] = {
    {"lower", c_lower, no_args(), nullptr, Type::kStr, Type::kStr},
    {"upper", c_upper, no_args(), nullptr, Type::kStr, Type::kStr},
};

}  // namespace

std::span<const ConvDef> string_convs() { return kConvs; }

}  // namespace sluice::sample::tables

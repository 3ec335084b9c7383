#pragma once
// `http-request normalize-uri` (normalize_uri.cc): HAProxy 3.5's normalizers, pure functions
// on a request target. Any thread.
#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::rules {

struct Normalizer {
  enum class Kind : uint8_t {
    kFragmentEncode, kFragmentStrip, kMergeSlashes, kStripDot, kStripDotdot,
    kDecodeUnreserved, kPercentUpper, kSortQuery,
  };
  std::string_view name;
  Kind kind;
  std::string_view option;   // the one optional word it takes ("full", "strict"), or ""
};

// The normalizer called `name`, or null.
const Normalizer* find_normalizer(std::string_view name);

// `target` normalized into `out`. `option`: its word was given (full / strict). False: a
// strict normalizer met a malformed %-sequence (HAProxy answers 400).
bool normalize_uri(Normalizer::Kind kind, bool option, std::string_view target, std::string* out);

}  // namespace sluice::rules

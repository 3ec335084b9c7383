// Encoding converters (HAProxy's section 7.3.1): URL, JSON, base64, hex.
#include "sample/tables.h"

namespace sluice::sample::tables {

std::span<const ConvDef> encode_convs() { return {}; }

}  // namespace sluice::sample::tables

// Hash converters (HAProxy's section 7.3.1).
#include "sample/tables.h"

namespace sluice::sample::tables {

std::span<const ConvDef> hash_convs() { return {}; }

}  // namespace sluice::sample::tables

// Other converters (HAProxy's section 7.3.1): dates, addresses, variables, tests.
#include "sample/tables.h"

namespace sluice::sample::tables {

std::span<const ConvDef> misc_convs() { return {}; }

}  // namespace sluice::sample::tables

// HTTP fetches (HAProxy's section 7.3.6).
#include "sample/tables.h"

namespace sluice::sample::tables {

std::span<const FetchDef> http_fetches() { return {}; }

}  // namespace sluice::sample::tables

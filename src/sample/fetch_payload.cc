// Layer-5 fetches (HAProxy's section 7.3.5): the client's and the server's buffered bytes.
#include "sample/tables.h"

namespace sluice::sample::tables {

std::span<const FetchDef> payload_fetches() { return {}; }

}  // namespace sluice::sample::tables

// Layer-4 fetches (HAProxy's section 7.3.3): addresses, ports, the client socket.
#include "sample/tables.h"

namespace sluice::sample::tables {

std::span<const FetchDef> l4_fetches() { return {}; }

}  // namespace sluice::sample::tables

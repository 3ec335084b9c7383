#pragma once
// The machine's host name (gethostname()), for the places HAProxy shows it: the `hostname`
// fetch, %H, a stats node's default name, the configuration's "$HOSTNAME".
#include <string>

namespace sluice::base {

// Empty when the system does not say.
std::string host_name();

}  // namespace sluice::base

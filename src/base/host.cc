#include "base/host.h"

#include <unistd.h>

namespace sluice::base {

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return {};
  return buf;
}

}  // namespace sluice::base

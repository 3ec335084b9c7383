#include "base/result.h"

#include <cstring>

namespace sluice::base {

Error Error::from_errno(std::string what, int err, Side side, bool retryable) {
  Error e;
  e.side = side;
  e.sys_errno = err;
  e.retryable = retryable;
  e.message = std::move(what);
  e.message += ": ";
  e.message += std::strerror(err);
  return e;
}

}  // namespace sluice::base

#pragma once
// The interface every balance algorithm implements (one file per algorithm). Algorithms see
// servers and return candidates; they never open connections. Any thread may pick.
#include <cstddef>
#include <vector>

#include "lb/server.h"

namespace sluice::lb {

class Algorithm {
 public:
  virtual ~Algorithm() = default;
  // Fills `out` with up to `max` distinct candidates in the order they should be tried
  // (first choice first), taking only servers for which usable() is true. Any thread.
  virtual void pick(std::vector<Server*>& out, std::size_t max) = 0;
  virtual const char* name() const = 0;
};

}  // namespace sluice::lb

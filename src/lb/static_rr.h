#pragma once
// `balance static-rr`: round robin on the configured weights. As in HAProxy, changing a
// server's weight at run time has no effect (weight 0 still takes it out), and there is no
// slow start; a server going down or up still rebuilds the schedule.
#include "lb/roundrobin.h"

namespace sluice::lb {

class StaticRoundRobin : public RoundRobin {
 public:
  explicit StaticRoundRobin(std::vector<Server*> servers);
  const char* name() const override { return "static-rr"; }

 protected:
  int schedule_weight(const Server& s) const override;
};

}  // namespace sluice::lb

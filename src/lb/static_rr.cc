#include "lb/static_rr.h"

namespace sluice::lb {

StaticRoundRobin::StaticRoundRobin(std::vector<Server*> servers) : RoundRobin(std::move(servers)) {
  rebuild();   // the base constructor built with the base's weights
}

int StaticRoundRobin::schedule_weight(const Server& s) const {
  return s.admin_up() && s.weight() > 0 ? s.initial_weight() : 0;
}

}  // namespace sluice::lb

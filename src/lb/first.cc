#include "lb/first.h"

#include <algorithm>

namespace sluice::lb {

First::First(std::vector<Server*> servers) : by_id_(std::move(servers)) {
  std::stable_sort(by_id_.begin(), by_id_.end(),
                   [](const Server* a, const Server* b) { return a->settings().id < b->settings().id; });
}

void First::pick(const PickContext&, std::vector<Server*>& out, std::size_t max) {
  out.clear();
  for (Server* s : by_id_) {
    if (out.size() >= max) break;
    if (s->usable() && !s->full()) out.push_back(s);
  }
}

}  // namespace sluice::lb

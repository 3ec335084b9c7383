#include "lb/roundrobin.h"

#include <numeric>

namespace sluice::lb {

std::vector<uint32_t> smooth_weighted_order(const std::vector<int>& weights) {
  int g = 0;
  for (int w : weights)
    if (w > 0) g = std::gcd(g, w);
  std::vector<uint32_t> order;
  if (g == 0) return order;
  std::vector<int64_t> eff(weights.size()), current(weights.size(), 0);
  int64_t total = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    eff[i] = weights[i] > 0 ? weights[i] / g : 0;
    total += eff[i];
  }
  order.reserve(static_cast<std::size_t>(total));
  // Each step every server gains its weight and the richest is chosen and pays the total:
  // after `total` steps every server has been chosen exactly eff[i] times, spread evenly.
  for (int64_t step = 0; step < total; ++step) {
    std::size_t best = 0;
    for (std::size_t i = 0; i < eff.size(); ++i) {
      current[i] += eff[i];
      if (current[i] > current[best]) best = i;
    }
    current[best] -= total;
    order.push_back(static_cast<uint32_t>(best));
  }
  return order;
}

RoundRobin::RoundRobin(std::vector<Server*> servers)
    : servers_(std::move(servers)), schedule_(std::make_unique<Schedule>()) {
  // The virtual schedule_weight() is not dispatched to a subclass from here: subclasses
  // call rebuild() again from their own constructor.
  rebuild();
}

std::unique_ptr<RoundRobin::Schedule> RoundRobin::build() const {
  std::vector<int> weights;
  weights.reserve(servers_.size());
  for (Server* s : servers_) weights.push_back(schedule_weight(*s));
  auto sch = std::make_unique<Schedule>();
  sch->idx = smooth_weighted_order(weights);
  sch->order.reserve(sch->idx.size());
  for (uint32_t i : sch->idx) sch->order.push_back(servers_[i]);
  return sch;
}

void RoundRobin::rebuild() { schedule_.publish(build()); }

std::vector<uint32_t> RoundRobin::schedule() const { return schedule_.read()->idx; }

void RoundRobin::pick(const PickContext&, std::vector<Server*>& out, std::size_t max) {
  out.clear();
  if (max == 0) return;
  auto sch = schedule_.read();
  const std::size_t n = sch->order.size();
  if (n == 0) return;
  uint64_t start = cursor_.fetch_add(1, std::memory_order_relaxed);
  // The first candidate is the scheduled one; further candidates (for retries and
  // redispatch) follow the schedule, skipping duplicates, and servers that became unusable
  // or full since the schedule was built. Bounded by the schedule length; in the common
  // case (the scheduled server is pickable, max small) a handful of steps.
  for (std::size_t i = 0; i < n && out.size() < max; ++i) {
    Server* s = sch->order[(start + i) % n];
    if (!pickable(s)) continue;
    push_distinct(out, s);
  }
}

}  // namespace sluice::lb

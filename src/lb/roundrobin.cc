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

RoundRobin::RoundRobin(std::vector<Server*> servers) : servers_(std::move(servers)) {
  std::vector<int> weights;
  weights.reserve(servers_.size());
  for (Server* s : servers_) weights.push_back(s->usable() ? s->weight() : 0);
  schedule_ = smooth_weighted_order(weights);
}

void RoundRobin::pick(std::vector<Server*>& out, std::size_t max) {
  out.clear();
  if (schedule_.empty() || max == 0) return;
  uint64_t start = cursor_.fetch_add(1, std::memory_order_relaxed);
  const std::size_t n = schedule_.size();
  // The first candidate is the scheduled one; further candidates (for retries and
  // redispatch) follow the schedule, skipping duplicates. Bounded by the schedule length.
  for (std::size_t i = 0; i < n && out.size() < max; ++i) {
    Server* s = servers_[schedule_[(start + i) % n]];
    if (!s->usable()) continue;
    bool seen = false;
    for (Server* o : out) seen |= (o == s);
    if (!seen) out.push_back(s);
  }
}

}  // namespace sluice::lb

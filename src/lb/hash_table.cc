#include "lb/hash_table.h"

#include <algorithm>
#include <numeric>

#include "lb/algorithm.h"
#include "lb/hash.h"
#include "lb/roundrobin.h"

namespace sluice::lb {

std::unique_ptr<HashTable> HashTable::build(bool consistent, const std::vector<Server*>& servers) {
  auto t = std::make_unique<HashTable>();
  t->consistent_ = consistent;
  std::vector<Server*> live;
  std::vector<int> weights;
  for (Server* s : servers) {
    if (s->usable() && s->eweight() > 0) {
      live.push_back(s);
      weights.push_back(s->eweight());
    }
  }
  if (live.empty()) return t;
  if (!consistent) {
    // HAProxy's map (recalc_server_map): one slot per 1/16 of weight, so that a key lands on
    // the server HAProxy picks for the same servers and weights. Each slot, every server gains
    // its weight; the first (in declaration order) with the highest (score + total) / total
    // takes the slot and pays the total.
    std::vector<int64_t> ew(live.size()), score(live.size(), 0);
    int64_t tot = 0;
    for (std::size_t i = 0; i < live.size(); ++i) {
      ew[i] = static_cast<int64_t>(live[i]->weight()) * live[i]->ramp();
      tot += ew[i];
    }
    if (tot <= 0) return t;
    t->map_.reserve(static_cast<std::size_t>(tot));
    for (int64_t o = 0; o < tot; ++o) {
      std::size_t best = 0;
      int64_t max = 0;
      for (std::size_t i = 0; i < live.size(); ++i) {
        score[i] += ew[i];
        int64_t v = (score[i] + tot) / tot;
        if (i == 0 || v > max) {
          max = v;
          best = i;
        }
      }
      t->map_.push_back(live[best]);
      score[best] -= tot;
    }
    return t;
  }
  // Points per server proportional to its weight (not reduced by a gcd: a server's points
  // must not depend on the other servers' weights, or one change would move every key).
  std::size_t total = 0;
  for (int w : weights) total += static_cast<std::size_t>(w) * kPointsPerWeight;
  std::size_t per_weight = kPointsPerWeight;
  if (total > kMaxPoints) per_weight = std::max<std::size_t>(1, kMaxPoints * kPointsPerWeight / total);
  for (std::size_t k = 0; k < live.size(); ++k) {
    Server* s = live[k];
    std::size_t n = static_cast<std::size_t>(weights[k]) * per_weight;
    uint32_t base = static_cast<uint32_t>(s->settings().id) * 0x10000u;
    for (std::size_t p = 0; p < n; ++p) {
      // Two rounds of the integer hash: ids and point numbers are small consecutive values.
      uint32_t h = full_hash(full_hash(base + static_cast<uint32_t>(p)) ^ static_cast<uint32_t>(s->settings().id));
      t->ring_.push_back({h, s});
    }
  }
  std::sort(t->ring_.begin(), t->ring_.end(), [](const Point& a, const Point& b) {
    return a.hash != b.hash ? a.hash < b.hash : a.s->settings().id < b.s->settings().id;
  });
  unsigned bits = 1;
  while ((std::size_t{1} << bits) < t->ring_.size() && bits < 24) ++bits;
  t->shift_ = 32 - bits;
  t->bucket_.resize(std::size_t{1} << bits);
  std::size_t r = 0;
  for (std::size_t b = 0; b < t->bucket_.size(); ++b) {
    uint64_t start = static_cast<uint64_t>(b) << t->shift_;
    while (r < t->ring_.size() && t->ring_[r].hash < start) ++r;
    t->bucket_[b] = static_cast<uint32_t>(r);
  }
  return t;
}

void HashTable::lookup(uint32_t hash, std::vector<Server*>& out, std::size_t max) const {
  out.clear();
  if (max == 0) return;
  if (!consistent_) {
    const std::size_t n = map_.size();
    if (n == 0) return;
    std::size_t start = hash % n;
    for (std::size_t i = 0; i < n && out.size() < max; ++i) {
      Server* s = map_[(start + i) % n];
      if (pickable(s)) push_distinct(out, s);
    }
    return;
  }
  const std::size_t n = ring_.size();
  if (n == 0) return;
  std::size_t i = bucket_[hash >> shift_];
  while (i < n && ring_[i].hash < hash) ++i;
  for (std::size_t k = 0; k < n && out.size() < max; ++k) {
    Server* s = ring_[(i + k) % n].s;
    if (pickable(s)) push_distinct(out, s);
  }
}

}  // namespace sluice::lb

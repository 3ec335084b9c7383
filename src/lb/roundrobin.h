#pragma once
// Weighted round robin with a smooth interleaving (weights 1 and 3 give B A B B, not A B B B),
// lock-free across threads: the order is precomputed into a schedule whose length is the sum
// of the weights (divided by their gcd), and each pick advances one shared atomic cursor, so
// the work per pick does not depend on the number of servers and the distribution is exact
// over all threads together.
#include <atomic>
#include <cstdint>
#include <vector>

#include "lb/algorithm.h"

namespace sluice::lb {

class RoundRobin : public Algorithm {
 public:
  explicit RoundRobin(std::vector<Server*> servers);
  void pick(std::vector<Server*>& out, std::size_t max) override;
  const char* name() const override { return "roundrobin"; }

  // The precomputed order (tests).
  const std::vector<uint32_t>& schedule() const { return schedule_; }

 private:
  std::vector<Server*> servers_;
  std::vector<uint32_t> schedule_;   // indexes into servers_
  std::atomic<uint64_t> cursor_{0};
};

// Smooth weighted round robin order for `weights` (entries with weight 0 never appear).
std::vector<uint32_t> smooth_weighted_order(const std::vector<int>& weights);

}  // namespace sluice::lb

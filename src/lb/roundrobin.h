#pragma once
// Weighted round robin with a smooth interleaving (weights 1 and 3 give B A B B, not A B B B),
// lock-free across threads: the order is precomputed into a schedule whose length is the sum
// of the effective weights (divided by their gcd), and each pick advances one shared atomic
// cursor, so the work per pick does not depend on the number of servers and the distribution
// is exact over all threads together.
//
// Dynamic: rebuild() (a weight, usable or slow-start change) publishes a new schedule as an
// immutable snapshot (base/published.h); picks already running finish on the old one. Building
// costs O(schedule length x servers), off the pick path.
#include <atomic>
#include <cstdint>
#include <vector>

#include "lb/algorithm.h"
#include "base/published.h"

namespace sluice::lb {

class RoundRobin : public Algorithm {
 public:
  explicit RoundRobin(std::vector<Server*> servers);
  void pick(const PickContext& ctx, std::vector<Server*>& out, std::size_t max) override;
  void rebuild() override;
  const char* name() const override { return "roundrobin"; }

  // Convenience for callers without a context (tests, fallbacks). Any thread.
  void pick(std::vector<Server*>& out, std::size_t max) { pick(PickContext{}, out, max); }

  // The current order as indexes into the servers given to the constructor (tests).
  std::vector<uint32_t> schedule() const;

 protected:
  // The weight a server counts with in the schedule (0 = left out). Writer side.
  virtual int schedule_weight(const Server& s) const { return s.usable() ? s.eweight() : 0; }

 private:
  struct Schedule {
    std::vector<Server*> order;
    std::vector<uint32_t> idx;
  };
  std::unique_ptr<Schedule> build() const;

  std::vector<Server*> servers_;
  base::Published<Schedule> schedule_;
  alignas(64) std::atomic<uint64_t> cursor_{0};
};

// Smooth weighted round robin order for `weights` (entries with weight 0 never appear).
std::vector<uint32_t> smooth_weighted_order(const std::vector<int>& weights);

}  // namespace sluice::lb

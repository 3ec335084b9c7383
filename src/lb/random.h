#pragma once
// `balance random(<draws>)`: `draws` servers drawn at random in proportion to their weights,
// and the least loaded of them ((conns + 1) / weight) wins: with the default 2 draws, the
// "power of two choices", which keeps the maximum load close to the mean without any shared
// order. A draw is one index into a weighted slot table (a snapshot, like roundrobin's), so a
// pick costs O(draws) whatever the number of servers. The random source is per thread.
#include "lb/algorithm.h"
#include "base/published.h"

namespace sluice::lb {

class Random : public Algorithm {
 public:
  Random(std::vector<Server*> servers, int draws);
  void pick(const PickContext& ctx, std::vector<Server*>& out, std::size_t max) override;
  void rebuild() override;
  const char* name() const override { return "random"; }
  int draws() const { return draws_; }

  // Seeds the calling thread's generator (tests).
  static void seed_this_thread(uint64_t seed);

 private:
  struct Slots {
    std::vector<Server*> slot;   // each server eweight/gcd times
  };
  std::vector<Server*> servers_;
  int draws_;
  base::Published<Slots> slots_;
};

}  // namespace sluice::lb

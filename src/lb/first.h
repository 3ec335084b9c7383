#pragma once
// `balance first`: the usable server with the lowest id that still has a free connection
// slot (maxconn) takes the connection, so servers fill up one after the other and the last
// ones can be powered down when idle. Weights are ignored (0 still takes a server out).
// A pick walks the servers in id order: O(number of full servers), by design.
#include "lb/algorithm.h"

namespace sluice::lb {

class First : public Algorithm {
 public:
  explicit First(std::vector<Server*> servers);
  void pick(const PickContext& ctx, std::vector<Server*>& out, std::size_t max) override;
  void rebuild() override {}   // reads the atomics directly
  const char* name() const override { return "first"; }

 private:
  std::vector<Server*> by_id_;   // immutable after construction
};

}  // namespace sluice::lb

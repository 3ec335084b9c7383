#pragma once
// `balance source`: the client's IP address hashed (hash-type function and modifier) onto a
// map-based table or a consistent ring (hash_table.h), so a client keeps reaching the same
// server while the set of servers does not change (map-based) or changes elsewhere
// (consistent). Without a client address (never in practice) it falls back to roundrobin.
#include "lb/algorithm.h"
#include "lb/hash_table.h"
#include "lb/roundrobin.h"
#include "base/published.h"

namespace sluice::lb {

class SourceHash : public Algorithm {
 public:
  SourceHash(std::vector<Server*> servers, HashSettings h);
  void pick(const PickContext& ctx, std::vector<Server*>& out, std::size_t max) override;
  void rebuild() override;
  const char* name() const override { return "source"; }

 private:
  std::vector<Server*> servers_;
  HashSettings h_;
  base::Published<HashTable> table_;
  RoundRobin fallback_;
};

}  // namespace sluice::lb

#pragma once
// The two lookup structures behind hash-based balancing (`source`, `uri`, `hdr`), built as
// immutable snapshots from the usable servers and their effective weights:
//
// map-based: a table of sum(weights)/gcd slots in smooth weighted order; a key goes to slot
//   hash % size. Any change of the usable set or of a weight changes the size, so most keys
//   move (HAProxy's documented trade-off: even spread, no stickiness across changes).
// consistent: a ring of points, kPointsPerWeight per weight unit per server, each at
//   full_hash(server id, point number); a key goes to the first point at or after its hash.
//   The points of a server depend only on its id and weight, so adding, removing or
//   re-weighting one server moves only the keys that land on (or leave) its points: about
//   1/N of them. A bucket index over the top bits of the hash makes a lookup O(1) expected
//   instead of a binary search.
#include <cstdint>
#include <memory>
#include <vector>

#include "lb/server.h"

namespace sluice::lb {

class HashTable {
 public:
  static constexpr int kPointsPerWeight = 40;
  static constexpr std::size_t kMaxPoints = 1u << 20;

  // Builds from `servers`, taking those that are usable() with eweight() > 0.
  static std::unique_ptr<HashTable> build(bool consistent, const std::vector<Server*>& servers);

  bool empty() const { return consistent_ ? ring_.empty() : map_.empty(); }
  // Up to `max` distinct pickable candidates for `hash`: the key's server first, then the
  // next ones along the ring or the table (retries, or a server that went down since this
  // table was built: its keys go where a rebuilt table would send them, for consistent).
  void lookup(uint32_t hash, std::vector<Server*>& out, std::size_t max) const;

  std::size_t size() const { return consistent_ ? ring_.size() : map_.size(); }   // tests

 private:
  struct Point {
    uint32_t hash;
    Server* s;
  };
  bool consistent_ = false;
  std::vector<Server*> map_;
  std::vector<Point> ring_;          // sorted by hash
  std::vector<uint32_t> bucket_;     // first ring index with hash >= bucket start
  unsigned shift_ = 32;
};

}  // namespace sluice::lb

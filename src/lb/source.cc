#include "lb/source.h"

namespace sluice::lb {

SourceHash::SourceHash(std::vector<Server*> servers, HashSettings h)
    : servers_(std::move(servers)), h_(h), table_(HashTable::build(h.consistent, servers_)),
      fallback_(servers_) {}

void SourceHash::rebuild() {
  table_.publish(HashTable::build(h_.consistent, servers_));
  fallback_.rebuild();
}

void SourceHash::pick(const PickContext& ctx, std::vector<Server*>& out, std::size_t max) {
  if (!ctx.client) {
    fallback_.pick(ctx, out, max);
    return;
  }
  uint32_t h = hash_address(h_, *ctx.client);
  table_.read()->lookup(h, out, max);
}

}  // namespace sluice::lb

#include "lb/key_hash.h"

namespace sluice::lb {

KeyHash::KeyHash(std::vector<Server*> servers, HashSettings h, const char* name, std::string hdr_name)
    : servers_(std::move(servers)), h_(h), name_(name), hdr_name_(std::move(hdr_name)),
      table_(HashTable::build(h.consistent, servers_)), fallback_(servers_) {}

void KeyHash::rebuild() {
  table_.publish(HashTable::build(h_.consistent, servers_));
  fallback_.rebuild();
}

void KeyHash::pick(const PickContext& ctx, std::vector<Server*>& out, std::size_t max) {
  if (!ctx.key) {
    fallback_.pick(ctx, out, max);
    return;
  }
  table_.read()->lookup(hash_key(h_, *ctx.key), out, max);
}

}  // namespace sluice::lb

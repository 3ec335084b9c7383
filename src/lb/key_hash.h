#pragma once
// `balance uri` and `balance hdr(<name>)`: a request's URI or header value hashed onto a
// map-based table or a consistent ring, like `source`. In TCP mode there is no request, so
// PickContext::key is null and, as HAProxy does when the key is missing, the pick falls
// back to roundrobin. The hashing is complete and tested, ready for HTTP mode, which will
// pass the URI (honouring `len`/`depth`/`whole` then) or the header value as the key.
#include <string>

#include "lb/algorithm.h"
#include "lb/hash_table.h"
#include "lb/roundrobin.h"
#include "base/published.h"

namespace sluice::lb {

class KeyHash : public Algorithm {
 public:
  // `name` is "uri" or "hdr" (for show stat); `hdr_name` the header of hdr(<name>).
  KeyHash(std::vector<Server*> servers, HashSettings h, const char* name, std::string hdr_name = {});
  void pick(const PickContext& ctx, std::vector<Server*>& out, std::size_t max) override;
  void rebuild() override;
  const char* name() const override { return name_; }
  const std::string& hdr_name() const { return hdr_name_; }

 private:
  std::vector<Server*> servers_;
  HashSettings h_;
  const char* name_;
  std::string hdr_name_;
  base::Published<HashTable> table_;
  RoundRobin fallback_;
};

}  // namespace sluice::lb

#pragma once
// The interface every balance algorithm implements (one file per algorithm). Algorithms see
// servers and return candidates; they never open connections. Any thread may pick.
//
// Thread rules: pick() is called by any thread at any time and takes no lock (leastconn is
// the one exception, see leastconn.h). rebuild() is called by the owning Backend with its
// writer mutex held, after a weight or usable state changed: the algorithm builds a new
// immutable snapshot from the servers' eweight()/usable() and publishes it (base/published.h).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lb/hash.h"
#include "lb/server.h"

namespace sluice::net {
class SocketAddress;
}

namespace sluice::lb {

// What a pick may look at besides the servers.
struct PickContext {
  const net::SocketAddress* client = nullptr;   // `source`
  // `uri` / `hdr(<name>)`: the request's URI or header value. nullptr in TCP mode (there is
  // no request), where those algorithms fall back to roundrobin as HAProxy does.
  const std::string_view* key = nullptr;
  uint64_t now_ms = 0;                          // monotonic; drives slow start (0 = unknown)
};

enum class BalanceKind {
  kRoundRobin, kStaticRr, kLeastConn, kFirst, kSource, kUri, kHdr, kRandom,
  kUrlParam, kRdpCookie, kHash,   // a sample expression's value (the proxy computes it)
};
// The algorithms that hash a key (source address, URI, field, expression) onto the servers.
inline bool hashes(BalanceKind k) {
  return k == BalanceKind::kSource || k == BalanceKind::kUri || k == BalanceKind::kHdr ||
         k == BalanceKind::kUrlParam || k == BalanceKind::kRdpCookie || k == BalanceKind::kHash;
}

struct BalanceSettings {
  BalanceKind kind = BalanceKind::kRoundRobin;
  int draws = 2;               // random(<draws>)
  std::string hdr_name;        // hdr(<name>)
  bool hdr_domain_only = false;   // hdr(<name>) use_domain_only
  // uri: `len`, `depth` (0 = no limit), `whole` (keep the query), `path-only` (no authority).
  int uri_len = 0;
  int uri_depth = 0;
  bool uri_whole = false;
  bool uri_path_only = false;
  HashSettings hash;           // hash-type, for source/uri/hdr
  bool allbackups = false;     // `option allbackups`
};

class Algorithm {
 public:
  virtual ~Algorithm() = default;
  // Fills `out` (cleared first) with up to `max` distinct candidates in the order they
  // should be tried (first choice first), taking only servers that are usable() and not
  // full(). Any thread.
  virtual void pick(const PickContext& ctx, std::vector<Server*>& out, std::size_t max) = 0;
  // Rebuilds the snapshot from the servers' current eweight()/usable(). Writer side.
  virtual void rebuild() = 0;
  virtual const char* name() const = 0;
};

// The algorithm for `s` over `servers` (all active or all backup servers of a backend).
std::unique_ptr<Algorithm> make_algorithm(const BalanceSettings& s, std::vector<Server*> servers);

// Small helper shared by the algorithms: appends `s` unless already there.
inline bool push_distinct(std::vector<Server*>& out, Server* s) {
  for (Server* o : out)
    if (o == s) return false;
  out.push_back(s);
  return true;
}

// A server an algorithm may hand out right now.
inline bool pickable(const Server* s) { return s->usable() && s->eweight() > 0 && !s->full(); }

}  // namespace sluice::lb

#include "lb/first.h"
#include "lb/key_hash.h"
#include "lb/leastconn.h"
#include "lb/random.h"
#include "lb/roundrobin.h"
#include "lb/source.h"
#include "lb/static_rr.h"

namespace sluice::lb {

std::unique_ptr<Algorithm> make_algorithm(const BalanceSettings& s, std::vector<Server*> servers) {
  switch (s.kind) {
    case BalanceKind::kRoundRobin: return std::make_unique<RoundRobin>(std::move(servers));
    case BalanceKind::kStaticRr: return std::make_unique<StaticRoundRobin>(std::move(servers));
    case BalanceKind::kLeastConn: return std::make_unique<LeastConn>(std::move(servers));
    case BalanceKind::kFirst: return std::make_unique<First>(std::move(servers));
    case BalanceKind::kSource: return std::make_unique<SourceHash>(std::move(servers), s.hash);
    case BalanceKind::kUri: return std::make_unique<KeyHash>(std::move(servers), s.hash, "uri");
    case BalanceKind::kHdr: return std::make_unique<KeyHash>(std::move(servers), s.hash, "hdr", s.hdr_name);
    case BalanceKind::kUrlParam: return std::make_unique<KeyHash>(std::move(servers), s.hash, "url_param");
    case BalanceKind::kRdpCookie: return std::make_unique<KeyHash>(std::move(servers), s.hash, "rdp-cookie");
    case BalanceKind::kHash: return std::make_unique<KeyHash>(std::move(servers), s.hash, "hash");
    case BalanceKind::kRandom: return std::make_unique<Random>(std::move(servers), s.draws);
  }
  return std::make_unique<RoundRobin>(std::move(servers));
}

}  // namespace sluice::lb

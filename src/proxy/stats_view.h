#pragma once
// The StatsSource the CLI reads: sums every worker's counters into process-wide snapshots.
// Any thread; reads only atomics and immutable settings.
#include "proxy/process.h"
#include "stats/snapshot.h"

namespace sluice::proxy {

class StatsView : public stats::StatsSource {
 public:
  explicit StatsView(const Process& process) : p_(process) {}
  stats::ProcessSnapshot process() const override;
  std::vector<stats::ProxySnapshot> proxies() const override;
  stats::ActivitySnapshot activity(int current_thread) const override;
  std::vector<stats::ListenerSnapshot> listeners() const override;

 private:
  const Process& p_;
};

}  // namespace sluice::proxy

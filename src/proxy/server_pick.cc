#include "proxy/server_pick.h"

#include <vector>

#include "proxy/worker.h"

namespace sluice::proxy {

lb::Server* take_server(Worker& w, Proxy& be, const lb::PickContext& ctx, lb::Server* previous,
                        bool redispatch) {
  // A few candidates are enough: a redispatch asks again, and the algorithms already leave
  // out full servers. Asking for every server would make each pick O(servers).
  constexpr std::size_t kCandidates = 3;
  thread_local std::vector<lb::Server*> candidates;
  be.backend->candidates(ctx, candidates, kCandidates);
  for (lb::Server* s : candidates) {
    if (redispatch && s == previous && candidates.size() > 1) continue;
    if (!s->try_acquire()) continue;
    if (previous) previous->release();
    auto& sc = w.srv_counters(be.server_base + s->index());
    uint64_t now = w.loop().now_ms();
    sc.lbtot.add();
    sc.stot.add();
    sc.smax.raise_to(static_cast<uint64_t>(s->current_conns()));
    sc.sess_rate.add(now);
    sc.last_sess_ms.set(now);
    w.be_counters(be.index).lbtot.add();
    return s;
  }
  return redispatch ? previous : nullptr;   // keep the previous server if nothing else fits
}

bool redispatch_due(const ProxySettings& be, int retries_done) {
  int rd = be.redispatch;
  if (rd > 0) return retries_done % rd == 0;
  if (rd < 0) return retries_done == be.retries + 1 + rd;
  return false;
}

RetryAction plan_retry(Worker& w, Proxy& be, lb::Server* const& srv, int& retries_done,
                       bool timeout, const std::function<bool(bool)>& pick, uint64_t* delay_ms) {
  auto& bc = w.be_counters(be.index);
  if (retries_done >= be.settings.retries) {
    w.srv_counters(be.server_base + srv->index()).econ.add();
    bc.econ.add();
    return RetryAction::kGiveUp;
  }
  ++retries_done;
  bc.wretr.add();
  w.srv_counters(be.server_base + srv->index()).wretr.add();
  if (redispatch_due(be.settings, retries_done)) {
    lb::Server* old = srv;
    pick(true);
    if (srv != old) {
      bc.wredis.add();
      w.srv_counters(be.server_base + old->index()).wredis.add();
      return RetryAction::kNow;
    }
  }
  if (timeout) return RetryAction::kNow;
  uint32_t ct = be.settings.timeouts.connect;
  *delay_ms = ct && ct < kRetryTurnaroundMs ? ct : kRetryTurnaroundMs;
  return RetryAction::kLater;
}

void release_client_slots(Worker& w, Listener& l) {
  l.given[static_cast<std::size_t>(l.position[static_cast<std::size_t>(w.id())])].fetch_sub(
      1, std::memory_order_relaxed);
  l.line->limit.release();
  l.proxy->feconn.release();
  w.process().actconn().release();
}

}  // namespace sluice::proxy

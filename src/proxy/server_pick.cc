#include "proxy/server_pick.h"

#include <vector>

#include "proxy/worker.h"

namespace sluice::proxy {

namespace {
// The body of count_session(), inlined into take_server(): a call of its own cost about a
// dozen instructions per connection.
[[gnu::always_inline]] inline void count_session_inline(Worker& w, Proxy& be, lb::Server& s, bool balanced) {
  auto& sc = w.srv_counters(be.server_base + s.index());
  uint64_t now = w.loop().now_ms();
  if (balanced) {
    sc.lbtot.add();
    w.be_counters(be.index).lbtot.add();
  }
  sc.stot.add();
  sc.smax.raise_to(static_cast<uint64_t>(s.current_conns()));
  sc.sess_rate.add(now);
  sc.last_sess_ms.set(now);
}
}  // namespace

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
    count_session_inline(w, be, *s, true);
    return s;
  }
  return redispatch ? previous : nullptr;   // keep the previous server if nothing else fits
}

void count_session(Worker& w, Proxy& be, lb::Server& s, bool balanced) {
  count_session_inline(w, be, s, balanced);
}

lb::Server* use_server(const Proxy& be, const rules::RequestView& view) {
  for (const auto& u : be.settings.use_servers) {
    if (!u.cond.eval(view)) continue;
    lb::Server* s;
    if (u.dynamic) {
      thread_local std::string name;
      name.clear();
      u.dynamic->render(view, name);
      s = be.backend->find_server(name);
      if (!s) return nullptr;   // HAProxy: an unknown name ends the rules
    } else {
      s = be.backend->servers()[static_cast<std::size_t>(u.server)].get();
    }
    // HAProxy takes a server that is not stopped (maintenance or failed checks); a draining
    // one is taken. Otherwise the next rule may name another one.
    if (s->check_up() && s->admin_state() != lb::AdminState::kMaint) return s;
  }
  return nullptr;
}

bool redispatch_due(const ProxySettings& be, int retries_done) {
  int rd = be.redispatch;
  if (rd > 0) return retries_done % rd == 0;
  if (rd < 0) return retries_done == be.retries + 1 + rd;
  return false;
}

bool redispatch_now(const ProxySettings& be, const lb::Backend& backend, const lb::Server& srv,
                    int retries_done) {
  if (be.redispatch == 0) return false;
  // HAProxy's cur_state < SRV_ST_RUNNING: stopped (check or maintenance) or starting.
  const bool running = srv.check_up() && srv.admin_state() != lb::AdminState::kMaint &&
                       srv.eweight() >= srv.weight();
  if (!running || redispatch_due(be, retries_done)) return true;
  // A hash ties the client to its server: only the arithmetic above may move it.
  lb::BalanceKind k = backend.balance().kind;
  return !lb::hashes(k) && backend.usable_active() > 1;
}

}  // namespace sluice::proxy

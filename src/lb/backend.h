#pragma once
// A backend: its servers and how to choose among them. Built once at start-up; read by every
// worker without locks. Run-time changes (weights, usable state, slow start) go through the
// writer methods below, which are serialized by one mutex that no pick ever waits on: they
// update the server's atomics and make every algorithm publish a new immutable snapshot
// (base/published.h), so a change takes effect on every thread at its next pick.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "lb/algorithm.h"
#include "lb/server.h"

namespace sluice::lb {

class Backend {
 public:
  Backend(std::string name, std::vector<ServerSettings> servers, BalanceSettings balance = {});

  const std::string& name() const { return name_; }
  const std::vector<std::unique_ptr<Server>>& servers() const { return servers_; }
  // The server called `name`, or null (a binary search: `use-server %[...]`). Any thread.
  Server* find_server(std::string_view name) const;
  const BalanceSettings& balance() const { return balance_; }

  // Candidates in the order to try them (retries and redispatch take the next one): active
  // servers by the algorithm; only when no active server is usable, the backup servers:
  // the first usable one in declaration order first (HAProxy's behaviour), or all of them
  // balanced by the algorithm with `option allbackups`. Full servers (maxconn) are left out.
  // Any thread; no lock (leastconn: see leastconn.h).
  void candidates(const PickContext& ctx, std::vector<Server*>& out, std::size_t max);
  void candidates(std::vector<Server*>& out, std::size_t max) { candidates(PickContext{}, out, max); }

  // CLI `set server weight`: the current weight (0..256) of `s`; 0 takes it out of load
  // balancing. static-rr ignores it, as in HAProxy. Any thread.
  void set_weight(Server& s, int weight, uint64_t now_ms = 0);
  // Maintenance / drain / health: whether `s` takes new connections. Becoming usable starts
  // its slow start (at `now_ms`, monotonic) when it has one; servers usable at start-up do
  // not slow-start, as in HAProxy. Any thread.
  void set_usable(Server& s, bool usable, uint64_t now_ms = 0);
  // Administrative state (CLI `set server ... state`, `disable/enable server`). Any thread.
  void set_admin_state(Server& s, AdminState state, uint64_t now_ms);
  // Health check verdict (rise/fall reached). Any thread.
  void set_check_up(Server& s, bool up, uint64_t now_ms);
  // The agent's verdict (agent-check), which must be up too for the server to serve.
  void set_agent_up(Server& s, bool up, uint64_t now_ms);
  // Soft stop of a server that stays UP (CLI `set server ... health stopping`, HAProxy's
  // SRV_ST_STOPPING, shown NOLB): no new load-balanced connections. Any thread.
  void set_stopping(Server& s, bool stopping, uint64_t now_ms);
  // Moves slow starts forward (weights ramp once a second, see ramp_of()). Called by
  // candidates() when a step is due (a try_lock that never waits: the one picking thread
  // that gets it rebuilds, the others carry on with the current snapshot), and callable
  // from a timer. Any thread.
  void update_slowstart(uint64_t now_ms);
  // Readers that show weights (show stat) without picking: moves slow starts forward when a
  // step is due, so that what they show is what the next pick uses. Any thread, not the data
  // path (it may wait for the writer mutex).
  void catch_up_slowstart(uint64_t now_ms) {
    if (ramping_.load(std::memory_order_acquire) > 0 &&
        now_ms >= next_ramp_ms_.load(std::memory_order_relaxed))
      update_slowstart(now_ms);
  }

  // The end of HAProxy's server state-change log lines (srv_append_status), with the counts
  // as of now: ". 1 active and 0 backup servers left. 0 sessions active, 0 requeued, 0
  // remaining in queue." when `s` left load balancing, else ". 2 active and 0 backup servers
  // online. 0 sessions requeued, 0 total in queue.". Any thread.
  std::string state_tail(const Server& s, bool left) const;

  // Called after every change of a server's weight or state (from the thread that made it,
  // with no lock held): servers may take more connections now, so sessions waiting in the
  // backend's queue must look again (HAProxy's process_srv_queue on a server coming up).
  // Set once, before any thread changes a state.
  void set_on_change(std::function<void()> f) { on_change_ = std::move(f); }

  // Number of usable active / backup servers. Any thread.
  int usable_active() const { return usable_active_.load(std::memory_order_relaxed); }
  int usable_backup() const { return usable_backup_.load(std::memory_order_relaxed); }
  const char* algorithm_name() const { return active_->name(); }

 private:
  std::vector<Server*> by_name_;   // servers_ sorted by name
  // Writer side, writer_ held.
  void refresh_locked(uint64_t now_ms);
  void changed() const {
    if (on_change_) on_change_();
  }
  void set_usable_locked(Server& s, bool usable, uint64_t now_ms);
  // Slow-start share of `s` at `now_ms`, in 1/Server::kWeightScale; 0 when not warming up.
  static int ramp_of(const Server& s, uint64_t now_ms);

  std::string name_;
  BalanceSettings balance_;
  std::vector<std::unique_ptr<Server>> servers_;
  std::vector<Server*> backups_;   // declaration order
  std::unique_ptr<Algorithm> active_;
  std::unique_ptr<Algorithm> backup_;
  std::mutex writer_;
  std::function<void()> on_change_;   // constant once workers run
  std::atomic<int> usable_active_{0};
  std::atomic<int> usable_backup_{0};
  std::atomic<int> ramping_{0};                // servers in slow start
  std::atomic<uint64_t> next_ramp_ms_{0};
};

}  // namespace sluice::lb

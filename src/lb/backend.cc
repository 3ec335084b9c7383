#include "lb/backend.h"

#include <algorithm>

namespace sluice::lb {

Backend::Backend(std::string name, std::vector<ServerSettings> servers, BalanceSettings balance)
    : name_(std::move(name)), balance_(std::move(balance)) {
  std::vector<Server*> active;
  for (auto& s : servers) {
    servers_.push_back(std::make_unique<Server>(std::move(s), static_cast<int>(servers_.size())));
    Server* p = servers_.back().get();
    (p->settings().backup ? backups_ : active).push_back(p);
  }
  for (auto& s : servers_) by_name_.push_back(s.get());
  std::stable_sort(by_name_.begin(), by_name_.end(),
                   [](const Server* a, const Server* b) { return a->name() < b->name(); });
  active_ = make_algorithm(balance_, std::move(active));
  backup_ = make_algorithm(balance_, backups_);
  std::lock_guard lock(writer_);
  refresh_locked(0);
}

Server* Backend::find_server(std::string_view name) const {
  auto at = std::lower_bound(by_name_.begin(), by_name_.end(), name,
                             [](const Server* s, std::string_view n) { return s->name() < n; });
  return at != by_name_.end() && (*at)->name() == name ? *at : nullptr;
}

int Backend::ramp_of(const Server& s, uint64_t now_ms) {
  uint64_t ss = s.settings().slowstart_ms;
  if (ss == 0 || s.up_since_ms() == 0 || s.weight() <= 0) return 0;
  // HAProxy's server_recalc_eweight counts whole seconds (slowstart rounded up to seconds),
  // and the first step (1/16) comes at once so that a warming server gets some traffic.
  // A clock read just before the server came up counts as 0 s, not as "no ramp".
  uint64_t ss_s = (ss + 999) / 1000;
  uint64_t el_s = now_ms > s.up_since_ms() ? (now_ms - s.up_since_ms()) / 1000 : 0;
  if (el_s >= ss_s) return 0;
  constexpr uint64_t kScale = Server::kWeightScale;
  return static_cast<int>(std::min(kScale, (kScale * el_s + ss_s) / ss_s));
}

void Backend::refresh_locked(uint64_t now_ms) {
  int ua = 0, ub = 0, ramping = 0;
  uint64_t next = UINT64_MAX;
  for (auto& sp : servers_) {
    Server& s = *sp;
    if (s.usable()) ++(s.settings().backup ? ub : ua);
    const int w = s.weight();
    const int r = s.usable() ? ramp_of(s, now_ms) : 0;
    constexpr int kScale = Server::kWeightScale;
    // Rounded up as HAProxy shows it (at least 1 while warming: w > 0 here).
    s.set_eweight(r ? (w * r + kScale - 1) / kScale : w);
    s.set_ramp(r ? r : kScale);
    // HAProxy's server_throttle_rate, with its rounding (up by 15/16 of a weight unit, not
    // a true ceiling): 6% for the first step of weight 10.
    s.set_throttle(r ? (100 * w * r + kScale - 1) / (kScale * w) : -1);
    if (r) {
      ++ramping;
      // The next whole second since the server came up, when the share moves.
      uint64_t up = s.up_since_ms();
      uint64_t el_s = now_ms > up ? (now_ms - up) / 1000 : 0;
      next = std::min(next, up + (el_s + 1) * 1000);
    } else if (s.settings().slowstart_ms && s.up_since_ms() && s.usable()) {
      s.set_up_since_ms(0);   // ramp done
    }
  }
  active_->rebuild();
  backup_->rebuild();
  usable_active_.store(ua, std::memory_order_relaxed);
  usable_backup_.store(ub, std::memory_order_relaxed);
  next_ramp_ms_.store(next, std::memory_order_relaxed);
  ramping_.store(ramping, std::memory_order_release);
}

void Backend::set_weight(Server& s, int weight, uint64_t now_ms) {
  {
    std::lock_guard lock(writer_);
    s.set_weight(std::clamp(weight, 0, 256));
    refresh_locked(now_ms);
  }
  changed();
}

void Backend::set_usable(Server& s, bool usable, uint64_t now_ms) {
  {
    std::lock_guard lock(writer_);
    set_usable_locked(s, usable, now_ms);
  }
  changed();
}

void Backend::set_usable_locked(Server& s, bool usable, uint64_t now_ms) {
  if (usable && !s.admin_up()) s.set_up_since_ms(s.settings().slowstart_ms ? std::max<uint64_t>(now_ms, 1) : 0);
  if (!usable) s.set_up_since_ms(0);
  s.set_admin_up(usable);
  refresh_locked(now_ms);
}

namespace {
// Whether a server takes new load-balanced connections, from its three states (read with the
// backend's writer lock held, under which they are written).
bool serves(const Server& s) {
  return s.admin_state() == AdminState::kReady && s.check_up() && s.agent_up() && !s.stopping() &&
         !s.settings().unresolved;
}
}  // namespace

// The three state changes below decide usable() under the same lock hold as their own write.
// They come from different threads (the CLI on one worker, the server's health check on
// another): deciding after releasing the lock let a change publish a verdict computed before
// the other change's write, e.g. READY + check UP after the check had gone DOWN, which left
// a DOWN server in load balancing until its next change.
void Backend::set_admin_state(Server& s, AdminState state, uint64_t now_ms) {
  {
    std::lock_guard lock(writer_);
    if (s.admin_state() == state) return;
    s.set_admin_state_raw(state);
    s.set_last_change_ms(std::max<uint64_t>(now_ms, 1));
    set_usable_locked(s, serves(s), now_ms);
  }
  changed();
}

void Backend::set_check_up(Server& s, bool up, uint64_t now_ms) {
  {
    std::lock_guard lock(writer_);
    if (s.check_up() == up) return;
    s.set_check_up_raw(up);
    s.set_last_change_ms(std::max<uint64_t>(now_ms, 1));
    set_usable_locked(s, serves(s), now_ms);
  }
  changed();
}

void Backend::set_agent_up(Server& s, bool up, uint64_t now_ms) {
  {
    std::lock_guard lock(writer_);
    if (s.agent_up() == up) return;
    s.set_agent_up_raw(up);
    s.set_last_change_ms(std::max<uint64_t>(now_ms, 1));
    set_usable_locked(s, serves(s), now_ms);
  }
  changed();
}

void Backend::set_stopping(Server& s, bool stopping, uint64_t now_ms) {
  {
    std::lock_guard lock(writer_);
    if (s.stopping() == stopping) return;
    s.set_stopping_raw(stopping);
    s.set_last_change_ms(std::max<uint64_t>(now_ms, 1));
    set_usable_locked(s, serves(s), now_ms);
  }
  changed();
}

std::string Backend::state_tail(const Server& s, bool left) const {
  std::string a = std::to_string(usable_active()), b = std::to_string(usable_backup());
  // HAProxy says when a server comes UP and only backup servers serve.
  const std::string backup = usable_active() == 0 && usable_backup() > 0 ? " Running on backup." : "";
  if (left)
    return ". " + a + " active and " + b + " backup servers left. " +
           std::to_string(s.current_conns()) + " sessions active, 0 requeued, 0 remaining in queue.";
  return ". " + a + " active and " + b + " backup servers online." + backup +
         " 0 sessions requeued, 0 total in queue.";
}

void Backend::update_slowstart(uint64_t now_ms) {
  std::lock_guard lock(writer_);
  refresh_locked(now_ms);
}

void Backend::candidates(const PickContext& ctx, std::vector<Server*>& out, std::size_t max) {
  if (ramping_.load(std::memory_order_acquire) > 0 && ctx.now_ms &&
      ctx.now_ms >= next_ramp_ms_.load(std::memory_order_relaxed)) {
    std::unique_lock lock(writer_, std::try_to_lock);
    if (lock.owns_lock()) refresh_locked(ctx.now_ms);
  }
  active_->pick(ctx, out, max);
  if (!out.empty() || usable_active() > 0) return;   // all active full: no backup (HAProxy queues)
  if (balance_.allbackups) {
    backup_->pick(ctx, out, max);
    return;
  }
  out.clear();
  for (Server* s : backups_) {
    if (out.size() >= max) break;
    if (s->usable() && !s->full()) out.push_back(s);
  }
}

}  // namespace sluice::lb

// `observe`: what a server's traffic says about it, acted on by its checker (`on-error`).
#include <fmt/format.h>

#include "check/checker.h"

namespace sluice::check {

void Checker::analyze(int count, lb::Hana last) {
  auto& cs = srv_.check_state();
  // `disable health`: the server counts as UP without a check, and the traffic is not news.
  if (cs.paused.load(std::memory_order_relaxed)) return;
  cs.hanafail.fetch_add(1, std::memory_order_relaxed);
  const uint64_t now = loop_.now_ms();
  const lb::OnError how = srv_.settings().on_error;
  if (how != lb::OnError::kFastinter) {
    // sudden-death: one failed check from DOWN (unless already closer), then a failed check;
    // mark-down: the last step before DOWN, then a failed check; fail-check: a failed check.
    if (how == lb::OnError::kSuddenDeath && health_.health() > health_.rise())
      health_.move_to(health_.rise() + 1);
    else if (how == lb::OnError::kMarkDown)
      health_.move_to(health_.rise());
    const int before = health_.health();
    const lb::CheckStatus was = cs.status.load(std::memory_order_relaxed);
    const Health::Change change = health_.report(false);
    if (health_.last_failure_counted()) cs.chkfail.fetch_add(1, std::memory_order_relaxed);
    cs.status.store(lb::CheckStatus::kHana, std::memory_order_relaxed);
    cs.code.store(0, std::memory_order_relaxed);
    cs.duration_ms.store(-1, std::memory_order_relaxed);   // no check ran: none to show
    cs.health.store(health_.health(), std::memory_order_relaxed);
    cs.set_text(fmt::format("Detected {} consecutive errors, last one was: {}", count,
                            lb::hana_desc(last)));
    if (s_.log_checks) log_check(lb::CheckStatus::kHana, was, before);
    if (srv_.stopping() && !health_.up()) be_.set_stopping(srv_, false, now);
    if (change != Health::Change::kNone) report_change(change, now);
  }
  // Every on-error brings the next check forward to fastinter (when there is one); a check
  // under way is left to finish.
  const uint32_t fast = s_.intervals.fastinter_ms;
  if (fast && phase_ == Phase::kIdle && timer_.armed() && now + fast < timer_.expiry())
    loop_.timers().arm(timer_, now + fast);
}

}  // namespace sluice::check

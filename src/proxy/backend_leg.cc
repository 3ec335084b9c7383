#include "proxy/backend_leg.h"

#include <cerrno>

#include "proxy/server_pick.h"

namespace sluice::proxy {

namespace {
// The wait before connecting again after a refusal: 1 s, or `timeout connect` if shorter.
uint64_t turnaround_ms(const ProxySettings& be) {
  uint32_t ct = be.timeouts.connect;
  return ct && ct < kRetryTurnaroundMs ? ct : kRetryTurnaroundMs;
}
}  // namespace

bool BackendLeg::take(bool redispatch) {
  if (forced_ && !redispatch) {
    // use-server: that server or none (the session waits in the queue for it).
    if (!forced_->try_acquire()) return false;
    if (srv_ && srv_ != forced_) srv_->release();
    count_session(w_, *be_, *forced_, false);
    srv_ = forced_;
    return true;
  }
  if (preferred_ && !redispatch) {
    lb::Server* p = preferred_;
    preferred_ = nullptr;
    if (p->usable() && p->try_acquire()) {
      if (srv_ && srv_ != p) srv_->release();
      count_session(w_, *be_, *p, false);
      srv_ = p;
      return true;
    }
  }
  lb::PickContext ctx;
  ctx.client = &client_;
  ctx.now_ms = w_.loop().now_ms();
  std::string_view key;
  if (key_) {
    key = *key_;
    ctx.key = &key;
  }
  lb::Server* s = take_server(w_, *be_, ctx, srv_, redispatch);
  if (!s) return false;
  if (redispatch && srv_ && s != srv_) redispatched_ = true;   // the log's "+" retries
  srv_ = s;
  return true;
}

bool BackendLeg::enter_queue() {
  state_ = State::kQueued;
  t_queued_ms_ = w_.loop().now_ms();
  int q = be_->queued.fetch_add(1, std::memory_order_seq_cst) + 1;
  int m = be_->queued_max.load(std::memory_order_relaxed);
  while (q > m && !be_->queued_max.compare_exchange_weak(m, q, std::memory_order_relaxed)) {
  }
  w_.queue_session(&owner_);
  return take_queued_slot();
}

bool BackendLeg::take_queued_slot() {
  if (state_ != State::kQueued) return false;
  if (!take(false)) return false;
  leave_queue();
  state_ = State::kPicked;
  return true;
}

void BackendLeg::unqueue() {
  be_->queued.fetch_sub(1, std::memory_order_seq_cst);
  w_.unqueue_session(&owner_);
  state_ = State::kIdle;
}

ConnectError BackendLeg::connect_failure(const base::Error& e) {
  // Out of descriptors or memory (or no socket at all) is this side's failure, anything else
  // the server's; both are retried.
  const bool server = e.side == base::Side::kServer && e.retryable;
  return server ? ConnectError::server(e.sys_errno) : ConnectError::local(e.sys_errno);
}

void BackendLeg::note_error(int err) {
  // The first error stands (a reset seen while reading, then the write that fails after it).
  if (err_ == kNoErr) err_ = static_cast<uint8_t>(log::conn_error_of_errno(err));
}

void BackendLeg::reuse() {
  t_connect_ms_ = w_.loop().now_ms();
  has_target_ = has_source_ = false;
  reused_ = true;
  err_ = kNoErr;
  w_.be_counters(be_->index).reuse.add();
  server_counters().reuse.add();
  state_ = State::kConnecting;
}

// HAProxy's connection retry logic. Attempts exhausted: econ is charged (as HAProxy's
// failed_conns) and the session gives up. When redispatch_now(), another server is picked and
// tried at once and a redispatch (wredis) is counted on the backend and the server left.
// Otherwise, or when the pick found no other server, a retry (wretr) is counted, as in HAProxy:
// the same server is retried at once after a timeout, else after the turn-around delay
// (bounded by timeout connect).
BackendLeg::RetryAction BackendLeg::fail(const ConnectError& e) {
  leave_queue();
  // `observe`: the server refused, reset or did not answer (not this side's failure).
  if (srv_ && e.side == ConnectError::Side::kServer) srv_->analyze(lb::Hana::kL4Err);
  err_ = e.timeout || e.side == ConnectError::Side::kQueue ? kNoErr
         : e.code != log::ConnError::kNone                 ? static_cast<uint8_t>(e.code)
                                  : static_cast<uint8_t>(log::conn_error_of_errno(e.err));
  auto& bc = w_.be_counters(be_->index);
  if (!e.retryable || retries_ >= be_->settings.retries) {
    // bc_err keeps the error of the attempt given up on; a retry's connection replaces it
    // (HAProxy reports none while waiting to retry).
    if (srv_) server_counters().econ.add();
    bc.econ.add();
    state_ = State::kFailed;
    return RetryAction::kGiveUp;
  }
  ++retries_;
  err_ = kNoErr;
  if (redispatch_now(be_->settings, *be_->backend, *srv_, retries_)) {
    lb::Server* old = srv_;
    take(true);
    if (srv_ != old) {
      // Counted as a redispatch only, not also as a retry (HAProxy counts one or the other
      // once the next server is known).
      bc.wredis.add();
      w_.srv_counters(be_->server_base + old->index()).wredis.add();
      // The turn-around after a refusal is skipped only for a round-robin kind with more than
      // one active server; other algorithms wait it even when moving on (HAProxy 2.6,
      // back_handle_st_cer). A timeout has waited long enough already.
      const lb::BalanceKind k = be_->backend->balance().kind;
      const bool rr = k == lb::BalanceKind::kRoundRobin || k == lb::BalanceKind::kStaticRr;
      if (e.timeout || (rr && be_->backend->usable_active() > 1)) {
        state_ = State::kPicked;
        return RetryAction::kNow;
      }
      state_ = State::kRetryWait;
      t_connect_ms_ = w_.loop().now_ms() + turnaround_ms(be_->settings);
      return RetryAction::kLater;
    }
  }
  bc.wretr.add();
  server_counters().wretr.add();
  if (e.timeout) {
    state_ = State::kPicked;
    return RetryAction::kNow;
  }
  // The retry's due time takes the attempt's place while no connection is open.
  state_ = State::kRetryWait;
  t_connect_ms_ = w_.loop().now_ms() + turnaround_ms(be_->settings);
  return RetryAction::kLater;
}

bool BackendLeg::queue_expired(uint64_t now) const {
  const Timeouts& to = be_->settings.timeouts;
  return to.queue && now >= t_queued_ms_ + to.queue;
}

bool BackendLeg::connect_expired(uint64_t now) const {
  const Timeouts& to = be_->settings.timeouts;
  return to.connect && now >= t_connect_ms_ + to.connect;
}

void BackendLeg::reset() {
  retries_ = 0;
  redispatched_ = false;
  t_queued_ms_ = t_connect_ms_ = t_connected_ms_ = 0;
  has_target_ = has_source_ = reused_ = false;
  err_ = kNoErr;
}

}  // namespace sluice::proxy

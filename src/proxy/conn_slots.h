#pragma once
// The connection slots a client connection holds from before its accept() to its close: one of
// the process's `maxconn`, one of its frontend's, one of its bind line's. Taken together or not
// at all, given back together by one owner: the accept path until a session exists, then the
// session (Worker::session_closed), or a hand-off in between.
#include <utility>

#include "proxy/process.h"

namespace sluice::proxy {

class ConnSlots {
 public:
  // Which limit refused the connection (take() returned an empty token).
  enum class Refused { kNone, kGlobal, kFrontend, kBindLine };

  ConnSlots() = default;
  ConnSlots(const ConnSlots&) = delete;
  ConnSlots& operator=(const ConnSlots&) = delete;
  ConnSlots(ConnSlots&& o) noexcept : p_(std::exchange(o.p_, nullptr)), l_(std::exchange(o.l_, nullptr)) {}
  ConnSlots& operator=(ConnSlots&& o) noexcept {
    if (this != &o) {
      release();
      p_ = std::exchange(o.p_, nullptr);
      l_ = std::exchange(o.l_, nullptr);
    }
    return *this;
  }
  ~ConnSlots() { release(); }

  // Any thread. The global, frontend and bind-line slots for one connection on `l`, taken in
  // that order; when one is full, those already taken go back and `*refused` names it.
  // Inline, as every accepted connection passes here.
  static ConnSlots take(Process& p, Listener& l, Refused* refused) {
    // *refused is written once, with the outcome: the accept loop passes here per connection.
    if (!p.actconn().try_acquire()) {
      *refused = Refused::kGlobal;
      return {};
    }
    if (!l.proxy->feconn.try_acquire()) {
      p.actconn().release();
      p.slot_freed();
      *refused = Refused::kFrontend;
      return {};
    }
    if (!l.line->limit.try_acquire()) {
      l.proxy->feconn.release();
      p.actconn().release();
      p.slot_freed();
      *refused = Refused::kBindLine;
      return {};
    }
    *refused = Refused::kNone;
    return ConnSlots(&p, &l);
  }

  bool held() const { return p_ != nullptr; }

  // Gives the slots back, then wakes the workers that paused a listener on a limit
  // (Process::slot_freed). Any thread; idempotent, and what the destructor does.
  void release() {
    if (!p_) return;
    l_->line->limit.release();
    l_->proxy->feconn.release();
    p_->actconn().release();
    Process* p = std::exchange(p_, nullptr);
    l_ = nullptr;
    p->slot_freed();
  }

 private:
  ConnSlots(Process* p, Listener* l) : p_(p), l_(l) {}
  Process* p_ = nullptr;
  Listener* l_ = nullptr;
};

}  // namespace sluice::proxy

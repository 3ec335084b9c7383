#pragma once
// A hashed timer wheel: O(1) arm and cancel, which matters because sessions re-arm their
// timeout constantly. Time is passed in (`now` in ms), never read here, so tests drive it.
// Worker-local: one wheel per event loop, never shared. A wheel built with an owner (the
// loop's) checks in debug builds that its methods run on the owner's thread.
//
// Resolution is kTickMs: a timer fires at its expiry or up to one tick later, never earlier. A timer further away than the wheel's span sits in its slot and is
// skipped until its turn comes round (each pass costs one comparison), which keeps arm O(1)
// without a hierarchy.
#include <array>
#include <cstdint>
#include "base/source_location.h"

#include "base/thread_owner.h"

namespace sluice::core {

class Timer;

class TimerHandler {
 public:
  virtual void on_timer(Timer& timer) = 0;

 protected:
  ~TimerHandler() = default;
};

// Intrusive node; embed it in the object that owns the timeout.
class Timer {
 public:
  explicit Timer(TimerHandler* handler = nullptr) : handler_(handler) {}
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  ~Timer();

  void set_handler(TimerHandler* handler) { handler_ = handler; }
  bool armed() const { return wheel_ != nullptr; }
  uint64_t expiry() const { return expiry_; }

 private:
  friend class TimerWheel;
  TimerHandler* handler_ = nullptr;
  class TimerWheel* wheel_ = nullptr;
  Timer* prev_ = nullptr;
  Timer* next_ = nullptr;
  uint64_t expiry_ = 0;
  uint32_t slot_ = 0;
};

class TimerWheel {
 public:
  static constexpr uint64_t kTickMs = 4;
  static constexpr uint32_t kSlots = 4096;   // span ~16 s

  // `owner`: the thread rule to check in debug builds (EventLoop passes its own); null checks
  // nothing. Any thread.
  explicit TimerWheel(uint64_t now_ms, const base::ThreadOwner* owner = nullptr);
  ~TimerWheel();

  // Arms (or re-arms) `t` to fire at `expiry_ms`. Worker-local.
  void arm(Timer& t, uint64_t expiry_ms);
  // Disarms `t` if armed. Worker-local.
  void cancel(Timer& t);
  // Lazy deadline for a session: 0 disarms; otherwise `t` is armed unless it already fires
  // earlier (the handler then recomputes the deadline and sleeps again). Worker-local.
  void arm_lazy(Timer& t, uint64_t deadline_ms) {
    if (deadline_ms == 0) cancel(t);
    else if (!t.armed() || t.expiry() > deadline_ms) arm(t, deadline_ms);
  }

  // Fires every timer whose expiry is <= now. Handlers may arm/cancel any timer, including
  // the one firing. Returns the number fired. Worker-local.
  int advance(uint64_t now_ms);

  // Milliseconds until the earliest non-empty slot is due (a lower bound on the next expiry),
  // or -1 when no timer is armed. Worker-local.
  int64_t next_timeout_ms(uint64_t now_ms) const;

  std::size_t size() const { return count_; }

 private:
  void link(Timer& t);
  void unlink(Timer& t);
  void assert_owner(const base::SourceLocation& where = base::SourceLocation::current()) const {
#ifndef NDEBUG
    if (owner_) owner_->check("core::TimerWheel", where);
#endif
  }

  const base::ThreadOwner* owner_;

  std::array<Timer*, kSlots> slots_{};
  std::array<uint64_t, kSlots / 64> nonempty_{};
  uint64_t current_tick_;   // the next tick to process
  std::size_t count_ = 0;
};

}  // namespace sluice::core

#include "core/timer_wheel.h"

#include <bit>

#include "base/assert.h"

namespace sluice::core {

Timer::~Timer() {
  if (wheel_) wheel_->cancel(*this);
}

TimerWheel::TimerWheel(uint64_t now_ms, const base::ThreadOwner* owner)
    : owner_(owner), current_tick_(now_ms / kTickMs) {}

TimerWheel::~TimerWheel() {
  for (auto& head : slots_) {
    while (head) {
      Timer* t = head;
      head = t->next_;
      t->wheel_ = nullptr;
      t->prev_ = t->next_ = nullptr;
    }
  }
}

void TimerWheel::link(Timer& t) {
  // Round up: a timer in tick T expires no later than T * kTickMs, so when T is processed
  // (once now >= T * kTickMs) everything in its slot that belongs to this lap is due. Rounding
  // down would let a tick be processed, and left behind, before its timers are due.
  uint64_t tick = (t.expiry_ + kTickMs - 1) / kTickMs;
  if (tick < current_tick_) tick = current_tick_;  // already due: next advance fires it
  uint32_t slot = static_cast<uint32_t>(tick % kSlots);
  t.slot_ = slot;
  t.prev_ = nullptr;
  t.next_ = slots_[slot];
  if (t.next_) t.next_->prev_ = &t;
  slots_[slot] = &t;
  nonempty_[slot / 64] |= uint64_t{1} << (slot % 64);
  t.wheel_ = this;
  ++count_;
}

void TimerWheel::unlink(Timer& t) {
  SLUICE_ASSERT(t.wheel_ == this);
  if (t.prev_) {
    t.prev_->next_ = t.next_;
  } else {
    slots_[t.slot_] = t.next_;
    if (!t.next_) nonempty_[t.slot_ / 64] &= ~(uint64_t{1} << (t.slot_ % 64));
  }
  if (t.next_) t.next_->prev_ = t.prev_;
  t.prev_ = t.next_ = nullptr;
  t.wheel_ = nullptr;
  --count_;
}

void TimerWheel::arm(Timer& t, uint64_t expiry_ms) {
  assert_owner();
  if (t.wheel_) unlink(t);
  t.expiry_ = expiry_ms;
  link(t);
}

void TimerWheel::cancel(Timer& t) {
  assert_owner();
  if (t.wheel_) unlink(t);
}

int TimerWheel::advance(uint64_t now_ms) {
  assert_owner();
  uint64_t now_tick = now_ms / kTickMs;
  int fired = 0;
  // After a long sleep there is no point visiting the same slot twice in one call.
  uint64_t last = now_tick;
  if (last >= current_tick_ + kSlots) current_tick_ = last - kSlots + 1;
  for (; current_tick_ <= last; ++current_tick_) {
    uint32_t slot = static_cast<uint32_t>(current_tick_ % kSlots);
    // Detach the due timers first: handlers may re-arm into this very slot.
    Timer* due = nullptr;
    for (Timer* t = slots_[slot]; t;) {
      Timer* next = t->next_;
      if (t->expiry_ <= now_ms) {
        unlink(*t);
        t->next_ = due;
        due = t;
      }
      t = next;
    }
    while (due) {
      Timer* t = due;
      due = t->next_;
      t->next_ = nullptr;
      ++fired;
      if (t->handler_) t->handler_->on_timer(*t);
    }
  }
  return fired;
}

int64_t TimerWheel::next_timeout_ms(uint64_t now_ms) const {
  assert_owner();
  if (count_ == 0) return -1;
  // Find the first non-empty slot at or after current_tick_ (wrapping once).
  uint32_t start = static_cast<uint32_t>(current_tick_ % kSlots);
  for (uint32_t i = 0; i <= kSlots / 64; ++i) {
    uint32_t word = (start / 64 + i) % (kSlots / 64);
    uint64_t bits = nonempty_[word];
    if (i == 0) bits &= ~uint64_t{0} << (start % 64);
    if (i == kSlots / 64) bits &= (start % 64) ? ~(~uint64_t{0} << (start % 64)) : 0;
    if (bits) {
      uint32_t slot = word * 64 + static_cast<uint32_t>(std::countr_zero(bits));
      uint64_t delta_ticks = (slot + kSlots - start) % kSlots;
      uint64_t due_ms = (current_tick_ + delta_ticks) * kTickMs;
      return due_ms > now_ms ? static_cast<int64_t>(due_ms - now_ms) : 0;
    }
  }
  return 0;
}

}  // namespace sluice::core

#pragma once
// A clock that moves only when the test says so, for EventLoop(base::ClockSource): timeouts
// are driven by advance(), without sleeping.
#include <atomic>
#include <cstdint>

#include "base/clock.h"

namespace sluice::test {

class ManualClock {
 public:
  // Far from 0, so that "now - interval" computations of the code under test do not wrap.
  static constexpr uint64_t kStartMs = 1'000'000;

  explicit ManualClock(uint64_t start_ms = kStartMs) : now_(start_ms) {}
  ManualClock(const ManualClock&) = delete;
  ManualClock& operator=(const ManualClock&) = delete;

  // Any thread.
  uint64_t now_ms() const { return now_.load(std::memory_order_relaxed); }
  // Moves time forward by `ms`. A loop reading this clock sees it when it next reads the
  // clock (each turn; run_until() reads it before every turn). Any thread.
  void advance(uint64_t ms) { now_.fetch_add(ms, std::memory_order_relaxed); }

  // The source to build a loop with; this clock must outlive the loop. Any thread.
  base::ClockSource source() const { return base::ClockSource{&read_now, this}; }

 private:
  static uint64_t read_now(const void* self) {
    return static_cast<const ManualClock*>(self)->now_ms();
  }

  std::atomic<uint64_t> now_;
};

}  // namespace sluice::test

#pragma once
// Time sources. Timer logic takes a `now` value instead of reading the clock, so tests can
// advance time without sleeping.
#include <cstdint>
#include <ctime>

namespace sluice::base {

// Monotonic milliseconds. Any thread.
inline uint64_t monotonic_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000u + static_cast<uint64_t>(ts.tv_nsec) / 1000000u;
}

// Wall clock in microseconds since the epoch. Any thread.
inline uint64_t wall_us() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
}

// The clock an event loop reads, once per iteration. The default (no function) is
// monotonic_ms(); tests pass a function of their own (tests/support/cpp/manual_clock.h) to move
// time without sleeping. A plain function pointer, not an interface: no virtual call, and the
// default costs one predictable branch. Any thread (the function decides what it needs).
struct ClockSource {
  uint64_t (*read_ms)(const void* ctx) = nullptr;   // null: monotonic_ms()
  const void* ctx = nullptr;

  uint64_t now_ms() const { return read_ms ? read_ms(ctx) : monotonic_ms(); }
};

}  // namespace sluice::base

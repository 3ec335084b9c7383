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

}  // namespace sluice::base

#pragma once
// Drives an EventLoop on the test's thread, one turn at a time (EventLoop::run_once), until a
// condition holds, with bounds so that a broken test fails instead of hanging.
#include <functional>

#include "core/event_loop.h"

namespace sluice::test {

struct RunLimits {
  int max_iterations = 1000;   // turns of the loop at most
  int deadline_ms = 5000;      // real (monotonic) time at most, whatever clock the loop reads
  int max_wait_ms = 10;        // each turn waits for events at most this long (0: never waits)
};

struct RunResult {
  enum class End { kDone, kStopped, kIterations, kDeadline };
  End end = End::kDone;
  int iterations = 0;   // turns run

  bool done() const { return end == End::kDone; }
  // "done", "stopped", "max_iterations" or "deadline", for failure messages.
  const char* describe() const;
};

// Runs `loop` until `done()` holds (checked before the first turn and after every turn), a
// turn calls stop(), `limits.max_iterations` turns ran, or `limits.deadline_ms` of real time
// passed. The loop's clock is read before every turn, so a ManualClock advanced by the test or
// by a handler is seen at once. The calling thread owns the loop meanwhile (see EventLoop).
// Worker-local.
RunResult run_until(core::EventLoop& loop, const std::function<bool()>& done,
                    RunLimits limits = {});

// Runs `n` turns (fewer if one calls stop()), each waiting at most `max_wait_ms` for events.
// Returns the turns run. Worker-local.
int run_turns(core::EventLoop& loop, int n, int max_wait_ms = 0);

}  // namespace sluice::test

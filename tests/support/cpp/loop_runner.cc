#include "support/cpp/loop_runner.h"

#include <algorithm>
#include <cstdint>

#include "base/clock.h"

namespace sluice::test {

const char* RunResult::describe() const {
  switch (end) {
    case End::kDone: return "done";
    case End::kStopped: return "stopped";
    case End::kIterations: return "max_iterations";
    case End::kDeadline: return "deadline";
  }
  return "?";
}

RunResult run_until(core::EventLoop& loop, const std::function<bool()>& done, RunLimits limits) {
  const uint64_t deadline =
      base::monotonic_ms() + static_cast<uint64_t>(std::max(0, limits.deadline_ms));
  RunResult r;
  while (!done()) {
    if (r.iterations >= limits.max_iterations) {
      r.end = RunResult::End::kIterations;
      return r;
    }
    uint64_t now = base::monotonic_ms();
    if (now >= deadline) {
      r.end = RunResult::End::kDeadline;
      return r;
    }
    // Never past the deadline: a turn with nothing to do sleeps at most what is left.
    int wait = static_cast<int>(
        std::min<uint64_t>(static_cast<uint64_t>(std::max(0, limits.max_wait_ms)), deadline - now));
    loop.update_now();
    bool running = loop.run_once(wait);
    ++r.iterations;
    if (!running) {
      r.end = done() ? RunResult::End::kDone : RunResult::End::kStopped;
      return r;
    }
  }
  r.end = RunResult::End::kDone;
  return r;
}

int run_turns(core::EventLoop& loop, int n, int max_wait_ms) {
  int turns = 0;
  while (turns < n) {
    loop.update_now();
    bool running = loop.run_once(max_wait_ms);
    ++turns;
    if (!running) break;
  }
  return turns;
}

}  // namespace sluice::test

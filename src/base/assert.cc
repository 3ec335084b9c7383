#include "base/assert.h"

namespace sluice::base {

namespace {
std::atomic<uint64_t> g_bugs{0};
}  // namespace

uint64_t bug_count() { return g_bugs.load(std::memory_order_relaxed); }

namespace detail {

void report_bug(const char* file, int line, const char* msg, std::atomic<bool>* logged) {
  g_bugs.fetch_add(1, std::memory_order_relaxed);
  // exchange: when two threads reach the site at once, exactly one of them logs it.
  if (logged->load(std::memory_order_relaxed) || logged->exchange(true, std::memory_order_relaxed))
    return;
  std::fprintf(stderr, "sluice: BUG at %s:%d: %s (logged once; the process continues)\n", file,
               line, msg);
}

}  // namespace detail

}  // namespace sluice::base

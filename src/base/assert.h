#pragma once
// Three assertion levels (see docs/core-principles.md):
//   SLUICE_ASSERT(c)  debug builds only; documents an invariant on a hot path.
//   SLUICE_CHECK(c)   always on; a violated invariant aborts with file:line.
//   SLUICE_BUG(msg)   reached code that must be unreachable. Debug builds abort with file:line.
//                     Release builds (NDEBUG) log it once per site with file:line, count it in
//                     bug_count() and carry on: the caller must then take a safe fallback
//                     (close the session, return an error), never fall into undefined behaviour.
// Never assert on anything a peer (client, server, CLI user, configuration) controls.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace sluice::base {

// How many times a SLUICE_BUG was reached since the process started (release builds; a debug
// build aborts at the first). Any thread.
uint64_t bug_count();

namespace detail {
// Counts one SLUICE_BUG and, the first time `logged` is seen clear, writes it to stderr with
// file:line. Any thread. Used by the macro in release builds; the tests call it directly.
void report_bug(const char* file, int line, const char* msg, std::atomic<bool>* logged);
}  // namespace detail

}  // namespace sluice::base

#define SLUICE_CHECK(cond)                                                              \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "sluice: check failed at %s:%d: %s\n", __FILE__, __LINE__, \
                   #cond);                                                              \
      std::abort();                                                                     \
    }                                                                                   \
  } while (0)

#ifdef NDEBUG
// One flag per site (a static local is constant-initialised: no guard, no allocation).
#define SLUICE_BUG(msg)                                                         \
  do {                                                                          \
    static std::atomic<bool> sluice_bug_logged_{false};                         \
    ::sluice::base::detail::report_bug(__FILE__, __LINE__, msg, &sluice_bug_logged_); \
  } while (0)
#else
#define SLUICE_BUG(msg)                                                                      \
  do {                                                                                       \
    std::fprintf(stderr, "sluice: BUG at %s:%d: %s\n", __FILE__, __LINE__, msg);             \
    std::abort();                                                                            \
  } while (0)
#endif

#ifdef NDEBUG
#define SLUICE_ASSERT(cond) ((void)0)
#else
#define SLUICE_ASSERT(cond) SLUICE_CHECK(cond)
#endif

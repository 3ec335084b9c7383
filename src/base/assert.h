#pragma once
// Three assertion levels (see docs/core-principles.md):
//   SLUICE_ASSERT(c)  debug builds only; documents an invariant on a hot path.
//   SLUICE_CHECK(c)   always on; a violated invariant aborts with file:line.
//   SLUICE_BUG(msg)   always on; reached code that must be unreachable.
// Never assert on anything a peer (client, server, CLI user, configuration) controls.
#include <cstdio>
#include <cstdlib>

#define SLUICE_CHECK(cond)                                                              \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "sluice: check failed at %s:%d: %s\n", __FILE__, __LINE__, \
                   #cond);                                                              \
      std::abort();                                                                     \
    }                                                                                   \
  } while (0)

#define SLUICE_BUG(msg)                                                                      \
  do {                                                                                       \
    std::fprintf(stderr, "sluice: BUG at %s:%d: %s\n", __FILE__, __LINE__, msg);             \
    std::abort();                                                                            \
  } while (0)

#ifdef NDEBUG
#define SLUICE_ASSERT(cond) ((void)0)
#else
#define SLUICE_ASSERT(cond) SLUICE_CHECK(cond)
#endif

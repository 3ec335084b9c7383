#include "base/published.h"

#include <cstdio>
#include <cstdlib>

namespace sluice::base::hazard {

namespace {

// nbthread is at most 1024; the rest is room for the main thread, CLI and test threads.
constexpr int kSlots = 2048;
struct Slots {
  Slot slot[kSlots];
  std::atomic<int> high{0};   // slots [0, high) may have been claimed
};
Slots g_domains[kDomains];

struct Owner {
  Slot* slot[kDomains] = {};
  ~Owner() {
    for (int i = 0; i < kDomains; ++i) {
      Slot* s = slot[i];
      if (!s) continue;
      t_slots[i] = nullptr;
      s->ptr.store(nullptr, std::memory_order_release);
      s->owned.store(false, std::memory_order_release);
    }
  }
};
thread_local Owner t_owner;

Slot* claim(Slots& d) {
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (!d.slot[i].owned.load(std::memory_order_relaxed) &&
        d.slot[i].owned.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
      int h = d.high.load(std::memory_order_relaxed);
      while (h < i + 1 && !d.high.compare_exchange_weak(h, i + 1, std::memory_order_seq_cst)) {
      }
      return &d.slot[i];
    }
  }
  std::fputs("sluice: more than 2048 threads read published snapshots\n", stderr);
  std::abort();
}

}  // namespace

Slot& claim_slot(Domain d) {
  const auto i = static_cast<int>(d);
  if (!t_owner.slot[i]) t_owner.slot[i] = claim(g_domains[i]);
  t_slots[i] = t_owner.slot[i];
  return *t_owner.slot[i];
}

bool in_use(Domain d, const void* p) {
  const Slots& s = g_domains[static_cast<int>(d)];
  int h = s.high.load(std::memory_order_seq_cst);
  for (int i = 0; i < h; ++i)
    if (s.slot[i].ptr.load(std::memory_order_seq_cst) == p) return true;
  return false;
}

}  // namespace sluice::base::hazard

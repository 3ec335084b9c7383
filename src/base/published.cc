#include "base/published.h"

#include <cstdio>
#include <cstdlib>

namespace sluice::base::hazard {

namespace {

// nbthread is at most 1024; the rest is room for the main thread, CLI and test threads.
constexpr int kSlots = 2048;
Slot g_slots[kSlots];
std::atomic<int> g_high{0};   // slots [0, g_high) may have been claimed

struct Owner {
  Slot* slot = nullptr;
  ~Owner() {
    if (slot) {
      slot->ptr.store(nullptr, std::memory_order_release);
      slot->owned.store(false, std::memory_order_release);
    }
  }
};
thread_local Owner t_owner;

Slot* claim() {
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (!g_slots[i].owned.load(std::memory_order_relaxed) &&
        g_slots[i].owned.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
      int h = g_high.load(std::memory_order_relaxed);
      while (h < i + 1 && !g_high.compare_exchange_weak(h, i + 1, std::memory_order_seq_cst)) {
      }
      return &g_slots[i];
    }
  }
  std::fputs("sluice: more than 2048 threads read published snapshots\n", stderr);
  std::abort();
}

}  // namespace

Slot& my_slot() {
  if (!t_owner.slot) t_owner.slot = claim();
  return *t_owner.slot;
}

bool in_use(const void* p) {
  int h = g_high.load(std::memory_order_seq_cst);
  for (int i = 0; i < h; ++i)
    if (g_slots[i].ptr.load(std::memory_order_seq_cst) == p) return true;
  return false;
}

}  // namespace sluice::base::hazard

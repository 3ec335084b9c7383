#pragma once
// A bounded multi-producer single-consumer queue without locks (one sequence number per cell,
// after Dmitry Vyukov's bounded queue): producers on any thread claim a cell with one CAS on
// the tail; the consumer (the owning worker) reads cells in order. A full queue makes push()
// fail at once, so a producer never waits: multi-queue accept then keeps the connection.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "base/assert.h"

namespace sluice::core {

template <typename T>
class BoundedQueue {
 public:
  // `capacity` is rounded up to a power of two.
  explicit BoundedQueue(std::size_t capacity) {
    std::size_t cap = 2;
    while (cap < capacity) cap <<= 1;
    mask_ = cap - 1;
    cells_ = std::make_unique<Cell[]>(cap);
    for (std::size_t i = 0; i < cap; ++i) cells_[i].seq.store(i, std::memory_order_relaxed);
  }

  // Any thread. Returns false when full, and `value` is then left as it was (a move-only
  // value stays with the caller).
  bool push(const T& value) {
    T copy(value);
    return push(std::move(copy));
  }
  bool push(T&& value) {
    std::size_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& c = cells_[pos & mask_];
      std::size_t seq = c.seq.load(std::memory_order_acquire);
      auto diff = static_cast<std::intptr_t>(seq) - static_cast<std::intptr_t>(pos);
      if (diff == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          c.value = std::move(value);
          c.seq.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;   // the cell still holds an unread value from a lap ago: full
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }

  // Consumer thread only. Returns false when empty.
  bool pop(T* out) {
    Cell& c = cells_[head_ & mask_];
    std::size_t seq = c.seq.load(std::memory_order_acquire);
    if (static_cast<std::intptr_t>(seq) - static_cast<std::intptr_t>(head_ + 1) < 0) return false;
    *out = std::move(c.value);
    c.seq.store(head_ + mask_ + 1, std::memory_order_release);
    ++head_;
    head_pub_.store(head_, std::memory_order_relaxed);
    return true;
  }

  // Approximate number of queued items. Any thread (used as a load estimate).
  std::size_t size_estimate() const {
    std::size_t t = tail_.load(std::memory_order_relaxed);
    std::size_t h = head_pub_.load(std::memory_order_relaxed);
    return t > h ? t - h : 0;
  }

  std::size_t capacity() const { return mask_ + 1; }

 private:
  struct Cell {
    std::atomic<std::size_t> seq{0};
    T value{};
  };
  std::unique_ptr<Cell[]> cells_;
  std::size_t mask_ = 0;
  alignas(64) std::atomic<std::size_t> tail_{0};
  alignas(64) std::size_t head_ = 0;
  std::atomic<std::size_t> head_pub_{0};
};

}  // namespace sluice::core

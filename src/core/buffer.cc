#include "core/buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <new>

namespace sluice::core {

namespace {

std::size_t page_rounded(uint32_t size) {
  static const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::size_t n = std::max<std::size_t>(size, 1);
  return (n + page - 1) / page * page;
}

}  // namespace

BufferPool::BufferPool(uint32_t buffer_size, std::size_t max_cached, std::size_t trim_floor)
    : size_(buffer_size),
      mapped_(page_rounded(buffer_size)),
      max_cached_(max_cached),
      trim_floor_(trim_floor) {}

BufferPool::~BufferPool() {
  // Buffers still in use belong to sessions that free them through put() before the pool
  // goes (the worker closes every session first); only the cached ones are ours here.
  for (Buffer* b : free_) release(b);
}

void BufferPool::release(Buffer* b) {
  munmap(b->data, mapped_);
  delete b;
  --allocated_;
  ++released_;
}

Buffer* BufferPool::get() {
  if (!free_.empty()) {
    Buffer* b = free_.back();
    free_.pop_back();
    if (free_.size() < low_water_) low_water_ = free_.size();
    return b;
  }
  // A private anonymous mapping: zero-filled pages that the kernel provides on first touch, and
  // that munmap() gives back whole. Neighbouring mappings with the same flags merge into one
  // VMA, so many buffers do not mean many VMAs.
  void* p = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  auto* b = new Buffer;
  b->data = static_cast<char*>(p);
  b->capacity = size_;
  ++allocated_;
  return b;
}

void BufferPool::put(Buffer* b) {
  b->reset();
  if (free_.size() >= max_cached_) {
    release(b);
    return;
  }
  free_.push_back(b);
}

std::size_t BufferPool::trim() {
  // low_water_ buffers were never taken during the whole period: the load did not need them.
  std::size_t idle = std::min(low_water_, free_.size());
  std::size_t n = idle > trim_floor_ ? idle - trim_floor_ : 0;
  if (n) {
    // The oldest are at the front; the recently used (warm) ones stay.
    for (std::size_t i = 0; i < n; ++i) release(free_[i]);
    free_.erase(free_.begin(), free_.begin() + static_cast<std::ptrdiff_t>(n));
  }
  low_water_ = free_.size();
  return n;
}

}  // namespace sluice::core

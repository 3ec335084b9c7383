#include "core/buffer.h"

#include <cstdlib>
#include <new>

namespace sluice::core {

BufferPool::BufferPool(uint32_t buffer_size, std::size_t max_cached)
    : size_(buffer_size), max_cached_(max_cached) {}

BufferPool::~BufferPool() {
  for (Buffer* b : free_) {
    std::free(b->data);
    delete b;
  }
}

Buffer* BufferPool::get() {
  if (!free_.empty()) {
    Buffer* b = free_.back();
    free_.pop_back();
    return b;
  }
  auto* b = new Buffer;
  b->data = static_cast<char*>(std::malloc(size_));
  if (!b->data) throw std::bad_alloc();
  b->capacity = size_;
  ++allocated_;
  return b;
}

void BufferPool::put(Buffer* b) {
  b->reset();
  if (free_.size() >= max_cached_) {
    std::free(b->data);
    delete b;
    --allocated_;
    return;
  }
  free_.push_back(b);
}

}  // namespace sluice::core

#include "core/buffer_queue.h"

#include <algorithm>
#include <cstring>

namespace sluice::core {

void BufferQueue::push(Buffer* b) {
  b->next = nullptr;
  if (last_) last_->next = b;
  else first_ = b;
  last_ = b;
}

void BufferQueue::pop_front() {
  Buffer* b = first_;
  first_ = b->next;
  if (!first_) last_ = nullptr;
  b->next = nullptr;
  b->reset();
  pool_->put(b);
}

bool BufferQueue::append(const char* p, std::size_t n) {
  while (n > 0) {
    if (!last_ || last_->room() == 0) {
      Buffer* b = pool_->try_get();
      if (!b) {
        failed_ = true;
        return false;
      }
      push(b);
    }
    std::size_t take = std::min<std::size_t>(n, last_->room());
    std::memcpy(last_->write_ptr(), p, take);
    last_->tail += static_cast<uint32_t>(take);
    size_ += take;
    p += take;
    n -= take;
  }
  return true;
}

void BufferQueue::splice(Buffer*& b) {
  if (!b || b->empty()) return;
  const uint32_t n = b->size();
  if (last_ && last_->room() >= n) {
    std::memcpy(last_->write_ptr(), b->read_ptr(), n);
    last_->tail += n;
    b->reset();
  } else {
    push(b);
    b = nullptr;
  }
  size_ += n;
}

void BufferQueue::truncate(std::size_t keep) {
  if (keep >= size_) return;
  if (keep == 0) {
    clear();
    return;
  }
  // Walk to the buffer that holds the last byte kept, cut it there and give back the ones
  // after it.
  const std::size_t dropped = size_ - keep;
  Buffer* b = first_;
  while (keep > b->size()) {
    keep -= b->size();
    b = b->next;
  }
  b->tail = b->head + static_cast<uint32_t>(keep);
  for (Buffer* r = b->next; r;) {
    Buffer* next = r->next;
    r->next = nullptr;
    r->reset();
    pool_->put(r);
    r = next;
  }
  b->next = nullptr;
  last_ = b;
  size_ -= dropped;
}

void BufferQueue::clear_buffers() {
  while (first_) pop_front();
  size_ = 0;
}

void BufferQueue::consume(std::size_t n) {
  first_->head += static_cast<uint32_t>(n);
  size_ -= n;
  if (first_->empty()) pop_front();
}

}  // namespace sluice::core

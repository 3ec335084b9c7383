#pragma once
// Bytes queued towards one side of a connection, held in the worker's pooled buffers (a FIFO
// of core::Buffer linked through Buffer::next), never in heap strings: a body read into a
// buffer can move to the other side's queue as that buffer (splice()), without a copy, and
// what is copied (serialized heads, re-chunked bodies) lands in pooled memory too. An empty
// queue holds no buffer, so an idle connection keeps none.
//
// A buffer that cannot be had (BufferPool::try_get() failed) makes append() return false and
// the queue failed(): the caller ends the connection. Worker-local.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/buffer.h"

namespace sluice::core {

class BufferQueue {
 public:
  explicit BufferQueue(BufferPool& pool) : pool_(&pool) {}
  ~BufferQueue() { clear(); }
  BufferQueue(const BufferQueue&) = delete;
  BufferQueue& operator=(const BufferQueue&) = delete;

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool failed() const { return failed_; }

  // Copies `n` bytes to the end. False when a buffer could not be had (failed() from then on).
  bool append(const char* p, std::size_t n);
  bool append(std::string_view s) { return append(s.data(), s.size()); }
  // Moves the unread bytes of `b` to the end. The buffer itself joins the queue (`b` becomes
  // null) unless its bytes fit in the room of the last one, where they are copied (`b` is left
  // empty): small pieces do not each pin a whole buffer.
  void splice(Buffer*& b);
  // Keeps the first `keep` bytes (at most size()) and drops the rest.
  void truncate(std::size_t keep);
  // Drops everything; the buffers go back to the pool.
  void clear() {
    if (first_) clear_buffers();
  }

  // The first bytes to send: the unread part of the first buffer.
  const char* front() const { return first_->data + first_->head; }
  std::size_t front_size() const { return first_ ? first_->size() : 0; }
  // Whether bytes follow the first buffer's.
  bool more_after_front() const { return first_ != last_; }
  // The buffers in order (for a gathered write): first_buffer(), then each one's `next`.
  const Buffer* first_buffer() const { return first_; }
  // `n` (at most front_size()) bytes were sent.
  void consume(std::size_t n);

 private:
  void clear_buffers();
  void push(Buffer* b);
  void pop_front();

  BufferPool* pool_;
  Buffer* first_ = nullptr;
  Buffer* last_ = nullptr;
  std::size_t size_ = 0;
  bool failed_ = false;
};

}  // namespace sluice::core

#pragma once
// Relay buffers and their per-thread pool. A connection holds a buffer only while bytes are in
// flight and gives it back when it drains, so an idle connection costs no buffer memory.
// Worker-local: a pool belongs to one thread and so does every buffer taken from it.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sluice::core {

struct Buffer {
  char* data = nullptr;
  uint32_t head = 0;   // first byte not yet sent
  uint32_t tail = 0;   // one past the last byte received
  uint32_t capacity = 0;

  uint32_t size() const { return tail - head; }
  bool empty() const { return head == tail; }
  uint32_t room() const { return capacity - tail; }
  char* read_ptr() { return data + head; }
  char* write_ptr() { return data + tail; }
  // Called when the buffer drains, so the next read starts at the beginning.
  void reset() { head = tail = 0; }
};

class BufferPool {
 public:
  explicit BufferPool(uint32_t buffer_size, std::size_t max_cached = 1024);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  Buffer* get();
  void put(Buffer* b);

  uint32_t buffer_size() const { return size_; }
  std::size_t allocated() const { return allocated_; }
  std::size_t in_use() const { return allocated_ - free_.size(); }

 private:
  uint32_t size_;
  std::size_t max_cached_;
  std::size_t allocated_ = 0;
  std::vector<Buffer*> free_;
};

}  // namespace sluice::core

#pragma once
// Relay buffers and their per-thread pool. A connection holds a buffer only while bytes are in
// flight and gives it back when it drains, so an idle connection costs no buffer memory.
// Worker-local: a pool belongs to one thread and so does every buffer taken from it. The pool
// may be built on another thread (workers are built on the main thread); in debug builds it
// binds to the first thread that takes, returns or trims a buffer and aborts when another
// thread does so later.
#include <cstddef>
#include <cstdint>
#include "base/source_location.h"
#include <vector>

#include "base/thread_owner.h"

namespace sluice::core {

struct Buffer {
  char* data = nullptr;
  uint32_t head = 0;   // first byte not yet sent
  uint32_t tail = 0;   // one past the last byte received
  uint32_t capacity = 0;
  Buffer* next = nullptr;   // the next buffer of a BufferQueue holding this one

  uint32_t size() const { return tail - head; }
  bool empty() const { return head == tail; }
  uint32_t room() const { return capacity - tail; }
  char* read_ptr() { return data + head; }
  char* write_ptr() { return data + tail; }
  // Called when the buffer drains, so the next read starts at the beginning.
  void reset() { head = tail = 0; }
};

// Buffers returned to the pool wait in a LIFO free list (the most recently used, still in the
// CPU cache, goes out first). Their storage is carved from slabs of anonymous memory (64 buffers
// per mmap), not from the heap: a burst of connections grows the pool, and what the burst left
// idle must go back to the kernel afterwards. Freed heap chunks usually cannot (glibc returns
// only the top of an arena, and small long-lived objects allocated during the burst pin
// everything below it), which is how 16 KiB buffers used to stay in RSS for good after a burst.
//
// Releasing a buffer is madvise(MADV_DONTNEED) on its pages: they go back to the kernel, the
// buffer stays in the free list (behind the resident ones) and is refilled with zero pages on its
// next use. Nothing is unmapped, so the process's mappings never fragment into one VMA per
// buffer (the kernel's limit is 65,530 mappings per process) and a mmap happens once per slab.
//
// trim() is called periodically (the worker does it once a second). It releases the buffers
// that stayed in the free list, resident, during the whole period since the previous trim (the
// smallest number of resident cached buffers since then), oldest first, keeping at least
// `trim_floor`. Under a steady load that low-water mark is what the load never needs, and a load
// that keeps using its buffers loses none, so the steady state makes no system call here; after
// a burst the idle surplus is gone within two periods.
class BufferPool {
 public:
  // `max_cached`: hard cap on resident cached buffers; one put back above it is released at once.
  // `trim_floor`: resident buffers trim() always leaves cached.
  explicit BufferPool(uint32_t buffer_size, std::size_t max_cached = 1024,
                      std::size_t trim_floor = 16);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A buffer, or nullptr when the memory for a new slab is refused (counted in
  // alloc_failures()); never throws. The data path uses this one. Worker-local.
  Buffer* try_get() noexcept;
  // Gives `b` back. Worker-local.
  void put(Buffer* b);
  // Releases the buffers that stayed idle since the previous trim (see above). Returns how many.
  // Worker-local.
  std::size_t trim();

  uint32_t buffer_size() const { return size_; }
  // Bytes of memory behind each buffer (the size rounded up to whole pages).
  std::size_t storage_size() const { return mapped_; }
  // Buffers holding memory: in use + resident cached. Released ones do not count.
  std::size_t allocated() const { return in_use_ + cached(); }
  std::size_t in_use() const { return in_use_; }
  std::size_t cached() const { return free_.size() - spare_; }   // resident, in the free list
  std::size_t trim_floor() const { return trim_floor_; }
  std::size_t released() const { return released_; }    // buffers given back to the kernel, ever
  // Times a buffer was asked for and none could be had (try_get() returned nullptr). Read on
  // the owner thread.
  std::size_t alloc_failures() const { return alloc_failures_; }

  // Test hook: the next `n` slab mappings fail as if the kernel refused the memory.
  // Worker-local.
  void fail_next_slabs(std::size_t n) { fail_slabs_ = n; }

 private:
  void release_oldest_cached();
  bool map_slab() noexcept;
  void assert_owner(const base::SourceLocation& where = base::SourceLocation::current()) {
#ifndef NDEBUG
    owner_.bind_if_unbound();
    owner_.check("core::BufferPool", where);
#endif
  }

  base::ThreadOwner owner_;   // debug builds: the first thread that used the pool

  uint32_t size_;
  std::size_t mapped_;
  std::size_t max_cached_;
  std::size_t trim_floor_;
  std::size_t in_use_ = 0;
  std::size_t released_ = 0;
  std::size_t alloc_failures_ = 0;
  std::size_t fail_slabs_ = 0;   // fail_next_slabs()
  std::size_t low_water_ = 0;   // smallest cached() since the previous trim()
  // Free buffers: the first spare_ were released (no memory behind them), the rest are resident,
  // oldest first; try_get() takes from the back.
  std::vector<Buffer*> free_;
  std::size_t spare_ = 0;
  // A slab: kSlabBuffers buffers' memory in one mapping, and their Buffer objects in one array.
  struct Slab {
    char* memory;
    Buffer* buffers;
  };
  static constexpr std::size_t kSlabBuffers = 64;

  std::vector<Slab> slabs_;      // every slab mapped, unmapped and deleted by the destructor
  std::size_t slab_used_ = kSlabBuffers;   // buffers of the last slab handed out (full: none)
};

}  // namespace sluice::core

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
  // Sessions give their buffers back before the pool goes (the worker closes every session
  // first); the storage of all of them goes with the slabs.
  for (const Slab& slab : slabs_) {
    munmap(slab.memory, mapped_ * kSlabBuffers);
    delete[] slab.buffers;
  }
}

void BufferPool::release_oldest_cached() {
  Buffer* b = free_[spare_];
  // The pages go back to the kernel now; the next touch maps fresh zero pages.
  madvise(b->data, mapped_, MADV_DONTNEED);
  ++spare_;
  ++released_;
}

Buffer* BufferPool::try_get() noexcept {
  assert_owner();
  if (!free_.empty()) {
    Buffer* b = free_.back();
    free_.pop_back();
    if (free_.size() < spare_) spare_ = free_.size();   // took a released one
    if (cached() < low_water_) low_water_ = cached();
    ++in_use_;
    return b;
  }
  if (slab_used_ == kSlabBuffers && !map_slab()) {
    ++alloc_failures_;
    return nullptr;
  }
  Buffer* b = &slabs_.back().buffers[slab_used_++];
  ++in_use_;
  return b;
}

bool BufferPool::map_slab() noexcept {
  if (fail_slabs_ > 0) {
    --fail_slabs_;
    return false;
  }
  // Room in the bookkeeping first, and the objects: once the memory is mapped nothing fails.
  // The heap's refusal is an exception only here, and becomes a failure like the kernel's.
  try {
    slabs_.reserve(slabs_.size() + 1);
    free_.reserve((slabs_.size() + 1) * kSlabBuffers);
  } catch (const std::bad_alloc&) {
    return false;
  }
  auto* buffers = new (std::nothrow) Buffer[kSlabBuffers];
  if (!buffers) return false;
  // Zero-filled pages that the kernel provides on first touch.
  std::size_t bytes = mapped_ * kSlabBuffers;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    delete[] buffers;
    return false;
  }
  for (std::size_t i = 0; i < kSlabBuffers; ++i) {
    buffers[i].data = static_cast<char*>(p) + i * mapped_;
    buffers[i].capacity = size_;
  }
  slabs_.push_back(Slab{static_cast<char*>(p), buffers});   // reserved above
  slab_used_ = 0;
  return true;
}

void BufferPool::put(Buffer* b) {
  assert_owner();
  b->reset();
  --in_use_;
  free_.push_back(b);   // reserved for every buffer owned: does not allocate
  if (cached() > max_cached_) release_oldest_cached();
}

std::size_t BufferPool::trim() {
  assert_owner();
  // low_water_ resident buffers were never taken during the whole period: the load did not
  // need them. They are the oldest resident ones (a LIFO list is only touched at its back).
  std::size_t idle = std::min(low_water_, cached());
  std::size_t n = idle > trim_floor_ ? idle - trim_floor_ : 0;
  for (std::size_t i = 0; i < n; ++i) release_oldest_cached();
  low_water_ = cached();
  return n;
}

}  // namespace sluice::core

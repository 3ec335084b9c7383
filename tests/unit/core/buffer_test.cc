#include "core/buffer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

namespace sluice::core {
namespace {

TEST(BufferPool, ReusesReturnedBuffers) {
  BufferPool pool(1024);
  Buffer* a = pool.try_get();
  EXPECT_EQ(a->capacity, 1024u);
  EXPECT_TRUE(a->empty());
  a->tail = 10;
  pool.put(a);
  EXPECT_EQ(pool.in_use(), 0u);
  Buffer* b = pool.try_get();
  EXPECT_EQ(a, b);
  EXPECT_TRUE(b->empty()) << "a returned buffer is reset";
  pool.put(b);
  EXPECT_EQ(pool.allocated(), 1u);
}

TEST(BufferPool, CachesAtMostItsLimit) {
  BufferPool pool(64, 2);
  Buffer* bufs[4];
  for (auto& b : bufs) b = pool.try_get();
  EXPECT_EQ(pool.allocated(), 4u);
  for (auto& b : bufs) pool.put(b);
  EXPECT_EQ(pool.allocated(), 2u);
}

TEST(BufferPool, StorageIsWholePages) {
  BufferPool pool(100);
  EXPECT_GE(pool.storage_size(), 100u);
  EXPECT_EQ(pool.storage_size() % static_cast<std::size_t>(sysconf(_SC_PAGESIZE)), 0u);
  Buffer* b = pool.try_get();
  EXPECT_EQ(b->capacity, 100u) << "capacity is what was asked, not the rounded size";
  pool.put(b);
}

// Takes `n` buffers and gives them back, the way a burst of connections does.
void burst(BufferPool& pool, std::size_t n) {
  std::vector<Buffer*> held;
  for (std::size_t i = 0; i < n; ++i) held.push_back(pool.try_get());
  for (Buffer* b : held) pool.put(b);
}

TEST(BufferPool, TrimReleasesOnlyWhatStayedIdleAWholePeriod) {
  BufferPool pool(64, 1024, 2);
  burst(pool, 10);
  EXPECT_EQ(pool.cached(), 10u);
  // The list was empty at the start of this period: nothing stayed idle through all of it.
  EXPECT_EQ(pool.trim(), 0u);
  EXPECT_EQ(pool.allocated(), 10u);
  // Next period: 3 taken at most at once, so 7 were never needed.
  burst(pool, 3);
  EXPECT_EQ(pool.trim(), 5u) << "7 idle the whole period, less the floor of 2";
  EXPECT_EQ(pool.allocated(), 5u);
  EXPECT_EQ(pool.cached(), 5u);
  EXPECT_EQ(pool.in_use(), 0u);
  EXPECT_EQ(pool.released(), 5u);
  // A quiet period: everything above the floor goes.
  EXPECT_EQ(pool.trim(), 3u);
  EXPECT_EQ(pool.cached(), 2u);
  // The floor stays, period after period.
  EXPECT_EQ(pool.trim(), 0u);
  EXPECT_EQ(pool.trim(), 0u);
  EXPECT_EQ(pool.allocated(), 2u);
  EXPECT_EQ(pool.released(), 8u);
}

TEST(BufferPool, SteadyLoadKeepsItsBuffers) {
  BufferPool pool(64, 1024, 0);
  burst(pool, 8);
  pool.trim();
  for (int period = 0; period < 5; ++period) {
    burst(pool, 8);   // every cached buffer is used at some point of each period
    EXPECT_EQ(pool.trim(), 0u);
  }
  EXPECT_EQ(pool.allocated(), 8u);
  EXPECT_EQ(pool.released(), 0u);
}

TEST(BufferPool, TrimLeavesBuffersInUseAlone) {
  BufferPool pool(64, 1024, 0);
  std::vector<Buffer*> held;
  for (int i = 0; i < 4; ++i) held.push_back(pool.try_get());
  burst(pool, 2);   // two more, now cached
  EXPECT_EQ(pool.allocated(), 6u);
  pool.trim();
  EXPECT_EQ(pool.trim(), 2u);
  EXPECT_EQ(pool.allocated(), 4u);
  EXPECT_EQ(pool.in_use(), 4u);
  EXPECT_EQ(pool.cached(), 0u);
  for (Buffer* b : held) pool.put(b);
  EXPECT_EQ(pool.in_use(), 0u);
  EXPECT_EQ(pool.cached(), 4u);
}

TEST(BufferPool, TrimKeepsTheMostRecentlyUsed) {
  BufferPool pool(64, 1024, 1);
  Buffer* a = pool.try_get();
  Buffer* b = pool.try_get();
  Buffer* c = pool.try_get();
  pool.put(a);
  pool.put(b);
  pool.put(c);   // last in: the warm one
  pool.trim();
  EXPECT_EQ(pool.trim(), 2u);
  EXPECT_EQ(pool.try_get(), c);
  pool.put(c);
}

TEST(BufferPool, GetAfterTrimWorks) {
  BufferPool pool(16384, 1024, 0);
  burst(pool, 4);
  pool.trim();
  EXPECT_EQ(pool.trim(), 4u);
  EXPECT_EQ(pool.allocated(), 0u);
  Buffer* b = pool.try_get();
  ASSERT_NE(b->data, nullptr);
  EXPECT_EQ(b->capacity, 16384u);
  EXPECT_TRUE(b->empty());
  // The whole capacity is writable and reads back.
  for (uint32_t i = 0; i < b->capacity; ++i) b->data[i] = static_cast<char>(i);
  b->tail = b->capacity;
  EXPECT_EQ(b->read_ptr()[16383], static_cast<char>(16383));
  EXPECT_EQ(pool.allocated(), 1u);
  EXPECT_EQ(pool.in_use(), 1u);
  pool.put(b);
  EXPECT_EQ(pool.cached(), 1u);
}

TEST(BufferPool, OverflowBeyondTheCapIsReleasedAtOnce) {
  BufferPool pool(64, 2, 0);
  burst(pool, 5);
  EXPECT_EQ(pool.allocated(), 2u);
  EXPECT_EQ(pool.cached(), 2u);
  EXPECT_EQ(pool.released(), 3u);
}

TEST(BufferPool, ReleasedBuffersAreReusedBeforeNewMemory) {
  BufferPool pool(4096, 16, 0);
  std::vector<Buffer*> first;
  for (int i = 0; i < 4; ++i) first.push_back(pool.try_get());
  first[0]->write_ptr()[0] = 'x';
  first[0]->tail = 1;
  for (Buffer* b : first) pool.put(b);
  pool.trim();
  EXPECT_EQ(pool.trim(), 4u);
  EXPECT_EQ(pool.allocated(), 0u);
  std::vector<Buffer*> again;
  for (int i = 0; i < 4; ++i) again.push_back(pool.try_get());
  for (Buffer* b : again) {
    EXPECT_NE(std::find(first.begin(), first.end(), b), first.end()) << "a released buffer is reused";
    EXPECT_EQ(b->data[0], 0) << "released pages come back zero-filled";
  }
  EXPECT_EQ(pool.allocated(), 4u);
  EXPECT_EQ(pool.in_use(), 4u);
  for (Buffer* b : again) pool.put(b);
}

// How many of this process's mappings (/proc/self/maps) hold at least one of these buffers.
std::size_t mappings_holding(const std::vector<Buffer*>& bufs) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  std::size_t n = 0;
  while (std::getline(maps, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) != 2) continue;
    for (Buffer* b : bufs) {
      auto a = reinterpret_cast<unsigned long>(b->data);
      if (a >= lo && a < hi) {
        ++n;
        break;
      }
    }
  }
  return n;
}

TEST(BufferPool, ReleasingDoesNotFragmentTheMappings) {
  // Buffers come from 64-buffer slabs and releasing them does not unmap anything: 2,000
  // buffers, every other one released, stay a handful of mappings (one mapping per buffer
  // would run into the kernel's 65,530-mapping limit on a busy proxy).
  BufferPool pool(16384, 4096, 0);
  std::vector<Buffer*> bufs;
  for (int i = 0; i < 2000; ++i) bufs.push_back(pool.try_get());
  for (std::size_t i = 0; i < bufs.size(); i += 2) pool.put(bufs[i]);
  pool.trim();
  EXPECT_EQ(pool.trim(), 1000u);
  EXPECT_LE(mappings_holding(bufs), 2000u / 64 + 1);
  for (std::size_t i = 1; i < bufs.size(); i += 2) pool.put(bufs[i]);
}

// A refused slab is a null buffer and a count, not an exception; buffers already in the pool
// are still handed out, and the next slab that can be mapped is.
TEST(BufferPool, TryGetReturnsNullAndCountsWhenMemoryIsRefused) {
  BufferPool pool(64);
  pool.fail_next_slabs(1);
  EXPECT_EQ(pool.try_get(), nullptr);
  EXPECT_EQ(pool.alloc_failures(), 1u);
  EXPECT_EQ(pool.in_use(), 0u);
  std::vector<Buffer*> held;
  for (int i = 0; i < 64; ++i) {   // one slab's worth
    held.push_back(pool.try_get());
    ASSERT_NE(held.back(), nullptr);
  }
  pool.fail_next_slabs(2);
  EXPECT_EQ(pool.try_get(), nullptr);
  EXPECT_EQ(pool.try_get(), nullptr);
  EXPECT_EQ(pool.alloc_failures(), 3u);
  EXPECT_EQ(pool.in_use(), 64u);
  Buffer* back = held.back();
  held.pop_back();
  pool.put(back);
  EXPECT_EQ(pool.try_get(), back) << "the free list needs no new memory";
  held.push_back(back);
  Buffer* fresh = pool.try_get();   // the hook is spent: a new slab is mapped
  ASSERT_NE(fresh, nullptr);
  EXPECT_EQ(fresh->capacity, 64u);
  fresh->write_ptr()[0] = 'x';   // its memory is there
  held.push_back(fresh);
  EXPECT_EQ(pool.alloc_failures(), 3u);
  for (Buffer* b : held) pool.put(b);
  EXPECT_EQ(pool.in_use(), 0u);
}

// Built on one thread and used on another (a worker's pool is built on the main thread).
TEST(BufferPool, MayBeBuiltOnAnotherThread) {
  std::unique_ptr<BufferPool> pool;
  std::thread([&] { pool = std::make_unique<BufferPool>(64); }).join();
  Buffer* b = pool->try_get();
  pool->put(b);
  EXPECT_EQ(pool->trim(), 0u);
}

TEST(BufferPoolDeathTest, AnotherThreadThanTheFirstUserAborts) {
#ifdef NDEBUG
  GTEST_SKIP() << "the owner-thread assertion is compiled out of release builds";
#else
  auto get_from_two_threads = [] {
    BufferPool pool(64);
    pool.put(pool.try_get());   // this thread is now the owner
    std::thread([&] { pool.put(pool.try_get()); }).join();
  };
  EXPECT_DEATH(get_from_two_threads(), "core::BufferPool used off its thread in .*get");
#endif
}

}  // namespace
}  // namespace sluice::core

// core::BlockCache: freed blocks come back to the next take() of the same thread, at most
// kBlockCacheKeep of them stay cached, and nothing is cached under AddressSanitizer.
#include "core/block_cache.h"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace sluice::core {
namespace {

using Cache = BlockCache<1500>;

TEST(BlockCache, ReusesWhatThisThreadGaveBack) {
  void* a = Cache::take();
  ASSERT_NE(a, nullptr);
  Cache::give(a);
  if (kBlockCacheKeep == 0) {
    EXPECT_EQ(Cache::cached(), 0u);
    return;
  }
  EXPECT_EQ(Cache::cached(), 1u);
  EXPECT_EQ(Cache::take(), a);   // last given, first taken
  EXPECT_EQ(Cache::cached(), 0u);
  Cache::give(a);
}

TEST(BlockCache, KeepsABoundedNumber) {
  std::vector<void*> blocks;
  for (std::size_t i = 0; i < kBlockCacheKeep + 10; ++i) blocks.push_back(Cache::take());
  for (void* p : blocks) Cache::give(p);
  EXPECT_EQ(Cache::cached(), kBlockCacheKeep);
}

TEST(BlockCache, EachThreadHasItsOwn) {
  std::size_t other = 1;
  std::thread t([&] {
    void* p = Cache::take();
    Cache::give(p);
    other = Cache::cached();
  });
  t.join();
  EXPECT_EQ(other, kBlockCacheKeep ? 1u : 0u);   // the main thread's blocks were not seen
}

}  // namespace
}  // namespace sluice::core

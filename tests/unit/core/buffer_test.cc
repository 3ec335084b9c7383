#include "core/buffer.h"

#include <gtest/gtest.h>

namespace sluice::core {
namespace {

TEST(BufferPool, ReusesReturnedBuffers) {
  BufferPool pool(1024);
  Buffer* a = pool.get();
  EXPECT_EQ(a->capacity, 1024u);
  EXPECT_TRUE(a->empty());
  a->tail = 10;
  pool.put(a);
  EXPECT_EQ(pool.in_use(), 0u);
  Buffer* b = pool.get();
  EXPECT_EQ(a, b);
  EXPECT_TRUE(b->empty()) << "a returned buffer is reset";
  pool.put(b);
  EXPECT_EQ(pool.allocated(), 1u);
}

TEST(BufferPool, CachesAtMostItsLimit) {
  BufferPool pool(64, 2);
  Buffer* bufs[4];
  for (auto& b : bufs) b = pool.get();
  EXPECT_EQ(pool.allocated(), 4u);
  for (auto& b : bufs) pool.put(b);
  EXPECT_EQ(pool.allocated(), 2u);
}

}  // namespace
}  // namespace sluice::core

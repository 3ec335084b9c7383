#include "core/buffer_queue.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace sluice::core {
namespace {

// Everything the queue holds, in order, by walking its buffers as a gathered write does.
std::string contents(const BufferQueue& q) {
  std::string out;
  for (const Buffer* b = q.first_buffer(); b; b = b->next) out.append(b->data + b->head, b->size());
  return out;
}

Buffer* filled(BufferPool& pool, const std::string& s, uint32_t at = 0) {
  Buffer* b = pool.try_get();
  std::memcpy(b->data + at, s.data(), s.size());
  b->head = at;
  b->tail = at + static_cast<uint32_t>(s.size());
  return b;
}

TEST(BufferQueue, AppendSpansBuffersAndConsumeGivesThemBack) {
  BufferPool pool(8);
  BufferQueue q(pool);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.front_size(), 0u);
  ASSERT_TRUE(q.append("hello, world"));   // 12 bytes: two buffers of 8
  EXPECT_EQ(q.size(), 12u);
  EXPECT_EQ(pool.in_use(), 2u);
  EXPECT_TRUE(q.more_after_front());
  EXPECT_EQ(contents(q), "hello, world");
  q.consume(8);
  EXPECT_EQ(pool.in_use(), 1u);   // the drained buffer went back at once
  EXPECT_EQ(std::string(q.front(), q.front_size()), "orld");
  q.consume(4);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(pool.in_use(), 0u) << "an empty queue holds no buffer";
}

TEST(BufferQueue, SpliceMovesABufferWithoutCopyingOrCopiesIntoRoom) {
  BufferPool pool(16);
  BufferQueue q(pool);
  Buffer* in = filled(pool, "body", 3);
  Buffer* moved = in;
  q.splice(in);
  EXPECT_EQ(in, nullptr) << "the input buffer itself joined the queue";
  EXPECT_EQ(q.first_buffer(), moved);
  // Small pieces are copied into the room left in the last buffer instead.
  Buffer* more = filled(pool, "+tail");
  q.splice(more);
  ASSERT_NE(more, nullptr);
  EXPECT_TRUE(more->empty());
  EXPECT_EQ(contents(q), "body+tail");
  pool.put(more);
  // Appends go behind the spliced bytes.
  ASSERT_TRUE(q.append("!"));
  EXPECT_EQ(contents(q), "body+tail!");
  Buffer* empty = pool.try_get();
  q.splice(empty);   // nothing to move
  EXPECT_NE(empty, nullptr);
  pool.put(empty);
  q.clear();
  EXPECT_EQ(pool.in_use(), 0u);
}

TEST(BufferQueue, TruncateKeepsAPrefixAcrossBuffers) {
  BufferPool pool(4);
  BufferQueue q(pool);
  ASSERT_TRUE(q.append("0123456789"));   // 3 buffers
  EXPECT_EQ(pool.in_use(), 3u);
  q.truncate(5);
  EXPECT_EQ(contents(q), "01234");
  EXPECT_EQ(pool.in_use(), 2u);
  ASSERT_TRUE(q.append("ab"));
  EXPECT_EQ(contents(q), "01234ab");
  q.truncate(100);   // more than it holds: nothing dropped
  EXPECT_EQ(q.size(), 7u);
  q.truncate(0);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(pool.in_use(), 0u);
}

TEST(BufferQueue, AppendFailsWhenThePoolHasNoMemory) {
  BufferPool pool(8);
  BufferQueue q(pool);
  pool.fail_next_slabs(1);
  EXPECT_FALSE(q.append("x"));
  EXPECT_TRUE(q.failed());
  EXPECT_TRUE(q.empty());
}

}  // namespace
}  // namespace sluice::core

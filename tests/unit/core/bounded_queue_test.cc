#include "core/bounded_queue.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace sluice::core {
namespace {

TEST(BoundedQueue, FifoAndFull) {
  BoundedQueue<int> q(4);
  EXPECT_EQ(q.capacity(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(q.push(i));
  EXPECT_FALSE(q.push(99)) << "a full queue refuses at once";
  EXPECT_EQ(q.size_estimate(), 4u);
  int v = -1;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(q.pop(&v));
    EXPECT_EQ(v, i);
  }
  EXPECT_FALSE(q.pop(&v));
  EXPECT_TRUE(q.push(5)) << "cells are reused after a lap";
  ASSERT_TRUE(q.pop(&v));
  EXPECT_EQ(v, 5);
}

TEST(BoundedQueue, ManyProducersOneConsumerLoseNothing) {
  BoundedQueue<int> q(64);
  constexpr int kPerProducer = 20000;
  std::atomic<int> refused{0};
  std::vector<std::thread> producers;
  for (int p = 0; p < 3; ++p) {
    producers.emplace_back([&, p] {
      for (int i = 0; i < kPerProducer; ++i) {
        while (!q.push(p * kPerProducer + i)) refused.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  std::vector<int> last(3, -1);
  int received = 0;
  while (received < 3 * kPerProducer) {
    int v;
    if (!q.pop(&v)) continue;
    int p = v / kPerProducer;
    EXPECT_GT(v, last[static_cast<std::size_t>(p)]) << "per-producer order is kept";
    last[static_cast<std::size_t>(p)] = v;
    ++received;
  }
  for (auto& t : producers) t.join();
  EXPECT_EQ(received, 3 * kPerProducer);
}

}  // namespace
}  // namespace sluice::core

#pragma once
// `balance leastconn`: the server with the fewest current connections relative to its
// weight, (conns + 1) / eweight; ties go to the server picked longest ago, which turns
// equal loads into a round robin.
//
// Why a lock here, against the rule that nothing on a connection's path takes one: the
// order depends on every connection start and end on every thread, so it is shared mutable
// state by nature. A lock-free min-structure (tournament tree with CAS on every level)
// either goes stale under races or needs a version per node; a mutex around an indexed
// binary heap is exact and simple. The critical section is one sift (O(log n), no
// allocation, a few hundred ns at 1000 servers) on each connection start and end, plus a
// read of the top on a pick. Picks do not grow with the number of servers beyond that
// log n. Only backends configured with leastconn pay it.
#include <cstdint>
#include <mutex>
#include <vector>

#include "lb/algorithm.h"

namespace sluice::lb {

class LeastConn : public Algorithm, public ConnObserver {
 public:
  explicit LeastConn(std::vector<Server*> servers);
  ~LeastConn() override;
  void pick(const PickContext& ctx, std::vector<Server*>& out, std::size_t max) override;
  void rebuild() override;
  const char* name() const override { return "leastconn"; }
  void on_conns_changed(Server& s) override;

 private:
  struct Entry {
    Server* s;
    int conns;      // as last seen
    int weight;     // eweight at the last rebuild
    uint64_t seq;   // when last picked (tie-break)
  };
  static bool less(const Entry& a, const Entry& b);
  void sift_up(std::size_t i);
  void sift_down(std::size_t i);
  void place(std::size_t i, Entry e);

  std::vector<Server*> servers_;
  std::mutex mu_;
  std::vector<Entry> heap_;       // guarded by mu_
  std::vector<int> pos_;          // Server::index() -> heap position or -1; guarded by mu_
  uint64_t seq_ = 0;              // guarded by mu_
};

}  // namespace sluice::lb

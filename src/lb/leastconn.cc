#include "lb/leastconn.h"

#include <algorithm>

namespace sluice::lb {

LeastConn::LeastConn(std::vector<Server*> servers) : servers_(std::move(servers)) {
  int max_index = -1;
  for (Server* s : servers_) max_index = std::max(max_index, s->index());
  pos_.assign(static_cast<std::size_t>(max_index + 1), -1);
  for (Server* s : servers_) s->set_observer(this);
  rebuild();
}

LeastConn::~LeastConn() {
  for (Server* s : servers_) s->set_observer(nullptr);
}

bool LeastConn::less(const Entry& a, const Entry& b) {
  // (a.conns + 1) / a.weight < (b.conns + 1) / b.weight, without division.
  int64_t l = int64_t{a.conns + 1} * b.weight, r = int64_t{b.conns + 1} * a.weight;
  if (l != r) return l < r;
  return a.seq < b.seq;
}

void LeastConn::place(std::size_t i, Entry e) {
  heap_[i] = e;
  pos_[static_cast<std::size_t>(e.s->index())] = static_cast<int>(i);
}

void LeastConn::sift_up(std::size_t i) {
  Entry e = heap_[i];
  while (i > 0) {
    std::size_t p = (i - 1) / 2;
    if (!less(e, heap_[p])) break;
    place(i, heap_[p]);
    i = p;
  }
  place(i, e);
}

void LeastConn::sift_down(std::size_t i) {
  Entry e = heap_[i];
  const std::size_t n = heap_.size();
  for (;;) {
    std::size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && less(heap_[c + 1], heap_[c])) ++c;
    if (!less(heap_[c], e)) break;
    place(i, heap_[c]);
    i = c;
  }
  place(i, e);
}

void LeastConn::rebuild() {
  std::lock_guard lock(mu_);
  std::vector<uint64_t> old_seq(pos_.size(), 0);
  for (const Entry& e : heap_) old_seq[static_cast<std::size_t>(e.s->index())] = e.seq;
  std::fill(pos_.begin(), pos_.end(), -1);
  heap_.clear();
  for (Server* s : servers_) {
    if (!s->usable() || s->eweight() <= 0) continue;
    heap_.push_back({s, s->current_conns(), s->eweight(), old_seq[static_cast<std::size_t>(s->index())]});
    pos_[static_cast<std::size_t>(s->index())] = static_cast<int>(heap_.size() - 1);
  }
  for (std::size_t i = heap_.size() / 2; i-- > 0;) sift_down(i);
}

void LeastConn::on_conns_changed(Server& s) {
  std::lock_guard lock(mu_);
  int p = pos_[static_cast<std::size_t>(s.index())];
  if (p < 0) return;
  auto i = static_cast<std::size_t>(p);
  int now = s.current_conns();
  bool up = now > heap_[i].conns;
  heap_[i].conns = now;
  if (up) {
    heap_[i].seq = ++seq_;   // a new connection: it goes behind its equals
    sift_down(i);
  } else {
    sift_up(i);
  }
}

void LeastConn::pick(const PickContext&, std::vector<Server*>& out, std::size_t max) {
  out.clear();
  if (max == 0) return;
  std::lock_guard lock(mu_);
  const std::size_t n = heap_.size();
  if (n == 0) return;
  if (pickable(heap_[0].s)) out.push_back(heap_[0].s);
  if (out.size() >= max && !out.empty()) return;
  // Further candidates (retries, or a full top server): the next levels of the heap in key
  // order. Exact for the second choice, near-least after that; bounded by `max`, not by n.
  std::size_t look = std::min(n, 4 * max + 3);
  std::vector<std::size_t> idx;
  idx.reserve(look);
  for (std::size_t i = 1; i < look; ++i) idx.push_back(i);
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return less(heap_[a], heap_[b]); });
  for (std::size_t i : idx) {
    if (out.size() >= max) break;
    if (pickable(heap_[i].s)) push_distinct(out, heap_[i].s);
  }
  // Everything looked at is full or down: scan the rest (rare, O(n)).
  for (std::size_t i = look; i < n && out.empty(); ++i)
    if (pickable(heap_[i].s)) out.push_back(heap_[i].s);
}

}  // namespace sluice::lb

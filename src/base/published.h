#pragma once
// Immutable snapshots published to every thread without locks on the read side.
//
// A writer (serialized by its owner, e.g. Backend's writer mutex) builds a new object and
// swaps it in with one atomic exchange. Readers protect the pointer they use with a hazard
// pointer: one cache-line-sized slot per thread, written before use and re-validated, so a
// read costs two stores and two loads on memory the thread owns, and no shared counter
// bounces between cores. The old object goes to a retire list; each later publish (and the
// destructor) frees every retired object that no thread's slot names any more. Memory is
// thus bounded by (live snapshot + snapshots still being read), not by the number of
// changes, which matters for slow start and flapping health checks.
//
// One slot per thread and domain: a thread holds at most one Guard of a domain at a time.
// Users whose reads may nest pick different domains (the balance algorithms read theirs while
// a rule reads a map's; a backend's persistence cookies have their own). Slots are claimed on
// a thread's first read and given back when the thread exits.
#include <atomic>
#include <cstdint>
#include <cstddef>
#include <memory>
#include <vector>

namespace sluice::base {

namespace hazard {
struct alignas(64) Slot {
  std::atomic<const void*> ptr{nullptr};
  std::atomic<bool> owned{false};
};
// Who reads snapshots; a domain's slots are separate from another's.
enum class Domain : uint8_t { kBalance, kPatterns, kCookies };
inline constexpr int kDomains = 3;
// The slot of a thread that has none yet (claimed, and given back when the thread exits).
Slot& claim_slot(Domain d);
// The calling thread's slots, once claimed: read inline on every snapshot read.
inline thread_local Slot* t_slots[kDomains] = {};
// The calling thread's slot in domain `d`. Any thread.
inline Slot& my_slot(Domain d) {
  Slot* s = t_slots[static_cast<int>(d)];
  if (s) [[likely]] return *s;
  return claim_slot(d);
}
// True if some thread's slot of domain `d` holds `p`. Writer side.
bool in_use(Domain d, const void* p);
}  // namespace hazard

template <class T>
class Published {
 public:
  class Guard {
   public:
    Guard(const T* p, hazard::Slot* s) : p_(p), s_(s) {}
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    ~Guard() { s_->ptr.store(nullptr, std::memory_order_release); }
    const T* get() const { return p_; }
    const T* operator->() const { return p_; }
    const T& operator*() const { return *p_; }

   private:
    const T* p_;
    hazard::Slot* s_;
  };

  explicit Published(std::unique_ptr<T> first, hazard::Domain d = hazard::Domain::kBalance)
      : cur_(first.release()), domain_(d) {}
  Published(const Published&) = delete;
  Published& operator=(const Published&) = delete;
  ~Published() {
    delete cur_.load(std::memory_order_acquire);
    for (const T* r : retired_) delete r;
  }

  // The current snapshot, valid while the Guard lives. Any thread.
  Guard read() const {
    hazard::Slot& s = hazard::my_slot(domain_);
    const T* p = cur_.load(std::memory_order_acquire);
    for (;;) {
      s.ptr.store(p, std::memory_order_seq_cst);
      const T* q = cur_.load(std::memory_order_seq_cst);
      if (q == p) return Guard(p, &s);
      p = q;
    }
  }

  // Replaces the snapshot. Writer side (serialized by the owner).
  void publish(std::unique_ptr<T> next) {
    const T* old = cur_.exchange(next.release(), std::memory_order_seq_cst);
    retired_.push_back(old);
    reclaim();
  }

  std::size_t retired_count() const { return retired_.size(); }   // tests

 private:
  void reclaim() {
    std::vector<const T*> keep;
    for (const T* r : retired_) {
      if (hazard::in_use(domain_, r)) keep.push_back(r);
      else delete r;
    }
    retired_.swap(keep);
  }

  std::atomic<const T*> cur_;
  hazard::Domain domain_;
  std::vector<const T*> retired_;   // writer side only
};

}  // namespace sluice::base

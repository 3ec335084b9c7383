#pragma once
// A per-thread cache of freed memory blocks of one size, for objects made and destroyed at
// connection rate (H1Connection): taking a cached block is a pointer pop, with no allocator
// call. glibc's own thread cache stops at 1,032-byte blocks; above it every accept paid about
// 200 instructions in malloc's bins. Bounded: at most `kKeep` blocks stay cached per thread,
// and they go back to the allocator when the thread ends. A block freed on another thread
// than the one that made it joins that thread's cache, which is still correct.
//
// Under AddressSanitizer nothing is cached, so that a use after free is still reported.
#include <cstddef>
#include <new>

namespace sluice::core {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr std::size_t kBlockCacheKeep = 0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr std::size_t kBlockCacheKeep = 0;
#else
inline constexpr std::size_t kBlockCacheKeep = 128;
#endif
#else
inline constexpr std::size_t kBlockCacheKeep = 128;
#endif

template <std::size_t kSize>
class BlockCache {
 public:
  static void* take() {
    List& l = list();
    if (Node* n = l.head) {
      l.head = n->next;
      --l.count;
      return n;
    }
    return ::operator new(kSize);
  }
  static void give(void* p) noexcept {
    List& l = list();
    if (l.count < kBlockCacheKeep) {
      Node* n = static_cast<Node*>(p);
      n->next = l.head;
      l.head = n;
      ++l.count;
      return;
    }
    ::operator delete(p);
  }
  static std::size_t cached() { return list().count; }

 private:
  static_assert(kSize >= sizeof(void*));
  struct Node {
    Node* next;
  };
  struct List {
    Node* head = nullptr;
    std::size_t count = 0;
    ~List() {
      while (Node* n = head) {
        head = n->next;
        ::operator delete(n);
      }
    }
  };
  static List& list() {
    thread_local List l;
    return l;
  }
};

}  // namespace sluice::core

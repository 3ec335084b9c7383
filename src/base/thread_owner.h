#pragma once
// The thread that owns a worker-local object, for the debug-build checks that worker-local
// methods run there (EventLoop::assert_in_loop_thread, the loop's TimerWheel, BufferPool).
// An owner that no thread holds lets every thread through: objects are built on the main
// thread and handed to their worker, and are torn down after the worker has been joined.
#include <atomic>
#include "base/source_location.h"
#include <thread>

namespace sluice::base {

class ThreadOwner {
 public:
  // Makes the calling thread the owner and returns the previous one (a default id: none).
  // Any thread (the caller is taking the object over).
  std::thread::id bind_current() {
    return id_.exchange(std::this_thread::get_id(), std::memory_order_relaxed);
  }
  // Makes the calling thread the owner unless a thread already is. Any thread.
  void bind_if_unbound() {
    std::thread::id none;
    id_.compare_exchange_strong(none, std::this_thread::get_id(), std::memory_order_relaxed);
  }
  // Sets the owner back to `prev` (what bind_current() returned). Any thread.
  void restore(std::thread::id prev) { id_.store(prev, std::memory_order_relaxed); }

  // The owning thread, or a default id when none. Any thread.
  std::thread::id owner() const { return id_.load(std::memory_order_relaxed); }
  // True on the owning thread, and on every thread while none owns the object. Any thread.
  bool allows_current() const {
    std::thread::id id = owner();
    return id == std::thread::id() || id == std::this_thread::get_id();
  }
  // Aborts with a message naming `what` and the function `where` unless allows_current().
  // Any thread. Callers compile it out of release builds (see EventLoop::assert_in_loop_thread).
  void check(const char* what, const SourceLocation& where) const {
    if (!allows_current()) violated(what, where);
  }

 private:
  [[noreturn]] void violated(const char* what, const SourceLocation& where) const;

  std::atomic<std::thread::id> id_{};
};

}  // namespace sluice::base

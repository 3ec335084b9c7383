#pragma once
// One epoll event loop per worker thread. Proxy code asks the loop to watch descriptors and
// arm timers; it never calls epoll itself, so a second backend (io_uring) can replace this.
#include <sys/epoll.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include "base/source_location.h"
#include <vector>

#include "base/clock.h"
#include "base/thread_owner.h"
#include "core/timer_wheel.h"

namespace sluice::core {

class IoHandler {
 public:
  // `events` is the epoll event mask. Called on the loop's thread.
  virtual void on_io(uint32_t events) = 0;

 protected:
  ~IoHandler() = default;
};

// Objects whose memory must outlive the current batch of events (a handler closed while an
// event for it is still queued in the same epoll_wait batch) are released through defer_free.
class Deferred {
 public:
  virtual ~Deferred() = default;
};

// Thread rule. The thread inside run() (or run_once()) owns the loop, and its worker-local
// methods (those of its TimerWheel too) check it in debug builds through
// assert_in_loop_thread(). Outside run() no thread owns it and the caller keeps to one thread at a time: the main thread builds the
// loop, the worker registers its descriptors before run(), and what is torn down after the
// worker has been joined happens on the main thread.
class EventLoop {
 public:
  // Reads the monotonic clock. Any thread (see the thread rule).
  EventLoop();
  // Reads `clock` instead, once per iteration and in update_now() (its timers follow it):
  // tests drive timeouts with a manual clock. Any thread.
  explicit EventLoop(base::ClockSource clock);
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Registration. Worker-local. Return false with errno set on failure.
  bool add(int fd, uint32_t events, IoHandler* handler);
  bool modify(int fd, uint32_t events, IoHandler* handler);
  void remove(int fd);

  // The time cached when the loop last woke up (the loop's clock, monotonic unless one was
  // given). Worker-local.
  uint64_t now_ms() const {
    assert_in_loop_thread();
    return now_ms_;
  }
  // Reads the clock into now_ms(). Worker-local.
  void update_now();
  // The loop's timers. Worker-local (and so is every method of the wheel).
  TimerWheel& timers() {
    assert_in_loop_thread();
    return timers_;
  }

  // Destroys `obj` after the current batch of events. Worker-local.
  void defer_free(Deferred* obj) {
    assert_in_loop_thread();
    deferred_.push_back(obj);
  }

  // Destroys what defer_free() queued, now. Worker-local (used when a loop shuts down).
  void free_deferred_now() {
    assert_in_loop_thread();
    free_deferred();
  }

  // Runs until stop() is called. Worker-local (the thread that runs it owns the loop).
  void run();
  // Whether run() is running (or run_once() ran and no stop() came). Worker-local.
  bool is_running() const {
    assert_in_loop_thread();
    return running_;
  }
  // One turn of run() on the calling thread, which owns the loop meanwhile: waits for events
  // at most `max_wait_ms` (-1: until an event or the next timer, as run() does; 0: no wait),
  // dispatches them and fires the timers due. Marks the loop running; returns false when
  // stop() was called during the turn. For tests that drive a loop step by step
  // (tests/support/cpp/loop_runner.h); workers use run(). Worker-local.
  bool run_once(int max_wait_ms = -1);

  // Stops run() after the current iteration. Worker-local; from elsewhere, post() it.
  void stop() {
    assert_in_loop_thread();
    running_ = false;
  }

  // Debug builds: aborts, naming the calling function, when a thread other than the one in
  // run() or run_once() calls (see the thread rule above). Release builds: nothing. Any thread.
  void assert_in_loop_thread(
      const base::SourceLocation& where = base::SourceLocation::current()) const {
#ifndef NDEBUG
    owner_.check("core::EventLoop", where);
#endif
  }

  // Queues `fn` to run on the loop's thread and wakes it. Any thread. Control plane only
  // (stop, soft stop, resume, CLI queries): it takes a mutex. Returns false, and drops `fn`,
  // once run() has returned: a caller waiting for an answer (`show sess` gathers from every
  // worker) must not wait for a loop that already ended its soft stop.
  bool post(std::function<void()> fn);

  // Work that epoll cannot see (a lock-free hand-off queue filled by other threads):
  // `has_pending` is checked just before sleeping (a true answer makes the loop poll without
  // blocking) and `after_poll` runs after every batch of events. Worker-local, set before run().
  void set_pending_work(std::function<bool()> has_pending, std::function<void()> after_poll) {
    assert_in_loop_thread();
    has_pending_ = std::move(has_pending);
    after_poll_ = std::move(after_poll);
  }
  // Wakes the loop if it is blocked in epoll_wait (or about to be). Any thread. The caller
  // publishes its work first; the loop announces that it sleeps before its last check for
  // work; with a full fence on both sides at least one of them sees the other, so the
  // eventfd write (a system call) is only paid when the loop really sleeps.
  void wake_if_sleeping();

  // Counters read by `show activity`. Written by the loop, read by any thread.
  std::atomic<uint64_t> loops{0};
  std::atomic<uint64_t> poll_io{0};
  std::atomic<uint64_t> wake_signal{0};

 private:
  class WakeHandler : public IoHandler {
   public:
    explicit WakeHandler(EventLoop* loop) : loop_(loop) {}
    void on_io(uint32_t events) override;

   private:
    EventLoop* loop_;
  };

  // One turn of run(): wait for events (or the next timer, or at most `max_wait_ms` unless
  // negative), dispatch them, fire what is due.
  void iterate(int max_wait_ms);
  void run_posted();
  void free_deferred();

  base::ThreadOwner owner_;   // the thread in run(); none outside it
  int epfd_ = -1;
  int wakefd_ = -1;
  std::atomic<bool> sleeping_{false};
  std::function<bool()> has_pending_;
  std::function<void()> after_poll_;
  bool running_ = false;
  base::ClockSource clock_;
  uint64_t now_ms_ = 0;
  TimerWheel timers_;
  WakeHandler wake_handler_{this};
  std::vector<Deferred*> deferred_;
  std::vector<Deferred*> freeing_;   // the batch being freed (both keep their capacity)
  std::mutex posted_mu_;
  std::vector<std::function<void()>> posted_;
  bool finished_ = false;   // run() returned; guarded by posted_mu_
};

}  // namespace sluice::core

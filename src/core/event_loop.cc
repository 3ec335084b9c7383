#include "core/event_loop.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "base/assert.h"
#include "base/clock.h"

namespace sluice::core {

namespace {
constexpr int kMaxEvents = 256;
}

EventLoop::EventLoop() : EventLoop(base::ClockSource{}) {}

EventLoop::EventLoop(base::ClockSource clock)
    : clock_(clock), now_ms_(clock_.now_ms()), timers_(now_ms_, &owner_) {
  epfd_ = epoll_create1(EPOLL_CLOEXEC);
  SLUICE_CHECK(epfd_ >= 0);
  wakefd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  SLUICE_CHECK(wakefd_ >= 0);
  SLUICE_CHECK(add(wakefd_, EPOLLIN, &wake_handler_));
}

EventLoop::~EventLoop() {
  free_deferred();
  if (wakefd_ >= 0) close(wakefd_);
  if (epfd_ >= 0) close(epfd_);
}

bool EventLoop::add(int fd, uint32_t events, IoHandler* handler) {
  assert_in_loop_thread();
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = handler;
  return epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) == 0;
}

bool EventLoop::modify(int fd, uint32_t events, IoHandler* handler) {
  assert_in_loop_thread();
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = handler;
  return epoll_ctl(epfd_, EPOLL_CTL_MOD, fd, &ev) == 0;
}

void EventLoop::remove(int fd) {
  assert_in_loop_thread();
  epoll_event ev{};
  epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, &ev);
}

void EventLoop::update_now() {
  assert_in_loop_thread();
  now_ms_ = clock_.now_ms();
}

bool EventLoop::post(std::function<void()> fn) {
  {
    std::lock_guard lock(posted_mu_);
    if (finished_) return false;
    posted_.push_back(std::move(fn));
  }
  uint64_t one = 1;
  // EAGAIN means the counter is already non-zero: the loop will wake anyway.
  [[maybe_unused]] ssize_t n = write(wakefd_, &one, sizeof one);
  return true;
}

void EventLoop::wake_if_sleeping() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!sleeping_.load(std::memory_order_relaxed)) return;
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wakefd_, &one, sizeof one);
}

void EventLoop::WakeHandler::on_io(uint32_t) {
  uint64_t value;
  while (read(loop_->wakefd_, &value, sizeof value) > 0) {
  }
  loop_->wake_signal.store(loop_->wake_signal.load(std::memory_order_relaxed) + 1,
                           std::memory_order_relaxed);
  loop_->run_posted();
}

void EventLoop::run_posted() {
  std::vector<std::function<void()>> batch;
  {
    std::lock_guard lock(posted_mu_);
    batch.swap(posted_);
  }
  for (auto& fn : batch) fn();
}

void EventLoop::free_deferred() {
  // Deleting may defer more objects; loop until stable.
  while (!deferred_.empty()) {
    freeing_.swap(deferred_);
    for (Deferred* d : freeing_) delete d;
    freeing_.clear();
  }
}

void EventLoop::iterate(int max_wait_ms) {
  epoll_event events[kMaxEvents];
  int64_t timeout = timers_.next_timeout_ms(now_ms_);
  if (max_wait_ms >= 0 && (timeout < 0 || timeout > max_wait_ms)) timeout = max_wait_ms;
  sleeping_.store(true, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (has_pending_ && has_pending_()) timeout = 0;
  int n = epoll_wait(epfd_, events, kMaxEvents, timeout < 0 ? -1 : static_cast<int>(timeout));
  sleeping_.store(false, std::memory_order_relaxed);
  update_now();
  loops.store(loops.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (n < 0) {
    SLUICE_CHECK(errno == EINTR);
    return;
  }
  if (n > 0)
    poll_io.store(poll_io.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) {
    static_cast<IoHandler*>(events[i].data.ptr)->on_io(events[i].events);
  }
  if (after_poll_) after_poll_();
  free_deferred();
  timers_.advance(now_ms_);
  free_deferred();
}

void EventLoop::run() {
  // The thread rule: this thread owns the loop until run() returns (see the header).
  std::thread::id previous = owner_.bind_current();
  running_ = true;
  while (running_) iterate(-1);
  // Run what was posted before the stop so nothing posted is lost (e.g. close requests);
  // later posts are refused, so that their callers know nobody will run them.
  {
    std::lock_guard lock(posted_mu_);
    finished_ = true;
  }
  run_posted();
  free_deferred();
  owner_.restore(previous);
}

bool EventLoop::run_once(int max_wait_ms) {
  std::thread::id previous = owner_.bind_current();
  running_ = true;
  iterate(max_wait_ms);
  owner_.restore(previous);
  return running_;
}

}  // namespace sluice::core

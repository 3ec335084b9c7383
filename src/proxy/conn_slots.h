#pragma once
// The connection slots a client connection holds from before its accept() to its close: one of
// the process's `maxconn`, one of its frontend's, one of its bind line's. Taken together or not
// at all, given back together by one owner: the accept path until a session exists, then the
// session (Worker::session_closed), or a hand-off in between.
#include <utility>

namespace sluice::proxy {

class Process;
struct Listener;

class ConnSlots {
 public:
  // Which limit refused the connection (take() returned an empty token).
  enum class Refused { kNone, kGlobal, kFrontend, kBindLine };

  ConnSlots() = default;
  ConnSlots(const ConnSlots&) = delete;
  ConnSlots& operator=(const ConnSlots&) = delete;
  ConnSlots(ConnSlots&& o) noexcept : p_(std::exchange(o.p_, nullptr)), l_(std::exchange(o.l_, nullptr)) {}
  ConnSlots& operator=(ConnSlots&& o) noexcept {
    if (this != &o) {
      release();
      p_ = std::exchange(o.p_, nullptr);
      l_ = std::exchange(o.l_, nullptr);
    }
    return *this;
  }
  ~ConnSlots() { release(); }

  // Any thread. The global, frontend and bind-line slots for one connection on `l`, taken in
  // that order; when one is full, those already taken go back and `*refused` names it.
  static ConnSlots take(Process& p, Listener& l, Refused* refused);

  bool held() const { return p_ != nullptr; }

  // Gives the slots back, then wakes the workers that paused a listener on a limit
  // (Process::slot_freed). Any thread; idempotent, and what the destructor does.
  void release();

 private:
  ConnSlots(Process* p, Listener* l) : p_(p), l_(l) {}
  Process* p_ = nullptr;
  Listener* l_ = nullptr;
};

}  // namespace sluice::proxy

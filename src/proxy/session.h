#pragma once
// What a worker knows of a client connection it runs, TCP or HTTP. Worker-local from accept to
// close; the worker keeps them in one list (soft stop, hard stop, shutdown-sessions) and queues
// them when every server is at its maxconn.
#include <cstddef>

#include "core/event_loop.h"
#include "core/timer_wheel.h"

namespace sluice::lb {
class Server;
}

namespace sluice::proxy {

class Session : public core::Deferred, public core::TimerHandler {
 public:
  ~Session() override = default;
  virtual void start() = 0;
  // Closes both sides at once (hard stop, hard-stop-after, shutdown-sessions).
  virtual void abort(const char* reason) = 0;
  // Waiting in the backend queue: tries to take a server slot now. Returns false if none was
  // free (the session stays queued).
  virtual bool retry_from_queue() = 0;
  // The session currently uses `srv` (connected or connecting to it).
  virtual bool uses_server(const lb::Server* srv) const = 0;
  // The process is stopping softly: an idle keep-alive connection closes now, a busy one after
  // its current response. TCP sessions drain as they are.
  virtual void on_soft_stop() {}
  // The worker's output batch is being flushed: send what the session held back while the
  // loop's events were handled (Worker::queue_flush).
  virtual void flush_sends() {}

  std::size_t slot = 0;         // position in the worker's session list
  std::size_t flush_slot = 0;   // position in the worker's flush list, when flush_queued
  bool flush_queued = false;
};

}  // namespace sluice::proxy

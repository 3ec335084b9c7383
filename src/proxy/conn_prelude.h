#pragma once
// What a connection goes through before its session exists (a PROXY protocol header to read,
// proxy/proxy_header.h; a TLS handshake, proxy/tls_handshake.h): it is listed among the
// worker's sessions (`show sess` shows it in state `state`), bounded by a timer, and either
// hands its socket to the next step or ends with it. Worker-local.
#include <cstdint>

#include "core/event_loop.h"
#include "core/timer_wheel.h"
#include "log/conn_error.h"
#include "net/address.h"
#include "proxy/session.h"

namespace sluice::proxy {

class Worker;

class ConnPrelude : public Session, public core::IoHandler {
 public:
  ConnPrelude(Worker& w, Listener& l, int fd, const net::SocketAddress& peer, const char* state);

  bool retry_from_queue() override { return false; }
  bool uses_server(const lb::Server*) const override { return false; }
  void describe(SessionInfo* info) const override;

 protected:
  // Ends without a session: the socket closed with a reset (`watched`: it leaves the loop
  // first), the listener's count given back, this object gone from the worker's list (freed
  // after the batch).
  void drop_socket(bool watched);
  // HAProxy's line for a connection that ended here (Worker::log_connection_error()).
  void log_failure(log::ConnError why);
  // The socket leaves this object (the timer cancelled, the loop told unless `keep_watched`):
  // the caller hands it on. This object is gone from the worker's list. With `keep_watched`
  // the loop still points at this object: the next owner must re-point it (watch() of a
  // transport given set_watched()) before the loop runs again.
  int release_socket(bool keep_watched = false);

  Worker& w_;
  Listener& l_;
  int fd_;
  net::SocketAddress peer_;
  uint64_t accept_ms_;
  uint64_t accept_wall_us_;
  core::Timer timer_{this};
  bool done_ = false;

 private:
  const char* state_;
};

}  // namespace sluice::proxy

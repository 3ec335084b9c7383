#pragma once
// What a worker knows of a client connection it runs, TCP or HTTP. Worker-local from accept to
// close; the worker keeps them in one list (soft stop, hard stop, shutdown-sessions) and queues
// them when every server is at its maxconn.
#include <cstddef>
#include <cstdint>

#include "core/event_loop.h"
#include "core/timer_wheel.h"
#include <memory>

#include "net/address.h"
#include "net/proxy_protocol.h"
#include "proxy/conn_slots.h"

namespace sluice::lb {
class Server;
}

struct ssl_st;

namespace sluice::proxy {

struct Listener;
struct Proxy;

// What `show sess` prints of a connection (cli-and-stats.md 5). Filled by its worker.
struct SessionInfo {
  const Listener* listener = nullptr;   // null for a CLI connection (frontend GLOBAL)
  const Proxy* backend = nullptr;       // null before one was chosen
  const lb::Server* server = nullptr;   // null when none is used now
  net::SocketAddress client;            // family AF_UNSPEC: a unix socket
  uint64_t accept_ms = 0;               // worker loop clock
  uint64_t expire_ms = 0;               // next timeout (loop clock), 0: none
  uint64_t bytes_in = 0;                // client -> server (CLI: commands read)
  uint64_t bytes_out = 0;               // server -> client
  uint32_t requests = 0;                // HTTP transactions started on this connection
  const char* state = "";               // short word: QUEUED, CON, EST, IDLE, CLOSING...
  int client_fd = -1;
  int server_fd = -1;
};

// Anything `show sess` lists and `shutdown session` can end: client sessions and the
// connections of special listeners (the CLI). Worker-local.
class Describable {
 public:
  virtual ~Describable() = default;
  virtual void describe(SessionInfo* info) const = 0;
  // Closes the connection at once (`shutdown session`).
  virtual void kill() = 0;
};

class Session : public core::Deferred, public core::TimerHandler, public Describable {
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
  // `shutdown session`: both sides closed at once, as for a hard stop.
  void kill() override { abort("shutdown session"); }
  // The connection began with the PROXY protocol header `h` (before start()): its destination
  // is the connection's local address (dst, %fi:%fp, mapped server ports) when it carries
  // addresses, and its TLVs answer the fc_pp_* fetches.
  virtual void adopt_proxy_header(std::shared_ptr<const net::pp::Header> h) {}
  // The connection's TLS handshake is done (bind ... ssl, proxy/tls_handshake.h): its bytes
  // are the TLS connection's from now on (before start()). The session owns it. The socket is
  // still in the loop, registered for the handshake: start() re-points it at the session.
  virtual void adopt_tls(ssl_st* s) {}

  ConnSlots slots;              // given back by Worker::session_closed()
  std::size_t slot = 0;         // position in the worker's session list
  std::size_t flush_slot = 0;   // position in the worker's flush list, when flush_queued
  bool flush_queued = false;
};

}  // namespace sluice::proxy

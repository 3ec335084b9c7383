#pragma once
// `bind ... ssl`: a connection of such a listener starts with a TLS handshake, run here on the
// worker that accepted it, before any session exists. Once it completes, the session begins
// with the TLS connection in its transport (net/tls.h), which decrypts and encrypts from then
// on. A handshake that fails, that the client closes, or that does not end within
// `timeout client` (a client that stalls, or speaks plain HTTP to a TLS port) closes the
// connection and is logged as HAProxy logs it ("<ci>:<cp> [<date>] <frontend>/<bind>: SSL
// handshake failure"). Worker-local.
#include <cstdint>
#include <memory>

#include "log/conn_error.h"
#include "net/address.h"
#include "net/proxy_protocol.h"
#include "net/tls.h"
#include "proxy/conn_prelude.h"

struct ssl_st;

namespace sluice::proxy {

class Worker;

class TlsHandshake final : public ConnPrelude {
 public:
  // `pp`: the PROXY header the connection began with (accept-proxy), or null.
  TlsHandshake(Worker& w, Listener& l, int fd, const net::SocketAddress& peer,
               std::shared_ptr<const net::pp::Header> pp);
  ~TlsHandshake() override;

  void start() override;
  void abort(const char* reason) override;

 private:
  void on_io(uint32_t events) override;
  void on_timer(core::Timer& t) override;
  void step();
  // Ends without a session: logged with `why` (HAProxy's fc_err), the socket closed
  // with a reset. fail() leaves the loop first.
  void fail(log::ConnError why);
  void fail_unwatched(log::ConnError why);
  void drop(bool watched);

  std::shared_ptr<const net::pp::Header> pp_;
  // The bind line's contexts as the handshake began (a commit may swap the line's slot).
  std::shared_ptr<const net::tls::ServerContext> ctx_;
  ssl_st* ssl_ = nullptr;
};

}  // namespace sluice::proxy

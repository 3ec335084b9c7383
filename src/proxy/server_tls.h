#pragma once
// The TLS handshake that opens a connection to a `server ... ssl` (net/tls.h's ClientContext),
// run by the H1 connection or TCP session that connects. It comes after the SOCKS4 proxy's
// answer when there is one, and after the PROXY header, which goes in clear before it (as
// HAProxy sends it). Once done, the connection's RawTransport carries the TLS connection, and
// nothing above it knows that the bytes are encrypted. `timeout connect` bounds it: the server
// is not connected before its handshake is done.
//
// Thread rule: worker-local, like the connection that owns it.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "net/tls.h"
#include "net/transport.h"
#include "proxy/backend_leg.h"
#include "proxy/settings.h"
#include "rules/rules.h"

namespace sluice::proxy {

class Worker;

class ServerTlsStart {
 public:
  enum class Step : uint8_t { kWantRead, kWantWrite, kDone, kFailed };
  // The TLS connection over `fd` to server `srv_global` with context `ctx`, sending `sni`
  // (empty: none) and resuming the worker's last session with that server; `preamble` (the
  // PROXY header, or empty) is written first. Null when OpenSSL cannot allocate it.
  static std::unique_ptr<ServerTlsStart> make(Worker& w, const net::tls::ClientContext& ctx,
                                              int srv_global, int fd, std::string_view sni,
                                              std::string preamble);
  ~ServerTlsStart();
  ServerTlsStart(const ServerTlsStart&) = delete;
  ServerTlsStart& operator=(const ServerTlsStart&) = delete;

  // Moves on as far as the socket allows. kDone: `io` carries the TLS connection now.
  // kFailed: error() says why (and the session kept for the server is dropped).
  Step advance(net::RawTransport& io);
  // Waiting for the server's bytes (else for room to write, or for the connect itself).
  bool wants_read() const { return want_read_; }
  const ConnectError& error() const { return err_; }

 private:
  ServerTlsStart() = default;
  Worker* w_ = nullptr;
  ssl_st* ssl_ = nullptr;
  net::tls::SessionSlot* slot_ = nullptr;
  std::string preamble_;
  bool want_read_ = false;
  ConnectError err_;
};

// The SNI of a server (`sni <expr>`, or sni-auto's Host) for a connection that opens now:
// false when there is none (no value, or the Host names an IP address, which an SNI may not
// carry: RFC 6066).
bool server_sni(const ProxySettings::ServerSni& sni, const rules::RequestView& view,
                std::string& out);
// sni-auto's name from a Host value: without its port, none for an IP address.
bool sni_of_host(std::string_view host, std::string& out);

}  // namespace sluice::proxy

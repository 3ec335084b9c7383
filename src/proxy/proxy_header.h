#pragma once
// `bind ... accept-proxy`: a connection of such a listener starts with a PROXY protocol header
// (net/proxy_protocol.h) that a load balancer in front sends. This waits for it on the worker
// that accepted the connection, reads exactly its bytes, and starts the real session with the
// addresses it carries (the client's becomes src, the destination dst, everywhere: rules,
// logs, forwardfor, balance source). A header that is not one, or does not come within
// `timeout client`, closes the connection and is logged as HAProxy logs it
// ("<ci>:<cp> [<date>] <frontend>/<bind>: <fc_err_str>"). Worker-local.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/event_loop.h"
#include "core/timer_wheel.h"
#include "lb/server.h"
#include "log/conn_error.h"
#include "net/address.h"
#include "net/proxy_protocol.h"

struct ssl_st;
#include "proxy/conn_prelude.h"
#include "proxy/settings.h"

namespace sluice::proxy {

class Worker;

// The header `send-proxy` (v1) or `send-proxy-v2` sends to `srv` for a client at `client`
// reaching `local` (null: asked of the kernel for `client_fd`), as the session sees them.
// The v2 header carries `tlvs` (the server's set-proxy-v2-tlv-fmt values, render_pp2_tlvs())
// and what `proxy-v2-options` asks: a CRC32C, the authority `received` carried (the PROXY
// header the client connection began with), the stream's unique id.
// With `ssl` options, the client connection's TLS facts (`client_tls`, null: a plain one).
std::string proxy_header_for(const lb::ServerSettings& srv, const net::SocketAddress& client,
                             const net::SocketAddress* local, int client_fd,
                             const net::pp::Header* received, std::string_view unique_id,
                             ssl_st* client_tls, std::vector<net::pp::Tlv> tlvs = {});

// The values of a server's `set-proxy-v2-tlv-fmt` formats for the stream `r` and `ctx`
// describe (the request after its rules, the backend and the server), appended to `out`.
void render_pp2_tlvs(const std::vector<ProxySettings::Pp2TlvFormat>& formats,
                     const log::Record& r, const sample::Ctx* ctx,
                     std::vector<net::pp::Tlv>* out);

class ProxyHeaderWait final : public ConnPrelude {
 public:
  ProxyHeaderWait(Worker& w, Listener& l, int fd, const net::SocketAddress& peer);
  ~ProxyHeaderWait() override;

  void start() override;
  void abort(const char* reason) override;

 private:
  void on_io(uint32_t events) override;
  void on_timer(core::Timer& t) override;
  // Reads what has arrived; hands the connection on once the header is complete.
  // `hup`: the peer has closed (what has arrived is all there will be).
  void try_read(bool hup);
  // Ends without a session: logged with `why` (HAProxy's fc_err), the socket closed.
  void fail(log::ConnError why);
};

}  // namespace sluice::proxy

#include "proxy/server_tls.h"

#include <arpa/inet.h>

#include <cerrno>

#include "proxy/balance_key.h"
#include "proxy/worker.h"

namespace sluice::proxy {

std::unique_ptr<ServerTlsStart> ServerTlsStart::make(Worker& w, const net::tls::ClientContext& ctx,
                                                     int srv_global, int fd, std::string_view sni,
                                                     std::string preamble) {
  std::unique_ptr<ServerTlsStart> t(new ServerTlsStart);
  t->w_ = &w;
  t->slot_ = ctx.options().reuse ? w.tls_session(srv_global) : nullptr;
  t->ssl_ = ctx.new_conn(fd, sni, t->slot_);
  if (!t->ssl_) return nullptr;
  t->preamble_ = std::move(preamble);
  return t;
}

ServerTlsStart::~ServerTlsStart() {
  if (ssl_) net::tls::free(ssl_);
}

ServerTlsStart::Step ServerTlsStart::advance(net::RawTransport& io) {
  if (!preamble_.empty()) {
    // The PROXY header, in clear: the TLS connection is not the transport's yet.
    const net::IoResult r = io.send(preamble_.data(), preamble_.size(), false);
    if (r.status == net::IoStatus::kOk) preamble_.erase(0, r.n);
    if (r.status == net::IoStatus::kError) {
      err_ = ConnectError::server(r.err);
      return Step::kFailed;
    }
    if (!preamble_.empty()) {
      want_read_ = false;
      return Step::kWantWrite;
    }
  }
  const net::tls::Step s = net::tls::handshake(ssl_);
  switch (s) {
    case net::tls::Step::kDone:
      if (!net::tls::session_reused(ssl_)) w_->tls_rates().be_keys.add(w_->loop().now_ms());
      io.set_tls(ssl_);
      ssl_ = nullptr;
      return Step::kDone;
    case net::tls::Step::kWantRead:
      want_read_ = true;
      return Step::kWantRead;
    case net::tls::Step::kWantWrite:
      want_read_ = false;
      return Step::kWantWrite;
    case net::tls::Step::kClosed:
      err_ = ConnectError::tls(log::ConnError::kSslEmpty, ECONNRESET);
      break;
    case net::tls::Step::kFailed:
      // A socket error (errno set), or the protocol's (a certificate that does not verify, no
      // common version or cipher).
      err_ = errno ? ConnectError::tls(log::ConnError::kSslAbort, errno)
                   : ConnectError::tls(log::ConnError::kSslHandshake, EPROTO);
      break;
  }
  // A session that led here is not offered again.
  if (slot_) slot_->clear();
  return Step::kFailed;
}

bool server_sni(const ProxySettings::ServerSni& sni, const rules::RequestView& view,
                std::string& out) {
  if (!expr_key(*sni.expr, view, out)) out.clear();
  if (sni.from_host) return sni_of_host(std::string(out), out);
  return !out.empty();
}

bool sni_of_host(std::string_view host, std::string& out) {
  // An IPv6 literal ("[::1]:80") or an IPv4 one is no SNI (RFC 6066).
  if (host.empty() || host.front() == '[') {
    out.clear();
    return false;
  }
  out.assign(host.substr(0, host.find(':')));
  in_addr a{};
  if (inet_pton(AF_INET, out.c_str(), &a) == 1) out.clear();
  return !out.empty();
}

}  // namespace sluice::proxy

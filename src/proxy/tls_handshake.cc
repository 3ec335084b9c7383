#include "proxy/tls_handshake.h"

#include <sys/epoll.h>

#include <cerrno>
#include <string>

#include "base/clock.h"
#include "log/line.h"
#include "net/socket.h"
#include "net/cert_store.h"
#include "net/tls.h"
#include "proxy/worker.h"

namespace sluice::proxy {

TlsHandshake::TlsHandshake(Worker& w, Listener& l, int fd, const net::SocketAddress& peer,
                           std::shared_ptr<const net::pp::Header> pp)
    : ConnPrelude(w, l, fd, peer, "SSL"), pp_(std::move(pp)) {}

TlsHandshake::~TlsHandshake() {
  if (ssl_) net::tls::free(ssl_);
}

void TlsHandshake::start() {
  ctx_ = l_.line->settings.tls->get();
  ssl_ = ctx_->new_conn(fd_);
  w_.tls_rates().conns.add(w_.loop().now_ms());
  if (!ssl_) {
    done_ = true;
    fail_unwatched(log::ConnError::kSslNoMem);
    return;
  }
  if (!w_.loop().add(fd_, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, this)) {
    w_.fe_counters(l_.proxy->index).eint.add();
    done_ = true;
    drop(false);
    return;
  }
  // `timeout client` bounds the handshake, as in HAProxy.
  if (uint32_t t = l_.proxy->settings.timeouts.client)
    w_.loop().timers().arm(timer_, accept_ms_ + t);
  step();   // the client hello usually came with the connection
}

void TlsHandshake::on_io(uint32_t) {
  if (!done_) step();
}

void TlsHandshake::on_timer(core::Timer&) {
  if (!done_) fail(log::ConnError::kSslTimeout);
}

void TlsHandshake::step() {
  switch (net::tls::handshake(ssl_)) {
    case net::tls::Step::kWantRead:
    case net::tls::Step::kWantWrite:
      return;   // edge-triggered on both directions: the next event calls again
    case net::tls::Step::kClosed:
      fail(log::ConnError::kSslEmpty);
      return;
    case net::tls::Step::kFailed: {
      if (errno != 0) {
        fail(log::ConnError::kSslAbort);
        return;
      }
      // A client certificate that `verify required` refused is the CA's or the certificate's
      // failure, as HAProxy names them; anything else a handshake failure.
      const long v = net::tls::verify_result(ssl_);
      fail(v == 0 ? log::ConnError::kSslHandshake
           : (v == 20 || v == 21 || v == 2 || v == 19 || v == 24)   // issuer, chain, depth
               ? log::ConnError::kSslCaFail
               : log::ConnError::kSslCrtFail);
      return;
    }
    case net::tls::Step::kDone:
      break;
  }
  if (!net::tls::session_reused(ssl_)) w_.tls_rates().fe_keys.add(w_.loop().now_ms());
  else if (net::tls::resumed_by_ticket(ssl_)) w_.tls_rates().ticket_resumptions.add();
  ssl_st* ssl = ssl_;
  ssl_ = nullptr;
  ConnSlots s = std::move(slots);
  Listener& l = l_;
  Worker& w = w_;
  const net::SocketAddress peer = peer_;
  auto pp = std::move(pp_);
  // The session's transport re-points the loop's registration at itself as it starts
  // (Session::adopt_tls()), in this call.
  const int fd = release_socket(/*keep_watched=*/true);
  w.begin_tls_session(l, fd, peer, ssl, std::move(pp), std::move(s));
}

void TlsHandshake::fail(log::ConnError why) {
  if (done_ && fd_ < 0) return;
  done_ = true;
  w_.loop().timers().cancel(timer_);
  w_.loop().remove(fd_);
  fail_unwatched(why);
}

void TlsHandshake::fail_unwatched(log::ConnError why) {
  log_failure(why);
  drop(false);
}

void TlsHandshake::abort(const char*) {
  if (done_) return;
  done_ = true;
  w_.loop().timers().cancel(timer_);
  w_.loop().remove(fd_);
  drop(false);
}

void TlsHandshake::drop(bool watched) {
  if (ssl_) {
    net::tls::free(ssl_);
    ssl_ = nullptr;
  }
  drop_socket(watched);
}

}  // namespace sluice::proxy

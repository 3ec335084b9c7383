#include "net/transport.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "net/socket.h"
#include "net/tls.h"

namespace sluice::net {

bool watch_listener(core::EventLoop& loop, int fd, core::IoHandler* h, bool exclusive) {
  return loop.add(fd, exclusive ? EPOLLIN | EPOLLEXCLUSIVE : EPOLLIN, h);
}

bool RawTransport::input_pending() {
  if (tls_ && tls::pending(tls_)) return true;
  char byte;
  return fd_ >= 0 && ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

IoResult RawTransport::tls_recv(char* dst, std::size_t room) { return tls::recv(tls_, dst, room); }
IoResult RawTransport::tls_send(const char* src, std::size_t len) { return tls::send(tls_, src, len); }
IoResult RawTransport::tls_sendv(const iovec* parts, int n) { return tls::sendv(tls_, parts, n); }
void RawTransport::tls_close_notify() { tls::shutdown(tls_); }
void RawTransport::drop_tls() {
  tls::free(tls_);
  tls_ = nullptr;
}

int RawTransport::connect_error() { return pending_socket_error(fd_); }

void RawTransport::close_slow(CloseMode mode) {
  switch (mode) {
    case CloseMode::kFin:
      ::close(fd_);
      break;
    case CloseMode::kPushedFin:
      // Bytes sent with MSG_MORE leave with the FIN; close() alone would reset the connection
      // when unread input is left, and drop them.
      if (held_) ::shutdown(fd_, SHUT_WR);
      ::close(fd_);
      break;
    case CloseMode::kPushReset:
      if (held_) {
        // TCP_NODELAY pushes what MSG_MORE held back, without a FIN: after a FIN a quick
        // peer's own FIN could leave this side in TIME_WAIT, which a reset is there to avoid.
        int one = 1;
        setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      }
      close_with_reset(fd_);
      break;
    case CloseMode::kReset:
      close_with_reset(fd_);
      break;
  }
}

}  // namespace sluice::net

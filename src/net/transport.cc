#include "net/transport.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "net/socket.h"

namespace sluice::net {

bool watch_listener(core::EventLoop& loop, int fd, core::IoHandler* h, bool exclusive) {
  return loop.add(fd, exclusive ? EPOLLIN | EPOLLEXCLUSIVE : EPOLLIN, h);
}

void RawTransport::adopt(int fd) {
  close(CloseMode::kFin);
  fd_ = fd;
  held_ = false;
}

bool RawTransport::watch(core::EventLoop& loop, core::IoHandler* h) {
  // Edge-triggered, both directions, registered once and never modified: the owner remembers
  // readiness itself and stops calling recv/send at EAGAIN.
  return loop.add(fd_, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, h);
}

void RawTransport::shutdown_write() {
  if (fd_ < 0) return;
  ::shutdown(fd_, SHUT_WR);
  held_ = false;
}

bool RawTransport::input_pending() {
  char byte;
  return fd_ >= 0 && ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

int RawTransport::connect_error() { return pending_socket_error(fd_); }

void RawTransport::close(CloseMode mode) {
  if (fd_ < 0) return;
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
  fd_ = -1;
  held_ = false;
}

}  // namespace sluice::net

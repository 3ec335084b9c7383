#include "support/cpp/socket_pair.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace sluice::test {

namespace {

void close_fd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

SocketPair failed(int err, int fd1 = -1, int fd2 = -1) {
  if (fd1 >= 0) close(fd1);
  if (fd2 >= 0) close(fd2);
  SocketPair p;
  p.error = err;
  return p;
}

}  // namespace

SocketPair::SocketPair(SocketPair&& other) noexcept
    : a(std::exchange(other.a, -1)), b(std::exchange(other.b, -1)), error(other.error) {}

SocketPair& SocketPair::operator=(SocketPair&& other) noexcept {
  if (this != &other) {
    close_a();
    close_b();
    a = std::exchange(other.a, -1);
    b = std::exchange(other.b, -1);
    error = other.error;
  }
  return *this;
}

SocketPair::~SocketPair() {
  close_a();
  close_b();
}

void SocketPair::close_a() { close_fd(&a); }
void SocketPair::close_b() { close_fd(&b); }

SocketPair unix_stream_pair() {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0)
    return failed(errno);
  SocketPair p;
  p.a = fds[0];
  p.b = fds[1];
  return p;
}

SocketPair tcp_loopback_pair() {
  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (lfd < 0) return failed(errno);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;   // ephemeral
  socklen_t len = sizeof addr;
  if (bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(lfd, 1) != 0 ||
      getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return failed(errno, lfd);
  // Blocking connect: on loopback the handshake completes within the call, against the backlog.
  int cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (cfd < 0) return failed(errno, lfd);
  if (connect(cfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return failed(errno, lfd, cfd);
  int sfd = accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (sfd < 0) return failed(errno, lfd, cfd);
  close(lfd);
  int flags = fcntl(cfd, F_GETFL);
  int one = 1;
  if (flags < 0 || fcntl(cfd, F_SETFL, flags | O_NONBLOCK) != 0 ||
      setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
      setsockopt(sfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
    return failed(errno, cfd, sfd);
  SocketPair p;
  p.a = cfd;
  p.b = sfd;
  return p;
}

}  // namespace sluice::test

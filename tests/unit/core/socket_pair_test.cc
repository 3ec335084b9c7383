#include "support/cpp/socket_pair.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace sluice::test {
namespace {

// Both ends: connected both ways, non-blocking, close-on-exec; closing one is EOF on the other.
void expect_connected_nonblocking(SocketPair& p) {
  ASSERT_TRUE(p.ok()) << std::strerror(p.error);
  for (int fd : {p.a, p.b}) {
    EXPECT_TRUE(fcntl(fd, F_GETFL) & O_NONBLOCK);
    EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
  }
  char buf[16];
  EXPECT_EQ(read(p.b, buf, sizeof buf), -1);
  EXPECT_EQ(errno, EAGAIN) << "an empty non-blocking socket";
  ASSERT_EQ(write(p.a, "ping", 4), 4);
  ASSERT_EQ(write(p.b, "pong!", 5), 5);
  // Loopback and AF_UNIX deliver within the write: no wait needed.
  EXPECT_EQ(read(p.b, buf, sizeof buf), 4);
  EXPECT_EQ(std::memcmp(buf, "ping", 4), 0);
  EXPECT_EQ(read(p.a, buf, sizeof buf), 5);
  EXPECT_EQ(std::memcmp(buf, "pong!", 5), 0);
  p.close_a();
  p.close_a();   // idempotent
  EXPECT_EQ(p.a, -1);
  EXPECT_EQ(read(p.b, buf, sizeof buf), 0);
}

TEST(SocketPair, UnixStream) {
  SocketPair p = unix_stream_pair();
  expect_connected_nonblocking(p);
  int type = 0;
  socklen_t len = sizeof type;
  ASSERT_EQ(getsockopt(p.b, SOL_SOCKET, SO_TYPE, &type, &len), 0);
  EXPECT_EQ(type, SOCK_STREAM);
}

TEST(SocketPair, TcpLoopbackOnAnEphemeralPort) {
  SocketPair p = tcp_loopback_pair();
  ASSERT_TRUE(p.ok()) << std::strerror(p.error);
  sockaddr_in local{}, peer{};
  socklen_t len = sizeof local;
  ASSERT_EQ(getsockname(p.b, reinterpret_cast<sockaddr*>(&local), &len), 0);
  len = sizeof peer;
  ASSERT_EQ(getpeername(p.a, reinterpret_cast<sockaddr*>(&peer), &len), 0);
  EXPECT_EQ(local.sin_family, AF_INET);
  EXPECT_EQ(ntohl(local.sin_addr.s_addr), INADDR_LOOPBACK);
  EXPECT_NE(local.sin_port, 0);
  EXPECT_EQ(local.sin_port, peer.sin_port) << "a is connected to b";
  for (int fd : {p.a, p.b}) {
    int nodelay = 0;
    len = sizeof nodelay;
    ASSERT_EQ(getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, &len), 0);
    EXPECT_NE(nodelay, 0);
  }
  expect_connected_nonblocking(p);
}

TEST(SocketPair, MovesOwnershipAndClosesOnDestruction) {
  int a, b;
  {
    SocketPair p = unix_stream_pair();
    ASSERT_TRUE(p.ok());
    SocketPair q = std::move(p);
    EXPECT_FALSE(p.ok());
    a = q.a;
    b = q.b;
    EXPECT_NE(fcntl(a, F_GETFD), -1);
  }
  EXPECT_EQ(fcntl(a, F_GETFD), -1);
  EXPECT_EQ(fcntl(b, F_GETFD), -1);
}

}  // namespace
}  // namespace sluice::test

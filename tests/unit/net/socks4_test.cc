// SOCKS4's CONNECT handshake (net/socks4.h) over a socket pair: the request's bytes, a reply
// that comes in pieces, a refusal, a close, and that nothing after the reply is read.
#include "net/socks4.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

namespace sluice::net::socks4 {
namespace {

using Step = Handshake::Step;

struct Pair {
  int a = -1, b = -1;   // a: the handshake's (non-blocking), b: the proxy's
  Pair() {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    a = fds[0];
    b = fds[1];
    fcntl(a, F_SETFL, fcntl(a, F_GETFL) | O_NONBLOCK);
  }
  ~Pair() {
    if (a >= 0) close(a);
    if (b >= 0) close(b);
  }
  std::string read_b() {
    char buf[64];
    ssize_t n = ::read(b, buf, sizeof buf);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
  }
  void write_b(std::string_view s) { ASSERT_EQ(::write(b, s.data(), s.size()), static_cast<ssize_t>(s.size())); }
};

const SocketAddress kDst = SocketAddress::ipv4(0x7f000001, 8080);

TEST(Socks4, RequestIsHAProxys) {
  EXPECT_EQ(request(kDst), std::string("\x04\x01\x1f\x90\x7f\x00\x00\x01HAProxy\x00", 16));
}

TEST(Socks4, AnIpv6DestinationFailsAtOnce) {
  auto v6 = parse_server_address("[::1]:80");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(request(v6.value().addr), "");
  Pair p;
  Handshake h(v6.value().addr);
  EXPECT_EQ(h.advance(p.a), Step::kFailed);
  EXPECT_EQ(h.failure(), Failure::kAbort);
  char buf[4];
  EXPECT_EQ(recv(p.b, buf, sizeof buf, MSG_DONTWAIT), -1);   // nothing was sent to the proxy
}

TEST(Socks4, GrantedInPiecesLeavesTheRestUnread) {
  Pair p;
  Handshake h(kDst);
  EXPECT_EQ(h.advance(p.a), Step::kReceive);
  EXPECT_EQ(p.read_b(), request(kDst));
  EXPECT_EQ(h.advance(p.a), Step::kReceive);   // nothing yet
  p.write_b(std::string("\x00\x5a\x1f", 3));
  EXPECT_EQ(h.advance(p.a), Step::kReceive);
  p.write_b(std::string("\x90\x7f\x00\x00\x01", 5) + "server bytes");
  EXPECT_EQ(h.advance(p.a), Step::kDone);
  char buf[32];
  ssize_t n = ::read(p.a, buf, sizeof buf);
  ASSERT_EQ(n, 12);
  EXPECT_EQ(std::string(buf, 12), "server bytes");
}

TEST(Socks4, RefusedClosedOrNotSocks) {
  {
    Pair p;
    Handshake h(kDst);
    h.advance(p.a);
    p.write_b(std::string("\x00\x5b\x00\x00\x00\x00\x00\x00", 8));
    EXPECT_EQ(h.advance(p.a), Step::kFailed);
    EXPECT_EQ(h.failure(), Failure::kDeny);
    EXPECT_STREQ(failure_text(h.failure()), "SOCKS4 Proxy deny the request");
  }
  {
    Pair p;
    Handshake h(kDst);
    h.advance(p.a);
    p.write_b(std::string("\x00\x5a", 2));
    close(p.b);
    p.b = -1;
    EXPECT_EQ(h.advance(p.a), Step::kFailed);
    EXPECT_EQ(h.failure(), Failure::kRecv);
  }
  {
    Pair p;
    Handshake h(kDst);
    h.advance(p.a);
    p.write_b("HTTP/1.0");
    EXPECT_EQ(h.advance(p.a), Step::kFailed);
    EXPECT_EQ(h.failure(), Failure::kAbort);
  }
  {
    Pair p;
    close(p.b);
    p.b = -1;
    Handshake h(kDst);
    EXPECT_EQ(h.advance(p.a), Step::kFailed);   // the write fails (EPIPE)
    EXPECT_EQ(h.failure(), Failure::kSend);
  }
}

}  // namespace
}  // namespace sluice::net::socks4

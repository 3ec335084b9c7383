// net::Transport readiness: a non-blocking connect's error, registration with a core::EventLoop,
// the readiness bits that really arrive for data, a FIN, a hang-up and a reset, and
// decode_readiness bit by bit. Every wait is bounded (run_until with a deadline).
#include "net/transport.h"

#include <gtest/gtest.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "core/event_loop.h"
#include "net/address.h"
#include "net/socket.h"
#include "support/cpp/loop_runner.h"
#include "transport_test_util.h"

namespace sluice::net {
namespace {

using namespace transport_testing;

// ---- connect_error ---------------------------------------------------------------------------

// A loopback port bound but not listening: a SYN to it is answered with a reset, and no other
// socket can take the port while `holder` lives.
uint16_t refused_port(Fd& holder) {
  holder.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (holder.fd < 0 || bind(holder.fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      getsockname(holder.fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    return 0;
  return ntohs(a.sin_port);
}

TEST(RawTransportConnect, ConnectErrorIsConnRefusedOnceReadinessSaysError) {
  Fd holder(-1);
  const uint16_t port = refused_port(holder);
  ASSERT_NE(port, 0) << std::strerror(errno);
  bool in_progress = false;
  base::Result<int> fd = connect_nonblocking(SocketAddress::ipv4(INADDR_LOOPBACK, port),
                                             &in_progress);
  ASSERT_TRUE(fd.ok()) << fd.error().message;
  RawTransport t(*fd);
  ASSERT_TRUE(in_progress) << "a loopback connect completes after connect() returns";

  core::EventLoop loop;
  Recorder rec;
  ASSERT_TRUE(t.watch(loop, &rec)) << std::strerror(errno);
  uint32_t bits = wait_event(loop, rec, EPOLLERR);
  Readiness r = decode_readiness(bits);
  EXPECT_TRUE(r.error());
  EXPECT_TRUE(r.writable()) << "a failed connect wakes the writer";
  EXPECT_EQ(t.connect_error(), ECONNREFUSED) << std::strerror(t.connect_error());
}

TEST(RawTransportConnect, ConnectErrorIsZeroOnceAConnectSucceeded) {
  Fd listener(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_GE(listener.fd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(bind(listener.fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(listener.fd, 1), 0);
  ASSERT_EQ(getsockname(listener.fd, reinterpret_cast<sockaddr*>(&a), &len), 0);

  bool in_progress = false;
  base::Result<int> fd =
      connect_nonblocking(SocketAddress::ipv4(INADDR_LOOPBACK, ntohs(a.sin_port)), &in_progress);
  ASSERT_TRUE(fd.ok()) << fd.error().message;
  RawTransport t(*fd);
  core::EventLoop loop;
  Recorder rec;
  ASSERT_TRUE(t.watch(loop, &rec));
  uint32_t bits = wait_event(loop, rec, EPOLLOUT);
  Readiness r = decode_readiness(bits);
  EXPECT_TRUE(r.writable());
  EXPECT_FALSE(r.error());
  EXPECT_EQ(t.connect_error(), 0) << std::strerror(t.connect_error());

  Fd server(accept4(listener.fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
  ASSERT_GE(server.fd, 0);
  ASSERT_EQ(t.send("hi", 2, false).status, IoStatus::kOk);
  ASSERT_TRUE(wait_for(server.fd, POLLIN));
  EXPECT_EQ(peer_read_available(server.fd), "hi");
}

// ---- watch and the readiness that arrives --------------------------------------------------

// Watches the transport and lets the first event (writable, at registration) pass.
class WatchedTransport : public TransportOnEitherSocket {
 protected:
  void SetUp() override {
    TransportOnEitherSocket::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(t_.watch(loop_, &rec_)) << std::strerror(errno);
    uint32_t first = wait_event(loop_, rec_, EPOLLOUT);
    EXPECT_FALSE(first & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) << std::hex << first;
    rec_.events.clear();
  }

  core::EventLoop loop_;
  Recorder rec_;
};

INSTANTIATE_TEST_SUITE_P(, WatchedTransport, ::testing::Values(Kind::kUnix, Kind::kTcp),
                         kind_name);

TEST_P(WatchedTransport, DataArrivesAsReadableOnly) {
  peer_send(peer(), "data");
  Readiness r = decode_readiness(wait_event(loop_, rec_, EPOLLIN));
  EXPECT_TRUE(r.readable());
  EXPECT_TRUE(r.writable());
  EXPECT_FALSE(r.peer_closed());
  EXPECT_FALSE(r.hangup());
  EXPECT_FALSE(r.error());
}

TEST_P(WatchedTransport, ThePeersFinArrivesAsReadableAndPeerClosedWithoutHangup) {
  ASSERT_EQ(::shutdown(peer(), SHUT_WR), 0);
  Readiness r = decode_readiness(wait_event(loop_, rec_, EPOLLRDHUP));
  EXPECT_TRUE(r.readable());
  EXPECT_TRUE(r.peer_closed());
  EXPECT_FALSE(r.hangup()) << "only one direction is shut";
  EXPECT_FALSE(r.error());
  EXPECT_FALSE(any_event_has(rec_, EPOLLHUP | EPOLLERR));
}

TEST_P(WatchedTransport, BothDirectionsShutArriveAsHangup) {
  t_.shutdown_write();
  ASSERT_EQ(peer_read_to_end(peer()).end, 0);
  test::run_turns(loop_, 3, 1);
  EXPECT_FALSE(any_event_has(rec_, EPOLLHUP)) << "our own FIN is no hang-up";
  rec_.events.clear();
  ASSERT_EQ(::shutdown(peer(), SHUT_WR), 0);
  Readiness r = decode_readiness(wait_event(loop_, rec_, EPOLLHUP));
  EXPECT_TRUE(r.hangup());
  EXPECT_TRUE(r.peer_closed());
  EXPECT_TRUE(r.readable()) << "the FIN is still to be read";
  EXPECT_FALSE(r.error());
  char buf[8];
  EXPECT_EQ(t_.recv(buf, sizeof buf).status, IoStatus::kEof);
}

TEST_F(TransportOnTcp, AResetArrivesAsErrorAndHangup) {
  core::EventLoop loop;
  Recorder rec;
  ASSERT_TRUE(t_.watch(loop, &rec));
  wait_event(loop, rec, EPOLLOUT);
  rec.events.clear();
  set_linger_zero(peer());
  pair_.close_b();
  Readiness r = decode_readiness(wait_event(loop, rec, EPOLLERR));
  EXPECT_TRUE(r.error());
  EXPECT_TRUE(r.hangup());
  EXPECT_TRUE(r.readable()) << "the reader is the one to learn of it";
  EXPECT_TRUE(r.peer_closed());
  char buf[8];
  IoResult io = t_.recv(buf, sizeof buf);
  EXPECT_EQ(io.status, IoStatus::kError);
  EXPECT_EQ(io.err, ECONNRESET);
}

// A closed TCP peer sends a FIN (one direction); a closed AF_UNIX peer shuts both at once.
TEST_F(TransportOnTcp, APeerCloseArrivesAsPeerClosedWithoutHangup) {
  core::EventLoop loop;
  Recorder rec;
  ASSERT_TRUE(t_.watch(loop, &rec));
  wait_event(loop, rec, EPOLLOUT);
  rec.events.clear();
  pair_.close_b();
  Readiness r = decode_readiness(wait_event(loop, rec, EPOLLRDHUP));
  EXPECT_TRUE(r.peer_closed());
  EXPECT_TRUE(r.readable());
  EXPECT_FALSE(r.hangup());
  EXPECT_FALSE(r.error());
}

TEST_F(TransportOnUnix, APeerCloseArrivesAsHangup) {
  core::EventLoop loop;
  Recorder rec;
  ASSERT_TRUE(t_.watch(loop, &rec));
  wait_event(loop, rec, EPOLLOUT);
  rec.events.clear();
  pair_.close_b();
  Readiness r = decode_readiness(wait_event(loop, rec, EPOLLHUP));
  EXPECT_TRUE(r.hangup());
  EXPECT_TRUE(r.peer_closed());
  EXPECT_TRUE(r.readable());
  EXPECT_FALSE(r.error());
}

// Registered once, edge-triggered: unread bytes are not reported again; new bytes are.
TEST_P(WatchedTransport, WatchIsEdgeTriggered) {
  peer_send(peer(), "x");
  wait_event(loop_, rec_, EPOLLIN);
  rec_.events.clear();
  test::run_turns(loop_, 3, 1);
  EXPECT_TRUE(rec_.events.empty()) << "reported again without a new edge";
  peer_send(peer(), "y");
  wait_event(loop_, rec_, EPOLLIN);
  TransportRead r = recv_to_end(t_, 20);
  EXPECT_EQ(r.bytes, "xy");
}

TEST_P(WatchedTransport, WatchingTwiceIsRefused) {
  Recorder other;
  errno = 0;
  EXPECT_FALSE(t_.watch(loop_, &other));
  EXPECT_EQ(errno, EEXIST);
}

TEST(RawTransport, WatchingAClosedTransportIsRefused) {
  core::EventLoop loop;
  Recorder rec;
  RawTransport t;
  errno = 0;
  EXPECT_FALSE(t.watch(loop, &rec));
  EXPECT_EQ(errno, EBADF);
}

// close() leaves the loop: no event for it afterwards, and its descriptor number can be
// watched again at once.
TEST_P(WatchedTransport, CloseLeavesTheEventLoop) {
  const int fd = t_.fd();
  t_.close(CloseMode::kFin);
  (void)::send(peer(), "x", 1, MSG_NOSIGNAL);
  test::run_turns(loop_, 3, 1);
  EXPECT_TRUE(rec_.events.empty());

  test::SocketPair p = make_pair(GetParam());
  ASSERT_TRUE(p.ok());
  const int new_fd = p.a;
  RawTransport again(std::exchange(p.a, -1));
  Recorder rec;
  ASSERT_TRUE(again.watch(loop_, &rec)) << "fd " << new_fd << " (was " << fd
                                        << "): " << std::strerror(errno);
  wait_event(loop_, rec, EPOLLOUT);
}

// ---- decode_readiness, bit by bit --------------------------------------------------------------

// What decode_readiness() should answer for a set of bits.
struct Want {
  bool readable = false, writable = false, peer_closed = false, hangup = false, error = false;
};

void expect_readiness(uint32_t bits, Want want) {
  SCOPED_TRACE(testing::Message() << "bits 0x" << std::hex << bits);
  Readiness r = decode_readiness(bits);
  EXPECT_EQ(r.readable(), want.readable);
  EXPECT_EQ(r.writable(), want.writable);
  EXPECT_EQ(r.peer_closed(), want.peer_closed);
  EXPECT_EQ(r.hangup(), want.hangup);
  EXPECT_EQ(r.error(), want.error);
  EXPECT_EQ(r.hangup_or_error(), want.hangup || want.error);
}

TEST(DecodeReadiness, NoBitsIsNothing) { expect_readiness(0, {}); }

TEST(DecodeReadiness, InIsReadableOnly) {
  expect_readiness(EPOLLIN, {.readable = true});
}

TEST(DecodeReadiness, OutIsWritableOnly) {
  expect_readiness(EPOLLOUT, {.writable = true});
}

TEST(DecodeReadiness, RdHupIsReadableAndPeerClosed) {
  expect_readiness(EPOLLRDHUP, {.readable = true, .peer_closed = true});
}

TEST(DecodeReadiness, HupIsReadableWritablePeerClosedAndHangup) {
  expect_readiness(EPOLLHUP,
                   {.readable = true, .writable = true, .peer_closed = true, .hangup = true});
}

TEST(DecodeReadiness, ErrIsReadableWritablePeerClosedAndError) {
  expect_readiness(EPOLLERR,
                   {.readable = true, .writable = true, .peer_closed = true, .error = true});
}

TEST(DecodeReadiness, BitsThatMeanNothingHereAreIgnored) {
  expect_readiness(EPOLLET | EPOLLPRI | EPOLLONESHOT | EPOLLWRNORM, {});
  expect_readiness(EPOLLIN | EPOLLET, {.readable = true});
}

}  // namespace
}  // namespace sluice::net

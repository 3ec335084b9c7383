// net::Transport as the proxy layers use it, on real connected sockets (tests/support/cpp):
// RawTransport's reads and writes, the FIN, input_pending and the four close modes as the peer
// sees them. Every wait is bounded (poll with a deadline); nothing sleeps.
#include "net/transport.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "transport_test_util.h"

namespace sluice::net {
namespace {

using namespace transport_testing;

INSTANTIATE_TEST_SUITE_P(, TransportOnEitherSocket, ::testing::Values(Kind::kUnix, Kind::kTcp),
                         kind_name);


// ---- recv ----------------------------------------------------------------------------------

TEST_P(TransportOnEitherSocket, RecvReturnsTheBytesThePeerSent) {
  peer_send(peer(), "hello");
  ASSERT_TRUE(wait_for(t_.fd(), POLLIN));
  char buf[64];
  IoResult r = t_.recv(buf, sizeof buf);
  EXPECT_EQ(r.status, IoStatus::kOk);
  EXPECT_EQ(r.err, 0);
  ASSERT_EQ(r.n, 5u);
  EXPECT_EQ(std::string_view(buf, r.n), "hello");
}

TEST_P(TransportOnEitherSocket, RecvTakesNoMoreThanTheRoomAndLeavesTheRest) {
  peer_send(peer(), "0123456789");
  ASSERT_TRUE(wait_for(t_.fd(), POLLIN));
  char buf[4];
  IoResult r = t_.recv(buf, sizeof buf);
  ASSERT_EQ(r.status, IoStatus::kOk);
  ASSERT_EQ(r.n, 4u);
  EXPECT_EQ(std::string_view(buf, 4), "0123");
  TransportRead rest = recv_to_end(t_, 20);
  EXPECT_EQ(rest.bytes, "456789");
  EXPECT_EQ(rest.last.status, IoStatus::kAgain);
}

TEST_P(TransportOnEitherSocket, RecvOnAnEmptySocketIsAgain) {
  char buf[64];
  IoResult r = t_.recv(buf, sizeof buf);
  EXPECT_EQ(r.status, IoStatus::kAgain);
  EXPECT_EQ(r.n, 0u);
  EXPECT_EQ(r.err, 0);
}

TEST_P(TransportOnEitherSocket, RecvIsEofAfterThePeersShutdownOnceTheBytesAreRead) {
  peer_send(peer(), "last");
  ASSERT_EQ(::shutdown(peer(), SHUT_WR), 0);
  TransportRead r = recv_to_end(t_);
  EXPECT_EQ(r.bytes, "last");
  EXPECT_EQ(r.last.status, IoStatus::kEof);
  EXPECT_EQ(r.last.n, 0u);
  EXPECT_EQ(r.last.err, 0);
  char buf[8];
  EXPECT_EQ(t_.recv(buf, sizeof buf).status, IoStatus::kEof) << "EOF stays EOF";
}

TEST_P(TransportOnEitherSocket, RecvIsEofAfterThePeerClosed) {
  pair_.close_b();
  TransportRead r = recv_to_end(t_);
  EXPECT_EQ(r.bytes, "");
  EXPECT_EQ(r.last.status, IoStatus::kEof);
}

TEST_F(TransportOnTcp, RecvIsConnResetAfterThePeerClosedWithLingerZero) {
  set_linger_zero(peer());
  pair_.close_b();
  ASSERT_TRUE(wait_for(t_.fd(), POLLIN));
  char buf[64];
  IoResult r = t_.recv(buf, sizeof buf);
  EXPECT_EQ(r.status, IoStatus::kError);
  EXPECT_EQ(r.err, ECONNRESET) << std::strerror(r.err);
  EXPECT_EQ(r.n, 0u);
}

// ---- send ----------------------------------------------------------------------------------

TEST_P(TransportOnEitherSocket, SendWritesEveryByteWhenThereIsRoom) {
  IoResult r = t_.send("request", 7, false);
  EXPECT_EQ(r.status, IoStatus::kOk);
  EXPECT_EQ(r.n, 7u);
  EXPECT_EQ(r.err, 0);
  ASSERT_TRUE(wait_for(peer(), POLLIN));
  EXPECT_EQ(peer_read_available(peer()), "request");
}

// A full socket: a short count first, then kAgain; once the peer reads, the rest goes, in
// order and complete.
TEST_P(TransportOnEitherSocket, SendWritesPartThenAgainWhenTheBufferIsFullAndLosesNothing) {
  // Our send buffer only: shrinking the peer's receive buffer after the handshake would take
  // back window already offered, and TCP would retransmit into it on back-off timers.
  int small = 4096;
  ASSERT_EQ(setsockopt(t_.fd(), SOL_SOCKET, SO_SNDBUF, &small, sizeof small), 0);
  const std::string data = pattern(1 << 20);

  IoResult first = t_.send(data.data(), data.size(), false);
  ASSERT_EQ(first.status, IoStatus::kOk);
  EXPECT_GT(first.n, 0u);
  EXPECT_LT(first.n, data.size()) << "a 1 MiB write into a small buffer is partial";
  std::size_t sent = first.n;
  IoResult again;
  for (int i = 0; i < 1000; ++i) {
    again = t_.send(data.data() + sent, data.size() - sent, false);
    if (again.status != IoStatus::kOk) break;
    sent += again.n;
  }
  ASSERT_EQ(again.status, IoStatus::kAgain) << "the peer reads nothing: the socket fills";
  EXPECT_EQ(again.n, 0u);
  EXPECT_EQ(again.err, 0);

  std::string got;
  const auto deadline = Clock::now() + milliseconds(5000);
  while (got.size() < data.size() && ms_left(deadline) > 0) {
    got += peer_read_available(peer());
    if (sent < data.size()) {
      IoResult r = t_.send(data.data() + sent, data.size() - sent, false);
      if (r.status == IoStatus::kOk) {
        sent += r.n;
        continue;
      }
      ASSERT_EQ(r.status, IoStatus::kAgain) << std::strerror(r.err);
    }
    // Whichever side can move next: room for us or bytes for the peer.
    pollfd fds[2] = {{t_.fd(), static_cast<short>(sent < data.size() ? POLLOUT : 0), 0},
                     {peer(), POLLIN, 0}};
    poll(fds, 2, 10);
  }
  EXPECT_EQ(sent, data.size());
  ASSERT_EQ(got.size(), data.size());
  EXPECT_TRUE(got == data) << "the bytes arrived out of order or changed";
}

// The peer is gone: the write fails with EPIPE (after ECONNRESET on TCP, whose first write
// only learns of the close from the peer's reset) and the process gets no SIGPIPE.
TEST_P(TransportOnEitherSocket, SendAfterThePeerClosedIsEpipeWithoutSigpipe) {
  SigpipeBlocked blocked;
  pair_.close_b();
  std::vector<int> errs;
  const auto deadline = Clock::now() + milliseconds(kWaitMs);
  while (ms_left(deadline) > 0) {
    IoResult r = t_.send("x", 1, false);
    if (r.status == IoStatus::kError) {
      EXPECT_EQ(r.n, 0u);
      errs.push_back(r.err);
      if (r.err == EPIPE) break;
    } else {
      // TCP: the kernel takes the byte; the peer's reset comes back.
      ASSERT_EQ(r.status, IoStatus::kOk);
      wait_for(t_.fd(), POLLERR, 10);
    }
  }
  ASSERT_FALSE(errs.empty()) << "no write failed";
  EXPECT_EQ(errs.back(), EPIPE) << std::strerror(errs.back());
  for (int e : errs) EXPECT_TRUE(e == EPIPE || e == ECONNRESET) << std::strerror(e);
  if (GetParam() == Kind::kUnix) {
    EXPECT_EQ(errs.size(), 1u) << "AF_UNIX knows at once";
  }
  EXPECT_FALSE(blocked.pending()) << "send() raised SIGPIPE";

  // The check above can see a SIGPIPE: a plain send() raises one.
  ASSERT_EQ(::send(t_.fd(), "x", 1, 0), -1);
  EXPECT_EQ(errno, EPIPE);
  EXPECT_TRUE(blocked.pending());
}

TEST_P(TransportOnEitherSocket, SendAfterShutdownWriteIsEpipeWithoutSigpipe) {
  SigpipeBlocked blocked;
  t_.shutdown_write();
  IoResult r = t_.send("late", 4, false);
  EXPECT_EQ(r.status, IoStatus::kError);
  EXPECT_EQ(r.err, EPIPE) << std::strerror(r.err);
  EXPECT_FALSE(blocked.pending());
}

TEST_F(TransportOnUnix, SendWithMoreOnAUnixSocketDeliversAtOnce) {
  IoResult r = t_.send("now", 3, true);
  ASSERT_EQ(r.status, IoStatus::kOk);
  EXPECT_EQ(r.n, 3u);
  ASSERT_TRUE(wait_for(peer(), POLLIN));
  EXPECT_EQ(peer_read_available(peer()), "now");
}

// What makes the close-mode tests below meaningful: on TCP, `more` really holds the bytes
// back (the kernel sends them later on its own, after a probe timer of 200 ms at least).
TEST_F(TransportOnTcp, SendWithMoreHoldsTheBytesBackUntilTheClose) {
  const auto sent_at = Clock::now();
  IoResult r = t_.send("held", 4, true);
  ASSERT_EQ(r.status, IoStatus::kOk);
  EXPECT_EQ(r.n, 4u);
  bool arrived = wait_for(peer(), POLLIN, 5);
  if (arrived && Clock::now() - sent_at >= milliseconds(150)) GTEST_SKIP() << "descheduled";
  EXPECT_FALSE(arrived) << "MSG_MORE did not hold the bytes back";
  t_.close(CloseMode::kFin);
  PeerRead pr = peer_read_to_end(peer());
  EXPECT_EQ(pr.bytes, "held");
  EXPECT_EQ(pr.end, 0);
}

// ---- close modes -----------------------------------------------------------------------------

TEST_P(TransportOnEitherSocket, CloseFinAfterSendWithMoreDeliversTheBytesThenEof) {
  ASSERT_EQ(t_.send("tail", 4, true).status, IoStatus::kOk);
  t_.close(CloseMode::kFin);
  PeerRead pr = peer_read_to_end(peer());
  EXPECT_EQ(pr.bytes, "tail");
  EXPECT_EQ(pr.end, 0) << std::strerror(pr.end);
}

TEST_P(TransportOnEitherSocket, ClosePushedFinAfterSendWithMoreDeliversTheBytesThenEof) {
  ASSERT_EQ(t_.send("tail", 4, true).status, IoStatus::kOk);
  t_.close(CloseMode::kPushedFin);
  PeerRead pr = peer_read_to_end(peer());
  EXPECT_EQ(pr.bytes, "tail");
  EXPECT_EQ(pr.end, 0) << std::strerror(pr.end);
}

TEST_P(TransportOnEitherSocket, ClosePushedFinWithoutHeldBytesDeliversTheBytesThenEof) {
  ASSERT_EQ(t_.send("done", 4, false).status, IoStatus::kOk);
  t_.close(CloseMode::kPushedFin);
  PeerRead pr = peer_read_to_end(peer());
  EXPECT_EQ(pr.bytes, "done");
  EXPECT_EQ(pr.end, 0) << std::strerror(pr.end);
}

// The case kPushedFin exists for: input left unread turns the close into a reset, and the
// held bytes must have left before it.
TEST_F(TransportOnTcp, ClosePushedFinWithUnreadInputStillDeliversTheHeldBytesFirst) {
  peer_send(peer(), "unread");
  ASSERT_TRUE(wait_for(t_.fd(), POLLIN));
  ASSERT_TRUE(t_.input_pending());
  ASSERT_EQ(t_.send("response", 8, true).status, IoStatus::kOk);
  t_.close(CloseMode::kPushedFin);
  PeerRead pr = peer_read_to_end(peer());
  EXPECT_EQ(pr.bytes, "response");
  EXPECT_TRUE(pr.end == 0 || pr.end == ECONNRESET || pr.end == EPIPE) << pr.end;
}

// Why kPushedFin is needed: a plain close over unread input is a reset, and what `more` held
// back never leaves (the documented behaviour of kFin).
TEST_F(TransportOnTcp, CloseFinWithUnreadInputResetsAndDropsTheHeldBytes) {
  peer_send(peer(), "unread");
  ASSERT_TRUE(wait_for(t_.fd(), POLLIN));
  ASSERT_EQ(t_.send("response", 8, true).status, IoStatus::kOk);
  t_.close(CloseMode::kFin);
  PeerRead pr = peer_read_to_end(peer());
  EXPECT_EQ(pr.end, ECONNRESET) << std::strerror(pr.end);
  EXPECT_EQ(pr.bytes, "");
}

TEST_F(TransportOnTcp, CloseResetMakesThePeerSeeConnReset) {
  t_.close(CloseMode::kReset);
  PeerRead pr = peer_read_to_end(peer());
  EXPECT_EQ(pr.bytes, "");
  EXPECT_EQ(pr.end, ECONNRESET) << std::strerror(pr.end);
}

TEST_F(TransportOnTcp, CloseResetAfterPlainSendDeliversTheBytesThenAReset) {
  // Without `more` (and with TCP_NODELAY, as on sluice's sockets) the bytes left at once.
  ASSERT_EQ(t_.send("gone", 4, false).status, IoStatus::kOk);
  t_.close(CloseMode::kReset);
  PeerRead pr = peer_read_to_end(peer());
  EXPECT_EQ(pr.bytes, "gone");
  EXPECT_EQ(pr.end, ECONNRESET) << std::strerror(pr.end);
}

TEST_F(TransportOnTcp, ClosePushResetDeliversTheHeldBytesThenAReset) {
  ASSERT_EQ(t_.send("held", 4, true).status, IoStatus::kOk);
  t_.close(CloseMode::kPushReset);
  PeerRead pr = peer_read_to_end(peer());
  EXPECT_EQ(pr.bytes, "held");
  EXPECT_EQ(pr.end, ECONNRESET) << "a reset, not a FIN: " << std::strerror(pr.end);
}

TEST_F(TransportOnTcp, ClosePushResetWithoutHeldBytesIsAReset) {
  t_.close(CloseMode::kPushReset);
  PeerRead pr = peer_read_to_end(peer());
  EXPECT_EQ(pr.bytes, "");
  EXPECT_EQ(pr.end, ECONNRESET) << std::strerror(pr.end);
}

// AF_UNIX has no reset: the reset modes end the stream as a FIN does, after the bytes.
TEST_F(TransportOnUnix, CloseResetModesOnAUnixSocketEndWithEofAfterTheBytes) {
  for (CloseMode mode : {CloseMode::kReset, CloseMode::kPushReset}) {
    SCOPED_TRACE(static_cast<int>(mode));
    test::SocketPair p = test::unix_stream_pair();
    ASSERT_TRUE(p.ok());
    RawTransport t(std::exchange(p.a, -1));
    ASSERT_EQ(t.send("bytes", 5, true).status, IoStatus::kOk);
    t.close(mode);
    PeerRead pr = peer_read_to_end(p.b);
    EXPECT_EQ(pr.bytes, "bytes");
    EXPECT_EQ(pr.end, 0) << std::strerror(pr.end);
  }
}

TEST_P(TransportOnEitherSocket, CloseIsIdempotentInEveryModeAndFdBecomesMinusOne) {
  for (CloseMode mode : {CloseMode::kFin, CloseMode::kPushedFin, CloseMode::kReset,
                         CloseMode::kPushReset}) {
    SCOPED_TRACE(static_cast<int>(mode));
    test::SocketPair p = make_pair(GetParam());
    ASSERT_TRUE(p.ok());
    const int fd = p.a;
    RawTransport t(std::exchange(p.a, -1));
    EXPECT_EQ(t.fd(), fd);
    EXPECT_TRUE(t.open());
    ASSERT_EQ(t.send("x", 1, true).status, IoStatus::kOk);
    t.close(mode);
    EXPECT_EQ(t.fd(), -1);
    EXPECT_FALSE(t.open());
    EXPECT_FALSE(descriptor_is_open(fd)) << "close() left the descriptor open";
    // A second close must not close a descriptor that now has the same number.
    Fd reused(::dup(p.b));
    t.close(mode);
    t.close(CloseMode::kFin);
    EXPECT_EQ(t.fd(), -1);
    if (reused.fd == fd) {
      EXPECT_TRUE(descriptor_is_open(fd)) << "closed twice";
    }
    EXPECT_FALSE(t.input_pending());
    t.shutdown_write();   // no-op once closed
  }
}

TEST_P(TransportOnEitherSocket, TheDestructorClosesAnOpenDescriptor) {
  test::SocketPair p = make_pair(GetParam());
  ASSERT_TRUE(p.ok());
  const int fd = p.a;
  {
    RawTransport t(std::exchange(p.a, -1));
    ASSERT_TRUE(descriptor_is_open(fd));
  }
  EXPECT_FALSE(descriptor_is_open(fd));
  EXPECT_EQ(errno, EBADF);
  PeerRead pr = peer_read_to_end(p.b);
  EXPECT_EQ(pr.end, 0) << "the destructor closes with a FIN";
}

TEST(RawTransport, ADefaultTransportIsClosedAndClosingItDoesNothing) {
  RawTransport t;
  EXPECT_EQ(t.fd(), -1);
  EXPECT_FALSE(t.open());
  EXPECT_FALSE(t.input_pending());
  t.close(CloseMode::kReset);
  t.shutdown_write();
  EXPECT_EQ(t.fd(), -1);
}

TEST(RawTransport, AdoptClosesThePreviousDescriptorAndTakesTheNewOne) {
  test::SocketPair first = test::unix_stream_pair();
  test::SocketPair second = test::unix_stream_pair();
  ASSERT_TRUE(first.ok() && second.ok());
  const int old_fd = first.a;
  RawTransport t(std::exchange(first.a, -1));
  const int new_fd = second.a;
  t.adopt(std::exchange(second.a, -1));
  EXPECT_EQ(t.fd(), new_fd);
  EXPECT_FALSE(descriptor_is_open(old_fd));
  EXPECT_EQ(peer_read_to_end(first.b).end, 0);
  peer_send(second.b, "new");
  TransportRead r = recv_to_end(t, 20);
  EXPECT_EQ(r.bytes, "new");
}

// ---- shutdown_write ----------------------------------------------------------------------------

TEST_P(TransportOnEitherSocket, ShutdownWriteGivesThePeerEofWhileReadingGoesOn) {
  ASSERT_EQ(t_.send("request", 7, false).status, IoStatus::kOk);
  t_.shutdown_write();
  PeerRead pr = peer_read_to_end(peer());
  EXPECT_EQ(pr.bytes, "request");
  EXPECT_EQ(pr.end, 0) << std::strerror(pr.end);

  peer_send(peer(), "response");
  ASSERT_EQ(::shutdown(peer(), SHUT_WR), 0);
  TransportRead r = recv_to_end(t_);
  EXPECT_EQ(r.bytes, "response");
  EXPECT_EQ(r.last.status, IoStatus::kEof);
  EXPECT_TRUE(t_.open()) << "shutdown_write() does not close";
}

TEST_F(TransportOnTcp, ShutdownWriteAfterSendWithMoreDeliversTheHeldBytesThenEof) {
  ASSERT_EQ(t_.send("held", 4, true).status, IoStatus::kOk);
  t_.shutdown_write();
  PeerRead pr = peer_read_to_end(peer());
  EXPECT_EQ(pr.bytes, "held");
  EXPECT_EQ(pr.end, 0) << std::strerror(pr.end);
}

// ---- input_pending ---------------------------------------------------------------------------

TEST_P(TransportOnEitherSocket, InputPendingIsFalseOnAnEmptySocket) {
  EXPECT_FALSE(t_.input_pending());
}

TEST_P(TransportOnEitherSocket, InputPendingIsTrueWithDataAndDoesNotConsumeIt) {
  peer_send(peer(), "abc");
  ASSERT_TRUE(wait_for(t_.fd(), POLLIN));
  EXPECT_TRUE(t_.input_pending());
  EXPECT_TRUE(t_.input_pending()) << "asking twice changes nothing";
  TransportRead r = recv_to_end(t_, 20);
  EXPECT_EQ(r.bytes, "abc") << "input_pending() took bytes";
  EXPECT_FALSE(t_.input_pending());
}

TEST_P(TransportOnEitherSocket, InputPendingIsFalseAtEofWithoutBytes) {
  ASSERT_EQ(::shutdown(peer(), SHUT_WR), 0);
  ASSERT_TRUE(wait_for(t_.fd(), POLLIN));
  EXPECT_FALSE(t_.input_pending());
  char buf[8];
  EXPECT_EQ(t_.recv(buf, sizeof buf).status, IoStatus::kEof) << "the FIN is still there";
}

// ---- zero-length calls ---------------------------------------------------------------------

// A zero-length send on a healthy connection moves nothing; it is not a broken pipe.
TEST(RawTransport, SendOfZeroBytesOnAHealthySocketIsNotAnError) {
  test::SocketPair p = test::tcp_loopback_pair();
  ASSERT_TRUE(p.ok());
  RawTransport t(std::exchange(p.a, -1));
  IoResult r = t.send("", 0, false);
  EXPECT_NE(r.status, IoStatus::kError) << "err " << r.err;
  EXPECT_EQ(r.n, 0u);
  // The connection is fine.
  EXPECT_EQ(t.send("x", 1, false).status, IoStatus::kOk);
}

// A zero-room recv on a healthy connection cannot tell anything; it is not the peer's FIN.
TEST(RawTransport, RecvIntoZeroRoomOnAHealthySocketIsNotEof) {
  test::SocketPair p = test::tcp_loopback_pair();
  ASSERT_TRUE(p.ok());
  RawTransport t(std::exchange(p.a, -1));
  ASSERT_EQ(::send(p.b, "data", 4, 0), 4);
  char buf[1];
  IoResult r = t.recv(buf, 0);
  EXPECT_NE(r.status, IoStatus::kEof);
}

}  // namespace
}  // namespace sluice::net

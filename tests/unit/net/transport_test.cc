// net::Transport as the proxy layers use it, on real connected sockets (tests/support/cpp):
// RawTransport's reads and writes, the FIN and the four close modes as the peer sees them,
// readiness through a core::EventLoop, and decode_readiness of the bits that really arrive.
// Every wait is bounded (poll or run_until with a deadline); nothing sleeps.
#include "net/transport.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/event_loop.h"
#include "net/address.h"
#include "net/socket.h"
#include "support/cpp/loop_runner.h"
#include "support/cpp/socket_pair.h"

namespace sluice::net {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The longest anything delivered over loopback or AF_UNIX may take to show up. Waits end as
// soon as it does, so this only bounds a broken test.
constexpr int kWaitMs = 2000;

// poll() for `events` (POLLERR and POLLHUP always count), at most `ms`.
bool wait_for(int fd, short events, int ms = kWaitMs) {
  pollfd p{fd, events, 0};
  return poll(&p, 1, ms) > 0;
}

int ms_left(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

void peer_send(int fd, std::string_view bytes) {
  ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(bytes.size()))
      << std::strerror(errno);
}

// What the peer reads until its stream ends: the bytes, then how the stream ended.
struct PeerRead {
  std::string bytes;
  int end = -1;   // 0: EOF; an errno: the read failed so; -1: no end within the wait
};

PeerRead peer_read_to_end(int fd, int ms = kWaitMs) {
  PeerRead r;
  const auto deadline = Clock::now() + milliseconds(ms);
  char buf[65536];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      r.bytes.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) {
      r.end = 0;
      return r;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      r.end = errno;
      return r;
    }
    if (ms_left(deadline) == 0) return r;
    wait_for(fd, POLLIN, ms_left(deadline));
  }
}

// Everything the peer can read now, without waiting.
std::string peer_read_available(int fd) {
  std::string out;
  char buf[65536];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) out.append(buf, static_cast<std::size_t>(n));
  return out;
}

// What the transport reads until recv() answers something other than kOk or kAgain (kAgain
// waits for readiness, bounded): the bytes and that last answer.
struct TransportRead {
  std::string bytes;
  IoResult last;
  bool timed_out = false;
};

TransportRead recv_to_end(Transport& t, int ms = kWaitMs) {
  TransportRead r;
  const auto deadline = Clock::now() + milliseconds(ms);
  char buf[65536];
  for (;;) {
    r.last = t.recv(buf, sizeof buf);
    if (r.last.status == IoStatus::kOk) {
      r.bytes.append(buf, r.last.n);
      continue;
    }
    if (r.last.status != IoStatus::kAgain) return r;
    if (ms_left(deadline) == 0) {
      r.timed_out = true;
      return r;
    }
    wait_for(t.fd(), POLLIN, ms_left(deadline));
  }
}

// A descriptor this test owns.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

bool descriptor_is_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

void set_linger_zero(int fd) {
  struct linger lg {};
  lg.l_onoff = 1;
  lg.l_linger = 0;
  ASSERT_EQ(setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0) << std::strerror(errno);
}

// Bytes that show where a misplaced or lost chunk went.
std::string pattern(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 251) % 26);
  return s;
}

// Blocks SIGPIPE on this thread for the scope, so that a send() without MSG_NOSIGNAL leaves
// the signal pending (visible, instead of killing the test binary); drops it at the end.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeBlocked() {
    timespec zero{};
    while (pending()) sigtimedwait(&pipe_, nullptr, &zero);
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

  bool pending() const {
    sigset_t set;
    sigpending(&set);
    return sigismember(&set, SIGPIPE) == 1;
  }

 private:
  sigset_t pipe_;
  sigset_t old_;
};

// Keeps every event mask the loop delivers.
struct Recorder final : core::IoHandler {
  std::vector<uint32_t> events;
  void on_io(uint32_t bits) override { events.push_back(bits); }
};

// Runs `loop` until `rec` holds an event with all of `bits`; returns that event (0: none came
// within the bounds, which fails the test).
uint32_t wait_event(core::EventLoop& loop, const Recorder& rec, uint32_t bits) {
  uint32_t got = 0;
  test::RunResult r = test::run_until(loop, [&] {
    for (uint32_t e : rec.events) {
      if ((e & bits) == bits) {
        got = e;
        return true;
      }
    }
    return false;
  });
  EXPECT_TRUE(r.done()) << "no event with bits 0x" << std::hex << bits << ": " << r.describe();
  return got;
}

bool any_event_has(const Recorder& rec, uint32_t bits) {
  for (uint32_t e : rec.events)
    if (e & bits) return true;
  return false;
}

enum class Kind { kUnix, kTcp };

std::string kind_name(const ::testing::TestParamInfo<Kind>& param) {
  return param.param == Kind::kUnix ? "Unix" : "Tcp";
}

test::SocketPair make_pair(Kind kind) {
  return kind == Kind::kUnix ? test::unix_stream_pair() : test::tcp_loopback_pair();
}

// The transport owns the pair's `a` end; the test plays the peer on `b` with system calls.
class TransportTest : public ::testing::Test {
 protected:
  void open(Kind kind) {
    pair_ = make_pair(kind);
    ASSERT_TRUE(pair_.ok()) << std::strerror(pair_.error);
    t_.adopt(std::exchange(pair_.a, -1));
  }
  int peer() const { return pair_.b; }

  test::SocketPair pair_;
  RawTransport t_;
};

// What holds for both socket kinds.
class TransportOnEitherSocket : public TransportTest,
                                public ::testing::WithParamInterface<Kind> {
 protected:
  void SetUp() override { open(GetParam()); }
};

INSTANTIATE_TEST_SUITE_P(, TransportOnEitherSocket, ::testing::Values(Kind::kUnix, Kind::kTcp),
                         kind_name);

// TCP only: MSG_MORE, resets, window-limited writes.
class TransportOnTcp : public TransportTest {
 protected:
  void SetUp() override { open(Kind::kTcp); }
};

class TransportOnUnix : public TransportTest {
 protected:
  void SetUp() override { open(Kind::kUnix); }
};

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

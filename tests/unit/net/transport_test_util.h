// Shared by the net::Transport tests (transport_test.cc, transport_readiness_test.cc):
// bounded waits, the peer side played with system calls, and the socket-pair fixtures.
#pragma once

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
#include "net/transport.h"

namespace sluice::net::transport_testing {


using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The longest anything delivered over loopback or AF_UNIX may take to show up. Waits end as
// soon as it does, so this only bounds a broken test.
constexpr int kWaitMs = 2000;

// poll() for `events` (POLLERR and POLLHUP always count), at most `ms`.
inline bool wait_for(int fd, short events, int ms = kWaitMs) {
  pollfd p{fd, events, 0};
  return poll(&p, 1, ms) > 0;
}

inline int ms_left(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

inline void peer_send(int fd, std::string_view bytes) {
  ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(bytes.size()))
      << std::strerror(errno);
}

// What the peer reads until its stream ends: the bytes, then how the stream ended.
struct PeerRead {
  std::string bytes;
  int end = -1;   // 0: EOF; an errno: the read failed so; -1: no end within the wait
};

inline PeerRead peer_read_to_end(int fd, int ms = kWaitMs) {
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
inline std::string peer_read_available(int fd) {
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

inline TransportRead recv_to_end(Transport& t, int ms = kWaitMs) {
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

inline bool descriptor_is_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

inline void set_linger_zero(int fd) {
  struct linger lg {};
  lg.l_onoff = 1;
  lg.l_linger = 0;
  ASSERT_EQ(setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0) << std::strerror(errno);
}

// Bytes that show where a misplaced or lost chunk went.
inline std::string pattern(std::size_t n) {
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
inline uint32_t wait_event(core::EventLoop& loop, const Recorder& rec, uint32_t bits) {
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

inline bool any_event_has(const Recorder& rec, uint32_t bits) {
  for (uint32_t e : rec.events)
    if (e & bits) return true;
  return false;
}

enum class Kind { kUnix, kTcp };

inline std::string kind_name(const ::testing::TestParamInfo<Kind>& param) {
  return param.param == Kind::kUnix ? "Unix" : "Tcp";
}

inline test::SocketPair make_pair(Kind kind) {
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


// TCP only: MSG_MORE, resets, window-limited writes.
class TransportOnTcp : public TransportTest {
 protected:
  void SetUp() override { open(Kind::kTcp); }
};

class TransportOnUnix : public TransportTest {
 protected:
  void SetUp() override { open(Kind::kUnix); }
};

}  // namespace sluice::net::transport_testing

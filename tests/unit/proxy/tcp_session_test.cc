// TCP sessions in process: a `listen` section in mode tcp on loopback, connections accepted by
// the worker's own accept path (proxy_fixture.h), a test server on a loopback listener, and
// assertions on the bytes and the FINs each end receives. The worker's loop runs on the test's
// thread; every wait is bounded (RunLimits), every port picked by the kernel.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <functional>
#include <string>

#include "core/timer_wheel.h"
#include "proxy/tcp_session.h"
#include "support/cpp/manual_clock.h"
#include "unit/proxy/proxy_fixture.h"

namespace sluice::proxy {
namespace {

using fixture::LoopbackPort;
using fixture::Peer;
using fixture::ProxyHarness;
using fixture::server_at;

class TcpSessionTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NE(server_.port(), 0); }
  void TearDown() override {
    EXPECT_TRUE(h_.drain()) << "sessions=" << h_.w().sessions();
  }

  void build(const std::function<void(ProxySettings&)>& tune = {}, base::ClockSource clock = {},
             uint16_t server_port = 0) {
    ASSERT_TRUE(h_.build(false, {server_at("s1", 1, server_port ? server_port : server_.port())},
                         tune, clock));
  }
  stats::TrafficCounters& sc() { return h_.w().srv_counters(h_.px().server_base); }

  // A client connected to the proxy, and its session started by the worker.
  Peer client() {
    Peer c = fixture::connect_client(h_.port());
    EXPECT_TRUE(c.open());
    test::RunResult r = h_.run_until([&] { return h_.fc().stot.get() > 0; });
    EXPECT_TRUE(r.done()) << r.describe();
    return c;
  }
  // A client and the server connection its session opened.
  void connect_both(Peer& c, Peer& s) {
    c = client();
    s = h_.accept_from(server_);
    ASSERT_TRUE(s.open());
  }
  void expect_bytes(Peer& p, const std::string& want) {
    test::RunResult r = h_.read_at_least(p, want.size());
    EXPECT_TRUE(r.done()) << r.describe();
    EXPECT_EQ(p.take(), want);
  }
  void expect_fin(Peer& p) {
    test::RunResult r = h_.read_to_eof(p);
    EXPECT_TRUE(r.done()) << r.describe();
    EXPECT_EQ(p.in, "");
    EXPECT_EQ(p.error, 0);   // a FIN, not a reset
  }
  // A few turns of the loop, then: `p` received nothing and its other side is still open.
  void expect_quiet(Peer& p) {
    test::run_turns(h_.loop(), 5, 2);
    p.poll();
    EXPECT_EQ(p.in, "");
    EXPECT_FALSE(p.eof);
  }
  void expect_session_ends() {
    test::RunResult r = h_.run_until([&] { return h_.w().sessions() == 0; });
    EXPECT_TRUE(r.done()) << r.describe();
  }

  LoopbackPort server_{true};
  // Outlives the test body: TearDown() still runs the loop, which reads it.
  test::ManualClock clock_;
  ProxyHarness h_;
};

TEST_F(TcpSessionTest, RelaysBytesBothWays) {
  build();
  Peer c, s;
  connect_both(c, s);
  ASSERT_TRUE(c.send("hello"));
  expect_bytes(s, "hello");
  ASSERT_TRUE(s.send("world!"));
  expect_bytes(c, "world!");
  // Larger than one read of the relay's buffer (bufsize 16384), both ways at once.
  std::string up(100000, 'u'), down(70000, 'd');
  for (std::size_t i = 0; i < up.size(); i += 997) up[i] = static_cast<char>('a' + i % 26);
  for (std::size_t i = 0; i < down.size(); i += 991) down[i] = static_cast<char>('A' + i % 26);
  // The sockets are non-blocking: the test writes what they take between loop turns.
  std::size_t up_at = 0, down_at = 0;
  auto push = [](Peer& p, const std::string& data, std::size_t& at) {
    while (at < data.size()) {
      ssize_t n = ::send(p.fd(), data.data() + at, data.size() - at, MSG_NOSIGNAL);
      if (n <= 0) return;
      at += static_cast<std::size_t>(n);
    }
  };
  test::RunResult r = h_.run_until(
      [&] {
        push(c, up, up_at);
        push(s, down, down_at);
        c.poll();
        s.poll();
        return s.in.size() >= up.size() && c.in.size() >= down.size();
      },
      test::RunLimits{.max_iterations = 5000, .deadline_ms = 10000, .max_wait_ms = 5});
  ASSERT_TRUE(r.done()) << r.describe() << " up " << s.in.size() << " down " << c.in.size();
  EXPECT_TRUE(s.take() == up);
  EXPECT_TRUE(c.take() == down);
  EXPECT_EQ(h_.fc().bin.get(), 5 + up.size());
  EXPECT_EQ(h_.fc().bout.get(), 6 + down.size());
  EXPECT_EQ(sc().bin.get(), 5 + up.size());
  EXPECT_EQ(sc().connect.get(), 1u);
}

TEST_F(TcpSessionTest, ClientHalfCloseIsPassedOnAndTheOtherWayKeepsFlowing) {
  build();
  Peer c, s;
  connect_both(c, s);
  ASSERT_TRUE(c.send("request"));
  c.shutdown_write();
  // The bytes, then the FIN after them.
  test::RunResult r = h_.read_to_eof(s);
  ASSERT_TRUE(r.done()) << r.describe();
  EXPECT_EQ(s.take(), "request");
  EXPECT_EQ(s.error, 0);
  EXPECT_EQ(h_.w().sessions(), 1u);
  // The server still answers, in several writes.
  ASSERT_TRUE(s.send("resp"));
  expect_bytes(c, "resp");
  ASSERT_TRUE(s.send("onse"));
  expect_bytes(c, "onse");
  EXPECT_FALSE(c.eof);
  // Its FIN ends the other direction, and the session.
  s.shutdown_write();
  expect_fin(c);
  expect_session_ends();
}

TEST_F(TcpSessionTest, ServerHalfCloseIsPassedOnAndTheClientMayStillSend) {
  build();
  Peer c, s;
  connect_both(c, s);
  ASSERT_TRUE(s.send("banner\r\n"));
  s.shutdown_write();
  test::RunResult r = h_.read_to_eof(c);
  ASSERT_TRUE(r.done()) << r.describe();
  EXPECT_EQ(c.take(), "banner\r\n");
  EXPECT_EQ(c.error, 0);
  expect_quiet(s);
  ASSERT_TRUE(c.send("late"));
  expect_bytes(s, "late");
  EXPECT_EQ(h_.w().sessions(), 1u);
  c.shutdown_write();
  expect_fin(s);
  expect_session_ends();
}

TEST_F(TcpSessionTest, BytesSentBeforeTheServerConnectionAreRelayed) {
  build();
  Peer c = fixture::connect_client(h_.port());
  ASSERT_TRUE(c.open());
  // Sent before the worker even accepted the connection.
  ASSERT_TRUE(c.send("early bytes"));
  Peer s = h_.accept_from(server_);
  ASSERT_TRUE(s.open());
  expect_bytes(s, "early bytes");
  EXPECT_EQ(h_.bc().bin.get(), 11u);
}

TEST_F(TcpSessionTest, ARefusedServerClosesTheClient) {
  LoopbackPort refusing(false);
  ASSERT_NE(refusing.port(), 0);
  build({}, {}, refusing.port());
  Peer c = client();
  test::RunResult r = h_.read_to_eof(c);
  ASSERT_TRUE(r.done()) << r.describe();
  EXPECT_EQ(c.in, "");
  EXPECT_EQ(h_.bc().econ.get(), 1u);   // retries 0: one attempt
  EXPECT_EQ(sc().econ.get(), 1u);
  expect_session_ends();
}

TEST_F(TcpSessionTest, ClientTimeoutOnTheInjectedClock) {
  test::ManualClock& clock = clock_;
  build(
      [](ProxySettings& p) {
        p.timeouts.client = 500;
        p.timeouts.server = 2000;
      },
      clock.source());
  Peer c, s;
  connect_both(c, s);
  ASSERT_TRUE(c.send("x"));
  expect_bytes(s, "x");
  clock.advance(499);
  expect_quiet(c);
  expect_quiet(s);
  // `timeout client`: both sides are closed.
  clock.advance(1 + core::TimerWheel::kTickMs);
  test::RunResult r = h_.run_until([&] {
    c.poll();
    s.poll();
    return c.eof && s.eof;
  });
  ASSERT_TRUE(r.done()) << r.describe();
  EXPECT_EQ(c.in, "");
  EXPECT_EQ(s.in, "");
  expect_session_ends();
}

}  // namespace
}  // namespace sluice::proxy

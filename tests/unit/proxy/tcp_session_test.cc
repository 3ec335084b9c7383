// TCP sessions in process: a `listen` section in mode tcp on loopback, connections accepted by
// the worker's own accept path (proxy_fixture.h), a test server on a loopback listener, and
// assertions on the bytes and the FINs each end receives. The worker's loop runs on the test's
// thread; every wait is bounded (RunLimits), every port picked by the kernel.
#include <gtest/gtest.h>

#include <algorithm>
#include <sys/socket.h>

#include <cerrno>
#include <functional>
#include <string>
#include <vector>

#include "core/timer_wheel.h"
#include "proxy/tcp_session.h"
#include "rules/rules.h"
#include "support/cpp/manual_clock.h"
#include "unit/proxy/proxy_fixture.h"

namespace sluice::proxy {
namespace {

using fixture::LoopbackPort;
using fixture::Outgoing;
using fixture::Peer;
using fixture::ProxyHarness;
using fixture::server_at;

// Socket buffers of a peer that stops reading, and a transfer larger than everything that can
// sit between the two peers then (their kernel buffers and the relay's): the sender must stall.
constexpr int kSmallBuf = 4096;
constexpr std::size_t kBulk = 1 << 20;
constexpr std::size_t kSlowRead = 2048;   // what a slow reader takes per turn of the loop
constexpr test::RunLimits kBulkLimits{.max_iterations = 50000, .deadline_ms = 10000,
                                      .max_wait_ms = 1};

// `tcp-request content` lines as the configuration writes them (after the stage), and
// `tcp-request inspect-delay`; tcp_inspect as the app sets it (a rule reads the payload).
void content_rules(ProxySettings& p, const std::vector<std::vector<std::string>>& lines,
                   uint32_t inspect_delay_ms) {
  rules::AclRegistry acls;
  for (const auto& words : lines) {
    auto r = rules::parse_tcp_rule(words, rules::TcpRuleStage::kContent, acls);
    ASSERT_TRUE(r.ok()) << r.error().message;
    p.tcp_inspect = p.tcp_inspect || !rules::payload_fetch(r.value().cond).fetch.empty();
    p.tcp_content_rules.push_back(std::move(r.value()));
  }
  p.tcp_inspect_delay_ms = inspect_delay_ms;
}

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

  // A client connected to the proxy, and its session started by the worker. `small`: its
  // socket holds little (fixture::make_small()).
  Peer client(bool small = false) {
    Peer c = fixture::connect_client(h_.port(), small, kSmallBuf, kSmallBuf);
    EXPECT_TRUE(c.open());
    const uint64_t before = h_.fc().stot.get();
    test::RunResult r = h_.run_until([&] { return h_.fc().stot.get() > before; });
    EXPECT_TRUE(r.done()) << r.describe();
    return c;
  }
  // A client and the server connection its session opened.
  // A session with these timeouts on the injected clock: one byte relayed, then both sides
  // silent until the shorter timeout has just passed (nothing closed a millisecond before it).
  void go_silent_past_a_timeout(Peer& c, Peer& s, uint32_t client_ms, uint32_t server_ms) {
    build(
        [&](ProxySettings& p) {
          p.timeouts.client = client_ms;
          p.timeouts.server = server_ms;
        },
        clock_.source());
    connect_both(c, s);
    ASSERT_TRUE(c.send("x"));
    expect_bytes(s, "x");
    clock_.advance(std::min(client_ms, server_ms) - 1);
    expect_quiet(c);
    expect_quiet(s);
    clock_.advance(1 + core::TimerWheel::kTickMs);
  }

  void connect_both(Peer& c, Peer& s, bool small = false) {
    c = client(small);
    s = h_.accept_from(server_);
    ASSERT_TRUE(s.open());
  }
  // Runs the loop until `p` saw the other side close: a FIN (`reset` false) or a reset.
  void expect_closed(Peer& p, bool reset) {
    test::RunResult r = h_.read_to_eof(p);
    ASSERT_TRUE(r.done()) << r.describe();
    EXPECT_EQ(p.in, "");
    EXPECT_EQ(p.error, reset ? ECONNRESET : 0);
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
  Peer c, s;
  // `timeout client`: both sides are closed.
  go_silent_past_a_timeout(c, s, 500, 2000);
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


// Backpressure towards the server: a server that stops reading makes the relay stop reading the
// client once its buffer for that direction is full, so the client's window closes and its
// sends stall instead of the proxy taking everything in. The client then closes its side, and
// the server reads again, slowly (a little per turn, so that the path stays backed up): it gets
// every byte sent, in order, and only then the FIN. The other direction stays open.
TEST_F(TcpSessionTest, ASlowServerHoldsTheClientBackAndLosesNoByte) {
  ASSERT_TRUE(fixture::make_small(server_.fd(), kSmallBuf, kSmallBuf));
  build();
  Peer c, s;
  connect_both(c, s, true);
  Outgoing up{fixture::pattern(kBulk, 1)};
  test::RunResult r = h_.run_until_held(c, [&] { up.push(c); }, h_.fc().bin);
  ASSERT_TRUE(r.done()) << r.describe() << ": the proxy still reads the client, "
                        << h_.fc().bin.get() << " bytes so far";
  EXPECT_LT(h_.fc().bin.get(), kBulk / 2);
  EXPECT_EQ(h_.w().sessions(), 1u);
  c.shutdown_write();
  const std::string sent = up.data.substr(0, up.at);

  r = h_.run_until(
      [&] {
        s.poll_some(kSlowRead);
        return s.eof;
      },
      kBulkLimits);
  ASSERT_TRUE(r.done()) << r.describe() << " server got " << s.in.size() << " of "
                        << sent.size();
  EXPECT_EQ(s.error, 0);
  EXPECT_EQ(s.in.size(), sent.size());
  EXPECT_TRUE(s.take() == sent);
  EXPECT_EQ(h_.fc().bin.get(), sent.size());
  EXPECT_EQ(sc().bin.get(), sent.size());
  ASSERT_TRUE(s.send("done"));
  expect_bytes(c, "done");
  s.shutdown_write();
  expect_fin(c);
  expect_session_ends();
}

// The same towards the client: a client that stops reading makes the relay stop reading the
// server; the server's FIN after its last byte reaches the slowly reading client after all of
// them, and the client may still send afterwards.
TEST_F(TcpSessionTest, ASlowClientHoldsTheServerBackAndLosesNoByte) {
  ASSERT_TRUE(fixture::make_small(server_.fd(), kSmallBuf, kSmallBuf));
  build();
  Peer c, s;
  connect_both(c, s, true);
  Outgoing down{fixture::pattern(kBulk, 2)};
  test::RunResult r = h_.run_until_held(s, [&] { down.push(s); }, h_.fc().bout);
  ASSERT_TRUE(r.done()) << r.describe() << ": the proxy still reads the server, "
                        << h_.fc().bout.get() << " bytes so far";
  EXPECT_LT(h_.fc().bout.get(), kBulk / 2);
  s.shutdown_write();
  const std::string sent = down.data.substr(0, down.at);

  r = h_.run_until(
      [&] {
        c.poll_some(kSlowRead);
        return c.eof;
      },
      kBulkLimits);
  ASSERT_TRUE(r.done()) << r.describe() << " client got " << c.in.size() << " of "
                        << sent.size();
  EXPECT_EQ(c.error, 0);
  EXPECT_EQ(c.in.size(), sent.size());
  EXPECT_TRUE(c.take() == sent);
  EXPECT_EQ(h_.fc().bout.get(), sent.size());
  EXPECT_EQ(sc().bout.get(), sent.size());
  ASSERT_TRUE(c.send("thanks"));
  expect_bytes(s, "thanks");
  c.shutdown_write();
  expect_fin(s);
  expect_session_ends();
}

// `tcp-request inspect-delay` with a rule on the payload: the session waits for the bytes the
// rule needs, without a server connection, and accepts as soon as they are there (well before
// the delay). What came while waiting is forwarded first.
TEST_F(TcpSessionTest, InspectDelayWaitsForTheBytesARuleNeeds) {
  test::ManualClock& clock = clock_;
  build(
      [](ProxySettings& p) {
        content_rules(p, {{"accept", "if", "{", "req.len", "ge", "6", "}"}, {"reject"}}, 1000);
      },
      clock.source());
  Peer c = client();
  ASSERT_TRUE(c.send("abc"));
  clock.advance(500);
  expect_quiet(c);
  EXPECT_FALSE(ProxyHarness::has_pending_accept(server_));
  EXPECT_EQ(h_.w().sessions(), 1u);
  ASSERT_TRUE(c.send("def"));
  Peer s = h_.accept_from(server_);
  ASSERT_TRUE(s.open());
  expect_bytes(s, "abcdef");
  ASSERT_TRUE(s.send("ok"));
  expect_bytes(c, "ok");
  EXPECT_EQ(h_.fc().dreq.get(), 0u);
  EXPECT_EQ(h_.bc().bin.get(), 6u);
}

// The delay runs out before the rule could accept: the rules judge what came as final, the
// reject closes the client with a FIN (its unread bytes read and dropped first, so no reset),
// and no server was ever contacted.
TEST_F(TcpSessionTest, InspectDelayExpiringRejectsOnWhatCame) {
  test::ManualClock& clock = clock_;
  build(
      [](ProxySettings& p) {
        content_rules(p, {{"accept", "if", "{", "req.len", "ge", "6", "}"}, {"reject"}}, 1000);
      },
      clock.source());
  Peer c = client();
  ASSERT_TRUE(c.send("abc"));
  clock.advance(999);
  expect_quiet(c);
  clock.advance(1 + core::TimerWheel::kTickMs);
  expect_closed(c, false);
  EXPECT_EQ(h_.fc().dreq.get(), 1u);
  EXPECT_EQ(h_.bc().stot.get(), 0u);   // never reached the backend
  EXPECT_FALSE(ProxyHarness::has_pending_accept(server_));
  expect_session_ends();
}

// A content rule on addresses only is judged at once, without waiting for a byte.
TEST_F(TcpSessionTest, ContentRejectOnTheSourceIsAtOnce) {
  build([](ProxySettings& p) {
    content_rules(p, {{"reject", "if", "{", "src", "127.0.0.1", "}"}}, 1000);
  });
  Peer c = client();
  expect_closed(c, false);
  EXPECT_EQ(h_.fc().dreq.get(), 1u);
  EXPECT_FALSE(ProxyHarness::has_pending_accept(server_));
  expect_session_ends();
}

// `timeout server`: a server silent longer than it (the client silent too, but its own timeout
// is longer) ends the session, blamed on the server: the client gets a FIN, the server (whose
// FIN never came) a reset, and the abort is counted on the server side.
TEST_F(TcpSessionTest, ServerTimeoutOnTheInjectedClock) {
  Peer c, s;
  go_silent_past_a_timeout(c, s, 2000, 500);
  expect_closed(c, false);
  expect_closed(s, true);
  expect_session_ends();
  EXPECT_EQ(h_.bc().srv_abrt.get(), 1u);
  EXPECT_EQ(sc().srv_abrt.get(), 1u);
  EXPECT_EQ(h_.bc().cli_abrt.get(), 0u);
}

// Activity in either direction moves the deadline: bytes every 400 ms keep a session with
// 500 ms timeouts alive well past 500 ms.
TEST_F(TcpSessionTest, TrafficKeepsTheTimeoutsFromExpiring) {
  test::ManualClock& clock = clock_;
  build(
      [](ProxySettings& p) {
        p.timeouts.client = 500;
        p.timeouts.server = 500;
      },
      clock.source());
  Peer c, s;
  connect_both(c, s);
  for (int i = 0; i < 3; ++i) {
    clock.advance(400);
    ASSERT_TRUE(c.send("ping"));
    expect_bytes(s, "ping");
    ASSERT_TRUE(s.send("pong"));
    expect_bytes(c, "pong");
  }
  EXPECT_FALSE(c.eof);
  EXPECT_EQ(h_.w().sessions(), 1u);
  clock.advance(500 + core::TimerWheel::kTickMs);
  test::RunResult r = h_.run_until([&] {
    c.poll();
    s.poll();
    return c.eof && s.eof;
  });
  ASSERT_TRUE(r.done()) << r.describe();
}

// `timeout connect` against a server that never answers: the attempt that expired is retried
// at once (a timeout waited long enough), and once `retries` is spent the client is closed.
TEST_F(TcpSessionTest, ConnectTimeoutIsRetriedThenGivesUp) {
  fixture::UnansweredPort silent;
  ASSERT_NE(silent.port(), 0);
  test::ManualClock& clock = clock_;
  build(
      [](ProxySettings& p) {
        p.retries = 1;
        p.timeouts.connect = 200;
        p.timeouts.client = 5000;
      },
      clock.source(), silent.port());
  Peer c = client();
  ASSERT_TRUE(c.send("hello"));
  clock.advance(199);
  expect_quiet(c);
  EXPECT_EQ(h_.bc().connect.get(), 1u);
  clock.advance(1 + core::TimerWheel::kTickMs);
  test::RunResult r = h_.run_until([&] { return h_.bc().connect.get() == 2; });
  ASSERT_TRUE(r.done()) << r.describe();
  EXPECT_EQ(h_.bc().wretr.get(), 1u);
  expect_quiet(c);
  clock.advance(200 + core::TimerWheel::kTickMs);
  expect_closed(c, false);
  EXPECT_EQ(h_.bc().connect.get(), 2u);
  EXPECT_EQ(h_.bc().econ.get(), 1u);
  EXPECT_EQ(sc().econ.get(), 1u);
  expect_session_ends();
}

// A refused connect is retried on the same server after the turn-around (`timeout connect` when
// shorter than 1 s), not at once; when every retry is refused the client is closed.
TEST_F(TcpSessionTest, ARefusedServerIsRetriedAfterTheTurnAround) {
  LoopbackPort refusing(false);
  ASSERT_NE(refusing.port(), 0);
  test::ManualClock& clock = clock_;
  build(
      [](ProxySettings& p) {
        p.retries = 2;
        p.timeouts.connect = 300;
      },
      clock.source(), refusing.port());
  Peer c = client();
  test::RunResult r = h_.run_until([&] { return h_.bc().wretr.get() == 1; });
  ASSERT_TRUE(r.done()) << r.describe();
  clock.advance(299);
  expect_quiet(c);
  EXPECT_EQ(h_.bc().connect.get(), 1u);
  clock.advance(1 + core::TimerWheel::kTickMs);
  r = h_.run_until([&] { return h_.bc().wretr.get() == 2; });
  ASSERT_TRUE(r.done()) << r.describe();
  EXPECT_EQ(h_.bc().connect.get(), 2u);
  expect_quiet(c);
  clock.advance(300 + core::TimerWheel::kTickMs);
  expect_closed(c, false);
  EXPECT_EQ(h_.bc().connect.get(), 3u);
  EXPECT_EQ(h_.bc().econ.get(), 1u);
  EXPECT_EQ(h_.bc().wredis.get(), 0u);
  expect_session_ends();
}

// `option redispatch` with `balance first`: the refused server is left for the other one, after
// the turn-around (only round-robin kinds skip it), and the client's bytes reach that server.
TEST_F(TcpSessionTest, ARefusedServerIsLeftForAnotherOne) {
  LoopbackPort refusing(false);
  ASSERT_NE(refusing.port(), 0);
  test::ManualClock& clock = clock_;
  ASSERT_TRUE(h_.build(
      false, {server_at("down", 1, refusing.port()), server_at("up", 2, server_.port())},
      [](ProxySettings& p) {
        p.balance.kind = lb::BalanceKind::kFirst;
        p.retries = 3;
        p.redispatch = -1;
        p.timeouts.connect = 300;
      },
      clock.source()));
  Peer c = client();
  ASSERT_TRUE(c.send("to whoever answers"));
  test::RunResult r = h_.run_until([&] { return h_.bc().wredis.get() == 1; });
  ASSERT_TRUE(r.done()) << r.describe();
  expect_quiet(c);
  EXPECT_FALSE(ProxyHarness::has_pending_accept(server_));
  clock.advance(300 + core::TimerWheel::kTickMs);
  Peer s = h_.accept_from(server_);
  ASSERT_TRUE(s.open());
  expect_bytes(s, "to whoever answers");
  ASSERT_TRUE(s.send("me"));
  expect_bytes(c, "me");
  const int base = h_.px().server_base;
  EXPECT_EQ(h_.w().srv_counters(base + 0).wredis.get(), 1u);
  EXPECT_EQ(h_.w().srv_counters(base + 1).connect.get(), 1u);
  EXPECT_EQ(h_.bc().wretr.get(), 0u);
  EXPECT_EQ(h_.bc().econ.get(), 0u);
  EXPECT_EQ(h_.srv(0).current_conns(), 0);
  EXPECT_EQ(h_.srv(1).current_conns(), 1);
}

// The server's maxconn reached: the next session waits in the backend's queue, without a server
// connection, its client's bytes held; when the first session ends and its slot frees, the
// queued one connects and its bytes go through.
TEST_F(TcpSessionTest, AQueuedSessionProceedsWhenTheServerSlotFrees) {
  ASSERT_TRUE(h_.build(false, {server_at("s1", 1, server_.port(), 1)}));
  Peer c1, s1;
  connect_both(c1, s1);
  Peer c2 = client();
  ASSERT_TRUE(c2.send("second"));
  expect_quiet(c2);
  EXPECT_FALSE(ProxyHarness::has_pending_accept(server_));
  EXPECT_EQ(h_.px().queued.load(), 1);
  // The first session still works meanwhile.
  ASSERT_TRUE(c1.send("first"));
  expect_bytes(s1, "first");
  c1.close();
  s1.close();
  test::RunResult r = h_.run_until([&] { return h_.w().sessions() == 1; });
  ASSERT_TRUE(r.done()) << r.describe();
  h_.dequeue();
  Peer s2 = h_.accept_from(server_);
  ASSERT_TRUE(s2.open());
  expect_bytes(s2, "second");
  EXPECT_EQ(h_.px().queued.load(), 0);
  EXPECT_EQ(h_.px().queued_max.load(), 1);
  EXPECT_EQ(h_.srv(0).current_conns(), 1);
  ASSERT_TRUE(s2.send("served"));
  expect_bytes(c2, "served");
}

// `timeout queue`: a queued session that gets no slot in time is closed, counted as a failed
// connection; the session holding the slot is not disturbed.
TEST_F(TcpSessionTest, QueueTimeoutClosesTheQueuedClient) {
  test::ManualClock& clock = clock_;
  ASSERT_TRUE(h_.build(
      false, {server_at("s1", 1, server_.port(), 1)},
      [](ProxySettings& p) { p.timeouts.queue = 300; }, clock.source()));
  Peer c1, s1;
  connect_both(c1, s1);
  Peer c2 = client();
  ASSERT_TRUE(c2.send("second"));
  clock.advance(299);
  expect_quiet(c2);
  EXPECT_EQ(h_.px().queued.load(), 1);
  clock.advance(1 + core::TimerWheel::kTickMs);
  expect_closed(c2, false);
  EXPECT_EQ(h_.px().queued.load(), 0);
  EXPECT_EQ(h_.bc().econ.get(), 1u);
  EXPECT_FALSE(ProxyHarness::has_pending_accept(server_));
  ASSERT_TRUE(c1.send("still here"));
  expect_bytes(s1, "still here");
  EXPECT_EQ(h_.w().sessions(), 1u);
}

// A soft stop closes the listener (new connections are refused) but leaves an open tunnel to
// finish on its own: bytes still flow both ways, and the worker's loop ends once it is over.
TEST_F(TcpSessionTest, SoftStopLetsAnOpenTunnelFinish) {
  build();
  Peer c, s;
  connect_both(c, s);
  h_.soft_stop();
  test::run_turns(h_.loop(), 3, 2);
  Peer late = fixture::connect_client(h_.port());
  EXPECT_FALSE(late.open()) << "the listener still accepts after a soft stop";
  ASSERT_TRUE(c.send("after the stop"));
  expect_bytes(s, "after the stop");
  ASSERT_TRUE(s.send("still relayed"));
  expect_bytes(c, "still relayed");
  EXPECT_EQ(h_.w().sessions(), 1u);
  c.shutdown_write();
  expect_fin(s);
  // The server's FIN ends the session, and the turn that ends it ends the worker's loop.
  s.shutdown_write();
  test::RunResult r = h_.run_until([] { return false; });
  EXPECT_EQ(r.end, test::RunResult::End::kStopped) << r.describe();
  EXPECT_EQ(h_.w().sessions(), 0u);
  c.poll();
  EXPECT_TRUE(c.eof);
  EXPECT_EQ(c.in, "");
}

}  // namespace
}  // namespace sluice::proxy

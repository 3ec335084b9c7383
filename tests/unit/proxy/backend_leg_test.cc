// The backend leg in process: a Process with one backend, a Worker that is never started (the
// test's thread drives its loop, see support/cpp/loop_runner.h), servers on loopback listeners
// or on bound ports that refuse, and a bare session owning the leg as a TCP or HTTP session
// does. Every wait is bounded (RunLimits), every port is picked by the kernel.
#include "proxy/backend_leg.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "net/transport.h"
#include "proxy/process.h"
#include "proxy/worker.h"
#include "support/cpp/loop_runner.h"
#include "support/cpp/manual_clock.h"
#include "unit/proxy/proxy_fixture.h"

namespace sluice::proxy {
namespace {

using fixture::kLoopback;
using fixture::LoopbackPort;
using fixture::server_at;

// What a session owning a leg does for the worker's queue; the rest of a session is not used.
class Owner : public Session {
 public:
  Owner(Worker& w, uint16_t local_port)
      : client_(net::SocketAddress::ipv4(kLoopback, 40000)), leg(w, *this, client_, local_port) {}
  ~Owner() override { leg.release(); }

  void start() override {}
  void abort(const char*) override {}
  // As the sessions do: a slot taken while queued starts the connect (here: is noted).
  bool retry_from_queue() override {
    if (leg.state() != BackendLeg::State::kQueued) return true;
    if (!leg.take_queued_slot()) return false;
    ++dequeued;
    return true;
  }
  bool uses_server(const lb::Server* s) const override { return leg.server() == s; }
  void describe(SessionInfo*) const override {}
  void on_timer(core::Timer&) override {}

 private:
  net::SocketAddress client_;

 public:
  BackendLeg leg;
  int dequeued = 0;
};

// The server side of a session in the test: the socket the leg opened, watched on the loop.
struct ServerSide : core::IoHandler {
  net::RawTransport io;
  uint32_t events = 0;
  void on_io(uint32_t e) override { events |= e; }
};

class BackendLegTest : public ::testing::Test {
 protected:
  // One backend with `servers`; `clock` (optional) drives the worker's loop.
  void build(std::vector<lb::ServerSettings> servers, lb::BalanceKind balance, int retries,
             int redispatch, base::ClockSource clock = {}) {
    process_ = std::make_unique<Process>(ProcessSettings{});
    ProxySettings p;
    p.name = "be";
    p.backend = true;
    p.servers = std::move(servers);
    p.balance.kind = balance;
    p.retries = retries;
    p.redispatch = redispatch;
    p.timeouts.connect = 200;
    p.timeouts.queue = 300;
    be_ = &process_->add_proxy(std::move(p));
    worker_ = std::make_unique<Worker>(*process_, 0, clock);
  }

  Worker& w() { return *worker_; }
  Proxy& be() { return *be_; }
  lb::Server& srv(int i) { return *be_->backend->servers()[static_cast<std::size_t>(i)]; }
  stats::TrafficCounters& bc() { return worker_->be_counters(be_->index); }
  stats::TrafficCounters& sc(int i) {
    return worker_->srv_counters(be_->server_base + srv(i).index());
  }

  // One connection attempt of `leg` to its picked server, as a session makes it: the socket
  // registered with the loop, then the loop run until the connect is decided. The error, or
  // nothing when it connected (leg.connected() then called).
  std::optional<ConnectError> attempt(BackendLeg& leg, ServerSide& side) {
    int fd = -1;
    ConnectError err;
    BackendLeg::ConnectStatus st = leg.connect(net::ConnectOptions{}, &fd, &err);
    if (st == BackendLeg::ConnectStatus::kFailed) return err;
    side.io.adopt(fd);
    side.events = 0;
    EXPECT_TRUE(side.io.watch(w().loop(), &side));
    if (st == BackendLeg::ConnectStatus::kInProgress) {
      test::RunResult r = test::run_until(w().loop(), [&] { return side.events != 0; });
      EXPECT_TRUE(r.done()) << r.describe();
      const net::Readiness ready = net::decode_readiness(side.events);
      if (ready.hangup_or_error()) {
        int e = side.io.connect_error();
        side.io.close(net::CloseMode::kFin);
        return ConnectError::server(e ? e : ECONNREFUSED);
      }
      EXPECT_TRUE(ready.writable());
    }
    leg.connected();
    return std::nullopt;
  }

  std::unique_ptr<Process> process_;
  Proxy* be_ = nullptr;
  std::unique_ptr<Worker> worker_;
};

TEST_F(BackendLegTest, PicksAndConnectsToALoopbackServer) {
  LoopbackPort server(true);
  ASSERT_NE(server.port(), 0);
  build({server_at("s1", 1, server.port())}, lb::BalanceKind::kRoundRobin, 3, 0);
  Owner owner(w(), 0);
  BackendLeg& leg = owner.leg;
  EXPECT_EQ(leg.state(), BackendLeg::State::kIdle);

  leg.attach(be());
  EXPECT_EQ(be().be_conns.load(), 1);
  EXPECT_EQ(bc().stot.get(), 1u);
  ASSERT_EQ(leg.pick(nullptr), BackendLeg::PickResult::kPicked);
  EXPECT_EQ(leg.state(), BackendLeg::State::kPicked);
  EXPECT_EQ(leg.server(), &srv(0));
  EXPECT_EQ(srv(0).current_conns(), 1);

  ServerSide side;
  EXPECT_EQ(attempt(leg, side), std::nullopt);
  EXPECT_EQ(leg.state(), BackendLeg::State::kConnected);
  EXPECT_NE(leg.connect_ms(), 0u);
  EXPECT_GE(leg.connected_ms(), leg.connect_ms());
  EXPECT_EQ(leg.queued_ms(), 0u);
  EXPECT_EQ(leg.retries(), 0);
  EXPECT_FALSE(leg.redispatched());
  EXPECT_EQ(bc().connect.get(), 1u);
  EXPECT_EQ(sc(0).connect.get(), 1u);
  EXPECT_EQ(sc(0).lbtot.get(), 1u);
  EXPECT_EQ(bc().lbtot.get(), 1u);
  EXPECT_EQ(bc().econ.get(), 0u);
  // The connection reached the listener.
  int accepted = -1;
  test::run_until(w().loop(), [&] {
    accepted = ::accept4(server.fd(), nullptr, nullptr, SOCK_CLOEXEC);
    return accepted >= 0;
  });
  EXPECT_GE(accepted, 0);
  if (accepted >= 0) ::close(accepted);

  leg.release();
  EXPECT_EQ(leg.state(), BackendLeg::State::kIdle);
  EXPECT_EQ(leg.server(), nullptr);
  EXPECT_EQ(leg.backend(), nullptr);
  EXPECT_EQ(srv(0).current_conns(), 0);
  EXPECT_EQ(be().be_conns.load(), 0);
  // The log still reads the timings until reset().
  EXPECT_NE(leg.connected_ms(), 0u);
  leg.reset();
  EXPECT_EQ(leg.connect_ms(), 0u);
  EXPECT_EQ(leg.connected_ms(), 0u);
}

TEST_F(BackendLegTest, RefusedConnectIsRetriedOnAnotherServer) {
  LoopbackPort refusing(false), server(true);
  ASSERT_NE(refusing.port(), 0);
  ASSERT_NE(server.port(), 0);
  // `balance first`: the refusing server (first) is picked first; `option redispatch`.
  build({server_at("down", 1, refusing.port()), server_at("up", 2, server.port())},
        lb::BalanceKind::kFirst, 3, -1);
  Owner owner(w(), 0);
  BackendLeg& leg = owner.leg;
  leg.attach(be());
  ASSERT_EQ(leg.pick(nullptr), BackendLeg::PickResult::kPicked);
  ASSERT_EQ(leg.server(), &srv(0));

  ServerSide side;
  std::optional<ConnectError> e = attempt(leg, side);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->side, ConnectError::Side::kServer);
  EXPECT_EQ(e->err, ECONNREFUSED);
  EXPECT_FALSE(e->timeout);
  EXPECT_TRUE(e->retryable);
  EXPECT_EQ(log::letters(e->term()), "SC");

  // Another usable server and no hash: a redispatch. `first` is no round-robin kind, so the
  // turn-around is waited (bounded by timeout connect) before connecting there.
  const uint64_t now = w().loop().now_ms();
  EXPECT_EQ(leg.fail(*e), BackendLeg::RetryAction::kLater);
  EXPECT_EQ(leg.state(), BackendLeg::State::kRetryWait);
  EXPECT_EQ(leg.retry_due_ms(), now + 200);
  EXPECT_EQ(leg.deadline(), leg.retry_due_ms());
  EXPECT_EQ(leg.server(), &srv(1));
  EXPECT_EQ(leg.retries(), 1);
  EXPECT_TRUE(leg.redispatched());
  EXPECT_EQ(bc().wredis.get(), 1u);
  EXPECT_EQ(sc(0).wredis.get(), 1u);
  EXPECT_EQ(bc().wretr.get(), 0u);
  EXPECT_EQ(srv(0).current_conns(), 0);   // the slot left with the server
  EXPECT_EQ(srv(1).current_conns(), 1);

  // Due: the session connects again, to the other server.
  ServerSide side2;
  EXPECT_EQ(attempt(leg, side2), std::nullopt);
  EXPECT_EQ(leg.state(), BackendLeg::State::kConnected);
  EXPECT_EQ(sc(1).connect.get(), 1u);
  EXPECT_EQ(bc().connect.get(), 2u);
  EXPECT_EQ(bc().econ.get(), 0u);
}

TEST_F(BackendLegTest, GivesUpWhenRetriesAreExhausted) {
  LoopbackPort refusing(false);
  ASSERT_NE(refusing.port(), 0);
  build({server_at("down", 1, refusing.port())}, lb::BalanceKind::kRoundRobin, 2, 0);
  Owner owner(w(), 0);
  BackendLeg& leg = owner.leg;
  leg.attach(be());
  ASSERT_EQ(leg.pick(nullptr), BackendLeg::PickResult::kPicked);

  std::vector<BackendLeg::RetryAction> actions;
  for (int i = 0; i < 3; ++i) {
    ServerSide side;
    std::optional<ConnectError> e = attempt(leg, side);
    ASSERT_TRUE(e.has_value());
    actions.push_back(leg.fail(*e));
  }
  // Two retries of the same server after the turn-around, then no more attempts.
  EXPECT_EQ(actions, (std::vector<BackendLeg::RetryAction>{BackendLeg::RetryAction::kLater,
                                                           BackendLeg::RetryAction::kLater,
                                                           BackendLeg::RetryAction::kGiveUp}));
  EXPECT_EQ(leg.state(), BackendLeg::State::kFailed);
  EXPECT_EQ(leg.retries(), 2);
  EXPECT_FALSE(leg.redispatched());
  EXPECT_EQ(bc().wretr.get(), 2u);
  EXPECT_EQ(sc(0).wretr.get(), 2u);
  EXPECT_EQ(bc().econ.get(), 1u);
  EXPECT_EQ(sc(0).econ.get(), 1u);
  EXPECT_EQ(bc().connect.get(), 3u);
  EXPECT_EQ(leg.server(), &srv(0));   // the slot stays until release()
  leg.release();
  EXPECT_EQ(srv(0).current_conns(), 0);
}

TEST_F(BackendLegTest, QueuesAtMaxconnAndTakesTheFreedSlot) {
  LoopbackPort server(true);
  ASSERT_NE(server.port(), 0);
  build({server_at("s1", 1, server.port(), 1)}, lb::BalanceKind::kRoundRobin, 3, 0);
  Owner first(w(), 0), second(w(), 0);
  first.leg.attach(be());
  ASSERT_EQ(first.leg.pick(nullptr), BackendLeg::PickResult::kPicked);

  second.leg.attach(be());
  ASSERT_EQ(second.leg.pick(nullptr), BackendLeg::PickResult::kFull);
  EXPECT_FALSE(second.leg.enter_queue());   // still full after counting itself in
  EXPECT_EQ(second.leg.state(), BackendLeg::State::kQueued);
  EXPECT_EQ(be().queued.load(), 1);
  EXPECT_EQ(be().queued_max.load(), 1);
  EXPECT_NE(second.leg.queued_ms(), 0u);
  EXPECT_EQ(second.leg.deadline(), second.leg.queued_ms() + 300);
  EXPECT_FALSE(second.leg.take_queued_slot());   // still full
  EXPECT_EQ(second.leg.server(), nullptr);

  // The slot frees; the worker retries its queued sessions (as Process::server_slot_freed()
  // asks every worker to).
  first.leg.release();
  w().request_dequeue();
  test::RunResult r = test::run_until(w().loop(), [&] { return second.dequeued == 1; });
  ASSERT_TRUE(r.done()) << r.describe();
  EXPECT_EQ(second.leg.state(), BackendLeg::State::kPicked);
  EXPECT_EQ(second.leg.server(), &srv(0));
  EXPECT_EQ(be().queued.load(), 0);
  EXPECT_EQ(srv(0).current_conns(), 1);
  ServerSide side;
  EXPECT_EQ(attempt(second.leg, side), std::nullopt);
  EXPECT_EQ(second.leg.state(), BackendLeg::State::kConnected);
}

// The slot frees between the failed pick and the queueing, on a thread that saw no queue yet:
// enter_queue() takes it at once instead of waiting for a dequeue that nobody will ask for.
TEST_F(BackendLegTest, ASlotFreedBeforeQueueingIsTakenAtOnce) {
  LoopbackPort server(true);
  ASSERT_NE(server.port(), 0);
  build({server_at("s1", 1, server.port(), 1)}, lb::BalanceKind::kRoundRobin, 3, 0);
  Owner first(w(), 0), second(w(), 0);
  first.leg.attach(be());
  ASSERT_EQ(first.leg.pick(nullptr), BackendLeg::PickResult::kPicked);
  second.leg.attach(be());
  ASSERT_EQ(second.leg.pick(nullptr), BackendLeg::PickResult::kFull);
  first.leg.release();
  EXPECT_TRUE(second.leg.enter_queue());
  EXPECT_EQ(second.leg.state(), BackendLeg::State::kPicked);
  EXPECT_EQ(second.leg.server(), &srv(0));
  EXPECT_EQ(be().queued.load(), 0);
  EXPECT_EQ(be().queued_max.load(), 1);   // it was counted in the queue, as HAProxy counts it
  EXPECT_EQ(srv(0).current_conns(), 1);
  EXPECT_EQ(second.dequeued, 0);
}

TEST_F(BackendLegTest, NoUsableServerIsNotQueued) {
  LoopbackPort server(true);
  build({server_at("s1", 1, server.port())}, lb::BalanceKind::kRoundRobin, 3, 0);
  be().backend->set_admin_state(srv(0), lb::AdminState::kMaint, 1);
  Owner owner(w(), 0);
  owner.leg.attach(be());
  EXPECT_EQ(owner.leg.pick(nullptr), BackendLeg::PickResult::kNone);
  EXPECT_EQ(owner.leg.server(), nullptr);
}

TEST_F(BackendLegTest, ConnectTimeoutOnTheInjectedClock) {
  test::ManualClock clock;
  LoopbackPort server(true);
  ASSERT_NE(server.port(), 0);
  build({server_at("s1", 1, server.port())}, lb::BalanceKind::kRoundRobin, 1, 0,
        clock.source());
  Owner owner(w(), 0);
  BackendLeg& leg = owner.leg;
  leg.attach(be());
  ASSERT_EQ(leg.pick(nullptr), BackendLeg::PickResult::kPicked);

  // The connect is not reported connected (the session has not seen it writable yet).
  for (int attempt = 0; attempt < 2; ++attempt) {
    int fd = -1;
    ConnectError err;
    ASSERT_NE(leg.connect(net::ConnectOptions{}, &fd, &err), BackendLeg::ConnectStatus::kFailed);
    net::RawTransport io(fd);
    const uint64_t start = w().loop().now_ms();
    EXPECT_EQ(leg.connect_ms(), start);
    EXPECT_EQ(leg.deadline(), start + 200);
    clock.advance(199);
    test::run_turns(w().loop(), 1);
    EXPECT_FALSE(leg.connect_expired(w().loop().now_ms()));
    clock.advance(1);
    test::run_turns(w().loop(), 1);
    ASSERT_TRUE(leg.connect_expired(w().loop().now_ms()));
    const ConnectError timeout = ConnectError::connect_timeout();
    if (attempt == 0) {
      // A timeout has waited long enough: the retry goes at once.
      EXPECT_EQ(leg.fail(timeout), BackendLeg::RetryAction::kNow);
      EXPECT_EQ(leg.state(), BackendLeg::State::kPicked);
      EXPECT_EQ(bc().wretr.get(), 1u);
    } else {
      EXPECT_EQ(leg.fail(timeout), BackendLeg::RetryAction::kGiveUp);
      EXPECT_EQ(log::letters(timeout.term()), "sC");
      EXPECT_EQ(bc().econ.get(), 1u);
    }
  }
}

TEST_F(BackendLegTest, QueueTimeoutOnTheInjectedClock) {
  test::ManualClock clock;
  LoopbackPort server(true);
  build({server_at("s1", 1, server.port(), 1)}, lb::BalanceKind::kRoundRobin, 3, 0,
        clock.source());
  Owner first(w(), 0), second(w(), 0);
  first.leg.attach(be());
  ASSERT_EQ(first.leg.pick(nullptr), BackendLeg::PickResult::kPicked);
  second.leg.attach(be());
  ASSERT_EQ(second.leg.pick(nullptr), BackendLeg::PickResult::kFull);
  EXPECT_FALSE(second.leg.enter_queue());
  EXPECT_FALSE(second.leg.queue_expired(w().loop().now_ms()));
  clock.advance(300);
  test::run_turns(w().loop(), 1);
  ASSERT_TRUE(second.leg.queue_expired(w().loop().now_ms()));

  const ConnectError e = ConnectError::queue_timeout();
  EXPECT_EQ(e.side, ConnectError::Side::kQueue);
  EXPECT_FALSE(e.retryable);
  EXPECT_EQ(log::letters(e.term()), "sQ");
  // Not retryable: given up at once, counted as a failed connection, out of the queue.
  EXPECT_EQ(second.leg.fail(e), BackendLeg::RetryAction::kGiveUp);
  EXPECT_EQ(second.leg.state(), BackendLeg::State::kFailed);
  EXPECT_EQ(be().queued.load(), 0);
  EXPECT_EQ(bc().econ.get(), 1u);
  EXPECT_EQ(bc().wretr.get(), 0u);
  EXPECT_EQ(second.leg.retries(), 0);
}

}  // namespace
}  // namespace sluice::proxy

// HTTP/1 sessions in process: a `listen` section in mode http on loopback, connections accepted
// by the worker's own accept path (proxy_fixture.h), a test server on a loopback listener, and
// assertions on the exact bytes the client and the server receive. The worker's loop runs on
// the test's thread; every wait is bounded (RunLimits), every port picked by the kernel.
#include <gtest/gtest.h>

#include <cerrno>
#include <functional>
#include <string>
#include <vector>

#include "core/timer_wheel.h"
#include "proxy/h1_connection.h"
#include "support/cpp/manual_clock.h"
#include "unit/proxy/proxy_fixture.h"

namespace sluice::proxy {
namespace {

using fixture::LoopbackPort;
using fixture::Peer;
using fixture::ProxyHarness;
using fixture::server_at;

// Requests and responses in the form sluice forwards them unchanged: lower-case field names,
// HTTP/1.1, canonical framing, no hop-by-hop field to rewrite.
const std::string kGetA = "GET /a HTTP/1.1\r\nhost: test\r\n\r\n";
const std::string kGetB = "GET /b HTTP/1.1\r\nhost: test\r\nuser-agent: t\r\n\r\n";
const std::string kOkA = "HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\na";
const std::string kOkB = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nx-b: 1\r\n\r\nbb";

// sluice's own page for `status` (http::error_page), spelled out so that a change shows here.
std::string page(const std::string& status_line, const std::string& text, bool close) {
  const std::string body = "<html><body><h1>" + status_line + "</h1>\n" + text + "\n</body></html>\n";
  return "HTTP/1.1 " + status_line + "\r\ncontent-length: " + std::to_string(body.size()) +
         "\r\ncache-control: no-cache\r\n" + (close ? "connection: close\r\n" : "") +
         "content-type: text/html\r\n\r\n" + body;
}

class H1ConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NE(server_.port(), 0); }
  void TearDown() override {
    // The test's sockets are closed by now (locals of the test body): every session and idle
    // server connection must end, and be freed, on its own.
    EXPECT_TRUE(h_.drain()) << "sessions=" << h_.w().sessions()
                            << " idle=" << h_.w().idle_conns();
  }

  void build(const std::function<void(ProxySettings&)>& tune = {}, base::ClockSource clock = {}) {
    ASSERT_TRUE(h_.build(true, {server_at("s1", 1, server_.port())}, tune, clock));
  }
  stats::TrafficCounters& sc() { return h_.w().srv_counters(h_.px().server_base); }

  // A client connected to the proxy, and its session started by the worker.
  Peer client() {
    Peer c = fixture::connect_client(h_.port());
    EXPECT_TRUE(c.open());
    const uint64_t before = h_.fc().stot.get();
    test::RunResult r = h_.run_until([&] { return h_.fc().stot.get() > before; });
    EXPECT_TRUE(r.done()) << r.describe();
    return c;
  }
  // Runs the loop until `p` received `want` (as many bytes), and checks that it is `want`.
  void expect_bytes(Peer& p, const std::string& want) {
    test::RunResult r = h_.read_at_least(p, want.size());
    EXPECT_TRUE(r.done()) << r.describe();
    EXPECT_EQ(p.take(), want);
  }
  // One more GET /b from `c`, through the server connection `s`, and its answer.
  void exchange_b(Peer& c, Peer& s) {
    ASSERT_TRUE(c.send(kGetB));
    expect_bytes(s, kGetB);
    ASSERT_TRUE(s.send(kOkB));
    expect_bytes(c, kOkB);
  }
  // One more GET /b from `c`, which must go out on a new server connection.
  void exchange_b_on_a_new_server_connection(Peer& c) {
    ASSERT_TRUE(c.send(kGetB));
    Peer s = h_.accept_from(server_);
    ASSERT_TRUE(s.open());
    expect_bytes(s, kGetB);
    ASSERT_TRUE(s.send(kOkB));
    expect_bytes(c, kOkB);
  }
  // A few turns of the loop that may move bytes, then: `p` received nothing more.
  void expect_nothing_more(Peer& p) {
    test::run_turns(h_.loop(), 5, 2);
    p.poll();
    EXPECT_EQ(p.in, "");
    EXPECT_FALSE(p.eof);
  }

  LoopbackPort server_{true};
  // Outlives the test body: TearDown() still runs the loop, which reads it.
  test::ManualClock clock_;
  ProxyHarness h_;
};

TEST_F(H1ConnectionTest, ForwardsAGetAndReusesTheFlowForTheNextRequest) {
  build();
  Peer c = client();
  EXPECT_EQ(h_.w().sessions(), 1u);
  ASSERT_TRUE(c.send(kGetA));
  Peer s = h_.accept_from(server_);
  ASSERT_TRUE(s.open());
  expect_bytes(s, kGetA);
  ASSERT_TRUE(s.send(kOkA));
  expect_bytes(c, kOkA);
  // The transaction ended: the server connection waits in the worker's idle pool.
  test::RunResult r = h_.run_until([&] { return h_.w().idle_conns() == 1; });
  EXPECT_TRUE(r.done()) << r.describe();

  // Keep-alive: the same client connection carries the next request, and (http-reuse safe, a
  // second request of the connection) the same server connection carries it on.
  ASSERT_TRUE(c.send(kGetB));
  expect_bytes(s, kGetB);
  EXPECT_FALSE(ProxyHarness::has_pending_accept(server_));
  ASSERT_TRUE(s.send(kOkB));
  expect_bytes(c, kOkB);
  EXPECT_FALSE(c.eof);
  EXPECT_EQ(h_.w().sessions(), 1u);
  EXPECT_EQ(h_.fc().stot.get(), 1u);
  EXPECT_EQ(h_.fc().req_tot.get(), 2u);
  EXPECT_EQ(h_.fc().hrsp[1].get(), 2u);
  EXPECT_EQ(sc().req_tot.get(), 2u);
  EXPECT_EQ(sc().connect.get(), 1u);
  EXPECT_EQ(sc().reuse.get(), 1u);
  EXPECT_EQ(h_.bc().bout.get(), kOkA.size() + kOkB.size());

  // The client leaves: its session ends; the idle server connection stays pooled.
  c.close();
  r = h_.run_until([&] { return h_.w().sessions() == 0; });
  EXPECT_TRUE(r.done()) << r.describe();
  EXPECT_EQ(h_.w().idle_conns(), 1u);
}

TEST_F(H1ConnectionTest, PipelinedRequestsAreAnsweredInOrder) {
  build();
  Peer c = client();
  // Both requests in one write.
  ASSERT_TRUE(c.send(kGetA + kGetB));
  Peer s = h_.accept_from(server_);
  ASSERT_TRUE(s.open());
  expect_bytes(s, kGetA);
  // The second waits until the first transaction is over.
  expect_nothing_more(s);
  expect_nothing_more(c);
  ASSERT_TRUE(s.send(kOkA));
  expect_bytes(s, kGetB);
  ASSERT_TRUE(s.send(kOkB));
  expect_bytes(c, kOkA + kOkB);
  EXPECT_FALSE(ProxyHarness::has_pending_accept(server_));
  EXPECT_EQ(h_.fc().req_tot.get(), 2u);
}

TEST_F(H1ConnectionTest, PipelinedRequestsGetTheirResponsesInOrderWhenTheServerIsEager) {
  build();
  Peer c = client();
  ASSERT_TRUE(c.send(kGetA + kGetB));
  Peer s = h_.accept_from(server_);
  ASSERT_TRUE(s.open());
  expect_bytes(s, kGetA);
  // The response to A and bytes the server had no request for yet, in one write: the excess
  // makes the server connection unusable, and B goes out on a fresh one.
  ASSERT_TRUE(s.send(kOkA + kOkB));
  expect_bytes(c, kOkA);
  Peer s2 = h_.accept_from(server_);
  ASSERT_TRUE(s2.open());
  expect_bytes(s2, kGetB);
  ASSERT_TRUE(s2.send(kOkB));
  expect_bytes(c, kOkB);
  test::RunResult r = h_.read_to_eof(s);
  EXPECT_TRUE(r.done()) << r.describe();
}

TEST_F(H1ConnectionTest, ExpectContinueIsLeftToTheServer) {
  build();
  Peer c = client();
  const std::string head =
      "POST /up HTTP/1.1\r\nhost: test\r\nexpect: 100-continue\r\ncontent-length: 5\r\n\r\n";
  ASSERT_TRUE(c.send(head));
  Peer s = h_.accept_from(server_);
  ASSERT_TRUE(s.open());
  // The head goes on at once, Expect included; sluice sends no 100 of its own.
  expect_bytes(s, head);
  expect_nothing_more(c);
  // The server's interim response reaches the client; then the body, then the final response.
  const std::string interim = "HTTP/1.1 100 Continue\r\n\r\n";
  ASSERT_TRUE(s.send(interim));
  expect_bytes(c, interim);
  ASSERT_TRUE(c.send("hello"));
  expect_bytes(s, "hello");
  const std::string created = "HTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n";
  ASSERT_TRUE(s.send(created));
  expect_bytes(c, created);
  // The interim status counts on the server only; the frontend counts the final one.
  EXPECT_EQ(sc().hrsp[0].get(), 1u);
  EXPECT_EQ(sc().hrsp[1].get(), 1u);
  EXPECT_EQ(h_.fc().hrsp[0].get(), 0u);
  EXPECT_EQ(h_.fc().hrsp[1].get(), 1u);
  // The connection stays usable.
  exchange_b(c, s);
}

TEST_F(H1ConnectionTest, ExpectContinueAnsweredWithAFinalStatus) {
  build();
  Peer c = client();
  const std::string head =
      "PUT /big HTTP/1.1\r\nhost: test\r\nexpect: 100-continue\r\ncontent-length: 4\r\n\r\n";
  ASSERT_TRUE(c.send(head));
  Peer s = h_.accept_from(server_);
  ASSERT_TRUE(s.open());
  expect_bytes(s, head);
  // The server refuses without waiting for the body: the answer reaches the client at once.
  const std::string refused = "HTTP/1.1 413 Payload Too Large\r\ncontent-length: 0\r\n\r\n";
  ASSERT_TRUE(s.send(refused));
  expect_bytes(c, refused);
  // What the code does today with the body that follows (pinned here, so that a change shows):
  // it completes the request, and the transaction ends in the same step, before the batched
  // send of those bytes; the server connection, holding unsent bytes, is not reusable and is
  // closed with a reset. The body never reaches the server.
  ASSERT_TRUE(c.send("data"));
  test::RunResult r = h_.read_to_eof(s);
  ASSERT_TRUE(r.done()) << r.describe();
  EXPECT_EQ(s.in, "");
  EXPECT_EQ(s.error, ECONNRESET);
  EXPECT_EQ(h_.w().idle_conns(), 0u);
  EXPECT_EQ(h_.fc().hrsp[3].get(), 1u);
  // The client connection stays usable: the next request goes to a new server connection.
  exchange_b_on_a_new_server_connection(c);
  EXPECT_FALSE(c.eof);
}

TEST_F(H1ConnectionTest, ChunkedRequestBodyIsForwardedIntact) {
  build();
  Peer c = client();
  const std::string head =
      "POST /c HTTP/1.1\r\nhost: test\r\ntransfer-encoding: chunked\r\n\r\n";
  const std::string first = "5\r\nhello\r\n";
  const std::string rest =
      "1A\r\nabcdefghijklmnopqrstuvwxyz\r\n"
      "0\r\nx-sum: 31\r\n\r\n";
  // The head and a first chunk, then the rest in a later write.
  ASSERT_TRUE(c.send(head + first));
  Peer s = h_.accept_from(server_);
  ASSERT_TRUE(s.open());
  expect_bytes(s, head + first);
  ASSERT_TRUE(c.send(rest));
  expect_bytes(s, rest);
  ASSERT_TRUE(s.send(kOkA));
  expect_bytes(c, kOkA);
  EXPECT_EQ(h_.fc().req_tot.get(), 1u);
  EXPECT_EQ(h_.fc().ereq.get(), 0u);
  // Complete: the next request of the connection is parsed after it.
  exchange_b(c, s);
}

TEST_F(H1ConnectionTest, ChunkedBodyIsReframedCanonically) {
  build();
  Peer c = client();
  const std::string head =
      "POST /c HTTP/1.1\r\nhost: test\r\ntransfer-encoding: chunked\r\n\r\n";
  // A lower-case size, a chunk extension and a trailer name in capitals: the data, the chunk
  // boundaries and the trailer are kept; the size is written in upper case, the extension is
  // dropped and the trailer name lower-cased.
  ASSERT_TRUE(c.send(head + "a;ext=1\r\n0123456789\r\n0\r\nX-Sum: 10\r\n\r\n"));
  Peer s = h_.accept_from(server_);
  ASSERT_TRUE(s.open());
  expect_bytes(s, head + "A\r\n0123456789\r\n0\r\nx-sum: 10\r\n\r\n");
  ASSERT_TRUE(s.send(kOkA));
  expect_bytes(c, kOkA);
}

TEST_F(H1ConnectionTest, ServerClosingBeforeAnsweringIsA502) {
  build();
  Peer c = client();
  ASSERT_TRUE(c.send(kGetA));
  Peer s = h_.accept_from(server_);
  ASSERT_TRUE(s.open());
  expect_bytes(s, kGetA);
  s.close();
  // The request was read whole: the page leaves the connection persistent (no
  // `connection: close`).
  expect_bytes(c, page("502 Bad Gateway",
                       "The server returned an invalid or incomplete response.", false));
  EXPECT_FALSE(c.eof);
  EXPECT_EQ(h_.bc().eresp.get(), 1u);
  EXPECT_EQ(sc().eresp.get(), 1u);
  EXPECT_EQ(h_.fc().hrsp[4].get(), 1u);
  EXPECT_EQ(sc().hrsp[4].get(), 0u);   // sluice's page, not the server's
  // The next request on the same client connection goes to a new server connection.
  exchange_b_on_a_new_server_connection(c);
}

TEST_F(H1ConnectionTest, ServerClosingInTheMiddleOfItsHeadIsA502) {
  build();
  Peer c = client();
  ASSERT_TRUE(c.send(kGetA));
  Peer s = h_.accept_from(server_);
  ASSERT_TRUE(s.open());
  expect_bytes(s, kGetA);
  ASSERT_TRUE(s.send("HTTP/1.1 200 OK\r\ncontent-le"));
  s.close();
  expect_bytes(c, page("502 Bad Gateway",
                       "The server returned an invalid or incomplete response.", false));
  EXPECT_FALSE(c.eof);
}

TEST_F(H1ConnectionTest, HttpRequestTimeoutOnTheInjectedClockIsA408) {
  test::ManualClock& clock = clock_;
  build([](ProxySettings& p) { p.timeouts.http_request = 1000; }, clock.source());
  Peer c = client();   // silent: no byte of a request
  // Timers never fire early: one millisecond before the timeout nothing happens.
  clock.advance(999);
  expect_nothing_more(c);
  EXPECT_EQ(h_.w().sessions(), 1u);
  // Due (a timer fires at its expiry or up to one wheel tick later): 408 and close.
  clock.advance(1 + core::TimerWheel::kTickMs);
  test::RunResult r = h_.read_to_eof(c);
  ASSERT_TRUE(r.done()) << r.describe();
  EXPECT_EQ(c.error, 0);   // a FIN after the page, no reset
  EXPECT_EQ(c.take(),
            page("408 Request Time-out", "Your browser didn't send a complete request in time.",
                 true));
  EXPECT_EQ(h_.fc().ereq.get(), 1u);
  EXPECT_EQ(h_.fc().hrsp[3].get(), 1u);
  r = h_.run_until([&] { return h_.w().sessions() == 0; });
  EXPECT_TRUE(r.done()) << r.describe();
  EXPECT_FALSE(ProxyHarness::has_pending_accept(server_));   // no server was involved
}

TEST_F(H1ConnectionTest, HttpRequestTimeoutCoversAPartialHead) {
  test::ManualClock& clock = clock_;
  build([](ProxySettings& p) { p.timeouts.http_request = 1000; }, clock.source());
  Peer c = client();
  ASSERT_TRUE(c.send("GET /slow HTTP/1.1\r\nhost: te"));
  test::run_turns(h_.loop(), 3, 2);
  clock.advance(1000 + core::TimerWheel::kTickMs);
  test::RunResult r = h_.read_to_eof(c);
  ASSERT_TRUE(r.done()) << r.describe();
  EXPECT_EQ(c.take(),
            page("408 Request Time-out", "Your browser didn't send a complete request in time.",
                 true));
  EXPECT_FALSE(ProxyHarness::has_pending_accept(server_));
}

TEST_F(H1ConnectionTest, KeepAliveTimeoutClosesAnIdleConnectionSilently) {
  test::ManualClock& clock = clock_;
  build(
      [](ProxySettings& p) {
        p.timeouts.http_request = 1000;
        p.timeouts.http_keep_alive = 300;
      },
      clock.source());
  Peer c = client();
  ASSERT_TRUE(c.send(kGetA));
  Peer s = h_.accept_from(server_);
  ASSERT_TRUE(s.open());
  expect_bytes(s, kGetA);
  ASSERT_TRUE(s.send(kOkA));
  expect_bytes(c, kOkA);
  // Between requests `timeout http-keep-alive` runs, from the end of the response.
  clock.advance(299);
  expect_nothing_more(c);
  clock.advance(1 + core::TimerWheel::kTickMs);
  test::RunResult r = h_.read_to_eof(c);
  ASSERT_TRUE(r.done()) << r.describe();
  EXPECT_EQ(c.in, "");   // no 408 for a connection that was only idle
  EXPECT_EQ(h_.fc().ereq.get(), 0u);
}

}  // namespace
}  // namespace sluice::proxy

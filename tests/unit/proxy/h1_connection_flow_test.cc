// HTTP/1 connections in process, their flow over time: pipelining, bodies larger than what the
// proxy holds (a slow peer on either side), chunked framing, connection closes asked for by
// either side, tunnels (101 and CONNECT), the backend queue, the timeouts between requests and
// the soft stop. Black-box: the test drives sockets, the worker, the settings and the injected
// clock, and reads what the peers receive and the worker's counters; nothing of the session
// classes (proxy_fixture.h; every wait bounded, every port picked by the kernel).
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "core/timer_wheel.h"
#include "support/cpp/manual_clock.h"
#include "unit/proxy/proxy_fixture.h"

namespace sluice::proxy {
namespace {

using fixture::LoopbackPort;
using fixture::Outgoing;
using fixture::Peer;
using fixture::ProxyHarness;
using fixture::server_at;

// Requests and responses in the form sluice forwards them unchanged: lower-case field names,
// HTTP/1.1, canonical framing, no hop-by-hop field to rewrite.
const std::string kGetA = "GET /a HTTP/1.1\r\nhost: test\r\n\r\n";
const std::string kGetB = "GET /b HTTP/1.1\r\nhost: test\r\nuser-agent: t\r\n\r\n";
const std::string kOkA = "HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\na";
const std::string kOkB = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nx-b: 1\r\n\r\nbb";
// kOkA as sluice sends it when the client connection closes after it.
const std::string kOkAClose = "HTTP/1.1 200 OK\r\ncontent-length: 1\r\nconnection: close\r\n\r\na";

// Socket buffers of a peer that stops reading, and a body larger than everything that can sit
// between the two peers then: the sender must stall.
constexpr int kSmallBuf = 4096;
constexpr std::size_t kBulk = 1 << 20;
constexpr test::RunLimits kBulkLimits{.max_iterations = 50000, .deadline_ms = 10000,
                                      .max_wait_ms = 1};
// Soft stop: how long an idle keep-alive connection still waits for a request (the HTTP/1
// code's own constant, spelled out: the test includes none of it).
constexpr uint64_t kStopGraceMs = 1000;

// sluice's own page for `status` (http::error_page), spelled out so that a change shows here.
std::string page(const std::string& status_line, const std::string& text, bool close) {
  const std::string body =
      "<html><body><h1>" + status_line + "</h1>\n" + text + "\n</body></html>\n";
  return "HTTP/1.1 " + status_line + "\r\ncontent-length: " + std::to_string(body.size()) +
         "\r\ncache-control: no-cache\r\n" + (close ? "connection: close\r\n" : "") +
         "content-type: text/html\r\n\r\n" + body;
}

// `data` as a chunked body in chunks of `piece` bytes (the last one shorter), sizes in
// upper-case hex, then `trailers` (complete field lines) and the blank line.
std::string chunked(const std::string& data, std::size_t piece, const std::string& trailers) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (std::size_t at = 0; at < data.size(); at += piece) {
    const std::size_t n = std::min(piece, data.size() - at);
    std::string size;
    for (std::size_t v = n; v; v >>= 4) size.insert(size.begin(), kHex[v & 15]);
    out += size + "\r\n";
    out.append(data, at, n);
    out += "\r\n";
  }
  return out + "0\r\n" + trailers + "\r\n";
}

// A chunked body read back: its data and trailer lines, once the last chunk and the blank line
// that ends the trailers came (`complete`); `bad` on a framing error.
struct Dechunked {
  bool complete = false;
  bool bad = false;
  std::string data;
  std::string trailers;
};

Dechunked dechunk(std::string_view in) {
  Dechunked d;
  for (;;) {
    const std::size_t eol = in.find("\r\n");
    if (eol == std::string_view::npos) return d;
    std::size_t n = 0;
    for (char ch : in.substr(0, eol)) {
      const int v = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
      if (v < 0) {
        d.bad = true;
        return d;
      }
      n = n * 16 + static_cast<std::size_t>(v);
    }
    in.remove_prefix(eol + 2);
    if (n == 0) break;
    if (in.size() < n + 2) return d;
    if (in.substr(n, 2) != "\r\n") {
      d.bad = true;
      return d;
    }
    d.data.append(in.substr(0, n));
    in.remove_prefix(n + 2);
  }
  const std::size_t end = in.find("\r\n\r\n");
  if (in.substr(0, 2) == "\r\n") {
    d.complete = true;
  } else if (end != std::string_view::npos) {
    d.trailers.assign(in.substr(0, end + 2));
    d.complete = true;
  }
  return d;
}

class HttpFlowTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NE(server_.port(), 0); }
  void TearDown() override {
    EXPECT_TRUE(h_.drain()) << "sessions=" << h_.w().sessions()
                            << " idle=" << h_.w().idle_conns();
  }

  // One server, with `maxconn` (0: none).
  void build(const std::function<void(ProxySettings&)>& tune = {}, base::ClockSource clock = {},
             int maxconn = 0) {
    ASSERT_TRUE(h_.build(true, {server_at("s1", 1, server_.port(), maxconn)}, tune, clock));
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
  // The server connection the proxy opens next.
  Peer server() {
    Peer s = h_.accept_from(server_);
    EXPECT_TRUE(s.open());
    return s;
  }
  // Runs the loop until `p` received `want` (as many bytes), and checks that it is `want`.
  void expect_bytes(Peer& p, const std::string& want) {
    test::RunResult r = h_.read_at_least(p, want.size());
    EXPECT_TRUE(r.done()) << r.describe();
    EXPECT_EQ(p.take(), want);
  }
  // A few turns of the loop that may move bytes, then: `p` received nothing more.
  void expect_nothing_more(Peer& p) {
    test::run_turns(h_.loop(), 5, 2);
    p.poll();
    EXPECT_EQ(p.in, "");
    EXPECT_FALSE(p.eof);
  }
  // Runs the loop until `p` saw the other side close, after `want`: with a FIN (`reset` false)
  // or a reset.
  void expect_close(Peer& p, const std::string& want, bool reset) {
    test::RunResult r = h_.read_to_eof(p);
    ASSERT_TRUE(r.done()) << r.describe();
    EXPECT_EQ(p.take(), want);
    EXPECT_EQ(p.error, reset ? ECONNRESET : 0);
  }
  // One request and its answer, through the server connection `s`.
  void exchange(Peer& c, Peer& s, const std::string& req, const std::string& res) {
    ASSERT_TRUE(c.send(req));
    expect_bytes(s, req);
    ASSERT_TRUE(s.send(res));
    expect_bytes(c, res);
  }
  // Pushes `out` into `from` until the proxy holds it back (ProxyHarness::run_until_held();
  // `read`: what the proxy read from it), then checks that the proxy took a bounded part.
  void expect_held_back(Peer& from, Outgoing& out, const stats::LocalCounter& read) {
    test::RunResult r = h_.run_until_held(from, [&] { out.push(from); }, read);
    ASSERT_TRUE(r.done()) << r.describe() << ": the proxy still reads, " << read.get()
                          << " bytes so far";
    EXPECT_LT(read.get(), out.data.size() / 2);
  }
  // Pushes the rest of `out` into `from` while `to` reads, until `to` received all of it. The
  // buffers of both are raised first, for speed.
  void resume(Peer& from, Outgoing& out, Peer& to) {
    ASSERT_TRUE(fixture::set_socket_buffers(from.fd(), 0, 1 << 20));
    ASSERT_TRUE(fixture::set_socket_buffers(to.fd(), 1 << 20, 0));
    test::RunResult r = h_.run_until(
        [&] {
          out.push(from);
          to.poll();
          return to.in.size() >= out.data.size() || to.eof;
        },
        kBulkLimits);
    ASSERT_TRUE(r.done()) << r.describe() << " got " << to.in.size() << " of "
                          << out.data.size();
  }
  // Pushes `out` (`head`, then a chunked body) from `from` until `to` received the head and the
  // whole body: it must carry `data` and `trailers` once dechunked. What `to` got is taken.
  void expect_chunked(Outgoing& out, Peer& from, Peer& to, const std::string& head,
                      const std::string& data, const std::string& trailers) {
    Dechunked got;
    test::RunResult r = h_.run_until(
        [&] {
          out.push(from);
          to.poll();
          if (to.in.size() < head.size()) return false;
          got = dechunk(std::string_view(to.in).substr(head.size()));
          return got.complete || got.bad;
        },
        kBulkLimits);
    ASSERT_TRUE(r.done()) << r.describe() << " got " << to.in.size();
    EXPECT_EQ(to.in.substr(0, head.size()), head);
    ASSERT_FALSE(got.bad);
    EXPECT_TRUE(got.data == data);
    EXPECT_EQ(got.trailers, trailers);
    to.take();
  }

  // One more request from `c` and its answer, through the server connection that carries it:
  // `s` when the proxy reuses it, else a new one (which `s` becomes).
  void exchange_on_any(Peer& c, Peer& s, const std::string& req, const std::string& res) {
    ASSERT_TRUE(c.send(req));
    int fd = -1;
    test::RunResult r = h_.run_until([&] {
      s.poll();
      if (!s.in.empty()) return true;
      fd = ::accept4(server_.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      return fd >= 0;
    });
    ASSERT_TRUE(r.done()) << r.describe();
    if (fd >= 0) s = Peer(fd);
    expect_bytes(s, req);
    ASSERT_TRUE(s.send(res));
    expect_bytes(c, res);
  }

  LoopbackPort server_{true};
  // Outlives the test body: TearDown() still runs the loop, which reads it.
  test::ManualClock clock_;
  ProxyHarness h_;
};

// Three requests in one write, one with a body: each goes to the server once the previous
// transaction is over, on the same server connection, and the answers come back in order.
TEST_F(HttpFlowTest, PipelinedRequestsWithABodyStayInOrder) {
  build();
  Peer c = client();
  const std::string post = "POST /p HTTP/1.1\r\nhost: test\r\ncontent-length: 5\r\n\r\nhello";
  const std::string created = "HTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n";
  ASSERT_TRUE(c.send(kGetA + post + kGetB));
  Peer s = server();
  expect_bytes(s, kGetA);
  expect_nothing_more(s);
  ASSERT_TRUE(s.send(kOkA));
  expect_bytes(s, post);
  expect_nothing_more(s);
  ASSERT_TRUE(s.send(created));
  expect_bytes(s, kGetB);
  ASSERT_TRUE(s.send(kOkB));
  expect_bytes(c, kOkA + created + kOkB);
  EXPECT_FALSE(ProxyHarness::has_pending_accept(server_));
  EXPECT_EQ(h_.fc().req_tot.get(), 3u);
  EXPECT_EQ(sc().req_tot.get(), 3u);
  EXPECT_EQ(h_.fc().hrsp[1].get(), 3u);
}

// A client that stops reading a large response: the proxy stops reading the server once it
// holds a bounded amount for the client, so the server's window closes and its sends stall;
// when the client reads again the body arrives whole and the client connection stays usable.
TEST_F(HttpFlowTest, ALargeResponseToASlowClientHoldsTheServerBack) {
  ASSERT_TRUE(fixture::make_small(server_.fd(), kSmallBuf, kSmallBuf));
  build();
  Peer c = client(true);
  ASSERT_TRUE(c.send(kGetA));
  Peer s = server();
  expect_bytes(s, kGetA);
  const std::string head =
      "HTTP/1.1 200 OK\r\ncontent-length: " + std::to_string(kBulk) + "\r\n\r\n";
  Outgoing down{head + fixture::pattern(kBulk, 3)};
  expect_held_back(s, down, h_.fc().bout);
  EXPECT_EQ(h_.w().sessions(), 1u);
  resume(s, down, c);
  EXPECT_EQ(c.in.size(), down.data.size());
  EXPECT_TRUE(c.take() == down.data);
  EXPECT_EQ(h_.fc().bout.get(), down.data.size());
  EXPECT_EQ(h_.fc().hrsp[1].get(), 1u);
  exchange_on_any(c, s, kGetB, kOkB);
}

// A server that stops reading a large upload: the proxy stops reading the client, whose sends
// stall; once the server reads again the body arrives whole, and its answer reaches the client.
TEST_F(HttpFlowTest, ALargeRequestBodyToASlowServerHoldsTheClientBack) {
  ASSERT_TRUE(fixture::make_small(server_.fd(), kSmallBuf, kSmallBuf));
  build();
  Peer c = client(true);
  const std::string head =
      "POST /up HTTP/1.1\r\nhost: test\r\ncontent-length: " + std::to_string(kBulk) + "\r\n\r\n";
  Outgoing up{head + fixture::pattern(kBulk, 4)};
  up.push(c);
  Peer s = server();
  expect_held_back(c, up, h_.fc().bin);
  resume(c, up, s);
  EXPECT_EQ(s.in.size(), up.data.size());
  EXPECT_TRUE(s.take() == up.data);
  const std::string created = "HTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n";
  ASSERT_TRUE(s.send(created));
  expect_bytes(c, created);
  EXPECT_EQ(h_.fc().bin.get(), up.data.size());
  exchange_on_any(c, s, kGetB, kOkB);
}

// Chunked bodies both ways, larger than what the proxy holds at once: decoded and re-chunked
// on the way (chunk boundaries may move), the data and the trailers arrive intact, and the
// framing ends where it should: the client connection carries a next request. (Which server
// connection carries it is AnIdleServerConnectionOutlivesALargeResponse's concern.)
TEST_F(HttpFlowTest, LargeChunkedBodiesBothWaysArriveIntact) {
  build();
  Peer c = client();
  const std::string req_head =
      "POST /c HTTP/1.1\r\nhost: test\r\ntransfer-encoding: chunked\r\n\r\n";
  const std::string req_data = fixture::pattern(300000, 5);
  Outgoing up{req_head + chunked(req_data, 7777, "x-req: 1\r\n")};
  up.push(c);
  Peer s = server();
  expect_chunked(up, c, s, req_head, req_data, "x-req: 1\r\n");

  const std::string res_head = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n";
  const std::string res_data = fixture::pattern(300000, 6);
  Outgoing down{res_head + chunked(res_data, 4093, "x-res: 2\r\n")};
  expect_chunked(down, s, c, res_head, res_data, "x-res: 2\r\n");
  exchange_on_any(c, s, kGetB, kOkB);
  EXPECT_EQ(h_.fc().ereq.get(), 0u);
  EXPECT_EQ(h_.bc().eresp.get(), 0u);
}

// A chunked response is streamed: each chunk reaches the client as it comes, before the server
// sent the rest (nothing waits for the end of the body).
TEST_F(HttpFlowTest, AChunkedResponseIsStreamedChunkByChunk) {
  build();
  Peer c = client();
  ASSERT_TRUE(c.send(kGetA));
  Peer s = server();
  expect_bytes(s, kGetA);
  const std::string head = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n";
  ASSERT_TRUE(s.send(head + "5\r\nhello\r\n"));
  expect_bytes(c, head + "5\r\nhello\r\n");
  ASSERT_TRUE(s.send("6\r\n world\r\n"));
  expect_bytes(c, "6\r\n world\r\n");
  expect_nothing_more(c);
  ASSERT_TRUE(s.send("0\r\n\r\n"));
  expect_bytes(c, "0\r\n\r\n");
  exchange(c, s, kGetB, kOkB);
}

// `Connection: close` from the client: the field is hop-by-hop (not forwarded), the response
// says `connection: close`, and the client connection closes with a FIN after it. The server
// connection, which nobody asked to close, waits in the idle pool.
TEST_F(HttpFlowTest, ConnectionCloseFromTheClientClosesAfterTheResponse) {
  build();
  Peer c = client();
  ASSERT_TRUE(c.send("GET /a HTTP/1.1\r\nhost: test\r\nconnection: close\r\n\r\n"));
  Peer s = server();
  expect_bytes(s, kGetA);
  ASSERT_TRUE(s.send(kOkA));
  expect_close(c, kOkAClose, false);
  test::RunResult r = h_.run_until([&] { return h_.w().sessions() == 0; });
  ASSERT_TRUE(r.done()) << r.describe();
  EXPECT_EQ(h_.w().idle_conns(), 1u);
  expect_nothing_more(s);
}

// `Connection: close` from the server: its connection is not reused (closed by the proxy once
// the response is complete), the field does not reach the client, whose connection stays
// persistent; its next request goes out on a new server connection.
TEST_F(HttpFlowTest, ConnectionCloseFromTheServerKeepsTheClient) {
  build();
  Peer c = client();
  ASSERT_TRUE(c.send(kGetA));
  Peer s = server();
  expect_bytes(s, kGetA);
  ASSERT_TRUE(s.send("HTTP/1.1 200 OK\r\ncontent-length: 1\r\nconnection: close\r\n\r\na"));
  expect_bytes(c, kOkA);
  test::RunResult r = h_.read_to_eof(s);
  ASSERT_TRUE(r.done()) << r.describe();
  EXPECT_EQ(s.in, "");
  EXPECT_EQ(h_.w().idle_conns(), 0u);
  EXPECT_FALSE(c.eof);
  ASSERT_TRUE(c.send(kGetB));
  Peer s2 = server();
  expect_bytes(s2, kGetB);
  ASSERT_TRUE(s2.send(kOkB));
  expect_bytes(c, kOkB);
  EXPECT_EQ(sc().connect.get(), 2u);
}

// 101 Switching Protocols: the upgrade fields travel both ways, then the connection is a tunnel:
// bytes both ways untouched (bytes the server sent with its 101 included), each FIN passed on
// after the bytes before it, and the session ends when both directions are closed.
TEST_F(HttpFlowTest, SwitchingProtocolsTunnelsBytesBothWays) {
  build();
  Peer c = client();
  // (A WebSocket upgrade must carry a well-formed key, else it is a 400, as in HAProxy.)
  const std::string upgrade =
      "GET /ws HTTP/1.1\r\nhost: test\r\nconnection: upgrade\r\nupgrade: websocket\r\n"
      "sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";
  ASSERT_TRUE(c.send(upgrade));
  Peer s = server();
  expect_bytes(s, upgrade);
  const std::string switched =
      "HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: websocket\r\n\r\n";
  ASSERT_TRUE(s.send(switched + "first frame"));
  expect_bytes(c, switched + "first frame");
  ASSERT_TRUE(c.send("GET /not-http HTTP/1.1\r\n\r\n"));   // not parsed any more
  expect_bytes(s, "GET /not-http HTTP/1.1\r\n\r\n");
  c.shutdown_write();
  test::RunResult r = h_.read_to_eof(s);
  ASSERT_TRUE(r.done()) << r.describe();
  EXPECT_EQ(s.error, 0);
  ASSERT_TRUE(s.send("after the client's FIN"));
  expect_bytes(c, "after the client's FIN");
  s.shutdown_write();
  expect_close(c, "", false);
  r = h_.run_until([&] { return h_.w().sessions() == 0; });
  ASSERT_TRUE(r.done()) << r.describe();
  EXPECT_EQ(h_.fc().hrsp[0].get(), 1u);
  EXPECT_EQ(h_.fc().req_tot.get(), 1u);
}

// CONNECT: the server's 2xx turns the connection into a tunnel, bytes both ways.
TEST_F(HttpFlowTest, ConnectTunnelsBytesBothWays) {
  build();
  Peer c = client();
  const std::string connect = "CONNECT db.test:5432 HTTP/1.1\r\nhost: db.test:5432\r\n\r\n";
  ASSERT_TRUE(c.send(connect));
  Peer s = server();
  expect_bytes(s, connect);
  const std::string established = "HTTP/1.1 200 Connection established\r\n\r\n";
  ASSERT_TRUE(s.send(established));
  expect_bytes(c, established);
  ASSERT_TRUE(c.send(std::string("\x00\x01 binary up", 12)));
  expect_bytes(s, std::string("\x00\x01 binary up", 12));
  ASSERT_TRUE(s.send("binary down\xff"));
  expect_bytes(c, "binary down\xff");
  s.shutdown_write();
  expect_close(c, "", false);
  c.shutdown_write();
  expect_close(s, "", false);
  test::RunResult r = h_.run_until([&] { return h_.w().sessions() == 0; });
  ASSERT_TRUE(r.done()) << r.describe();
  EXPECT_EQ(h_.fc().hrsp[1].get(), 1u);
}

// The server's maxconn reached: the next request waits in the queue, no server connection
// opened for it; `timeout queue` expiring answers it with a 503 that keeps the connection (the
// request was read whole), counted as a failed connection. The request holding the slot is
// not disturbed.
TEST_F(HttpFlowTest, QueueTimeoutIsA503) {
  test::ManualClock& clock = clock_;
  build([](ProxySettings& p) { p.timeouts.queue = 300; }, clock.source(), 1);
  Peer c1 = client();
  ASSERT_TRUE(c1.send(kGetA));
  Peer s1 = server();
  expect_bytes(s1, kGetA);
  Peer c2 = client();
  ASSERT_TRUE(c2.send(kGetB));
  // Queued once its head is read: `timeout queue` runs from there.
  test::RunResult r = h_.run_until([&] { return h_.px().queued.load() == 1; });
  ASSERT_TRUE(r.done()) << r.describe();
  clock.advance(299);
  expect_nothing_more(c2);
  EXPECT_FALSE(ProxyHarness::has_pending_accept(server_));
  clock.advance(1 + core::TimerWheel::kTickMs);
  expect_bytes(c2, page("503 Service Unavailable",
                        "No server is available to handle this request.", false));
  EXPECT_FALSE(c2.eof);
  EXPECT_EQ(h_.px().queued.load(), 0);
  EXPECT_EQ(h_.bc().econ.get(), 1u);
  EXPECT_EQ(h_.fc().hrsp[4].get(), 1u);
  ASSERT_TRUE(s1.send(kOkA));
  expect_bytes(c1, kOkA);
}

// A queued request goes to the server once the slot the first transaction held frees (the end
// of its response), on a connection of its own: the first one, idle in the pool now, carried a
// single request and http-reuse safe keeps such connections for their own client.
TEST_F(HttpFlowTest, AQueuedRequestIsServedWhenTheSlotFrees) {
  build({}, {}, 1);
  Peer c1 = client();
  ASSERT_TRUE(c1.send(kGetA));
  Peer s1 = server();
  expect_bytes(s1, kGetA);
  Peer c2 = client();
  ASSERT_TRUE(c2.send(kGetB));
  expect_nothing_more(c2);
  EXPECT_EQ(h_.px().queued.load(), 1);
  ASSERT_TRUE(s1.send(kOkA));
  expect_bytes(c1, kOkA);
  EXPECT_EQ(h_.srv(0).current_conns(), 0);
  h_.dequeue();
  Peer s2 = server();
  expect_bytes(s2, kGetB);
  EXPECT_EQ(h_.px().queued.load(), 0);
  EXPECT_EQ(h_.px().queued_max.load(), 1);
  EXPECT_EQ(h_.srv(0).current_conns(), 1);
  ASSERT_TRUE(s2.send(kOkB));
  expect_bytes(c2, kOkB);
  EXPECT_EQ(h_.fc().hrsp[1].get(), 2u);
}

// Between requests `timeout http-keep-alive` applies only until a byte of the next request
// comes; from then on `timeout http-request` bounds the whole head, counted from the end of the
// previous response (not from that first byte): a slow head gets a 408 at that point.
TEST_F(HttpFlowTest, HttpRequestTimeoutOfALaterRequestCountsFromThePreviousResponse) {
  test::ManualClock& clock = clock_;
  build(
      [](ProxySettings& p) {
        p.timeouts.http_request = 1000;
        p.timeouts.http_keep_alive = 300;
      },
      clock.source());
  Peer c = client();
  ASSERT_TRUE(c.send(kGetA));
  Peer s = server();
  expect_bytes(s, kGetA);
  ASSERT_TRUE(s.send(kOkA));
  expect_bytes(c, kOkA);
  clock.advance(200);
  ASSERT_TRUE(c.send("GET /slow HTTP/1.1\r\nhost: "));
  test::run_turns(h_.loop(), 3, 2);
  clock.advance(200);   // past the keep-alive timeout: the request has started
  expect_nothing_more(c);
  clock.advance(599);   // 999 ms after the response
  expect_nothing_more(c);
  clock.advance(1 + core::TimerWheel::kTickMs);
  expect_close(c,
               page("408 Request Time-out",
                    "Your browser didn't send a complete request in time.", true),
               false);
  EXPECT_EQ(h_.fc().ereq.get(), 1u);
  expect_nothing_more(s);
}

// A soft stop and an idle keep-alive connection: its idle server connection is closed at once,
// the listener refuses new clients, and the client connection gets a grace period for a next
// request; none comes, so it is closed with a FIN (no page). Once it is gone the worker's loop
// ends.
TEST_F(HttpFlowTest, SoftStopClosesAnIdleKeepAliveConnection) {
  test::ManualClock& clock = clock_;
  build({}, clock.source());
  Peer c = client();
  ASSERT_TRUE(c.send(kGetA));
  Peer s = server();
  expect_bytes(s, kGetA);
  ASSERT_TRUE(s.send(kOkA));
  expect_bytes(c, kOkA);
  test::RunResult r = h_.run_until([&] { return h_.w().idle_conns() == 1; });
  ASSERT_TRUE(r.done()) << r.describe();
  h_.soft_stop();
  r = h_.read_to_eof(s);
  ASSERT_TRUE(r.done()) << r.describe();
  EXPECT_EQ(h_.w().idle_conns(), 0u);
  EXPECT_FALSE(fixture::connect_client(h_.port()).open()) << "still accepting after a soft stop";
  clock.advance(kStopGraceMs - 1);
  expect_nothing_more(c);
  clock.advance(1 + core::TimerWheel::kTickMs);
  expect_close(c, "", false);
  // Lingering until the client's own FIN: then the session ends, and the worker with it.
  c.close();
  r = h_.run_until([] { return false; });
  EXPECT_EQ(r.end, test::RunResult::End::kStopped) << r.describe();
  EXPECT_EQ(h_.w().sessions(), 0u);
}

// A soft stop while a request is with the server: it completes, its response says
// `connection: close`, and the connection closes after it with a FIN.
TEST_F(HttpFlowTest, SoftStopLetsAnInFlightRequestComplete) {
  build();
  Peer c = client();
  ASSERT_TRUE(c.send(kGetA));
  Peer s = server();
  expect_bytes(s, kGetA);
  h_.soft_stop();
  test::run_turns(h_.loop(), 3, 2);
  EXPECT_EQ(h_.w().sessions(), 1u);
  expect_nothing_more(c);
  ASSERT_TRUE(s.send(kOkA));
  expect_close(c, kOkAClose, false);
  c.close();
  test::RunResult r = h_.run_until([] { return false; });
  EXPECT_EQ(r.end, test::RunResult::End::kStopped) << r.describe();
  EXPECT_EQ(h_.w().sessions(), 0u);
}

// A soft stop between two requests, and the next one arrives within the grace: it is served
// (on a new server connection: the idle one was closed by the stop), with `connection: close`.
TEST_F(HttpFlowTest, SoftStopServesARequestThatArrivesInTheGrace) {
  test::ManualClock& clock = clock_;
  build({}, clock.source());
  Peer c = client();
  ASSERT_TRUE(c.send(kGetA));
  Peer s = server();
  expect_bytes(s, kGetA);
  ASSERT_TRUE(s.send(kOkA));
  expect_bytes(c, kOkA);
  h_.soft_stop();
  test::run_turns(h_.loop(), 3, 2);
  clock.advance(kStopGraceMs / 2);
  ASSERT_TRUE(c.send(kGetB));
  Peer s2 = server();
  expect_bytes(s2, kGetB);
  ASSERT_TRUE(s2.send(kOkB));
  expect_close(c, "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nx-b: 1\r\nconnection: close\r\n\r\nbb",
               false);
  c.close();
  test::RunResult r = h_.run_until([] { return false; });
  EXPECT_EQ(r.end, test::RunResult::End::kStopped) << r.describe();
}

// `timeout server`: a server that does not answer in time gets its connection closed and the
// client a 504 page; the connection stays usable for the next request.
TEST_F(HttpFlowTest, ServerTimeoutBeforeTheResponseIsA504) {
  test::ManualClock& clock = clock_;
  build([](ProxySettings& p) { p.timeouts.server = 500; }, clock.source());
  Peer c = client();
  ASSERT_TRUE(c.send(kGetA));
  Peer s = server();
  expect_bytes(s, kGetA);
  clock.advance(499);
  expect_nothing_more(c);
  clock.advance(1 + core::TimerWheel::kTickMs);
  expect_bytes(c, page("504 Gateway Time-out", "The server didn't respond in time.", false));
  EXPECT_FALSE(c.eof);
  test::RunResult r = h_.read_to_eof(s);
  ASSERT_TRUE(r.done()) << r.describe();
  EXPECT_EQ(h_.bc().eresp.get(), 1u);
  ASSERT_TRUE(c.send(kGetB));
  Peer s2 = server();
  expect_bytes(s2, kGetB);
  ASSERT_TRUE(s2.send(kOkB));
  expect_bytes(c, kOkB);
}

// An idle server connection in the worker's pool closes when its server sends bytes or closes,
// not on a bare EPOLLOUT (send space freed). After a response larger than what the proxy holds
// for a client at once (64 KiB) such a wake-up comes after the connection was parked: it used
// to close it (the server saw a reset and the next request took a new connection).
TEST_F(HttpFlowTest, AnIdleServerConnectionOutlivesALargeResponse) {
  build();
  Peer c = client();
  ASSERT_TRUE(c.send(kGetA));
  Peer s = server();
  expect_bytes(s, kGetA);
  Outgoing down{"HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\n" +
                fixture::pattern(100000, 7)};
  test::RunResult r = h_.run_until(
      [&] {
        down.push(s);
        c.poll();
        return c.in.size() >= down.data.size();
      },
      kBulkLimits);
  ASSERT_TRUE(r.done()) << r.describe();
  EXPECT_TRUE(c.take() == down.data);
  r = h_.run_until([&] { return h_.w().idle_conns() == 1; });
  ASSERT_TRUE(r.done()) << r.describe();
  test::run_turns(h_.loop(), 20, 2);
  ASSERT_EQ(h_.w().idle_conns(), 1u);
  s.poll();
  ASSERT_FALSE(s.eof);
  exchange(c, s, kGetB, kOkB);
  EXPECT_EQ(sc().reuse.get(), 1u);
}

}  // namespace
}  // namespace sluice::proxy

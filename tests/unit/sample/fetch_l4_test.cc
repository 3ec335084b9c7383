// Layer-4 fetches (HAProxy 7.3.3): addresses and ports of both connections, tcp_info of the
// sockets, proxy and listener names, timeouts and errors through Env. Expected texts were
// checked against HAProxy 3.5.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sample/expr.h"

namespace sluice::sample {
namespace {

class TestEnv : public Env {
 public:
  std::map<Query, int64_t> q;
  std::map<TextQuery, std::string> t;
  std::string fe = "fe", be = "be", srv = "s1", so;
  int fe_id = 2, be_id = 3, srv_id = 1, so_id = 0;

  bool query(Query k, int64_t* out) const override {
    auto it = q.find(k);
    if (it == q.end()) return false;
    *out = it->second;
    return true;
  }
  bool text(TextQuery k, std::string_view* out) const override {
    auto it = t.find(k);
    if (it == t.end()) return false;
    *out = it->second;
    return true;
  }
  std::string_view frontend_name() const override { return fe; }
  int frontend_id() const override { return fe_id; }
  std::string_view backend_name() const override { return be; }
  int backend_id() const override { return be_id; }
  std::string_view server_name() const override { return srv; }
  int server_id() const override { return srv_id; }
  std::string_view listener_name() const override { return so; }
  int listener_id() const override { return so_id; }
};

std::string parse_error(std::string_view text, uint32_t avail = kAtAny) {
  ParseCtx pc;
  pc.avail = avail;
  auto r = Expr::parse(text, pc);
  return r.ok() ? std::string("ok") : r.error().message;
}

std::string eval(std::string_view text, const Ctx& ctx = Ctx{}) {
  ParseCtx pc;
  auto r = Expr::parse(text, pc);
  if (!r.ok()) return "parse error: " + r.error().message;
  std::string out;
  if (!r->eval_text(ctx, out)) return "<none>";
  return out;
}

net::SocketAddress v6(const char* ip, uint16_t port) {
  sockaddr_in6 sa{};
  sa.sin6_family = AF_INET6;
  sa.sin6_port = htons(port);
  inet_pton(AF_INET6, ip, &sa.sin6_addr);
  return net::SocketAddress::from_sockaddr(reinterpret_cast<sockaddr*>(&sa), sizeof(sa));
}

TEST(FetchL4, ClientAddressesAndPorts) {
  auto src = net::SocketAddress::ipv4(0x0a000001, 40000);   // 10.0.0.1
  auto dst = net::SocketAddress::ipv4(0x7f000001, 8080);
  Ctx ctx;
  ctx.avail = kAtTcpConnection;
  ctx.src = &src;
  ctx.dst = &dst;
  EXPECT_EQ(eval("src", ctx), "10.0.0.1");
  EXPECT_EQ(eval("src_port", ctx), "40000");
  EXPECT_EQ(eval("dst", ctx), "127.0.0.1");
  EXPECT_EQ(eval("dst_port", ctx), "8080");
  EXPECT_EQ(eval("fc_src", ctx), "10.0.0.1");
  EXPECT_EQ(eval("fc_src_port", ctx), "40000");
  EXPECT_EQ(eval("fc_dst", ctx), "127.0.0.1");
  EXPECT_EQ(eval("fc_dst_port", ctx), "8080");
  auto s6 = v6("2001:db8::1", 1234);
  ctx.src = &s6;
  EXPECT_EQ(eval("src", ctx), "2001:db8::1");
  EXPECT_EQ(eval("src_port", ctx), "1234");
  ParseCtx pc;
  auto e = Expr::parse("src", pc);
  ASSERT_TRUE(e.ok());
  Sample s;
  ASSERT_TRUE(e->eval(ctx, s));
  EXPECT_EQ(s.type, Type::kIpv6);
  // Without an address; the port the caller noted when it has no local address.
  Ctx none;
  EXPECT_EQ(eval("src", none), "<none>");
  EXPECT_EQ(eval("dst_port", none), "<none>");
  none.dst_port = 443;
  EXPECT_EQ(eval("dst_port", none), "443");
}

TEST(FetchL4, UnixSocketsHaveNoAddress) {
  auto u = net::SocketAddress::unix_path("/tmp/sluice-test.sock");
  ASSERT_TRUE(u.ok());
  Ctx ctx;
  ctx.src = &*u;
  ctx.dst = &*u;
  EXPECT_EQ(eval("src", ctx), "<none>");
  EXPECT_EQ(eval("src_port", ctx), "<none>");
  EXPECT_EQ(eval("dst", ctx), "<none>");
  EXPECT_EQ(eval("dst_port", ctx), "<none>");
  // HAProxy 3.5 answers 1 for src_is_local on a UNIX socket.
  EXPECT_EQ(eval("src_is_local", ctx), "1");
  EXPECT_EQ(eval("dst_is_local", ctx), "1");
}

TEST(FetchL4, IsLocalAsksTheHost) {
  auto lo = net::SocketAddress::ipv4(0x7f000001, 5555);
  auto far = net::SocketAddress::ipv4(0xc0000201, 5555);   // 192.0.2.1, TEST-NET-1
  Ctx ctx;
  ctx.src = &lo;
  ctx.dst = &far;
  EXPECT_EQ(eval("src_is_local", ctx), "1");
  EXPECT_EQ(eval("fc_src_is_local", ctx), "1");
  EXPECT_EQ(eval("dst_is_local", ctx), "0");
  EXPECT_EQ(eval("fc_dst_is_local", ctx), "0");
  EXPECT_EQ(eval("src_is_local"), "<none>");
}

TEST(FetchL4, ServerConnection) {
  auto local = net::SocketAddress::ipv4(0x7f000001, 33000);
  auto server = net::SocketAddress::ipv4(0x7f000002, 8000);
  Ctx ctx;
  ctx.srv_src = &local;
  ctx.srv_dst = &server;
  EXPECT_EQ(eval("bc_src", ctx), "127.0.0.1");
  EXPECT_EQ(eval("bc_src_port", ctx), "33000");
  EXPECT_EQ(eval("bc_dst", ctx), "127.0.0.2");
  EXPECT_EQ(eval("bc_dst_port", ctx), "8000");
  EXPECT_EQ(eval("bc_dst"), "<none>");
  EXPECT_EQ(eval("bc_rtt"), "<none>");
  EXPECT_EQ(parse_error("bc_dst", kAtHttpRequest),
            "sample fetch <bc_dst> may not be reliably used here because it needs 'server "
            "address' which is not available here");
  EXPECT_EQ(parse_error("bc_rtt", kAtTcpConnection), "ok");
  EXPECT_EQ(parse_error("bc.timer.connect", kAtHttpRequest),
            "sample fetch <bc.timer.connect> may not be reliably used here because it needs "
            "'server address' which is not available here");
}

// A connected loopback TCP pair; closes both on destruction.
struct TcpPair {
  int listener = -1, client = -1, server = -1;
  TcpPair() {
    listener = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(sa);
    if (bind(listener, reinterpret_cast<sockaddr*>(&sa), len) != 0 || listen(listener, 1) != 0 ||
        getsockname(listener, reinterpret_cast<sockaddr*>(&sa), &len) != 0)
      return;
    client = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(client, reinterpret_cast<sockaddr*>(&sa), len) != 0) return;
    server = accept(listener, nullptr, nullptr);
  }
  ~TcpPair() {
    for (int fd : {listener, client, server})
      if (fd >= 0) close(fd);
  }
};

TEST(FetchL4, TcpInfoOfTheSockets) {
  TcpPair p;
  ASSERT_GE(p.server, 0);
  ASSERT_EQ(write(p.client, "hello", 5), 5);
  char buf[8];
  ASSERT_EQ(read(p.server, buf, sizeof(buf)), 5);
  Ctx ctx;
  ctx.cli_fd = p.server;
  ctx.srv_fd = p.client;
  int64_t us = std::stoll(eval("fc_rtt(us)", ctx));
  int64_t ms = std::stoll(eval("fc_rtt", ctx));
  EXPECT_GT(us, 0);
  EXPECT_EQ(std::stoll(eval("fc_rtt(ms)", ctx)), ms);
  EXPECT_LE(ms, us / 1000 + 1);   // ms = us / 1000 (the kernel may update in between)
  EXPECT_GE(std::stoll(eval("fc_rttvar(us)", ctx)), 0);
  EXPECT_GT(std::stoll(eval("bc_rtt(us)", ctx)), 0);
  EXPECT_GE(std::stoll(eval("bc_rttvar", ctx)), 0);
  EXPECT_EQ(eval("fc_unacked", ctx), "0");
  EXPECT_EQ(eval("fc_sacked", ctx), "0");
  EXPECT_EQ(eval("fc_retrans", ctx), "0");
  EXPECT_EQ(eval("fc_lost", ctx), "0");
  EXPECT_EQ(eval("fc_fackets", ctx), "0");
  EXPECT_GT(std::stoll(eval("fc_reordering", ctx)), 0);
  // A unit on a counter is accepted and ignored (HAProxy warns).
  EXPECT_EQ(eval("fc_unacked(us)", ctx), "0");
  EXPECT_EQ(parse_error("fc_rtt(xx)"),
            "invalid args in fetch method 'fc_rtt' : expects 'us' or 'ms', got 'xx'");
  EXPECT_EQ(parse_error("fc_rtt()"),
            "invalid args in fetch method 'fc_rtt' : expects 'us' or 'ms', got ''");
  EXPECT_EQ(parse_error("bc_rttvar(s)"),
            "invalid args in fetch method 'bc_rttvar' : expects 'us' or 'ms', got 's'");
  EXPECT_EQ(parse_error("fc_rtt(us,)"), "fetch method 'fc_rtt' : expected ')' before ',)'");
  // Not a TCP socket, or none.
  int sp[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
  ctx.cli_fd = sp[0];
  EXPECT_EQ(eval("fc_rtt", ctx), "<none>");
  EXPECT_EQ(eval("fc_unacked", ctx), "<none>");
  close(sp[0]);
  close(sp[1]);
  EXPECT_EQ(eval("fc_rtt"), "<none>");
}

TEST(FetchL4, NamesAndIdsThroughEnv) {
  TestEnv env;
  Ctx ctx;
  ctx.env = &env;
  EXPECT_EQ(eval("fe_name", ctx), "fe");
  EXPECT_EQ(eval("fe_id", ctx), "2");
  EXPECT_EQ(eval("be_name", ctx), "be");
  EXPECT_EQ(eval("be_id", ctx), "3");
  EXPECT_EQ(eval("srv_name", ctx), "s1");
  EXPECT_EQ(eval("srv_id", ctx), "1");
  // A listener without a name or id gives nothing; so does a frontend without a default
  // backend.
  EXPECT_EQ(eval("so_name", ctx), "<none>");
  EXPECT_EQ(eval("so_id", ctx), "<none>");
  EXPECT_EQ(eval("fe_defbe", ctx), "<none>");
  env.so = "usock";
  env.so_id = 2;
  env.t[Env::TextQuery::kDefaultBackend] = "app";
  EXPECT_EQ(eval("so_name", ctx), "usock");
  EXPECT_EQ(eval("so_id", ctx), "2");
  EXPECT_EQ(eval("fe_defbe", ctx), "app");
  EXPECT_EQ(eval("fe_name"), "<none>");
  EXPECT_EQ(parse_error("be_name", kAtTcpContent),
            "sample fetch <be_name> may not be reliably used here because it needs 'backend' "
            "which is not available here");
  EXPECT_EQ(parse_error("fe_name", kAtTcpConnection), "ok");
}

TEST(FetchL4, TimeoutsErrorsAndMuxStateThroughEnv) {
  TestEnv env;
  Ctx ctx;
  ctx.env = &env;
  EXPECT_EQ(eval("fe_client_timeout", ctx), "<none>");
  EXPECT_EQ(eval("fc_err", ctx), "<none>");
  env.q[Env::Query::kFeClientTimeout] = 5000;
  env.q[Env::Query::kCurClientTimeout] = 2500;
  env.q[Env::Query::kBeServerTimeout] = 7000;
  env.q[Env::Query::kCurTunnelTimeout] = 60000;
  env.q[Env::Query::kBeMaxRetries] = 3;
  env.q[Env::Query::kFcErr] = 0;
  env.q[Env::Query::kDstConn] = 1;
  env.q[Env::Query::kBcReused] = 1;
  env.q[Env::Query::kFcNbStreams] = 4;
  env.t[Env::TextQuery::kFcErrStr] = "Success";
  env.t[Env::TextQuery::kFcErrName] = "";
  EXPECT_EQ(eval("fe_client_timeout", ctx), "5000");
  EXPECT_EQ(eval("cur_client_timeout", ctx), "2500");
  EXPECT_EQ(eval("be_server_timeout", ctx), "7000");
  EXPECT_EQ(eval("cur_tunnel_timeout", ctx), "60000");
  EXPECT_EQ(eval("be_max_retries", ctx), "3");
  EXPECT_EQ(eval("fc_err", ctx), "0");
  EXPECT_EQ(eval("fc_err_str", ctx), "Success");
  EXPECT_EQ(eval("fc_err_name", ctx), "");   // a value, empty: no error
  EXPECT_EQ(eval("bc_err_name", ctx), "<none>");
  EXPECT_EQ(eval("dst_conn", ctx), "1");
  EXPECT_EQ(eval("bc_reused", ctx), "1");
  EXPECT_EQ(eval("fc_nb_streams", ctx), "4");
}

TEST(FetchL4, HttpMajorAndAcceptDate) {
  TestEnv env;
  Ctx ctx;
  ctx.env = &env;
  EXPECT_EQ(eval("fc_http_major", ctx), "<none>");
  ctx.avail = kAtHttpRequest;
  ctx.req.version = "HTTP/1.1";
  EXPECT_EQ(eval("fc_http_major", ctx), "1");
  env.q[Env::Query::kFcHttpMajor] = 2;
  EXPECT_EQ(eval("fc_http_major", ctx), "2");
  EXPECT_EQ(eval("accept_date", ctx), "<none>");
  env.q[Env::Query::kAcceptDateUs] = 1796202158798123;
  EXPECT_EQ(eval("accept_date", ctx), "1796202158");
  EXPECT_EQ(eval("accept_date(s)", ctx), "1796202158");
  EXPECT_EQ(eval("accept_date(ms)", ctx), "1796202158798");
  EXPECT_EQ(eval("accept_date(us)", ctx), "1796202158798123");
  EXPECT_EQ(parse_error("accept_date(xx)"),
            "invalid args in fetch method 'accept_date' : expects 's', 'ms' or 'us', got 'xx'");
  EXPECT_EQ(parse_error("accept_date()"),
            "invalid args in fetch method 'accept_date' : expects 's', 'ms' or 'us', got ''");
}

// The transaction's timers and byte counts: one Env question each (the proxy answers with the
// log's numbers), nothing when the Env does not know.
TEST(FetchL4, TransactionTimersAndBytesThroughEnv) {
  TestEnv env;
  Ctx ctx;
  ctx.env = &env;
  using Q = Env::Query;
  const std::pair<const char*, Q> rows[] = {
      {"txn.timer.total", Q::kTxnTotalMs}, {"txn.timer.user", Q::kTxnUserMs},
      {"req.timer.idle", Q::kReqIdleMs},   {"req.timer.tq", Q::kReqTqMs},
      {"req.timer.hdr", Q::kReqHdrMs},     {"req.timer.queue", Q::kReqQueueMs},
      {"res.timer.hdr", Q::kResHdrMs},     {"res.timer.data", Q::kResDataMs},
      {"bytes_in", Q::kReqBytesIn},        {"req.bytes_in", Q::kReqBytesIn},
      {"req.bytes_out", Q::kReqBytesOut},  {"bytes_out", Q::kResBytesIn},
      {"res.bytes_in", Q::kResBytesIn},    {"res.bytes_out", Q::kResBytesOut},
  };
  for (const auto& [name, q] : rows) EXPECT_EQ(eval(name, ctx), "<none>") << name;
  for (const auto& [name, q] : rows) env.q[q] = 10 + static_cast<int64_t>(q);
  for (const auto& [name, q] : rows) {
    EXPECT_EQ(eval(name, ctx), std::to_string(10 + static_cast<int64_t>(q))) << name;
    const FetchDef* f = find_fetch(name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_EQ(f->out, Type::kSint) << name;
  }
  env.q[Q::kTxnTotalMs] = -102;   // before the end, as HAProxy answers in http-response
  EXPECT_EQ(eval("txn.timer.total", ctx), "-102");
  EXPECT_EQ(eval("request_date", ctx), "<none>");
  env.q[Q::kRequestDateUs] = 1796473008319424;
  EXPECT_EQ(eval("request_date", ctx), "1796473008");
  EXPECT_EQ(eval("request_date(s)", ctx), "1796473008");
  EXPECT_EQ(eval("request_date(ms)", ctx), "1796473008319");
  EXPECT_EQ(eval("request_date(us)", ctx), "1796473008319424");
  EXPECT_EQ(parse_error("request_date(xx)"),
            "invalid args in fetch method 'request_date' : expects 's', 'ms' or 'us', got 'xx'");
  EXPECT_EQ(parse_error("request_date()"),
            "invalid args in fetch method 'request_date' : expects 's', 'ms' or 'us', got ''");
}

// Where HAProxy 3.5 lets them stand, with the name of what they need in its messages.
TEST(FetchL4, TransactionTimersWhereTheyStand) {
  auto needs = [](std::string_view what, const char* fetch) {
    return fmt::format("sample fetch <{}> may not be reliably used here because it needs '{}' "
                       "which is not available here", fetch, what);
  };
  for (auto f : {"txn.timer.total", "txn.timer.user", "bytes_in", "req.bytes_in",
                 "req.bytes_out"})
    EXPECT_EQ(parse_error(f, kAtTcpContent), "ok") << f;
  EXPECT_EQ(parse_error("txn.timer.total", kAtTcpSession),
            needs("transaction statistics", "txn.timer.total"));
  EXPECT_EQ(parse_error("bytes_in", kAtTcpSession),
            needs("request buffer statistics", "bytes_in"));
  for (auto f : {"res.timer.data", "bytes_out", "res.bytes_in", "res.bytes_out"}) {
    EXPECT_EQ(parse_error(f, kAtHttpRequest), needs("response buffer statistics", f)) << f;
    EXPECT_EQ(parse_error(f, kAtTcpResponse), "ok") << f;
    EXPECT_EQ(parse_error(f, kAtHttpResponse), "ok") << f;
  }
  for (auto f : {"req.timer.idle", "req.timer.tq", "req.timer.hdr", "request_date"})
    EXPECT_EQ(parse_error(f, kAtHttpRequest), "ok") << f;
  EXPECT_EQ(parse_error("request_date", kAtTcpContent), "ok");
  EXPECT_EQ(parse_error("request_date", kAtTcpSession), needs("HTTP request", "request_date"));
  EXPECT_EQ(parse_error("req.timer.idle", kAtTcpSession),
            needs("HTTP request headers", "req.timer.idle"));
  EXPECT_EQ(parse_error("req.timer.queue", kAtHttpRequest), needs("server address", "req.timer.queue"));
  EXPECT_EQ(parse_error("res.timer.hdr", kAtHttpRequest),
            needs("HTTP response headers", "res.timer.hdr"));
  for (auto f : {"txn.timer.total", "req.timer.queue", "res.timer.hdr", "res.timer.data",
                 "request_date", "bytes_out", "res.bytes_out"})
    EXPECT_EQ(parse_error(f, kAtLog), "ok") << f;
}

TEST(FetchL4, ProxyProtocolFetchesWaitForIt) {
  EXPECT_EQ(eval("fc_rcvd_proxy"), "0");
  EXPECT_EQ(eval("fc_pp_authority"), "<none>");
  EXPECT_EQ(eval("fc_pp_unique_id"), "<none>");
  EXPECT_EQ(eval("fc_pp_tlv(AUTHORITY)"), "<none>");
  for (auto ok : {"fc_pp_tlv(0x01)", "fc_pp_tlv(1)", "fc_pp_tlv(255)", "fc_pp_tlv(authority)",
                  "fc_pp_tlv(SSL_CN)", "fc_pp_tlv(NETNS)", "fc_pp_tlv()"})
    EXPECT_EQ(parse_error(ok), "ok") << ok;
  EXPECT_EQ(parse_error("fc_pp_tlv(256)"),
            "invalid args in fetch method 'fc_pp_tlv' : Invalid TLV Type '256'");
  EXPECT_EQ(parse_error("fc_pp_tlv(-1)"),
            "invalid args in fetch method 'fc_pp_tlv' : Invalid TLV Type '-1'");
  EXPECT_EQ(parse_error("fc_pp_tlv(xx)"),
            "invalid args in fetch method 'fc_pp_tlv' : Could not convert type 'xx'");
  EXPECT_EQ(parse_error("fc_pp_tlv(0x)"),
            "invalid args in fetch method 'fc_pp_tlv' : Could not convert type '0x'");
}

TEST(FetchL4, RowsAndRefusals) {
  for (auto name : {"src", "dst", "fc_src", "bc_dst"}) {
    const FetchDef* f = find_fetch(name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_EQ(f->match, "ip") << name;
  }
  for (auto name : {"src_port", "dst_port", "fc_rtt", "be_id", "fe_client_timeout"}) {
    const FetchDef* f = find_fetch(name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_EQ(f->out, Type::kSint) << name;
    EXPECT_EQ(f->match, "int") << name;
  }
  EXPECT_EQ(find_fetch("src")->use, kUseL4Cli);
  EXPECT_EQ(find_fetch("be_name")->use, kUseBackend);
  EXPECT_EQ(find_fetch("srv_name")->use, kUseServer);
  EXPECT_EQ(parse_error("fc_saved_syn"),
            "fetch method 'fc_saved_syn' is not supported by sluice yet (it needs the bind "
            "option tcp-ss)");
  EXPECT_EQ(parse_error("fs.id"),
            "fetch method 'fs.id' is not supported by sluice yet (it needs the multiplexer's "
            "stream state)");
  EXPECT_EQ(parse_error("src_conn_cur"),
            "fetch method 'src_conn_cur' is not supported by sluice yet (it needs stick tables)");
  EXPECT_EQ(parse_error("fc_nope"), "unknown fetch method 'fc_nope'");
}

}  // namespace
}  // namespace sluice::sample

namespace sluice::sample {
namespace {

// HAProxy 3.5's places: response rules and log formats have what outlives the request (its
// method, version, captures, unique id), not its headers, URI or body.
TEST(FetchPlaces, TheRequestPastItsRules) {
  auto needs = [](const char* fetch) {
    return fmt::format("sample fetch <{}> may not be reliably used here because it needs 'HTTP "
                       "request headers' which is not available here",
                       fetch);
  };
  for (const char* f : {"path", "url", "query", "base", "req.cook_names", "req.hdrs",
                        "req.timer.hdr", "url_port"}) {
    EXPECT_EQ(parse_error(f, kAtHttpResponse), needs(f)) << f;
    EXPECT_EQ(parse_error(f, kAtLog), needs(f)) << f;
    EXPECT_EQ(parse_error(f, kAtHttpRequest), "ok") << f;
  }
  for (const char* f : {"method", "req.ver", "capture.req.uri", "capture.req.method",
                        "capture.req.ver", "unique-id", "capture.res.ver"}) {
    EXPECT_EQ(parse_error(f, kAtHttpResponse), "ok") << f;
    EXPECT_EQ(parse_error(f, kAtLog), "ok") << f;
    EXPECT_EQ(parse_error(f, kAtHttpRequest), "ok") << f;
  }
}

}  // namespace
}  // namespace sluice::sample

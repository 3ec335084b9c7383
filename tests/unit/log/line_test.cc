#include "log/line.h"

#include "base/strings.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice::log {
namespace {

Record base_record(const net::SocketAddress& client) {
  Record r;
  r.client = &client;
  r.date_wall_us = 1764547200123456ULL;
  r.frontend = "fe";
  r.backend = "be";
  r.server = "s1";
  r.actconn = 3;
  r.feconn = 2;
  r.beconn = 1;
  r.srvconn = 0;
  return r;
}

TEST(LogLine, TcplogFields) {
  auto client = net::SocketAddress::ipv4(0x7f000001, 40000);
  Record r = base_record(client);
  r.tw = 0;
  r.tc = 1;
  r.total = 25;
  r.bytes_out = 4096;
  r.term = {Cause::kClientClose, FinalState::kData};
  r.retries = 2;
  r.redispatched = true;
  EXPECT_EQ(tcplog_line(r),
            "127.0.0.1:40000 [" + base::log_date(r.date_wall_us) +
                "] fe be/s1 0/1/25 4096 CD 3/2/1/0/+2 0/0");
}

TEST(LogLine, HttplogWithCapturesAndEscapedRequest) {
  auto client = net::SocketAddress::ipv4(0x7f000001, 40001);
  Record r = base_record(client);
  r.server = "<NOSRV>";
  r.tr = 0;
  r.total = 0;
  r.status = 403;
  r.bytes_out = 192;
  r.term = {Cause::kProxy, FinalState::kRequest};
  std::vector<std::string> caps = {"a|b", ""};
  r.req_capture_slots = 2;
  r.req_captures = caps;
  r.request_line = "GET /a\"b HTTP/1.1";
  EXPECT_EQ(httplog_line(r),
            "127.0.0.1:40001 [" + base::log_date(r.date_wall_us) +
                "] fe be/<NOSRV> 0/-1/-1/-1/0 403 192 - - "
            "PR-- 3/2/1/0/0 0/0 {a#7Cb|} \"GET /a#22b HTTP/1.1\"");
}

TEST(LogLine, HttplogOfARequestThatNeverParsed) {
  auto client = net::SocketAddress::ipv4(0x7f000001, 40002);
  Record r = base_record(client);
  r.status = 400;
  r.term = {Cause::kProxy, FinalState::kRequest};
  std::string line = httplog_line(r);
  EXPECT_NE(line.find("\"<BADREQ>\""), std::string::npos) << line;
  EXPECT_EQ(line.find('{'), std::string::npos) << line;   // no capture configured: absent
}

}  // namespace
}  // namespace sluice::log

namespace sluice::log {
namespace {

using Q = sample::Env::Query;

int64_t ask(const Record& r, Q q, bool ended) {
  int64_t v = 12345;
  EXPECT_TRUE(stream_query(r, q, ended, &v));
  return v;
}

// The numbers of HAProxy 3.5's log line "%Ta %Tu %Ti %Tq %TR %Tw %Tr %Td %B %U" against its
// fetches, on one request (idle 100 ms, head 46 ms, response head 55 ms, data 30 ms):
// "131 131 100 146 46 0 55 30 195 49" and, in http-response, txn.timer.total -100,
// res.timer.data -201, byte counts 0.
TEST(StreamQuery, TheLogsNumbersAndHaproxysBeforeTheEnd) {
  net::SocketAddress client = net::SocketAddress::ipv4(0x7f000001, 40000);
  Record r = base_record(client);
  r.http = true;
  r.ti = 100;
  r.tr = 46;
  r.tw = 0;
  r.tc = 0;
  r.tresp = 55;
  r.total = 131;
  r.bytes_out = 195;
  r.bytes_in = 49;
  r.bytes_to_client = 285;
  DerivedTimes d = derived_times(r);
  EXPECT_EQ(d.tq, 146);
  EXPECT_EQ(d.tt, 231);
  EXPECT_EQ(d.tu, 131);
  EXPECT_EQ(d.td, 30);
  EXPECT_EQ(ask(r, Q::kTxnTotalMs, true), 131);
  EXPECT_EQ(ask(r, Q::kTxnUserMs, true), 131);
  EXPECT_EQ(ask(r, Q::kReqIdleMs, true), 100);
  EXPECT_EQ(ask(r, Q::kReqTqMs, true), 146);
  EXPECT_EQ(ask(r, Q::kReqHdrMs, true), 46);
  EXPECT_EQ(ask(r, Q::kReqQueueMs, true), 0);
  EXPECT_EQ(ask(r, Q::kResHdrMs, true), 55);
  EXPECT_EQ(ask(r, Q::kResDataMs, true), 30);
  EXPECT_EQ(ask(r, Q::kRequestDateUs, true), 1764547200123456LL);
  EXPECT_EQ(ask(r, Q::kReqBytesIn, true), 49);
  EXPECT_EQ(ask(r, Q::kResBytesIn, true), 195);
  EXPECT_EQ(ask(r, Q::kResBytesOut, true), 285);
  // Before the end: HAProxy's close time is 0.
  EXPECT_EQ(ask(r, Q::kTxnTotalMs, false), -100);
  EXPECT_EQ(ask(r, Q::kTxnUserMs, false), -100);
  EXPECT_EQ(ask(r, Q::kResDataMs, false), -201);
  EXPECT_EQ(ask(r, Q::kResHdrMs, false), 55);
  EXPECT_EQ(ask(r, Q::kReqBytesIn, false), 0);
  EXPECT_EQ(ask(r, Q::kResBytesOut, false), 0);
  // No response head yet: res.timer.data is -1, whatever the end.
  r.tresp = -1;
  EXPECT_EQ(ask(r, Q::kResDataMs, true), -1);
  EXPECT_EQ(ask(r, Q::kResDataMs, false), -1);
  int64_t v = 0;
  EXPECT_FALSE(stream_query(r, Q::kFcHandshakeMs, true, &v));
}

// TCP (HAProxy 3.5: "%Ta %Tu %Tw %Td %B %U" 424 424 1 424 140 42, and txn.timer.total 424,
// res.timer.data -1: no response head).
TEST(StreamQuery, TcpSession) {
  net::SocketAddress client = net::SocketAddress::ipv4(0x7f000001, 40000);
  Record r = base_record(client);
  r.tw = 1;
  r.tc = 0;
  r.total = 424;
  r.bytes_in = 42;
  r.bytes_out = 140;
  r.bytes_to_client = 140;
  EXPECT_EQ(ask(r, Q::kTxnTotalMs, true), 424);
  EXPECT_EQ(ask(r, Q::kTxnUserMs, true), 424);
  EXPECT_EQ(ask(r, Q::kReqQueueMs, true), 1);
  EXPECT_EQ(ask(r, Q::kResDataMs, true), -1);
  EXPECT_EQ(ask(r, Q::kReqBytesOut, true), 42);
  EXPECT_EQ(ask(r, Q::kResBytesOut, true), 140);
}

}  // namespace
}  // namespace sluice::log

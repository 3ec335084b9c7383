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

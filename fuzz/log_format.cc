// Fuzzes the log-format parser and renderer: the first byte chooses how the format is parsed
// (spaces merged or kept, what `%[...]` may read), the rest is the format. A format must parse
// or be refused without crashing, and one that parses renders a line for a fixed record.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "log/format.h"

namespace {

using namespace sluice;

const std::vector<http::Header>& req_headers() {
  static const std::vector<http::Header> h = {
      {"Host", "www.example.com"}, {"User-Agent", "curl/8.0"}, {"Cookie", "a=1; b=2"}};
  return h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  uint8_t ctl = data[0];
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  bool merge = !(ctl & 1);
  uint32_t avail = (ctl & 2) ? sample::kAtTcpConnection : log::kLogAvail;
  auto f = log::Format::parse(text, avail, merge);
  if (!f.ok()) {
    if (f.error().message.empty()) std::abort();
    return 0;
  }

  static const net::SocketAddress client = net::SocketAddress::ipv4(0xc0000201, 40000);
  static const net::SocketAddress local = net::SocketAddress::ipv4(0x7f000001, 8080);
  static const net::SocketAddress server = net::SocketAddress::ipv4(0x7f000002, 9000);
  static const std::string captures[2] = {"www.example.com", "a|b{c}"};
  log::Record r;
  r.client = &client;
  r.local = &local;
  r.server_addr = &server;
  r.backend_src = &local;
  r.date_wall_us = 1700000000123456ULL;
  r.accept_wall_us = 1700000000000001ULL;
  r.frontend = "fe";
  r.backend = "be";
  r.server = "s1";
  r.tr = 1;
  r.tw = 0;
  r.tc = 2;
  r.tresp = 3;
  r.total = 7;
  r.status = 200;
  r.bytes_out = 1234;
  r.bytes_in = 99;
  r.actconn = 1;
  r.feconn = 1;
  r.beconn = 1;
  r.srvconn = 1;
  r.req_capture_slots = 2;
  r.req_captures = captures;
  r.request_line = "GET /a?b=\"c\" HTTP/1.1";
  r.http = !(ctl & 4);
  r.unique_id = "id-1";
  r.hostname = "host";
  r.pid = 42;

  sample::Ctx ctx;
  ctx.avail = avail;
  ctx.src = &client;
  ctx.dst = &local;
  ctx.dst_port = 8080;
  ctx.req.method = "GET";
  ctx.req.target = "/a?b=\"c\"";
  ctx.req.version = "HTTP/1.1";
  ctx.req.headers = &req_headers();
  ctx.res.status = 200;
  ctx.now_us = 1700000000123456ULL;

  std::string out;
  f->render(r, (ctl & 8) ? nullptr : &ctx, out);
  f->uses_http();
  return 0;
}

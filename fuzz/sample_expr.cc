// Fuzzes the sample expression parser and evaluator: the input's first line is an expression
// (`fetch(args),conv(args),...`), the rest is the request body and the buffered payload. Any
// text must parse or be refused without crashing; what parses is evaluated on a small fixed
// HTTP transaction (every value of a multi-value fetch, as an ACL walks them) and must end.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "sample/expr.h"
#include "sample/vars.h"

namespace {

using namespace sluice;
using namespace sluice::sample;

const std::vector<http::Header>& req_headers() {
  static const std::vector<http::Header> h = {
      {"Host", "www.example.com:8080"},
      {"User-Agent", "curl/8.0"},
      {"Cookie", "a=1; SESSID=abc; b=\"q,v\""},
      {"X-Forwarded-For", "10.0.0.1, 192.168.1.2"},
      {"Accept-Language", "fr-CH, fr;q=0.9, en;q=0.8, *;q=0.5"},
      {"Content-Type", "application/x-www-form-urlencoded"},
      {"Authorization", "Basic dXNlcjpwYXNz"},
      {"Forwarded", "for=192.0.2.43;proto=https;host=example.com"},
  };
  return h;
}

const std::vector<http::Header>& res_headers() {
  static const std::vector<http::Header> h = {
      {"Content-Type", "text/html"},
      {"Set-Cookie", "SRV=s1; path=/"},
      {"Date", "Sun, 06 Nov 1994 08:49:37 GMT"},
  };
  return h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::size_t nl = in.find('\n');
  std::string_view text = in.substr(0, nl);
  std::string_view body = nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);

  VarNames names;
  ParseCtx pc;
  pc.var_names = &names;
  std::size_t end = 0;
  auto expr = Expr::parse(text, pc, &end);
  if (!expr.ok()) {
    if (expr.error().message.empty()) std::abort();
    return 0;
  }
  if (end > text.size()) std::abort();

  static const net::SocketAddress src = net::SocketAddress::ipv4(0xc0000201, 40000);
  static const net::SocketAddress dst = net::SocketAddress::ipv4(0x7f000001, 8080);
  VarStore sess(Scope::kSess, 1024), txn(Scope::kTxn, 1024), req(Scope::kReq, 1024),
      res(Scope::kRes, 1024);
  Ctx ctx;
  ctx.avail = kAtHttpResponse;
  ctx.src = &src;
  ctx.dst = &dst;
  ctx.dst_port = 8080;
  ctx.payload = body;
  ctx.res_payload = body;
  ctx.req.method = "POST";
  ctx.req.target = "/a/b/c.php?x=1&y=%41b&x=2";
  ctx.req.version = "HTTP/1.1";
  ctx.req.headers = &req_headers();
  ctx.req.body = body;
  ctx.res.status = 200;
  ctx.res.reason = "OK";
  ctx.res.version = "HTTP/1.1";
  ctx.res.headers = &res_headers();
  ctx.res.body = body;
  ctx.sess_vars = &sess;
  ctx.txn_vars = &txn;
  ctx.req_vars = &req;
  ctx.res_vars = &res;
  ctx.now_us = 1700000000123456ULL;

  // Twice, so that variables the first run set are read by the second.
  for (int round = 0; round < 2; ++round) {
    FetchIter it;
    it.iterate = true;
    Sample s;
    int values = 0;
    std::string text_out;
    while (true) {
      bool got = expr->eval(ctx, s, it);
      if (got) {
        text_out.clear();
        to_text(s, text_out);
      }
      if (!(s.flags & kNotLast)) break;
      // A multi-value fetch walks a bounded input: far fewer values than this.
      if (++values > 100000) std::abort();
    }
  }
  return 0;
}

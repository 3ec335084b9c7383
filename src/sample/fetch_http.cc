// HTTP fetches (HAProxy's section 7.3.6), the request line and body: method, the target and
// its parts, Host-based keys and their hashes, query and body parameters, the version.
// Headers are in fetch_http_hdr.cc, cookies in fetch_http_cookie.cc.
#include <arpa/inet.h>

#include "sample/captures.h"
#include "sample/fetch_http_util.h"
#include "sample/tables.h"

namespace sluice::sample::tables {

namespace {

using namespace httpx;

bool str_out(Sample& out, std::string_view v, uint8_t flags = 0) {
  out = Sample::string(v, flags);
  return true;
}

bool f_method(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  if (ctx.req.method.empty()) return false;
  out.type = Type::kMeth;
  out.sint = static_cast<int64_t>(method_of(ctx.req.method));
  out.str = ctx.req.method;
  out.flags = 0;
  return true;
}

bool f_path(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  std::string_view p = path_of(ctx.req.target);
  return !p.empty() && str_out(out, p);
}

bool f_pathq(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  std::string_view p = pathq_of(ctx.req.target);
  return !p.empty() && str_out(out, p);
}

bool f_query(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  if (ctx.req.target.find('?') == std::string_view::npos) return false;
  return str_out(out, query_of(ctx.req.target));
}

bool f_url(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  return !ctx.req.target.empty() && str_out(out, ctx.req.target);
}

// Host + path (base) or + path and query (baseq).
bool host_and(std::string_view tail, Sample& out, const Ctx& ctx) {
  if (tail.empty()) return false;
  std::string& b = ctx.sc().next();
  b.assign(host_of(ctx.req));
  b += tail;
  return str_out(out, b);
}

bool f_base(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  return host_and(path_of(ctx.req.target), out, ctx);
}

bool f_baseq(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  return host_and(pathq_of(ctx.req.target), out, ctx);
}

bool f_base32(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  if (ctx.req.target.empty()) return false;
  out = Sample::integer(sdbm_hash(host_of(ctx.req), path_of(ctx.req.target)));
  return true;
}

bool f_base32_src(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  if (ctx.req.target.empty()) return false;
  return hash_src(sdbm_hash(host_of(ctx.req), path_of(ctx.req.target)), ctx, out);
}

// url32: Host and the path with its query (of an absolute target, not its scheme and authority).
bool f_url32(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  if (ctx.req.target.empty()) return false;
  out = Sample::integer(sdbm_hash(host_of(ctx.req), pathq_of(ctx.req.target)));
  return true;
}

bool f_url32_src(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  if (ctx.req.target.empty()) return false;
  return hash_src(sdbm_hash(host_of(ctx.req), pathq_of(ctx.req.target)), ctx, out);
}

// An absolute "http://a.b.c.d[:port]" target: the address and the port (80 when none). A
// name or an IPv6 literal gives nothing, as HAProxy's url_ip and url_port.
bool url_v4(std::string_view t, in_addr* addr, int64_t* port) {
  constexpr std::string_view kScheme = "http://";
  if (t.size() < kScheme.size() || !http::iequals(t.substr(0, kScheme.size()), kScheme))
    return false;
  t.remove_prefix(kScheme.size());
  std::size_t i = 0;
  while (i < t.size() && ((t[i] >= '0' && t[i] <= '9') || t[i] == '.')) ++i;
  char buf[INET_ADDRSTRLEN];
  if (i == 0 || i >= sizeof(buf)) return false;
  t.copy(buf, i);
  buf[i] = 0;
  if (inet_pton(AF_INET, buf, addr) != 1) return false;
  *port = 80;
  if (i < t.size() && t[i] == ':') {
    int64_t p = 0;
    std::size_t j = i + 1;
    for (; j < t.size() && t[j] >= '0' && t[j] <= '9'; ++j) p = p * 10 + (t[j] - '0');
    if (j == i + 1 || p > 65535) return false;
    *port = p;
  }
  return true;
}

bool f_url_ip(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  int64_t port = 0;
  in_addr a{};
  if (!url_v4(ctx.req.target, &a, &port)) return false;
  out = Sample{};
  out.type = Type::kIpv4;
  out.v4 = a;
  return true;
}

bool f_url_port(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  int64_t port = 0;
  in_addr a{};
  if (!url_v4(ctx.req.target, &a, &port)) return false;
  out = Sample::integer(port);
  return true;
}

// Values of one parameter list (a query string, a form body): every one in turn with
// it.iterate, else the first.
bool param_fetch(std::string_view list, std::string_view name, char delim, bool icase,
                 Sample& out, FetchIter& it) {
  uint32_t pos = it.pos;
  std::string_view v;
  if (!next_param(list, name, delim, icase, pos, v)) return false;
  out = Sample::string(v);
  if (it.iterate) {
    it.pos = pos;
    std::string_view more;
    if (next_param(list, name, delim, icase, pos, more)) out.flags |= kNotLast;
  }
  return true;
}

bool icase_flag(const Arg& a) { return a.given && !a.str.empty() && a.str[0] == 'i'; }

// url_param([name[,delim[,i]]]): the list starts after the first '?' (or `delim`).
bool f_url_param(const Arg* a, Sample& out, const Ctx& ctx, FetchIter& it) {
  char delim = a[1].given && !a[1].str.empty() ? a[1].str[0] : '?';
  std::string_view t = ctx.req.target;
  const char both[2] = {'?', delim};
  auto q = t.find_first_of(std::string_view(both, delim == '?' ? 1 : 2));
  if (q == std::string_view::npos) return false;
  std::string_view list = t.substr(q + 1);
  auto hash = list.find('#');
  if (hash != std::string_view::npos) list = list.substr(0, hash);
  return param_fetch(list, std::string_view(a[0].str), delim,
                     icase_flag(a[2]), out, it);
}

bool f_urlp_val(const Arg* a, Sample& out, const Ctx& ctx, FetchIter& it) {
  if (!f_url_param(a, out, ctx, it)) return false;
  uint8_t flags = out.flags;
  out = Sample::integer(leading_int(out.str));
  out.flags = flags;
  return true;
}

bool f_req_ver(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  std::string_view v = ctx.req.version;
  if (!ctx.has(kUseHttpReqLine) && ctx.has(kUseReqBuf)) {
    // TCP content rules: HAProxy parses the client's raw bytes as an HTTP/1 request (the
    // predefined HTTP_1.0 and HTTP_1.1 ACLs); no answer yet while the head is incomplete.
    thread_local http::RequestParser parser;
    parser.reset();
    switch (parser.parse(ctx.payload)) {
      case http::ParseStatus::kComplete:
        v = parser.head().version;
        break;
      case http::ParseStatus::kIncomplete:
        out.flags = ctx.payload_final ? 0 : kMayChange;
        return false;
      case http::ParseStatus::kError:
        return false;
    }
  }
  if (v.substr(0, 5) == "HTTP/") v.remove_prefix(5);
  return !v.empty() && str_out(out, v);
}

// The request line as received: the rules' rewrites do not change what was captured.
bool f_capture_method(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  std::string_view m = ctx.req.line_method.empty() ? ctx.req.method : ctx.req.line_method;
  return !m.empty() && str_out(out, m);
}

// HAProxy: from the first slash of the target, without a scheme and host.
bool f_capture_uri(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  std::string_view t = ctx.req.line_target.empty() ? ctx.req.target : ctx.req.line_target;
  if (!t.empty() && t[0] != '/') {
    std::size_t scheme = t.find("://");
    std::size_t slash = t.find('/', scheme == std::string_view::npos ? 0 : scheme + 3);
    if (slash != std::string_view::npos) t = t.substr(slash);
  }
  return !t.empty() && str_out(out, t);
}

// capture.req.hdr(n) / capture.res.hdr(n): capture slot n (from 0) of the stream's frontend,
// when something was captured there.
bool capture_slot(const std::string* v, Sample& out) { return v && str_out(out, *v); }
bool f_capture_req_hdr(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  return ctx.captures && capture_slot(ctx.captures->req_value(a[0].sint), out);
}
bool f_capture_res_hdr(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  return ctx.captures && capture_slot(ctx.captures->res_value(a[0].sint), out);
}

// unique-id: unique-id-format's id of the request.
bool f_unique_id(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  return !ctx.unique_id.empty() && str_out(out, ctx.unique_id);
}

// capture.req.ver / capture.res.ver: "HTTP/1.0" for a 1.0 message, else "HTTP/1.1".
bool capture_ver(const HttpMsg& m, Sample& out) {
  if (m.version.empty()) return false;
  return str_out(out, m.version == "HTTP/1.0" ? "HTTP/1.0" : "HTTP/1.1", kConst);
}

bool f_capture_req_ver(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  return !ctx.req.method.empty() && capture_ver(ctx.req, out);
}

// Bodies: what is buffered; may change while the message is not complete.
uint8_t body_flags(const HttpMsg& m) { return m.body_final ? 0 : kMayChange; }

bool f_req_body(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  out = Sample::string(ctx.req.body, body_flags(ctx.req));
  out.type = Type::kBin;
  return true;
}

bool f_req_body_len(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  out = Sample::integer(static_cast<int64_t>(ctx.req.body.size()));
  out.flags = body_flags(ctx.req);
  return true;
}

// The advertised Content-Length, else what is there (chunked).
int64_t body_size(const HttpMsg& m) {
  if (m.headers)
    for (const auto& h : *m.headers)
      if (http::iequals(h.name, "content-length")) return leading_int(h.value);
  return static_cast<int64_t>(m.body.size());
}

bool f_req_body_size(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  out = Sample::integer(body_size(ctx.req));
  out.flags = body_flags(ctx.req);
  return true;
}

// req.body_param([name[,i]]): the body as application/x-www-form-urlencoded.
bool f_body_param(const Arg* a, Sample& out, const Ctx& ctx, FetchIter& it) {
  bool got = param_fetch(ctx.req.body, std::string_view(a[0].str),
                         '&', icase_flag(a[1]), out, it);
  out.flags |= body_flags(ctx.req);
  return got;
}

constexpr uint32_t kReq = kUseHttpReq;
constexpr uint32_t kBody = kUseHttpReq | kUseHttpReqBody;
constexpr ArgSpec kParamArgs = args(0, ArgType::kStr, ArgType::kStr, ArgType::kStr);

constexpr FetchDef kFetches[] = {
    {"base", f_base, no_args(), nullptr, Type::kStr, kReq, "str"},
    {"base32", f_base32, no_args(), nullptr, Type::kSint, kReq, "int"},
    {"base32+src", f_base32_src, no_args(), nullptr, Type::kBin, kReq | kUseL4Cli},
    {"baseq", f_baseq, no_args(), nullptr, Type::kStr, kReq},
    {"capture.req.hdr", f_capture_req_hdr, args(1, ArgType::kSint), nullptr, Type::kStr, kUseHttpReqLine},
    // HAProxy declares it with the response's fetches: request rules may not name it.
    {"capture.res.hdr", f_capture_res_hdr, args(1, ArgType::kSint), nullptr, Type::kStr,
     kUseHttpResLine},
    {"unique-id", f_unique_id, no_args(), nullptr, Type::kStr, kUseHttpReqLine},
    {"capture.req.method", f_capture_method, no_args(), nullptr, Type::kStr, kUseHttpReqLine},
    {"capture.req.uri", f_capture_uri, no_args(), nullptr, Type::kStr, kUseHttpReqLine},
    {"capture.req.ver", f_capture_req_ver, no_args(), nullptr, Type::kStr, kUseHttpReqLine},
    {"method", f_method, no_args(), nullptr, Type::kMeth, kUseHttpReqLine, "meth"},
    {"path", f_path, no_args(), nullptr, Type::kStr, kReq, "str"},
    {"pathq", f_pathq, no_args(), nullptr, Type::kStr, kReq},
    {"query", f_query, no_args(), nullptr, Type::kStr, kReq},
    {"req.body", f_req_body, no_args(), nullptr, Type::kBin, kBody},
    {"req.body_len", f_req_body_len, no_args(), nullptr, Type::kSint, kBody},
    {"req.body_param", f_body_param, args(0, ArgType::kStr, ArgType::kStr), nullptr, Type::kStr,
     kBody},
    {"req.body_size", f_req_body_size, no_args(), nullptr, Type::kSint, kBody},
    {"req.ver", f_req_ver, no_args(), nullptr, Type::kStr, kUseHttpReqLine},
    {"req_ver", f_req_ver, no_args(), nullptr, Type::kStr, kUseHttpReqLine, "str"},
    {"url", f_url, no_args(), nullptr, Type::kStr, kReq, "str"},
    {"url32", f_url32, no_args(), nullptr, Type::kSint, kReq},
    {"url32+src", f_url32_src, no_args(), nullptr, Type::kBin, kReq | kUseL4Cli},
    {"url_ip", f_url_ip, no_args(), nullptr, Type::kIpv4, kReq, "ip"},
    {"url_param", f_url_param, kParamArgs, nullptr, Type::kStr, kReq, "str"},
    {"url_port", f_url_port, no_args(), nullptr, Type::kSint, kReq, "int"},
    {"urlp", f_url_param, kParamArgs, nullptr, Type::kStr, kReq, "str"},
    {"urlp_val", f_urlp_val, kParamArgs, nullptr, Type::kSint, kReq, "int"},
};

}  // namespace

std::span<const FetchDef> http_fetches() { return kFetches; }

}  // namespace sluice::sample::tables

// HTTP fetches (HAProxy's section 7.3.6), the header fields of both messages and the
// response's status line and body: hdr, fhdr and their counts, addresses and integers, the
// names, the whole block as text or binary; status, versions.
#include <arpa/inet.h>

#include <cstring>

#include "sample/fetch_http_util.h"
#include "sample/tables.h"

namespace sluice::sample::tables {

namespace {

using namespace httpx;

template <bool Res>
const HttpMsg& msg(const Ctx& ctx) {
  return Res ? ctx.res : ctx.req;
}

std::string_view name_arg(const Arg* a) {
  return std::string_view(a[0].str);
}

// hdr([name[,occ]]), fhdr(...)
template <bool Res, bool Full>
bool f_hdr(const Arg* a, Sample& out, const Ctx& ctx, FetchIter& it) {
  return header_fetch(msg<Res>(ctx).headers, a, Full, out, it);
}

// hdr(): req.hdr() where the request's headers are (request rules), res.hdr() past them
// (response rules, logs).
bool f_hdr_either(const Arg* a, Sample& out, const Ctx& ctx, FetchIter& it) {
  const bool res = !ctx.has(kUseHttpReq) && ctx.res.headers;
  return header_fetch(res ? ctx.res.headers : ctx.req.headers, a, false, out, it);
}

template <bool Res, bool Full>
bool f_hdr_cnt(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  if (!msg<Res>(ctx).headers) return false;
  out = Sample::integer(header_count(msg<Res>(ctx).headers, name_arg(a), Full));
  return true;
}

template <bool Res>
bool f_hdr_val(const Arg* a, Sample& out, const Ctx& ctx, FetchIter& it) {
  if (!header_fetch(msg<Res>(ctx).headers, a, false, out, it)) return false;
  uint8_t flags = out.flags;
  out = Sample::integer(leading_int(out.str));
  out.flags = flags;
  return true;
}

bool parse_ip4(std::string_view s, in_addr* a) {
  char buf[INET_ADDRSTRLEN];
  if (s.empty() || s.size() >= sizeof(buf)) return false;
  s.copy(buf, s.size());
  buf[s.size()] = 0;
  return inet_pton(AF_INET, buf, a) == 1;
}

bool parse_ip6(std::string_view s, in6_addr* a) {
  char buf[INET6_ADDRSTRLEN];
  if (s.empty() || s.size() >= sizeof(buf)) return false;
  s.copy(buf, s.size());
  buf[s.size()] = 0;
  return inet_pton(AF_INET6, buf, a) == 1;
}

// A header value as an address: IPv4, IPv4:port, [IPv6] or IPv6.
bool value_ip(std::string_view v, Sample& out) {
  in_addr a4{};
  auto colon = v.find(':');
  if (colon != std::string_view::npos && v.find(':', colon + 1) == std::string_view::npos &&
      parse_ip4(v.substr(0, colon), &a4)) {
    std::string_view port = v.substr(colon + 1);
    int64_t p = 0;
    if (port.empty() || port.size() > 5) return false;
    for (char c : port) {
      if (c < '0' || c > '9') return false;
      p = p * 10 + (c - '0');
    }
    if (p > 65535) return false;
    out.type = Type::kIpv4;
    out.v4 = a4;
    return true;
  }
  if (parse_ip4(v, &a4)) {
    out.type = Type::kIpv4;
    out.v4 = a4;
    return true;
  }
  if (v.size() >= 2 && v.front() == '[' && v.back() == ']') v = v.substr(1, v.size() - 2);
  if (parse_ip6(v, &out.v6)) {
    out.type = Type::kIpv6;
    return true;
  }
  return false;
}

// The values that are not addresses are skipped.
template <bool Res>
bool f_hdr_ip(const Arg* a, Sample& out, const Ctx& ctx, FetchIter& it) {
  while (header_fetch(msg<Res>(ctx).headers, a, false, out, it)) {
    if (value_ip(out.str, out)) return true;
    if (!(out.flags & kNotLast)) break;
  }
  out.flags &= ~kNotLast;
  return false;
}

void append_lower(std::string& b, std::string_view s) {
  for (char c : s) b += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

// hdr_names([delim]): the names, lowercase as HAProxy keeps them, default delimiter ','.
template <bool Res>
bool f_hdr_names(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  const auto* hs = msg<Res>(ctx).headers;
  if (!hs) return false;
  std::string_view delim = a[0].str.empty() ? std::string_view(",") : a[0].str;
  std::string& b = ctx.sc().next();
  for (std::size_t i = 0; i < hs->size(); ++i) {
    if (i) b += delim;
    append_lower(b, (*hs)[i].name);
  }
  out = Sample::string(b);
  return true;
}

// hdrs: "name: value\r\n" per field, then the empty line.
template <bool Res>
bool f_hdrs(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  const auto* hs = msg<Res>(ctx).headers;
  if (!hs) return false;
  std::string& b = ctx.sc().next();
  for (const auto& h : *hs) {
    append_lower(b, h.name);
    b += ": ";
    b += h.value;
    b += "\r\n";
  }
  b += "\r\n";
  out = Sample::string(b);
  return true;
}

// hdrs_bin: varint length and name, varint length and value per field; two zero bytes.
template <bool Res>
bool f_hdrs_bin(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  const auto* hs = msg<Res>(ctx).headers;
  if (!hs) return false;
  std::string& b = ctx.sc().next();
  for (const auto& h : *hs) {
    append_varint(b, h.name.size());
    append_lower(b, h.name);
    append_varint(b, h.value.size());
    b += h.value;
  }
  b.append(2, '\0');
  out = Sample::string(b);
  out.type = Type::kBin;
  return true;
}

bool f_status(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  if (ctx.res.status <= 0) return false;
  out = Sample::integer(ctx.res.status);
  return true;
}

bool f_res_ver(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  std::string_view v = ctx.res.version;
  if (v.substr(0, 5) == "HTTP/") v.remove_prefix(5);
  if (v.empty()) return false;
  out = Sample::string(v);
  return true;
}

bool f_capture_res_ver(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  if (ctx.res.version.empty()) return false;
  out = Sample::string(ctx.res.version == "HTTP/1.0" ? "HTTP/1.0" : "HTTP/1.1", kConst);
  return true;
}

uint8_t body_flags(const HttpMsg& m) { return m.body_final ? 0 : kMayChange; }

bool f_res_body(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  out = Sample::string(ctx.res.body, body_flags(ctx.res));
  out.type = Type::kBin;
  return true;
}

bool f_res_body_len(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  out = Sample::integer(static_cast<int64_t>(ctx.res.body.size()));
  out.flags = body_flags(ctx.res);
  return true;
}

bool f_res_body_size(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  int64_t n = static_cast<int64_t>(ctx.res.body.size());
  if (ctx.res.headers)
    for (const auto& h : *ctx.res.headers)
      if (http::iequals(h.name, "content-length")) {
        n = leading_int(h.value);
        break;
      }
  out = Sample::integer(n);
  out.flags = body_flags(ctx.res);
  return true;
}

constexpr uint32_t kReq = kUseHttpReq;
constexpr uint32_t kRes = kUseHttpRes;
constexpr uint32_t kResBody = kUseHttpRes | kUseHttpResBody;
constexpr ArgSpec kNameOcc = args(0, ArgType::kStr, ArgType::kSint);
constexpr ArgSpec kName = args(0, ArgType::kStr);

constexpr FetchDef kFetches[] = {
    // HAProxy declares it with the request's fetches: request rules may name it (and get no
    // sample there, the response not being known yet).
    {"capture.res.ver", f_capture_res_ver, no_args(), nullptr, Type::kStr, kUseHttpReqLine},
    {"hdr", f_hdr_either, kNameOcc, check_occurrence, Type::kStr, kUseHttpReqLine, "str"},
    {"hdr_cnt", f_hdr_cnt<false, false>, kName, nullptr, Type::kSint, kReq, "int"},
    {"hdr_ip", f_hdr_ip<false>, kNameOcc, check_occurrence, Type::kIpv4, kReq, "ip"},
    {"hdr_val", f_hdr_val<false>, kNameOcc, check_occurrence, Type::kSint, kReq, "int"},
    {"req.fhdr", f_hdr<false, true>, kNameOcc, check_occurrence, Type::kStr, kReq},
    {"req.fhdr_cnt", f_hdr_cnt<false, true>, kName, nullptr, Type::kSint, kReq},
    {"req.hdr", f_hdr<false, false>, kNameOcc, check_occurrence, Type::kStr, kReq},
    {"req.hdr_cnt", f_hdr_cnt<false, false>, kName, nullptr, Type::kSint, kReq},
    {"req.hdr_ip", f_hdr_ip<false>, kNameOcc, check_occurrence, Type::kIpv4, kReq},
    {"req.hdr_names", f_hdr_names<false>, kName, nullptr, Type::kStr, kReq},
    {"req.hdr_val", f_hdr_val<false>, kNameOcc, check_occurrence, Type::kSint, kReq},
    {"req.hdrs", f_hdrs<false>, no_args(), nullptr, Type::kStr, kReq},
    {"req.hdrs_bin", f_hdrs_bin<false>, no_args(), nullptr, Type::kBin, kReq},
    {"res.body", f_res_body, no_args(), nullptr, Type::kBin, kResBody},
    {"res.body_len", f_res_body_len, no_args(), nullptr, Type::kSint, kResBody},
    {"res.body_size", f_res_body_size, no_args(), nullptr, Type::kSint, kResBody},
    {"res.fhdr", f_hdr<true, true>, kNameOcc, check_occurrence, Type::kStr, kRes},
    {"res.fhdr_cnt", f_hdr_cnt<true, true>, kName, nullptr, Type::kSint, kRes},
    {"res.hdr", f_hdr<true, false>, kNameOcc, check_occurrence, Type::kStr, kRes},
    {"res.hdr_cnt", f_hdr_cnt<true, false>, kName, nullptr, Type::kSint, kRes},
    {"res.hdr_ip", f_hdr_ip<true>, kNameOcc, check_occurrence, Type::kIpv4, kRes},
    {"res.hdr_names", f_hdr_names<true>, kName, nullptr, Type::kStr, kRes},
    {"res.hdr_val", f_hdr_val<true>, kNameOcc, check_occurrence, Type::kSint, kRes},
    {"res.hdrs", f_hdrs<true>, no_args(), nullptr, Type::kStr, kRes},
    {"res.hdrs_bin", f_hdrs_bin<true>, no_args(), nullptr, Type::kBin, kRes},
    {"res.ver", f_res_ver, no_args(), nullptr, Type::kStr, kUseHttpResLine},
    {"resp_ver", f_res_ver, no_args(), nullptr, Type::kStr, kRes, "str"},
    {"shdr", f_hdr<true, false>, kNameOcc, check_occurrence, Type::kStr, kRes, "str"},
    {"shdr_cnt", f_hdr_cnt<true, false>, kName, nullptr, Type::kSint, kRes, "int"},
    {"shdr_ip", f_hdr_ip<true>, kNameOcc, check_occurrence, Type::kIpv4, kRes, "ip"},
    {"shdr_val", f_hdr_val<true>, kNameOcc, check_occurrence, Type::kSint, kRes, "int"},
    {"status", f_status, no_args(), nullptr, Type::kSint, kUseHttpResLine, "int"},
    // HAProxy's txn.status is the status logged, also of a response it produced itself; the
    // context has the response's status only.
    {"txn.status", f_status, no_args(), nullptr, Type::kSint, kUseHttpResLine},
};

}  // namespace

std::span<const FetchDef> http_hdr_fetches() { return kFetches; }

}  // namespace sluice::sample::tables

// Layer-5 fetches (HAProxy's section 7.3.5): the client's and the server's buffered bytes.
//
// While more bytes may still come (!payload_final), a fetch whose answer they could change
// says so with kMayChange, on its value or on its "no value yet": a `tcp-request content`
// rule then waits instead of deciding (HAProxy's SMP_F_MAY_CHANGE). Once the bytes are final
// the answer is too.
#include "http/http.h"
#include "sample/tables.h"
#include "sample/tls_hello.h"

namespace sluice::sample::tables {

namespace {

// HAProxy's tune.bufsize: no offset or length beyond it can ever be satisfied.
constexpr int64_t kBufSize = 16384;

struct Bytes {
  std::string_view data;
  bool final;
};

Bytes req_bytes(const Ctx& ctx) { return {ctx.payload, ctx.payload_final}; }
Bytes res_bytes(const Ctx& ctx) { return {ctx.res_payload, ctx.res_payload_final}; }
// payload(), payload_lv(): the channel of the rule set they run in.
Bytes cur_bytes(const Ctx& ctx) { return ctx.has(kUseResBuf) ? res_bytes(ctx) : req_bytes(ctx); }

// No value yet; more bytes may bring one.
bool need_more(Sample& out, const Bytes& b) {
  out.flags = b.final ? 0 : kMayChange;
  return false;
}

bool bin_out(Sample& out, std::string_view v, const Bytes& b, bool may_grow) {
  out = Sample::string(v);
  out.type = Type::kBin;
  if (may_grow && !b.final) out.flags |= kMayChange;
  return true;
}

template <Bytes (*Chan)(const Ctx&)>
bool f_len(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  Bytes b = Chan(ctx);
  out = Sample::integer(static_cast<int64_t>(b.data.size()));
  if (!b.final) out.flags |= kMayChange;   // a length grows with every byte
  return true;
}

// payload(offset,length): `length` bytes at `offset`; 0: everything from `offset`.
template <Bytes (*Chan)(const Ctx&)>
bool f_payload(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  Bytes b = Chan(ctx);
  int64_t off = a[0].sint, len = a[1].sint;
  if (off < 0 || len < 0 || len > kBufSize || off + len > kBufSize) return false;
  auto size = static_cast<int64_t>(b.data.size());
  if (off + len > size) return need_more(out, b);
  std::string_view v = b.data.substr(off, len ? len : size - off);
  return bin_out(out, v, b, len == 0);
}

// payload_lv(offset1,length[,offset2]): a `length`-byte big-endian length at `offset1`, then
// that many bytes at `offset2` (absolute; "+n"/"-n": from the end of the length field;
// default: right after it). The check stores offset2 as (n << 1) | relative.
template <Bytes (*Chan)(const Ctx&)>
bool f_payload_lv(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  Bytes b = Chan(ctx);
  int64_t loff = a[0].sint, lsize = a[1].sint;
  auto size = static_cast<int64_t>(b.data.size());
  if (loff < 0 || lsize <= 0 || lsize > 8 || loff + lsize > kBufSize) return false;
  if (loff + lsize > size) return need_more(out, b);
  int64_t len = 0;
  for (int64_t i = 0; i < lsize; ++i)
    len = (len << 8) | static_cast<uint8_t>(b.data[static_cast<std::size_t>(loff + i)]);
  int64_t off = loff + lsize;
  if (a[2].given) off = (a[2].sint & 1) ? off + (a[2].sint >> 1) : (a[2].sint >> 1);
  if (len <= 0 || off < 0 || len > kBufSize || off + len > kBufSize) return false;
  if (off + len > size) return need_more(out, b);
  return bin_out(out, b.data.substr(off, len), b, false);
}

std::string check_payload_lv(Arg* a, const ParseCtx&) {
  if (a[0].sint < 0) return "payload offset1 must be positive";
  if (a[1].sint == 0) return "payload length must be > 0";
  if (a[2].given && !a[2].str.empty()) {
    std::string_view s = a[2].str;
    bool rel = s[0] == '+' || s[0] == '-';
    bool neg = s[0] == '-';
    if (rel) s.remove_prefix(1);
    int64_t v = 0;
    if (s.empty()) return "payload offset2 is not a number";
    for (char c : s) {
      if (c < '0' || c > '9') return "payload offset2 is not a number";
      v = v * 10 + (c - '0');
      if (v > kBufSize * 4) return "payload offset2 is not a number";
    }
    if (neg) v = -v;
    a[2].sint = v * 2 + (rel ? 1 : 0);
  } else {
    a[2].given = false;
  }
  return {};
}

// req.ssl_sni, req.ssl_alpn, req.ssl_hello_type: sluice's ClientHello reader
// (sample/tls_hello.h).
template <SniResult (*Read)(std::string_view)>
bool f_ssl_sni(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  Bytes b = req_bytes(ctx);
  SniResult r = Read(b.data);
  if (r.status == HelloStatus::kNeedMore) return need_more(out, b);
  if (r.status != HelloStatus::kFound) return false;
  out = Sample::string(r.name);
  return true;
}

// req.ssl_cipherlist, req.ssl_sigalgs, req.ssl_supported_groups, req.ssl_keyshare_groups
// (binary), req.ssl_ec_ext (boolean), req.ssl_st_ext (integer): the ClientHello's parts.
template <HelloField F>
bool f_hello_field(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  Bytes b = req_bytes(ctx);
  std::string* scratch = F == HelloField::kKeyShareGroups ? &thread_scratch().next() : nullptr;
  HelloFieldResult r = tls_client_hello_field(b.data, F, scratch);
  if (r.status == HelloStatus::kNeedMore) return need_more(out, b);
  if (r.status != HelloStatus::kFound) return false;
  if constexpr (F == HelloField::kEcExt) {
    out = Sample::boolean(r.value != 0);
  } else if constexpr (F == HelloField::kSessionTicket) {
    out = Sample::integer(r.value);
  } else {
    out = Sample::string(r.bytes);
    out.type = Type::kBin;
  }
  return true;
}

template <Bytes (*Chan)(const Ctx&)>
bool f_ssl_hello_type(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  Bytes b = Chan(ctx);
  HelloTypeResult r = tls_hello_type(b.data);
  if (r.status == HelloStatus::kNeedMore) return need_more(out, b);
  if (r.status != HelloStatus::kFound) return false;
  out = Sample::integer(r.type);
  return true;
}

uint32_t be(std::string_view d, std::size_t at, int n) {
  uint32_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<uint8_t>(d[at + i]);
  return v;
}

// req.ssl_ver: major << 16 | minor of an SSLv3/TLS record, or of an SSLv2 ClientHello, once
// the whole first message (up to a buffer) is there.
bool f_ssl_ver(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  Bytes b = req_bytes(ctx);
  std::string_view d = b.data;
  if (d.empty()) return need_more(out, b);
  auto first = static_cast<uint8_t>(d[0]);
  uint32_t version = 0;
  std::size_t need = 0;   // bytes the message needs after its header
  std::size_t at = 0;     // where its body starts
  if ((first >= 0x14 && first <= 0x17) || first == 0xff) {
    if (d.size() < 5) return need_more(out, b);
    version = be(d, 1, 1) << 16 | be(d, 2, 1);
    uint32_t rec = be(d, 3, 2);
    if (version < 0x30000 || rec < 1 || rec > (1u << 14) + 2048) return false;
    at = 5;
    need = rec;
  } else {
    // SSLv2: a 2-byte (high bit set) or 3-byte (padding) header, then ClientHello (1).
    std::size_t hdr = (first & 0x80) ? 2 : 3;
    if (d.size() < hdr + 1) return need_more(out, b);
    uint32_t rlen = (first & 0x80) ? (be(d, 0, 2) & 0x7fff) : (be(d, 0, 2) & 0x3fff);
    uint32_t pad = (first & 0x80) ? 0 : be(d, 2, 1);
    if (static_cast<uint8_t>(d[hdr]) != 0x01) return false;
    if (d.size() < hdr + 1 + 8) return need_more(out, b);
    std::size_t p = hdr + 1;
    version = be(d, p, 1) << 16 | be(d, p + 1, 1);
    uint32_t cipher = be(d, p + 2, 2), sid = be(d, p + 4, 2), chal = be(d, p + 6, 2);
    if (cipher % 3 != 0 || (sid != 0 && sid != 16) || chal < 16 || chal > 32) return false;
    if (rlen != 9 + cipher + sid + chal) return false;
    at = p + 8;
    need = cipher + sid + chal + pad;
  }
  need = std::min<std::size_t>(need, static_cast<std::size_t>(kBufSize) - at);
  if (d.size() - at < need) return need_more(out, b);
  out = Sample::integer(version);
  return true;
}

// rdp_cookie([name]): the value of the "Cookie: name=value\r\n" line of an RDP connection
// request (after its 11-byte header); any name when none is given.
bool rdp_cookie(const Arg* a, Sample& out, const Bytes& b) {
  std::string_view d = b.data;
  if (d.size() <= 11) return need_more(out, b);
  d.remove_prefix(11);
  if (d.size() <= 7) return need_more(out, b);
  if (!http::iequals(d.substr(0, 7), "Cookie:")) return false;
  d.remove_prefix(7);
  while (!d.empty() && d[0] == ' ') d.remove_prefix(1);
  std::string_view name = std::string_view(a[0].str);
  if (!name.empty()) {
    if (d.size() <= name.size()) return need_more(out, b);
    if (!http::iequals(d.substr(0, name.size()), name)) return false;
    d.remove_prefix(name.size());
  } else {
    while (!d.empty() && d[0] != '=') {
      if (d[0] == '\r' || d[0] == '\n') return false;
      d.remove_prefix(1);
    }
  }
  if (d.empty()) return need_more(out, b);
  if (d[0] != '=') return false;
  d.remove_prefix(1);
  auto cr = d.find('\r');
  if (cr == std::string_view::npos || cr + 2 > d.size()) return need_more(out, b);
  if (d[cr + 1] != '\n') return false;
  out = Sample::string(d.substr(0, cr));
  return true;
}

bool f_rdp_cookie(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  return rdp_cookie(a, out, req_bytes(ctx));
}

// 1 when there is such a cookie, 0 when there is none; nothing while that is not known yet.
bool f_rdp_cookie_cnt(const Arg* a, Sample& out, const Ctx& ctx, FetchIter&) {
  bool got = rdp_cookie(a, out, req_bytes(ctx));
  if (!got && (out.flags & kMayChange)) return false;
  out = Sample::integer(got ? 1 : 0);
  return true;
}

// req.proto_http: whether the bytes start with a complete, valid HTTP/1 request head; true
// wherever the HTTP request is already parsed.
bool f_proto_http(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  if (ctx.has(kUseHttpReqLine) && !ctx.req.method.empty()) {
    out = Sample::boolean(true);
    return true;
  }
  Bytes b = req_bytes(ctx);
  thread_local http::RequestParser parser;
  parser.reset();
  switch (parser.parse(b.data)) {
    case http::ParseStatus::kComplete:
      out = Sample::boolean(true);
      return true;
    case http::ParseStatus::kIncomplete:
      return need_more(out, b);
    case http::ParseStatus::kError:
      break;
  }
  return false;
}

// wait_end: true once the inspection is over (the bytes are final); until then no value,
// which may change.
bool f_wait_end(const Arg*, Sample& out, const Ctx& ctx, FetchIter&) {
  bool final = ctx.payload_final && (!ctx.has(kUseResBuf) || ctx.res_payload_final);
  if (!final) {
    out.flags = kMayChange;
    return false;
  }
  out = Sample::boolean(true);
  return true;
}

constexpr uint32_t kReq = kUseReqBuf;
constexpr uint32_t kRes = kUseResBuf;
constexpr ArgSpec kPayloadArgs = args(2, ArgType::kSint, ArgType::kSint);
constexpr ArgSpec kLvArgs = args(2, ArgType::kSint, ArgType::kSint, ArgType::kStr);
constexpr ArgSpec kName = args(0, ArgType::kStr);

constexpr FetchDef kFetches[] = {
    {"payload", f_payload<cur_bytes>, kPayloadArgs, nullptr, Type::kBin, kReq, "bin"},
    {"payload_lv", f_payload_lv<cur_bytes>, kLvArgs, check_payload_lv, Type::kBin, kReq, "bin"},
    {"rdp_cookie", f_rdp_cookie, kName, nullptr, Type::kStr, kReq, "str"},
    {"rdp_cookie_cnt", f_rdp_cookie_cnt, kName, nullptr, Type::kSint, kReq, "int"},
    {"rep_ssl_hello_type", f_ssl_hello_type<res_bytes>, no_args(), nullptr, Type::kSint, kRes,
     "int"},
    {"req.len", f_len<req_bytes>, no_args(), nullptr, Type::kSint, kReq},
    {"req.payload", f_payload<req_bytes>, kPayloadArgs, nullptr, Type::kBin, kReq},
    {"req.payload_lv", f_payload_lv<req_bytes>, kLvArgs, check_payload_lv, Type::kBin, kReq},
    {"req.proto_http", f_proto_http, no_args(), nullptr, Type::kBool, kReq},
    {"req.rdp_cookie", f_rdp_cookie, kName, nullptr, Type::kStr, kReq},
    {"req.rdp_cookie_cnt", f_rdp_cookie_cnt, kName, nullptr, Type::kSint, kReq},
    {"req.ssl_hello_type", f_ssl_hello_type<req_bytes>, no_args(), nullptr, Type::kSint, kReq},
    {"req.ssl_sni", f_ssl_sni<tls_client_hello_sni>, no_args(), nullptr, Type::kStr, kReq},
    {"req.ssl_alpn", f_ssl_sni<tls_client_hello_alpn>, no_args(), nullptr, Type::kStr, kReq},
    {"req.ssl_cipherlist", f_hello_field<HelloField::kCipherList>, no_args(), nullptr, Type::kBin,
     kReq},
    {"req.ssl_ec_ext", f_hello_field<HelloField::kEcExt>, no_args(), nullptr, Type::kBool, kReq},
    {"req.ssl_keyshare_groups", f_hello_field<HelloField::kKeyShareGroups>, no_args(), nullptr,
     Type::kBin, kReq},
    {"req.ssl_sigalgs", f_hello_field<HelloField::kSigAlgs>, no_args(), nullptr, Type::kBin, kReq},
    {"req.ssl_st_ext", f_hello_field<HelloField::kSessionTicket>, no_args(), nullptr, Type::kSint,
     kReq},
    {"req.ssl_supported_groups", f_hello_field<HelloField::kSupportedGroups>, no_args(), nullptr,
     Type::kBin, kReq},
    {"req.ssl_ver", f_ssl_ver, no_args(), nullptr, Type::kSint, kReq},
    {"req_len", f_len<req_bytes>, no_args(), nullptr, Type::kSint, kReq, "int"},
    {"req_proto_http", f_proto_http, no_args(), nullptr, Type::kBool, kReq, "bool"},
    {"req_ssl_hello_type", f_ssl_hello_type<req_bytes>, no_args(), nullptr, Type::kSint, kReq,
     "int"},
    {"req_ssl_sni", f_ssl_sni<tls_client_hello_sni>, no_args(), nullptr, Type::kStr, kReq, "str"},
    // HAProxy's ACL keyword reads its patterns as dotted versions (3.1 = 0x30001).
    {"req_ssl_ver", f_ssl_ver, no_args(), nullptr, Type::kSint, kReq, "int"},
    {"res.len", f_len<res_bytes>, no_args(), nullptr, Type::kSint, kRes},
    {"res.payload", f_payload<res_bytes>, kPayloadArgs, nullptr, Type::kBin, kRes},
    {"res.payload_lv", f_payload_lv<res_bytes>, kLvArgs, check_payload_lv, Type::kBin, kRes},
    {"res.ssl_hello_type", f_ssl_hello_type<res_bytes>, no_args(), nullptr, Type::kSint, kRes},
    {"wait_end", f_wait_end, no_args(), nullptr, Type::kBool, kUseInternal, "bool"},
};

}  // namespace

std::span<const FetchDef> payload_fetches() { return kFetches; }

}  // namespace sluice::sample::tables

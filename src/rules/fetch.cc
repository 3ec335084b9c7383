// Sample fetches: what ACL criteria and `%[...]` items read from a message.
#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

#include "rules/internal.h"
#include "rules/tls_hello.h"

namespace sluice::rules::detail {

namespace {

using M = MatchMethod;
constexpr int kNoArg = 0, kOptArg = 1, kArg = 2;

#define MM(x) static_cast<int>(M::x)

// ACL keywords, HAProxy's names. The base keywords are also sample fetches for `%[...]`.
constexpr FetchKeyword kKeywords[] = {
    {"always_true", Fetch::kAlwaysTrue, MM(kBool), kNoArg},
    {"always_false", Fetch::kAlwaysFalse, MM(kBool), kNoArg},
    {"src", Fetch::kSrc, MM(kIp), kNoArg},
    {"src_port", Fetch::kSrcPort, MM(kInt), kNoArg},
    {"dst", Fetch::kDst, MM(kIp), kNoArg},
    {"dst_port", Fetch::kDstPort, MM(kInt), kNoArg},
    {"method", Fetch::kMethod, MM(kMeth), kNoArg},
    {"path", Fetch::kPath, MM(kStr), kNoArg},
    {"query", Fetch::kQuery, MM(kStr), kNoArg},
    {"url", Fetch::kUrl, MM(kStr), kNoArg},
    {"base", Fetch::kBase, MM(kStr), kNoArg},
    {"req.ver", Fetch::kReqVer, MM(kStr), kNoArg},
    {"req_ver", Fetch::kReqVer, MM(kStr), kNoArg},
    {"hdr", Fetch::kReqHdr, MM(kStr), kOptArg},
    {"req.hdr", Fetch::kReqHdr, MM(kStr), kOptArg},
    {"req.fhdr", Fetch::kReqFhdr, MM(kStr), kOptArg},
    {"hdr_cnt", Fetch::kReqHdrCnt, MM(kInt), kOptArg},
    {"req.hdr_cnt", Fetch::kReqHdrCnt, MM(kInt), kOptArg},
    {"hdr_val", Fetch::kReqHdrVal, MM(kInt), kOptArg},
    {"req.hdr_val", Fetch::kReqHdrVal, MM(kInt), kOptArg},
    {"res.hdr", Fetch::kResHdr, MM(kStr), kOptArg},
    {"shdr", Fetch::kResHdr, MM(kStr), kOptArg},
    {"res.fhdr", Fetch::kResFhdr, MM(kStr), kOptArg},
    {"res.hdr_cnt", Fetch::kResHdrCnt, MM(kInt), kOptArg},
    {"shdr_cnt", Fetch::kResHdrCnt, MM(kInt), kOptArg},
    {"res.hdr_val", Fetch::kResHdrVal, MM(kInt), kOptArg},
    {"shdr_val", Fetch::kResHdrVal, MM(kInt), kOptArg},
    {"status", Fetch::kStatus, MM(kInt), kNoArg},
    {"url_param", Fetch::kUrlParam, MM(kStr), kArg},
    {"urlp", Fetch::kUrlParam, MM(kStr), kArg},
    {"urlp_val", Fetch::kUrlParamVal, MM(kInt), kArg},
    {"req.len", Fetch::kReqLen, MM(kInt), kNoArg},
    {"req_len", Fetch::kReqLen, MM(kInt), kNoArg},
    {"req.ssl_sni", Fetch::kReqSslSni, MM(kStr), kNoArg},
    {"req_ssl_sni", Fetch::kReqSslSni, MM(kStr), kNoArg},
    {"req.ssl_hello_type", Fetch::kReqSslHelloType, MM(kInt), kNoArg},
    {"req_ssl_hello_type", Fetch::kReqSslHelloType, MM(kInt), kNoArg},
};

// ACL-only keywords: a base fetch with another default match method.
constexpr FetchKeyword kDerived[] = {
    {"path_beg", Fetch::kPath, MM(kBeg), kNoArg},   {"path_end", Fetch::kPath, MM(kEnd), kNoArg},
    {"path_sub", Fetch::kPath, MM(kSub), kNoArg},   {"path_dir", Fetch::kPath, MM(kDir), kNoArg},
    {"path_dom", Fetch::kPath, MM(kDom), kNoArg},   {"path_reg", Fetch::kPath, MM(kReg), kNoArg},
    {"path_len", Fetch::kPath, MM(kLen), kNoArg},
    {"url_beg", Fetch::kUrl, MM(kBeg), kNoArg},     {"url_end", Fetch::kUrl, MM(kEnd), kNoArg},
    {"url_sub", Fetch::kUrl, MM(kSub), kNoArg},     {"url_dir", Fetch::kUrl, MM(kDir), kNoArg},
    {"url_dom", Fetch::kUrl, MM(kDom), kNoArg},     {"url_reg", Fetch::kUrl, MM(kReg), kNoArg},
    {"url_len", Fetch::kUrl, MM(kLen), kNoArg},
    {"base_beg", Fetch::kBase, MM(kBeg), kNoArg},   {"base_end", Fetch::kBase, MM(kEnd), kNoArg},
    {"base_sub", Fetch::kBase, MM(kSub), kNoArg},   {"base_dir", Fetch::kBase, MM(kDir), kNoArg},
    {"base_dom", Fetch::kBase, MM(kDom), kNoArg},   {"base_reg", Fetch::kBase, MM(kReg), kNoArg},
    {"base_len", Fetch::kBase, MM(kLen), kNoArg},
    {"hdr_beg", Fetch::kReqHdr, MM(kBeg), kOptArg}, {"hdr_end", Fetch::kReqHdr, MM(kEnd), kOptArg},
    {"hdr_sub", Fetch::kReqHdr, MM(kSub), kOptArg}, {"hdr_dir", Fetch::kReqHdr, MM(kDir), kOptArg},
    {"hdr_dom", Fetch::kReqHdr, MM(kDom), kOptArg}, {"hdr_reg", Fetch::kReqHdr, MM(kReg), kOptArg},
    {"hdr_len", Fetch::kReqHdr, MM(kLen), kOptArg}, {"hdr_ip", Fetch::kReqHdr, MM(kIp), kOptArg},
    {"shdr_beg", Fetch::kResHdr, MM(kBeg), kOptArg}, {"shdr_end", Fetch::kResHdr, MM(kEnd), kOptArg},
    {"shdr_sub", Fetch::kResHdr, MM(kSub), kOptArg}, {"shdr_dir", Fetch::kResHdr, MM(kDir), kOptArg},
    {"shdr_dom", Fetch::kResHdr, MM(kDom), kOptArg}, {"shdr_reg", Fetch::kResHdr, MM(kReg), kOptArg},
    {"shdr_len", Fetch::kResHdr, MM(kLen), kOptArg}, {"shdr_ip", Fetch::kResHdr, MM(kIp), kOptArg},
    {"urlp_beg", Fetch::kUrlParam, MM(kBeg), kArg}, {"urlp_end", Fetch::kUrlParam, MM(kEnd), kArg},
    {"urlp_sub", Fetch::kUrlParam, MM(kSub), kArg}, {"urlp_dir", Fetch::kUrlParam, MM(kDir), kArg},
    {"urlp_dom", Fetch::kUrlParam, MM(kDom), kArg}, {"urlp_reg", Fetch::kUrlParam, MM(kReg), kArg},
    {"urlp_len", Fetch::kUrlParam, MM(kLen), kArg},
};
#undef MM

// HAProxy fetches sluice does not have: "not supported by sluice yet" instead of "unknown".
constexpr std::string_view kHaproxyFetches[] = {
    "be_conn", "be_sess_rate", "be_id", "be_name", "capture.req.hdr", "capture.req.method",
    "capture.req.uri", "connslots", "cook", "cook_beg", "cook_cnt", "cook_dom", "cook_end",
    "cook_len", "cook_reg", "cook_sub", "cook_val", "date", "env", "fc_rtt", "fe_conn",
    "fe_id", "fe_name", "fe_sess_rate", "hostname", "http_auth", "http_auth_group",
    "http_first_req", "nbproc", "nbsrv", "pathq", "rand", "rdp_cookie",
    "req.body", "req.body_len", "req.body_param", "req.cook", "req.cook_cnt", "req.cook_val",
    "req.payload", "req.proto_http", "req_ssl_ver", "res.cook",
    "res.comp", "res.ver", "sc0_http_req_rate", "sc_http_req_rate", "sc0_conn_cur",
    "scook", "set-cookie", "srv_conn", "srv_id", "ssl_c_used", "ssl_fc", "ssl_fc_sni",
    "src_conn_cur", "src_http_req_rate", "src_is_local", "stopping", "table_cnt", "txn.status",
    "unique-id", "url32", "url_ip", "url_port", "var", "wait_end", "req.cook_cnt", "req.hdrs",
    "res.hdrs", "req.hdr_names", "res.hdr_names", "req.hdr_ip", "res.hdr_ip", "fhdr",
    "req.fhdr_cnt", "res.fhdr_cnt", "capture.res.hdr", "lf", "str", "int", "bool", "ipv4",
    "ipv6", "meth", "so_id", "thread", "uuid", "ltime", "utime", "fc_http_major", "req.timer.hdr",
};

bool header_matches(std::string_view have, const FetchSpec& spec) {
  return spec.name.empty() || iequals(have, spec.name);
}

// Integer prefix of a value, as HAProxy's strl2ic (no digits = 0).
int64_t leading_int(std::string_view s) {
  std::size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
  int64_t v = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    if (v > (INT64_MAX - 9) / 10) break;
    v = v * 10 + (s[i] - '0');
  }
  return neg ? -v : v;
}

// The values of the fields named by `spec` (split at commas unless `full`), in order.
void header_values(const std::vector<http::Header>* hs, const FetchSpec& spec, bool full,
                   std::vector<std::string_view>& out) {
  if (!hs) return;
  for (const auto& h : *hs) {
    if (!header_matches(h.name, spec)) continue;
    if (full) {
      out.push_back(h.value);
    } else {
      split_values(h.value, out);
    }
  }
}

// Applies hdr(name,occ): occ > 0 keeps the occ-th value, occ < 0 counts from the last one.
void select_occurrence(std::vector<std::string_view>& vals, int occ) {
  if (occ == 0) return;
  long idx = occ > 0 ? occ - 1 : static_cast<long>(vals.size()) + occ;
  if (idx < 0 || idx >= static_cast<long>(vals.size())) {
    vals.clear();
    return;
  }
  std::string_view keep = vals[static_cast<std::size_t>(idx)];
  vals.assign(1, keep);
}

void url_params(std::string_view target, const std::string& name, std::vector<std::string_view>& out) {
  auto q = target.find('?');
  if (q == std::string_view::npos) return;
  std::string_view query = target.substr(q + 1);
  auto hash = query.find('#');
  if (hash != std::string_view::npos) query = query.substr(0, hash);
  std::size_t pos = 0;
  while (pos <= query.size()) {
    auto amp = query.find('&', pos);
    std::string_view item = query.substr(pos, amp == std::string_view::npos ? std::string_view::npos : amp - pos);
    if (item.size() > name.size() && item.compare(0, name.size(), name) == 0 && item[name.size()] == '=')
      out.push_back(item.substr(name.size() + 1));
    if (amp == std::string_view::npos) break;
    pos = amp + 1;
  }
}

std::string_view host_of(const RequestView& v) {
  if (!v.req.headers) return {};
  for (const auto& h : *v.req.headers)
    if (iequals(h.name, "host")) return h.value;
  return {};
}

}  // namespace

SampleType fetch_type(Fetch f) {
  switch (f) {
    case Fetch::kAlwaysTrue:
    case Fetch::kAlwaysFalse: return SampleType::kBool;
    case Fetch::kSrc:
    case Fetch::kDst: return SampleType::kAddr;
    case Fetch::kSrcPort:
    case Fetch::kDstPort:
    case Fetch::kReqHdrCnt:
    case Fetch::kReqHdrVal:
    case Fetch::kResHdrCnt:
    case Fetch::kResHdrVal:
    case Fetch::kStatus:
    case Fetch::kUrlParamVal:
    case Fetch::kReqLen:
    case Fetch::kReqSslHelloType: return SampleType::kInt;
    default: return SampleType::kStr;
  }
}

bool fetch_is_response(Fetch f) {
  return f == Fetch::kResHdr || f == Fetch::kResFhdr || f == Fetch::kResHdrCnt ||
         f == Fetch::kResHdrVal || f == Fetch::kStatus;
}

bool fetch_reads_payload(Fetch f) {
  return f == Fetch::kReqLen || f == Fetch::kReqSslSni || f == Fetch::kReqSslHelloType;
}

bool payload_may_change(const FetchSpec& spec, const RequestView& v) {
  if (v.payload_final) return false;
  switch (spec.fetch) {
    case Fetch::kReqLen: return true;   // a length grows with every byte
    case Fetch::kReqSslSni:
      return tls_client_hello_sni(v.payload).status == HelloStatus::kNeedMore;
    case Fetch::kReqSslHelloType:
      return tls_hello_type(v.payload).status == HelloStatus::kNeedMore;
    default: return false;
  }
}

const FetchKeyword* find_fetch_keyword(std::string_view name, bool acl) {
  for (const auto& k : kKeywords)
    if (k.name == name) return &k;
  if (acl)
    for (const auto& k : kDerived)
      if (k.name == name) return &k;
  return nullptr;
}

bool is_known_haproxy_fetch(std::string_view name) {
  if (std::find(std::begin(kHaproxyFetches), std::end(kHaproxyFetches), name) != std::end(kHaproxyFetches))
    return true;
  // Families: sc0_*, sc1_*, sc2_*, src_*, ssl_*, req.ssl_*, var(...)-like prefixes.
  for (std::string_view p : {"sc0_", "sc1_", "sc2_", "sc_", "src_", "ssl_", "req.ssl_", "be_", "fe_", "srv_", "bc_", "fc_", "cook_", "scook_", "txn.", "sess."})
    if (name.substr(0, p.size()) == p) return true;
  return false;
}

bool for_each_sample(const FetchSpec& spec, const RequestView& v,
                     const std::function<bool(const Sample&)>& fn) {
  Sample s;
  s.type = fetch_type(spec.fetch);
  auto one_str = [&](std::string_view str) {
    s.str = str;
    return fn(s);
  };
  auto one_int = [&](int64_t n) {
    s.num = n;
    return fn(s);
  };
  switch (spec.fetch) {
    case Fetch::kNone: return false;
    case Fetch::kAlwaysTrue: return one_int(1);
    case Fetch::kAlwaysFalse: return one_int(0);
    case Fetch::kSrc:
    case Fetch::kDst: {
      const net::SocketAddress* a = spec.fetch == Fetch::kSrc ? v.src : v.dst;
      if (!a || (a->family() != AF_INET && a->family() != AF_INET6)) return false;
      s.addr = a;
      return fn(s);
    }
    case Fetch::kSrcPort:
      if (!v.src || (v.src->family() != AF_INET && v.src->family() != AF_INET6)) return false;
      return one_int(v.src->port());
    case Fetch::kDstPort: return one_int(v.dst_port);
    case Fetch::kMethod:
      if (v.req.method.empty()) return false;
      return one_str(v.req.method);
    case Fetch::kPath: {
      std::string_view p = path_of(v.req.target);
      if (p.empty()) return false;
      return one_str(p);
    }
    case Fetch::kQuery:
      if (v.req.target.find('?') == std::string_view::npos) return false;
      return one_str(query_of(v.req.target));
    case Fetch::kUrl:
      if (v.req.target.empty()) return false;
      return one_str(v.req.target);
    case Fetch::kBase: {
      std::string_view p = path_of(v.req.target);
      if (p.empty()) return false;
      s.owned = std::string(host_of(v));
      s.owned += p;
      return one_str(s.owned);
    }
    case Fetch::kReqVer: {
      std::string_view ver = v.req.version;
      if (ver.substr(0, 5) == "HTTP/") ver.remove_prefix(5);
      if (ver.empty()) return false;
      return one_str(ver);
    }
    case Fetch::kReqHdr:
    case Fetch::kReqFhdr:
    case Fetch::kResHdr:
    case Fetch::kResFhdr: {
      bool res = spec.fetch == Fetch::kResHdr || spec.fetch == Fetch::kResFhdr;
      bool full = spec.fetch == Fetch::kReqFhdr || spec.fetch == Fetch::kResFhdr;
      std::vector<std::string_view> vals;
      header_values(res ? v.res.headers : v.req.headers, spec, full, vals);
      select_occurrence(vals, spec.occ);
      for (auto val : vals)
        if (one_str(val)) return true;
      return false;
    }
    case Fetch::kReqHdrCnt:
    case Fetch::kResHdrCnt: {
      std::vector<std::string_view> vals;
      header_values(spec.fetch == Fetch::kResHdrCnt ? v.res.headers : v.req.headers, spec, false, vals);
      return one_int(static_cast<int64_t>(vals.size()));
    }
    case Fetch::kReqHdrVal:
    case Fetch::kResHdrVal: {
      std::vector<std::string_view> vals;
      header_values(spec.fetch == Fetch::kResHdrVal ? v.res.headers : v.req.headers, spec, false, vals);
      select_occurrence(vals, spec.occ);
      for (auto val : vals)
        if (one_int(leading_int(val))) return true;
      return false;
    }
    case Fetch::kStatus:
      if (v.res.status <= 0) return false;
      return one_int(v.res.status);
    case Fetch::kUrlParam:
    case Fetch::kUrlParamVal: {
      std::vector<std::string_view> vals;
      url_params(v.req.target, spec.name, vals);
      for (auto val : vals) {
        bool stop = spec.fetch == Fetch::kUrlParam ? one_str(val) : one_int(leading_int(val));
        if (stop) return true;
      }
      return false;
    }
    case Fetch::kReqLen: return one_int(static_cast<int64_t>(v.payload.size()));
    case Fetch::kReqSslSni: {
      SniResult r = tls_client_hello_sni(v.payload);
      if (r.status != HelloStatus::kFound) return false;
      return one_str(r.name);
    }
    case Fetch::kReqSslHelloType: {
      HelloTypeResult r = tls_hello_type(v.payload);
      if (r.status != HelloStatus::kFound) return false;
      return one_int(r.type);
    }
  }
  return false;
}

bool fetch_one(const FetchSpec& spec, const RequestView& v, std::string& out) {
  bool header = spec.fetch == Fetch::kReqHdr || spec.fetch == Fetch::kReqFhdr ||
                spec.fetch == Fetch::kResHdr || spec.fetch == Fetch::kResFhdr ||
                spec.fetch == Fetch::kReqHdrVal || spec.fetch == Fetch::kResHdrVal;
  FetchSpec s = spec;
  if (header && s.occ == 0) s.occ = -1;   // formats use the last occurrence (HAProxy)
  bool got = false;
  for_each_sample(s, v, [&](const Sample& smp) {
    switch (smp.type) {
      case SampleType::kStr: out.append(smp.str); break;
      case SampleType::kInt:
      case SampleType::kBool: out += std::to_string(smp.num); break;
      case SampleType::kAddr: out += addr_host(*smp.addr); break;
    }
    got = true;
    return true;   // the first one
  });
  return got;
}

}  // namespace sluice::rules::detail

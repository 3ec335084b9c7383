#pragma once
// Internals of rules/: sample fetches shared by ACLs and value formats, and the compiled ACL
// term. Not part of the module interface (tests may include it).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/regex.h"
#include "rules/rules.h"

namespace sluice::rules::detail {

// Sample fetches sluice knows.
enum class Fetch : uint8_t {
  kNone,          // literal text in a ValueFormat
  kAlwaysTrue,
  kAlwaysFalse,
  kSrc,           // address
  kSrcPort,       // int
  kDst,           // address
  kDstPort,       // int
  kMethod,
  kPath,
  kQuery,
  kUrl,
  kBase,          // Host + path
  kReqVer,        // "1.1"
  kReqHdr,        // hdr(): values split at commas
  kReqFhdr,       // fhdr(): full lines
  kReqHdrCnt,     // int
  kReqHdrVal,     // int of each value
  kResHdr,
  kResFhdr,
  kResHdrCnt,
  kResHdrVal,
  kStatus,        // int
  kUrlParam,
  kUrlParamVal,   // int
  // The client's bytes buffered by a TCP session (RequestView::payload): TCP mode
  // `tcp-request content` rules and `use_backend` only.
  kReqLen,           // int
  kReqSslSni,        // str
  kReqSslHelloType,  // int
};

enum class SampleType : uint8_t { kStr, kInt, kAddr, kBool };

SampleType fetch_type(Fetch f);
// A fetch that only a response has (status, res.hdr...).
bool fetch_is_response(Fetch f);
// A fetch that reads the client's buffered bytes (req.len, req.ssl_sni, req.ssl_hello_type).
bool fetch_reads_payload(Fetch f);

struct FetchSpec {
  Fetch fetch = Fetch::kNone;
  std::string name;       // header or parameter name (may be empty: every header)
  int occ = 0;            // hdr(name,occ): 0 = every occurrence (ACLs) / the last (formats)
};

// Whether `spec` on `v` has no final answer yet: more bytes may still arrive
// (!v.payload_final) and they could change what the fetch yields (HAProxy's SMP_F_MAY_CHANGE).
bool payload_may_change(const FetchSpec& spec, const RequestView& v);

// One sample. Strings point into the request or into `owned`.
struct Sample {
  SampleType type = SampleType::kStr;
  std::string_view str;
  int64_t num = 0;
  const net::SocketAddress* addr = nullptr;
  std::string owned;
};

// Calls `fn` for every sample `spec` yields on `v`, stopping when it returns true. Returns
// whether `fn` returned true.
bool for_each_sample(const FetchSpec& spec, const RequestView& v,
                     const std::function<bool(const Sample&)>& fn);
// The one value a format uses (the last occurrence for headers); false when none.
bool fetch_one(const FetchSpec& spec, const RequestView& v, std::string& out);

// Parses a fetch expression such as `hdr(host,1)` / `url_param(x)` as used in ACLs and
// formats (`context` names the expression in messages). `keyword` receives the keyword without
// arguments. Errors are texts without location.
struct FetchKeyword {
  std::string_view name;
  Fetch fetch;
  int match;             // default match method (MatchMethod), for ACL keywords
  int arg;               // 0 none, 1 optional name, 2 mandatory name
};
const FetchKeyword* find_fetch_keyword(std::string_view name, bool acl);
// `word` is `kw` or `kw(arg[,occ])`; `context` is the whole expression for messages.
base::Result<const FetchKeyword*> parse_fetch_expr(std::string_view word, bool acl,
                                                   std::string_view context, FetchSpec* spec);
bool is_known_haproxy_fetch(std::string_view name);

// Helpers shared by fetches and actions.
bool iequals(std::string_view a, std::string_view b);
// Splits a field value at commas outside double quotes, trimming spaces and tabs.
void split_values(std::string_view value, std::vector<std::string_view>& out);
// The same elements untrimmed (blanks around them kept), for rewrites that keep them.
void split_raw(std::string_view value, std::vector<std::string_view>& out);
std::string_view trim_blanks(std::string_view v);
std::string addr_host(const net::SocketAddress& a);

// How an ACL term compares samples with its patterns.
enum class MatchMethod : uint8_t {
  kFound, kBool, kInt, kIp, kStr, kBeg, kEnd, kSub, kReg, kLen, kDir, kDom, kMeth
};

struct IntRange {
  int64_t min = INT64_MIN;
  int64_t max = INT64_MAX;
  bool negate = false;   // `ne` (sluice's own)
};

}  // namespace sluice::rules::detail

namespace sluice::rules {
class AclTerm;
namespace detail {
// `words[begin, end)` is `criterion [flags] [--] patterns...`. Errors without location or
// trailing period.
base::Result<std::shared_ptr<AclTerm>> parse_acl_expr(const std::vector<std::string>& words,
                                                       std::size_t begin, std::size_t end);
}  // namespace detail
bool is_predefined_acl(std::string_view name);

class AclTerm {
 public:
  detail::FetchSpec fetch;
  detail::MatchMethod method = detail::MatchMethod::kStr;
  bool icase = false;
  std::vector<std::string> strings;
  std::vector<detail::IntRange> ints;
  std::vector<Network> nets;
  std::vector<std::unique_ptr<base::Regex>> regexes;
  std::string text;   // the expression as written, for messages

  bool eval(const RequestView& v) const;
  // kMiss when the term does not match yet but may once more bytes arrive.
  Match eval_partial(const RequestView& v) const;
  bool response_only() const { return detail::fetch_is_response(fetch.fetch); }
};

}  // namespace sluice::rules

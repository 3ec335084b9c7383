// ACL matching: every sample the term's expression yields against its patterns, with the
// term's match method (HAProxy's pattern matching, section 7.1).
#include <arpa/inet.h>

#include <cstring>

#include "rules/internal.h"

namespace sluice::rules {

namespace {

using detail::MatchMethod;
using sample::Sample;
using sample::Type;

bool str_eq(std::string_view a, std::string_view b, bool icase) {
  return icase ? detail::iequals(a, b) : a == b;
}

bool has_prefix(std::string_view s, std::string_view p, bool icase) {
  return p.size() <= s.size() && str_eq(s.substr(0, p.size()), p, icase);
}

bool contains_sub(std::string_view s, std::string_view p, bool icase) {
  if (p.size() > s.size()) return false;
  for (std::size_t i = 0; i + p.size() <= s.size(); ++i)
    if (str_eq(s.substr(i, p.size()), p, icase)) return true;
  return false;
}

// HAProxy's match_word(): the pattern (without delimiters around it) must be a sequence of
// whole delimited words of the sample.
bool match_word(std::string_view smp, std::string_view pat, bool icase, std::string_view delims) {
  auto is_delim = [&](char c) { return delims.find(c) != std::string_view::npos; };
  while (!pat.empty() && is_delim(pat.front())) pat.remove_prefix(1);
  while (!pat.empty() && is_delim(pat.back())) pat.remove_suffix(1);
  if (pat.size() > smp.size()) return false;
  bool may_match = true;
  for (std::size_t c = 0; c + pat.size() <= smp.size(); ++c) {
    if (c < smp.size() && is_delim(smp[c])) {
      may_match = true;
      continue;
    }
    if (!may_match) continue;
    if (pat.empty()) {
      if (c == smp.size()) return true;
    } else if (str_eq(smp.substr(c, pat.size()), pat, icase) &&
               (c + pat.size() == smp.size() || is_delim(smp[c + pat.size()]))) {
      return true;
    }
    may_match = false;
  }
  return false;
}

bool int_match(const AclTerm& t, int64_t n) {
  for (const auto& r : t.ints) {
    bool in = n >= r.min && n <= r.max;
    if (in != r.negate) return true;
  }
  return false;
}

bool ip_match(const AclTerm& t, Sample s, sample::Scratch& sc) {
  if (s.type == Type::kStr || s.type == Type::kSint) {
    // A string that is an IPv4 or IPv6 address; anything else does not match.
    Sample v4 = s;
    if (sample::cast(v4, Type::kIpv4, sc)) {
      s = v4;
    } else if (!sample::cast(s, Type::kIpv6, sc)) {
      return false;
    }
  }
  for (const auto& n : t.nets) {
    if (s.type == Type::kIpv4 ? n.contains_v4(s.v4) : s.type == Type::kIpv6 && n.contains_v6(s.v6))
      return true;
  }
  return false;
}

bool str_match(const AclTerm& t, std::string_view str) {
  if (t.method == MatchMethod::kReg) {
    for (const auto& re : t.regexes)
      if (re->search(str)) return true;
    return false;
  }
  for (const auto& p : t.strings) {
    switch (t.method) {
      case MatchMethod::kStr:
        if (str_eq(str, p, t.icase)) return true;
        break;
      case MatchMethod::kBin:
        if (str == p) return true;
        break;
      case MatchMethod::kBeg:
        if (has_prefix(str, p, t.icase)) return true;
        break;
      case MatchMethod::kEnd:
        if (p.size() <= str.size() && str_eq(str.substr(str.size() - p.size()), p, t.icase)) return true;
        break;
      case MatchMethod::kSub:
        if (contains_sub(str, p, t.icase)) return true;
        break;
      case MatchMethod::kDir:
        if (match_word(str, p, t.icase, "/")) return true;
        break;
      case MatchMethod::kDom:
        if (match_word(str, p, t.icase, "/?.:")) return true;
        break;
      case MatchMethod::kMeth:
        // A well-known method is compared by identity (exactly, as HTTP methods are
        // case-sensitive); any other name as a string, honouring -i, and only against a
        // method that is not a well-known one: `-i get` does not match GET (HAProxy).
        if (http::method_from(p) != http::Method::kOther) {
          if (str == p) return true;
        } else if (http::method_from(str) == http::Method::kOther && str_eq(str, p, t.icase)) {
          return true;
        }
        break;
      default: break;
    }
  }
  return false;
}

// One sample against the patterns.
bool sample_matches(const AclTerm& t, Sample s, sample::Scratch& sc) {
  switch (t.method) {
    case MatchMethod::kFound: return true;
    case MatchMethod::kBool:
      return sample::cast(s, Type::kBool, sc) && s.sint != 0;
    case MatchMethod::kInt:
      return sample::cast(s, Type::kSint, sc) && int_match(t, s.sint);
    case MatchMethod::kLen:
      return sample::cast(s, Type::kStr, sc) && int_match(t, static_cast<int64_t>(s.str.size()));
    case MatchMethod::kIp:
      return ip_match(t, s, sc);
    case MatchMethod::kBin:
      return sample::cast(s, Type::kBin, sc) && str_match(t, s.str);
    case MatchMethod::kMeth:
      if (s.type == Type::kMeth || s.type == Type::kStr) return str_match(t, s.str);
      return false;
    default:
      return sample::cast(s, Type::kStr, sc) && str_match(t, s.str);
  }
}

}  // namespace

Match AclTerm::eval_partial(const RequestView& v) const {
  sample::FetchIter it;
  it.iterate = true;
  bool may_change = false;
  Sample s;
  while (true) {
    bool got = expr.eval(v, s, it);
    if (s.flags & sample::kMayChange) may_change = true;
    if (got && sample_matches(*this, s, v.sc())) return Match::kPass;
    if (!(s.flags & sample::kNotLast)) break;
  }
  // Response rules (the response buffer is there) wait on the server's bytes as well.
  const bool final = v.payload_final && (!v.has(sample::kUseResBuf) || v.res_payload_final);
  return may_change && !final ? Match::kMiss : Match::kFail;
}

bool AclTerm::eval(const RequestView& v) const {
  return eval_partial(v) == Match::kPass;
}

bool AclTerm::response_only() const {
  constexpr uint32_t kRes = sample::kUseHttpRes | sample::kUseHttpResLine |
                            sample::kUseHttpResBody | sample::kUseResBuf;
  return (expr.use() & kRes) != 0;
}

}  // namespace sluice::rules

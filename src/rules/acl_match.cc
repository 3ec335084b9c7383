// ACL matching: every sample the term's expression yields against its patterns, with the
// term's match method (HAProxy's pattern matching, section 7.1).
#include "auth/userlist.h"
#include "rules/internal.h"

namespace sluice::rules {

namespace {

using detail::MatchMethod;
using sample::Sample;
using sample::Type;

// Whether one of the term's pattern lists has an entry `find` finds.
template <class Find>
bool any_list(const AclTerm& t, Find&& find) {
  for (const auto& p : t.patterns)
    if (p->match(find)) return true;
  return false;
}

bool str_match(const AclTerm& t, std::string_view str) {
  return any_list(t, [&](const pattern::Index& idx, base::Regex::Groups*) { return idx.find_str(str); });
}

bool int_match(const AclTerm& t, int64_t n) {
  return any_list(t, [&](const pattern::Index& idx, base::Regex::Groups*) { return idx.find_int(n); });
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
  if (s.type == Type::kIpv4)
    return any_list(t, [&](const pattern::Index& idx, base::Regex::Groups*) { return idx.find_v4(s.v4); });
  if (s.type == Type::kIpv6)
    return any_list(t, [&](const pattern::Index& idx, base::Regex::Groups*) { return idx.find_v6(s.v6); });
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

// http_auth_group: the fetch gave the name of a user the userlist accepted.
bool in_auth_groups(const AclTerm& t, std::string_view user) {
  const auto& ul = *static_cast<const auth::Userlist*>(t.auth_userlist.get());
  const auth::User* u = ul.find(user);
  if (!u) return false;
  for (const auto& g : t.auth_groups) {
    int idx = ul.group_index(g);
    if (idx >= 0 && ul.in_group(*u, static_cast<uint32_t>(idx))) return true;
  }
  return false;
}

}  // namespace

Match AclTerm::eval_partial(const RequestView& v) const {
  if (auth_userlist) {
    Sample s;
    return expr.eval(v, s) && s.type == Type::kStr && in_auth_groups(*this, s.str) ? Match::kPass
                                                                                    : Match::kFail;
  }
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

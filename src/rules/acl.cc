// ACL expressions: parsing `criterion [flags] [--] patterns...` and matching them.
#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "rules/internal.h"

namespace sluice::rules {

namespace detail {

base::Result<const FetchKeyword*> parse_fetch_expr(std::string_view word, bool acl,
                                                   std::string_view context, FetchSpec* spec) {
  std::string_view kw = word;
  std::string_view args;
  bool has_args = false;
  auto open = word.find('(');
  auto comma = word.find(',');
  if (comma != std::string_view::npos && (open == std::string_view::npos || comma < open)) {
    return base::Error::text(fmt::format("converters ('{}') are not supported by sluice yet",
                                         word.substr(comma + 1)));
  }
  if (open != std::string_view::npos) {
    auto close = word.find(')', open);
    if (close == std::string_view::npos)
      return base::Error::text(fmt::format("missing closing ')' after arguments to fetch keyword '{}' in {} '{}'",
                                           word.substr(0, open), acl ? "ACL expression" : "format", context));
    kw = word.substr(0, open);
    args = word.substr(open + 1, close - open - 1);
    has_args = true;
    if (close + 1 < word.size()) {
      if (word[close + 1] == ',')
        return base::Error::text(fmt::format("converters ('{}') are not supported by sluice yet",
                                             word.substr(close + 2)));
      return base::Error::text(fmt::format("unexpected characters '{}' after fetch keyword '{}' in {} '{}'",
                                           word.substr(close + 1), kw, acl ? "ACL expression" : "format", context));
    }
  }
  const FetchKeyword* k = find_fetch_keyword(kw, acl);
  if (!k) {
    if (is_known_haproxy_fetch(kw) || (!acl && find_fetch_keyword(kw, true)))
      return base::Error::text(fmt::format("fetch method '{}' is not supported by sluice yet", kw));
    if (acl) return base::Error::text(fmt::format("unknown fetch method '{}' in ACL expression '{}'", kw, context));
    return base::Error::text(fmt::format("unknown fetch method '{}' in format '{}'", kw, context));
  }
  spec->fetch = k->fetch;
  spec->name.clear();
  spec->occ = 0;
  if (has_args && k->arg == 0 && !args.empty())
    return base::Error::text(fmt::format("fetch method '{}' takes no argument (got '{}')", kw, args));
  std::string_view name = args;
  auto c = args.find(',');
  if (c != std::string_view::npos) {
    name = args.substr(0, c);
    std::string_view occ = args.substr(c + 1);
    bool header = k->fetch == Fetch::kReqHdr || k->fetch == Fetch::kReqFhdr || k->fetch == Fetch::kResHdr ||
                  k->fetch == Fetch::kResFhdr || k->fetch == Fetch::kReqHdrVal || k->fetch == Fetch::kResHdrVal;
    int v = 0;
    auto [p, ec] = std::from_chars(occ.data(), occ.data() + occ.size(), v);
    if (!header)
      return base::Error::text(fmt::format("fetch method '{}' takes only one argument (got '{}')", kw, args));
    if (occ.empty() || ec != std::errc() || p != occ.data() + occ.size())
      return base::Error::text(fmt::format("invalid occurrence '{}' for fetch method '{}', an integer is expected", occ, kw));
    spec->occ = v;
  }
  if (k->arg == 2 && name.empty())
    return base::Error::text(fmt::format("fetch method '{}' expects a name as argument", kw));
  spec->name = std::string(name);
  return k;
}

namespace {

struct MatchName {
  std::string_view name;
  MatchMethod method;
};
constexpr MatchName kMatchNames[] = {
    {"found", MatchMethod::kFound}, {"bool", MatchMethod::kBool}, {"int", MatchMethod::kInt},
    {"ip", MatchMethod::kIp},       {"str", MatchMethod::kStr},   {"beg", MatchMethod::kBeg},
    {"end", MatchMethod::kEnd},     {"sub", MatchMethod::kSub},   {"reg", MatchMethod::kReg},
    {"len", MatchMethod::kLen},     {"dir", MatchMethod::kDir},   {"dom", MatchMethod::kDom},
};

bool compatible(MatchMethod m, SampleType t) {
  switch (m) {
    case MatchMethod::kFound: return true;
    case MatchMethod::kBool: return t == SampleType::kBool || t == SampleType::kInt;
    case MatchMethod::kInt: return t != SampleType::kAddr;
    case MatchMethod::kIp: return t == SampleType::kAddr || t == SampleType::kStr;
    case MatchMethod::kMeth: return t == SampleType::kStr;
    default: return t != SampleType::kBool;
  }
}

bool parse_i64(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

base::Result<IntRange> parse_int_pattern(std::string_view op, std::string_view s) {
  IntRange r;
  auto bad = [&] { return base::Error::text(fmt::format("'{}' is not a valid integer or range", s)); };
  if (!op.empty()) {
    int64_t v = 0;
    if (!parse_i64(s, &v))
      return base::Error::text(fmt::format("'{}' is not a valid integer after operator '{}'", s, op));
    if (op == "eq" || op == "ne") {
      r.min = r.max = v;
      r.negate = op == "ne";
    } else if (op == "lt") {
      if (v == INT64_MIN) return bad();
      r.max = v - 1;
    } else if (op == "le") {
      r.max = v;
    } else if (op == "gt") {
      if (v == INT64_MAX) return bad();
      r.min = v + 1;
    } else {
      r.min = v;
    }
    return r;
  }
  auto colon = s.find(':');
  if (colon == std::string_view::npos) {
    int64_t v = 0;
    if (!parse_i64(s, &v)) return bad();
    r.min = r.max = v;
    return r;
  }
  std::string_view lo = s.substr(0, colon), hi = s.substr(colon + 1);
  if (lo.empty() && hi.empty()) return bad();
  if (!lo.empty() && !parse_i64(lo, &r.min)) return bad();
  if (!hi.empty() && !parse_i64(hi, &r.max)) return bad();
  if (r.min > r.max) return base::Error::text(fmt::format("'{}' is an empty range", s));
  return r;
}

bool is_op(std::string_view w) {
  return w == "eq" || w == "ne" || w == "lt" || w == "le" || w == "gt" || w == "ge";
}

bool ieq_prefix(std::string_view s, std::string_view p, bool icase) {
  if (p.size() > s.size()) return false;
  return icase ? iequals(s.substr(0, p.size()), p) : s.substr(0, p.size()) == p;
}

bool str_eq(std::string_view a, std::string_view b, bool icase) {
  return icase ? iequals(a, b) : a == b;
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

bool parse_address(std::string_view s, net::SocketAddress* out) {
  std::string str(s);
  in_addr a4{};
  in6_addr a6{};
  if (inet_pton(AF_INET, str.c_str(), &a4) == 1) {
    auto* sin = reinterpret_cast<sockaddr_in*>(out->sa());
    sin->sin_family = AF_INET;
    sin->sin_addr = a4;
    out->len = sizeof(sockaddr_in);
    return true;
  }
  if (inet_pton(AF_INET6, str.c_str(), &a6) == 1) {
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(out->sa());
    sin6->sin6_family = AF_INET6;
    sin6->sin6_addr = a6;
    out->len = sizeof(sockaddr_in6);
    return true;
  }
  return false;
}

}  // namespace

base::Result<std::shared_ptr<AclTerm>> parse_acl_expr(const std::vector<std::string>& words,
                                                       std::size_t begin, std::size_t end) {
  if (begin >= end) return base::Error::text("missing ACL expression");
  auto term = std::make_shared<AclTerm>();
  for (std::size_t i = begin; i < end; ++i) term->text += (i > begin ? " " : "") + words[i];
  const std::string& crit = words[begin];
  auto kw = parse_fetch_expr(crit, true, crit, &term->fetch);
  if (!kw.ok()) return kw.error();
  const FetchKeyword* k = kw.value();
  term->method = static_cast<MatchMethod>(k->match);
  SampleType type = fetch_type(k->fetch);
  std::size_t i = begin + 1;
  for (; i < end; ++i) {
    const std::string& w = words[i];
    if (w.size() < 2 || w[0] != '-') break;
    if (w == "--") {
      ++i;
      break;
    }
    if (w == "-i") {
      term->icase = true;
    } else if (w == "-n") {
      // no DNS resolution: sluice never resolves ACL patterns anyway
    } else if (w == "-m") {
      if (i + 1 >= end) return base::Error::text("'-m' expects a matching method");
      std::string_view m = words[++i];
      const MatchName* found = nullptr;
      for (const auto& mn : kMatchNames)
        if (mn.name == m) found = &mn;
      if (!found) {
        if (m == "bin") return base::Error::text("matching method 'bin' is not supported by sluice yet");
        return base::Error::text(fmt::format("unknown matching method '{}' when parsing ACL expression", m));
      }
      if (!compatible(found->method, type))
        return base::Error::text(fmt::format("matching method '{}' cannot be used with fetch keyword '{}'", m, k->name));
      term->method = found->method;
    } else if (w == "-f" || w == "-M" || w == "-u") {
      return base::Error::text(fmt::format("ACL option '{}' is not supported by sluice yet{}", w,
                                           w == "-f" ? " (patterns from files); write the patterns on the line" : ""));
    } else {
      return base::Error::text(fmt::format(
          "'{}' is not a valid ACL option. Please use '--' before any pattern beginning with a '-'", w));
    }
  }
  MatchMethod m = term->method;
  if (m == MatchMethod::kFound || m == MatchMethod::kBool) {
    if (i < end)
      return base::Error::text(fmt::format("'-m {}' takes no pattern (got '{}')",
                                           m == MatchMethod::kFound ? "found" : "bool", words[i]));
    if (m == MatchMethod::kBool && k->fetch != Fetch::kAlwaysTrue && k->fetch != Fetch::kAlwaysFalse &&
        type == SampleType::kStr)
      return base::Error::text(fmt::format("matching method 'bool' cannot be used with fetch keyword '{}'", k->name));
    return term;
  }
  if (i >= end)
    return base::Error::text(fmt::format(
        "no pattern to match against was provided for ACL keyword '{}' (use '-m found' to test "
        "for existence)", crit));
  std::string op;
  for (; i < end; ++i) {
    const std::string& w = words[i];
    switch (m) {
      case MatchMethod::kInt:
      case MatchMethod::kLen: {
        if (op.empty() && is_op(w)) {
          op = w;
          continue;
        }
        auto r = parse_int_pattern(op, w);
        if (!r.ok()) return r.error();
        term->ints.push_back(r.value());
        op.clear();
        break;
      }
      case MatchMethod::kIp: {
        auto n = parse_network(w);
        if (!n.ok()) return n.error();
        term->nets.push_back(n.value());
        break;
      }
      case MatchMethod::kReg: {
        auto re = std::make_unique<base::Regex>();
        std::string why;
        if (!re->compile(w, &why, term->icase, false))
          return base::Error::text(fmt::format("regex '{}' is invalid: {}", w, why));
        term->regexes.push_back(std::move(re));
        break;
      }
      default: term->strings.push_back(w); break;
    }
  }
  if (!op.empty()) return base::Error::text(fmt::format("missing value after operator '{}'", op));
  return term;
}

}  // namespace detail

Match AclTerm::eval_partial(const RequestView& v) const {
  if (eval(v)) return Match::kPass;
  return detail::payload_may_change(fetch, v) ? Match::kMiss : Match::kFail;
}

bool AclTerm::eval(const RequestView& v) const {
  using detail::MatchMethod;
  using detail::Sample;
  using detail::SampleType;
  std::string buf;
  return detail::for_each_sample(fetch, v, [&](const Sample& s) {
    switch (method) {
      case MatchMethod::kFound: return true;
      case MatchMethod::kBool: return s.num != 0;
      case MatchMethod::kInt:
      case MatchMethod::kLen: {
        int64_t n = 0;
        if (method == MatchMethod::kLen) {
          if (s.type == SampleType::kStr) {
            n = static_cast<int64_t>(s.str.size());
          } else if (s.type == SampleType::kAddr) {
            n = static_cast<int64_t>(detail::addr_host(*s.addr).size());
          } else {
            n = static_cast<int64_t>(std::to_string(s.num).size());
          }
        } else if (s.type == SampleType::kStr) {
          if (!detail::parse_i64(s.str, &n)) return false;
        } else {
          n = s.num;
        }
        for (const auto& r : ints) {
          bool in = n >= r.min && n <= r.max;
          if (in != r.negate) return true;
        }
        return false;
      }
      case MatchMethod::kIp: {
        net::SocketAddress parsed;
        const net::SocketAddress* a = s.addr;
        if (s.type == SampleType::kStr) {
          if (!detail::parse_address(s.str, &parsed)) return false;
          a = &parsed;
        }
        if (!a) return false;
        for (const auto& n : nets)
          if (n.contains(*a)) return true;
        return false;
      }
      default: break;
    }
    std::string_view str = s.str;
    if (s.type == SampleType::kInt || s.type == SampleType::kBool) {
      buf = std::to_string(s.num);
      str = buf;
    } else if (s.type == SampleType::kAddr) {
      buf = detail::addr_host(*s.addr);
      str = buf;
    }
    if (method == MatchMethod::kReg) {
      for (const auto& re : regexes)
        if (re->search(str)) return true;
      return false;
    }
    for (const auto& p : strings) {
      switch (method) {
        case MatchMethod::kStr:
          if (detail::str_eq(str, p, icase)) return true;
          break;
        case MatchMethod::kBeg:
          if (detail::ieq_prefix(str, p, icase)) return true;
          break;
        case MatchMethod::kEnd:
          if (p.size() <= str.size() && detail::str_eq(str.substr(str.size() - p.size()), p, icase)) return true;
          break;
        case MatchMethod::kSub:
          if (detail::contains_sub(str, p, icase)) return true;
          break;
        case MatchMethod::kDir:
          if (detail::match_word(str, p, icase, "/")) return true;
          break;
        case MatchMethod::kDom:
          if (detail::match_word(str, p, icase, "/?.:")) return true;
          break;
        case MatchMethod::kMeth:
          // A well-known method is compared by identity (exactly, as HTTP methods are
          // case-sensitive); any other name as a string, honouring -i, and only against a
          // method that is not a well-known one: `-i get` does not match GET (HAProxy).
          if (http::method_from(p) != http::Method::kOther) {
            if (str == p) return true;
          } else if (http::method_from(str) == http::Method::kOther &&
                     detail::str_eq(str, p, icase)) {
            return true;
          }
          break;
        default: break;
      }
    }
    return false;
  });
}

namespace {

bool valid_acl_name(std::string_view name, char* bad) {
  for (char c : name) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':' || c == '-';
    if (!ok) {
      *bad = c;
      return false;
    }
  }
  return true;
}

struct Predefined {
  std::string_view name;
  std::vector<std::string> words;
};

const std::map<std::string, std::shared_ptr<Acl>, std::less<>>& predefined_acls() {
  static const auto* table = [] {
    auto* m = new std::map<std::string, std::shared_ptr<Acl>, std::less<>>();
    const Predefined defs[] = {
        {"TRUE", {"always_true"}},
        {"FALSE", {"always_false"}},
        {"HTTP", {"always_true"}},   // rules only run on HTTP messages
        {"HTTP_1.0", {"req.ver", "1.0"}},
        {"HTTP_1.1", {"req.ver", "1.1"}},
        {"HTTP_2.0", {"req.ver", "2.0"}},
        {"HTTP_3.0", {"req.ver", "3.0"}},
        {"LOCALHOST", {"src", "127.0.0.1/8", "::1"}},
        {"METH_CONNECT", {"method", "CONNECT"}},
        {"METH_DELETE", {"method", "DELETE"}},
        {"METH_GET", {"method", "GET", "HEAD"}},
        {"METH_HEAD", {"method", "HEAD"}},
        {"METH_OPTIONS", {"method", "OPTIONS"}},
        {"METH_POST", {"method", "POST"}},
        {"METH_PUT", {"method", "PUT"}},
        {"METH_TRACE", {"method", "TRACE"}},
        {"HTTP_URL_ABS", {"url_reg", "^[^/:]*://"}},
        {"HTTP_URL_SLASH", {"url_beg", "/"}},
        {"HTTP_URL_STAR", {"url", "*"}},
        {"HTTP_CONTENT", {"hdr_val(content-length)", "gt", "0"}},
    };
    for (const auto& d : defs) {
      auto acl = std::make_shared<Acl>();
      acl->name = std::string(d.name);
      auto t = detail::parse_acl_expr(d.words, 0, d.words.size());
      if (t.ok()) acl->terms.push_back(t.value());
      m->emplace(acl->name, std::move(acl));
    }
    return m;
  }();
  return *table;
}

}  // namespace

base::Result<void> AclRegistry::parse_acl(const std::vector<std::string>& words) {
  if (words.empty() || words[0].empty())
    return base::Error::text("'acl' expects an ACL name and a criterion");
  const std::string& name = words[0];
  char bad = 0;
  if (!valid_acl_name(name, &bad))
    return base::Error::text(fmt::format("character '{}' is not permitted in acl name '{}'.", bad, name));
  if (detail::iequals(name, "or"))
    return base::Error::text(fmt::format(
        "acl name '{}' will never match. 'or' is used to express a logical disjunction within a condition.", name));
  auto term = detail::parse_acl_expr(words, 1, words.size());
  if (!term.ok())
    return base::Error::text(fmt::format("error detected while parsing ACL '{}' : {}.", name, term.error().message));
  auto it = acls_.find(name);
  if (it == acls_.end()) {
    auto acl = std::make_shared<Acl>();
    acl->name = name;
    it = acls_.emplace(name, std::move(acl)).first;
  }
  it->second->terms.push_back(term.value());
  return {};
}

std::shared_ptr<const Acl> AclRegistry::find(std::string_view name) const {
  auto it = acls_.find(name);
  if (it != acls_.end()) return it->second;
  const auto& pre = predefined_acls();
  auto p = pre.find(name);
  if (p != pre.end()) return p->second;
  return nullptr;
}

bool is_predefined_acl(std::string_view name) {
  return predefined_acls().count(name) > 0;
}

}  // namespace sluice::rules

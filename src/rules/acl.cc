// ACL expressions: parsing `criterion [flags] [--] patterns...` into a sample expression, a
// match method and compiled patterns; the ACL registry and HAProxy's predefined ACLs.
#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "rules/internal.h"

namespace sluice::rules {

namespace detail {

namespace {

using M = MatchMethod;

struct MatchName {
  std::string_view name;
  MatchMethod method;
};
constexpr MatchName kMatchNames[] = {
    {"found", M::kFound}, {"bool", M::kBool}, {"int", M::kInt}, {"ip", M::kIp},
    {"bin", M::kBin},     {"len", M::kLen},   {"str", M::kStr}, {"beg", M::kBeg},
    {"end", M::kEnd},     {"sub", M::kSub},   {"reg", M::kReg}, {"dir", M::kDir},
    {"dom", M::kDom},     {"meth", M::kMeth},   // "meth": a fetch's default only, not for -m
};

const MatchName* find_match(std::string_view name) {
  for (const auto& m : kMatchNames)
    if (m.name == name) return &m;
  return nullptr;
}

// HAProxy's ACL-only keywords: a fetch with another default match method (`path_beg` is
// `path -m beg`). The suffix families are generated from these bases.
struct Derived {
  std::string_view base;     // the ACL keyword's stem
  std::string_view fetch;    // the sample fetch it runs
};
constexpr Derived kStems[] = {
    {"base", "base"}, {"path", "path"}, {"url", "url"}, {"urlp", "url_param"},
    {"hdr", "hdr"},   {"shdr", "res.hdr"}, {"cook", "req.cook"}, {"scook", "res.cook"},
};
constexpr MatchName kSuffixes[] = {
    {"beg", M::kBeg}, {"dir", M::kDir}, {"dom", M::kDom}, {"end", M::kEnd}, {"len", M::kLen},
    {"reg", M::kReg}, {"sub", M::kSub}, {"ip", M::kIp},
};

// "path_beg" -> ("path", beg). Only hdr/shdr/urlp have the _ip form in HAProxy.
bool find_derived(std::string_view kw, std::string_view* fetch, MatchMethod* method) {
  auto us = kw.rfind('_');
  if (us == std::string_view::npos) return false;
  std::string_view stem = kw.substr(0, us), suffix = kw.substr(us + 1);
  for (const auto& d : kStems) {
    if (d.base != stem) continue;
    for (const auto& s : kSuffixes) {
      if (s.name != suffix) continue;
      if (s.method == M::kIp && stem != "hdr" && stem != "shdr" && stem != "urlp") return false;
      *fetch = d.fetch;
      *method = s.method;
      return true;
    }
  }
  return false;
}

// The match method a fetch uses when the ACL does not say: the fetch's own (FetchDef::match)
// for a bare fetch, else from the expression's type.
MatchMethod default_method(const sample::Expr& e) {
  if (!e.has_converters() && !e.fetch().match.empty()) {
    if (const MatchName* m = find_match(e.fetch().match)) return m->method;
  }
  switch (e.type()) {
    case sample::Type::kBool: return M::kBool;
    case sample::Type::kSint: return M::kInt;
    case sample::Type::kIpv4:
    case sample::Type::kIpv6: return M::kIp;
    case sample::Type::kBin: return M::kBin;
    case sample::Type::kMeth: return M::kMeth;
    default: return M::kStr;
  }
}

// The type a method compares in (what the sample is cast to).
sample::Type method_type(MatchMethod m) {
  switch (m) {
    case M::kFound: return sample::Type::kAny;
    case M::kBool: return sample::Type::kBool;
    case M::kInt: return sample::Type::kSint;
    case M::kIp: return sample::Type::kIpv6;
    case M::kBin: return sample::Type::kBin;
    case M::kMeth: return sample::Type::kMeth;
    default: return sample::Type::kStr;
  }
}

bool compatible(MatchMethod m, sample::Type t) {
  if (m == M::kFound || t == sample::Type::kAny) return true;
  if (m == M::kIp)
    return t == sample::Type::kIpv4 || t == sample::Type::kIpv6 || t == sample::Type::kStr ||
           t == sample::Type::kSint;
  if (m == M::kBool) return t == sample::Type::kBool || t == sample::Type::kSint;
  if (m == M::kInt) return t == sample::Type::kBool || t == sample::Type::kSint || t == sample::Type::kStr ||
                           t == sample::Type::kIpv4;
  return sample::can_cast(t, method_type(m));
}

bool parse_i64(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

// "3.1" -> 3 << 16 | 1, "3" -> 3 << 16: `req_ssl_ver`'s patterns (HAProxy's dotted versions).
bool parse_dotted(std::string_view s, int64_t* out) {
  auto dot = s.find('.');
  int64_t major = 0, minor = 0;
  if (!parse_i64(s.substr(0, dot), &major) || major < 0 || major > 65535) return false;
  if (dot != std::string_view::npos &&
      (!parse_i64(s.substr(dot + 1), &minor) || minor < 0 || minor > 65535))
    return false;
  *out = major << 16 | minor;
  return true;
}

base::Result<IntRange> parse_int_pattern(std::string_view op, std::string_view s, bool dotted) {
  if (dotted) {
    // Versions: a value or a range, no operators.
    IntRange r;
    auto colon = s.find(':');
    std::string_view lo = s.substr(0, colon);
    std::string_view hi = colon == std::string_view::npos ? lo : s.substr(colon + 1);
    bool ok = (lo.empty() || parse_dotted(lo, &r.min)) && (hi.empty() || parse_dotted(hi, &r.max)) &&
              !(lo.empty() && hi.empty()) && op.empty();
    if (!ok) return base::Error::text(fmt::format("'{}' is not a dotted number", s));
    return r;
  }
  IntRange r;
  auto bad = [&] { return base::Error::text(fmt::format("'{}' is not a number", s)); };
  auto bad_range = [&] { return base::Error::text(fmt::format("'{}' is not a valid number range", s)); };
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
  if (lo.empty() && hi.empty()) return bad_range();
  if (!lo.empty() && !parse_i64(lo, &r.min)) return bad_range();
  if (!hi.empty() && !parse_i64(hi, &r.max)) return bad_range();
  if (r.min > r.max) return bad_range();
  return r;
}

bool is_op(std::string_view w) {
  return w == "eq" || w == "ne" || w == "lt" || w == "le" || w == "gt" || w == "ge";
}

int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

base::Result<std::shared_ptr<AclTerm>> parse_acl_expr(const std::vector<std::string>& words,
                                                       std::size_t begin, std::size_t end) {
  if (begin >= end) return base::Error::text("missing ACL expression");
  auto term = std::make_shared<AclTerm>();
  for (std::size_t i = begin; i < end; ++i) term->text += (i > begin ? " " : "") + words[i];
  const std::string& crit = words[begin];
  // The keyword is the criterion up to its arguments or its first converter.
  std::size_t kw_end = std::min(crit.find('('), crit.find(','));
  std::string_view kw = std::string_view(crit).substr(0, kw_end);
  term->keyword = std::string(kw);
  std::string expr_text = crit;
  std::string_view derived_fetch;
  MatchMethod derived_method = M::kStr;
  bool derived = !sample::find_fetch(kw) && find_derived(kw, &derived_fetch, &derived_method);
  if (derived) expr_text = std::string(derived_fetch) + crit.substr(kw.size());
  sample::ParseCtx pc;
  pc.avail = sample::kAtAny;   // checked where the ACL is used
  std::size_t stop = 0;
  auto e = sample::Expr::parse(expr_text, pc, &stop);
  if (!e.ok()) {
    const std::string& m = e.error().message;
    if (m.starts_with("unknown fetch method"))
      return base::Error::text(fmt::format("unknown fetch method '{}' in ACL expression '{}'", kw, crit));
    if (m.starts_with("unknown converter"))
      return base::Error::text(fmt::format("{} in ACL expression '{}'", m, crit));
    // HAProxy names the ACL keyword for argument syntax errors and the expression for a
    // converter's rejected argument values.
    if (m.starts_with("fetch method '")) {
      auto colon = m.find("' : ");
      if (colon != std::string::npos)
        return base::Error::text(fmt::format("ACL keyword '{}' : {}", kw, m.substr(colon + 4)));
    }
    if (m.starts_with("invalid arg") && m.find("expected ')'") != std::string::npos)
      return base::Error::text(fmt::format("ACL keyword '{}' : {}", kw, m));
    if (m.starts_with("invalid arg"))
      return base::Error::text(fmt::format("{} in ACL expression '{}'", m, crit));
    return base::Error::text(m);
  }
  if (stop != expr_text.size()) {
    return base::Error::text(
        e->has_converters()
            ? fmt::format("missing comma after converter '{}' in ACL expression '{}'", e->last_name(), crit)
            : fmt::format("missing comma after fetch keyword in ACL expression '{}'", crit));
  }
  term->expr = std::move(e.value());
  term->method = derived ? derived_method : default_method(term->expr);
  const sample::Type type = term->expr.type();
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
      const MatchName* found = m == "meth" ? nullptr : find_match(m);
      if (!found)
        return base::Error::text(fmt::format("unknown matching method '{}' when parsing ACL expression", m));
      if (!compatible(found->method, type))
        return base::Error::text(fmt::format("matching method '{}' cannot be used with fetch keyword '{}'", m, kw));
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
  if (m == M::kFound || m == M::kBool) {
    if (i < end)
      return base::Error::text(fmt::format("'-m {}' takes no pattern (got '{}')",
                                           m == M::kFound ? "found" : "bool", words[i]));
    return term;
  }
  if (i >= end)
    return base::Error::text(fmt::format(
        "no pattern to match against was provided for ACL keyword '{}' (use '-m found' to test "
        "for existence)", crit));
  std::string op;
  const bool dotted = kw == "req_ssl_ver" && m == M::kInt && !term->expr.has_converters();
  for (; i < end; ++i) {
    const std::string& w = words[i];
    switch (m) {
      case M::kInt:
      case M::kLen: {
        if (op.empty() && is_op(w) && !dotted) {
          op = w;
          continue;
        }
        auto r = parse_int_pattern(op, w, dotted);
        if (!r.ok()) return r.error();
        term->ints.push_back(r.value());
        op.clear();
        break;
      }
      case M::kIp: {
        auto n = parse_network(w);
        if (!n.ok()) return n.error();
        term->nets.push_back(n.value());
        break;
      }
      case M::kReg: {
        auto re = std::make_unique<base::Regex>();
        std::string why;
        // HAProxy's text: "regex '(' is invalid (error=missing closing parenthesis, erroffset=1)".
        if (!re->compile(w, &why, term->icase, false)) return base::Error::text(why);
        term->regexes.push_back(std::move(re));
        break;
      }
      case M::kBin: {
        if (w.size() % 2)
          return base::Error::text(fmt::format("'{}' is not a valid hexadecimal binary string", w));
        std::string bin;
        for (std::size_t k = 0; k < w.size(); k += 2) {
          int hi = hexval(w[k]), lo = hexval(w[k + 1]);
          if (hi < 0 || lo < 0)
            return base::Error::text(fmt::format("'{}' is not a valid hexadecimal binary string", w));
          bin += static_cast<char>(hi * 16 + lo);
        }
        term->strings.push_back(std::move(bin));
        break;
      }
      default: term->strings.push_back(w); break;
    }
  }
  if (!op.empty()) return base::Error::text(fmt::format("missing value after operator '{}'", op));
  return term;
}

}  // namespace detail

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

// HAProxy's predefined ACLs (section 7.4).
const std::map<std::string, std::shared_ptr<Acl>, std::less<>>& predefined_acls() {
  static const auto* table = [] {
    auto* m = new std::map<std::string, std::shared_ptr<Acl>, std::less<>>();
    const Predefined defs[] = {
        {"TRUE", {"always_true"}},
        {"FALSE", {"always_false"}},
        {"HTTP", {"req.proto_http"}},
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
        {"HTTP_CONTENT", {"req.hdr_val(content-length)", "gt", "0"}},
        {"RDP_COOKIE", {"req.rdp_cookie_cnt", "gt", "0"}},
        {"REQ_CONTENT", {"req.len", "gt", "0"}},
        {"WAIT_END", {"wait_end"}},
    };
    for (const auto& d : defs) {
      auto t = detail::parse_acl_expr(d.words, 0, d.words.size());
      if (!t.ok()) continue;   // a fetch this build lacks: the name stays unknown
      auto acl = std::make_shared<Acl>();
      acl->name = std::string(d.name);
      acl->terms.push_back(t.value());
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
  defining_ = name;
  auto term = detail::parse_acl_expr(words, 1, words.size());
  defining_.clear();
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

namespace {

// acl(a,!b): every named ACL matches (or, with '!', does not).
class AclAnd : public sample::AclCall {
 public:
  struct Ref {
    bool negate;
    std::shared_ptr<const Acl> acl;
  };
  std::vector<Ref> refs;
  bool eval(const sample::Ctx& ctx) const override {
    for (const auto& r : refs) {
      bool m = false;
      for (const auto& t : r.acl->terms)
        if ((m = t->eval(ctx))) break;
      if (m == r.negate) return false;
    }
    return true;
  }
};

}  // namespace

bool AclRegistry::reaches(std::string_view from, std::string_view to, int depth) const {
  if (from == to) return true;
  if (depth > 64) return true;   // deeper than any sane chain: refuse rather than recurse
  auto it = calls_.find(from);
  if (it == calls_.end()) return false;
  for (const auto& n : it->second)
    if (reaches(n, to, depth + 1)) return true;
  return false;
}

std::shared_ptr<const sample::AclCall> AclRegistry::resolve(const std::vector<std::string_view>& names,
                                                            std::string* err) const {
  auto call = std::make_shared<AclAnd>();
  for (std::string_view n : names) {
    bool negate = !n.empty() && n[0] == '!';
    if (negate) n.remove_prefix(1);
    auto acl = find(n);
    if (!acl) {
      *err = fmt::format("ACL '{}' not found", n);
      return nullptr;
    }
    if (!defining_.empty() && reaches(n, defining_)) {
      *err = fmt::format("ACL '{}' would evaluate itself through ACL '{}'", defining_, n);
      return nullptr;
    }
    call->refs.push_back({negate, std::move(acl)});
  }
  if (!defining_.empty())
    for (std::string_view n : names) calls_[defining_].emplace_back(n.substr(n.starts_with('!') ? 1 : 0));
  return call;
}

bool is_predefined_acl(std::string_view name) {
  return predefined_acls().count(name) > 0;
}

}  // namespace sluice::rules

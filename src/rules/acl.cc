// ACL expressions: parsing `criterion [flags] [--] patterns...` into a sample expression, a
// match method and compiled patterns; the ACL registry and HAProxy's predefined ACLs.
#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "auth/userlist.h"
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

bool is_op(std::string_view w) {
  return w == "eq" || w == "ne" || w == "lt" || w == "le" || w == "gt" || w == "ge";
}

// The file of a `-f`, loaded for the term (a Ref shared with every other user of the file).
base::Result<std::shared_ptr<pattern::Expr>> file_patterns(const std::string& file, bool map,
                                                           const pattern::Kind& kind) {
  auto& reg = pattern::Registry::global();
  bool created = false;
  auto ref = reg.file_ref(file, map, &created);
  if (!ref.ok()) return ref.error();
  if (created) {
    auto loaded = ref.value()->load_file();
    if (!loaded.ok()) return loaded.error();
  }
  ref.value()->add_flags(pattern::Ref::kAcl);
  const auto& where = pattern::config_line();
  ref.value()->add_use(fmt::format("{} at file '{}' line {}", map ? "map" : "acl", where.file, where.line));
  auto e = std::make_shared<pattern::Expr>(ref.value(), kind);
  std::size_t bad = 0;
  auto compiled = ref.value()->compile(*e, &bad);
  if (!compiled.ok())
    return base::Error::text(fmt::format("{} at line {} of file '{}'", compiled.error().message, bad, file));
  return e;
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
  // http_auth_group's patterns are group names of its userlist, unless -m says otherwise.
  bool auth_groups = !term->expr.has_converters() && term->expr.fetch().match == "auth";
  std::vector<std::string> files;
  bool map_files = false;
  int unique_id = -1;
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
      auth_groups = false;
    } else if (w == "-f") {
      if (i + 1 >= end) return base::Error::text("'-f' expects a file name");
      files.push_back(words[++i]);
    } else if (w == "-M") {
      map_files = true;
    } else if (w == "-u") {
      if (i + 1 >= end) return base::Error::text("'-u' expects a unique identifier");
      const std::string& id = words[++i];
      auto [p, ec] = std::from_chars(id.data(), id.data() + id.size(), unique_id);
      if (ec != std::errc() || p != id.data() + id.size() || unique_id < 0)
        return base::Error::text(fmt::format("'-u' expects a positive integer as unique identifier (got '{}')", id));
    } else {
      return base::Error::text(fmt::format(
          "'{}' is not a valid ACL option. Please use '--' before any pattern beginning with a '-'", w));
    }
  }
  if (auth_groups) {
    if (!files.empty()) return base::Error::text("'-f' cannot be used with http_auth_group");
    for (; i < end; ++i) term->auth_groups.push_back(words[i]);
    const auto& at = pattern::config_line();
    auto ul = std::static_pointer_cast<auth::Userlist>(
        std::const_pointer_cast<void>(term->expr.fetch_args()[0].obj));
    term->auth_userlist = ul;
    auth::Registry::global().require_groups(ul, term->auth_groups,
                                            fmt::format("parsing [{}:{}]", at.file, at.line),
                                            fmt::format("acl '{}'", crit));
    return term;
  }
  MatchMethod m = term->method;
  pattern::Kind kind;
  kind.method = m;
  kind.icase = term->icase;
  kind.dotted = kw == "req_ssl_ver" && m == M::kInt && !term->expr.has_converters();
  // The files first, then the line's own patterns (HAProxy's order of pattern references).
  std::vector<std::shared_ptr<pattern::Expr>> from_files;
  for (const auto& f : files) {
    auto fe = file_patterns(f, map_files, kind);
    if (!fe.ok()) return fe.error();
    from_files.push_back(fe.value());
  }
  if ((m == M::kFound || m == M::kBool) && i < end)
    return base::Error::text(fmt::format("'-m {}' takes no pattern (got '{}')",
                                         m == M::kFound ? "found" : "bool", words[i]));
  if (m != M::kFound && m != M::kBool && i >= end && files.empty())
    return base::Error::text(fmt::format(
        "no pattern to match against was provided for ACL keyword '{}' (use '-m found' to test "
        "for existence)", crit));
  auto inl = pattern::Registry::global().inline_ref(unique_id);
  if (!inl.ok()) return inl.error();
  const auto& where = pattern::config_line();
  inl.value()->set_inline_desc(fmt::format("acl '{}' file '{}' line {}", kw, where.file, where.line));
  std::string op;
  for (; i < end; ++i) {
    const std::string& w = words[i];
    // An operator and its value are one entry ("ge 5"); req_ssl_ver's dotted versions take none.
    if ((m == M::kInt || m == M::kLen) && op.empty() && is_op(w) && !kind.dotted) {
      op = w;
      continue;
    }
    std::string key = op.empty() ? w : op + " " + w;
    op.clear();
    pattern::Item probe;
    auto parsed = pattern::parse_key(kind, key, probe);
    if (!parsed.ok()) return parsed.error();
    inl.value()->add_loaded(std::move(key), {});
  }
  if (!op.empty()) return base::Error::text(fmt::format("missing value after operator '{}'", op));
  auto own = std::make_shared<pattern::Expr>(inl.value(), kind);
  // A regex that does not compile fails here with HAProxy's text: "regex '(' is invalid
  // (error=missing closing parenthesis, erroffset=1)".
  auto compiled = inl.value()->compile(*own, nullptr);
  if (!compiled.ok()) return compiled.error();
  // Patterns on the line are tried first: they are the cheap, common case.
  term->patterns.push_back(std::move(own));
  for (auto& fe : from_files) term->patterns.push_back(std::move(fe));
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

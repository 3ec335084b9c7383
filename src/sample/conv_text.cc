// String converters that read variables or patterns (HAProxy's section 7.3.1): concat,
// add_item, strcmp, secure_memcmp, language and regsub.
#include <memory>
#include <string>

#include "base/regex.h"
#include "sample/tables.h"
#include "sample/var_read.h"

namespace sluice::sample::tables {

namespace {

void set_built(Sample& s, const std::string& b) {
  s.type = Type::kStr;
  s.str = b;
  s.flags &= ~kConst;
}

// Resolves a string argument naming a variable (empty: none) into Arg::var, type kVar.
std::string resolve_var(Arg& a, const ParseCtx& pc) {
  if (!a.given || a.str.empty()) return {};
  VarNames& names = pc.var_names ? *pc.var_names : VarNames::global();
  std::string err;
  if (!names.parse(a.str, &a.var, &err)) return "failed to register variable name '" + a.str + "'";
  a.type = ArgType::kVar;
  return {};
}

// The variable's text when it is set and has one.
bool var_text(const Arg& a, const Ctx& ctx, Sample* out) {
  return a.type == ArgType::kVar && read_var_as(a.var, Type::kStr, ctx, *out);
}

// concat([<start>],[<var>],[<end>])
std::string check_concat(Arg* a, const ParseCtx& pc) { return resolve_var(a[1], pc); }

bool c_concat(const Arg* a, Sample& s, const Ctx& ctx) {
  Sample v;
  bool has_var = var_text(a[1], ctx, &v);
  std::string& b = ctx.sc().next();
  b.assign(s.str);
  b += a[0].str;
  if (has_var) b += v.str;
  b += a[2].str;
  set_built(s, b);
  return true;
}

// add_item(<delim>,[<var>][,<suffix>]): the delimiter only between two non-empty parts.
std::string check_add_item(Arg* a, const ParseCtx& pc) {
  if (a[1].str.empty() && a[2].str.empty()) return "one of the optional arguments has to be nonempty";
  return resolve_var(a[1], pc);
}

bool c_add_item(const Arg* a, Sample& s, const Ctx& ctx) {
  Sample v;
  bool has_var = var_text(a[1], ctx, &v);
  std::string_view item = has_var ? v.str : std::string_view();
  std::string& b = ctx.sc().next();
  b.assign(s.str);
  if (!s.str.empty() && (!item.empty() || !a[2].str.empty())) b += a[0].str;
  b += item;
  b += a[2].str;
  set_built(s, b);
  return true;
}

// strcmp(<var>) / secure_memcmp(<var>)
std::string check_var_arg(Arg* a, const ParseCtx& pc) {
  if (a[0].str.empty()) return "missing variable name";
  return resolve_var(a[0], pc);
}

bool c_strcmp(const Arg* a, Sample& s, const Ctx& ctx) {
  Sample v;
  if (!read_var_as(a[0].var, Type::kStr, ctx, v)) return false;
  std::string_view l = s.str, r = v.str;
  int64_t res = 0;
  std::size_t n = std::min(l.size(), r.size());
  for (std::size_t i = 0; i < n && res == 0; ++i)
    res = static_cast<int64_t>(static_cast<uint8_t>(l[i])) - static_cast<uint8_t>(r[i]);
  if (res == 0 && l.size() != r.size()) res = l.size() < r.size() ? -1 : 1;
  s = Sample::integer(res);
  return true;
}

bool c_secure_memcmp(const Arg* a, Sample& s, const Ctx& ctx) {
  Sample v;
  if (!read_var_as(a[0].var, Type::kBin, ctx, v)) return false;
  bool same = s.str.size() == v.str.size();
  if (same) {
    // Constant time over the length: no early exit.
    volatile uint8_t diff = 0;
    for (std::size_t i = 0; i < s.str.size(); ++i)
      diff = static_cast<uint8_t>(diff | (static_cast<uint8_t>(s.str[i]) ^ static_cast<uint8_t>(v.str[i])));
    same = diff == 0;
  }
  s = Sample::boolean(same);
  return true;
}

// language(<value>[,<default>]): the entry of <value> ("a;b;c") that the Accept-Language
// input prefers (highest q-value, the first on ties; q=0 never), else <default>.
// q-values are read as HAProxy does: one digit, then any one character (even a ','), then up
// to three decimals, capped at 1000.
int parse_q(std::string_view in, std::size_t* p) {
  auto digit = [&](std::size_t i) { return i < in.size() && in[i] >= '0' && in[i] <= '9'; };
  if (!digit(*p)) return 1000;
  int q = (in[(*p)++] - '0') * 1000;
  if (*p < in.size()) {
    char c = in[(*p)++];
    if (c == '.') {
      for (int mul : {100, 10, 1}) {
        if (!digit(*p)) break;
        q += (in[(*p)++] - '0') * mul;
      }
    }
  }
  return q > 1000 ? 1000 : q;
}

// The first entry of `list` that names `tok` or its base language ("en" for "en-GB").
std::string_view match_lang(std::string_view list, std::string_view tok) {
  std::size_t p = 0;
  while (p <= list.size()) {
    std::size_t e = list.find(';', p);
    if (e == std::string_view::npos) e = list.size();
    std::string_view entry = list.substr(p, e - p);
    if (!entry.empty() && tok.size() >= entry.size() && tok.substr(0, entry.size()) == entry &&
        (tok.size() == entry.size() || tok[entry.size()] == '-'))
      return entry;
    p = e + 1;
  }
  return {};
}

bool c_language(const Arg* a, Sample& s, const Ctx&) {
  std::string_view in = s.str;
  auto space = [&](std::size_t i) { return i < in.size() && (in[i] == ' ' || in[i] == '\t'); };
  auto skip_spaces = [&](std::size_t* p) {
    while (space(*p)) ++*p;
  };
  auto next_value = [&](std::size_t* p) {
    std::size_t c = in.find(',', *p);
    *p = c == std::string_view::npos ? in.size() : c + 1;
  };
  std::string_view best;
  int best_q = 0;
  std::size_t p = 0;
  while (p < in.size()) {
    skip_spaces(&p);
    std::size_t t0 = p;
    while (p < in.size() && in[p] != ',' && in[p] != ';' && !space(p)) ++p;
    std::string_view tok = in.substr(t0, p - t0);
    skip_spaces(&p);
    if (p < in.size() && in[p] != ',' && in[p] != ';') {   // "fr x": not a value
      next_value(&p);
      continue;
    }
    std::string_view entry = match_lang(a[0].str, tok);
    if (entry.empty()) {
      next_value(&p);
      continue;
    }
    int q = 1000;
    if (p < in.size() && in[p] == ';') {
      ++p;
      skip_spaces(&p);
      if (p < in.size() && in[p] == 'q') {
        ++p;
        skip_spaces(&p);
        if (p < in.size() && in[p] == '=') {
          ++p;
          skip_spaces(&p);
          q = parse_q(in, &p);
        }
      }
    }
    if (q > best_q) {
      best_q = q;
      best = entry;
    }
    next_value(&p);
  }
  if (best.empty()) {
    if (!a[1].given) return false;
    best = a[1].str;
  }
  s = Sample::string(best, kConst);
  return true;
}

// regsub(<regex>,<subst>[,<flags>]): flags "i" (ignore case) and "g" (every match).
struct RegsubPattern {
  base::Regex re;
  bool global = false;
};

std::string check_regsub(Arg* a, const ParseCtx&) {
  bool icase = false, global = false;
  if (a[2].given) {
    for (char c : a[2].str) {
      if (c == 'i') icase = true;
      else if (c == 'g') global = true;
      else return std::string("invalid regex flag '") + c + "', only 'i' and 'g' are supported";
    }
  }
  if (a[0].str.empty()) return "missing regex in arg 1 of conversion keyword 'regsub'";
  auto pat = std::make_shared<RegsubPattern>();
  std::string err;
  if (!pat->re.compile(a[0].str, &err, icase, true))
    return "error in regex '" + a[0].str + "' in arg 1 of conversion keyword 'regsub' : " + err;
  pat->global = global;
  a[0].obj = pat;
  return {};
}

// HAProxy's loop: each round matches what is left of the input as a subject of its own (so `\G`,
// `\b` and lookbehinds see only that), with `^` refused after the first round (REG_NOTBOL: `g`
// never re-anchors). The text before the match is copied, then the replacement; an empty match
// at the start of the rest copies one byte to move on. At the end of the input one more round
// runs, so an empty match there adds the replacement once more: `regsub(a*,X,g)` turns "baaac"
// into "XbXXcX", `regsub($,X,g)` "abc" into "abcXX", as HAProxy 3.5 does.
bool c_regsub(const Arg* a, Sample& s, const Ctx& ctx) {
  const auto* pat = static_cast<const RegsubPattern*>(a[0].obj.get());
  if (!pat) return false;
  std::string_view in = s.str;
  std::string& b = ctx.sc().next();
  base::Regex::Groups g;
  std::size_t start = 0;
  for (bool first = true;; first = false) {
    std::string_view rest = in.substr(start);
    if (!(first || pat->global) || !pat->re.match(rest, 0, &g, !first) || g[0].first < 0) {
      b.append(rest);
      break;
    }
    auto ms = static_cast<std::size_t>(g[0].first);
    auto me = static_cast<std::size_t>(g[0].second);
    b.append(rest.substr(0, ms));
    b += base::Regex::expand(a[1].str, rest, g);
    if (start >= in.size()) break;
    if (me == 0) b += in[start++];   // an empty match at the start: keep that byte
    else start += me;
  }
  set_built(s, b);
  return true;
}

constexpr ConvDef kConvs[] = {
    {"add_item", c_add_item, args(2, ArgType::kStr, ArgType::kStr, ArgType::kStr),
     check_add_item, Type::kStr, Type::kStr},
    {"concat", c_concat, args(1, ArgType::kStr, ArgType::kStr, ArgType::kStr), check_concat,
     Type::kStr, Type::kStr},
    {"language", c_language, args(1, ArgType::kStr, ArgType::kStr), nullptr, Type::kStr,
     Type::kStr},
    {"regsub", c_regsub, args(2, ArgType::kStr, ArgType::kStr, ArgType::kStr), check_regsub,
     Type::kStr, Type::kStr},
    {"secure_memcmp", c_secure_memcmp, args(1, ArgType::kStr), check_var_arg, Type::kBin,
     Type::kBool},
    {"strcmp", c_strcmp, args(1, ArgType::kStr), check_var_arg, Type::kStr, Type::kSint},
};

}  // namespace

std::span<const ConvDef> text_convs() { return kConvs; }

}  // namespace sluice::sample::tables

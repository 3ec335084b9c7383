// Sample expressions: parsing `fetch(args),conv(args),...` and evaluating it.
#include "sample/expr.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "sample/tables.h"

namespace sluice::sample {

std::string_view arg_type_name(ArgType t) {
  switch (t) {
    case ArgType::kNone: return "none";
    case ArgType::kStr: return "string";
    case ArgType::kSint: return "integer";
    case ArgType::kVar: return "variable";
    case ArgType::kBackend: return "backend";
    case ArgType::kServer: return "server";
    case ArgType::kFrontend: return "frontend";
    case ArgType::kRegex: return "regex";
    case ArgType::kMsk4: return "IPv4 mask";
    case ArgType::kMsk6: return "IPv6 mask";
    case ArgType::kIpv4: return "IPv4 address";
    case ArgType::kIpv6: return "IPv6 address";
    case ArgType::kTime: return "delay";
    case ArgType::kSize: return "size";
  }
  return "?";
}

namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '.' || c == '_' || c == '-' || c == '+';
}

bool parse_sint(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  std::size_t i = s[0] == '+' ? 1 : 0;
  auto [p, ec] = std::from_chars(s.data() + i, s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && i < s.size();
}

bool parse_v4(std::string_view s, in_addr* out) {
  char buf[INET_ADDRSTRLEN];
  if (s.empty() || s.size() >= sizeof(buf)) return false;
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = 0;
  return inet_pton(AF_INET, buf, out) == 1;
}

bool parse_v6(std::string_view s, in6_addr* out) {
  char buf[INET6_ADDRSTRLEN];
  if (s.empty() || s.size() >= sizeof(buf)) return false;
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = 0;
  return inet_pton(AF_INET6, buf, out) == 1;
}

// A duration (ms by default; us, ms, s, m, h, d) or a size (k, m, g), HAProxy's units.
bool parse_unit(std::string_view s, bool time, int64_t* out) {
  std::size_t i = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  if (i == 0) return false;
  int64_t v = 0;
  std::from_chars(s.data(), s.data() + i, v);
  std::string_view u = s.substr(i);
  int64_t mul = 1;
  if (time) {
    if (u.empty() || u == "ms") mul = 1;
    else if (u == "us") { *out = v / 1000; return true; }
    else if (u == "s") mul = 1000;
    else if (u == "m") mul = 60000;
    else if (u == "h") mul = 3600000;
    else if (u == "d") mul = 86400000;
    else return false;
  } else {
    if (u.empty()) mul = 1;
    else if (u == "k" || u == "K") mul = 1024;
    else if (u == "m" || u == "M") mul = 1024 * 1024;
    else if (u == "g" || u == "G") mul = 1024 * 1024 * 1024;
    else return false;
  }
  *out = v * mul;
  return true;
}

// Reads one argument's text from `s` at `*pos`: up to an unquoted ',' or ')' (or the end).
// Quotes group text and are removed; inside double quotes a backslash escapes the next byte.
std::string read_arg(std::string_view s, std::size_t* pos) {
  std::string out;
  std::size_t i = *pos;
  char quote = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == quote) { quote = 0; continue; }
      if (quote == '"' && c == '\\' && i + 1 < s.size()) { out += s[++i]; continue; }
      out += c;
      continue;
    }
    if (c == '\'' || c == '"') { quote = c; continue; }
    if (c == ',' || c == ')') break;
    out += c;
  }
  *pos = i;
  return out;
}

std::string parse_one(ArgType t, const std::string& text, Arg* a, int position,
                      std::string_view what, const ParseCtx& pc) {
  a->type = t;
  a->given = true;
  a->str = text;
  auto fail = [&] {
    return fmt::format("{} : failed to parse '{}' as type '{}' at position {}", what, text,
                       arg_type_name(t), position);
  };
  switch (t) {
    case ArgType::kNone:
    case ArgType::kStr:
    case ArgType::kBackend:
    case ArgType::kServer:
    case ArgType::kFrontend:
    case ArgType::kRegex:
      return {};
    case ArgType::kSint:
      if (!parse_sint(text, &a->sint)) return fail();
      return {};
    case ArgType::kMsk4: {
      int64_t bits = 0;
      if (parse_sint(text, &bits)) {
        if (bits < 0 || bits > 32) return fail();
        a->v4.s_addr = bits == 0 ? 0 : htonl(~uint32_t{0} << (32 - bits));
        a->sint = bits;
        return {};
      }
      if (!parse_v4(text, &a->v4)) return fail();
      return {};
    }
    case ArgType::kMsk6: {
      int64_t bits = 0;
      if (!parse_sint(text, &bits) || bits < 0 || bits > 128) return fail();
      a->sint = bits;
      std::memset(&a->v6, 0, sizeof(a->v6));
      for (int i = 0; i < bits; ++i) a->v6.s6_addr[i / 8] |= static_cast<uint8_t>(0x80 >> (i % 8));
      return {};
    }
    case ArgType::kIpv4:
      if (!parse_v4(text, &a->v4)) return fail();
      return {};
    case ArgType::kIpv6:
      if (!parse_v6(text, &a->v6)) return fail();
      return {};
    case ArgType::kTime:
    case ArgType::kSize:
      if (!parse_unit(text, t == ArgType::kTime, &a->sint)) return fail();
      return {};
    case ArgType::kVar: {
      std::string err;
      VarNames& names = pc.var_names ? *pc.var_names : VarNames::global();
      if (!names.parse(text, &a->var, &err)) return "\x01" + err;   // "invalid args in"
      return {};
    }
  }
  return {};
}

}  // namespace

std::string parse_args(std::string_view s, const ArgSpec& spec, Arg* out, std::string_view what,
                       const ParseCtx& pc, int* err_arg) {
  // `s` starts right after '(' and runs to the end of the input; the list ends at ')'. As
  // HAProxy's make_arg_list, an empty list "()" is one empty argument: accepted for a string
  // (left empty), "got nothing" for a mandatory one of another type.
  std::size_t pos = 0;
  int n = 0;
  // Which argument a message is about, as HAProxy numbers it ("invalid arg N").
  auto arg_no = [&](int parsed) { return parsed == 0 ? 1 : std::max(parsed, 2); };
  auto set_arg = [&](int v) {
    if (err_arg) *err_arg = v;
  };
  if (spec.count == 0 && !s.empty() && s[0] == ')') return {};
  while (true) {
    std::size_t start = pos;
    std::string text = read_arg(s, &pos);
    if (n >= spec.count) {
      set_arg(arg_no(n));
      return fmt::format("{} : expected ')' before '{}'", what,
                         s.substr(n == 0 ? start : start - 1));
    }
    ArgType t = spec.types[n];
    if (text.empty() && t != ArgType::kStr) {
      if (n < spec.min) {
        set_arg(n + 1);
        return fmt::format("{} : expected type '{}' at position {}, but got nothing", what,
                           arg_type_name(t), n + 1);
      }
    } else {
      std::string err = parse_one(t, text, &out[n], n + 1, what, pc);
      if (!err.empty()) {
        set_arg(n + 1);
        return err;
      }
    }
    ++n;
    if (pos >= s.size()) {
      set_arg(arg_no(n));
      return fmt::format("{} : expected ')'", what);
    }
    if (s[pos] == ')') break;
    ++pos;   // ','
  }
  if (n < spec.min) {
    set_arg(n + 1);
    return fmt::format("{} : missing arguments (got {}/{}), type '{}' expected", what, n,
                       spec.min, arg_type_name(spec.types[n]));
  }
  return {};
}

namespace {

// `what` for messages of a fetch or of converter number `index`.
std::string fetch_what(std::string_view name) { return fmt::format("fetch method '{}'", name); }

// Args of `name` at s[*pos] (just after the name). Moves *pos past ')'. Error text or empty.
std::string take_args(std::string_view s, std::size_t* pos, const ArgSpec& spec, Arg* out,
                      ArgCheck check, bool is_conv, std::string_view name, const ParseCtx& pc) {
  bool has_parens = *pos < s.size() && s[*pos] == '(';
  std::string what = is_conv ? fmt::format("converter '{}'", name) : fetch_what(name);
  auto wrap = [&](std::string err, int argn) {
    if (!err.empty() && err[0] == '\x01')
      return fmt::format("invalid args in {} : {}", what, err.substr(1));
    if (!is_conv) return err;
    // "converter 'x' : msg" -> "invalid arg N in converter 'x' : msg"
    return fmt::format("invalid arg {} in {}", argn, err);
  };
  // No parentheses leave optional arguments out (`fc_rtt` is in ms), while "()" is one empty
  // argument (`fc_rtt()` is refused: "expects 'us' or 'ms', got ''"). With mandatory ones,
  // no parentheses parse as "()" (HAProxy: `str`, `ltrim` take an empty string).
  std::string_view rest = has_parens ? s.substr(*pos + 1) : std::string_view(")");
  if (has_parens || spec.min > 0) {
    int argn = 1;
    std::string err = parse_args(rest, spec, out, what, pc, &argn);
    if (!err.empty()) return wrap(err, argn);
  }
  if (has_parens) {
    // Skip to the closing ')'.
    std::size_t p = 0;
    while (true) {
      read_arg(rest, &p);
      if (p >= rest.size() || rest[p] == ')') break;
      ++p;
    }
    *pos += 1 + p + 1;
  }
  if (check) {
    std::string cerr = check(out, pc);
    if (!cerr.empty()) return fmt::format("invalid args in {} : {}", what, cerr);
  }
  return {};
}

}  // namespace

base::Result<Expr> Expr::parse(std::string_view s, const ParseCtx& pc, std::size_t* end) {
  Expr e;
  std::size_t pos = 0;
  while (pos < s.size() && is_name_char(s[pos])) ++pos;
  std::string_view name = s.substr(0, pos);
  if (name.empty()) return base::Error::text("missing fetch method");
  const FetchDef* f = find_fetch(name);
  if (!f) {
    std::string_view why = unsupported_fetch(name);
    if (!why.empty())
      return base::Error::text(
          fmt::format("fetch method '{}' is not supported by sluice yet ({})", name, why));
    return base::Error::text(fmt::format("unknown fetch method '{}'", name));
  }
  e.fetch_ = f;
  std::string err = take_args(s, &pos, f->spec, e.fargs_, f->check, false, name, pc);
  if (!err.empty()) return base::Error::text(std::move(err));
  if (f->use & ~pc.avail) {
    return base::Error::text(fmt::format(
        "sample fetch <{}> may not be reliably used here because it needs '{}' which is not "
        "available here",
        name, use_name(f->use & ~pc.avail)));
  }
  e.use_ = f->use;
  Type t = f->out;
  while (pos < s.size() && s[pos] == ',') {
    // As HAProxy: commas in a row are one, and commas that end the text are accepted
    // ("str(x),,lower", "str(x),"); before anything else ("str(x),]") they announce a
    // converter with an empty name.
    while (pos < s.size() && s[pos] == ',') ++pos;
    if (pos == s.size()) break;
    std::size_t start = pos;
    while (pos < s.size() && is_name_char(s[pos])) ++pos;
    std::string_view cname = s.substr(start, pos - start);
    const ConvDef* c = find_conv(cname);
    if (!c) {
      std::string_view why = unsupported_conv(cname);
      if (!why.empty())
        return base::Error::text(
            fmt::format("converter '{}' is not supported by sluice yet ({})", cname, why));
      return base::Error::text(fmt::format("unknown converter '{}'", cname));
    }
    Step step;
    step.def = c;
    err = take_args(s, &pos, c->spec, step.args, c->check, true, cname, pc);
    if (!err.empty()) return base::Error::text(std::move(err));
    if (!can_cast(t, c->in))
      return base::Error::text(fmt::format("converter '{}' cannot be applied", cname));
    // kAny out: with kAny in, the input's type passes on; else the type is known only at
    // run time (json_query answers a string, an integer or a boolean).
    t = c->out == Type::kAny && c->in == Type::kAny ? t : c->out;
    e.convs_.push_back(std::move(step));
  }
  e.out_ = t;
  e.text_ = std::string(s.substr(0, pos));
  if (end) *end = pos;
  return e;
}

std::string_view Expr::last_name() const {
  return convs_.empty() ? fetch_->name : convs_.back().def->name;
}

bool Expr::eval(const Ctx& ctx, Sample& out, FetchIter& it) const {
  out = Sample{};
  if (!fetch_->fn(fargs_, out, ctx, it)) return false;
  uint8_t keep = out.flags & (kNotLast | kMayChange);
  for (const auto& st : convs_) {
    if (!cast(out, st.def->in, ctx.sc()) || !st.def->fn(st.args, out, ctx)) {
      out.flags |= keep;
      return false;
    }
  }
  out.flags |= keep;
  return true;
}

bool Expr::eval_text(const Ctx& ctx, std::string& out) const {
  Sample s;
  if (!eval(ctx, s)) return false;
  return to_text(s, out);
}

namespace {
thread_local const AclResolver* t_acl_resolver = nullptr;
}  // namespace

const AclResolver* current_acl_resolver() { return t_acl_resolver; }

AclResolverScope::AclResolverScope(const AclResolver* r) : prev_(t_acl_resolver) { t_acl_resolver = r; }

AclResolverScope::~AclResolverScope() { t_acl_resolver = prev_; }

}  // namespace sluice::sample

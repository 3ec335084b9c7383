// Parsing a log-format string into nodes (format.h), with HAProxy 3.5's rules and messages.
#include "log/format.h"

#include <algorithm>
#include <cctype>
#include <mutex>

#include <fmt/format.h>

#include "sample/expr.h"

namespace sluice::log {

namespace {

constexpr AliasDef kAliases[] = {
    {"o", Alias::kGlobal, false},  {"B", Alias::kB, false},       {"CC", Alias::kCC, true},
    {"CS", Alias::kCS, true},      {"H", Alias::kH, false},       {"HM", Alias::kHM, true},
    {"HP", Alias::kHP, true},      {"HPO", Alias::kHPO, true},    {"HQ", Alias::kHQ, true},
    {"HU", Alias::kHU, true},      {"HV", Alias::kHV, true},      {"ID", Alias::kID, true},
    {"ST", Alias::kST, true},      {"T", Alias::kT, false},       {"Ta", Alias::kTa, true},
    {"Tc", Alias::kTc, false},     {"Td", Alias::kTd, false},     {"Th", Alias::kTh, false},
    {"Ti", Alias::kTi, false},     {"Tl", Alias::kTl, false},     {"Tq", Alias::kTq, true},
    {"TR", Alias::kTR, true},      {"Tr", Alias::kTr, true},      {"Ts", Alias::kTs, false},
    {"Tt", Alias::kTt, false},     {"Tu", Alias::kTu, false},     {"Tw", Alias::kTw, false},
    {"U", Alias::kU, false},       {"ac", Alias::kac, false},     {"b", Alias::kb, false},
    {"bc", Alias::kbc, false},     {"bi", Alias::kbi, false},     {"bp", Alias::kbp, false},
    {"bq", Alias::kbq, false},     {"ci", Alias::kci, false},     {"cp", Alias::kcp, false},
    {"f", Alias::kf, false},       {"fc", Alias::kfc, false},     {"fi", Alias::kfi, false},
    {"fp", Alias::kfp, false},     {"ft", Alias::kft, false},     {"hr", Alias::khr, false},
    {"hrl", Alias::khrl, false},   {"hs", Alias::khs, false},     {"hsl", Alias::khsl, false},
    {"lc", Alias::klc, false},     {"ms", Alias::kms, false},     {"pid", Alias::kpid, false},
    {"r", Alias::kr, true},        {"rc", Alias::krc, false},     {"rt", Alias::krt, false},
    {"s", Alias::ks, false},       {"sc", Alias::ksc, false},     {"si", Alias::ksi, false},
    {"sp", Alias::ksp, false},     {"sq", Alias::ksq, false},     {"sslc", Alias::ksslc, false},
    {"sslv", Alias::ksslv, false}, {"t", Alias::kt, false},       {"tr", Alias::ktr, true},
    {"trg", Alias::ktrg, true},    {"trl", Alias::ktrl, true},    {"ts", Alias::kts, false},
    {"tsc", Alias::ktsc, false},
};

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool is_alpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

// `+Q,-X,...`: names HAProxy does not know are skipped, as it does. An encoding already set
// stays: a second one is ignored.
void apply_flags(std::string_view args, uint8_t* opts) {
  while (!args.empty()) {
    std::size_t comma = args.find(',');
    std::string_view one = args.substr(0, comma);
    args = comma == std::string_view::npos ? std::string_view() : args.substr(comma + 1);
    if (one.empty() || (one[0] != '+' && one[0] != '-')) continue;
    bool add = one[0] == '+';
    std::string_view name = one.substr(1);
    uint8_t bit = 0;
    if (name == "M") bit = kOptMandatory;
    else if (name == "Q") bit = kOptQuote;
    else if (name == "X") bit = kOptHex;
    else if (name == "E") bit = kOptEscape;
    else if (name == "bin") bit = kOptBin;
    else if (name == "json") bit = kOptJson;
    else if (name == "cbor") bit = kOptCbor;
    else continue;
    if (add) *opts |= (*opts & kOptEncode) ? static_cast<uint8_t>(bit & ~kOptEncode) : bit;
    else *opts = static_cast<uint8_t>(*opts & ~bit);
  }
}

bool is_name_char(char c) { return is_alnum(c) || c == '_' || c == '-'; }

// `%(name)` or `%(name:type)` from `p` (just after the '('): the name, the type, and the
// position after ')'. HAProxy's messages.
base::Result<std::size_t> parse_name(std::string_view text, std::size_t p, std::string* name,
                                     Cast* cast) {
  const std::size_t start = p;
  std::size_t colon = std::string_view::npos;
  for (;; ++p) {
    char c = p < text.size() ? text[p] : '\0';
    if (c == ':' && colon == std::string_view::npos) {
      colon = p;
      continue;
    }
    if (c == ')') break;
    if (!is_name_char(c)) {
      // HAProxy formats the character with %c: the end of the text ends its message there.
      if (c == '\0') return base::Error::text("invalid character in custom name near '");
      return base::Error::text(fmt::format(
          "invalid character in custom name near '{}' at position {} line : '{}'", c, p, text));
    }
  }
  if (colon == std::string_view::npos) {
    *name = std::string(text.substr(start, p - start));
    *cast = Cast::kSame;
    return p + 1;
  }
  *name = std::string(text.substr(start, colon - start));
  std::string_view type = text.substr(colon + 1, p - colon - 1);
  if (type == "str") *cast = Cast::kStr;
  else if (type == "sint") *cast = Cast::kSint;
  else if (type == "bool") *cast = Cast::kBool;
  else if (type == "raw") *cast = Cast::kRaw;
  else
    return base::Error::text(fmt::format(
        "unexpected output type '{}' at position {} line : '{}'. Supported types are: str, "
        "sint, bool, raw",
        type, colon + 1, text));
  return p + 1;
}

}  // namespace

const AliasDef* find_alias(std::string_view name) {
  for (const auto& a : kAliases)
    if (a.name == name) return &a;
  return nullptr;
}

bool Format::uses(Alias a) const {
  for (const auto& n : nodes_)
    if (n.kind == Node::Kind::kAlias && n.alias == a) return true;
  return false;
}

bool Format::uses_http() const {
  for (const auto& n : nodes_) {
    if (n.kind == Node::Kind::kExpr &&
        (n.expr->use() & (sample::kUseHttpReq | sample::kUseHttpReqLine | sample::kUseHttpRes |
                          sample::kUseHttpResLine)))
      return true;
    if (n.kind == Node::Kind::kAlias)
      for (const auto& a : kAliases)
        if (a.id == n.alias && a.http) return true;
  }
  return false;
}

base::Result<Format> Format::parse(std::string_view text, uint32_t avail, bool merge_spaces) {
  Format f;
  f.text_ = std::string(text);
  uint8_t defopts = 0;
  std::string lit;
  auto flush = [&] {
    if (lit.empty()) return;
    Node n;
    n.kind = Node::Kind::kText;
    n.text = std::move(lit);
    lit.clear();
    f.nodes_.push_back(std::move(n));
  };
  std::size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == ' ' && merge_spaces) {
      flush();
      while (i < text.size() && text[i] == ' ') ++i;
      Node n;
      n.kind = Node::Kind::kSeparator;
      f.nodes_.push_back(std::move(n));
      continue;
    }
    if (c != '%') {
      lit += c;
      ++i;
      continue;
    }
    if (i + 1 >= text.size()) return base::Error::text("truncated line after '%'");
    char n1 = text[i + 1];
    if (n1 == '%') {
      lit += '%';
      i += 2;
      continue;
    }
    std::size_t p = i + 1;
    std::string name;
    Cast cast = Cast::kSame;
    if (n1 == '(') {
      auto end = parse_name(text, p + 1, &name, &cast);
      if (!end.ok()) return end.error();
      p = end.value();
      if (p >= text.size()) return base::Error::text("truncated line after '%'");
      n1 = text[p];
      // After the name, as after a '%', except that another '(' is text.
      if (n1 == '%') {
        i = p;   // the '%' is text, and so is what follows it
        lit += '%';
        ++i;
        continue;
      }
      if (n1 != '{' && n1 != '[' && !is_alpha(n1) && !std::isdigit(static_cast<unsigned char>(n1)) &&
          n1 != ' ' && n1 != '\t') {
        i = p;   // the name is dropped with its '%'; what follows is text
        continue;
      }
    }
    uint8_t opts = defopts;
    std::string_view args;
    if (n1 == '{') {
      std::size_t close = text.find('}', p + 1);
      if (close == std::string_view::npos)
        return base::Error::text(
            fmt::format("truncated line after '{}'", text.substr(p + 1)));
      args = text.substr(p + 1, close - p - 1);
      p = close + 1;
      if (p >= text.size() || (text[p] != '[' && !is_alnum(text[p])))
        return base::Error::text(fmt::format(
            "parse argument modifier without alias name near '%{{{}}}'", args));
      apply_flags(args, &opts);
    } else if (std::isdigit(static_cast<unsigned char>(n1)) || n1 == ' ' || n1 == '\t') {
      return base::Error::text(fmt::format(
          "unexpected alias name near '{}' at position {} line : '{}'. Maybe you want to write "
          "a single '%', use the syntax '%%'",
          n1, p, text));
    } else if (n1 != '[' && !is_alpha(n1)) {
      // HAProxy drops a '%' that starts nothing and keeps what follows as text.
      i += 1;
      continue;
    }
    flush();
    if (text[p] == '[') {
      std::string_view rest = text.substr(p + 1);
      sample::ParseCtx pc;
      pc.avail = avail;
      std::size_t end = 0;
      auto e = sample::Expr::parse(rest, pc, &end);
      if (!e.ok()) {
        const std::string& m = e.error().message;
        if (m.rfind("sample fetch <", 0) == 0) return base::Error::text(m);
        return base::Error::text(
            fmt::format("failed to parse sample expression <{}> : {}", rest, m));
      }
      if (end >= rest.size())
        return base::Error::text(fmt::format("missing ']' after '{}'", rest.substr(0, end)));
      if (rest[end] != ']') {
        if (std::isprint(static_cast<unsigned char>(rest[end])))
          return base::Error::text(fmt::format("expected ']' after '{}', but found '{}'",
                                               rest.substr(0, end), rest[end]));
        return base::Error::text(fmt::format("missing ']' after '{}'", rest.substr(0, end)));
      }
      Node n;
      n.kind = Node::Kind::kExpr;
      n.opts = opts;
      n.cast = cast;
      n.name = std::move(name);
      n.expr = std::make_shared<const sample::Expr>(std::move(e.value()));
      f.nodes_.push_back(std::move(n));
      i = p + 1 + end + 1;
      continue;
    }
    std::size_t e = p;
    while (e < text.size() && is_alnum(text[e])) ++e;
    std::string_view alias_name = text.substr(p, e - p);
    const AliasDef* a = find_alias(alias_name);
    if (!a)
      return base::Error::text(fmt::format(
          "no such format alias '{}'. If you wanted to emit the '%' character verbatim, you "
          "need to use '%%'",
          alias_name));
    if (a->id == Alias::kGlobal) {
      defopts = opts;
      // The line's options are those every %o sets (HAProxy keeps the first, then what
      // each later one has in common with it).
      f.line_opts_ = f.line_opts_ ? static_cast<uint8_t>(f.line_opts_ & opts) : opts;
    } else {
      Node n;
      n.kind = Node::Kind::kAlias;
      n.alias = a->id;
      n.opts = opts;
      n.cast = cast;
      n.name = std::move(name);
      f.nodes_.push_back(std::move(n));
    }
    i = e;
  }
  flush();
  // The line's encoding and +bin prevail over the nodes' (+bin is the line's only); +E does
  // not apply to an encoded value.
  const uint8_t line_enc = f.line_opts_ & (kOptEncode | kOptBin);
  for (Node& n : f.nodes_) {
    if (n.kind != Node::Kind::kAlias && n.kind != Node::Kind::kExpr) continue;
    if (f.line_opts_ & kOptEncode)
      n.opts = static_cast<uint8_t>((n.opts & ~(kOptEncode | kOptBin)) | line_enc);
    else
      n.opts = static_cast<uint8_t>((n.opts & ~kOptBin) | (f.line_opts_ & kOptBin));
    if (n.opts & kOptEncode) {
      n.opts = static_cast<uint8_t>(n.opts & ~kOptEscape);
      f.encoded_ = true;
    }
  }
  if (f.line_opts_ & kOptEncode) f.encoded_ = true;
  return f;
}

std::shared_ptr<const Format> predefined(Predefined p) {
  static std::once_flag once;
  static std::shared_ptr<const Format> formats[5];
  std::call_once(once, [] {
    const std::string_view texts[5] = {kHttpLogFormat, kClfHttpLogFormat, kTcpLogFormat,
                                       kClfTcpLogFormat, kHttpsLogFormat};
    for (int k = 0; k < 5; ++k) {
      auto f = Format::parse(texts[k]);
      formats[k] = std::make_shared<const Format>(std::move(f.value()));
    }
  });
  return formats[static_cast<int>(p)];
}

}  // namespace sluice::log

// Parsing one pattern (a key) and one map value for a method, as HAProxy's pat_parse_*.
#include <charconv>

#include <fmt/format.h>

#include "base/strings.h"
#include "http/http.h"
#include "pattern/pattern.h"

namespace sluice::pattern {

namespace {

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

base::Error text_error(std::string msg) { return base::Error::text(std::move(msg)); }

// An integer pattern: `n`, `a:b`, `a:`, `:b`, or an operator and a value (`ge 5`: how an ACL
// line's `ge` `5` words are kept as one entry).
base::Result<IntRange> parse_int(std::string_view s, bool dotted) {
  IntRange r;
  std::string_view op;
  if (auto sp = s.find(' '); sp != std::string_view::npos) {
    op = s.substr(0, sp);
    s = s.substr(sp + 1);
  }
  if (dotted) {
    // Versions: a value or a range, no operators.
    auto colon = s.find(':');
    std::string_view lo = s.substr(0, colon);
    std::string_view hi = colon == std::string_view::npos ? lo : s.substr(colon + 1);
    bool ok = (lo.empty() || parse_dotted(lo, &r.min)) && (hi.empty() || parse_dotted(hi, &r.max)) &&
              !(lo.empty() && hi.empty()) && op.empty();
    if (!ok) return text_error(fmt::format("'{}' is not a dotted number", s));
    return r;
  }
  auto bad = [&] { return text_error(fmt::format("'{}' is not a number", s)); };
  if (!op.empty()) {
    int64_t v = 0;
    if (!parse_i64(s, &v))
      return text_error(fmt::format("'{}' is not a valid integer after operator '{}'", s, op));
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
    } else if (op == "ge") {
      r.min = v;
    } else {
      return bad();
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
  auto bad_range = [&] { return text_error(fmt::format("'{}' is not a valid number range", s)); };
  std::string_view lo = s.substr(0, colon), hi = s.substr(colon + 1);
  if (lo.empty() && hi.empty()) return bad_range();
  if (!lo.empty() && !parse_i64(lo, &r.min)) return bad_range();
  if (!hi.empty() && !parse_i64(hi, &r.max)) return bad_range();
  if (r.min > r.max) return bad_range();
  return r;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace

std::string_view method_name(Method m) {
  switch (m) {
    case Method::kFound: return "found";
    case Method::kBool: return "bool";
    case Method::kInt: return "int";
    case Method::kIp: return "ip";
    case Method::kBin: return "bin";
    case Method::kStr: return "str";
    case Method::kBeg: return "beg";
    case Method::kEnd: return "end";
    case Method::kSub: return "sub";
    case Method::kReg: return "reg";
    case Method::kLen: return "len";
    case Method::kDir: return "dir";
    case Method::kDom: return "dom";
    case Method::kMeth: return "meth";
    case Method::kRegm: return "regm";
  }
  return "str";
}

base::Result<void> parse_key(const Kind& kind, std::string_view text, Item& item) {
  item.key = std::string(text);
  switch (kind.method) {
    case Method::kInt:
    case Method::kLen: {
      auto r = parse_int(text, kind.dotted);
      if (!r.ok()) return r.error();
      item.range = r.value();
      return {};
    }
    case Method::kIp: {
      auto n = net::parse_network(text);
      if (!n.ok()) return n.error();
      item.net = n.value();
      return {};
    }
    case Method::kBin: {
      if (!base::hex_decode(text, &item.cmp))
        return text_error(fmt::format("'{}' is not a valid hexadecimal binary string", text));
      return {};
    }
    case Method::kReg:
    case Method::kRegm:
      return {};   // compiled by the caller, which keeps the Regex
    case Method::kFound:
    case Method::kBool:
      return {};
    default:
      item.cmp = kind.icase && kind.method != Method::kMeth ? lower(text) : std::string(text);
      return {};
  }
}

base::Result<void> parse_value(const Kind& kind, std::string_view text, Item& item) {
  item.value = std::string(text);
  switch (kind.value) {
    case ValueType::kInt:
      if (!parse_i64(text, &item.vint)) return text_error(fmt::format("unable to parse '{}'", text));
      return {};
    case ValueType::kIp: {
      auto n = net::parse_network(text);
      if (!n.ok() || (n->family == AF_INET ? n->prefix != 32 : n->prefix != 128))
        return text_error(fmt::format("unable to parse '{}'", text));
      item.vaddr = n.value();
      return {};
    }
    default: return {};
  }
}

}  // namespace sluice::pattern

// json_query(<json_path>[,<output_type>]) (HAProxy's section 7.3.1): the value at a JSON path
// of the input, with HAProxy's behaviour, which is that of the small streaming JSON scanner it
// embeds. Facts that carry over, checked against HAProxy 3.5:
//   - the path is `$` then `.key` and `[index]` steps; `\` in a key step quotes the next
//     character (`$.a\.b` is the key "a.b"); keys compare with their raw JSON text;
//   - the scan stops at the first value found: a malformed document after it still answers,
//     and a later duplicate key is never seen; the scan also stops, with no answer, at the
//     first key after the object the path went into;
//   - strings give their unescaped text (\uXXXX only as \u00XX; `\/` is refused), numbers
//     printf's "%g" of their value (or, with "int", the leading integer of their text, as
//     strtoll with base 0 reads it, refused beyond +/-(2^53-1)), booleans a boolean, arrays
//     their JSON text; null and objects give nothing;
//   - nesting deeper than 20 containers is a malformed document.
// Nothing allocates unless the answer needs unescaping or printing (the thread's scratch).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

#include "sample/tables.h"

namespace sluice::sample::tables {

namespace {

constexpr int kJsonMaxDepth = 20;
constexpr int64_t kJsonIntMax = (int64_t{1} << 53) - 1;

// Token kinds: structural characters stand for themselves; values and keys below 32.
enum JsonTok : int {
  kJtInvalid = 0,
  kJtKey = 1,
  kJtString = 11,
  kJtNumber = 12,
  kJtTrue = 13,
  kJtFalse = 14,
  kJtNull = 15,
  kJtArray = '[',
  kJtObject = '{',
};
bool json_is_value(int t) { return t > 10 && t < 20; }
bool json_digit(char c) { return c >= '0' && c <= '9'; }

// The scanner's number reader: its value, and in *used how many bytes make the token (0 for a
// lone "-" or a number ending in '.', which the scanner then rereads as a syntax error).
double json_number(std::string_view s, std::size_t* used) {
  std::size_t p = 0, end = 0;
  double d = 0, sign = 1;
  if (p < s.size() && (s[p] == '-' || s[p] == '+')) {
    if (s[p] == '-') sign = -1;
    ++p;
  }
  if (p < s.size() && json_digit(s[p])) {
    while (p < s.size() && json_digit(s[p])) d = d * 10.0 + (s[p++] - '0');
    end = p;
  } else if (p >= s.size() || s[p] != '.') {
    *used = 0;
    return 0;
  }
  d *= sign;
  if (p < s.size() && s[p] == '.') {
    double f = 0, base = 0.1;
    ++p;
    while (p < s.size() && json_digit(s[p])) {
      f += base * (s[p++] - '0');
      base /= 10.0;
    }
    d += f * sign;
    end = p;
  }
  if (p < s.size() && (s[p] == 'e' || s[p] == 'E')) {
    ++p;
    bool neg = false;
    if (p < s.size() && s[p] == '-') neg = true, ++p;
    if (p < s.size() && s[p] == '+') ++p;
    int64_t e = 0;
    while (p < s.size() && json_digit(s[p])) {
      if (e < 100000) e = e * 10 + (s[p] - '0');
      ++p;
    }
    double f = std::pow(10.0, static_cast<double>(e));
    d = neg ? d / f : d * f;
    end = p;
  } else if (p > 0 && !json_digit(s[p - 1])) {
    end = 0;
  }
  *used = end;
  return d;
}

// One json_query lookup: the scanner feeds tokens to on_token(), which follows the path.
class JsonFind {
 public:
  explicit JsonFind(std::string_view path) : path_(path) {}

  // The token found at the path (kJtInvalid: none) and its text.
  int run(std::string_view doc, std::string_view* tok) {
    if (path_.empty() || path_[0] != '$') return kJtInvalid;
    if (scan(doc) < 0) return kJtInvalid;
    if (found_ != kJtInvalid) *tok = doc.substr(tok_off_, tok_len_);
    return found_;
  }

 private:
  bool at_end() const { return pos_ >= path_.size(); }
  char path_at(std::size_t i) const { return i < path_.size() ? path_[i] : '\0'; }

  // Logical and byte lengths of the key step starting at path_[from].
  void key_step(std::size_t from, std::size_t* chars, std::size_t* bytes) const {
    std::size_t i = from, n = 0;
    while (i < path_.size() && path_[i] != '.' && path_[i] != '[') {
      ++n;
      i += path_[i] == '\\' ? 2 : 1;
    }
    *chars = n;
    *bytes = std::min(i, path_.size()) - from;
  }

  bool key_matches(std::string_view key, std::size_t from) const {
    std::size_t i = from;
    for (char c : key) {
      if (path_at(i) == '\\') ++i;
      if (path_at(i) != c) return false;
      ++i;
    }
    return true;
  }

  // True: stop the scan.
  bool on_token(int tok, std::string_view doc, std::size_t off, std::size_t len) {
    if (found_ != kJtInvalid) return true;
    if (tok == '{') {
      if (at_end() && d1_ == d2_) obj_ = static_cast<int64_t>(off);
      ++d1_;
    } else if (tok == '[') {
      if (d1_ == d2_ && path_at(pos_) == '[') {
        i1_ = 0;
        std::size_t used = 0;
        double v = json_number(path_.substr(pos_ + 1), &used);
        i2_ = std::isnan(v) ? 0 : static_cast<int64_t>(std::clamp(v, -2147483648.0, 2147483647.0));
        if (i1_ == i2_) {
          ++d2_;
          pos_ = std::min(pos_ + 3, path_.size());
        }
      }
      if (at_end() && d1_ == d2_) obj_ = static_cast<int64_t>(off);
      ++d1_;
    } else if (tok == ',') {
      if (d1_ == d2_ + 1) {
        ++i1_;
        if (i1_ == i2_) {
          while (pos_ < path_.size() && path_[pos_] != ']') ++pos_;
          pos_ = std::min(pos_ + 1, path_.size());
          ++d2_;
        }
      }
    } else if (tok == kJtKey && d1_ == d2_ + 1 && path_at(pos_) == '.') {
      std::size_t chars = 0, bytes = 0;
      key_step(pos_ + 1, &chars, &bytes);
      std::string_view key = doc.substr(off + 1, len - 2);
      if (chars == key.size() && key_matches(key, pos_ + 1)) {
        ++d2_;
        pos_ += bytes + 1;
      }
    } else if (tok == kJtKey && d1_ == d2_) {
      return true;   // past the object the path went into: not there
    } else if (tok == '}' || tok == ']') {
      --d1_;
      if (at_end() && d1_ == d2_ && obj_ >= 0) {
        found_ = tok == '}' ? kJtObject : kJtArray;
        tok_off_ = static_cast<std::size_t>(obj_);
        tok_len_ = off - tok_off_ + 1;
        return true;
      }
    } else if (json_is_value(tok)) {
      if (d1_ == d2_ && at_end()) {
        found_ = tok;
        tok_off_ = off;
        tok_len_ = len;
        return true;
      }
    }
    return false;
  }

  // A string's length up to its closing quote (s starts after the opening one); -1: none.
  static int64_t string_len(std::string_view s) {
    for (std::size_t i = 0; i < s.size(); ++i) {
      char c = s[i];
      if (c == '\\' && i + 1 < s.size() &&
          (s[i + 1] == '"' || s[i + 1] == '\\' || s[i + 1] == '\b' || s[i + 1] == '\f' ||
           s[i + 1] == '\n' || s[i + 1] == '\r' || s[i + 1] == '\t')) {
        ++i;
      } else if (c == '\0') {
        return -1;
      } else if (c == '"') {
        return static_cast<int64_t>(i);
      }
    }
    return -1;
  }

  // The scanner: < 0 on a syntax error before the path's value was found.
  int64_t scan(std::string_view s) {
    enum { kValue, kKey, kColon, kCommaOrEnd } expect = kValue;
    char nesting[kJsonMaxDepth];
    int depth = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
      std::size_t start = i;
      char c = s[i];
      int tok = static_cast<unsigned char>(c);
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
      // Closes the container open at the current depth with `c`; true: done.
      auto close = [&](bool* done) {
        if (depth == 0 || c != nesting[depth - 1] + 2) return false;   // "[]" and "{}" are 2 apart
        --depth;
        if (depth == 0) {
          on_token(tok, s, start, i - start + 1);
          *done = true;
        }
        return true;
      };
      bool done = false;
      switch (expect) {
        case kValue:
          if (c == '{' || c == '[') {
            if (depth >= kJsonMaxDepth) return -1;
            nesting[depth++] = c;
            if (c == '{') expect = kKey;
            break;
          }
          if (c == ']' && depth > 0) {
            if (!close(&done)) return -1;
            if (done) return static_cast<int64_t>(i + 1);
            expect = kCommaOrEnd;
            break;
          }
          if (c == 't' && s.substr(i, 4) == "true") {
            i += 3;
            tok = kJtTrue;
          } else if (c == 'n' && s.substr(i, 4) == "null") {
            i += 3;
            tok = kJtNull;
          } else if (c == 'f' && s.substr(i, 5) == "false") {
            i += 4;
            tok = kJtFalse;
          } else if (c == '-' || json_digit(c)) {
            std::size_t used = 0;
            json_number(s.substr(i), &used);
            // Reread from the number's last byte; nothing used rereads `c` itself.
            if (used == 0) {
              if (on_token(kJtNumber, s, start, 0)) return static_cast<int64_t>(i + 1);
              if (depth == 0) return static_cast<int64_t>(i);
              expect = kCommaOrEnd;
              --i;
              continue;
            }
            i += used - 1;
            tok = kJtNumber;
          } else if (c == '"') {
            int64_t n = string_len(s.substr(i + 1));
            if (n < 0) return -1;
            i += static_cast<std::size_t>(n) + 1;
            tok = kJtString;
          } else {
            return -1;
          }
          if (depth == 0) {
            on_token(tok, s, start, i - start + 1);
            return static_cast<int64_t>(i + 1);
          }
          expect = kCommaOrEnd;
          break;
        case kKey:
          if (c == '"') {
            int64_t n = string_len(s.substr(i + 1));
            if (n < 0) return -1;
            i += static_cast<std::size_t>(n) + 1;
            tok = kJtKey;
            expect = kColon;
          } else if (c == '}') {
            if (!close(&done)) return -1;
            if (done) return static_cast<int64_t>(i + 1);
            expect = kCommaOrEnd;
          } else {
            return -1;
          }
          break;
        case kColon:
          if (c != ':') return -1;
          expect = kValue;
          break;
        case kCommaOrEnd:
          if (depth <= 0) return -1;
          if (c == ',') {
            expect = nesting[depth - 1] == '{' ? kKey : kValue;
          } else if (c == ']' || c == '}') {
            if (!close(&done)) return -1;
            if (done) return static_cast<int64_t>(i + 1);
          } else {
            return -1;
          }
          break;
      }
      if (on_token(tok, s, start, i - start + 1)) return static_cast<int64_t>(i + 1);
    }
    return -1;
  }

  std::string_view path_;
  std::size_t pos_ = 1;   // next step of the path
  int d1_ = 0;            // containers open
  int d2_ = 0;            // path steps matched
  int64_t i1_ = 0;        // index in the array being walked
  int64_t i2_ = 0;        // index the path wants there
  int64_t obj_ = -1;      // where the container at the path starts
  int found_ = kJtInvalid;
  std::size_t tok_off_ = 0;
  std::size_t tok_len_ = 0;
};

// strtoll(text, NULL, 0) on the bytes from the token on: sign, then hex after "0x", octal
// after "0", else decimal; saturating.
int64_t json_strtoll(std::string_view s) {
  std::size_t p = 0;
  bool neg = false;
  if (p < s.size() && (s[p] == '-' || s[p] == '+')) neg = s[p++] == '-';
  int base = 10;
  auto hexval = [](char c) {
    return c >= '0' && c <= '9' ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : 99;
  };
  if (p < s.size() && s[p] == '0') {
    if (p + 2 < s.size() && (s[p + 1] == 'x' || s[p + 1] == 'X') && hexval(s[p + 2]) < 16) {
      base = 16;
      p += 2;
    } else {
      base = 8;
    }
  }
  uint64_t v = 0;
  bool over = false;
  for (; p < s.size(); ++p) {
    int d = hexval(s[p]);
    if (d >= base) break;
    if (v > (uint64_t{1} << 63) / static_cast<uint64_t>(base)) over = true;
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
    if (v > (uint64_t{1} << 63)) over = true;
  }
  if (over) return neg ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
  if (neg) return v == (uint64_t{1} << 63) ? std::numeric_limits<int64_t>::min()
                                           : -static_cast<int64_t>(v);
  return v == (uint64_t{1} << 63) ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(v);
}

unsigned json_unhex(unsigned char c) {
  return static_cast<unsigned char>(c >= '0' && c <= '9'   ? c - '0'
                                    : c >= 'A' && c <= 'F' ? c - '7'
                                                           : c - 'W');
}

// A string token's text unescaped into `out`; false where HAProxy gives up (\u above 00FF,
// an unknown escape such as `\/`).
bool json_unescape(std::string_view s, std::string& out) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 5 < s.size() && s[i + 1] == 'u') {
      if (s[i + 2] != '0' || s[i + 3] != '0') return false;
      unsigned v = json_unhex(static_cast<unsigned char>(s[i + 4])) << 4 |
                   json_unhex(static_cast<unsigned char>(s[i + 5]));
      out.push_back(static_cast<char>(v & 0xff));
      i += 5;
    } else if (s[i] == '\\' && i + 1 < s.size()) {
      char c;
      switch (s[i + 1]) {
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'n': c = '\n'; break;
        case 'r': c = '\r'; break;
        case 't': c = '\t'; break;
        case '\\': c = '\\'; break;
        case '"': c = '"'; break;
        default: return false;
      }
      out.push_back(c);
      ++i;
    } else {
      out.push_back(s[i]);
    }
  }
  return true;
}

std::string check_json_query(Arg* a, const ParseCtx&) {
  if (a[0].str.empty()) return "json_path must not be empty";
  if (a[1].given && !a[1].str.empty()) {
    if (a[1].str != "int") return "output_type only supports \"int\" as argument";
    a[1].type = ArgType::kSint;
  }
  return {};
}

bool c_json_query(const Arg* a, Sample& s, const Ctx& ctx) {
  std::string_view doc = s.str;
  std::string_view tok;
  JsonFind find(a[0].str);
  switch (find.run(doc, &tok)) {
    case kJtNumber: {
      if (a[1].type == ArgType::kSint) {
        // strtoll reads on past the token, up to the end of the input.
        int64_t v = json_strtoll(doc.substr(static_cast<std::size_t>(tok.data() - doc.data())));
        if (v < -kJsonIntMax || v > kJsonIntMax) return false;
        s = Sample::integer(v);
        return true;
      }
      std::size_t used = 0;
      double v = json_number(tok, &used);
      char buf[64];
      int n = snprintf(buf, sizeof(buf), "%g", v);
      if (n < 0) return false;
      std::string& b = ctx.sc().next();
      b.assign(buf, static_cast<std::size_t>(n));
      s.type = Type::kStr;
      s.str = b;
      s.flags &= ~kConst;
      return true;
    }
    case kJtTrue:
      s = Sample::boolean(true);
      return true;
    case kJtFalse:
      s = Sample::boolean(false);
      return true;
    case kJtString: {
      std::string_view body = tok.substr(1, tok.size() - 2);
      s.type = Type::kStr;
      if (body.find('\\') == std::string_view::npos) {
        s.str = body;   // the input's own bytes
        return true;
      }
      std::string& b = ctx.sc().next();
      if (!json_unescape(body, b)) return false;
      s.str = b;
      s.flags &= ~kConst;
      return true;
    }
    case kJtArray:
      s.type = Type::kStr;
      s.str = tok;
      return true;
    default:
      return false;   // null, an object, nothing there, a malformed document
  }
}

constexpr ConvDef kConvs[] = {
    {"json_query", c_json_query, args(1, ArgType::kStr, ArgType::kStr), check_json_query,
     Type::kStr, Type::kAny},
};

}  // namespace

std::span<const ConvDef> json_convs() { return kConvs; }

}  // namespace sluice::sample::tables

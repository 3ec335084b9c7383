#include "config/tokenizer.h"

#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "base/strings.h"

extern char** environ;

namespace sluice::config {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }
bool is_name_first(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
bool is_name_char(char c) { return is_name_first(c) || (c >= '0' && c <= '9'); }
// Builds one line's words. A word exists once any of its characters (or an opening quote) has
// been seen; an empty word is kept only when quotes created it, not when a `[*]` expansion
// produced nothing.
class LineTokenizer {
 public:
  LineTokenizer(std::string_view line, const TokenizeContext& ctx) : line_(line), ctx_(ctx) {}

  TokenizedLine run() {
    enum class Quote { kNone, kSingle, kDouble } q = Quote::kNone;
    std::size_t quote_at = 0;
    std::size_t i = 0;
    const std::size_t n = line_.size();
    while (i < n && !out_.error) {
      char c = line_[i];
      if (q == Quote::kNone) {
        if (is_blank(c)) {
          finish();
          ++i;
        } else if (c == '#' && ctx_.hash_is_comment) {
          break;
        } else if (c == '\'' || c == '"') {
          start(i);
          forced_ = true;
          q = c == '\'' ? Quote::kSingle : Quote::kDouble;
          quote_at = i;
          ++i;
        } else if (c == '\\') {
          start(i);
          i = escape(i, false);
        } else {
          start(i);
          cur_ += c;
          ++i;
        }
      } else if (q == Quote::kSingle) {
        if (c == '\'') {
          q = Quote::kNone;
        } else {
          cur_ += c;
        }
        ++i;
      } else {
        if (c == '"') {
          q = Quote::kNone;
          ++i;
        } else if (c == '\\') {
          i = escape(i, true);
        } else if (c == '$') {
          i = expand(i);
        } else {
          cur_ += c;
          ++i;
        }
      }
    }
    if (!out_.error && q != Quote::kNone) fail("unmatched quote", quote_at);
    if (!out_.error) finish();
    return std::move(out_);
  }

 private:
  void fail(std::string what, std::size_t index) {
    if (out_.error) return;
    out_.error = std::move(what);
    out_.error_pos = static_cast<int>(index) + 1;
  }

  void start(std::size_t i) {
    if (started_) return;
    started_ = true;
    pos_ = static_cast<int>(i) + 1;
  }

  void finish() {
    if (!started_) return;
    // HAProxy's words are C strings: a `\x00` ends the word for every keyword parser, though
    // the word still exists (`\x00` alone is an empty argument).
    auto nul = cur_.find('\0');
    if (nul != std::string::npos) {
      cur_.resize(nul);
      forced_ = true;
      star_ = false;
    }
    if (!cur_.empty() || (forced_ && !star_)) {
      if (out_.words.size() >= kMaxWords) {
        const Word& last = out_.words[kMaxWords - 1];
        out_.error = fmt::format("too many words, truncating after word {}, position {}: <{}>.",
                                 kMaxWords, last.pos, last.text);
        out_.error_pos = 0;
      } else {
        out_.words.push_back(Word{std::move(cur_), pos_, caret_ ? caret_ : pos_});
      }
    }
    cur_.clear();
    started_ = forced_ = star_ = false;
    caret_ = 0;
  }

  std::size_t escape(std::size_t i, bool in_double) {
    if (i + 1 >= line_.size()) {   // a trailing backslash stays (no line continuation)
      cur_ += '\\';
      return i + 1;
    }
    char n = line_[i + 1];
    switch (n) {
      case '\\': cur_ += '\\'; break;
      case ' ': cur_ += ' '; break;
      case 't': cur_ += '\t'; break;
      case 'n': cur_ += '\n'; break;
      case 'r': cur_ += '\r'; break;
      case '#': cur_ += '#'; break;
      case '\'': cur_ += '\''; break;
      case '"': cur_ += '"'; break;
      case '$':
        if (in_double) {
          cur_ += '$';
        } else {
          cur_ += "\\$";
        }
        break;
      case 'x': {
        int h = i + 2 < line_.size() ? base::hex_value(line_[i + 2]) : -1;
        int l = i + 3 < line_.size() ? base::hex_value(line_[i + 3]) : -1;
        if (h < 0 || l < 0) {
          fail("truncated or invalid hexadecimal sequence", i);
          return line_.size();
        }
        cur_ += static_cast<char>(h * 16 + l);
        return i + 4;
      }
      default:
        cur_ += '\\';
        cur_ += n;
        break;
    }
    return i + 2;
  }

  std::optional<std::string> pseudo_var(std::string_view name) const {
    if (name == ".LINE") return std::to_string(ctx_.line);
    if (name == ".FILE") return std::string(ctx_.file);
    if (name == ".SECTION") return std::string(ctx_.section);
    return std::nullopt;
  }

  // `i` is at '$' inside double quotes.
  std::size_t expand(std::size_t i) {
    const std::size_t n = line_.size();
    std::size_t j = i + 1;
    bool brace = j < n && line_[j] == '{';
    std::size_t name_at = brace ? j + 1 : j;
    std::size_t k = name_at;
    std::optional<std::string> value;
    bool star = false;
    if (brace && k < n && line_[k] == '.') {
      std::size_t e = k + 1;
      while (e < n && is_name_char(line_[e])) ++e;
      value = pseudo_var(line_.substr(k, e - k));
      if (!value) {
        fail("forbidden first char in environment variable name", k);
        return n;
      }
      k = e;
    } else {
      if (k >= n || !is_name_first(line_[k])) {
        fail("forbidden first char in environment variable name", k);
        return n;
      }
      while (k < n && is_name_char(line_[k])) ++k;
      if (ctx_.env) value = ctx_.env->get(line_.substr(name_at, k - name_at));
    }
    if (brace) {
      if (k < n && line_[k] == '[') {
        if (line_.substr(k, 3) != "[*]") {
          fail("truncated or invalid word expansion sequence", k);
          return n;
        }
        star = true;
        k += 3;
      }
      if (k < n && line_[k] == '-') {
        auto close = line_.find('}', k + 1);
        if (close == std::string_view::npos) {
          fail("unmatched brace in environment variable name", j);
          return n;
        }
        // The default is raw text: no escapes, no nested expansion.
        if (!value) value = std::string(line_.substr(k + 1, close - k - 1));
        k = close;
      }
      if (k >= n || line_[k] != '}') {
        fail("unmatched brace in environment variable name", j);
        return n;
      }
      ++k;
    }
    if (!caret_) caret_ = static_cast<int>(name_at) + 1;
    std::string v = value.value_or("");
    if (!star) {
      cur_ += v;
      return k;
    }
    // `[*]`: whitespace inside the value separates words, and the quotes around the
    // expansion no longer make an empty word on their own.
    star_ = true;
    for (char c : v) {
      if (is_blank(c) || c == '\n' || c == '\r') {
        if (started_) {
          int keep_pos = pos_;
          finish();
          started_ = true;
          star_ = true;
          pos_ = keep_pos;
        }
      } else {
        cur_ += c;
      }
    }
    return k;
  }

  std::string_view line_;
  const TokenizeContext& ctx_;
  TokenizedLine out_;
  std::string cur_;
  bool started_ = false;
  bool forced_ = false;
  bool star_ = false;
  int pos_ = 0;
  int caret_ = 0;
};

}  // namespace

std::optional<std::string> Env::get(std::string_view name) const {
  auto it = overlay_.find(name);
  if (it != overlay_.end()) return it->second;
  if (cleared_) return std::nullopt;
  const char* v = std::getenv(std::string(name).c_str());
  if (!v) return std::nullopt;
  return std::string(v);
}

void Env::set(const std::string& name, const std::string& value, bool overwrite) {
  if (!overwrite && defined(name)) return;
  overlay_[name] = value;
}

void Env::unset(const std::string& name) { overlay_[name] = std::nullopt; }

void Env::reset(const std::vector<std::string>& keep) {
  std::map<std::string, std::optional<std::string>, std::less<>> kept;
  for (const auto& k : keep) {
    auto v = get(k);
    if (v) kept[k] = v;
  }
  overlay_ = std::move(kept);
  cleared_ = true;
}

void Env::apply_to_process() const {
  if (cleared_) {
    std::vector<std::string> names;
    for (char** e = environ; e && *e; ++e) {
      std::string_view kv(*e);
      names.emplace_back(kv.substr(0, kv.find('=')));
    }
    for (const auto& n : names)
      if (!overlay_.count(n)) ::unsetenv(n.c_str());
  }
  for (const auto& [k, v] : overlay_) {
    if (v) {
      ::setenv(k.c_str(), v->c_str(), 1);
    } else {
      ::unsetenv(k.c_str());
    }
  }
}

TokenizedLine tokenize_line(std::string_view line, const TokenizeContext& ctx) {
  return LineTokenizer(line, ctx).run();
}

std::string caret_display(std::string_view raw_line, int pos) {
  std::size_t lead = 0;
  while (lead < raw_line.size() && is_blank(raw_line[lead])) ++lead;
  int col = pos - 1 - static_cast<int>(lead);
  if (col < 0) col = 0;
  return fmt::format("  {}\n  {}^", raw_line.substr(lead), std::string(static_cast<std::size_t>(col), ' '));
}

std::string expand_address_env(std::string_view word, const Env& env) {
  std::string out;
  std::size_t i = 0;
  while (i < word.size()) {
    char c = word[i];
    if (c != '$' || i + 1 >= word.size()) {
      out += c;
      ++i;
      continue;
    }
    if (word[i + 1] == '{') {
      auto close = word.find('}', i + 2);
      if (close == std::string_view::npos) {
        out += c;
        ++i;
        continue;
      }
      out += env.get(word.substr(i + 2, close - i - 2)).value_or("");
      i = close + 1;
    } else if (is_name_first(word[i + 1])) {
      std::size_t k = i + 1;
      while (k < word.size() && is_name_char(word[k])) ++k;
      out += env.get(word.substr(i + 1, k - i - 1)).value_or("");
      i = k;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

}  // namespace sluice::config

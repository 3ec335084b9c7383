#pragma once
// HAProxy's line tokenizer (words, quotes, escapes, `$` expansion, error positions) and the
// environment it expands from.
// Internal to config/; main thread only.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::config {

// The environment as the configuration sees it: the process environment plus what
// setenv/presetenv/unsetenv/resetenv changed while loading. Kept as an overlay so that tests and
// the fuzzer never alter the process; load() applies it at the end (as HAProxy's changes persist).
class Env {
 public:
  std::optional<std::string> get(std::string_view name) const;
  bool defined(std::string_view name) const { return get(name).has_value(); }
  void set(const std::string& name, const std::string& value, bool overwrite);
  void unset(const std::string& name);
  // resetenv: drops every variable except those named in `keep`.
  void reset(const std::vector<std::string>& keep);
  void apply_to_process() const;

 private:
  std::map<std::string, std::optional<std::string>, std::less<>> overlay_;
  bool cleared_ = false;   // after resetenv, the process environment no longer shows through
};

inline constexpr std::size_t kMaxWords = 64;

struct Word {
  std::string text;
  int pos = 0;     // 1-based column of the word's first character in the raw line
  int caret = 0;   // where an "is empty" message points: the variable name, else the word start
};

struct TokenizeContext {
  const Env* env = nullptr;
  std::string_view file;      // ${.FILE}
  int line = 0;               // ${.LINE}
  std::string_view section;   // ${.SECTION}
  bool hash_is_comment = true;   // false for `-cc`, where '#' is literal
};

struct TokenizedLine {
  std::vector<Word> words;
  // Set on a fatal tokenizer error: the reason ("unmatched quote") and the 1-based raw
  // position it points at, or position 0 for errors shown without a caret (too many words).
  std::optional<std::string> error;
  int error_pos = 0;
};

TokenizedLine tokenize_line(std::string_view line, const TokenizeContext& ctx);

// "  <line without indentation>\n  <spaces>^": the two lines HAProxy prints under a message
// that points into a line. `pos` is 1-based in the raw line.
std::string caret_display(std::string_view raw_line, int pos);

// The legacy second expansion of address words (QUIRK kept from HAProxy: the address of
// `bind`, `server`, `log`, `stats socket` and server `addr`): `$NAME` and `${NAME}` whatever
// the quoting, no defaults, no `[*]`.
std::string expand_address_env(std::string_view word, const Env& env);

}  // namespace sluice::config

#pragma once
// Perl-compatible regular expressions on PCRE2 (Debian's libpcre2-8), as HAProxy builds with
// USE_PCRE2 + USE_PCRE2_JIT. Each pattern is compiled once, JIT-compiled where the library can
// (otherwise PCRE2's interpreter runs it, as HAProxy does), then shared read-only by every worker
// thread: the match state lives in a per-thread match block, so matching allocates nothing.
// Preferred over std::regex: no exceptions on the data path, and GCC 12 under the sanitizers warns
// about std::regex internals.
#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

struct pcre2_real_code_8;

namespace sluice::base {

class Regex {
 public:
  static constexpr int kMaxGroups = 10;   // \0 .. \9, as HAProxy's MAX_MATCH
  // Capture groups of one match: {start, end} offsets into the text, {-1, -1} when a group did
  // not take part. Group 0 is the whole match. A fixed array: no allocation per match.
  using Groups = std::array<std::pair<int, int>, kMaxGroups>;

  Regex() = default;
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;
  Regex(Regex&& other) noexcept;
  Regex& operator=(Regex&& other) noexcept;

  // Compiles `pattern` (up to its first NUL byte, as HAProxy passes it). `icase` ignores case;
  // without `captures`, plain parentheses do not capture (HAProxy's PCRE2_NO_AUTO_CAPTURE), so
  // only whether it matches is known. `jit` false keeps the interpreter (tests, benchmarks). On
  // failure returns false with HAProxy's message in *error, e.g. "regex '(' is invalid
  // (error=missing closing parenthesis, erroffset=1)".
  bool compile(const std::string& pattern, std::string* error, bool icase = false,
               bool captures = false, bool jit = true);
  bool compiled() const { return code_ != nullptr; }
  // True when the pattern runs JIT-compiled code (false: PCRE2's interpreter).
  bool jit() const { return jit_; }

  // True if the pattern matches anywhere in `text` (false when not compiled). NUL bytes in
  // `text` are ordinary bytes.
  bool search(std::string_view text) const;
  // Like search(), and fills `groups` when the regex was compiled with captures (otherwise only
  // group 0 is known).
  bool search_groups(std::string_view text, Groups* groups) const;
  // The general form: looks for a match starting at or after `offset` in `text` (what comes
  // before still counts for lookbehinds and \b). `not_bol`: the start of `text` is not the start
  // of a line, so `^` does not match there (POSIX REG_NOTBOL). `groups` may be null; its offsets
  // are into `text`. False when there is no match, `offset` is past the end, or the match gave
  // up (JIT stack or match limit).
  bool match(std::string_view text, std::size_t offset, Groups* groups, bool not_bol = false) const;

  // HAProxy's exp_replace(): copies `tmpl`, replacing `\N` (a digit) by group N of `text`
  // (nothing when the group did not match), `\xHH` by that byte and `\c` by c. A trailing lone
  // backslash is kept.
  static std::string expand(std::string_view tmpl, std::string_view text, const Groups& groups);

  // The PCRE2 library's version, e.g. "10.42 2022-12-11", and whether it can JIT-compile on
  // this machine: what `-vv` reports.
  static std::string library_version();
  static bool jit_supported();

 private:
  pcre2_real_code_8* code_ = nullptr;
  bool jit_ = false;
  bool captures_ = false;
};

}  // namespace sluice::base

#pragma once
// POSIX extended regular expressions (regcomp/regexec), as HAProxy uses without PCRE. Preferred
// over std::regex: no exceptions on the data path, and GCC 12 under the sanitizers warns about
// std::regex internals. Compile once, match from any thread (regexec is reentrant).
#include <regex.h>

#include <string>
#include <string_view>
#include <vector>

namespace sluice::base {

class Regex {
 public:
  // Capture groups of one match: {start, end} offsets into the text, {-1, -1} when a group did
  // not take part. Group 0 is the whole match.
  using Groups = std::vector<std::pair<int, int>>;
  static constexpr int kMaxGroups = 10;   // \0 .. \9, as HAProxy's MAX_MATCH

  Regex() = default;
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;
  Regex(Regex&& other) noexcept;
  Regex& operator=(Regex&& other) noexcept;

  // Compiles `pattern`; on failure returns false with the reason in *error.
  bool compile(const std::string& pattern, std::string* error);
  // The same with options: `icase` ignores case (REG_ICASE); `captures` keeps the groups for
  // search_groups() (otherwise only whether it matches is known).
  bool compile(const std::string& pattern, std::string* error, bool icase, bool captures);
  bool compiled() const { return compiled_; }
  // True if the pattern matches anywhere in `text` (false when not compiled).
  bool search(std::string_view text) const;
  // Like search(), and fills `groups` (kMaxGroups entries) when the regex was compiled with
  // captures. Text with a NUL byte is matched up to that byte.
  bool search_groups(std::string_view text, Groups* groups) const;

  // HAProxy's exp_replace(): copies `tmpl`, replacing `\N` (a digit) by group N of `text`
  // (nothing when the group did not match), `\xHH` by that byte and `\c` by c. A trailing lone
  // backslash is kept.
  static std::string expand(std::string_view tmpl, std::string_view text, const Groups& groups);

 private:
  regex_t re_{};
  bool compiled_ = false;
  bool captures_ = false;
};

}  // namespace sluice::base

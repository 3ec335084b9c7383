#pragma once
// POSIX extended regular expressions (regcomp/regexec), as HAProxy uses without PCRE. Preferred
// over std::regex: no exceptions on the data path, and GCC 12 under the sanitizers warns about
// std::regex internals. Compile once, match from any thread (regexec is reentrant).
#include <regex.h>

#include <string>
#include <string_view>

namespace sluice::base {

class Regex {
 public:
  Regex() = default;
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;
  Regex(Regex&& other) noexcept;
  Regex& operator=(Regex&& other) noexcept;

  // Compiles `pattern`; on failure returns false with the reason in *error.
  bool compile(const std::string& pattern, std::string* error);
  bool compiled() const { return compiled_; }
  // True if the pattern matches anywhere in `text` (false when not compiled).
  bool search(std::string_view text) const;

 private:
  regex_t re_{};
  bool compiled_ = false;
};

}  // namespace sluice::base

#include "base/regex.h"

#include <utility>

namespace sluice::base {

Regex::~Regex() {
  if (compiled_) regfree(&re_);
}

Regex::Regex(Regex&& other) noexcept : re_(other.re_), compiled_(other.compiled_) {
  other.compiled_ = false;
}

Regex& Regex::operator=(Regex&& other) noexcept {
  if (this != &other) {
    if (compiled_) regfree(&re_);
    re_ = other.re_;
    compiled_ = other.compiled_;
    other.compiled_ = false;
  }
  return *this;
}

bool Regex::compile(const std::string& pattern, std::string* error) {
  if (compiled_) {
    regfree(&re_);
    compiled_ = false;
  }
  int rc = regcomp(&re_, pattern.c_str(), REG_EXTENDED | REG_NOSUB);
  if (rc != 0) {
    char buf[256];
    regerror(rc, &re_, buf, sizeof buf);
    if (error) *error = buf;
    return false;
  }
  compiled_ = true;
  return true;
}

bool Regex::search(std::string_view text) const {
  if (!compiled_) return false;
  std::string s(text);   // regexec needs a NUL-terminated string
  return regexec(&re_, s.c_str(), 0, nullptr, 0) == 0;
}

}  // namespace sluice::base

#include "base/regex.h"

#include <cctype>
#include <utility>

namespace sluice::base {

Regex::~Regex() {
  if (compiled_) regfree(&re_);
}

Regex::Regex(Regex&& other) noexcept
    : re_(other.re_), compiled_(other.compiled_), captures_(other.captures_) {
  other.compiled_ = false;
}

Regex& Regex::operator=(Regex&& other) noexcept {
  if (this != &other) {
    if (compiled_) regfree(&re_);
    re_ = other.re_;
    compiled_ = other.compiled_;
    captures_ = other.captures_;
    other.compiled_ = false;
  }
  return *this;
}

bool Regex::compile(const std::string& pattern, std::string* error) {
  return compile(pattern, error, false, false);
}

bool Regex::compile(const std::string& pattern, std::string* error, bool icase, bool captures) {
  if (compiled_) {
    regfree(&re_);
    compiled_ = false;
  }
  int flags = REG_EXTENDED;
  if (!captures) flags |= REG_NOSUB;
  if (icase) flags |= REG_ICASE;
  int rc = regcomp(&re_, pattern.c_str(), flags);
  if (rc != 0) {
    char buf[256];
    regerror(rc, &re_, buf, sizeof buf);
    if (error) *error = buf;
    return false;
  }
  compiled_ = true;
  captures_ = captures;
  return true;
}

bool Regex::search(std::string_view text) const {
  if (!compiled_) return false;
  std::string s(text);   // regexec needs a NUL-terminated string
  return regexec(&re_, s.c_str(), 0, nullptr, 0) == 0;
}

bool Regex::search_groups(std::string_view text, Groups* groups) const {
  if (groups) groups->assign(kMaxGroups, {-1, -1});
  if (!compiled_) return false;
  std::string s(text);
  if (!captures_ || !groups) return regexec(&re_, s.c_str(), 0, nullptr, 0) == 0;
  regmatch_t m[kMaxGroups];
  if (regexec(&re_, s.c_str(), kMaxGroups, m, 0) != 0) return false;
  for (int i = 0; i < kMaxGroups; ++i)
    (*groups)[static_cast<std::size_t>(i)] = {static_cast<int>(m[i].rm_so), static_cast<int>(m[i].rm_eo)};
  return true;
}

namespace {
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::string Regex::expand(std::string_view tmpl, std::string_view text, const Groups& groups) {
  std::string out;
  out.reserve(tmpl.size() + text.size());
  for (std::size_t i = 0; i < tmpl.size(); ++i) {
    char c = tmpl[i];
    if (c != '\\' || i + 1 >= tmpl.size()) {
      out += c;
      continue;
    }
    char n = tmpl[++i];
    if (n >= '0' && n <= '9') {
      auto g = static_cast<std::size_t>(n - '0');
      if (g < groups.size() && groups[g].first >= 0 && groups[g].second >= groups[g].first &&
          static_cast<std::size_t>(groups[g].second) <= text.size())
        out.append(text.substr(static_cast<std::size_t>(groups[g].first),
                               static_cast<std::size_t>(groups[g].second - groups[g].first)));
    } else if (n == 'x' && i + 2 < tmpl.size() && hex_value(tmpl[i + 1]) >= 0 &&
               hex_value(tmpl[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(tmpl[i + 1]) * 16 + hex_value(tmpl[i + 2]));
      i += 2;
    } else {
      out += n;
    }
  }
  return out;
}

}  // namespace sluice::base

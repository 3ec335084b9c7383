#include "base/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <utility>
#include <fmt/format.h>

#include "base/strings.h"

namespace sluice::base {

namespace {

// One match block per thread, sized for \0..\9: the compiled patterns are shared read-only by
// every worker thread, and this is the only state a match writes. Created on a thread's first
// match, freed when the thread ends. A pattern with more groups still matches (pcre2_match()
// returns 0: the block is full) and reports the first kMaxGroups.
pcre2_match_data* thread_match_data() {
  struct Holder {
    pcre2_match_data* md = pcre2_match_data_create(Regex::kMaxGroups, nullptr);
    ~Holder() { pcre2_match_data_free(md); }
  };
  thread_local Holder holder;
  return holder.md;
}

}  // namespace

Regex::~Regex() { pcre2_code_free(code_); }

Regex::Regex(Regex&& other) noexcept
    : code_(std::exchange(other.code_, nullptr)), jit_(other.jit_), captures_(other.captures_) {}

Regex& Regex::operator=(Regex&& other) noexcept {
  if (this != &other) {
    pcre2_code_free(code_);
    code_ = std::exchange(other.code_, nullptr);
    jit_ = other.jit_;
    captures_ = other.captures_;
  }
  return *this;
}

bool Regex::compile(const std::string& pattern, std::string* error, bool icase, bool captures,
                    bool jit) {
  pcre2_code_free(code_);
  code_ = nullptr;
  jit_ = false;
  uint32_t options = 0;
  if (icase) options |= PCRE2_CASELESS;
  if (!captures) options |= PCRE2_NO_AUTO_CAPTURE;
  int errcode = 0;
  PCRE2_SIZE erroffset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.c_str()),
                                   PCRE2_ZERO_TERMINATED, options, &errcode, &erroffset, nullptr);
  if (!code) {
    PCRE2_UCHAR buf[256];
    if (pcre2_get_error_message(errcode, buf, sizeof buf) < 0) buf[0] = 0;
    if (error)
      *error = fmt::format("regex '{}' is invalid (error={}, erroffset={})", pattern.c_str(),
                           reinterpret_cast<const char*>(buf), erroffset);
    return false;
  }
  if (jit) {
    int rc = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
    if (rc == 0) {
      jit_ = true;
    } else if (rc != PCRE2_ERROR_JIT_BADOPTION) {
      // JIT is there but could not compile this pattern (out of memory): HAProxy refuses it
      // rather than run it slowly. BADOPTION means no JIT on this build or CPU: interpreter.
      pcre2_code_free(code);
      if (error) *error = fmt::format("regex '{}' jit compilation failed", pattern.c_str());
      return false;
    }
  }
  code_ = code;
  captures_ = captures;
  return true;
}

bool Regex::search(std::string_view text) const { return match(text, 0, nullptr); }

bool Regex::search_groups(std::string_view text, Groups* groups) const {
  return match(text, 0, groups);
}

bool Regex::match(std::string_view text, std::size_t offset, Groups* groups, bool not_bol) const {
  if (groups) groups->fill({-1, -1});
  if (!code_ || offset > text.size()) return false;
  pcre2_match_data* md = thread_match_data();
  if (!md) return false;
  // An empty view may have a null data(); PCRE2 wants a valid pointer even for length 0.
  auto subject = reinterpret_cast<PCRE2_SPTR>(text.data() ? text.data() : "");
  uint32_t options = not_bol ? PCRE2_NOTBOL : 0;
  int rc = jit_ ? pcre2_jit_match(code_, subject, text.size(), offset, options, md, nullptr)
                : pcre2_match(code_, subject, text.size(), offset, options, md, nullptr);
  if (rc < 0) return false;   // PCRE2_ERROR_NOMATCH, or a limit was hit: no match
  if (groups) {
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    int n = rc == 0 ? kMaxGroups : std::min(rc, kMaxGroups);
    if (!captures_) n = 1;
    for (int i = 0; i < n; ++i) {
      if (ov[2 * i] == PCRE2_UNSET) continue;
      (*groups)[static_cast<std::size_t>(i)] = {static_cast<int>(ov[2 * i]),
                                                static_cast<int>(ov[2 * i + 1])};
    }
  }
  return true;
}

std::string Regex::library_version() {
  char buf[64];
  if (pcre2_config(PCRE2_CONFIG_VERSION, buf) < 0) return {};
  return buf;
}

bool Regex::jit_supported() {
  uint32_t jit = 0;
  return pcre2_config(PCRE2_CONFIG_JIT, &jit) >= 0 && jit != 0;
}


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

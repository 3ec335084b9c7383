#include "net/crt_list.h"

#include <fmt/format.h>

namespace sluice::net::tls {

namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// The whitespace-separated words of one line (brackets stay attached to their words).
std::vector<std::string> words_of(std::string_view line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && blank(line[i])) ++i;
    std::size_t start = i;
    while (i < line.size() && !blank(line[i])) ++i;
    if (i > start) out.emplace_back(line.substr(start, i - start));
  }
  return out;
}

}  // namespace

base::Result<std::vector<CrtListLine>> parse_crt_list(std::string_view text, std::string_view path) {
  std::vector<CrtListLine> out;
  int n = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view raw = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++n;
    if (raw.find('\0') != std::string_view::npos)
      return base::Error::text(fmt::format("parsing [{}:{}]: a NUL byte in the line.", path, n));
    std::vector<std::string> w = words_of(raw);
    if (w.empty() || w[0][0] == '#') {
      if (eol == text.size()) break;
      continue;
    }
    CrtListLine l;
    l.line = n;
    l.crt = w[0];
    if (l.crt.front() == '[')
      return base::Error::text(fmt::format("parsing [{}:{}]: expects a certificate file first.", path, n));
    std::size_t i = 1;
    if (i < w.size() && w[i].front() == '[') {
      // The options: from the word starting with '[' to the one ending with ']'.
      bool closed = false;
      for (; i < w.size() && !closed; ++i) {
        std::string word = w[i];
        if (word.front() == '[') word.erase(0, 1);
        if (!word.empty() && word.back() == ']') {
          word.pop_back();
          closed = true;
        }
        if (word.find_first_of("[]") != std::string::npos)
          return base::Error::text(fmt::format("parsing [{}:{}]: unexpected '{}' in the options.",
                                               path, n, w[i]));
        if (!word.empty()) l.options.push_back(word);
      }
      if (!closed)
        return base::Error::text(fmt::format("parsing [{}:{}]: missing ']' after the options.", path, n));
    }
    for (; i < w.size(); ++i) {
      if (w[i].find_first_of("[]") != std::string::npos)
        return base::Error::text(fmt::format("parsing [{}:{}]: the options must come right after "
                                             "the certificate ('{}').", path, n, w[i]));
      if (w[i] == "!" || w[i].empty())
        return base::Error::text(fmt::format("parsing [{}:{}]: empty SNI filter.", path, n));
      l.filters.push_back(w[i]);
    }
    out.push_back(std::move(l));
    if (eol == text.size()) break;
  }
  return out;
}

}  // namespace sluice::net::tls

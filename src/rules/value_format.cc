// Value formats: literal text with `%[fetch]` items and a few log-format aliases.
#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "rules/internal.h"

namespace sluice::rules {

namespace {

// HAProxy log-format variables sluice does not render (yet).
constexpr std::string_view kLogVars[] = {
    "B", "CC", "CS", "H", "HM", "HP", "HPO", "HQ", "HU", "HV", "ID", "ST", "T", "Ta", "Tc",
    "Td", "Th", "Ti", "Tq", "TR", "Tr", "Ts", "Tt", "Tu", "Tw", "U", "ac", "b", "bc", "bi",
    "bp", "bq", "f", "fc", "fi", "ft", "hr", "hrl", "hs", "hsl", "lc", "ms", "o", "pid", "r",
    "rc", "rt", "s", "sc", "si", "sp", "sq", "sslc", "sslv", "t", "tr", "trg", "trl", "ts",
};

void add_literal(ValueFormat& f, std::string_view text) {
  if (text.empty()) return;
  if (!f.parts_.empty() && f.parts_.back().fetch == 0) {
    f.parts_.back().text += text;
    return;
  }
  ValueFormat::Part p;
  p.text = std::string(text);
  f.parts_.push_back(std::move(p));
}

void add_fetch(ValueFormat& f, detail::Fetch fetch, std::string name = "", int occ = 0) {
  ValueFormat::Part p;
  p.fetch = static_cast<int>(fetch);
  p.text = std::move(name);
  p.occ = occ;
  f.parts_.push_back(std::move(p));
}

}  // namespace

base::Result<ValueFormat> ValueFormat::parse(std::string_view text) {
  ValueFormat f;
  std::size_t lit = 0;   // start of pending literal text
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '%') {
      ++i;
      continue;
    }
    add_literal(f, text.substr(lit, i - lit));
    if (i + 1 >= text.size())
      return base::Error::text(fmt::format(
          "unexpected '%' at the end of format '{}'. If you wanted to emit the '%' character verbatim, you need to use '%%'",
          text));
    char n = text[i + 1];
    if (n == '%') {
      add_literal(f, "%");
      i += 2;
    } else if (n == '[') {
      auto close = text.find(']', i + 2);
      if (close == std::string_view::npos)
        return base::Error::text(fmt::format("missing closing ']' in format '{}'", text));
      std::string_view expr = text.substr(i + 2, close - i - 2);
      if (expr.empty()) return base::Error::text(fmt::format("empty sample expression '%[]' in format '{}'", text));
      detail::FetchSpec spec;
      auto kw = detail::parse_fetch_expr(expr, false, expr, &spec);
      if (!kw.ok()) return kw.error();
      if (spec.fetch == detail::Fetch::kAlwaysTrue || spec.fetch == detail::Fetch::kAlwaysFalse ||
          detail::fetch_reads_payload(spec.fetch))
        return base::Error::text(fmt::format("fetch method '{}' is not supported by sluice yet in formats", expr));
      add_fetch(f, spec.fetch, spec.name, spec.occ);
      i = close + 1;
    } else if (n == '{') {
      return base::Error::text(fmt::format("log-format flags ('%{{...}}') in '{}' are not supported by sluice yet", text));
    } else if (std::isalpha(static_cast<unsigned char>(n))) {
      std::size_t e = i + 1;
      while (e < text.size() && std::isalpha(static_cast<unsigned char>(text[e]))) ++e;
      std::string_view var = text.substr(i + 1, e - i - 1);
      if (var == "ci") {
        add_fetch(f, detail::Fetch::kSrc);
      } else if (var == "cp") {
        add_fetch(f, detail::Fetch::kSrcPort);
      } else if (var == "fp") {
        add_fetch(f, detail::Fetch::kDstPort);
      } else if (std::find(std::begin(kLogVars), std::end(kLogVars), var) != std::end(kLogVars)) {
        return base::Error::text(fmt::format("format variable '%{}' is not supported by sluice yet (only %ci, %cp, %fp, %% and %[...])", var));
      } else {
        return base::Error::text(fmt::format(
            "no such format variable '{}'. If you wanted to emit the '%' character verbatim, you need to use '%%'", var));
      }
      i = e;
    } else {
      return base::Error::text(fmt::format(
          "unexpected character '{}' after '%' in format '{}'. If you wanted to emit the '%' character verbatim, you need to use '%%'",
          n, text));
    }
    lit = i;
  }
  add_literal(f, text.substr(lit));
  return f;
}

void ValueFormat::render(const RequestView& v, std::string& out) const {
  for (const auto& p : parts_) {
    if (p.fetch == 0) {
      out += p.text;
      continue;
    }
    detail::FetchSpec spec;
    spec.fetch = static_cast<detail::Fetch>(p.fetch);
    spec.name = p.text;
    spec.occ = p.occ;
    detail::fetch_one(spec, v, out);
  }
}

}  // namespace sluice::rules

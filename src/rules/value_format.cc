// Value formats: literal text with `%[expr]` sample expressions and HAProxy's log-format
// aliases, outside logs.
#include <cctype>

#include <fmt/format.h>

#include "log/format.h"
#include "rules/internal.h"

namespace sluice::rules {

namespace {

// A format with aliases other than %ci %cp %fp, or with flags: the log module's compiler,
// spaces kept as text (a value is no log line). Its errors are HAProxy's.
base::Result<ValueFormat> as_log_format(std::string_view text, uint32_t avail) {
  auto lf = log::Format::parse(text, avail, /*merge_spaces=*/false);
  if (!lf.ok()) return lf.error();
  ValueFormat f;
  f.lf_ = std::make_shared<const log::Format>(std::move(lf.value()));
  return f;
}

void add_literal(ValueFormat& f, std::string_view text) {
  if (text.empty()) return;
  if (!f.parts_.empty() && !f.parts_.back().expr) {
    f.parts_.back().text += text;
    return;
  }
  ValueFormat::Part p;
  p.text = std::string(text);
  f.parts_.push_back(std::move(p));
}

base::Result<void> add_expr(ValueFormat& f, std::string_view text, uint32_t avail) {
  sample::ParseCtx pc;
  pc.avail = avail;
  auto e = sample::Expr::parse(text, pc);
  if (!e.ok()) return e.error();
  ValueFormat::Part p;
  p.expr = std::make_shared<const sample::Expr>(std::move(e.value()));
  f.parts_.push_back(std::move(p));
  return {};
}

}  // namespace

base::Result<ValueFormat> ValueFormat::parse(std::string_view text, uint32_t avail) {
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
      return base::Error::text("truncated line after '%'");
    char n = text[i + 1];
    if (n == '%') {
      add_literal(f, "%");
      i += 2;
    } else if (n == '[') {
      std::string_view rest = text.substr(i + 2);
      sample::ParseCtx pc;
      pc.avail = avail;
      std::size_t end = 0;
      auto e = sample::Expr::parse(rest, pc, &end);
      if (!e.ok()) {
        // HAProxy checks the place apart from the syntax: that message stands alone.
        if (e.error().message.starts_with("sample fetch <")) return e.error();
        return base::Error::text(
            fmt::format("failed to parse sample expression <{}> : {}", rest, e.error().message));
      }
      if (end >= rest.size())
        return base::Error::text(fmt::format("missing ']' after '{}'", rest.substr(0, end)));
      if (rest[end] != ']')
        return base::Error::text(fmt::format("expected ']' after '{}', but found '{}'",
                                             rest.substr(0, end), rest[end]));
      ValueFormat::Part p;
      p.expr = std::make_shared<const sample::Expr>(std::move(e.value()));
      f.parts_.push_back(std::move(p));
      i += 2 + end + 1;
    } else if (n == '{' || n == '(') {
      return as_log_format(text, avail);   // flags, or a named node
    } else if (std::isalpha(static_cast<unsigned char>(n))) {
      std::size_t e = i + 1;
      while (e < text.size() && std::isalpha(static_cast<unsigned char>(text[e]))) ++e;
      std::string_view var = text.substr(i + 1, e - i - 1);
      std::string_view fetch = var == "ci" ? "src" : var == "cp" ? "src_port" : var == "fp" ? "dst_port" : "";
      if (fetch.empty()) return as_log_format(text, avail);
      auto r = add_expr(f, fetch, avail);
      if (!r.ok()) return r.error();
      i = e;
    } else {
      return base::Error::text(fmt::format(
          "unexpected alias name near '{}' at position {} line : '{}'. Maybe you want to write a "
          "single '%', use the syntax '%%'",
          text.substr(i + 1), i + 1, text));
    }
    lit = i;
  }
  add_literal(f, text.substr(lit));
  return f;
}

void ValueFormat::render(const RequestView& v, std::string& out) const {
  if (lf_) {
    log::Record r;
    thread_local std::string request_line;
    detail::fill_record(v, r, request_line);
    lf_->render(r, &v, out, log::kOptNoDash);
    return;
  }
  for (const auto& p : parts_) {
    if (!p.expr) {
      out += p.text;
      continue;
    }
    p.expr->eval_text(v, out);
  }
}

}  // namespace sluice::rules

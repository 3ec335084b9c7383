// set-var / set-var-fmt / unset-var: the variable actions of every rule set, parsed and run
// in one place.
#include <fmt/format.h>

#include "rules/internal.h"
#include "sample/var_read.h"

namespace sluice::rules {

namespace {
bool is_cond_word(std::string_view w) { return w == "if" || w == "unless"; }
}  // namespace

bool is_var_action(std::string_view word) {
  return word.starts_with("set-var(") || word.starts_with("set-var-fmt(") ||
         word.starts_with("unset-var(");
}

std::string var_expr_error(std::string_view action, const std::string& m) {
  // HAProxy names the action, not the fetch, in this one message.
  if (!m.starts_with("sample fetch <")) return m;
  auto p = m.find("needs '");
  std::string what = p == std::string::npos ? "" : m.substr(p + 7, m.find('\'', p + 7) - p - 7);
  return fmt::format("fetch method '{}' extracts information from '{}', none of which is "
                     "available here", action, what);
}

base::Result<std::shared_ptr<const sample::Expr>> parse_action_expr(
    const std::vector<std::string>& words, uint32_t avail) {
  if (words.size() < 2 || words[1].empty() || is_cond_word(words[1]))
    return base::Error::text("missing fetch method");
  sample::ParseCtx pc;
  pc.avail = avail;
  std::size_t end = 0;
  auto e = sample::Expr::parse(words[1], pc, &end);
  if (!e.ok()) return base::Error::text(var_expr_error(words[0], e.error().message));
  if (end != words[1].size())
    return base::Error::text(fmt::format("unexpected characters '{}' after sample expression '{}'",
                                         words[1].substr(end), words[1].substr(0, end)));
  return std::make_shared<const sample::Expr>(std::move(e.value()));
}

base::Result<std::size_t> parse_var_action(const std::vector<std::string>& words, uint32_t avail,
                                            VarAction* out) {
  std::string_view action = words.empty() ? std::string_view() : std::string_view(words[0]);
  auto open = action.find('(');
  std::string_view name = action.substr(0, open);
  if (open == std::string_view::npos || action.back() != ')')
    return base::Error::text(fmt::format(
        "incomplete argument after action '{}'. Expects 'set-var(<var-name>)', "
        "'set-var-fmt(<var-name>)' or 'unset-var(<var-name>)'", action));
  out->kind = name == "set-var"       ? VarAction::Kind::kSet
              : name == "set-var-fmt" ? VarAction::Kind::kSetFmt
                                      : VarAction::Kind::kUnset;
  std::string_view inside = action.substr(open + 1, action.size() - open - 2);
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    auto comma = inside.find(',', start);
    parts.push_back(inside.substr(start, comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (parts[0].empty()) return base::Error::text("Empty variable name cannot be accepted");
  if (out->kind == VarAction::Kind::kUnset && parts.size() > 1)
    return base::Error::text("unset-var does not expect parameters after the variable name. Only "
                             "\"set-var\" and \"set-var-fmt\" manage conditions");
  std::string err;
  if (!sample::VarNames::global().parse(parts[0], &out->var, &err)) return base::Error::text(err);
  for (std::size_t k = 1; k < parts.size(); ++k)
    if (!sample::parse_set_cond(parts[k], &out->conds))
      return base::Error::text(fmt::format("unknown condition \"{}\"", parts[k]));
  switch (out->kind) {
    case VarAction::Kind::kUnset:
      return std::size_t{1};
    case VarAction::Kind::kSet: {
      auto e = parse_action_expr(words, avail);
      if (!e.ok()) return e.error();
      out->expr = std::move(e.value());
      return std::size_t{2};
    }
    case VarAction::Kind::kSetFmt: {
      std::size_t n = 1;
      std::string_view text;
      if (words.size() >= 2 && !is_cond_word(words[1])) {
        text = words[1];
        n = 2;
      }
      auto f = ValueFormat::parse(text, avail);
      if (!f.ok()) return f.error();
      out->fmt = std::move(f.value());
      return n;
    }
  }
  return std::size_t{1};
}

void VarAction::run(const RequestView& v) const {
  switch (kind) {
    case Kind::kSet: {
      sample::Sample smp;
      if (expr->eval(v, smp)) sample::write_var(var, v, smp, conds);
      break;
    }
    case Kind::kSetFmt: {
      std::string& val = v.sc().next();
      fmt.render(v, val);
      sample::write_var(var, v, sample::Sample::string(val), conds);
      break;
    }
    case Kind::kUnset:
      sample::unset_var(var, v);
      break;
  }
}

}  // namespace sluice::rules

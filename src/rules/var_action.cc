// set-var / set-var-fmt / unset-var: the variable actions of every rule set, parsed and run
// in one place.
#include <fmt/format.h>

#include "rules/internal.h"
#include "sample/var_read.h"
#include "sample/vars.h"

namespace sluice::rules {

bool is_var_action(std::string_view word) {
  return word.starts_with("set-var(") || word.starts_with("set-var-fmt(") ||
         word.starts_with("unset-var(");
}

base::Result<std::shared_ptr<const sample::Expr>> parse_action_expr(
    const std::vector<std::string>& words, uint32_t avail) {
  if (words.size() < 2 || words[1].empty() || detail::is_cond_word(words[1]))
    return base::Error::text("missing fetch method");
  // HAProxy names the action, not the fetch, in its message for a fetch this place lacks.
  std::size_t next = 0;
  return detail::parse_rule_expr(words[1], avail, words[0], &next);
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
      if (words.size() >= 2 && !detail::is_cond_word(words[1])) {
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

std::string set_proc_var(uint32_t id, std::string_view text, bool fmt_form, std::string_view who) {
  sample::Ctx ctx;
  if (fmt_form) {
    auto f = ValueFormat::parse(text, sample::kUseInternal);
    if (!f.ok()) return f.error().message;
    std::string rendered;
    f.value().render(ctx, rendered);
    sample::ProcVars::instance().set(id, sample::Sample::string(rendered));
    return {};
  }
  sample::ParseCtx pc;
  pc.avail = sample::kUseInternal;
  std::size_t end = 0;
  auto e = sample::Expr::parse(text, pc, &end);
  if (!e.ok()) return e.error().message;
  if (end != text.size())
    return fmt::format("{}: unexpected character '{}' in the expression '{}'.", who, text[end], text);
  // No sample sets nothing, as HAProxy does. The sample may point into the expression (a
  // literal's text), so it is stored while the expression lives.
  sample::Sample smp;
  if (e.value().eval(ctx, smp)) sample::ProcVars::instance().set(id, smp);
  return {};
}

}  // namespace sluice::rules

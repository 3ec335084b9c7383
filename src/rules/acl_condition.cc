// Conditions: `if|unless` followed by ACL terms, AND by juxtaposition, OR with `||` / `or`.
#include <fmt/format.h>

#include "rules/internal.h"

namespace sluice::rules {

namespace {

bool acl_eval(const Acl& acl, const RequestView& v) {
  for (const auto& t : acl.terms)
    if (t->eval(v)) return true;
  return false;
}

Match acl_eval_partial(const Acl& acl, const RequestView& v) {
  Match r = Match::kFail;
  for (const auto& t : acl.terms) {
    Match m = t->eval_partial(v);
    if (m == Match::kPass) return m;
    if (m == Match::kMiss) r = m;
  }
  return r;
}

Match negate(Match m) {
  if (m == Match::kMiss) return m;
  return m == Match::kPass ? Match::kFail : Match::kPass;
}

constexpr std::string_view kUnsupportedPredefined[] = {"RDP_COOKIE", "REQ_CONTENT", "WAIT_END"};

}  // namespace

bool Condition::eval(const RequestView& v) const {
  bool result = groups_.empty();
  for (const auto& g : groups_) {
    bool all = true;
    for (const auto& t : g) {
      if ((!t.never && acl_eval(*t.acl, v)) == t.negate) {
        all = false;
        break;
      }
    }
    if (all) {
      result = true;
      break;
    }
  }
  return unless_ ? !result : result;
}

Match Condition::eval_partial(const RequestView& v) const {
  Match result = groups_.empty() ? Match::kPass : Match::kFail;
  for (const auto& g : groups_) {
    Match all = Match::kPass;
    for (const auto& t : g) {
      Match m = t.never ? Match::kFail : acl_eval_partial(*t.acl, v);
      if (t.negate) m = negate(m);
      if (m == Match::kFail) {
        all = m;
        break;
      }
      if (m == Match::kMiss) all = m;
    }
    if (all == Match::kPass) {
      result = all;
      break;
    }
    if (all == Match::kMiss) result = all;
  }
  return unless_ ? negate(result) : result;
}

const Acl* Condition::response_only_acl() const {
  for (const auto& g : groups_)
    for (const auto& t : g) {
      bool all = !t.acl->terms.empty();
      for (const auto& term : t.acl->terms) all = all && term->response_only();
      if (all) return t.acl.get();
    }
  return nullptr;
}

std::string Condition::mark_request_only(std::string_view place) {
  constexpr uint32_t kRequestOnly = sample::kUseHttpReq | sample::kUseHttpReqBody;
  std::string warning;
  for (auto& g : groups_)
    for (auto& t : g) {
      bool all = !t.acl->terms.empty();
      for (const auto& term : t.acl->terms) all = all && (term->expr.use() & kRequestOnly);
      if (!all) continue;
      t.never = true;
      if (!warning.empty()) continue;
      warning = t.acl->name == "anonymous"
                    ? fmt::format("anonymous acl will never match because it uses keyword '{}' "
                                  "which is incompatible with '{}'",
                                  t.acl->terms.front()->keyword, place)
                    : fmt::format("acl '{}' will never match because it only involves keywords "
                                  "that are incompatible with '{}'",
                                  t.acl->name, place);
    }
  return warning;
}

std::string Condition::never_match_warning(std::string_view place) const {
  const Acl* a = response_only_acl();
  if (!a) return {};
  if (a->name == "anonymous")
    return fmt::format("anonymous acl will never match because it uses keyword '{}' which is "
                       "incompatible with '{}'",
                       a->terms.front()->keyword, place);
  return fmt::format("acl '{}' will never match because it only involves keywords that are "
                     "incompatible with '{}'",
                     a->name, place);
}

base::Result<Condition> parse_condition(const std::vector<std::string>& words, const AclRegistry& acls) {
  Condition c;
  if (words.empty() || (words[0] != "if" && words[0] != "unless"))
    return base::Error::text("conditions must start with either 'if' or 'unless'");
  c.unless_ = words[0] == "unless";
  std::vector<Condition::Term> group;
  bool neg = false;
  auto close_group = [&](std::string_view after) -> base::Result<void> {
    if (neg) return base::Error::text(fmt::format("missing ACL after '!' before '{}'", after));
    if (group.empty())
      return base::Error::text(fmt::format("missing condition before '{}'", after));
    c.groups_.push_back(std::move(group));
    group.clear();
    return {};
  };
  for (std::size_t i = 1; i < words.size(); ++i) {
    std::string_view w = words[i];
    if (w == "||" || detail::iequals(w, "or")) {
      auto r = close_group(w);
      if (!r.ok()) return r.error();
      continue;
    }
    while (!w.empty() && w.front() == '!') {
      neg = !neg;
      w.remove_prefix(1);
    }
    if (w.empty()) continue;   // a lone "!" applies to the next term
    Condition::Term term;
    term.negate = neg;
    neg = false;
    if (w == "{") {
      std::size_t close = i + 1;
      while (close < words.size() && words[close] != "}") ++close;
      if (close >= words.size()) return base::Error::text("missing closing '}' in condition");
      if (close == i + 1) return base::Error::text("empty anonymous ACL '{ }' in condition");
      auto t = detail::parse_acl_expr(words, i + 1, close);
      if (!t.ok()) return t.error();   // HAProxy 3.5 names no ACL here
      auto acl = std::make_shared<Acl>();
      acl->name = "anonymous";
      acl->terms.push_back(t.value());
      term.acl = std::move(acl);
      i = close;
    } else if (w == "}") {
      return base::Error::text("unexpected '}' without a matching '{' in condition");
    } else {
      term.acl = acls.find(w);
      if (!term.acl) {
        for (auto u : kUnsupportedPredefined)
          if (u == w) return base::Error::text(fmt::format("predefined ACL '{}' is not supported by sluice yet", w));
        return base::Error::text(fmt::format("no such ACL : '{}'", w));
      }
    }
    group.push_back(std::move(term));
  }
  if (neg) return base::Error::text("missing ACL after '!'");
  if (group.empty()) {
    if (c.groups_.empty()) return base::Error::text(fmt::format("missing condition after '{}'", words[0]));
    return base::Error::text("missing condition after 'or'");
  }
  c.groups_.push_back(std::move(group));
  return c;
}

}  // namespace sluice::rules

#include "config/preprocessor_condition.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "base/version.h"
#include "config/loader.h"
#include "net/tls.h"

namespace sluice::config {

namespace {

enum class Pred {
  kDefined, kFeature, kStreq, kStrneq, kStrstr, kVersionAtleast, kVersionBefore,
  kOsslAtleast, kOsslBefore, kSsllibStartswith, kAwslcAtleast, kAwslcBefore, kEnabled, kFips
};

struct PredDef {
  std::string_view word;
  Pred pred;
  int min_args;
  int max_args;
};

// Looked up by prefix as HAProxy does, so longer names that share a prefix must come first.
constexpr PredDef kPredicates[] = {
    {"defined", Pred::kDefined, 1, 1},
    {"feature", Pred::kFeature, 1, 1},
    {"streq", Pred::kStreq, 2, 2},
    {"strneq", Pred::kStrneq, 2, 2},
    {"strstr", Pred::kStrstr, 2, 2},
    {"version_atleast", Pred::kVersionAtleast, 1, 1},
    {"version_before", Pred::kVersionBefore, 1, 1},
    {"openssl_version_atleast", Pred::kOsslAtleast, 1, 1},
    {"openssl_version_before", Pred::kOsslBefore, 1, 1},
    {"ssllib_name_startswith", Pred::kSsllibStartswith, 1, 1},
    {"awslc_api_atleast", Pred::kAwslcAtleast, 1, 1},
    {"awslc_api_before", Pred::kAwslcBefore, 1, 1},
    {"enabled", Pred::kEnabled, 1, 1},
    {"fips_mode", Pred::kFips, 0, 0},
};

struct Node {
  enum class Kind { kConst, kPred, kAnd, kOr } kind = Kind::kConst;
  bool neg = false;
  bool value = false;
  const PredDef* pred = nullptr;
  std::vector<std::string> args;
  std::vector<std::unique_ptr<Node>> kids;
};

struct Fail {
  ConditionError e;
};

// Deep enough for any real configuration, shallow enough that "((((..." cannot exhaust the
// stack (the fuzzer finds that one fast).
constexpr int kMaxDepth = 64;

class CondParser {
 public:
  explicit CondParser(std::string_view text) : s_(text) {}

  std::unique_ptr<Node> parse_top() {
    skip();
    auto n = parse_expr(kMaxDepth);
    skip();
    if (i_ < s_.size())
      fail(fmt::format("unexpected character '{}' at the end of conditional expression '{}'",
                       s_[i_], s_),
           i_);
    return n;
  }

 private:
  [[noreturn]] void fail(std::string msg, std::size_t at) {
    throw Fail{ConditionError{std::move(msg), static_cast<int>(at) + 1}};
  }
  void skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }

  std::unique_ptr<Node> parse_expr(int depth) {
    if (depth <= 0) fail("too many nested conditional expressions", i_);
    auto first = parse_and(depth);
    skip();
    if (!s_.substr(i_).starts_with("||")) return first;
    auto n = std::make_unique<Node>();
    n->kind = Node::Kind::kOr;
    n->kids.push_back(std::move(first));
    while (s_.substr(i_).starts_with("||")) {
      i_ += 2;
      n->kids.push_back(parse_and(depth));
      skip();
    }
    return n;
  }

  std::unique_ptr<Node> parse_and(int depth) {
    auto first = parse_term(depth);
    skip();
    if (!s_.substr(i_).starts_with("&&")) return first;
    auto n = std::make_unique<Node>();
    n->kind = Node::Kind::kAnd;
    n->kids.push_back(std::move(first));
    while (s_.substr(i_).starts_with("&&")) {
      i_ += 2;
      n->kids.push_back(parse_term(depth));
      skip();
    }
    return n;
  }

  std::unique_ptr<Node> parse_term(int depth) {
    std::size_t text_at = i_;
    skip();
    bool neg = false;
    while (i_ < s_.size() && s_[i_] == '!') {
      neg = !neg;
      ++i_;
      skip();
    }
    if (i_ >= s_.size())
      fail(fmt::format("unparsable conditional expression '{}'", s_.substr(text_at)), text_at);
    // strtol(..., 0) as HAProxy: accepts a sign, 0x and octal.
    std::string rest(s_.substr(i_));
    char* end = nullptr;
    long v = std::strtol(rest.c_str(), &end, 0);
    if (end != rest.c_str()) {
      auto n = std::make_unique<Node>();
      n->neg = neg;
      n->value = v != 0;
      i_ += static_cast<std::size_t>(end - rest.c_str());
      return n;
    }
    if (s_[i_] == '(') {
      ++i_;
      skip();
      auto inner = parse_expr(depth - 1);
      skip();
      if (i_ >= s_.size() || s_[i_] != ')')
        fail(fmt::format("expected ')' after conditional expression '{}'", s_.substr(text_at)), i_);
      ++i_;
      if (neg) {
        auto n = std::make_unique<Node>();
        n->kind = Node::Kind::kAnd;
        n->neg = true;
        n->kids.push_back(std::move(inner));
        return n;
      }
      return inner;
    }
    for (const auto& p : kPredicates) {
      if (!s_.substr(i_).starts_with(p.word)) continue;
      auto n = std::make_unique<Node>();
      n->kind = Node::Kind::kPred;
      n->neg = neg;
      n->pred = &p;
      i_ += p.word.size();
      parse_args(*n);
      return n;
    }
    fail(fmt::format("unparsable conditional expression '{}'", s_.substr(text_at)), text_at);
  }

  // HAProxy's make_arg_list() for string arguments, with its messages.
  void parse_args(Node& n) {
    const PredDef& p = *n.pred;
    auto where = [&](int arg) {
      return fmt::format(" in argument {} of predicate '{}' used in conditional expression", arg,
                         p.word);
    };
    int pos = 0;
    if (i_ >= s_.size() || s_[i_] != '(') {
      if (p.min_args > 0)
        fail(fmt::format("missing arguments (got 0/{}), type 'string' expected", p.min_args) +
                 where(0),
             i_);
      return;
    }
    ++i_;
    while (pos < p.max_args) {
      std::string word;
      while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != ')') {
        char c = s_[i_];
        if (c == '\'' || c == '"') {
          auto close = s_.find(c, i_ + 1);
          if (close == std::string_view::npos) fail("unmatched quote" + where(pos + 1), i_);
          word += s_.substr(i_ + 1, close - i_ - 1);
          i_ = close + 1;
        } else if (c == '\\' && i_ + 1 < s_.size()) {
          word += s_[i_ + 1];
          i_ += 2;
        } else {
          word += c;
          ++i_;
        }
      }
      n.args.push_back(std::move(word));
      ++pos;
      if (i_ >= s_.size() || s_[i_] == ')' || pos >= p.max_args) break;
      ++i_;   // the comma
    }
    if (pos < p.min_args)
      fail(fmt::format("missing arguments (got {}/{}), type 'string' expected", pos, p.min_args) +
               where(pos),
           i_);
    if (i_ < s_.size() && s_[i_] == ')') {
      ++i_;
      return;
    }
    std::string msg = i_ < s_.size() ? fmt::format("expected ')' before '{}'", s_.substr(i_))
                                     : std::string("expected ')'");
    // As HAProxy: the empty part before a missing ')' already counted as an argument.
    if (pos > 1) --pos;
    fail(msg + where(pos), i_);
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

struct Version {
  long part[3] = {0, 0, 0};
  int kind = 3;   // 1 dev, 2 pre/rc, 3 release
  long kind_num = 0;
};

bool parse_version(std::string_view s, Version* v) {
  std::size_t i = 0;
  for (int k = 0; k < 3; ++k) {
    if (i >= s.size() || s[i] < '0' || s[i] > '9') return false;
    long n = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9' && n < 100000000) n = n * 10 + (s[i++] - '0');
    v->part[k] = n;
    if (i < s.size() && s[i] == '.' && k < 2) {
      ++i;
      continue;
    }
    break;
  }
  if (i == s.size()) return true;
  std::string_view rest = s.substr(i);
  std::size_t skip = 0;
  if (rest.starts_with("-dev")) {
    v->kind = 1, skip = 4;
  } else if (rest.starts_with("-pre")) {
    v->kind = 2, skip = 4;
  } else if (rest.starts_with("-rc")) {
    v->kind = 2, skip = 3;
  } else {
    return false;
  }
  rest.remove_prefix(skip);
  long n = 0;
  for (char c : rest) {
    if (c < '0' || c > '9') return false;
    if (n < 100000000) n = n * 10 + (c - '0');
  }
  v->kind_num = n;
  return true;
}

int eval_pred(const Node& n, const Env& env, ConditionError* error) {
  const auto& a = n.args;
  switch (n.pred->pred) {
    case Pred::kDefined: return env.defined(a[0]) ? 1 : 0;
    case Pred::kFeature:
      for (const auto& f : build_features())
        if (f == a[0]) return 1;
      return 0;
    case Pred::kStreq: return a[0] == a[1] ? 1 : 0;
    case Pred::kStrneq: return a[0] != a[1] ? 1 : 0;
    case Pred::kStrstr: return a[0].find(a[1]) != std::string::npos ? 1 : 0;
    case Pred::kVersionAtleast:
    case Pred::kVersionBefore: {
      int cmp = 0;
      // QUIRK kept from HAProxy: an unparsable version makes atleast true and before false.
      if (!compare_version(a[0], &cmp)) return n.pred->pred == Pred::kVersionAtleast ? 1 : 0;
      if (n.pred->pred == Pred::kVersionAtleast) return cmp <= 0 ? 1 : 0;
      return cmp > 0 ? 1 : 0;
    }
    case Pred::kOsslAtleast:
    case Pred::kOsslBefore: {
      // The running library's version against "X.Y.Z" (as HAProxy compares them).
      int want[3] = {0, 0, 0};
      if (std::sscanf(a[0].c_str(), "%d.%d.%d", &want[0], &want[1], &want[2]) < 1) {
        error->message = fmt::format("'{}' expects a version such as '1.1.1' or '3.0.0', got '{}'",
                                     n.pred->word, a[0]);
        return -1;
      }
      int have[3] = {0, 0, 0};
      net::tls::running_version_numbers(&have[0], &have[1], &have[2]);
      const bool atleast = std::lexicographical_compare(want, want + 3, have, have + 3) ||
                           std::equal(want, want + 3, have);
      return (n.pred->pred == Pred::kOsslAtleast) == atleast ? 1 : 0;
    }
    case Pred::kAwslcAtleast:
    case Pred::kAwslcBefore:
      error->message = fmt::format("'{}' used while the SSL library is not AWS-LC", n.pred->word);
      return -1;
    case Pred::kSsllibStartswith:
      return net::tls::running_version().starts_with(a[0]) ? 1 : 0;
    case Pred::kEnabled: return a[0] == "EPOLL" || a[0] == "REUSEPORT" ? 1 : 0;
    case Pred::kFips: return 0;
  }
  return 0;
}

int eval_node(const Node& n, const Env& env, ConditionError* error) {
  int r = 0;
  switch (n.kind) {
    case Node::Kind::kConst: r = n.value ? 1 : 0; break;
    case Node::Kind::kPred: r = eval_pred(n, env, error); break;
    case Node::Kind::kAnd:
      r = 1;
      for (const auto& k : n.kids) {
        r = eval_node(*k, env, error);
        if (r <= 0) break;
      }
      break;
    case Node::Kind::kOr:
      r = 0;
      for (const auto& k : n.kids) {
        r = eval_node(*k, env, error);
        if (r != 0) break;
      }
      break;
  }
  if (r < 0) return r;
  return n.neg ? !r : r;
}

}  // namespace

bool compare_version(std::string_view text, int* cmp) {
  Version arg, run;
  if (!parse_version(text, &arg)) return false;
  parse_version(base::kHaproxyCompatVersion, &run);
  auto key = [](const Version& v) {
    return std::tuple(v.part[0], v.part[1], v.part[2], v.kind, v.kind_num);
  };
  *cmp = key(arg) < key(run) ? -1 : (key(run) < key(arg) ? 1 : 0);
  return true;
}

int eval_condition(std::string_view expr, const Env& env, ConditionError* error) {
  std::size_t i = 0;
  while (i < expr.size() && (expr[i] == ' ' || expr[i] == '\t')) ++i;
  if (i == expr.size()) return 0;   // an empty condition is false
  std::unique_ptr<Node> tree;
  try {
    tree = CondParser(expr).parse_top();
  } catch (const Fail& f) {
    *error = f.e;
    return -1;
  }
  error->pos = 0;
  return eval_node(*tree, env, error);
}

}  // namespace sluice::config

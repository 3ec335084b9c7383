#pragma once
// Internals of rules/: the compiled ACL term and helpers shared by the rules' files. Not part
// of the module interface (tests may include it).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/regex.h"
#include "pattern/pattern.h"
#include "rules/rules.h"
#include "sample/expr.h"

namespace sluice::log {
struct Record;
}

namespace sluice::rules::detail {

// Helpers shared by fetches and actions.
bool iequals(std::string_view a, std::string_view b);
// Splits a field value at commas outside double quotes, trimming spaces and tabs.
void split_values(std::string_view value, std::vector<std::string_view>& out);
// The same elements untrimmed (blanks around them kept), for rewrites that keep them.
void split_raw(std::string_view value, std::vector<std::string_view>& out);
std::string_view trim_blanks(std::string_view v);
std::string addr_host(const net::SocketAddress& a);
// `if` and `unless`, which end an action's arguments and start its condition.
inline bool is_cond_word(std::string_view w) { return w == "if" || w == "unless"; }
// silent-drop's `rst-ttl <ttl>` (1..255): the word after `rst-ttl` is its value whatever it
// is (`if` too, as in HAProxy); `*i` is at `rst-ttl` and moves past the value. HAProxy 3.5's
// messages.
base::Result<uint8_t> parse_rst_ttl(const std::vector<std::string>& words, std::size_t* i);

// How an ACL term compares samples with its patterns (HAProxy's -m methods).
using MatchMethod = pattern::Method;

// An expression standing as one word of a rule (set-var, capture, set-src...), which must be
// all of it; `shown` names it in HAProxy's message for a fetch not available at `avail`.
base::Result<std::shared_ptr<const sample::Expr>> parse_rule_expr(std::string_view text,
                                                                  uint32_t avail,
                                                                  std::string_view shown,
                                                                  std::size_t* next);

// http_rule_stream.cc: the actions on the stream (capture, set-log-level, set-timeout,
// set-src, set-src-port, set-dst, set-dst-port).
struct StreamActionCtx {
  const std::vector<std::string>& words;   // words[0] is the action
  RuleSide side;
  uint32_t avail;
  const RuleOwner& owner;
};
bool is_stream_action(std::string_view name, RuleSide side);
// The index of the first word after the action's arguments, or HAProxy's reason (without the
// "error detected while parsing" frame).
base::Result<std::size_t> parse_stream_action(const StreamActionCtx& c, HttpRule& r);
// apply_stream.cc: runs one of them. set-src and set-dst point view.src / view.dst (and
// dst_port) at the stream's new address; without `st` only capture does something.
void apply_stream_action(const HttpRule& r, RuleSide side, RequestView& view, StreamEdit* st);

}  // namespace sluice::rules::detail

namespace sluice::rules {
class AclTerm;
namespace detail {
// What a rule's format renders log-format aliases from: the stream as `v` and its environment
// know it (names, addresses, dates, timers so far, ids, captures). `request_line` holds the
// request line the record points to.
void fill_record(const RequestView& v, log::Record& r, std::string& request_line);
}  // namespace detail

namespace detail {
// `words[begin, end)` is `criterion [flags] [--] patterns...`. Errors without location or
// trailing period.
base::Result<std::shared_ptr<AclTerm>> parse_acl_expr(const std::vector<std::string>& words,
                                                       std::size_t begin, std::size_t end);
}  // namespace detail
bool is_predefined_acl(std::string_view name);

// One ACL criterion: a sample expression (a fetch and its converters; HAProxy's ACL-only
// keywords such as path_beg are their fetch with another match method), a match method and
// the patterns, compiled at parse time.
class AclTerm {
 public:
  sample::Expr expr;
  std::string keyword;   // the criterion's keyword as written ("path_beg", "req.hdr")
  detail::MatchMethod method = detail::MatchMethod::kStr;
  bool icase = false;
  // The patterns: those on the line (first), then one list per -f file, each a Ref compiled
  // for the method (pattern/pattern.h), which the CLI may change at run time.
  std::vector<std::shared_ptr<pattern::Expr>> patterns;
  std::string text;   // the expression as written, for messages
  // `http_auth_group(<userlist>) <group>...` (its own match method): the user whose
  // credentials the userlist accepts belongs to one of these groups. Null for other terms.
  std::shared_ptr<const void> auth_userlist;   // an auth::Userlist
  std::vector<std::string> auth_groups;

  // Every sample the expression yields, until one matches a pattern.
  bool eval(const RequestView& v) const;
  // kMiss when the term does not match yet but may once more bytes arrive.
  Match eval_partial(const RequestView& v) const;
  // The expression reads the response (status, res.hdr...).
  bool response_only() const;
};

}  // namespace sluice::rules

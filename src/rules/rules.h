#pragma once
// HTTP rules: ACLs, conditions and `http-request` / `http-response` actions, as HAProxy
// writes them. Pure: parsing turns configuration words into compiled objects (or an error
// message), evaluation runs them on a parsed message. No sockets, no threads: compiled rules
// are immutable after start-up and shared read-only by every worker.
//
//   acl NAME <criterion> [flags] [--] <values>...       -> parse_acl() into an AclRegistry
//   http-request <action> <args>... [if|unless <cond>]   -> parse_http_rule(kRequest)
//   http-response <action> <args>... [if|unless <cond>]  -> parse_http_rule(kResponse)
//   use_backend <name> [if|unless <cond>]                -> parse_condition() for the tail
#include <cstdint>
#include <forward_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "http/http.h"
#include "log/format.h"
#include "net/address.h"
#include "net/network.h"
#include "sample/context.h"
#include "sample/expr.h"

namespace sluice::rules {

using net::Network;
using net::parse_network;

// What criteria and value expressions look at: the sample language's evaluation context
// (sample/context.h). Views stay valid during one evaluation.
using RequestView = sample::Ctx;

// A condition's answer while content may still arrive: kMiss = no answer yet (HAProxy's
// ACL_TEST_MISS), the caller waits for more bytes. Never kMiss when the view is final.
enum class Match : uint8_t { kFail, kMiss, kPass };

// The path part of a target: origin-form up to '?' ; absolute-form without scheme://authority.
std::string_view path_of(std::string_view target);
// The query string (after '?', without it), empty when none.
std::string_view query_of(std::string_view target);

// One compiled `acl` line (or an anonymous `{ ... }` acl): criterion + match method + patterns.
class AclTerm;
// All lines declaring one name, ORed.
struct Acl {
  std::string name;
  std::vector<std::shared_ptr<const AclTerm>> terms;
};

// The ACLs known to one proxy, in declaration order. Also answers HAProxy's predefined ACLs
// (TRUE, FALSE, METH_GET, METH_POST, METH_HEAD, METH_PUT, METH_DELETE, METH_OPTIONS,
// METH_TRACE, METH_CONNECT, HTTP_1.0, HTTP_1.1, LOCALHOST, HTTP_URL_ABS, HTTP_URL_SLASH,
// HTTP_CONTENT).
// It is also what the `acl()` fetch resolves names in while the proxy's lines are parsed.
class AclRegistry : public sample::AclResolver {
 public:
  // `words` is the whole line after the keyword: NAME criterion [flags] values...
  // Errors are HAProxy-like text without location (the caller adds file:line).
  base::Result<void> parse_acl(const std::vector<std::string>& words);
  std::shared_ptr<const Acl> find(std::string_view name) const;
  // acl(<names>): the ACLs declared so far; an ACL line may not reach its own ACL through it.
  std::shared_ptr<const sample::AclCall> resolve(const std::vector<std::string_view>& names,
                                                 std::string* err) const override;

 private:
  bool reaches(std::string_view from, std::string_view to, int depth = 0) const;
  std::map<std::string, std::shared_ptr<Acl>, std::less<>> acls_;
  std::string defining_;   // the ACL whose line is being parsed
  // acl() references made by ACL lines: name -> the ACLs its terms call.
  mutable std::map<std::string, std::vector<std::string>, std::less<>> calls_;
};

// `if|unless` followed by terms: `[!]acl` or `[!]{ criterion [flags] values }`, implicit AND,
// `||` or `or` between AND groups.
class Condition {
 public:
  // An always-true condition (a rule without if/unless).
  Condition() = default;
  bool empty() const { return groups_.empty() && !unless_; }
  bool eval(const RequestView& v) const;
  // Three-valued: an ACL matches (kPass) as soon as one term does, else kMiss while a term may
  // still match; AND groups fail at the first kFail; `!` and `unless` keep kMiss as it is.
  Match eval_partial(const RequestView& v) const;
  // The first ACL of the condition whose criteria all need a response (status, res.hdr...),
  // or null: such an ACL never matches in request rules or use_backend.
  const Acl* response_only_acl() const;
  // HAProxy's warning for such an ACL at `place` ("frontend http-request header rule",
  // "frontend use-backend rule"); empty when there is none.
  std::string never_match_warning(std::string_view place) const;
  // Response rules: the ACLs whose criteria all read the request's headers, URI or body,
  // which HAProxy no longer has there, never match (HAProxy's behaviour, with its warning at
  // `place`, returned; empty when there is none). sluice keeps a copy of the request, so
  // without this they would match.
  std::string mark_request_only(std::string_view place);

  struct Term {
    bool negate = false;
    bool never = false;   // the ACL cannot match where this condition stands
    std::shared_ptr<const Acl> acl;
  };
  bool unless_ = false;
  std::vector<std::vector<Term>> groups_;   // OR of ANDs; empty with !unless_ = always true
};

// `words` starts at `if` or `unless`. Named ACLs must already be declared in `acls`
// (HAProxy: "no such ACL : 'x'"). Request-only criteria in a response rule are accepted:
// they see the request that the response answers.
base::Result<Condition> parse_condition(const std::vector<std::string>& words,
                                        const AclRegistry& acls);

// A header value or redirect target, HAProxy's log-format language outside logs: literal text
// with `%[expr]` sample expressions (any fetch and converters, sample/expr.h) and every
// log-format alias with its `%{...}` flags. `avail` is what the place offers
// (sample::kAtHttpRequest, kAtHttpResponse): a fetch needing more is refused. Text, `%[...]`
// and %ci %cp %fp render directly (`parts_`); a format with other aliases or flags is compiled
// by the log module and renders from what the stream knows at that point (`lf_`).
class ValueFormat {
 public:
  static base::Result<ValueFormat> parse(std::string_view text,
                                         uint32_t avail = sample::kAtAny);
  bool is_literal() const {
    return !lf_ && parts_.size() <= 1 && (parts_.empty() || !parts_[0].expr);
  }
  // An absent value writes nothing (not the '-' of a log line), as HAProxy's formats do
  // outside logs.
  void render(const RequestView& v, std::string& out) const;
  // Each sample expression of the format.
  template <typename F>
  void for_each_expr(F&& f) const;

  struct Part {
    std::string text;                            // literal text
    std::shared_ptr<const sample::Expr> expr;    // or an expression
  };
  std::vector<Part> parts_;
  std::shared_ptr<const log::Format> lf_;
};

template <typename F>
void ValueFormat::for_each_expr(F&& f) const {
  for (const auto& p : parts_)
    if (p.expr) f(*p.expr);
  if (lf_)
    for (const auto& n : lf_->nodes())
      if (n.expr) f(*n.expr);
}

// A message head being rewritten by rules. Views point into the received buffer or into
// `storage` (owned strings for values that rules created).
struct HeadEdit {
  std::string_view method;      // requests
  std::string_view target;      // requests
  std::vector<http::Header> headers;
  int status = 0;               // responses: set-status's code, 0 = unchanged
  std::string_view reason;      // and its reason (empty: the code's usual one)
  http::StringStore storage;
  bool changed = false;         // anything was modified (the head must be re-serialized)
  std::string_view keep(std::string s) { return http::keep(storage, std::move(s)); }
};

// What the rules decided for a message.
struct Verdict {
  // kService: `use-service`; the only service is the Prometheus exporter. kAuth: `auth`, a 401
  // asking for credentials in `realm` (empty: the proxy's name). kTarpit: a deny answered after
  // `timeout tarpit`. kReject, kSilentDrop: the connection closes without an answer (silently:
  // no FIN, no reset reaching the client).
  // kWaitBody: a response's `wait-for-body` whose condition matched: the caller waits for the
  // body (wait_ms, wait_at_least), then runs the list again from rule `resume`.
  enum class Kind : uint8_t { kContinue, kDeny, kReturn, kRedirect, kService, kAuth, kTarpit,
                              kReject, kSilentDrop, kWaitBody };
  Kind kind = Kind::kContinue;
  uint32_t wait_ms = 0;         // wait-for-body
  uint64_t wait_at_least = 0;
  uint32_t resume = 0;
  int status = 0;               // deny: deny_status (default 403); return; redirect code
  std::string content_type;     // return
  std::string body;             // return (string or file contents)
  bool errorpage = false;       // send the proxy's page for `status` (errorfile or built-in)
  bool has_body = false;        // return: a payload was given (else the default error page
                                // for that status when one exists, like HAProxy)
  std::string location;         // redirect: the Location value
  std::string realm;            // auth
  // An http reply's `errorfile <file>` (or `errorfiles <name>`, resolved once the
  // configuration is loaded): the whole response, sent as it is; null otherwise.
  std::shared_ptr<const std::string> raw;
  std::string set_cookie;       // redirect: a Set-Cookie value (set-cookie, clear-cookie)
  std::vector<std::pair<std::string, std::string>> extra_headers;   // return `hdr` items
  // silent-drop `rst-ttl <ttl>`: reset the connection with this IP TTL instead of silencing
  // it (0: silence it).
  uint8_t rst_ttl = 0;
};

// What rules change of the stream besides the message heads, for the caller to apply and read
// back: the log level, timeouts and addresses of this request only (HAProxy's stream).
// The addresses are allocated by the first set-src / set-dst-like rule that runs: a stream
// without those rules carries none.
struct StreamAddrs {
  net::SocketAddress src, dst;   // the stream's addresses once set
  bool src_set = false, dst_set = false;
};
// Where a rule was written (the configuration sets it): what last_rule_file, last_rule_line
// and last_entity report of the last final rule that matched. Empty in rules built by tests.
struct RuleLoc {
  std::string where;       // "file:line", last_entity's text
  uint32_t file_len = 0;   // the file's part of `where`
  int line = 0;
  static RuleLoc at(std::string_view file, int line) {
    RuleLoc l;
    l.where = std::string(file) + ":" + std::to_string(line);
    l.file_len = static_cast<uint32_t>(file.size());
    l.line = line;
    return l;
  }
  std::string_view file() const { return std::string_view(where).substr(0, file_len); }
};

struct StreamEdit {
  // The last final rule that matched (accept, allow, deny, return, redirect...), null before
  // one did; the caller clears it between streams.
  const RuleLoc* last_rule = nullptr;
  // set-log-level: HAProxy's encoding, 0 unchanged, -1 silent, else the syslog level + 1.
  int8_t log_level = 0;
  // set-timeout: bit (1 << kind) set when timeout_ms[kind] replaces the proxy's.
  enum Timeout : uint8_t { kClient, kServer, kTunnel };
  uint8_t timeouts_set = 0;
  uint32_t timeout_ms[3] = {};
  std::unique_ptr<StreamAddrs> addrs;
  bool has_timeout(Timeout t) const { return (timeouts_set >> t) & 1; }
  // The stream's timeout `t`: the rule's, else `dflt` (the proxy's).
  uint32_t timeout(Timeout t, uint32_t dflt) const { return has_timeout(t) ? timeout_ms[t] : dflt; }
};

// kAfterResponse: `http-after-response`, run on every response, the server's and sluice's own
// (errors, redirects, return), after the http-response rules; header, status and variable
// actions only.
enum class RuleSide : uint8_t { kRequest, kResponse, kAfterResponse };

class HttpRule {
 public:
  enum class Action : uint8_t {
    kSetHeader, kAddHeader, kDelHeader, kReplaceHeader, kReplaceValue, kSetPath, kDeny,
    kReturn, kRedirect, kAllow, kUseService,
    kSetVar, kSetVarFmt, kUnsetVar,   // set-var(<name>[,<cond>...]) <expr>, set-var-fmt, unset-var
    kSetMethod, kSetUri, kSetQuery, kSetPathq,   // <fmt>
    kReplacePath, kReplacePathq, kReplaceUri,    // <regex> <fmt>
    kSetStatus,                                  // <status> [reason <text>] (responses)
    kCapture,                                    // <expr> len <n> | id <n>
    kSetLogLevel,                                // <level> | silent
    kSetTimeout,                                 // client|server|tunnel <time>|<expr>
    kSetSrc, kSetSrcPort, kSetDst, kSetDstPort,  // <expr> (requests)
    kAuth,                                       // [realm <realm>] (requests)
    kTarpit,                                     // like deny, answered after timeout tarpit
    kReject, kSilentDrop,                        // close without an answer (requests)
    // time <t> [at-least <bytes>] (requests): the mux waits for the body before the rules
    // run (see wait_ms), so that the rule itself has nothing left to do.
    kWaitForBody,
    kNormalizeUri,   // <normalizer> [full|strict] (requests; rules/normalize_uri.h)
  };
  Action action = Action::kAllow;
  RuleLoc loc;
  std::string name;              // header name for header actions
  ValueFormat value;             // set-header/add-header value, set-path, redirect target
  std::string regex_text;        // replace-header / replace-value
  std::shared_ptr<const void> regex;   // compiled (base/regex), opaque here
  Verdict reply;                 // deny / return / redirect templates
  std::string reply_errorfiles;  // `errorfiles <name>`: the http-errors section (resolved later)
  int redirect_kind = 0;         // 0 location, 1 prefix, 2 scheme
  bool drop_query = false;       // redirect options
  bool keep_query = false;
  bool append_slash = false;
  bool ignore_empty = false;
  // set-cookie <c> / clear-cookie <c> (the text) or set-cookie-fmt <fmt> (cookie_fmt).
  enum class Cookie : uint8_t { kNone, kSet, kClear, kSetFmt };
  Cookie cookie = Cookie::kNone;
  std::string cookie_text;
  ValueFormat cookie_fmt;
  bool reply_lf = false;         // return/deny `lf-string` / `lf-file`: `value` renders the body
  RuleSide side = RuleSide::kRequest;
  Condition cond;
  // del-header `-m`: 0 str (default), 1 beg, 2 end, 3 sub, 4 reg (regex in `regex`).
  int name_match = 0;
  // deny / return `hdr <name> <fmt>` items, rendered into Verdict::extra_headers.
  std::vector<std::pair<std::string, ValueFormat>> reply_headers;
  // set-var / set-var-fmt / unset-var: the variable, the conditions (sample::SetCond bits)
  // and the expression (set-var-fmt renders `value`).
  sample::VarRef var;
  uint16_t var_conds = 0;
  std::shared_ptr<const sample::Expr> expr;
  // set-status: the status and reason (empty: the status's usual reason).
  int status = 0;
  std::string reason;
  // capture: the expression is `expr`, stored in capture slot `capture_id` of the stream's
  // frontend (request slots for http-request, response slots else). `len` declares a new
  // request slot: capture_len is its length, and the proxy that holds the rule gives it its
  // id (declare_capture_slots()).
  int capture_id = -1;
  int capture_len = 0;
  uint8_t normalizer = 0;        // normalize-uri: the Normalizer::Kind
  bool normalizer_option = false;   // normalize-uri: full / strict
  uint32_t wait_ms = 0;          // wait-for-body: time
  uint64_t wait_at_least = 0;    // wait-for-body: at-least (bytes; 0 none)
  // set-log-level: StreamEdit::log_level's encoding.
  int8_t log_level = 0;
  // set-timeout: which one, and its time in ms (0: `expr` gives it, in ms).
  StreamEdit::Timeout timeout_kind = StreamEdit::kServer;
  uint32_t timeout_ms = 0;
  // Parse-time warnings for the caller to report with its location (e.g. an ignored
  // content-type, an ACL that can never match on this side).
  std::vector<std::string> warnings;
  // deny, return, redirect, allow and use-service stop the evaluation when their condition matches.
  bool is_final() const {
    return action == Action::kDeny || action == Action::kReturn || action == Action::kRedirect ||
           action == Action::kAllow || action == Action::kUseService || action == Action::kAuth ||
           action == Action::kTarpit || action == Action::kReject || action == Action::kSilentDrop;
  }
};

// The proxy that holds a rule, for the actions that depend on it (a `capture ... len` needs a
// frontend, `set-timeout server` a backend). The default (tests): a listen with no name.
struct RuleOwner {
  std::string_view name;
  bool frontend = true;
  bool backend = true;
  // The fetches the rule's expressions may use (sample::kAt*); 0: its side's. An http-error
  // reply is rendered with whatever the stream holds when it answers (HAProxy accepts any).
  uint32_t avail = 0;
};

// `words` is the line after `http-request` / `http-response`. `base_dir` resolves relative
// `file` paths of `return` (read at parse time). `section` ("frontend" or "backend") names
// the rule's place in HAProxy's warnings ("... incompatible with 'frontend http-request
// header rule'").
base::Result<HttpRule> parse_http_rule(const std::vector<std::string>& words, RuleSide side,
                                       const AclRegistry& acls, const std::string& base_dir = "",
                                       std::string_view section = "frontend",
                                       const RuleOwner& owner = {});

// The `redirect` keyword's line (after `redirect`): the rule HAProxy keeps in the proxy's
// redirect list, run after the http-request rules. Unlike the http-request action, its
// location, prefix and scheme are plain text, not log-format strings. Errors: "error detected
// while parsing redirect rule : <why>."
base::Result<HttpRule> parse_redirect_rule(const std::vector<std::string>& words,
                                           const AclRegistry& acls);

// The response of `return` (and of `deny` with a payload, and of `http-error`): the rule's `hdr`
// fields (names lower-cased as the H1 encoder writes them), then content-length and
// content-type, in HAProxy 3.5's order.
std::string reply_bytes(int status, const Verdict& v);
// The verdict of a return / deny / http-error rule: its reply, with the log-format payload and
// `hdr` values rendered on `view`.
void fill_reply(const HttpRule& r, const RequestView& view, Verdict& v);

// Runs `rules` in order on `edit` (the view is refreshed from `edit` as rules change it: for
// kRequest `edit` is the request (method, target, headers), for kResponse it is the response
// and view.res.headers follows edit.headers while view.req.headers stays the request's).
// Stops at the first deny/return/redirect/allow and returns its verdict (allow = kContinue).
// A response deny answers 502 unless deny_status says otherwise (HAProxy).
// `stream`, when given, takes what set-log-level, set-timeout and set-src|dst(-port) change
// (view.src, view.dst and view.dst_port follow the addresses set); those rules do nothing
// without it. capture rules write into view.captures. The evaluation starts at rule `first`.
// A response's wait-for-body stops it (kWaitBody); on requests the mux waited before the rules.
Verdict apply_rules(const std::vector<HttpRule>& rules, RuleSide side, HeadEdit& edit,
                    RequestView view, StreamEdit* stream = nullptr, std::size_t first = 0);

// `set-var(<scope.name>[,<cond>...]) <expr>`, `set-var-fmt(...) <fmt>`, `unset-var(...)`: the
// variable actions every rule set has (http-request/-response/-after-response, tcp-request
// connection|session|content, tcp-response content), parsed and run the same way everywhere.
struct VarAction {
  enum class Kind : uint8_t { kSet, kSetFmt, kUnset };
  Kind kind = Kind::kSet;
  sample::VarRef var;
  uint16_t conds = 0;                          // sample::SetCond bits
  std::shared_ptr<const sample::Expr> expr;    // set-var
  ValueFormat fmt;                             // set-var-fmt
  void run(const RequestView& v) const;
};
// Whether `word` is one of these actions ("set-var(", "set-var-fmt(", "unset-var(").
// The global `set-var`/`set-var-fmt` and the CLI's `set var`: evaluates `text`, a sample
// expression (a format when `fmt_form`) that needs no traffic, and stores it in the
// process-wide variable `id`. Returns "" or the error message (`who` names the command in it).
std::string set_proc_var(uint32_t id, std::string_view text, bool fmt_form, std::string_view who);

bool is_var_action(std::string_view word);
// `words[0]` is the action word, its argument follows; `avail` is what the rule set offers.
// Returns how many words it took. Errors are HAProxy's texts, without location or the rule's
// name ("missing fetch method", "unknown condition \"x\"").
base::Result<std::size_t> parse_var_action(const std::vector<std::string>& words, uint32_t avail,
                                            VarAction* out);
// The sample expression argument of an action (`words[1]`, `words[0]` the action): set-var,
// set-src... Errors as parse_var_action's ("missing fetch method").
base::Result<std::shared_ptr<const sample::Expr>> parse_action_expr(
    const std::vector<std::string>& words, uint32_t avail);

// `tcp-request connection|session|content <action> [if|unless <cond>]` and `tcp-response
// content <action> ...`. Connection and session rules may only use layer-4 fetches and
// variables, final as soon as the connection is accepted. Content rules may also read the
// client's first bytes (req.len, req.ssl_sni, req.proto_http...), response rules the server's
// (res.len, res.payload): until those are final a rule may have no answer yet, and the
// session waits for more bytes within the side's `inspect-delay`.
enum class TcpRuleStage : uint8_t { kConnection, kSession, kContent, kResponse };
std::string_view tcp_stage_name(TcpRuleStage stage);   // "tcp-request session"

struct TcpRule {
  enum class Action : uint8_t {
    kAccept, kReject,
    kClose,        // tcp-response: close the server connection, forward what was received
    kSilentDrop,   // close the client without a word (a reset, nothing sent)
    kVar,          // set-var / set-var-fmt / unset-var (var)
    kSetSrc, kSetDst, kSetSrcPort, kSetDstPort,   // <expr>
    kCapture,      // tcp-request content capture <expr> len <n>: the next request slot
    kExpectProxy,  // tcp-request connection expect-proxy layer4: a PROXY header comes first
  };
  Action action = Action::kAccept;
  RuleLoc loc;
  Condition cond;
  VarAction var;
  std::shared_ptr<const sample::Expr> expr;
  int capture_len = 0;    // capture: the slot's length, and its id once the frontend gave it
  int capture_id = -1;
  uint8_t rst_ttl = 0;    // silent-drop rst-ttl <ttl>; 0 none
  bool reject() const { return action == Action::kReject; }
  bool is_final() const {
    return action == Action::kAccept || action == Action::kReject || action == Action::kClose ||
           action == Action::kSilentDrop;
  }
};

// `words` is the line after `tcp-request connection|session|content` or `tcp-response content`:
// `<action> [args] [if|unless <cond>]`. `in` names the proxy for HAProxy's messages
// ("frontend 'f'"); `backend`: the rule stands in a backend (its fetches may read it).
// Errors are texts without location.
base::Result<TcpRule> parse_tcp_rule(const std::vector<std::string>& words, TcpRuleStage stage,
                                     const AclRegistry& acls, std::string_view in = {},
                                     bool backend = false);
// HAProxy's warnings for the ACLs of `cond` that can never match at `stage`, because they
// read what it does not have: connection and session rules have layer 4 and the process;
// content rules also the client's bytes and, once parsed, the HTTP request. Run once every
// line is known (an `acl` line written after a rule still joins the ACL it uses). Empty when
// all is well. `section` is "frontend" or "backend" as HAProxy names the rule's place.
std::vector<std::string> check_stage(const Condition& cond, TcpRuleStage stage,
                                     std::string_view section = "frontend");
// Whether `cond` reads `dst` (the local address; the caller may have to ask the kernel).
bool uses_dst(const Condition& cond);
// Whether a rule of `rules` reads dst (its condition or its expression).
bool uses_dst(const std::vector<TcpRule>& rules);
// The first fetch of `cond` that reads the client's buffered bytes, as written ("req_ssl_sni"),
// with the ACL that holds it ("anonymous" for `{ ... }`); empty when none.
struct PayloadUse {
  std::string fetch;
  std::string acl;
};
// `buffers`: which raw buffers count (sample::kUseReqBuf, sample::kUseResBuf).
PayloadUse payload_fetch(const Condition& cond, uint32_t buffers = sample::kUseReqBuf);
// The same over a rule set, expressions of actions included (a set-var of req.payload).
PayloadUse payload_fetch(const std::vector<TcpRule>& rules, uint32_t buffers = sample::kUseReqBuf);

// Whether a rule set may have no answer until more bytes come or inspect-delay ends: it reads
// the client's bytes, or WAIT_END. The session then reads first and waits (TcpSession).
bool waits_for_content(const std::vector<TcpRule>& rules);

// What a rule set decided. kWait: a rule has no answer yet and no rule before it matched
// (HAProxy waits there too, even if a later rule would match); the caller runs the set again
// from the start once more bytes came, as HAProxy does (actions before it run again).
enum class TcpVerdict : uint8_t { kAccept, kReject, kWait, kClose, kSilentDrop };

// Where set-src / set-dst write: the session's addresses. `v.src` and `v.dst` are pointed at
// them once changed, so that the rules after them (and the caller's log) see the new values.
// Null: the action does nothing (no such address here).
struct TcpAddrs {
  net::SocketAddress* src = nullptr;
  net::SocketAddress* dst = nullptr;
  // expect-proxy layer4 (connection rules): set when one matched.
  bool* expect_proxy = nullptr;
  // silent-drop (the verdict kSilentDrop): set to its rst-ttl (0: none).
  uint8_t* rst_ttl = nullptr;
};

// Declaration order; a final action whose condition matches decides, the others run and the
// evaluation goes on; no decision accepts. `v` must be final for connection and session rules.
// `last`, when given, is pointed at the location of the final rule that decided.
TcpVerdict run_tcp_rules(const std::vector<TcpRule>& rules, RequestView& v, TcpAddrs addrs = {},
                         const RuleLoc** last = nullptr);
// Accept/reject only (connection rules): true = accept.
bool tcp_rules_accept(const std::vector<TcpRule>& rules, const RequestView& v);
TcpVerdict tcp_rules_verdict(const std::vector<TcpRule>& rules, const RequestView& v);

}  // namespace sluice::rules

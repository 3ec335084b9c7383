#pragma once
// The configuration parser's state, shared by the section and keyword parsers of config/.
// Internal to config/; main thread only.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "config/loader.h"
#include "config/model.h"
#include "config/tokenizer.h"

namespace sluice::auth {
class Userlist;
}

namespace sluice::config {

// Sections a keyword may appear in.
enum SectionBit : unsigned {
  kInGlobal = 1,
  kInDefaults = 2,
  kInFrontend = 4,
  kInListen = 8,
  kInBackend = 16,
  kInProxies = kInDefaults | kInFrontend | kInListen | kInBackend,
};

// Thrown by keyword parsers: `text` is the whole message, already prefixed with its location.
struct ConfigError {
  std::string text;
};
// Thrown to stop everything at once (HAProxy's aborting errors), after the message was sent.
struct AbortLoad {};

enum class Prefix { kNone, kNo, kDefault };

class Parser;

// One keyword line as a keyword parser sees it.
struct Line {
  std::vector<std::string> args;   // args[0] is the keyword (after any no/default prefix)
  Prefix prefix = Prefix::kNone;
  SourceLoc loc;
  std::string where;               // "parsing [f.cfg:3] : "
};

using KeywordFn = void (*)(Parser&, Line&);

// One row of a keyword table: drives dispatch, "did you mean" and docs/config-compat.md.
struct KeywordDef {
  std::string_view name;
  unsigned sections;     // SectionBit mask
  unsigned caps;         // proxies: capability needed (ProxyConfig::Cap), 0 = any
  KeywordFn parse;
  std::string_view help;
};

const std::vector<KeywordDef>& global_keyword_table();
const std::vector<KeywordDef>& proxy_keyword_table();
// Sub-keywords documented with their parent (bind and server options, `option` names, ...).
struct SubKeywordDoc {
  std::string_view parent;
  std::string_view name;
  std::string_view help;
};
const std::vector<SubKeywordDoc>& proxy_sub_keyword_docs();
const std::vector<SubKeywordDoc>& global_sub_keyword_docs();

// HAProxy keywords sluice knows of but does not implement: reported as "not supported by
// sluice yet" rather than "unknown keyword".
bool is_known_haproxy_global_keyword(std::string_view kw);
// h1-case-adjust-file: the file's pairs added to g.h1_case_adjust; "" or the whole message
// (HAProxy's) of what is wrong.
std::string read_h1_case_adjust_file(GlobalConfig& g);
// Why sluice refuses a known HAProxy global keyword ("it needs TLS"), empty when it has no
// more to say than "not supported yet".
std::string_view haproxy_global_keyword_reason(std::string_view kw);
bool is_known_haproxy_proxy_keyword(std::string_view kw);

// The refusal of a condition that reads a TCP session's raw bytes (req.len, req.ssl_sni,
// req.ssl_hello_type) where there are none: HTTP mode, HTTP rules. "" when `cond` reads none.
// `what` names the place ("an 'http-request' rule"); the caller adds the file:line prefix.
std::string payload_fetch_refusal(const rules::Condition& cond, std::string_view what,
                                  const ProxyConfig& p);
// The same for what a fetch use says (rules::payload_fetch of a rule set: conditions and
// action expressions).
std::string payload_fetch_refusal(const rules::PayloadUse& u, std::string_view what,
                                  const ProxyConfig& p);

// Parse-time state of one defaults/frontend/backend/listen section.
struct ProxyState {
  ProxyConfig cfg;
  bool is_defaults = false;
  std::string defaults_name;           // defaults sections only ("" = anonymous)
  bool referenced = false;             // defaults named by a `from`
  // Defaults with TCP rules: the kind of the proxies using it so far (kFrontend or kBackend),
  // 0 before the first (HAProxy lets only one kind inherit such rules).
  mutable unsigned rules_used_by = 0;
  std::set<std::string> timeouts_set;  // set in this very section (overwrite warning)
  std::map<std::string, int> server_lines;
};

class Parser {
 public:
  Parser(const LoadOptions& options, const DiagnosticSink& sink);

  // Pass 1 runs only env keywords and structural checks; pass 2 parses everything.
  void parse_file(std::string_view text, const std::string& name, int pass);
  // Post-parse checks and resolution (the check phase). Returns false on a fatal error.
  bool finish(ConfigModel* model);
  // Part of finish(): a frontend's log-format and unique-id-format (validate.cc).
  void compile_log_formats(ProxyConfig& p);
  void compile_server_formats(ProxyConfig& p);
  void resolve_tracks(std::vector<ProxyConfig>& px);
  void compile_balance(ProxyConfig& p);
  // A sample expression of a proxy line (`what` names it in HAProxy's messages, `where` is
  // their prefix), which may only read `avail`; null after a fatal error.
  std::shared_ptr<const sample::Expr> compile_expr(ProxyConfig& p, const std::string& text,
                                                   std::string_view what,
                                                   const std::string& where, uint32_t avail);
  // Part of finish(): the expressions of `option forwarded` (forwarded_keywords.cc).
  void compile_forwarded(ProxyConfig& p);
  // Part of finish(): what sluice's TCP rule sets cannot do yet in this proxy (tcp_rule_checks.cc).
  void check_tcp_rules(const ProxyConfig& p);

  // Messages.
  void alert(std::string text, bool config_phase = true);
  void warning(std::string text, bool config_phase = true);
  void notice(std::string text);
  void diag(std::string text);
  // A fatal error: counted, and after 50 of them parsing stops.
  void fatal(std::string text, bool config_phase = true);

  int alerts() const { return alerts_; }
  int warnings() const { return warnings_; }
  int fatals() const { return fatals_; }
  bool aborted() const { return aborted_; }

  // State used by keyword parsers.
  Env env;
  GlobalConfig global;
  std::vector<ProxyState> proxies;    // frontend/backend/listen in declaration order
  std::vector<ProxyState> defaults;   // every defaults section in declaration order
  bool seen_non_global = false;
  bool global_maxconn_set = false;
  bool pidfile_set = false;
  bool uid_set = false, gid_set = false, chroot_set = false;
  bool maxaccept_set = false;
  // `localpeer` ran (pass 1) or -L gave the name: a later `localpeer` is an error, as in HAProxy.
  bool localpeer_locked = false;
  int cur_pass = 0;
  std::string cur_file;
  int cur_line = 0;
  // `http-errors <name>` sections, in order: their errorfile lines.
  struct HttpErrors {
    std::string name;
    SourceLoc loc;
    std::vector<ErrorFileConfig> files;
  };
  std::vector<HttpErrors> http_errors;
  // The `userlist` section being read; null in a duplicated one (its lines are ignored).
  std::shared_ptr<auth::Userlist> cur_userlist;
  // errorfiles lines and http replies naming sections, resolved against http_errors (validate.cc).
  bool resolve_errorfiles(ProxyConfig& p);

  ProxyState& cur_proxy();
  bool in_defaults() const { return section_ == Section::kDefaults; }
  // The type word HAProxy uses in messages: frontend, backend, proxy (listen), defaults.
  static std::string type_word(const ProxyConfig& p);
  // Applies the legacy second expansion of address words (expand_address_env) and reports an
  // address that expands to nothing.
  std::string address_word(const Line& l, std::size_t idx, std::string_view what);

 private:
  enum class Section { kNone, kGlobal, kDefaults, kProxy, kUnsupported, kSkip, kHttpErrors, kUserlist };

  void process_line(std::string_view raw, int pass);
  bool handle_directive(std::string_view raw, const std::vector<Word>& words, int pass);
  void handle_section(Line& l, int pass);
  void dispatch(Line& l, int pass);
  void start_proxy(Line& l, unsigned caps);
  void inherit_tcp_rules(const ProxyState& base, unsigned caps, const Line& l, ProxyConfig& cfg);
  void start_defaults(Line& l);
  const ProxyState* find_defaults(const std::string& name, const std::string& user_type,
                                  const std::string& user_name, const Line& l);
  void check_name_clash(const std::string& name, const std::string& type, unsigned caps,
                        const Line& l);
  std::string section_name() const;

  const LoadOptions& options_;
  const DiagnosticSink& sink_;
  int alerts_ = 0;
  int warnings_ = 0;
  int fatals_ = 0;
  bool aborted_ = false;
  bool stop_file_ = false;
  bool empty_arg_hint_shown_ = false;
  bool file_had_error_ = false;

  Section section_ = Section::kNone;
  int last_defaults_ = -1;   // index in defaults, -1 = the built-in settings

  // .if stack of the current file.
  struct Cond {
    bool taking;     // this branch's lines are used
    bool was_taken;  // some branch of this block was taken
    bool in_else;
    bool parent_active;
  };
  std::vector<Cond> conds_;
  bool active() const { return conds_.empty() || conds_.back().taking; }
};

}  // namespace sluice::config

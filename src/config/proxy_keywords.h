#pragma once
// The parsers of the defaults / frontend / backend / listen keywords, one file per keyword
// family, and the helpers they share; proxy_keywords.cc holds the keyword table that names
// them. Internal to config/; main thread only.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "config/model.h"
#include "config/parser.h"
#include "config/units.h"

namespace sluice::config {

// sluice::config::proxy_kw: keeps these names apart from the global section's parsers.
namespace proxy_kw {

// The capability a keyword, an option or a timeout belongs to.
inline constexpr unsigned kFe = ProxyConfig::kFrontend;
inline constexpr unsigned kBe = ProxyConfig::kBackend;

// ---- shared helpers (proxy_keywords.cc) ----

// "; did you mean '<name>' maybe ?" for the closest of `names`, "" when none is close.
std::string did_you_mean(std::string_view w, const std::vector<std::string_view>& names);
// HAProxy's error for a word after the `n` the keyword takes.
void no_extra(const Line& l, std::size_t n);
// The network after `except` (args[i]) of `option forwardfor|originalto`, or HAProxy's error.
rules::Network except_network(const Line& l, std::size_t i, std::string_view option);
// args[idx] as an integer in lo..hi, or HAProxy's error naming `kw`.
int strict_int(const Line& l, std::size_t idx, long long lo, long long hi, std::string_view kw);
// HAProxy's messages for a time argument out of range (below 2^31 ms, at least 1 ms when not 0).
void check_time_range(const Line& l, const TimeValue& t, std::string_view arg, std::string_view kw);
// The words of the line from `from` on (none when the line is shorter).
std::vector<std::string> tail(const Line& l, std::size_t from);

// The `log` line of a proxy (proxy_keywords.cc; the parser itself is log_keyword.cc).
void kw_log(Parser& p, Line& l);

// ---- proxy settings (proxy_setting_keywords.cc) ----

void kw_mode(Parser& p, Line& l);
void kw_default_backend(Parser& p, Line& l);
void kw_timeout(Parser& p, Line& l);
void kw_maxconn(Parser& p, Line& l);
void kw_backlog(Parser& p, Line& l);
void kw_retries(Parser& p, Line& l);
void kw_server_state_from(Parser& p, Line& l);
void kw_id(Parser& p, Line& l);
void kw_disabled(Parser& p, Line& l);
void kw_enabled(Parser& p, Line& l);
void kw_description(Parser& p, Line& l);

// ---- `option` and the TCP keep-alive tunables (proxy_option_keywords.cc) ----

void kw_option(Parser& p, Line& l);
void kw_tcpka(Parser& p, Line& l);
// Appends one {"option", name, help} row per supported option, in table order.
void append_option_docs(std::vector<SubKeywordDoc>* docs);

// ---- `bind` (bind_keyword.cc) ----

void kw_bind(Parser& p, Line& l);

// ---- `server` and `default-server` (server_keywords.cc) ----

void kw_server(Parser& p, Line& l);
void kw_default_server(Parser& p, Line& l);

// ---- `http-check` (http_check_keyword.cc) ----

void kw_http_check(Parser& p, Line& l);
// tcp_check_keyword.cc: `tcp-check <rule>`; a log-format of a rule set, compiled for a check
// (no client, no stream: the backend, the server, what the server sent), its index returned.
void kw_tcp_check(Parser& p, Line& l);
// `external-check command|path` (tcp_check_keyword.cc).
void kw_external_check(Parser& p, Line& l);
int add_check_format(TcpCheckConfig& tc, const Line& l, std::string_view what,
                     const std::string& text);
// The connect and expect rules of tcp-check and http-check (`kw` names the keyword in
// messages; `http`: http-check's match kinds).
check::CheckRule parse_check_connect(Parser& p, TcpCheckConfig& tc, const Line& l,
                                     std::string_view kw);
// `set-var(<var>[,<cond>...]) <expr>`, `set-var-fmt(...) <fmt>`, `unset-var(<var>)` (args[1]
// on): a step that sets or forgets a variable (check.*, or proc.*).
check::CheckRule parse_check_var(TcpCheckConfig& tc, const Line& l, std::string_view kw);
check::CheckRule parse_check_comment(const Line& l, std::string_view kw);
// A section's first rule replaces the set it inherited (from defaults, or a protocol option),
// as HAProxy starts a proxy's own rule set; a `comment` rule names the rule after it.
void begin_check_rule(TcpCheckConfig& tc, const Line& l);
void push_check_rule(TcpCheckConfig& tc, check::CheckRule r);
check::CheckRule parse_check_expect(TcpCheckConfig& tc, const Line& l, bool http);
// check_protocols.cc: `option redis-check|smtpchk|pgsql-check|mysql-check|ldap-check|
// ssl-hello-chk` (the arguments after the option's name from args[2]): the rule set the option
// stands for, as HAProxy 3.5 builds it. False when `name` is none of them.
bool protocol_check_option(Parser& p, Line& l, ProxyConfig& px, std::string_view name);

// ---- `balance` and `hash-type` (balance_keywords.cc) ----

void kw_balance(Parser& p, Line& l);
void kw_hash_type(Parser& p, Line& l);

// ---- ACLs and rules: acl, http-request/response, tcp-request, use_backend (rule_keywords.cc) ----

void kw_acl(Parser& p, Line& l);
void kw_http_rule(Parser& p, Line& l);
// `option forwarded ...` and `option originalto ...` (forwarded_keywords.cc; kw_option hands
// them the line).
void option_forwarded(Parser& p, Line& l);
void option_originalto(Parser& p, Line& l);
// `stats http-request ...` (rule_keywords.cc; kw_stats hands it the line).
void stats_http_request(Parser& p, Line& l);
void kw_redirect(Parser& p, Line& l);
void kw_tcp_request(Parser& p, Line& l);
void kw_tcp_response(Parser& p, Line& l);
void kw_use_backend(Parser& p, Line& l);
void kw_use_server(Parser& p, Line& l);

// ---- cookie persistence: cookie, dynamic-cookie-key, force-persist, ignore-persist, and
// `capture cookie` (cookie_keywords.cc) ----

void kw_cookie(Parser& p, Line& l);
void kw_dynamic_cookie_key(Parser& p, Line& l);
void kw_persist_rule(Parser& p, Line& l);
void capture_cookie(Parser& p, Line& l);

// ---- HTTP features: capture, stats, monitor-uri, monitor, http-reuse, errorfile (http_keywords.cc) ----

void kw_capture(Parser& p, Line& l);
void kw_declare(Parser& p, Line& l);
void kw_stats(Parser& p, Line& l);
void kw_monitor_uri(Parser& p, Line& l);
void kw_monitor(Parser& p, Line& l);
void kw_http_reuse(Parser& p, Line& l);
// ---- errorfile, errorfiles, errorloc*, http-error, http-errors sections (error_keywords.cc) ----
void kw_errorfile(Parser& p, Line& l);
void kw_errorfiles(Parser& p, Line& l);
void kw_errorloc(Parser& p, Line& l);
void kw_http_error(Parser& p, Line& l);
// A line of an http-errors section.
void http_errors_line(Parser& p, Line& l);
// `userlist <name>` and the lines of its section (userlist_keywords.cc).
void userlist_section(Parser& p, Line& l);
void userlist_line(Parser& p, Line& l);

// ---- log formats: log-format, unique-id-format, unique-id-header, log-tag (log_format_keywords.cc) ----

void kw_log_format(Parser& p, Line& l);
void kw_unique_id_format(Parser& p, Line& l);
void kw_unique_id_header(Parser& p, Line& l);
void kw_log_tag(Parser& p, Line& l);
void kw_log_format_sd(Parser& p, Line& l);
void kw_error_log_format(Parser& p, Line& l);
// `option httplog [clf]` / `option tcplog [clf]` (and `log-format`): chooses the proxy's log
// format, with HAProxy's warning when it overrides another one in a defaults section.
void choose_log_format(Parser& p, Line& l, ProxyConfig::LogFormatKind kind, std::string_view kw);

}  // namespace proxy_kw
}  // namespace sluice::config

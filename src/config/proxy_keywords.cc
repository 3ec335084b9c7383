// The keyword table of defaults / frontend / backend / listen sections, its documentation
// rows, and the helpers the keyword parsers share. The parsers live in one file per keyword
// family (see config/proxy_keywords.h).
#include "config/proxy_keywords.h"

#include <algorithm>
#include <climits>

#include <fmt/format.h>

#include "base/strings.h"
#include "config/log_keyword.h"
#include "config/tunable_keywords.h"

namespace sluice::config {

namespace proxy_kw {

std::string did_you_mean(std::string_view w, const std::vector<std::string_view>& names) {
  std::string best = base::closest_match(w, names);
  return best.empty() ? "" : fmt::format("; did you mean '{}' maybe ?", best);
}

void no_extra(const Line& l, std::size_t n) {
  if (l.args.size() > n)
    throw ConfigError{fmt::format("{}'{}' cannot handle unexpected argument '{}'.", l.where,
                                  l.args[0], l.args[n])};
}

rules::Network except_network(const Line& l, std::size_t i, std::string_view option) {
  auto n = i < l.args.size() ? rules::parse_network(l.args[i])
                             : base::Result<rules::Network>(base::Error::text(""));
  if (!n.ok())
    throw ConfigError{fmt::format("{}'option {} except' expects <address>[/mask] as argument.",
                                  l.where, option)};
  return n.value();
}

// sluice reads every integer strictly where HAProxy uses atol() (documented difference:
// `maxconn 12abc` is an error, not 12).
int strict_int(const Line& l, std::size_t idx, long long lo, long long hi, std::string_view kw) {
  std::string v = idx < l.args.size() ? l.args[idx] : "";
  auto n = parse_strict_int(v, LLONG_MIN, LLONG_MAX);
  if (!n) throw ConfigError{fmt::format("{}cannot parse '{}' value '{}', an integer is expected.", l.where, kw, v)};
  if (*n < lo || *n > hi)
    throw ConfigError{fmt::format("{}'{}' value {} is out of range ({}..{}).", l.where, kw, *n, lo, hi)};
  return static_cast<int>(*n);
}

// HAProxy's messages for a time argument out of range (below 2^31 ms, at least 1 ms when not 0).
void check_time_range(const Line& l, const TimeValue& t, std::string_view arg, std::string_view kw) {
  if (t.status == TimeValue::Status::kOverflow)
    throw ConfigError{fmt::format("{}timer overflow in argument '{}' to '{}' (maximum value is "
                                  "2147483647 ms or ~24.8 days)", l.where, arg, kw)};
  if (t.status == TimeValue::Status::kUnderflow)
    throw ConfigError{fmt::format("{}timer underflow in argument '{}' to '{}' (minimum non-null "
                                  "value is 1 ms)", l.where, arg, kw)};
}

std::vector<std::string> tail(const Line& l, std::size_t from) {
  return std::vector<std::string>(l.args.begin() + static_cast<std::ptrdiff_t>(std::min(from, l.args.size())),
                                  l.args.end());
}

void kw_log(Parser& p, Line& l) { parse_log(p, l, &p.cur_proxy().cfg.logs, false); }

namespace {

constexpr unsigned kDFLB = kInProxies;
constexpr unsigned kDFL = kInDefaults | kInFrontend | kInListen;
constexpr unsigned kDLB = kInDefaults | kInListen | kInBackend;
constexpr unsigned kFL = kInFrontend | kInListen;
constexpr unsigned kLB = kInListen | kInBackend;
constexpr unsigned kFLB = kInFrontend | kInListen | kInBackend;

const std::vector<KeywordDef> kProxyKeywords = {
    {"mode", kDFLB, 0, kw_mode, "tcp (default) | http. `log` and `spop` are not supported"},
    {"bind", kFL, kFe, kw_bind, "<addr>[,<addr>...] [name <s>] [maxconn <n>] [backlog <n>] [mode <octal>] [thread <set>] [shards <n>] [id <n>] [accept-proxy] [tfo] [ssl crt <pem|dir>|crt-list <file> [crt ...] [alpn <list>] [ssl-min-ver|ssl-max-ver <v>] [no-sslv3|no-tlsv1x...] [ciphers|ciphersuites|curves <list>] [no-tls-tickets] [strict-sni] [ca-file <f> verify none|optional|required [crl-file <f>]]]"},
    {"default_backend", kDFL, kFe, kw_default_backend, "<backend>: where connections go"},
    {"timeout", kDFLB, 0, kw_timeout, "connect|client|server|tunnel|client-fin|server-fin|queue|check|http-request|http-keep-alive|tarpit <time> (ms by default)"},
    {"maxconn", kDFL, kFe, kw_maxconn, "<n>: frontend connection limit (0 = global maxconn)"},
    {"backlog", kDFL, kFe, kw_backlog, "<n>: listen backlog"},
    {"retries", kDLB, kBe, kw_retries, "<n>: connection retries (default 3)"},
    {"load-server-state-from-file", kDLB, kBe, kw_server_state_from, "global|local|none: at start-up, before any traffic, the servers take the state saved in a server-state file (the output of `show servers state`, saved before a reload): global reads `server-state-file`, local the backend's own file (`server-state-file-name`, by default the backend's name, under server-state-base); see docs/config-compat.md for what is restored. On a master-worker reload the new worker takes the state the worker that served until then had instead of the file, as if it had been saved there just before the reload"},
    {"server-state-file-name", kDLB, kBe, kw_server_state_from, "[use-backend-name|<file>]: the file `load-server-state-from-file local` reads (default, and use-backend-name: the backend's name), relative to server-state-base unless it starts with '/'"},
    {"clitcpka-cnt", kDFL, kFe, kw_tcpka, "<n>: keep-alive probes sent before a silent client connection is dropped (TCP_KEEPCNT, at most 127; 0 = system value); with option clitcpka/tcpka"},
    {"clitcpka-idle", kDFL, kFe, kw_tcpka, "<time>: idle time before the first keep-alive probe on a client connection (TCP_KEEPIDLE, seconds by default, at most 32767 s)"},
    {"clitcpka-intvl", kDFL, kFe, kw_tcpka, "<time>: time between keep-alive probes on a client connection (TCP_KEEPINTVL, seconds by default, at most 32767 s)"},
    {"srvtcpka-cnt", kDLB, kBe, kw_tcpka, "<n>: keep-alive probes sent before a silent server connection is dropped (TCP_KEEPCNT, at most 127; 0 = system value); with option srvtcpka/tcpka"},
    {"srvtcpka-idle", kDLB, kBe, kw_tcpka, "<time>: idle time before the first keep-alive probe on a server connection (TCP_KEEPIDLE, seconds by default, at most 32767 s)"},
    {"srvtcpka-intvl", kDLB, kBe, kw_tcpka, "<time>: time between keep-alive probes on a server connection (TCP_KEEPINTVL, seconds by default, at most 32767 s)"},
    {"option", kDFLB, 0, kw_option, "redispatch [<n>] | tcplog | httplog | dontlognull | log-separate-errors | logasap | allbackups | tcp-check | httpchk [<method>] [<uri>] [<version>] [<host>] | http-keep-alive | http-server-close | httpclose | forwardfor [...] | accept-unsafe-violations-in-http-request | clitcpka | srvtcpka | tcpka | nolinger | tcp-smart-connect (`no option` where negatable)"},
    {"log-format", kDFLB, 0, kw_log_format, "<format>: HAProxy's log-format language for the traffic lines (every alias of section 8.2.6, %[sample] expressions, %{+Q,+X,+E,+M} flags); replaces option httplog/tcplog; ignored (warning) in backends. Named nodes %(name) and %(name:type) (str, sint, bool, raw); %{+json}o / %{+cbor}o (+bin) make the line a JSON object or a CBOR map of the named nodes, +json/+cbor on one node encode its value"},
    {"unique-id-format", kDFLB, 0, kw_unique_id_format, "<format>: the id of each request (log-format language), generated when the request head arrives; logged by %ID, read by the unique-id fetch, sent in unique-id-header"},
    {"unique-id-header", kDFLB, 0, kw_unique_id_header, "<name>: the request header that carries unique-id-format's id to the server"},
    {"log-format-sd", kDFLB, 0, kw_log_format_sd, "<format>: the structured data of the traffic lines sent to `format rfc5424` targets (log-format language; other formats ignore it); ignored (warning) in backends"},
    {"error-log-format", kDFLB, 0, kw_error_log_format, "<format>: the log format of the HTTP errors logged without a transaction (a request that never parsed: 400, 408), instead of the log format; ignored (warning) in backends"},
    {"log-tag", kDFLB, 0, kw_log_tag, "<tag>: the syslog tag of this proxy's traffic lines (default: the global log-tag)"},
    {"log-steps", kDFL, 0, kw_log_steps, "<step>[,<step>...] | all: the steps of a stream that send a log line with the frontend's format (default: close alone): accept (HTTP: a request's first byte), request (HTTP: its head parsed, before the rules), connect (the server connection established), response (HTTP: the response head, after the response rules), close (the usual line); earlier lines show what is known then, as HAProxy 3.5's do (no status yet, -1 for the times not reached, `<BADREQ>` before the head); `option logasap` logs its one line instead, as HAProxy 3.5 does. One difference: HAProxy 3.5 writes `<BADREQ>` for %r in every line when neither request nor close is listed; sluice writes the request line once it is known. The rule steps (http-req, http-res, http-after-res, tcp-req-conn, tcp-req-sess, tcp-req-cont, tcp-res-cont) are accepted and add no line: they serve do-log actions and log-profile sections, which sluice does not have; ignored (warning) in backends"},
    {"log", kDFLB, 0, kw_log, "global | <target> [len <n>] [format <f>] <facility> [max [min]]; `no log` clears"},
    {"server", kLB, kBe, kw_server, "<name> <addr>[:port] [weight 0..256] [maxconn <n>] [backup] [disabled] [enabled] [slowstart <time>] [check] [inter|fastinter|downinter <time>] [rise|fall <n>] [port <n>] [addr <ip>] [on-marked-down shutdown-sessions] [send-proxy|send-proxy-v2] [proxy-v2-options <opts>] [set-proxy-v2-tlv-fmt(<type>) <fmt>]"},
    {"default-server", kDLB, kBe, kw_default_server, "[server options]: defaults for the `server` lines that follow"},
    {"external-check", kDLB, kBe, kw_external_check, "command <cmd> | path <PATH>: the command `option external-check` runs (argv: the proxy's first address and port, or NOT_USED, the server's address and port; environment: HAPROXY_PROXY_NAME, _ID, _ADDR, _PORT, HAPROXY_SERVER_NAME, _ID, _ADDR, _PORT, _MAXCONN, _CURCONN, _PROTO, _SSL, and PATH from `path`, empty by default); exit status 0 passes (PROCOK), another fails with it as the code (PROCERR), `timeout check` kills it (PROCTOUT)"},
    {"tcp-check", kDLB, kBe, kw_tcp_check, "comment <msg> | connect [default] [port <n>|<expr>] [addr <ip>] [send-proxy] [via-socks4] [ssl] [sni <name>] [alpn <list>] [linger] [comment <msg>] | send <string> | send-binary <hex> | send-lf <fmt> | send-binary-lf <fmt> [comment <msg>] | expect [min-recv <n>] [comment <msg>] [ok-status|error-status|tout-status <st>] [on-success|on-error <fmt>] [status-code <expr>] [!] string|rstring|binary|rbinary|string-lf|binary-lf <pattern> | set-var(<var>[,<cond>...]) <expr> | set-var-fmt(<var>[,<cond>...]) <fmt> | unset-var(<var>): the steps of `option tcp-check`, run in order on the check's connections (the first connect is implicit unless a rule opens it; a check's connection ends with a reset, as HAProxy's do, or a FIN with `connect ... linger`); a send forgets what was received before it; an expect waits for its pattern (or min-recv bytes) until the server closes or `timeout check`; the failures are logged and shown in `last_chk` with HAProxy 3.5's texts (`TCPCHK did not match content 'x' at step 2`, ` at step 1 of tcp-check (expect string 'x')`); a section's first rule replaces the rules inherited from defaults. A connect's `port <expr>` is evaluated at each check (a value that is no port leaves the check's own); the variable steps set `check.*` variables, which live for one check and are read by the later steps' expressions and formats (`%[var(check.port)]`), or `proc.*` ones (a check has no session nor transaction: other scopes are refused). `connect via-socks4` goes through the server's `socks4` proxy (none: a direct connection, as in HAProxy). `connect ssl` makes a TLS handshake on the step's connection with the server's TLS settings (a server without `ssl` needs `verify none` or a `ca-file`, as in HAProxy), sending its `sni` (else the server's check-sni) and offering its `alpn` (else check-alpn); a failed handshake fails the check at that step (L6RSP). The check's own connection speaks TLS with the server's `check-ssl`, or its `ssl` when the check has no port nor addr of its own"},
    {"http-check", kDLB, kBe, kw_http_check, "comment <msg> | connect [...] | send [meth <m>] [uri <u>|uri-lf <fmt>] [ver <v>] [hdr <name> <fmt>]... [body <s>|body-lf <fmt>] [comment <msg>] | expect [min-recv <n>] [comment <msg>] [ok-status|error-status|tout-status <st>] [on-success|on-error <fmt>] [status-code <expr>] [!] status <codes>|rstatus <re>|hdr name [-m str|beg|end|sub|reg] <name> [value [-m ...] <pattern>]|fhdr ...|string <s>|rstring <re>|string-lf <fmt> | disable-on-404 | send-state: the steps of `option httpchk`, as tcp-check's (connect takes tcp-check's options and `proto h1`); a send that does not give its method, URI or version takes the option's; without an expect after the last send, a 2xx or 3xx status is wanted; set-var, set-var-fmt and unset-var steps as tcp-check's"},
    {"balance", kDLB, kBe, kw_balance, "roundrobin (the default in sluice) | static-rr | leastconn | first | source | uri [len <n>] [depth <n>] [whole] [path-only] | hdr(<name>) [use_domain_only] | url_param <param> | rdp-cookie[(<name>)] | hash <expr> | random[(<draws>)]; uri, hdr and url_param fall back to roundrobin in TCP mode (HAProxy's warning); a missing key balances like roundrobin"},
    {"hash-type", kDLB, kBe, kw_hash_type, "map-based | consistent [sdbm | djb2 | wt6 | crc32 | none [avalanche]]; default map-based sdbm, consistent alone adds avalanche"},
    {"id", kFLB, 0, kw_id, "<n>: proxy id, > 0 and unique (default: automatic from 2)"},
    {"disabled", kDFLB, 0, kw_disabled, "the proxy is not started"},
    {"enabled", kDFLB, 0, kw_enabled, "cancels `disabled`"},
    {"acl", kDFLB, 0, kw_acl, "<name> <criterion> [-i] [-m <method>] [-n] [--] <values>...: lines with the same name are ORed; see \"HTTP rules\" below for the criteria; not in defaults"},
    {"http-request", kDFLB, 0, kw_http_rule, "<action> [<args>] [if|unless <cond>]: set-header, add-header, del-header, replace-header, replace-value, set-path, deny, tarpit, reject, silent-drop [rst-ttl <ttl>] (the reset, instead of silence, leaves with that IP TTL), wait-for-body, normalize-uri (with expose-experimental-directives, as in HAProxy), return, redirect, allow, auth [realm <realm>], use-service prometheus-exporter, capture <expr> len|id <n>, set-log-level, set-timeout client|server|tunnel, set-src, set-src-port, set-dst, set-dst-port; not in defaults; ignored (warning) in TCP mode"},
    {"http-response", kDFLB, 0, kw_http_rule, "<action> [<args>] [if|unless <cond>]: set-header, add-header, del-header, replace-header, replace-value, deny, return, silent-drop [rst-ttl <ttl>], redirect location, allow, capture <expr> id <n>, set-log-level, set-timeout client|server|tunnel, wait-for-body time <time> [at-least <bytes>] (the rules after it see the body in res.body, res.body_len...: it waits until the whole body, at-least bytes or a full buffer came, or the server closed; its time over first is a 504); not in defaults; ignored (warning) in TCP mode"},
    {"http-after-response", kDFLB, 0, kw_http_rule, "<action> [<args>] [if|unless <cond>]: set-header, add-header, del-header, replace-header, replace-value, set-status, set-var, set-var-fmt, unset-var, allow, capture <expr> id <n>, set-log-level; run on every response, the server's and sluice's own (errors, redirects, return), after http-response; not in defaults; ignored (warning) in TCP mode"},
    {"tcp-request", kDFLB, 0, kw_tcp_request, "connection|session|content <action> [if|unless <cond>] | inspect-delay <time>: actions accept, reject, silent-drop [rst-ttl <ttl>], set-var(<var>[,<cond>...]) <expr>, set-var-fmt(<var>) <fmt>, unset-var(<var>), set-src|set-dst|set-src-port|set-dst-port <expr> (connection rules: accept, reject, silent-drop, set-src, set-src-port, expect-proxy layer4); connection and session rules in frontends, content rules in frontends (before the backend is chosen; in TCP mode they read the client's bytes: req.len, req.payload, req.ssl_sni, req.proto_http, HTTP, WAIT_END..., waiting up to inspect-delay for bytes that may still change the answer) and backends (once the session reaches them; in HTTP mode when the request enters the backend); content rules also capture <expr> len <n> (frontends); inherited from a named defaults section as in HAProxy; track-sc*, sc-*, do-resolve, use-service, switch-mode and the socket-option actions are not supported yet"},
    {"tcp-response", kDFLB, 0, kw_tcp_response, "content <action> [if|unless <cond>] | inspect-delay <time>: backends and listens; in HTTP mode on each response head, before http-response (accept, reject, close and the variables, no raw-response fetch); actions accept, reject, close, silent-drop, set-var(<var>[,<cond>...]) <expr>, set-var-fmt, unset-var, on the server's first bytes (res.len, res.payload, res.payload_lv, WAIT_END), which wait for the rules up to inspect-delay"},
    {"use_backend", kFL, kFe, kw_use_backend, "<backend>|<format> [if|unless <cond>]: the first matching rule chooses the backend, else default_backend; a format (`%[req.hdr(host),lower]`) names the backend per request, and a name that is no backend of the frontend's mode ends the rules with default_backend; in TCP mode after the tcp-request content rules, on the bytes they saw (req.ssl_sni, ...)"},
    {"use-server", kFLB, kBe, kw_use_server, "<server>|<format> if|unless <cond>: the first matching rule whose server is not down (maintenance or failed checks) sends the request there, before load balancing; a format names the server per request, and a name that is no server ends the rules; a full server keeps the request queued for it; a retry with `option redispatch` may leave it"},
    {"http-reuse", kDLB, kBe, kw_http_reuse, "never | safe (default) | aggressive | always: sharing of idle server connections; a connection serves only requests to the destination it was opened to (the same server, destination port, SNI and PROXY header), and one that answered an NTLM or Negotiate challenge (401, 407) stays private to its client connection"},
    {"errorfile", kDFLB, 0, kw_errorfile, "<code> <file>: raw HTTP response sent instead of the built-in page for 200, 400, 401, 403, 404, 405, 407, 408, 410, 413, 414, 421, 422, 425, 429, 431, 500..504; read and checked at parse time (complete head, at most 15360 bytes); an empty file sends nothing and closes; with errorfiles, errorloc* and http-error a later line overrides an earlier one for its status"},
    {"errorfiles", kDFLB, 0, kw_errorfiles, "<name> [<code> ...]: the errorfile lines of `http-errors <name>` (all, or those codes), as if written here; the section may come later in the configuration"},
    {"errorloc", kDFLB, 0, kw_errorloc, "<code> <url>: a 302 to <url> (`cache-control: no-cache`, empty body) instead of the page for <code>"},
    {"errorloc302", kDFLB, 0, kw_errorloc, "<code> <url>: as errorloc"},
    {"errorloc303", kDFLB, 0, kw_errorloc, "<code> <url>: a 303 to <url> instead of the page for <code>"},
    {"http-error", kDFLB, 0, kw_http_error, "status <code> [content-type <type>] [string <s> | file <f> | lf-string <fmt> | lf-file <f> | errorfile <f> | errorfiles <name> | default-errorfiles] [hdr <name> <fmt>]*: the reply sent for <code>; built once, or rendered for each answer when the payload or a field is a log-format string (the request as the rules left it, its variables, addresses and `%ST`)"},
    {"monitor-uri", kDFLB, 0, kw_monitor_uri, "<uri>: a request for exactly this URI is answered 200 (the 200 page or `errorfile 200`), or 503 when a `monitor fail` condition holds, by the frontend, without a log line; HTTP mode; ignored with a warning in a backend"},
    {"monitor", kFL, 0, kw_monitor, "fail if|unless <cond>: makes `monitor-uri` answer 503 while the condition holds (several lines are ORed)"},
    {"capture", kFLB, 0, kw_capture, "request|response header <name> len <n>: the field's value (the last one when repeated), cut to <n> bytes, logged by option httplog as {a|b} in declaration order, with the slots of `declare capture` and `http-request capture ... len`; frontends only (a backend warns). cookie <name> len <n>: the first request cookie (%CC) and the first response Set-Cookie (%CS) whose name starts with <name>, as `name=value` cut to <n> bytes (at most 63); one per frontend, the last line wins"},
    {"cookie", kDLB, kBe, kw_cookie, "<name> [rewrite|insert|prefix] [indirect] [nocache] [postonly] [preserve] [httponly] [secure] [domain <d>]* [maxidle <time>] [maxlife <time>] [dynamic] [attr <value>]*: cookie-based server persistence, as in HAProxy: the request cookie naming a server's `cookie` value sends the request there (when usable, or with `option persist` / `force-persist`); insert adds `Set-Cookie: <name>=<value>; path=/` and the attributes (with maxidle/maxlife, `|<last>|<first>` dates of 4-second steps in base64) when the client did not present a valid one, indirect hides the cookie from the server, nocache adds `cache-control: private` to a cacheable response, rewrite and prefix change the server's own Set-Cookie; the log's cookie flags (%tsc) as HAProxy's; HTTP mode only (TCP warns)"},
    {"dynamic-cookie-key", kDLB, kBe, kw_dynamic_cookie_key, "<key>: with `cookie ... dynamic`, the cookie of a server without `cookie` is the 16 hex digits of XXH64(<key>, address, port), HAProxy's value"},
    {"force-persist", kLB, kBe, kw_persist_rule, "if|unless <cond>: the persistence cookie is followed even when it names a server that is down; the first matching force-persist or ignore-persist rule decides"},
    {"ignore-persist", kLB, kBe, kw_persist_rule, "if|unless <cond>: the persistence cookie is not followed (logged `U`) and no cookie is inserted"},
    {"declare", kDFLB, 0, kw_declare, "capture request|response len <n>: a capture slot without a header, after those declared before it, for `http-request capture ... id <n>`, `http-response capture`, `http-after-response capture` and the capture-req / capture-res converters; logged by option httplog in the {a|b} of its direction; frontends and listens"},
    {"stats", kDFLB, 0, kw_stats, "enable | uri <prefix> | refresh <delay> | realm <realm> | auth <user>:<password> | scope <proxy>|. | hide-version | show-legends | show-node [<name>] | show-desc [<text>] | admin if|unless <cond> | http-request <action> [if|unless <cond>]: the HTTP statistics page (HTML, `;csv`, `;typed`, `;json`), HTTP mode only; `admin` opens the page's admin form (POSTed server actions); `http-request` rules run on the page's requests after the proxy's own (auth and realm exclude them, as in HAProxy); admin and http-request not in defaults"},
    {"redirect", kFLB, 0, kw_redirect, "location|prefix|scheme <to> [code 301|302|303|307|308] [drop-query] [keep-query] [append-slash] [ignore-empty] [set-cookie <c>] [set-cookie-fmt <fmt>] [clear-cookie <c>] [if|unless <cond>]: run after the proxy's http-request rules (and its stats page), in order; <to> is plain text (the http-request action takes a log-format string); not in defaults"},
    {"description", kFLB, 0, kw_description, "<text...>: kept with the proxy; HAProxy shows it on its HTML stats page, sluice's page (stats uri) does not show per-proxy descriptions"},
};

constexpr std::string_view kHaproxyProxy[] = {
    "compression",
    "email-alert",
    "filter", "fullconn", "guid", "hash-balance-factor",
    "hash-key", "http-send-name-header", "load-server-state-from-file",
    "max-keep-alive-queue", "max-session-srv-conns",
    "persist", "rate-limit", "retry-on", "server-state-file-name",
    "server-template", "source", "stick", "stick-table",
    "use-fcgi-app",
    "quic-initial", "dispatch", "transparent",
};

}  // namespace

}  // namespace proxy_kw

const std::vector<KeywordDef>& proxy_keyword_table() { return proxy_kw::kProxyKeywords; }

const std::vector<SubKeywordDoc>& proxy_sub_keyword_docs() {
  static const std::vector<SubKeywordDoc> docs = [] {
    std::vector<SubKeywordDoc> d = {
        {"bind", "name <s>", "label of every listener of the line"},
        {"bind", "maxconn <n>", "connection cap of the line, >= 0"},
        {"bind", "backlog <n>", "listen backlog, >= 0"},
        {"bind", "mode <octal>", "permissions of a UNIX socket"},
        {"bind", "thread [<g>/]<set>[,...]", "threads serving the line (repeatable): all|odd|even|N|N-M|N-|-M|-, global ids 1..1024 or g/ids 1..64 in group g; every element of a relative set repeats its group"},
        {"bind", "shards <n>|by-thread|by-group", "kernel sockets per address: 1..1024, one per thread, one per thread group (default: tune.listener.default-shards at the time the line is read)"},
        {"bind", "id <n>", "listener id, > 0 and unique in the proxy; only on a line with a single address (no list or port range); further shards take the next ids"},
        {"bind", "ssl", "each connection starts with a TLS handshake (OpenSSL 3), run on the worker that accepted it and bounded by `timeout client`; it needs `crt` (else HAProxy's `no SSL certificate specified for bind ... (use 'crt')`). A handshake that fails (plain HTTP or garbage on the port, a refused version or name), that the client closes, or that times out closes the connection and is logged `<ci>:<cp> [<date>] <frontend>/<bind>: SSL handshake failure` (`Connection closed during SSL handshake`, `Timeout during SSL handshake`...), as in HAProxy. Rules, logs (%ft gets its `~`) and the TCP relay then see the decrypted bytes"},
        {"bind", "crt <pem|dir>", "a PEM file (certificate, chain, key) or a directory of them (name order; .key, .ocsp, .issuer, .sctl and dot files skipped), relative to crt-base; repeatable. The SNI picks the certificate whose names (DNS subjectAltNames, else the CN) match exactly or by a `*.` wildcard one label deep; certificates with the same names (RSA and ECDSA) are served by what the client supports; no match (or no SNI): the first certificate loaded. Loaded while the line is read: a missing or broken file is refused with HAProxy's message"},
        {"bind", "alpn <list>", "comma-separated protocols offered by ALPN, the server's order first; h2 and h3 are left out with a warning (sluice speaks HTTP/1.1 only: a client that chose h2 would send HTTP/2 frames to an HTTP/1 parser), so `alpn h2,http/1.1` offers http/1.1; no common protocol: no ALPN"},
        {"bind", "ssl-min-ver|ssl-max-ver <SSLv3|TLSv1.0|TLSv1.1|TLSv1.2|TLSv1.3>", "the versions allowed (default: TLSv1.2 to TLSv1.3, as HAProxy's ssl-default-bind-options), narrowed by no-sslv3, no-tlsv10, no-tlsv11, no-tlsv12, no-tlsv13; force-tlsv1x sets both ends"},
        {"bind", "ciphers|ciphersuites|curves|ecdhe <list>", "TLS 1.2 ciphers, TLS 1.3 suites, key exchange groups (OpenSSL's syntax); default: the ssl-default-bind-* ones, else OpenSSL's. The server's preference order wins, unless `prefer-client-ciphers` (on the line or in ssl-default-bind-options)"},
        {"bind", "no-tls-tickets", "no session tickets: resumption by session id only (a cache of tune.ssl.cachesize sessions, shared by the workers)"},
        {"bind", "strict-sni", "a handshake without SNI, or with a name no certificate has, is refused (unrecognized_name alert)"},
        {"bind", "ca-file <f> verify none|optional|required [crl-file <f>]", "client certificates, checked against the CAs of ca-file (relative to ca-base) and the CRL; required: a client without one is refused; optional: a client without one goes on; an untrusted one is refused either way, as in HAProxy. ssl_c_used and ssl_c_verify report them"},
        {"bind", "crt-list <file>", "certificates from a crt-list file (relative to crt-base), in order among the line's `crt`s: one certificate a line (`#` comments), then optionally its own options between brackets (alpn, ciphers, ciphersuites, curves, ecdhe, ssl-min-ver, ssl-max-ver, verify, ca-file, ca-verify-file, crl-file, over the bind line's), then optionally the SNI names it serves instead of its own (`*.x` wildcards, `!name` exclusions). Errors name the list's line (`'crt-list' : parsing [list:3]: unknown ssl keyword foo`), as HAProxy's"},
        {"bind", "ca-verify-file <f>", "more CAs that check client certificates, whose names are not sent in the certificate request (roots, typically, with the intermediates in ca-file); relative to ca-base; also in crt-list brackets"},
        {"bind", "tls-ticket-keys <file>", "session tickets sealed with the file's keys (base64, 48 bytes for AES-128 or 80 for AES-256, at least 3; the last three kept: the next-to-last seals, all three open, a ticket opened with an older key is renewed), shared by every line naming the file, so that sessions resume across lines, reloads and other sluice processes given the file (tickets of HAProxy's are not interchangeable with sluice's); `show tls-keys` and `set ssl tls-key` rotate them at run time"},
        {"bind", "npn, generate-certificates, ca-ignore-err, crt-ignore-err, allow-0rtt, ktls", "refused: npn is obsolete (use alpn) and sluice does not generate certificates; the others are not supported yet"},
        {"bind", "tfo", "TCP Fast Open (TCP_FASTOPEN) on the line's sockets, with a queue as long as the backlog: a client with a cookie sends its request in the SYN. The kernel must allow it for servers (net.ipv4.tcp_fastopen bit 2), as for HAProxy"},
        {"bind", "accept-proxy", "each connection starts with a PROXY protocol header (v1 or v2), whose addresses become the connection's source and destination everywhere but tcp-request connection rules (src, dst, logs, forwardfor, balance source); a header may arrive in several pieces within `timeout client`; one that is not a header, invalid, unhandled (UDP, UNIX), cut by a close or late closes the connection and is logged `<ci>:<cp> [<date>] <frontend>/<bind name or number>: <fc_err_str>` as HAProxy logs it; v1 UNKNOWN and v2 LOCAL keep the socket's addresses"},
        {"server", "weight <0..256>", "load-balancing weight (default 1; 0 = no new connections)"},
        {"server", "maxconn <n>", "concurrent connections (0 = unlimited)"},
        {"server", "backup", "used only when no active server is up"},
        {"server", "slowstart <time>", "weight ramps up over <time> (rounded up to seconds) after the server comes back, in HAProxy's steps: once a second, (16 x seconds + slowstart) / slowstart sixteenths of the weight, the first at once; not at start-up"},
        {"server", "disabled", "starts in maintenance"},
        {"server", "check", "health checks (tcp connect, or HTTP with `option httpchk`); needs a port"},
        {"server", "no-check", "cancels `check` (from default-server)"},
        {"server", "inter <time>", "interval between checks (default 2s); also the check timeout without `timeout check`"},
        {"server", "fastinter <time>", "interval while the state is changing (default: inter)"},
        {"server", "downinter <time>", "interval while the server is DOWN (default: inter)"},
        {"server", "rise <n>", "consecutive successes to come UP (default 2)"},
        {"server", "fall <n>", "consecutive failures to go DOWN (default 3)"},
        {"server", "port <n>", "port to check (default: the server's current port, which follows `set server addr ... port`)"},
        {"server", "addr <ip>", "address to check (default: the server's current address, which follows `set server addr`)"},
        {"server", "on-marked-down shutdown-sessions", "close the server's established connections when it goes DOWN"},
        {"server", "on-marked-up shutdown-backup-sessions", "when this (active) server comes UP, close the established connections of the backend's backup servers, so that their clients come back to it"},
        {"server", "observe none|layer4|layer7", "the server's traffic is news of its health (with `check`; without, a warning: HAProxy ignores it silently): layer4 takes each failed connection attempt (refused, reset, timeout) as an error and each one that succeeds as a success; layer7 (HTTP proxies only; elsewhere HAProxy's warning, and none) takes failed connections and HTTP responses: a status from 100 to 499, 501 or 505 is a success, any other status, an invalid response, a read error, a server timeout or a close before the response an error. `error-limit` errors in a row (counted over all threads) set off `on-error`"},
        {"server", "error-limit <n>", "consecutive errors of `observe` that set off `on-error` (default 10, > 0)"},
        {"server", "on-error fastinter|fail-check|sudden-death|mark-down", "what `error-limit` errors do: fastinter brings the next check forward to `fastinter`; fail-check (the default, as in HAProxy) also counts a failed check; sudden-death leaves the server one failed check from DOWN, then counts one; mark-down takes it DOWN at once. The last three set check_status HANA and last_chk `Detected 10 consecutive errors, last one was: Wrong http response`, logged as HAProxy 3.5 logs it (`Server b/s is DOWN, reason: Health analyze, info: \"...\". ...`); each time counts in show stat's `hanafail`"},
        {"server", "socks4 <addr>:<port>", "the server's connections go to this SOCKS4 proxy (IPv4 or IPv6; the server's own address must be IPv4, all SOCKS4 can name), which is asked to connect on to the server (CONNECT, user id `HAProxy` as HAProxy sends it); the session's bytes leave once it has agreed, within `timeout connect`. A proxy that refuses, closes or answers something else is a failed connection (retried like any), logged with HAProxy's bc_err 41 SOCKS4_DENY, 40 SOCKS4_RECV, 42 SOCKS4_ABORT (39 SOCKS4_SEND: the request could not be written)"},
        {"server", "check-via-socks4", "the server's checks go through its `socks4` proxy too (the check's own connection, and tcp-check's `connect default`; `connect via-socks4` for the others); a refusal fails the check as a socket error with HAProxy's text (`SOCKS4 Proxy deny the request`); without `socks4`, a warning (HAProxy ignores it silently)"},
        {"timeout", "check <time>", "whole health check (connect + response); default: the server's inter"},
        {"timeout", "queue <time>", "longest wait in the backend queue when every server is at its maxconn (default: `timeout connect`); on expiry the client is closed"},
        {"server", "enabled", "cancels `disabled`"},
        {"server", "send-proxy", "each connection to the server opens with a PROXY protocol v1 header carrying the client's addresses (as the session sees them); such a connection serves that client only (never shared through the idle pool); `no-send-proxy` cancels it"},
        {"server", "send-proxy-v2", "the same with the binary v2 header; `no-send-proxy-v2` cancels it"},
        {"server", "proxy-v2-options <opt>[,<opt>...]", "TLVs of the v2 header: unique-id (the stream's unique id), crc32c (a checksum of the header), authority (the authority TLV the client's own PROXY header carried); ssl (the TLS TLV: whether the client connection is TLS, whether and how its certificate verified, its version), and added to it cert-cn (the client certificate's CN), ssl-cipher, cert-sig and cert-key (the signature and key algorithms of the certificate the frontend presented), each implying ssl; in HAProxy 3.5's order and bytes; without send-proxy-v2 it does nothing (a warning says so; HAProxy is silent)"},
        {"server", "send-proxy-v2-ssl", "send-proxy-v2 with proxy-v2-options ssl"},
        {"server", "send-proxy-v2-ssl-cn", "send-proxy-v2 with proxy-v2-options ssl,cert-cn"},
        {"server", "agent-check [agent-port <n>] [agent-addr <ip>] [agent-inter <time>] [agent-send <s>]", "an agent beside the server (at agent-addr, default the server's address, and agent-port, without which a warning disables it) is asked every agent-inter (default inter), with agent-send first if given; the words of its first line act as HAProxy's agent protocol says: up / down, fail, stopped (the server DOWN while the agent says so: \"DOWN (agent)\", logged `via agent : <word> (<text after #>)`), ready / drain / maint (the admin state, as the CLI sets it), <n>% (the weight as a share of the configured one), maxconn:<n>; an agent that cannot be reached or says nothing changes nothing. Shown in show stat's agent_* fields and last_agt; `no-agent-check` cancels it; the CLI's enable|disable agent and set server ... agent up|down drive it"},
        {"server", "track [<backend>/]<server>", "this server goes UP and DOWN with that server's checks (the same backend without a name); the tracked server has a check or tracks one itself (chains), never this one back; not with `check`. Its state changes are logged `Server c/s3 is DOWN via b/s2. ...`, and show stat's `tracked` names it"},
        {"server", "init-state none|fully-up|up|down|fully-down", "where the check counter starts: none (the default, HAProxy 3.5's) UP with the counter at 0, so one failure takes the server DOWN and `rise` successes make it fully healthy; up: UP one failure from DOWN and one success from the top (HAProxy 2.6's start); fully-up: UP at the top (`fall` failures to go DOWN); down: DOWN, UP at the first success; fully-down: DOWN, `rise` successes to come UP"},
        {"server", "check-send-proxy", "health checks open with a PROXY header: v1 with the check connection's own addresses, or with send-proxy-v2 the v2 LOCAL header (no addresses) carrying the set-proxy-v2-tlv-fmt values (for a check: the backend and server, no client) and the CRC32C; without it, checks send the server's send-proxy header only when they have no `port` nor `addr` of their own, as in HAProxy 3.5"},
        {"server", "set-proxy-v2-tlv-fmt(<type>) <fmt>", "with send-proxy-v2: a TLV of that type (0 to 255) whose value is the log-format `<fmt>`, evaluated as the connection opens, with the request as it leaves (after the rules), the backend and the server; an absent value is an empty TLV; several may be given, also of one type, sent in order before proxy-v2-options' own, as in HAProxy 3.5. HAProxy 3.5 reads the request's fields and path as empty there (it has forwarded them); sluice gives them"},
        {"server", "cookie <value>", "the persistence cookie's value of this server (backend `cookie`); several servers may share one (the first running one takes the request); default-server sets it for the servers that follow"},
        {"server", "id <n>", "the server's numeric id (1 to 2147483647; HAProxy's `sid` in show stat, `#<n>` on the CLI); unique in its backend (HAProxy's error otherwise), not in default-server; the others take the first free id counting from 1, as HAProxy numbers them"},
        {"server", "pool-max-conn <n>", "idle connections kept for this server, all threads together (-1 unlimited, the default; 0 none); sluice also keeps at most 256 per thread"},
        {"server", "pool-low-conn <n>", "accepted; no effect: in HAProxy a thread takes another thread's idle connection only while it has more than n; sluice's threads never take each other's"},
        {"server", "pool-purge-delay <time>", "how long an idle connection is kept (default 5s; 0 keeps none); sluice closes each one once it has been idle that long (HAProxy closes half of them per period)"},
        {"server", "max-reuse <n>", "how many times a pooled connection is reused (-1 unlimited, the default; 0 never): it closes after carrying n + 1 requests, private ones (http-reuse never, send-proxy: they serve one client) included"},
        {"server", "init-addr <method>[,<method>...]", "for a host name: how the server gets its first address, the first method that gives one winning: `last` (the address the backend's server-state file saved for it, srv_addr, when there is one: a server that only `last` could give an address to fails the start without one), `libc` (the resolver), `none` (no address: the server stays in maintenance, `MAINT (resolution)`, never checked, and the CLI cannot give it one, as in HAProxy without DNS resolvers), or an IP; default `last,libc`. Also on default-server"},
        {"server", "ssl", "connections to the server open with a TLS handshake (OpenSSL 3), after its SOCKS4 proxy's and after the PROXY header, which goes in clear before it; `timeout connect` bounds the handshake; a handshake that fails is a failed connect (SC, retries, 503), logged with bc_err 28 (18 for a close during it); `no-ssl` cancels it (default-server). sluice speaks HTTP/1.1 over it"},
        {"server", "verify none|required", "whether the server's certificate is checked against `ca-file` (default: `ssl-server-verify`, required, which without a ca-file is HAProxy's error); with required, its name must be the SNI's when one is sent (it wins, as in HAProxy), else `verifyhost`'s"},
        {"server", "verifyhost <name>, no-verifyhost", "the name the server's certificate must carry when no SNI is sent (wildcards one label deep, as OpenSSL checks them)"},
        {"server", "ca-file <file>, crl-file <file>", "the CAs that sign the server's certificate (relative to ca-base; `@system-ca`: the system's store), and a CRL it is checked against"},
        {"server", "crt <file>", "a client certificate (PEM: the certificate, its chain and its key; relative to crt-base) offered to servers that ask for one"},
        {"server", "sni <expr>", "the name sent in the client hello: a sample expression evaluated as the connection opens (`req.hdr(host)`, `str(x)`); no value, no SNI. An idle connection is reused only for the name it was opened with, and a session is resumed only towards the name it was made for"},
        {"server", "sni-auto, no-sni-auto", "without `sni`, HTTP mode sends the request's Host as SNI (HAProxy 3.5's default): its name without the port, none for an IP address (RFC 6066: HAProxy 3.5 sends an IPv4 address, and for an IPv6 one the text before its first ':'); no-sni-auto sends none. check-sni-auto is refused (checks send `check-sni`)"},
        {"server", "alpn <list>", "the protocols offered, in order (h2 and h3 left out with a warning: sluice speaks HTTP/1.1 to servers); `ssl_bc_alpn` says which the server took"},
        {"server", "ciphers, ciphersuites, curves, sigalgs, client-sigalgs <list>", "OpenSSL's lists for the TLS 1.2 and older ciphers, the TLS 1.3 suites, the key exchange groups, the signature algorithms (the server's and the client certificate's); default: the ssl-default-server-* globals, else OpenSSL's"},
        {"server", "ssl-min-ver, ssl-max-ver <SSLv3|TLSv1.0|...|TLSv1.3>, no-sslv3, no-tlsv10..no-tlsv13, force-tlsv1x", "the versions allowed (default: TLS 1.2 up to 1.3)"},
        {"server", "no-ssl-reuse, ssl-reuse, no-tls-tickets, tls-tickets", "each worker keeps the last session of each server and resumes it on the next connection (HAProxy's per-thread reuse), unless no-ssl-reuse; no-tls-tickets asks for sessions by id instead of tickets"},
        {"server", "check-ssl, no-check-ssl, check-sni <name>, check-alpn <list>", "health checks over TLS: with check-ssl, or with `ssl` when the check has no port nor addr of its own (HAProxy's rule); a connect check then passes as L6OK, a failed handshake is L6RSP and a slow one L6TOUT; check-sni and check-alpn are what the check's handshake sends"},
        {"server", "npn, allow-0rtt", "refused: NPN is obsolete (use alpn); 0-RTT is not supported yet"},
        {"timeout", "connect <time>", "connection to a server"},
        {"timeout", "client <time>", "client inactivity"},
        {"timeout", "server <time>", "server inactivity"},
        {"timeout", "tunnel <time>", "inactivity once both sides are connected"},
        {"timeout", "client-fin <time>", "half-closed client side"},
        {"timeout", "server-fin <time>", "half-closed server side"},
        {"timeout", "http-request <time>", "HTTP: longest wait for a complete request head (408 on expiry); unset: only `timeout client` applies. Frontend side: in a backend it warns and is ignored"},
        {"timeout", "tarpit <time>", "how long `http-request tarpit` holds its answer (that of the backend once one is chosen, else the frontend's); unset: no delay, as in HAProxy 3.5"},
        {"timeout", "http-keep-alive <time>", "HTTP: idle time allowed between requests of a connection (silent close); unset: `timeout http-request`. Frontend side: in a backend it warns and is ignored"},
    };
    proxy_kw::append_option_docs(&d);
    return d;
  }();
  return docs;
}

bool is_known_haproxy_proxy_keyword(std::string_view kw) {
  return std::find(std::begin(proxy_kw::kHaproxyProxy), std::end(proxy_kw::kHaproxyProxy), kw) !=
         std::end(proxy_kw::kHaproxyProxy);
}

}  // namespace sluice::config

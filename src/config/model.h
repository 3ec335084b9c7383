#pragma once
// The configuration as plain data: what the parser produces and what app/ turns into runtime
// objects. No behaviour here, no runtime types. Values are already validated and inherited
// (defaults sections applied), and names are resolved to indexes.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "check/rules.h"
#include "net/address.h"
#include "net/crt_list.h"
#include "net/tls.h"
#include "log/format.h"
#include "rules/rules.h"

namespace sluice::config {

struct SourceLoc {
  std::string file;
  int line = 0;
};

enum class Mode { kTcp, kHttp };

// syslog severities, 0 (emerg) .. 7 (debug).
// kDefault: no `format` word, HAProxy's rfc3164 header with a host only when
// log-send-hostname names one (an explicit rfc3164 always names one).
enum class LogFormat { kDefault, kRfc3164, kRfc5424, kShort, kRaw, kLocal, kPriority, kTimed, kIso };

struct LogTarget {
  enum class Kind { kStdout, kStderr, kUdp, kUnixDgram };
  Kind kind = Kind::kStdout;
  net::SocketAddress addr;      // kUdp, kUnixDgram
  std::string text;             // the target as written, for messages
  int max_len = 1024;           // `len N`
  LogFormat format = LogFormat::kDefault;
  int facility = 16;            // local0 by default in examples; always set by the parser
  int max_level = 7;            // messages above this severity are dropped
  int min_level = 0;            // messages below this severity are raised to it
  SourceLoc loc;
};

// Times in milliseconds; 0 means unset (no timeout), as in HAProxy.
struct Timeouts {
  uint32_t connect = 0;
  uint32_t client = 0;
  uint32_t server = 0;
  uint32_t tunnel = 0;
  uint32_t client_fin = 0;
  uint32_t server_fin = 0;
  uint32_t queue = 0;            // 0 = unset: `timeout connect` applies (HAProxy's default)
  uint32_t check = 0;           // `timeout check`: a whole health check (0 = the server's inter)
  uint32_t http_request = 0;    // `timeout http-request`: until the end of the request head
  uint32_t http_keep_alive = 0; // `timeout http-keep-alive`: idle between requests
  uint32_t tarpit = 0;          // `timeout tarpit`: how long `tarpit` holds its answer (0: none)
};

// `shards` on a bind line; a bind line created without it copies the global
// `tune.listener.default-shards` in force at that point of the configuration.
struct ShardsConfig {
  enum class Kind { kByProcess, kByGroup, kByThread, kNumber };
  Kind kind = Kind::kByGroup;
  int number = 1;
};

// One `thread` argument item on a bind line, syntax-checked.
struct ThreadSetConfig {
  bool relative = false;   // `g/set`
  int group = 0;           // relative form: 1-based group
  std::vector<int> ids;    // absolute: global ids 1..1024; relative: local ids 1..64 (all expanded)
};

// A bind line's TLS options (config/bind_ssl.cc): `ssl`, `crt`, `alpn`, ...
struct BindTlsConfig {
  bool ssl = false;                       // `ssl`: connections start with a TLS handshake
  net::tls::BindOptions options;          // the globals' ssl-default-bind-* applied first
  int disabled_versions = 0;              // no-sslv3 / no-tlsv1x: bit per version (0 = SSLv3)
  bool min_set = false, max_set = false;  // ssl-min-ver / ssl-max-ver written on the line
  // Per entry of options.crts: a crt-list line's own option words (empty: the line's), and
  // where it was ("'crt-list' : parsing [list:3]: ") for their errors.
  std::vector<std::vector<std::string>> entry_words;
  std::vector<std::string> entry_where;
  // Built at the end of the line, once every certificate loaded; null without `ssl`.
  std::shared_ptr<const net::tls::ServerContext> context;
  net::tls::BindOptions built_options;   // what `context` was built from (a commit rebuilds it)
  // The crt-list files (and `crt` directories, a line per file) of the line, as read, for
  // `show ssl crt-list`.
  std::vector<std::pair<std::string, std::vector<net::tls::CrtListLine>>> crt_lists;
};

struct BindConfig {
  SourceLoc loc;
  std::string args_text;                  // "bind :80 thread 3-6" as written, for messages
  std::string text;                       // the address word as written (messages, show stat)
  std::vector<net::ListenAddress> addrs;  // expanded list and ranges
  std::string name;                       // `name`
  int maxconn = 0;                        // `maxconn`, 0 = no cap of its own (whole bind line)
  int backlog = 0;                        // `backlog`, 0 = inherit (see effective_backlog)
  int unix_mode = -1;                     // `mode` (octal) for UNIX sockets, -1 = umask
  int id = 0;                             // `id`, 0 = automatic
  bool accept_proxy = false;              // `accept-proxy`: a PROXY protocol header first
  BindTlsConfig tls;
  bool tfo = false;                       // `tfo`: TCP Fast Open
  std::vector<ThreadSetConfig> threads;   // `thread` (repeatable; empty = all threads)
  ShardsConfig shards;
};

// A server line's TLS options (config/server_ssl.cc): `ssl`, `verify`, `sni`, `check-ssl`, ...
struct ServerTlsConfig {
  bool ssl = false;                       // `ssl`: connections open with a TLS handshake
  net::tls::ClientOptions options;        // ssl-default-server-* applied at the line's end
  int verify = -1;                        // `verify` written: 1 required, 0 none; -1 not
  int disabled_versions = 0;              // no-sslv3 / no-tlsv1x: bit per version
  bool min_set = false, max_set = false;  // ssl-min-ver / ssl-max-ver written
  // `sni <expr>`: the name sent, evaluated for each new connection (compiled once the proxy
  // is parsed, where the request is known).
  std::string sni_text;
  std::shared_ptr<const sample::Expr> sni;
  // `sni-auto` (HAProxy 3.5's default; `no-sni-auto`): without `sni`, HTTP mode sends the
  // request's Host (sni is then req.hdr(host), sni_from_host set).
  bool sni_auto = true;
  bool sni_from_host = false;
  int check_ssl = -1;                     // check-ssl 1, no-check-ssl 0, -1 not written
  // The checks speak TLS: check-ssl, or `ssl` when the check has no port nor addr of its own
  // (HAProxy's rule). Set at the end of the server line.
  bool checks_use_tls = false;
  std::string check_sni;                  // `check-sni <name>`
  std::vector<std::string> check_alpn;    // `check-alpn <list>`
  // Built at the end of a server line with `ssl` or check-ssl; null otherwise. The checks'
  // is the same one, or with check-alpn its own.
  std::shared_ptr<const net::tls::ClientContext> context;
  std::shared_ptr<const net::tls::ClientContext> check_context;
  // The options with the globals applied (set at the end of every server line), and the
  // context of `tcp-check connect ssl` / `http-check connect ssl` steps: check_context when
  // there is one, else built once the proxy is read (Parser::compile_server_formats()).
  net::tls::ClientOptions resolved;
  std::string where;   // "[f.cfg:9] : 'server b/s' : ", for the errors of that late build
  // A server without ssl or check-ssl whose TLS versions conflict: accepted, as HAProxy does,
  // until a `connect ssl` check step needs its context (then this is the error).
  std::string resolve_error;
  std::shared_ptr<const net::tls::ClientContext> rule_context;
};

struct ServerConfig {
  SourceLoc loc;
  std::string name;
  int id = 0;                   // 1-based within the backend
  net::ServerAddress addr;
  std::string addr_text;
  int weight = 1;               // 0..256
  int maxconn = 0;              // 0 = unlimited
  bool backup = false;
  bool disabled = false;
  uint32_t slowstart_ms = 0;    // `slowstart <time>`, rounded up to seconds; 0 = none
  int send_proxy = 0;           // `send-proxy` 1, `send-proxy-v2` 2, 0 none
  uint8_t pp2_options = 0;      // `proxy-v2-options`: net::pp::kOpt* bits
  // Health check (`check`, `inter`...). Defaults are HAProxy's.
  bool check = false;
  uint32_t inter_ms = 2000;
  uint32_t fastinter_ms = 0;    // 0 = inter
  uint32_t downinter_ms = 0;    // 0 = inter
  int rise = 2;
  int fall = 3;
  int check_port = 0;           // `port`, 0 = the server's port
  bool has_check_addr = false;  // `addr`
  net::SocketAddress check_addr;
  bool shutdown_on_down = false;   // `on-marked-down shutdown-sessions`
  bool shutdown_backups_on_up = false;   // `on-marked-up shutdown-backup-sessions`
  bool check_send_proxy = false;   // `check-send-proxy`: checks open with a PROXY header
  // `observe none|layer4|layer7` (0, 1, 2: lb::Observe's order), `error-limit` and
  // `on-error fastinter|fail-check|sudden-death|mark-down` (lb::OnError's order): the
  // server's traffic taken as news of its health, acted on by its check.
  uint8_t observe = 0;
  int error_limit = 10;
  uint8_t on_error = 1;   // fail-check, HAProxy's default
  // `socks4 <addr>:<port>`: connections go through that SOCKS4 proxy; `check-via-socks4`:
  // the checks too.
  bool has_socks4 = false;
  net::SocketAddress socks4;
  bool check_via_socks4 = false;
  // `track [<backend>/]<server>`: this server's state follows that one's checks; resolved
  // after parsing into the tracked server's proxy and server indexes (-1: none).
  std::string track;
  int track_proxy = -1;
  int track_server = -1;
  // `agent-check` with `agent-port`, `agent-addr` (default: the server's address),
  // `agent-inter` (0: inter) and `agent-send`.
  bool agent_check = false;
  int agent_port = 0;
  bool has_agent_addr = false;
  net::SocketAddress agent_addr;
  uint32_t agent_inter_ms = 0;
  std::string agent_send;
  // `init-state none|fully-up|up|down|fully-down` (check::InitState's order): where the
  // server's check counter starts; 0, none, is HAProxy 3.5's default (UP, the counter at 0).
  uint8_t init_state = 0;
  // `init-addr last,libc,none,<ip>`: how a server whose address is a host name gets its
  // first address, tried in order ("last": the address the server-state file saved; "libc":
  // the resolver; "none": no address, the server in maintenance; else an IP).
  // Empty: HAProxy's default (last,libc).
  std::vector<std::string> init_addr;
  bool unresolved = false;         // init-addr none applied: no address yet
  std::string fqdn;                // the host name the address was written with ("" an IP)
  // `last` comes before the method that gave the address: a saved state's address wins
  // (app::apply_saved_addresses, once the configuration is read). needs_last: no other
  // method gave one (unresolved meanwhile); without a saved address the start fails.
  bool init_last = false;
  bool needs_last = false;
  std::string cookie;              // `cookie <value>`: the persistence cookie's value ("" none)
  bool id_custom = false;          // `id <n>` written (id then holds it); else numbered at the end
  // The idle server-connection pool (http-reuse): `pool-max-conn` (-1 unlimited, 0 none),
  // `pool-low-conn` (accepted: sluice never takes another thread's idle connections),
  // `pool-purge-delay` (ms an idle connection is kept), `max-reuse` (-1 unlimited).
  int pool_max_conn = -1;
  int pool_low_conn = 0;
  uint32_t pool_purge_delay_ms = 5000;
  int max_reuse = -1;
  // `set-proxy-v2-tlv-fmt(<type>) <fmt>`, in the order written (a type may repeat): TLVs
  // send-proxy-v2 adds, each the value of its format (compiled once the proxy is parsed).
  struct Pp2Tlv {
    uint8_t type = 0;
    std::string text;
    std::shared_ptr<const log::Format> fmt;
  };
  std::vector<Pp2Tlv> pp2_tlvs;
  ServerTlsConfig tls;
};

// `cookie <name> [rewrite|insert|prefix] [indirect] [nocache] ...`: cookie-based server
// persistence of a backend (empty name: none).
struct CookieConfig {
  SourceLoc loc;
  std::string name;
  enum class Mode : uint8_t { kNone, kRewrite, kInsert, kPrefix };
  Mode mode = Mode::kNone;
  bool indirect = false, nocache = false, postonly = false, preserve = false;
  bool httponly = false, secure = false, dynamic = false;
  std::string domain;       // "a; domain=b" for several `domain` options, as HAProxy writes them
  std::string attrs;        // the `attr` values joined with "; "
  uint32_t maxidle_s = 0, maxlife_s = 0;
};

// `force-persist | ignore-persist { if | unless } <cond>` (backends), in order.
struct PersistRuleConfig {
  SourceLoc loc;
  bool force = false;       // force-persist, else ignore-persist
  rules::Condition cond;
};

// `option httpchk` and the http-check switches (its rules: ProxyConfig::http_check_rules).
struct HttpCheckConfig {
  // `option httpchk [<method>] [<uri>] [<version>] [<host>]`: the request a send that does not
  // say them gets (the host as a field of the first send).
  std::string method = "OPTIONS";
  std::string uri = "/";
  std::string version = "HTTP/1.0";
  std::vector<std::pair<std::string, std::string>> headers;
  bool disable_on_404 = false;   // `http-check disable-on-404`
  bool send_state = false;       // `http-check send-state`
};

// `tcp-check` rules (check/rules.h) and the log-formats they use (their texts and compiled
// forms, index for index), and their variable actions and expressions. `inherited`: copied
// from a defaults
// section (the section's first own rule replaces them); `protocol`: the set of a protocol
// option (`option redis-check`...), whose name it is.
// What a check's log-formats may read: the backend, the server, what the server sent.
constexpr uint32_t check_sample_avail() {
  return sample::kUseInternal | sample::kUseBackend | sample::kUseServer | sample::kUseResBuf;
}

struct TcpCheckConfig {
  std::vector<check::CheckRule> rules;
  std::vector<std::string> formats;
  std::vector<std::shared_ptr<const log::Format>> compiled;
  // The set-var / set-var-fmt / unset-var steps' actions (CheckRule::action) and the
  // expressions of connect's `port <expr>` (CheckRule::port_expr), by index.
  std::vector<std::shared_ptr<const rules::VarAction>> actions;
  std::vector<std::shared_ptr<const sample::Expr>> exprs;
  std::string ok_info = "(tcp-check)";
  std::string protocol;
  bool inherited = false;
  SourceLoc loc;
};

// HTTP connection mode (`option http-keep-alive | http-server-close | httpclose`, the last one
// of a section wins).
enum class HttpConnMode { kKeepAlive, kServerClose, kClose };

// `option forwardfor [except <net>] [header <name>] [if-none]`.
struct ForwardForConfig {
  bool enabled = false;
  std::string header = "x-forwarded-for";
  bool has_except = false;
  rules::Network except;
  bool if_none = false;
};

// `option forwarded [proto] [host|host-expr <e>] [by|by-expr <e>] [by_port|by_port-expr <e>]
// [for|for-expr <e>] [for_port|for_port-expr <e>]` (RFC 7239, backends). Each node part is off,
// the connection's own value, or an expression (compiled when the configuration is checked).
struct ForwardedConfig {
  bool enabled = false;
  SourceLoc loc;
  bool proto = false;
  enum class Part : uint8_t { kOff, kAuto, kExpr };
  struct Item {
    Part part = Part::kOff;
    std::string text;                               // kExpr: as written
    std::shared_ptr<const sample::Expr> expr;       // kExpr: compiled
  };
  Item host, by, by_port, for_, for_port;
};

// `option originalto [except <net>] [header <name>]`: the connection's destination address.
struct OriginalToConfig {
  bool enabled = false;
  std::string header = "x-original-to";
  bool has_except = false;
  rules::Network except;
};

// `errorfile <code> <file>`: the whole raw response read at parse time (empty = send nothing
// and close).
// One errorfile, errorloc or http-error line, or (`section` set) an `errorfiles` line naming
// an http-errors section and its codes (all when empty), resolved once the configuration is
// read. Later lines override earlier ones for a status, as in HAProxy.
struct ErrorFileConfig {
  int status = 0;
  std::string response;
  SourceLoc loc;
  std::string section;
  std::vector<int> codes;
  bool builtin = false;   // http-error ... default-errorfiles: back to the built-in page
  // http-error with `lf-string`, `lf-file` or a `hdr` log-format value: rendered per answer.
  std::shared_ptr<const rules::HttpRule> lf;
};

// `use_backend <name> [if|unless <cond>]`.
// One `tcp-request connection|session|content` or `tcp-response content` line.
struct TcpRuleConfig {
  SourceLoc loc;
  rules::TcpRule rule;
  bool inherited = false;   // from the proxy's named defaults section (run before its own)
};

struct UseBackendConfig {
  SourceLoc loc;
  std::string name;
  int backend_index = -1;       // into ConfigModel::proxies, resolved after parsing
  // `use_backend %[...]`: the name is rendered per request (backend_index stays -1).
  std::shared_ptr<const rules::ValueFormat> dynamic;
  rules::Condition cond;
};

// `use-server <name>|<format> if|unless <cond>` (backends), in order.
struct UseServerConfig {
  SourceLoc loc;
  std::string name;
  int server_index = -1;        // into the proxy's servers, resolved after parsing
  std::shared_ptr<const rules::ValueFormat> dynamic;   // a name rendered per request
  rules::Condition cond;
};

enum class HttpReuse { kNever, kSafe, kAggressive, kAlways };

enum class Balance {
  kRoundRobin, kStaticRr, kLeastConn, kFirst, kSource, kUri, kHdr, kRandom,
  kUrlParam, kRdpCookie, kHash,   // a sample expression's value hashed (balance_expr)
};
enum class HashFunction { kSdbm, kDjb2, kWt6, kCrc32, kNone };

// `capture request|response header <name> len <n>`: logged by `option httplog` as `{a|b}`.
struct CaptureConfig {
  std::string name;
  int len = 0;
};

// `stats enable|uri|refresh|realm|auth|scope|hide-version|show-legends|show-node|show-desc`:
// the HTTP statistics page. Any of uri, refresh, realm, auth and scope enables it, as in
// HAProxy.
struct StatsPageConfig {
  bool enabled = false;
  SourceLoc loc;                         // the first `stats` line that enabled it
  std::string uri = "/haproxy?stats";    // URI prefix
  uint32_t refresh_s = 0;                // `refresh: <s>` header; 0 none
  std::string realm;                     // basic-auth realm ("" = HAProxy's default)
  std::vector<std::string> auth;         // "user:password", any of them is accepted
  std::vector<std::string> scope;        // proxy names, "." = the proxy serving the page
  bool hide_version = false;
  bool show_legends = false;
  bool show_node = false;
  std::string node;                      // show-node <name>; "" = the global node name
  bool show_desc = false;
  std::string desc;                      // show-desc <text>; "" = the global description
  // `stats http-request <action> [if|unless <cond>]`: run on the requests the page claims,
  // after the proxy's own http-request rules (HAProxy's order); exclusive with auth / realm.
  std::vector<rules::HttpRule> http_request;
  // `stats admin if|unless <cond>` lines, ORed: the page's admin forms and POST actions.
  std::vector<rules::Condition> admin;
};

struct ProxyConfig {
  enum Cap : unsigned { kFrontend = 1, kBackend = 2 };
  SourceLoc loc;
  std::string name;
  std::string type;             // "frontend", "backend" or "listen" (as the section keyword)
  unsigned caps = 0;
  int id = 0;                   // `id`, or automatic from 2 upward in declaration order
  bool id_custom = false;       // `id <n>` written (show servers state's bk_f_forced_id)
  SourceLoc id_loc;             // where
  Mode mode = Mode::kTcp;
  bool disabled = false;
  std::string description;

  // Frontend side.
  std::vector<BindConfig> binds;
  int maxconn = 0;              // 0 = global maxconn
  int backlog = 0;
  std::string default_backend;  // as written
  int default_backend_index = -1;  // index into ConfigModel::proxies, resolved after parsing

  // Backend side.
  std::vector<ServerConfig> servers;
  Balance balance = Balance::kRoundRobin;
  int balance_draws = 2;        // random(<draws>)
  std::string balance_hdr;      // hdr(<name>)
  bool balance_hdr_domain_only = false;   // hdr(<name>) use_domain_only
  // `balance uri [len <n>] [depth <n>] [whole] [path-only]`: 0 = no limit.
  int balance_uri_len = 0;
  int balance_uri_depth = 0;
  bool balance_uri_whole = false;
  bool balance_uri_path_only = false;
  // url_param <name> / rdp-cookie[(<name>)] / hash <expr>: the expression as HAProxy would
  // write it (`url_param(<name>)`, `rdp_cookie(<name>)`, the text of `hash`), compiled in the
  // check phase once the mode is known (balance_expr).
  std::string balance_expr_text;
  std::shared_ptr<const sample::Expr> balance_expr;
  bool hash_consistent = false; // hash-type map-based (default) | consistent
  HashFunction hash_function = HashFunction::kSdbm;
  bool hash_avalanche = false;
  bool option_allbackups = false;
  int retries = 3;
  // `load-server-state-from-file global|local|none` and `server-state-file-name
  // [use-backend-name|<file>]` (empty: the backend's name): where the servers' saved state is
  // read at start-up (app/server_state.h).
  enum class StateFrom : uint8_t { kNone, kGlobal, kLocal };
  StateFrom state_from = StateFrom::kNone;
  std::string state_file_name;
  // `option redispatch [<n>]`: 0 disabled (the default without the option), -1 on the last
  // retry (the option's default), +P on every Pth retry, -N on the Nth retry before the last.
  int redispatch = 0;

  Timeouts timeouts;

  // TCP socket options. `option clitcpka` applies where the proxy has the frontend capability
  // (accepted connections), `option srvtcpka` where it has the backend one (server
  // connections); `option tcpka` sets both, as in HAProxy. Tunings in seconds, 0 = the
  // system's value.
  bool option_clitcpka = false;
  bool option_srvtcpka = false;
  int clitcpka_cnt = 0, clitcpka_idle = 0, clitcpka_intvl = 0;
  int srvtcpka_cnt = 0, srvtcpka_idle = 0, srvtcpka_intvl = 0;
  SourceLoc clitcpka_tuned_at, srvtcpka_tuned_at;   // a tuning written in this section (not defaults)
  // `option nolinger`: connections on this proxy's side(s) end with a reset, not a FIN.
  bool option_nolinger = false;
  // `option tcp-smart-connect`: the handshake's last ACK rides on the first request bytes. On
  // by default in sluice (HAProxy: off); `no option tcp-smart-connect` turns it off.
  bool option_tcp_smart_connect = true;
  // `option tcp-smart-accept` (frontends): 1, `no option tcp-smart-accept`: -1, 0 = not written
  // (HAProxy's default: on in HTTP mode). On: TCP_QUICKACK off on the listening sockets.
  int option_tcp_smart_accept = 0;
  // `option http-no-delay`: sluice sends without delay already (see its help text).
  bool option_http_no_delay = false;
  bool option_pretend_keepalive = false;       // option http-pretend-keepalive
  bool option_drop_request_trailers = false;   // option http-drop-request-trailers
  bool option_drop_response_trailers = false;  // option http-drop-response-trailers
  bool option_checkcache = false;               // option checkcache (backends)
  bool option_prefer_last_server = false;       // option prefer-last-server (backends)
  bool option_idle_close_on_response = false;   // option idle-close-on-response (frontends)
  bool option_independent_streams = false;      // option independent-streams
  bool option_accept_unsafe_responses = false;  // option accept-unsafe-violations-in-http-response
  bool option_disable_h2_upgrade = false;       // option disable-h2-upgrade (frontends)
  bool option_h1_case_adjust_client = false;   // option h1-case-adjust-bogus-client
  bool option_h1_case_adjust_server = false;   // option h1-case-adjust-bogus-server
  // `option socket-stats` (frontends): show stat has one row per listener.
  bool option_socket_stats = false;
  // `option dontlog-normal` (frontends): lines log::is_error() calls normal are not sent.
  bool option_dontlog_normal = false;
  // `log-steps` (frontends): bit i for HAProxy's step i in the order its message lists them
  // (accept, request, connect, response, close, http-req, ...); 0 = not set (close).
  unsigned log_steps = 0;

  // Health checks: `option tcp-check` (connect only, the default) or `option httpchk`.
  // kExternal: `option external-check` (the last of tcp-check / httpchk / external-check
  // in a section wins).
  enum class CheckType { kTcp, kHttp, kExternal };
  std::string external_check_command;   // `external-check command <cmd>`
  std::string external_check_path;      // `external-check path <PATH>`: the command's PATH
  SourceLoc external_check_loc;
  CheckType check_type = CheckType::kTcp;
  HttpCheckConfig http_check;
  TcpCheckConfig tcp_check;
  TcpCheckConfig http_check_rules;   // `http-check` rules (comment, connect, send, expect)
  bool option_tcp_check = false;          // `option tcp-check` (or a protocol check option)
  bool option_log_health_checks = false;  // `option log-health-checks`
  // `default-server` options, applied to every later `server` line of the section.
  ServerConfig default_server;

  // Logging: `log global` copies the global targets; `log <target> ...` adds its own.
  std::vector<LogTarget> logs;
  bool option_tcplog = false;
  bool option_dontlognull = false;
  // What the log line says: `option tcplog [clf]`, `option httplog [clf]`, `option httpslog` or
  // `log-format`
  // (the last one written wins; option_tcplog / option_httplog follow it). Compiled with
  // HAProxy's checks once the sections are read (validate.cc) into log_fmt.
  enum class LogFormatKind { kNone, kTcpLog, kClfTcpLog, kHttpLog, kClfHttpLog, kHttpsLog, kCustom };
  LogFormatKind log_format_kind = LogFormatKind::kNone;
  std::string log_format;                // kCustom: the format string
  SourceLoc log_format_loc;
  std::shared_ptr<const log::Format> log_fmt;
  // `unique-id-format` / `unique-id-header`: the request's id (%ID, unique-id), generated when
  // the request arrives and sent to the server in that header.
  std::string unique_id_format;
  SourceLoc unique_id_loc;
  std::shared_ptr<const log::Format> unique_id_fmt;
  std::string unique_id_header;
  std::string log_tag;                   // `log-tag`: empty = the global one
  // `log-format-sd`: the structured data of rfc5424 lines; `error-log-format`: the format of
  // the errors logged without a stream (HTTP requests that never parsed). Frontends only.
  std::string log_format_sd, error_log_format;
  SourceLoc log_format_sd_loc, error_log_format_loc;
  std::shared_ptr<const log::Format> log_fmt_sd, error_log_fmt;
  bool option_log_separate_errors = false;   // errors logged at `err` instead of `info`
  bool option_logasap = false;               // log when the response head (TCP: the connection) is there

  // HTTP mode.
  HttpConnMode http_conn_mode = HttpConnMode::kKeepAlive;
  bool http_conn_mode_set = false;   // written in this proxy (or inherited from defaults)
  ForwardForConfig forwardfor;
  ForwardedConfig forwarded;
  OriginalToConfig originalto;
  bool option_httplog = false;
  SourceLoc httplog_loc;                 // where `option httplog` was written (TCP-mode warning)
  bool accept_unsafe_requests = false;   // option accept-unsafe-violations-in-http-request
  HttpReuse http_reuse = HttpReuse::kSafe;
  rules::AclRegistry acls;
  std::vector<rules::HttpRule> http_request_rules;
  std::vector<rules::HttpRule> http_response_rules;
  std::vector<rules::HttpRule> http_after_response_rules;
  std::vector<rules::HttpRule> redirect_rules;   // the `redirect` keyword, in order
  std::vector<UseBackendConfig> use_backends;   // frontend, in order; first match wins
  std::vector<UseServerConfig> use_servers;     // backend, in order; first usable match wins
  // `tcp-request connection|session` (frontends), `tcp-request content` (frontends: before
  // the backend is chosen; backends: once the session reaches them), `tcp-response content`
  // (backends), and each side's inspect-delay. A proxy using a named defaults section with
  // rules starts with that section's rules (inherited), which run before its own, as in
  // HAProxy.
  std::vector<TcpRuleConfig> tcp_request_connection;
  std::vector<TcpRuleConfig> tcp_request_session;
  std::vector<TcpRuleConfig> tcp_request_content;
  std::vector<TcpRuleConfig> tcp_response_content;
  uint32_t tcp_inspect_delay_ms = 0;
  uint32_t tcp_response_inspect_delay_ms = 0;
  // Whether this section has TCP rules of its own or inherited ones (defaults: a proxy using
  // it inherits them).
  bool has_tcp_rules() const {
    return !tcp_request_connection.empty() || !tcp_request_session.empty() ||
           !tcp_request_content.empty() || !tcp_response_content.empty();
  }
  std::vector<ErrorFileConfig> errorfiles;      // later entries for a status override earlier
  StatsPageConfig stats;
  // `monitor-uri <uri>`: requests for exactly this URI are answered 200 (503 when a `monitor
  // fail` condition holds) by the frontend itself, and not logged.
  std::string monitor_uri;
  SourceLoc monitor_uri_loc;
  std::vector<rules::Condition> monitor_fail;   // `monitor fail if|unless <cond>`, ORed
  SourceLoc monitor_fail_loc;                   // the first `monitor fail` line
  std::vector<CaptureConfig> capture_request;   // in declaration order
  std::vector<CaptureConfig> capture_response;
  SourceLoc capture_loc;                        // the first `capture` line
  // `capture cookie <name> len <n>` (frontends): %CC and %CS; "" none.
  std::string capture_cookie;
  int capture_cookie_len = 0;
  SourceLoc capture_cookie_loc;
  // Cookie persistence (backends): `cookie`, `dynamic-cookie-key`, `option persist`,
  // `force-persist` / `ignore-persist`.
  CookieConfig cookie;
  std::string dynamic_cookie_key;
  bool option_persist = false;
  bool option_http_buffer_request = false;   // read the request body before the rules
  bool option_http_ignore_probes = false;    // silent close of connections that sent nothing
  bool option_abortonclose = false;          // drop queued/connecting requests of closed clients
  // `option http-restrict-req-hdr-names`: kUnset (not written), or what to do with request
  // fields whose names are not letters, digits and '-'.
  enum class HdrNames : uint8_t { kPreserve, kDelete, kReject, kUnset };
  HdrNames restrict_req_hdr_names = HdrNames::kUnset;
  std::vector<PersistRuleConfig> persist_rules;
};

enum class CliLevel { kUser, kOperator, kAdmin };

struct StatsSocketConfig {
  SourceLoc loc;
  net::ListenAddress addr;      // exactly one address (no list, no range)
  std::string text;
  CliLevel level = CliLevel::kOperator;
  int unix_mode = -1;           // `mode 600`; -1 = umask
  // `expose-fd listeners`: a new process started with `-x <this socket>` may take the
  // listening sockets over it (net/fd_passing.h).
  bool expose_listeners = false;
};

// `cpu-map [auto:]<groups>[/<threads>] <cpuset>...`
struct CpuMapConfig {
  SourceLoc loc;
  bool automatic = false;
  std::vector<int> groups;        // selected 1-based group ids
  std::vector<int> threads;       // selected 1-based local thread ids; empty = all
  bool group_range = false;       // written as a range/set of several groups
  bool thread_range = false;
  std::vector<int> cpus;
};

// `thread-group <g> <range>...`
struct ThreadGroupConfig {
  SourceLoc loc;
  int group = 0;
  std::vector<int> threads;       // global thread ids
};

struct GlobalConfig {
  int nbthread = 0;             // 0 = not set: one thread per usable CPU
  int thread_groups = 0;        // 0 = not set
  int max_threads_per_group = 0;   // 0 = not set
  int thread_hard_limit = 0;       // 0 = not set
  std::vector<ThreadGroupConfig> thread_group_lines;
  std::vector<CpuMapConfig> cpu_maps;
  enum class CpuPolicy { kDefault, kNone, kGroupByCcx, kPerformance };
  CpuPolicy cpu_policy = CpuPolicy::kDefault;
  ShardsConfig default_shards;             // tune.listener.default-shards (at end of parsing)
  enum class MultiQueue { kOn, kFair, kOff };
  MultiQueue multi_queue = MultiQueue::kOn;   // tune.listener.multi-queue
  enum class Steering { kHash, kCpu };
  Steering reuseport_steering = Steering::kHash;   // tune.listener.reuseport-steering
  bool noreuseport = false;
  int maxconn = 0;              // 0 = not set: derived from RLIMIT_NOFILE at start-up
  std::vector<StatsSocketConfig> stats_sockets;
  uint32_t stats_timeout_ms = 10000;
  int stats_maxconn = 10;
  std::vector<LogTarget> logs;
  std::string log_tag = "sluice";
  bool daemon = false;
  // `master-worker [no-exit-on-failure]` (as -W) and `mworker-max-reloads`: app/master.h.
  bool master_worker = false;
  // `h1-case-adjust <from> <to>` (lower-case name, spelling) and `h1-case-adjust-file`, read
  // once the configuration is parsed.
  std::vector<std::pair<std::string, std::string>> h1_case_adjust;
  std::string h1_case_adjust_file;
  bool mworker_exit_on_failure = true;
  int mworker_max_reloads = -1;      // -1 = no limit
  // `expose-experimental-directives`: HAProxy's experimental keywords (normalize-uri) allowed.
  bool expose_experimental = false;
  std::string pidfile;
  // `chroot`, `user`/`uid`, `group`/`gid`: applied once every socket is bound, before the
  // workers start. -1 = keep the current id.
  std::string chroot;
  int uid = -1;
  int gid = -1;
  uint32_t hard_stop_after_ms = 0;   // 0 = wait forever on soft stop
  uint32_t grace_ms = 0;             // `grace`: SIGUSR1 to the real soft stop, 0 = none
  int tune_bufsize = 16384;
  int tune_maxaccept = 4;            // -1 = unlimited
  int max_conn_rate = 0;             // `maxconnrate`, 0 = none
  int max_sess_rate = 0;             // `maxsessrate`, 0 = none
  int max_ssl_conn = 0;              // `maxsslconn`, 0 = none
  int max_ssl_rate = 0;              // `maxsslrate`, 0 = none
  int tune_ssl_maxrecord = 0;        // `tune.ssl.maxrecord`: bytes per TLS write, 0 = no limit
  std::string node;                  // `node`, default hostname (set by app)
  int spread_checks = 0;             // `spread-checks`: % of random variation of check intervals
  // `external-check [preserve-env]`: external checks may run (preserve-env: they inherit the
  // process's environment); `insecure-fork-wanted`: HAProxy's consent to fork.
  bool external_check = false;
  bool external_check_preserve_env = false;
  bool insecure_fork_wanted = false;
  // TLS (config/bind_ssl.cc): crt-base / ca-base, and what ssl-default-bind-* and the
  // tune.ssl.* keywords give every `bind ... ssl` line before its own options.
  std::string crt_base, ca_base;
  net::tls::BindOptions ssl_bind_defaults;
  int ssl_bind_disabled_versions = 0;
  bool ssl_bind_min_set = false, ssl_bind_max_set = false;
  // What ssl-default-server-* give every `server ... ssl` (config/server_ssl.cc), and
  // `ssl-server-verify` (whether a server line without `verify` verifies).
  net::tls::ClientOptions ssl_server_defaults;
  int ssl_server_disabled_versions = 0;
  bool ssl_server_min_set = false, ssl_server_max_set = false;
  bool ssl_server_verify = true;
  bool h1_accept_payload_with_any_method = false;   // h1-accept-payload-with-any-method
  // h1-do-not-close-on-insecure-transfer-encoding
  bool h1_keep_insecure_transfer_encoding = false;
  // `insecure-setuid-wanted`: without it the serving process sets PR_SET_NO_NEW_PRIVS, so that
  // what it executes (external checks) cannot gain privileges (setuid, file capabilities).
  bool insecure_setuid_wanted = false;
  // tune.rcvbuf.client / tune.sndbuf.client / tune.rcvbuf.server / tune.sndbuf.server
  // (SO_RCVBUF / SO_SNDBUF), 0 = the system's.
  int tune_rcvbuf_client = 0, tune_sndbuf_client = 0;
  int tune_rcvbuf_server = 0, tune_sndbuf_server = 0;
  uint32_t max_spread_checks_ms = 0; // `max-spread-checks`: bound of the first checks' spread (0: none)
  // `server-state-file <path>` (the backends' `load-server-state-from-file global`) and
  // `server-state-base <dir>` (where relative state file paths start).
  std::string server_state_file;
  std::string server_state_base;
  std::string description;
  bool zero_warning = false;
  // tune.vars.{global,proc,sess,txn,reqres,check}-max-size (0 = unlimited), applied when the
  // workers start. The global `set-var` lines are run while parsing, as HAProxy does.
  sample::VarLimits vars_limits;
  uint32_t h1_fe_glitches_threshold = 0;   // tune.h1.fe.glitches-threshold, 0: none
  uint32_t h1_be_glitches_threshold = 0;   // tune.h1.be.glitches-threshold, 0: none
  int tune_maxrewrite = -1;          // -1: not set (1024, at most half of tune.bufsize)
  int tune_http_maxhdr = 101;        // header fields of a message, start line included
  int tune_http_cookielen = 63;      // the longest `capture cookie` length
  int tune_http_logurilen = 1024;    // the request line in logs: at most this minus 1 bytes
  // `-L <name>`, else `localpeer <name>`, else the host name: HAProxy's local peer name, also
  // in $HAPROXY_LOCALPEER while the configuration is read. Set by the loader.
  std::string localpeer;
};

struct ConfigModel {
  GlobalConfig global;
  std::vector<ProxyConfig> proxies;   // declaration order; defaults sections are not here
  std::vector<std::string> files;     // files read, in order
};

}  // namespace sluice::config

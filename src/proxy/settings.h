#pragma once
// Runtime settings of proxies, built by app from the parsed configuration. proxy/ never sees
// the configuration model itself (config produces data, app turns it into objects).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "log/format.h"
#include "lb/algorithm.h"
#include "lb/server.h"
#include "net/address.h"
#include "net/socket.h"
#include "proxy/cookie.h"
#include "proxy/cookie_table.h"
#include "rules/rules.h"
#include "stats/http_service.h"

namespace sluice::net::tls {
class ServerContext;
class ContextSlot;
}  // namespace sluice::net::tls

namespace sluice::proxy {

// Milliseconds, 0 = none.
struct Timeouts {
  uint32_t connect = 0;
  uint32_t client = 0;
  uint32_t server = 0;
  uint32_t tunnel = 0;
  uint32_t client_fin = 0;
  uint32_t server_fin = 0;
  uint32_t queue = 0;     // resolved: `timeout queue`, else `timeout connect`
  uint32_t http_request = 0;
  uint32_t http_keep_alive = 0;
  uint32_t tarpit = 0;
};

// HTTP-mode settings of a proxy: connection management, header manipulations, error pages.
struct HttpSettings {
  enum class ConnMode { kKeepAlive, kServerClose, kClose };
  ConnMode conn_mode = ConnMode::kKeepAlive;
  enum class Reuse { kNever, kSafe, kAggressive, kAlways };
  Reuse reuse = Reuse::kSafe;                 // backends
  // option h1-case-adjust-bogus-client / -server: heads sent to clients / servers spell
  // field names as http::case_adjust_map() says.
  bool case_adjust_client = false;
  bool case_adjust_server = false;
  bool pretend_keepalive = false;        // option http-pretend-keepalive
  bool drop_request_trailers = false;    // option http-drop-request-trailers (backends)
  bool drop_response_trailers = false;   // option http-drop-response-trailers (frontends)
  // option checkcache (backends): a cacheable response with a Set-Cookie field is blocked.
  bool checkcache = false;
  // option idle-close-on-response (frontends): at a soft stop, idle keep-alive connections
  // wait for their next request (answered with `connection: close`) instead of closing.
  bool idle_close_on_response = false;
  // option accept-unsafe-violations-in-http-response (backends): responses whose field names
  // hold non-tchar bytes lose those fields instead of being refused, and NUL passes in values.
  bool accept_unsafe_responses = false;
  // option disable-h2-upgrade (frontends): the HTTP/2 preface as a first request is a 405.
  bool disable_h2_upgrade = false;
  struct ForwardFor {
    bool enabled = false;
    std::string header = "x-forwarded-for";
    bool has_except = false;
    rules::Network except;
    bool if_none = false;
  };
  ForwardFor forwardfor;
  // `option forwarded` (backends): each part off, the connection's own value, or an expression.
  struct Forwarded {
    bool enabled = false;
    bool proto = false;
    enum class Part : uint8_t { kOff, kAuto, kExpr };
    struct Item {
      Part part = Part::kOff;
      std::shared_ptr<const sample::Expr> expr;
    };
    Item host, by, by_port, for_, for_port;
  };
  Forwarded forwarded;
  // `option originalto`.
  struct OriginalTo {
    bool enabled = false;
    std::string header = "x-original-to";
    bool has_except = false;
    rules::Network except;
  };
  OriginalTo originalto;
  bool httplog = false;
  bool accept_unsafe_requests = false;        // option accept-unsafe-violations-in-http-request
  uint32_t glitches_threshold = 0;            // tune.h1.fe.glitches-threshold, 0: none
  bool buffer_request = false;                // option http-buffer-request
  bool ignore_probes = false;                 // option http-ignore-probes
  bool abortonclose = false;                  // option abortonclose (backends)
  // option http-restrict-req-hdr-names; kUnset: the other proxy's setting, else kPreserve.
  enum class HdrNames : uint8_t { kPreserve, kDelete, kReject, kUnset };
  HdrNames restrict_hdr_names = HdrNames::kUnset;
  std::vector<rules::HttpRule> request_rules;
  std::vector<rules::HttpRule> response_rules;
  std::vector<rules::HttpRule> after_response_rules;   // http-after-response
  // `redirect` rules: after the request rules and the stats page, before use_backend.
  std::vector<rules::HttpRule> redirect_rules;
  // status -> the complete response to send instead of the built-in page (already normalised
  // by the H1 encoder); an empty string means: send nothing and close. `lf`: an http-error
  // rule whose payload or fields are log-format strings, rendered for each answer instead.
  struct ErrorPage {
    int status = 0;
    std::string bytes;
    std::shared_ptr<const rules::HttpRule> lf;
  };
  std::vector<ErrorPage> errorfiles;
  bool dynamic_errors = false;   // some page has `lf`: the request is kept for it
  // `stats uri` and friends: the statistics page, served by stats::HttpService.
  stats::PageSettings stats;
  // `stats http-request` rules, run on the requests the page claims after the proxy's own
  // http-request rules, and the `stats admin` conditions (ORed) that open its admin actions.
  std::vector<rules::HttpRule> stats_rules;
  std::vector<rules::Condition> stats_admin;
  // `capture request|response header` (frontends): field name and length, in order.
  std::vector<std::pair<std::string, int>> capture_request, capture_response;
  // `capture cookie <name> len <n>` (frontends): "" none.
  std::string capture_cookie;
  int capture_cookie_len = 0;
  // `monitor-uri` (frontends): "" none; `monitor fail` conditions, ORed.
  std::string monitor_uri;
  std::vector<rules::Condition> monitor_fail;
  const ErrorPage* errorfile(int status) const {
    for (auto it = errorfiles.rbegin(); it != errorfiles.rend(); ++it)
      if (it->status == status) return &*it;
    return nullptr;
  }
};

// The syslog header of each `log ... format`: see format_log_line() in proxy/log.h.
// kDefault: no `format` word, HAProxy's rfc3164 header with a host only when
// log-send-hostname names one (an explicit rfc3164 always names one).
enum class LogFormat { kDefault, kRfc3164, kRfc5424, kShort, kRaw, kLocal, kPriority, kTimed, kIso };

struct LogTarget {
  enum class Kind { kStdout, kStderr, kUdp, kUnixDgram };
  Kind kind = Kind::kStdout;
  net::SocketAddress addr;
  int max_len = 1024;
  LogFormat format = LogFormat::kDefault;
  int facility = 16;
  int max_level = 7;
  int min_level = 0;
};

struct BindSettings {
  std::string text;                       // as written on the bind line
  std::string file;                       // bind line location, for messages
  int line = 0;
  std::vector<net::ListenAddress> addrs;
  std::string name;
  int maxconn = 0;                        // whole bind line, 0 = none
  int backlog = 0;                        // already resolved (never 0 here); per socket
  int unix_mode = -1;
  int id = 0;                             // `id` of the first listener, 0 = automatic
  // `accept-proxy`: each connection starts with a PROXY protocol header (v1 or v2), whose
  // addresses become the connection's (proxy/proxy_header.h).
  bool accept_proxy = false;
  // `ssl crt ...`: each connection starts with a TLS handshake (proxy/tls_handshake.h) with
  // the contexts of this slot (swapped by `commit ssl cert`); null for a plain listener.
  std::shared_ptr<net::tls::ContextSlot> tls;
  bool tfo = false;                       // `tfo`: TCP Fast Open on the sockets
  // Shard plan, per address (same order as addrs): each shard is one kernel socket and lists
  // the global thread ids (1-based) that watch it. Empty = one shard served by every thread.
  std::vector<std::vector<std::vector<int>>> shards;
  std::vector<bool> fell_back;            // per address: wanted shards, got one socket
  // Per address: CPU -> shard index for `tune.listener.reuseport-steering cpu`; empty = the
  // kernel's 4-tuple hash.
  std::vector<std::vector<int>> steering;
};

// `log-steps` (HAProxy 3.1+): the steps of a stream that send a log line, as bits (the
// values of the config model's bits for these five names).
enum LogStep : uint8_t {
  kLogAccept = 1,     // the stream begins (HTTP: a request's first byte)
  kLogRequest = 2,    // HTTP: the request head is parsed, before the rules
  kLogConnect = 4,    // the server connection is established
  kLogResponse = 8,   // HTTP: the response head is received, after the response rules
  kLogClose = 16,     // the end: the usual line
};

struct ProxySettings {
  std::string name;
  int id = 0;
  bool id_forced = false;                 // `id` written in the configuration
  bool frontend = false;
  bool backend = false;
  std::string type;                       // "frontend", "backend", "listen"
  // `disabled`: listens on nothing, its servers are in maintenance, stats and the CLI skip it.
  bool disabled = false;
  // Frontend side.
  std::vector<BindSettings> binds;
  int maxconn = 0;                        // resolved: the global value when not set
  int default_backend = -1;               // index of the proxy serving this frontend, -1 none
  // Backend side.
  std::vector<lb::ServerSettings> servers;
  // `set-proxy-v2-tlv-fmt(<type>) <fmt>` of each server, by its index in `servers` (in the
  // order written); empty when no server of the backend has one. The values are rendered
  // when a connection opens (proxy_header.h).
  struct Pp2TlvFormat {
    uint8_t type = 0;
    std::shared_ptr<const log::Format> fmt;
  };
  std::vector<std::vector<Pp2TlvFormat>> pp2_tlv_formats;
  // The formats of server `index` (null: none).
  const std::vector<Pp2TlvFormat>* pp2_tlvs_of(std::size_t index) const {
    if (index >= pp2_tlv_formats.size() || pp2_tlv_formats[index].empty()) return nullptr;
    return &pp2_tlv_formats[index];
  }
  // The SNI of each server with `ssl`, by its index in `servers`: its `sni <expr>`, or in
  // HTTP mode the Host header (HAProxy 3.5's sni-auto: `from_host`, the port left out and no
  // name for an IP address); empty when no server of the backend sends one. Evaluated when a
  // connection opens; an idle connection is reused only for the same name.
  struct ServerSni {
    std::shared_ptr<const sample::Expr> expr;
    bool from_host = false;
  };
  std::vector<ServerSni> server_sni;
  // Some server's SNI is an expression (which reads the request as it left: kept for it), or
  // the Host (only that value is kept).
  bool sni_reads_request = false;
  bool sni_from_host = false;
  const ServerSni* sni_of(std::size_t index) const {
    return index < server_sni.size() && server_sni[index].expr ? &server_sni[index] : nullptr;
  }
  lb::BalanceSettings balance;
  // url_param, rdp-cookie and hash: the expression whose value is hashed (null otherwise).
  std::shared_ptr<const sample::Expr> balance_expr;
  // `use-server`, in order: the first matching rule whose server is not stopped takes the
  // request before load balancing.
  struct UseServer {
    rules::Condition cond;
    int server = -1;                        // index in servers, or -1 with `dynamic`
    std::shared_ptr<const rules::ValueFormat> dynamic;
  };
  std::vector<UseServer> use_servers;
  // Cookie persistence (proxy/cookie.h): null without `cookie`. `option persist`, and the
  // force-persist / ignore-persist rules in order (the first match decides).
  std::shared_ptr<const CookieSettings> cookie;
  // Backends: each server's persistence cookie as the CLI changes it (`show stat` reads it,
  // `cookie` shares it). Set for every backend, with or without `cookie`, as HAProxy's
  // dynamic cookie commands take any backend.
  std::shared_ptr<CookieTable> cookie_table;
  bool persist = false;
  struct PersistRule {
    rules::Condition cond;
    bool force = false;
  };
  std::vector<PersistRule> persist_rules;
  // cookie or persist rules: the request runs the persistence step (one test otherwise).
  bool cookie_step = false;
  int retries = 3;
  int redispatch = 0;
  Timeouts timeouts;
  std::vector<LogTarget> logs;
  bool tcplog = false;
  bool dontlognull = false;
  // The compiled log format of the traffic lines (option tcplog/httplog [clf] or log-format);
  // null: no traffic line, only "Connect from" when there are log targets.
  std::shared_ptr<const log::Format> log_format;
  // unique-id-format (null: none) and unique-id-header ("" : not sent).
  std::shared_ptr<const log::Format> unique_id_format;
  std::string unique_id_header;
  std::string log_tag;                    // `log-tag` of the proxy; "" = the process's
  // `log-format-sd` (null: none): rfc5424's structured data, sent with `format rfc5424` only.
  std::shared_ptr<const log::Format> log_format_sd;
  // `error-log-format` (null: the log format): the lines of errors without a stream.
  std::shared_ptr<const log::Format> error_log_format;
  bool log_separate_errors = false;       // option log-separate-errors: errors at `err`
  bool logasap = false;                   // option logasap
  // `log-steps`: the LogStep bits before the end that send a line (0: none, and always 0 with
  // option logasap, whose line replaces them, as in HAProxy 3.5), and whether the end does.
  uint8_t log_steps = 0;
  bool log_close = true;
  bool log_backend_src = false;           // the format logs %bi/%bp: keep the connection's source
  // TCP socket options: the frontend's apply to accepted connections, the backend's to server
  // connections.
  net::TcpKeepalive cli_keepalive;        // option clitcpka / tcpka, clitcpka-*
  net::TcpKeepalive srv_keepalive;        // option srvtcpka / tcpka, srvtcpka-*
  bool nolinger = false;                  // option nolinger: close with a reset
  // option prefer-last-server (backends): a keep-alive client's next request goes to the
  // server its previous one went to while a connection to it is still held.
  bool prefer_last_server = false;
  // option independent-streams: in TCP mode, this proxy's side (the client's in a frontend,
  // the server's in a backend) times out on its own reads only: sending to it does not
  // postpone its timeout.
  bool independent_streams = false;
  bool smart_connect = true;              // option tcp-smart-connect
  int srv_rcvbuf = 0, srv_sndbuf = 0;     // tune.rcvbuf.server / tune.sndbuf.server, 0 = system
  bool smart_accept = false;              // option tcp-smart-accept: TCP_QUICKACK off on listeners
  bool socket_stats = false;              // option socket-stats: listener rows in show stat
  bool dontlog_normal = false;            // option dontlog-normal: only log::is_error() lines
  bool http = false;                      // mode http
  HttpSettings h;
  // `tcp-request connection|content` (frontend side; layer-4 conditions only). Connection
  // rules run in the accept path before a session exists, content rules when the session
  // starts (TCP) or when a request head is complete (HTTP), as in HAProxy.
  // Session rules run when the session starts, before content rules (TCP mode). A backend's
  // content rules run when a session reaches it (after use_backend), its response rules on
  // the server's first bytes, waiting up to its `tcp-response inspect-delay`.
  std::vector<rules::TcpRule> tcp_connection_rules;
  std::vector<rules::TcpRule> tcp_session_rules;
  std::vector<rules::TcpRule> tcp_content_rules;
  std::vector<rules::TcpRule> tcp_response_rules;
  uint32_t tcp_response_inspect_delay_ms = 0;
  // A rule of this proxy keeps variables or rewrites the local address: its sessions get a
  // store for them (TcpSession::RuleData). Without it a session allocates nothing for rules.
  bool tcp_rule_data = false;
  // The configuration names a sess.* variable: each connection gets a store for them.
  bool sess_vars = false;
  // HTTP mode: a content rule sets the stream's addresses (set-src, set-dst and their ports).
  bool tcp_content_rewrites = false;
  // `use_backend` (frontends, both modes), in order: the first match chooses the backend.
  struct UseBackend {
    rules::Condition cond;
    int backend = -1;                       // proxy index, or -1 with `dynamic`
    // `use_backend %[...]`: the backend of the rendered name; none (or one of another mode)
    // ends the rules with the default backend, as HAProxy does.
    std::shared_ptr<const rules::ValueFormat> dynamic;
  };
  std::vector<UseBackend> use_backends;
  bool tcp_rules_need_dst = false;        // a rule reads `dst`: ask the kernel on wildcard binds
  // TCP mode: a content rule reads the client's bytes (req.len, req.ssl_sni, ...). The session
  // then reads first and judges on what arrived, waiting up to `tcp-request inspect-delay`
  // (0: no wait) while a rule has no answer yet. Without it the fast path runs unchanged.
  bool tcp_inspect = false;
  uint32_t tcp_inspect_delay_ms = 0;
};

enum class MultiQueue { kOn, kFair, kOff };

struct ProcessSettings {
  int nbthread = 1;
  bool h1_any_method_payload = false;       // h1-accept-payload-with-any-method
  bool h1_keep_insecure_te = false;         // h1-do-not-close-on-insecure-transfer-encoding
  uint32_t h1_be_glitches_threshold = 0;    // tune.h1.be.glitches-threshold, 0: none
  int cli_rcvbuf = 0, cli_sndbuf = 0;   // tune.rcvbuf.client / tune.sndbuf.client, 0 = system
  int nbtgroups = 1;
  // Per thread (index = global id - 1): its group (1-based) and the CPUs it is pinned to
  // (empty = not pinned). Empty vectors = one group, no pinning.
  std::vector<int> thread_group;
  std::vector<std::vector<int>> thread_cpus;
  MultiQueue multi_queue = MultiQueue::kOn;   // tune.listener.multi-queue
  bool steer_by_cpu = false;                  // tune.listener.reuseport-steering cpu
  int maxconn = 0;                        // resolved global maxconn
  int hard_maxconn = 0;
  int maxaccept = 4;                      // -1 unlimited
  int max_conn_rate = 0;                  // accepts per second (maxconnrate/maxsessrate), 0 none
  int max_ssl_conn = 0;                   // TLS connections open, both sides (maxsslconn), 0 none
  int max_ssl_rate = 0;                   // TLS handshakes accepted per second (maxsslrate), 0 none
  uint32_t bufsize = 16384;
  uint32_t hard_stop_after_ms = 0;
  uint32_t grace_ms = 0;                  // `grace`: SIGUSR1 to the real soft stop
  std::string log_tag = "sluice";
  std::string node;
  std::string description;
  bool debug = false;                     // -d: trace connections on stderr
  bool reuseport = true;                  // -dR turns SO_REUSEPORT off
  std::vector<LogTarget> global_logs;     // for process events (start, stop)
  int maxrewrite = 1024;                  // tune.maxrewrite, resolved (at most bufsize / 2)
  int http_maxhdr = 101;                  // tune.http.maxhdr: fields + start line
  int http_logurilen = 1024;              // tune.http.logurilen: logged request line < this
};

}  // namespace sluice::proxy

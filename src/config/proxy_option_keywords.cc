// `option <name>` (the supported options and their table, the HAProxy ones sluice refuses)
// and the clitcpka-* / srvtcpka-* tunables of the TCP keep-alive options.
#include "config/proxy_keywords.h"

#include <algorithm>
#include <climits>

#include <fmt/format.h>

#include "rules/rules.h"

namespace sluice::config::proxy_kw {

namespace {

struct OptionDef {
  std::string_view name;
  unsigned cap;         // capability the option belongs to
  bool negatable;
  bool special;         // special-cased in HAProxy: a capability mismatch only warns
  std::string_view help;
};

constexpr OptionDef kOptions[] = {
    {"redispatch", kBe, true, true, "[<n>]: redispatch on the last retry (-1), every Pth retry (+P) or the Nth before the last (-N); 0 disables. As in HAProxy, a failed server is also left at once (no retry of it, no turn-around) when it is not running (DOWN, maintenance, slow start) or when the algorithm does not hash (roundrobin, static-rr, leastconn, first, random) and more than one active server is usable. A redispatch counts in `wredis` (backend and the server left), a retry of the same server in `wretr`, never both"},
    {"tcplog", kFe, false, true, "[clf]: HAProxy's TCP log format (or its CLF variant) for this frontend"},
    {"dontlognull", kFe, true, false, "do not log connections that carried no data"},
    {"log-separate-errors", kFe, true, false, "lines HAProxy counts as errors (a termination state other than `--` or `L`, a redispatch, retries, a status of 500 or more, an HTTP request that never parsed) are logged at level `err` instead of `info`"},
    {"logasap", kFe, true, false, "log HTTP transactions when the response head is forwarded and TCP sessions when the server connection is established, instead of at the end; %B, %Ta, %Tt and %Tu are then written `+`-prefixed, as HAProxy does"},
    {"persist", kBe, true, false, "a request whose persistence cookie names a server that is down (failed checks or maintenance) still goes to that server (logged `D` in the cookie flags); with `option redispatch` a failed connection then moves it to another server"},
    {"allbackups", kBe, true, false, "all usable backup servers share the load when no active server is up (default: the first backup only)"},
    {"tcp-check", kBe, false, true, "health checks run the `tcp-check` rules (without any: a connect, the default check); the last of tcp-check / httpchk in a section wins"},
    {"redis-check", kBe, false, true, "health checks send a Redis PING and want `+PONG` (`Redis server is ok`; else the server's line, L7STS)"},
    {"smtpchk", kBe, false, true, "[HELO|EHLO <domain>]: health checks read the SMTP banner, send `HELO localhost` (or the command given) and `QUIT`, and want 2xx answers; the code and text of the last answer are the check's (`code: 221, info: \"bye\"`)"},
    {"pgsql-check", kBe, false, true, "user <name>: health checks send a PostgreSQL startup message for that user and want AuthenticationOk (`PostgreSQL server is ok`); an error answer's severity is the failure's text"},
    {"mysql-check", kBe, false, true, "[user <name> [post-41|pre-41]]: health checks read the MySQL greeting (its version is the check's text; an error packet is L7STS with its code and message); with a user, a login without password and COM_QUIT follow, and the login must succeed: protocol 4.1's (post-41, the default) or the older one (pre-41), with HAProxy 3.5's bytes"},
    {"ldap-check", kBe, false, true, "health checks send an anonymous LDAPv3 bind and want a bind response with result 0 (`Success`; another result is L7STS with its code; not LDAP: `Not LDAPv3 protocol`)"},
    {"ssl-hello-chk", kBe, false, true, "health checks send an SSLv3 ClientHello and want a handshake or alert record back (L6OK / L6RSP / L6TOUT), as HAProxy 3.5 does; no TLS library is involved"},
    {"external-check", kBe, false, true, "health checks run `external-check command` (which needs `external-check` in global, as in HAProxy; without `insecure-fork-wanted` HAProxy's warning), without ever blocking a worker: the process is started with posix_spawn and waited for through a pidfd in the event loop"},
    {"log-health-checks", kBe, true, false, "log each check whose result moves the server's health or changes its status (`Health check for server b/s failed, reason: ..., info: \"...\", check duration: 0ms, status: 0/2 DOWN.`, at notice), and the state changes without the reason that line gave, as HAProxy 3.5 writes them (the counter starts as the server's init-state says)"},
    {"httpchk", kBe, false, true, "[<method>] [<uri>] [<version>] [<host>]: HTTP health checks, default `OPTIONS / HTTP/1.0`; any 2xx/3xx passes unless `http-check expect` says otherwise; headers hidden after the version (`HTTP/1.1\\r\\nHost:\\ x`) are refused, as HAProxy 3.5 does: use `http-check send`"},
    {"http-keep-alive", kFe | kBe, true, true, "HTTP connection mode (the default): persistent client and server connections; the last of http-keep-alive / http-server-close / httpclose in a section wins, `no option X` resets to keep-alive when X is the current mode"},
    {"http-server-close", kFe | kBe, true, true, "HTTP connection mode: the client side stays persistent, the server connection closes after each response"},
    {"httpclose", kFe | kBe, true, true, "HTTP connection mode: close after each response (frontend: client side; backend: server side; listen: both)"},
    {"forwardfor", kFe | kBe, false, true, "[except <net>] [header <name>] [if-none]: append `x-forwarded-for: <client ip>` (nothing for UNIX clients); HTTP mode only (warns and is ignored in TCP mode)"},
    {"forwarded", kBe, true, true, "[proto] [host|host-expr <expr>] [by|by-expr <expr>] [by_port|by_port-expr <expr>] [for|for-expr <expr>] [for_port|for_port-expr <expr>]: add an RFC 7239 `forwarded` field (after any the client sent) with the request's scheme, its Host, the address and port the client connected to and the client's address and port, or the expressions' values (obfuscated identifiers); without parameters `proto` and `for`; a port without its node is dropped with HAProxy's warning; HTTP mode only"},
    {"originalto", kFe | kBe, true, false, "[except <net>] [header <name>]: add `x-original-to: <the address the client connected to>` (unless it is in `except`); the backend's header name wins; HTTP mode only"},
    {"http-ignore-probes", kFe, true, false, "a connection closed or timed out before sending a single byte (a browser's speculative pre-connection) is closed silently: no 400 or 408, no log line, no error counted"},
    {"http-restrict-req-hdr-names", kFe | kBe, false, false, "preserve|delete|reject: what happens to request fields whose names hold anything but letters, digits and `-` (`x_user`, `x.id`) once the rules ran: kept (the default), removed before the request goes to the server, or the request is answered with a 403 (denied); the backend's setting wins; HTTP mode only"},
    {"abortonclose", kFe | kBe, true, false, "(in the frontend or the backend) a request whose client closed its connection while it waited in the queue or for the server connection is dropped (logged CQ-- or CC--, status -1) instead of being sent to a server no one will hear"},
    {"httplog", kFe, false, true, "[clf]: HAProxy's HTTP log format (or its CLF variant); in TCP mode it warns and falls back to tcplog; ignored in backends"},
    {"httpslog", kFe, false, true, "HAProxy's httplog format followed by the TLS fields: `fc_err/ssl_fc_err(hex)/ssl_c_err/ssl_c_ca_err/ssl_fc_is_resumed ssl_fc_sni/%sslv/%sslc`; in TCP mode it warns and falls back to tcplog; ignored in backends"},
    {"accept-unsafe-violations-in-http-request", kFe, true, false, "relax the request parser as HAProxy does (bytes >= 0x80 and `#` in the target, NUL in a value, non-tchar field names dropped, HTTP/0.9 GET and odd version tokens, unchecked authority, WebSocket without a valid key), and admit bare LF and obs-fold; HTTP mode only"},
    {"accept-invalid-http-request", kFe, true, false, "deprecated alias of accept-unsafe-violations-in-http-request (warns)"},
    {"clitcpka", kFe, true, false, "TCP keep-alive probes (SO_KEEPALIVE) on client connections; tuned by clitcpka-cnt/-idle/-intvl"},
    {"srvtcpka", kBe, true, false, "TCP keep-alive probes (SO_KEEPALIVE) on server connections; tuned by srvtcpka-cnt/-idle/-intvl"},
    {"tcpka", kFe | kBe, true, false, "clitcpka and srvtcpka together (each where the proxy has that side)"},
    {"nolinger", kFe | kBe, true, false, "close this proxy's connections (client side in a frontend, server side in a backend) with a reset instead of a FIN: no FIN_WAIT or TIME_WAIT left, unsent data is dropped"},
    {"http-buffer-request", kFe | kBe, true, false, "read the request's body (up to a buffer, tune.bufsize) before the http-request rules, so that req.body, req.body_len, req.body_param... see it; `timeout http-request` bounds the wait (408). In a backend sluice waits before the frontend's rules already (the backend is not known yet); a client expecting `100 Continue` gets it from sluice, and the Expect field is not forwarded"},
    {"dontlog-normal", kFe, true, false, "do not log the transactions and TCP sessions that HAProxy calls normal: no error termination, no retry or redispatch, an HTTP status below 500 (what `option log-separate-errors` logs at `info`)"},
    {"socket-stats", kFe, true, false, "`show stat` lists this frontend's listeners, one row each (type 2, `svname` the bind line's `name`, else `sock-<n>`), also without `-1` filters"},
    {"tcp-smart-accept", kFe, true, false, "TCP_QUICKACK off on this frontend's TCP listening sockets, as HAProxy 3.5 does (seen with strace; TCP_DEFER_ACCEPT is its bind option `defer-accept`, not this): on by default in HTTP mode, `no option tcp-smart-accept` turns it off. Linux 6.x does not pass it on to the accepted sockets, so the ACK of the request is not delayed either way"},
    {"splice-auto", kFe | kBe, true, false, "accepted; no effect: sluice has no pipes and does not splice (it moves the buffer a body was read into, which already avoids a copy between the two sides)"},
    {"splice-request", kFe | kBe, true, false, "accepted; no effect: sluice does not splice (see splice-auto)"},
    {"splice-response", kFe | kBe, true, false, "accepted; no effect: sluice does not splice (see splice-auto)"},
    {"h1-case-adjust-bogus-client", kFe, true, false, "the heads sent to clients spell field names as the global `h1-case-adjust` lines say (HTTP/1 clients that need `Content-Length`); without them nothing changes"},
    {"h1-case-adjust-bogus-server", kBe, true, false, "the heads sent to servers spell field names as the global `h1-case-adjust` lines say"},
    {"http-drop-request-trailers", kBe, true, false, "the trailer fields of a chunked request are not sent to the server (the body and its end are)"},
    {"http-drop-response-trailers", kFe, true, false, "the trailer fields of a chunked response are not sent to the client (the body and its end are)"},
    {"http-pretend-keepalive", kFe | kBe, true, false, "with http-server-close or httpclose, the request sent to the server does not say `connection: close` (an HTTP/1.0 one says `keep-alive`), so that servers which stop chunking responses of unknown length when they see it go on; the server connection still closes after the response"},
    {"contstats", kFe, true, false, "accepted; no effect: sluice's byte counters already move as the data passes (each read and send is counted at once), which is what this option asks of HAProxy, whose counters otherwise wait for the end of the stream"},
    {"http-no-delay", kFe | kBe, true, false, "accepted; no effect: sluice already sends without delay (TCP_NODELAY on every HTTP client and server socket, and MSG_MORE only on a write that the rest of the same flush, or the FIN, follows at once), which is what this option asks of HAProxy"},
    {"checkcache", kBe, true, false, "a response that HAProxy would let a shared cache store with a cookie in it is blocked: to a GET, HEAD, OPTIONS or TRACE request, with a status a cache may store (200, 203, 204, 206, 300, 301, 404, 405, 410, 414, 501), a `Set-Cookie` field from the server, freshness (`max-age`, `s-maxage`, `Expires`) or a validator (`ETag`, `Last-Modified`), and no `Pragma: no-cache` nor `Cache-Control: private`, `no-cache`, `no-store`, `max-age=0`, `s-maxage=0` or `no-cache=\"set-cookie\"` (a later `public` makes it cacheable again). As HAProxy 3.5 does, the client gets sluice's error page for the server's status (500's when there is none), logged with the server's status and `PH--`, counted as a denied response, and an alert `Blocking cacheable cookie in response from instance <backend>, server <server>.` is logged"},
    {"prefer-last-server", kBe, true, false, "a keep-alive client's next request goes to the server its previous request went to, when sluice still holds a connection to it (the client's own, or one in the thread's idle pool), the server is usable and has room; not with hashing algorithms (source, uri, url_param, hdr, rdp-cookie, hash), whose choice stands, as in HAProxy. Not counted as a load-balanced pick (`lbtot`)"},
    {"idle-close-on-response", kFe, true, false, "at a soft stop (reload), a keep-alive connection between requests is not closed after its grace of one second: its next request is served with `connection: close`, within `timeout http-keep-alive` (else `timeout http-request`, then `timeout client`) and `hard-stop-after`"},
    {"independent-streams", kFe | kBe, true, false, "in TCP mode, the side of this proxy (clients in a frontend, servers in a backend) times out on its own silence: data sent to it does not postpone `timeout client` / `timeout server`, so an upload to a server that never answers ends after `timeout server` (HAProxy 3.5's behaviour, measured). HTTP mode: no effect, as sluice's HTTP timeouts are per phase"},
    {"accept-unsafe-violations-in-http-response", kBe, true, false, "relax the response parser as HAProxy does: a field whose name holds a non-tchar byte (`X(a)`, `X-a `) is dropped instead of the response being refused with a 502, and NUL passes in a value"},
    {"accept-invalid-http-response", kBe, true, false, "deprecated alias of accept-unsafe-violations-in-http-response (warns)"},
    {"disable-h2-upgrade", kFe, true, false, "HAProxy uses it to stop an HTTP/1 connection that starts with the HTTP/2 preface from becoming HTTP/2; sluice, which does not speak HTTP/2, answers that preface 400 (bad request) without the option and, with it, 405 (method not allowed, logged `PR--` `<BADREQ>`) as HAProxy 3.5 does"},
    {"http-use-proxy-header", kFe, true, false, "accepted; no effect, as in HAProxy 3.5: neither reads `Proxy-Connection` (measured: `Proxy-Connection: close` on an absolute-URI request leaves the connection open with and without the option)"},
    {"tcp-smart-connect", kBe, true, false, "the handshake's last ACK rides on the first request segment (TCP_DEFER_ACCEPT on the connecting socket) when the request is ready at connect time; on by default in sluice (off in HAProxy), `no option tcp-smart-connect` turns it off"},
};


}  // namespace

void kw_option(Parser& p, Line& l) {
  ProxyState& ps = p.cur_proxy();
  ProxyConfig& px = ps.cfg;
  if (l.args.size() < 2) throw ConfigError{l.where + "'option' expects an option name."};
  const std::string& name = l.args[1];
  const OptionDef* o = nullptr;
  for (const auto& d : kOptions)
    if (d.name == name) o = &d;
  if (!o) {
    if (name == "spop-check")
      throw ConfigError{fmt::format("{}'option spop-check' is not supported by sluice: it checks "
                                    "SPOE agents, and sluice has no SPOE.", l.where)};
    // Options HAProxy 3.5 itself refuses now, with its words.
    if (name == "transparent")
      throw ConfigError{fmt::format("{}support for option 'transparent' was removed in version 3.5.", l.where)};
    if (name == "http_proxy")
      throw ConfigError{fmt::format(
          "{}option 'http_proxy' is not supported any more since HAProxy 2.5. This option stopped "
          "working in HAProxy 1.9 and usually had nasty side effects. It can be more reliably "
          "implemented with combinations of 'http-request set-dst' and 'http-request set-uri', and "
          "even 'http-request do-resolve' if DNS resolution is desired.", l.where)};
    std::vector<std::string_view> names;
    for (const auto& d : kOptions) names.push_back(d.name);
    throw ConfigError{fmt::format("{}unknown option '{}'{}", l.where, name, did_you_mean(name, names))};
  }
  if (l.prefix != Prefix::kNone && !o->negatable)
    throw ConfigError{fmt::format("{}negation/default is not supported for option '{}'.", l.where, name)};
  if (!ps.is_defaults && !(px.caps & o->cap)) {
    if (name == "tcplog" || name == "httplog" || name == "httpslog") {
      p.warning(fmt::format("{}{} '{}' : 'option {}' directive is ignored in backends.", l.where,
                            Parser::type_word(px), px.name, name));
      return;
    }
    p.warning(fmt::format("{}'option {}' ignored because {} '{}' has no {} capability.", l.where,
                          name, Parser::type_word(px), px.name, o->cap == kBe ? "backend" : "frontend"));
    if (o->special) return;
    // QUIRK kept from HAProxy 3.5: table-driven options then fail as unknown.
    throw ConfigError{fmt::format("{}unknown option '{}'; did you mean '{}' maybe ?", l.where, name, name)};
  }
  if (protocol_check_option(p, l, px, name)) return;
  if (name == "redispatch") {
    if (l.prefix != Prefix::kNone) {
      no_extra(l, 2);
      px.redispatch = 0;
      return;
    }
    int v = -1;
    if (l.args.size() > 2) v = strict_int(l, 2, INT_MIN + 1, INT_MAX, "option redispatch");
    no_extra(l, 3);
    px.redispatch = v;
    return;
  }
  if (name == "httpchk") {
    // HAProxy: one argument is the URI; two are method and URI; then version and Host.
    HttpCheckConfig& hc = px.http_check;
    std::size_t n = l.args.size() - 2;
    if (n > 4) no_extra(l, 6);
    hc.method = "OPTIONS";
    hc.uri = "/";
    hc.version = "HTTP/1.0";
    if (n == 1) {
      hc.uri = l.args[2];
    } else if (n >= 2) {
      hc.method = l.args[2];
      hc.uri = l.args[3];
      if (n >= 3) hc.version = l.args[4];
      // HAProxy 2.x sent what followed "\r\n" in the version as headers; 3.5 refuses it.
      if (hc.version.find_first_of("\r\n") != std::string::npos)
        throw ConfigError{l.where + "'option httpchk' : hiding headers or body at the end of the "
                                    "version string is unsupported.Use 'http-check send' "
                                    "directive instead.."};
      if (n >= 4) hc.headers.emplace_back("Host", l.args[5]);
    }
    px.check_type = ProxyConfig::CheckType::kHttp;
    px.option_tcp_check = false;
    return;
  }
  if (name == "http-keep-alive" || name == "http-server-close" || name == "httpclose") {
    if (l.prefix == Prefix::kDefault)
      throw ConfigError{fmt::format("{}negation/default is not supported for option '{}'.", l.where, name)};
    no_extra(l, 2);
    HttpConnMode m = name == "http-keep-alive"     ? HttpConnMode::kKeepAlive
                     : name == "http-server-close" ? HttpConnMode::kServerClose
                                                   : HttpConnMode::kClose;
    if (l.prefix == Prefix::kNone) {
      px.http_conn_mode = m;
    } else if (px.http_conn_mode == m) {
      px.http_conn_mode = HttpConnMode::kKeepAlive;   // `no option X` cancels X only
    }
    px.http_conn_mode_set = true;
    return;
  }
  if (name == "forwarded") {
    option_forwarded(p, l);
    return;
  }
  if (name == "originalto") {
    option_originalto(p, l);
    return;
  }
  if (name == "http-restrict-req-hdr-names") {
    static constexpr std::string_view kModes[] = {"preserve", "delete", "reject"};
    if (l.args.size() < 3)
      throw ConfigError{l.where + "missing parameter. option 'http-restrict-req-hdr-names' "
                                  "expects 'preserve', 'reject' or 'delete' option."};
    int m = -1;
    for (int i = 0; i < 3; ++i)
      if (l.args[2] == kModes[i]) m = i;
    if (m < 0)
      throw ConfigError{fmt::format("{}invalid parameter '{}'. option 'http-restrict-req-hdr-names' "
                                    "expects 'preserve', 'reject' or 'delete' option.", l.where,
                                    l.args[2])};
    if (l.args.size() > 3)
      throw ConfigError{fmt::format("{}'option' cannot handle unexpected argument '{}'.", l.where,
                                    l.args[3])};
    px.restrict_req_hdr_names = static_cast<ProxyConfig::HdrNames>(m);
    return;
  }
  if (name == "forwardfor") {
    ForwardForConfig ff;
    ff.enabled = true;
    for (std::size_t i = 2; i < l.args.size();) {
      const std::string& w = l.args[i];
      if (w == "except") {
        ff.has_except = true;
        ff.except = except_network(l, i + 1, "forwardfor");
        i += 2;
      } else if (w == "header") {
        if (i + 1 >= l.args.size())
          throw ConfigError{fmt::format("{}'option forwardfor header' expects <header_name> as argument.", l.where)};
        ff.header = l.args[i + 1];
        i += 2;
      } else if (w == "if-none") {
        ff.if_none = true;
        ++i;
      } else {
        throw ConfigError{fmt::format("{}'option forwardfor' only supports optional values: 'except', "
                                      "'header' and 'if-none'.", l.where)};
      }
    }
    px.forwardfor = ff;
    return;
  }
  if (name == "httplog" || name == "tcplog") {
    using K = ProxyConfig::LogFormatKind;
    const bool http = name == "httplog";
    K kind = http ? K::kHttpLog : K::kTcpLog;
    std::string kw = "option " + name;
    if (l.args.size() > 2) {
      if (l.args[2] != "clf")
        throw ConfigError{fmt::format("{}keyword '{}' only supports option 'clf'.", l.where, name)};
      no_extra(l, 3);
      kind = http ? K::kClfHttpLog : K::kClfTcpLog;
      kw += " clf";
    }
    choose_log_format(p, l, kind, kw);
    return;
  }
  if (l.args.size() > 2)   // HAProxy 3.5 names the option
    throw ConfigError{fmt::format("{}'option {}' cannot handle unexpected argument '{}'.", l.where,
                                  name, l.args[2])};
  if (name == "httpslog") {
    choose_log_format(p, l, ProxyConfig::LogFormatKind::kHttpsLog, "option httpslog");
    return;
  }
  if (name == "accept-unsafe-violations-in-http-response" || name == "accept-invalid-http-response") {
    if (name == "accept-invalid-http-response")
      p.warning(fmt::format("{}option 'accept-invalid-http-response' is deprecated. please use 'option "
                            "accept-unsafe-violations-in-http-response' if absolutely needed.", l.where));
    px.option_accept_unsafe_responses = l.prefix == Prefix::kNone;
    return;
  }
  if (name == "accept-unsafe-violations-in-http-request" || name == "accept-invalid-http-request") {
    if (name == "accept-invalid-http-request")
      p.warning(fmt::format("{}option 'accept-invalid-http-request' is deprecated. please use 'option "
                            "accept-unsafe-violations-in-http-request' if absolutely needed.", l.where));
    px.accept_unsafe_requests = l.prefix == Prefix::kNone;
    return;
  }
  if (name == "external-check") {
    px.check_type = ProxyConfig::CheckType::kExternal;
    px.option_tcp_check = false;
  } else if (name == "tcp-check") {
    px.check_type = ProxyConfig::CheckType::kTcp;
    px.option_tcp_check = true;
  } else if (name == "log-health-checks") {
    px.option_log_health_checks = l.prefix == Prefix::kNone;
  } else if (name == "dontlognull") {
    px.option_dontlognull = l.prefix == Prefix::kNone;
  } else if (name == "log-separate-errors") {
    px.option_log_separate_errors = l.prefix == Prefix::kNone;
  } else if (name == "logasap") {
    px.option_logasap = l.prefix == Prefix::kNone;
  } else if (name == "http-ignore-probes") {
    px.option_http_ignore_probes = l.prefix == Prefix::kNone;
  } else if (name == "abortonclose") {
    px.option_abortonclose = l.prefix == Prefix::kNone;
  } else if (name == "http-buffer-request") {
    px.option_http_buffer_request = l.prefix == Prefix::kNone;
  } else if (name == "persist") {
    px.option_persist = l.prefix == Prefix::kNone;
  } else if (name == "allbackups") {
    px.option_allbackups = l.prefix == Prefix::kNone;
  } else if (name == "clitcpka") {
    px.option_clitcpka = l.prefix == Prefix::kNone;
  } else if (name == "srvtcpka") {
    px.option_srvtcpka = l.prefix == Prefix::kNone;
  } else if (name == "tcpka") {
    px.option_clitcpka = px.option_srvtcpka = l.prefix == Prefix::kNone;
  } else if (name == "nolinger") {
    px.option_nolinger = l.prefix == Prefix::kNone;
  } else if (name == "dontlog-normal") {
    px.option_dontlog_normal = l.prefix == Prefix::kNone;
  } else if (name == "socket-stats") {
    px.option_socket_stats = l.prefix == Prefix::kNone;
  } else if (name == "tcp-smart-accept") {
    px.option_tcp_smart_accept = l.prefix == Prefix::kNone ? 1 : l.prefix == Prefix::kNo ? -1 : 0;
  } else if (name == "h1-case-adjust-bogus-client") {
    px.option_h1_case_adjust_client = l.prefix == Prefix::kNone;
  } else if (name == "h1-case-adjust-bogus-server") {
    px.option_h1_case_adjust_server = l.prefix == Prefix::kNone;
  } else if (name == "http-drop-request-trailers") {
    px.option_drop_request_trailers = l.prefix == Prefix::kNone;
  } else if (name == "http-drop-response-trailers") {
    px.option_drop_response_trailers = l.prefix == Prefix::kNone;
  } else if (name == "http-pretend-keepalive") {
    px.option_pretend_keepalive = l.prefix == Prefix::kNone;
  } else if (name == "checkcache") {
    px.option_checkcache = l.prefix == Prefix::kNone;
  } else if (name == "prefer-last-server") {
    px.option_prefer_last_server = l.prefix == Prefix::kNone;
  } else if (name == "idle-close-on-response") {
    px.option_idle_close_on_response = l.prefix == Prefix::kNone;
  } else if (name == "independent-streams") {
    px.option_independent_streams = l.prefix == Prefix::kNone;
  } else if (name == "disable-h2-upgrade") {
    px.option_disable_h2_upgrade = l.prefix == Prefix::kNone;
  } else if (name == "http-use-proxy-header") {
    // Nothing to change: see the table's text.
  } else if (name == "contstats") {
    // Nothing to change: see the table's text.
  } else if (name == "http-no-delay") {
    px.option_http_no_delay = l.prefix == Prefix::kNone;
  } else if (name == "tcp-smart-connect") {
    px.option_tcp_smart_connect = l.prefix != Prefix::kNo;   // `default option` = sluice's default
  }
}

// `clitcpka-cnt <n>`, `clitcpka-idle <time>`, `clitcpka-intvl <time>` and the srvtcpka-*
// ones. The capability check (clitcpka-* need a frontend, srvtcpka-* a backend) is the
// keyword table's. Times are in seconds unless a unit is given. The kernel refuses idle and
// interval above 32767 s and counts above 127: such values are clamped with a warning (HAProxy
// passes them on and the setsockopt() fails silently).
void kw_tcpka(Parser& p, Line& l) {
  ProxyConfig& px = p.cur_proxy().cfg;
  const std::string& kw = l.args[0];
  bool cli = kw.rfind("clitcpka-", 0) == 0;
  std::string_view what = std::string_view(kw).substr(9);   // cnt, idle, intvl
  if (l.args.size() < 2 || l.args[1].empty())
    throw ConfigError{fmt::format("{}'{}' expects an integer value", l.where, kw)};
  no_extra(l, 2);
  int limit = what == "cnt" ? 127 : 32767;
  long long v = 0;
  if (what == "cnt") {
    v = strict_int(l, 1, 0, INT_MAX, kw);
  } else {
    auto t = parse_time(l.args[1], TimeUnit::kS);
    check_time_range(l, t, l.args[1], kw);
    if (t.status != TimeValue::Status::kOk)
      throw ConfigError{fmt::format("{}unexpected character '{}' in argument to <{}>.", l.where,
                                    t.bad ? t.bad : ' ', kw)};
    if (t.trailing) p.warning(time_trailing_warning(t.trailing, l.args[1]));
    v = t.value;
  }
  if (v > limit) {
    p.warning(fmt::format("{}'{} {}' is above the kernel's limit; {} is used instead.", l.where,
                          kw, l.args[1], limit));
    v = limit;
  }
  // Written in a frontend/backend/listen itself: validation warns if that proxy never turns
  // keep-alive on for the side (a tuning would then be parsed and have no effect).
  if (!p.cur_proxy().is_defaults) (cli ? px.clitcpka_tuned_at : px.srvtcpka_tuned_at) = l.loc;
  int& field = what == "cnt"    ? (cli ? px.clitcpka_cnt : px.srvtcpka_cnt)
               : what == "idle" ? (cli ? px.clitcpka_idle : px.srvtcpka_idle)
                                : (cli ? px.clitcpka_intvl : px.srvtcpka_intvl);
  field = static_cast<int>(v);
}

void append_option_docs(std::vector<SubKeywordDoc>* docs) {
  for (const auto& o : kOptions) docs->push_back({"option", o.name, o.help});
}

}  // namespace sluice::config::proxy_kw

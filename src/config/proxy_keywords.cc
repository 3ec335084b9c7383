// Keywords of defaults / frontend / backend / listen sections and their tables.
#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "base/regex.h"
#include "base/strings.h"
#include "config/log_keyword.h"
#include "config/parser.h"
#include "config/thread_keywords.h"
#include "config/units.h"
#include "http/http.h"
#include "net/address.h"
#include "rules/rules.h"

namespace sluice::config {

namespace {

using Cap = ProxyConfig::Cap;
constexpr unsigned kFe = ProxyConfig::kFrontend;
constexpr unsigned kBe = ProxyConfig::kBackend;

std::string did_you_mean(std::string_view w, const std::vector<std::string_view>& names) {
  std::string best = base::closest_match(w, names);
  return best.empty() ? "" : fmt::format("; did you mean '{}' maybe ?", best);
}

void no_extra(const Line& l, std::size_t n) {
  if (l.args.size() > n)
    throw ConfigError{fmt::format("{}'{}' cannot handle unexpected argument '{}'.", l.where,
                                  l.args[0], l.args[n])};
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

void kw_mode(Parser& p, Line& l) {
  std::string m = l.args.size() > 1 ? l.args[1] : "";
  if (m == "tcp") {
    no_extra(l, 2);
    p.cur_proxy().cfg.mode = Mode::kTcp;
    return;
  }
  if (m == "http") {
    no_extra(l, 2);
    p.cur_proxy().cfg.mode = Mode::kHttp;
    return;
  }
  if (m == "log" || m == "spop")
    throw ConfigError{fmt::format("{}'mode {}' is not supported by sluice yet.", l.where, m)};
  if (m == "health")
    throw ConfigError{l.where + "'mode health' doesn't exist anymore. Please remove this line."};
  throw ConfigError{fmt::format("{}unknown proxy mode '{}'.", l.where, m)};
}

// ---- bind ----

void kw_bind(Parser& p, Line& l) {
  if (l.args.size() < 2)
    throw ConfigError{l.where + "'bind' expects {<path>|[addr1]:port1[-end1]}{,[addr]:port[-end]}... "
                                "as arguments."};
  ProxyConfig& px = p.cur_proxy().cfg;
  BindConfig b;
  b.loc = l.loc;
  b.text = l.args[1];
  for (const auto& a : l.args) b.args_text += (b.args_text.empty() ? "" : " ") + a;
  // The global default in force now, not at the end of parsing (spec 2.1).
  b.shards = p.global.default_shards;
  std::string addr = p.address_word(l, 1, "bind");
  auto r = net::parse_bind_address(addr);
  if (!r.ok()) throw ConfigError{fmt::format("{}'bind' : {}", l.where, r.error().message)};
  b.addrs = std::move(r.value());
  std::string head = fmt::format("{}'bind {}'", l.where, l.args[1]);
  static const std::vector<std::string_view> kOpts = {"name", "maxconn", "backlog", "mode",
                                                      "thread", "shards", "id"};
  static constexpr std::string_view kHaproxyOpts[] = {
      "accept-netscaler-cip", "accept-proxy", "allow-0rtt", "alpn", "ca-file", "crt", "crt-list",
      "defer-accept", "expose-fd", "gid", "group", "interface", "level", "namespace", "nice",
      "npn", "proto", "quic-cc-algo", "severity-output", "ssl", "strict-sni",
      "tcp-ut", "tfo", "tls-ticket-keys", "transparent", "uid", "user", "v4v6",
      "v6only", "verify", "guid-prefix", "idle-ping", "mss",
  };
  for (std::size_t i = 2; i < l.args.size();) {
    const std::string& o = l.args[i];
    bool has_v = i + 1 < l.args.size();
    std::string v = has_v ? l.args[i + 1] : "";
    if (o == "name") {
      if (!has_v) throw ConfigError{head + " : 'name' : missing name"};
      b.name = v;
    } else if (o == "maxconn" || o == "backlog") {
      if (!has_v) throw ConfigError{fmt::format("{} : '{}' : missing value", head, o)};
      auto n = parse_strict_int(v, 0, INT_MAX);
      if (!n)
        throw ConfigError{fmt::format("{} : '{}' expects a non-negative integer, got '{}'.", head, o, v)};
      (o == "maxconn" ? b.maxconn : b.backlog) = static_cast<int>(*n);
    } else if (o == "mode") {
      bool ok = has_v && v.size() <= 4;
      int mode = 0;
      for (char c : v) {
        ok = ok && c >= '0' && c <= '7';
        if (ok) mode = mode * 8 + (c - '0');
      }
      if (!ok) throw ConfigError{fmt::format("{} : 'mode' expects an octal value, got '{}'.", head, v)};
      b.unix_mode = mode;
    } else if (o == "thread") {
      parse_bind_thread(head, v, has_v, &b);
    } else if (o == "shards") {
      parse_bind_shards(head, v, has_v, &b);
    } else if (o == "id") {
      parse_bind_id(head, v, has_v, &b);
    } else if (o == "process") {
      throw ConfigError{fmt::format("{} : 'process {}' on 'bind' lines is not supported anymore, please "
                                    "use 'thread' instead.", head, v)};
    } else if (std::find(std::begin(kHaproxyOpts), std::end(kHaproxyOpts), o) != std::end(kHaproxyOpts)) {
      throw ConfigError{fmt::format("{} : '{}' is not supported by sluice yet.", head, o)};
    } else {
      throw ConfigError{fmt::format("{} in section '{}': unknown keyword '{}'{}", head,
                                    p.cur_proxy().cfg.type, o, did_you_mean(o, kOpts))};
    }
    i += 2;
  }
  if (b.id > 0) {
    // The id names one listener (spec 7, bind): a list or a port range makes several, while
    // shards are clones of one that take the next ids (sharding spec 6), so they may carry one.
    if (b.addrs.size() > 1) throw ConfigError{head + " : 'id' can only be used with a single socket"};
    for (const auto& o : px.binds)
      if (o.id == b.id)
        throw ConfigError{fmt::format("{} : 'id' : custom id {} already used at {}:{} ('bind {}')", head,
                                      b.id, o.loc.file, o.loc.line, o.text)};
  }
  px.binds.push_back(std::move(b));
}

void kw_default_backend(Parser& p, Line& l) {
  if (l.args.size() != 2)
    throw ConfigError{fmt::format("{}'{}' expects a backend name.", l.where, l.args[0])};
  p.cur_proxy().cfg.default_backend = l.args[1];
}

// ---- timeout ----

// HAProxy's messages for a time argument out of range (below 2^31 ms, at least 1 ms when not 0).
void check_time_range(const Line& l, const TimeValue& t, std::string_view arg, std::string_view kw) {
  if (t.status == TimeValue::Status::kOverflow)
    throw ConfigError{fmt::format("{}timer overflow in argument '{}' to '{}' (maximum value is "
                                  "2147483647 ms or ~24.8 days)", l.where, arg, kw)};
  if (t.status == TimeValue::Status::kUnderflow)
    throw ConfigError{fmt::format("{}timer underflow in argument '{}' to '{}' (minimum non-null "
                                  "value is 1 ms)", l.where, arg, kw)};
}

void kw_timeout(Parser& p, Line& l) {
  ProxyState& ps = p.cur_proxy();
  ProxyConfig& px = ps.cfg;
  std::string kind = l.args.size() > 1 ? l.args[1] : "";
  struct Kind {
    std::string_view name;
    unsigned cap;
    uint32_t Timeouts::*field;
  };
  static constexpr Kind kKinds[] = {
      {"client", kFe, &Timeouts::client},         {"server", kBe, &Timeouts::server},
      {"connect", kBe, &Timeouts::connect},       {"tunnel", kBe, &Timeouts::tunnel},
      {"client-fin", kFe, &Timeouts::client_fin}, {"server-fin", kBe, &Timeouts::server_fin},
      {"queue", kBe, &Timeouts::queue},
      {"check", kBe, &Timeouts::check},
      {"http-request", kFe, &Timeouts::http_request},
      {"http-keep-alive", kFe, &Timeouts::http_keep_alive},
  };
  static constexpr std::string_view kUnsupported[] = {"handshake", "tarpit", "client-hs"};
  const Kind* k = nullptr;
  for (const auto& c : kKinds)
    if (c.name == kind) k = &c;
  if (!k) {
    if (std::find(std::begin(kUnsupported), std::end(kUnsupported), kind) != std::end(kUnsupported))
      throw ConfigError{fmt::format("{}'timeout {}' is not supported by sluice yet.", l.where, kind)};
    throw ConfigError{fmt::format(
        "{}'timeout' supports 'client', 'server', 'connect', 'check', 'queue', 'handshake', "
        "'http-keep-alive', 'http-request', 'tunnel', 'tarpit', 'client-fin' and 'server-fin' "
        "(got '{}')", l.where, kind)};
  }
  std::string name = fmt::format("timeout {}", kind);
  if (!ps.is_defaults && !(px.caps & k->cap)) {
    p.warning(fmt::format("{}'{}' will be ignored because {} '{}' has no {} capability", l.where,
                          name, Parser::type_word(px), px.name, k->cap == kBe ? "backend" : "frontend"));
    return;
  }
  if (l.args.size() < 3)
    throw ConfigError{fmt::format("{}'{}' expects an integer value (in milliseconds)", l.where, name)};
  const std::string& v = l.args[2];
  auto t = parse_time(v, TimeUnit::kMs);
  if (t.status == TimeValue::Status::kBadChar || t.status == TimeValue::Status::kEmpty)
    throw ConfigError{fmt::format("{}unexpected character '{}' in '{}'", l.where, t.bad, name)};
  check_time_range(l, t, v, name);
  if (l.args.size() > 3)
    throw ConfigError{fmt::format("{}'{}' : unexpected extra argument '{}' after value '{}'.",
                                  l.where, name, l.args[3], v)};
  if (t.trailing) p.warning(time_trailing_warning(t.trailing, v));
  bool unitless = v.find_first_not_of("0123456789") == std::string::npos;
  if (unitless && t.value >= 1 && t.value < 100)
    p.warning(fmt::format("{}'{} {}' in {} '{}' is suspiciously small for a value in "
                          "milliseconds. Please use an explicit unit ('{}ms') if that was the intent.",
                          l.where, name, v, ps.is_defaults ? "defaults" : Parser::type_word(px),
                          px.name, v));
  if (!ps.is_defaults && !ps.timeouts_set.insert(kind).second)
    p.warning(fmt::format("{}overwriting '{}' which was already specified", l.where, name));
  px.timeouts.*(k->field) = t.value;
}

void kw_maxconn(Parser& p, Line& l) {
  int n = strict_int(l, 1, 0, INT_MAX, "maxconn");
  no_extra(l, 2);
  p.cur_proxy().cfg.maxconn = n;
}

void kw_backlog(Parser& p, Line& l) {
  int n = strict_int(l, 1, 0, INT_MAX, "backlog");
  no_extra(l, 2);
  p.cur_proxy().cfg.backlog = n;
}

void kw_retries(Parser& p, Line& l) {
  int n = strict_int(l, 1, 0, INT_MAX, "retries");
  no_extra(l, 2);
  p.cur_proxy().cfg.retries = n;
}

// ---- option ----

struct OptionDef {
  std::string_view name;
  unsigned cap;         // capability the option belongs to
  bool negatable;
  bool special;         // special-cased in HAProxy: a capability mismatch only warns
  std::string_view help;
};

constexpr OptionDef kOptions[] = {
    {"redispatch", kBe, true, true, "[<n>]: redispatch on the last retry (-1), every Pth retry (+P) or the Nth before the last (-N); 0 disables. As in HAProxy, a failed server is also left at once (no retry of it, no turn-around) when it is not running (DOWN, maintenance, slow start) or when the algorithm does not hash (roundrobin, static-rr, leastconn, first, random) and more than one active server is usable. A redispatch counts in `wredis` (backend and the server left), a retry of the same server in `wretr`, never both"},
    {"tcplog", kFe, false, true, "TCP log format for this frontend"},
    {"dontlognull", kFe, true, false, "do not log connections that carried no data"},
    {"allbackups", kBe, true, false, "all usable backup servers share the load when no active server is up (default: the first backup only)"},
    {"tcp-check", kBe, false, true, "health checks only connect (the default check; `tcp-check` rules are not supported yet)"},
    {"httpchk", kBe, false, true, "[<method>] [<uri>] [<version>] [<host>]: HTTP health checks, default `OPTIONS / HTTP/1.0`; any 2xx/3xx passes unless `http-check expect` says otherwise"},
    {"http-keep-alive", kFe | kBe, true, true, "HTTP connection mode (the default): persistent client and server connections; the last of http-keep-alive / http-server-close / httpclose in a section wins, `no option X` resets to keep-alive when X is the current mode"},
    {"http-server-close", kFe | kBe, true, true, "HTTP connection mode: the client side stays persistent, the server connection closes after each response"},
    {"httpclose", kFe | kBe, true, true, "HTTP connection mode: close after each response (frontend: client side; backend: server side; listen: both)"},
    {"forwardfor", kFe | kBe, false, true, "[except <net>] [header <name>] [if-none]: append `x-forwarded-for: <client ip>` (nothing for UNIX clients); HTTP mode only (warns and is ignored in TCP mode)"},
    {"httplog", kFe, false, true, "HTTP log format (plain only: `httplog clf` is not supported yet); in TCP mode it warns and falls back to tcplog; ignored in backends"},
    {"accept-unsafe-violations-in-http-request", kFe, true, false, "relax the request parser as HAProxy does (specs/http1.md 1.7); HTTP mode only"},
    {"accept-invalid-http-request", kFe, true, false, "deprecated alias of accept-unsafe-violations-in-http-request (warns)"},
    {"clitcpka", kFe, true, false, "TCP keep-alive probes (SO_KEEPALIVE) on client connections; tuned by clitcpka-cnt/-idle/-intvl"},
    {"srvtcpka", kBe, true, false, "TCP keep-alive probes (SO_KEEPALIVE) on server connections; tuned by srvtcpka-cnt/-idle/-intvl"},
    {"tcpka", kFe | kBe, true, false, "clitcpka and srvtcpka together (each where the proxy has that side)"},
    {"nolinger", kFe | kBe, true, false, "close this proxy's connections (client side in a frontend, server side in a backend) with a reset instead of a FIN: no FIN_WAIT or TIME_WAIT left, unsent data is dropped"},
    {"tcp-smart-connect", kBe, true, false, "the handshake's last ACK rides on the first request segment (TCP_DEFER_ACCEPT on the connecting socket) when the request is ready at connect time; on by default in sluice (off in HAProxy), `no option tcp-smart-connect` turns it off"},
};

constexpr std::string_view kHaproxyOptions[] = {
    "abortonclose", "accept-unsafe-violations-in-http-response", "accept-invalid-http-response",
    "checkcache", "contstats", "disable-h2-upgrade", "dontlog-normal",
    "external-check", "forwarded", "h1-case-adjust-bogus-client", "h1-case-adjust-bogus-server",
    "http-buffer-request", "http-drop-request-trailers", "http-drop-response-trailers",
    "http-ignore-probes", "http-no-delay", "http-pretend-keepalive",
    "http-restrict-req-hdr-names", "http-use-proxy-header",
    "httpslog", "independent-streams", "ldap-check", "log-health-checks",
    "log-separate-errors", "logasap", "mysql-check", "originalto", "persist",
    "pgsql-check", "prefer-last-server", "redis-check", "smtpchk", "socket-stats", "splice-auto",
    "splice-request", "splice-response", "spop-check", "ssl-hello-chk",
    "tcp-smart-accept", "transparent",
    "idle-close-on-response", "http_proxy",
};

void kw_option(Parser& p, Line& l) {
  ProxyState& ps = p.cur_proxy();
  ProxyConfig& px = ps.cfg;
  if (l.args.size() < 2) throw ConfigError{l.where + "'option' expects an option name."};
  const std::string& name = l.args[1];
  const OptionDef* o = nullptr;
  for (const auto& d : kOptions)
    if (d.name == name) o = &d;
  if (!o) {
    if (std::find(std::begin(kHaproxyOptions), std::end(kHaproxyOptions), name) != std::end(kHaproxyOptions))
      throw ConfigError{fmt::format("{}'option {}' is not supported by sluice yet.", l.where, name)};
    std::vector<std::string_view> names;
    for (const auto& d : kOptions) names.push_back(d.name);
    throw ConfigError{fmt::format("{}unknown option '{}'{}", l.where, name, did_you_mean(name, names))};
  }
  if (l.prefix != Prefix::kNone && !o->negatable)
    throw ConfigError{fmt::format("{}negation/default is not supported for option '{}'.", l.where, name)};
  if (!ps.is_defaults && !(px.caps & o->cap)) {
    if (name == "tcplog" || name == "httplog") {
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
      if (n >= 4) hc.headers.emplace_back("Host", l.args[5]);
    }
    px.check_type = ProxyConfig::CheckType::kHttp;
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
  if (name == "forwardfor") {
    ForwardForConfig ff;
    ff.enabled = true;
    for (std::size_t i = 2; i < l.args.size();) {
      const std::string& w = l.args[i];
      if (w == "except") {
        auto n = i + 1 < l.args.size() ? rules::parse_network(l.args[i + 1])
                                       : base::Result<rules::Network>(base::Error::text(""));
        if (!n.ok())
          throw ConfigError{fmt::format("{}'option forwardfor except' expects <address>[/mask] as argument.", l.where)};
        ff.has_except = true;
        ff.except = n.value();
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
  if (name == "httplog") {
    if (l.args.size() > 2) {
      if (l.args[2] == "clf")
        throw ConfigError{fmt::format("{}'option httplog clf' is not supported by sluice yet.", l.where)};
      throw ConfigError{fmt::format("{}keyword 'httplog' only supports option 'clf'.", l.where)};
    }
    if (ps.is_defaults && px.option_tcplog)
      p.warning(fmt::format("{}'option httplog' overrides previous 'option tcplog' in 'defaults' section.", l.where));
    px.option_httplog = true;
    px.option_tcplog = false;
    px.httplog_loc = l.loc;
    return;
  }
  no_extra(l, 2);
  if (name == "accept-unsafe-violations-in-http-request" || name == "accept-invalid-http-request") {
    if (name == "accept-invalid-http-request")
      p.warning(fmt::format("{}option 'accept-invalid-http-request' is deprecated. Please use 'option "
                            "accept-unsafe-violations-in-http-request' instead.", l.where));
    px.accept_unsafe_requests = l.prefix == Prefix::kNone;
    return;
  }
  if (name == "tcp-check") {
    px.check_type = ProxyConfig::CheckType::kTcp;
  } else if (name == "tcplog") {
    if (ps.is_defaults && px.option_httplog)
      p.warning(fmt::format("{}'option tcplog' overrides previous 'option httplog' in 'defaults' section.", l.where));
    px.option_tcplog = true;
    px.option_httplog = false;
  } else if (name == "dontlognull") {
    px.option_dontlognull = l.prefix == Prefix::kNone;
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

void kw_log(Parser& p, Line& l) { parse_log(p, l, &p.cur_proxy().cfg.logs, false); }

// ---- server ----

// A time argument of a server option (`inter 2s`, `slowstart 10s`), HAProxy's messages.
uint32_t server_time(Parser& p, const std::string& head, const std::string& o, const std::string& v,
                     const std::string& srv) {
  auto t = parse_time(v, TimeUnit::kMs);
  if (t.status == TimeValue::Status::kOverflow)
    throw ConfigError{fmt::format("{} : timer overflow in argument <{}> to <{}> of server {}, maximum value is 2147483647 ms (~24.8 days).", head, v, o, srv)};
  if (t.status == TimeValue::Status::kUnderflow)
    throw ConfigError{fmt::format("{} : timer underflow in argument <{}> to <{}> of server {}, minimum non-null value is 1 ms.", head, v, o, srv)};
  if (t.status == TimeValue::Status::kEmpty)
    throw ConfigError{fmt::format("{} : '{}' expects <time> as argument.", head, o)};
  if (t.status != TimeValue::Status::kOk) {
    // QUIRK kept from HAProxy 3.5 (spec 3.1): the three check intervals share a message that
    // names 'agent-inter', and the caller adds a second final dot.
    if (o != "slowstart")
      throw ConfigError{fmt::format("{} : unexpected character '{}' in 'agent-inter' argument of server {}..",
                                    head, t.bad, srv)};
    throw ConfigError{fmt::format("{} : unexpected character '{}' in argument to <{}>.", head, t.bad, o)};
  }
  // Characters after a valid unit only warn, as for `timeout` (spec 3.1).
  if (t.trailing) p.warning(time_trailing_warning(t.trailing, v));
  return t.value;
}

// The options of a `server` or `default-server` line, from args[first] on, applied over `s`
// (which starts as the section's default-server settings).
void parse_server_options(Parser& p, const Line& l, std::size_t first, ServerConfig& s,
                          const std::string& head) {
  static const std::vector<std::string_view> kOpts = {
      "weight", "maxconn", "backup", "disabled", "enabled", "slowstart", "check", "no-check",
      "inter", "fastinter", "downinter", "rise", "fall", "port", "addr", "on-marked-down"};
  static constexpr std::string_view kHaproxyOpts[] = {
      "agent-check", "agent-inter", "agent-port", "alpn", "ca-file", "check-ssl",
      "check-send-proxy", "cookie", "crt", "error-limit",
      "id", "init-addr", "maxqueue", "minconn", "observe", "on-error",
      "on-marked-up", "pool-max-conn", "pool-purge-delay", "proto",
      "redir", "resolvers", "resolve-prefer", "send-proxy", "send-proxy-v2",
      "sni", "source", "ssl", "track", "verify", "verifyhost", "ws", "tfo", "namespace",
      "usesrc", "resolve-opts", "socks4", "no-ssl", "guid", "hash-key",
  };
  const std::string& srv = s.name;
  for (std::size_t i = first; i < l.args.size();) {
    const std::string& o = l.args[i];
    bool has_v = i + 1 < l.args.size();
    std::string v = has_v ? l.args[i + 1] : "";
    if (o == "weight" || o == "maxconn") {
      if (!has_v) throw ConfigError{fmt::format("{} : '{}' expects an integer argument.", head, o)};
      auto n = parse_strict_int(v, LLONG_MIN, LLONG_MAX);
      if (!n) throw ConfigError{fmt::format("{} : '{}' expects an integer argument, got '{}'.", head, o, v)};
      if (o == "weight") {
        if (*n < 0 || *n > 256)
          throw ConfigError{fmt::format("{} : weight of server {} is not within 0 and 256 ({}).",
                                        head, srv, *n)};
        s.weight = static_cast<int>(*n);
      } else {
        if (*n < 0 || *n > INT_MAX)
          throw ConfigError{fmt::format("{} : 'maxconn' expects a non-negative integer, got '{}'.", head, v)};
        s.maxconn = static_cast<int>(*n);
      }
      i += 2;
    } else if (o == "slowstart") {
      if (!has_v) throw ConfigError{fmt::format("{} : '{}' expects <time> as argument.", head, o)};
      uint32_t t = server_time(p, head, o, v, srv);
      // HAProxy keeps slow start in seconds, rounded up.
      s.slowstart_ms = static_cast<uint32_t>((static_cast<uint64_t>(t) + 999) / 1000 * 1000);
      i += 2;
    } else if (o == "inter" || o == "fastinter" || o == "downinter") {
      if (!has_v) throw ConfigError{fmt::format("{} : '{}' expects <time> as argument.", head, o)};
      uint32_t t = server_time(p, head, o, v, srv);
      if (t == 0)
        throw ConfigError{fmt::format("{} : '{}' expects a strictly positive delay, got '{}'.", head, o, v)};
      // A bare number is in milliseconds: `inter 10` was most likely meant as seconds (spec
      // 3.1). The spec gives no text; this one follows the `timeout` warning.
      if (t < 100 && v.find_first_not_of("0123456789") == std::string::npos)
        p.warning(fmt::format("{} : '{} {}' in server '{}' is suspiciously small for a value in "
                              "milliseconds. Please use an explicit unit ('{}ms') if that was the "
                              "intent.", head, o, v, srv, v));
      (o == "inter" ? s.inter_ms : o == "fastinter" ? s.fastinter_ms : s.downinter_ms) = t;
      i += 2;
    } else if (o == "rise" || o == "fall") {
      if (!has_v) throw ConfigError{fmt::format("{} : '{}' expects an integer argument.", head, o)};
      auto n = parse_strict_int(v, LLONG_MIN, LLONG_MAX);
      if (!n) throw ConfigError{fmt::format("{} : '{}' expects an integer argument, got '{}'.", head, o, v)};
      if (*n <= 0 || *n > 1000000)
        throw ConfigError{fmt::format("{} : '{}' has to be > 0 (got '{}').", head, o, v)};
      (o == "rise" ? s.rise : s.fall) = static_cast<int>(*n);
      i += 2;
    } else if (o == "port") {
      auto n = has_v ? parse_strict_int(v, 1, 65535) : std::nullopt;
      if (!n) throw ConfigError{fmt::format("{} : 'port' expects a valid port (1..65535), got '{}'.", head, v)};
      s.check_port = static_cast<int>(*n);
      i += 2;
    } else if (o == "addr") {
      if (!has_v) throw ConfigError{fmt::format("{} : 'addr' expects <ipv4|ipv6> as argument.", head)};
      // The check address gets the same legacy env expansion as the server's (spec 1.4).
      v = p.address_word(l, i + 1, "addr");
      auto r = net::parse_server_address(v);
      if (!r.ok() || r.value().addr.family() == AF_UNIX)
        throw ConfigError{fmt::format("{} : 'addr' : invalid address '{}'.", head, v)};
      s.has_check_addr = true;
      s.check_addr = r.value().addr;
      i += 2;
    } else if (o == "on-marked-down") {
      if (v != "shutdown-sessions")
        throw ConfigError{fmt::format("{} : 'on-marked-down' expects 'shutdown-sessions' but got '{}'.", head, v)};
      s.shutdown_on_down = true;
      i += 2;
    } else if (o == "check") {
      s.check = true;
      ++i;
    } else if (o == "no-check") {
      s.check = false;
      ++i;
    } else if (o == "backup") {
      s.backup = true;
      ++i;
    } else if (o == "disabled") {
      s.disabled = true;
      ++i;
    } else if (o == "enabled") {
      s.disabled = false;
      ++i;
    } else if (std::find(std::begin(kHaproxyOpts), std::end(kHaproxyOpts), o) != std::end(kHaproxyOpts)) {
      throw ConfigError{fmt::format("{} : '{}' is not supported by sluice yet.", head, o)};
    } else {
      throw ConfigError{fmt::format("{} : unknown keyword '{}'{}", head, o, did_you_mean(o, kOpts))};
    }
  }
}

void kw_server(Parser& p, Line& l) {
  ProxyState& ps = p.cur_proxy();
  ProxyConfig& px = ps.cfg;
  if (l.args.size() < 3)
    throw ConfigError{l.where + "'server' expects <name> and <addr>[:<port>] as arguments."};
  ServerConfig s = px.default_server;
  s.loc = l.loc;
  s.name = l.args[1];
  std::string head = fmt::format("[{}:{}] : 'server {}/{}'", l.loc.file, l.loc.line, px.name, s.name);
  for (char c : s.name)
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':' || c == '-'))
      throw ConfigError{fmt::format("{}character '{}' is not permitted in server name '{}'.", l.where, c, s.name)};
  s.addr_text = l.args[2];
  std::string addr = p.address_word(l, 2, "server");
  auto r = net::parse_server_address(addr);
  if (!r.ok()) throw ConfigError{fmt::format("{} : {}", head, r.error().message)};
  s.addr = r.value();
  parse_server_options(p, l, 3, s, head);
  px.servers.push_back(std::move(s));
}

// `default-server [options]`: the settings every later `server` line of the section (and of
// the sections that inherit from this defaults section) starts from.
void kw_default_server(Parser& p, Line& l) {
  ProxyConfig& px = p.cur_proxy().cfg;
  std::string head = fmt::format("[{}:{}] : 'default-server'", l.loc.file, l.loc.line);
  ServerConfig s = px.default_server;
  parse_server_options(p, l, 1, s, head);
  px.default_server = std::move(s);
}

// http-check send [meth <m>] [uri <u>] [ver <v>] [hdr <name> <value>]... [body <s>]
// http-check expect [!] status <codes> | rstatus <regex> | string <text>
void kw_http_check(Parser& p, Line& l) {
  ProxyConfig& px = p.cur_proxy().cfg;
  HttpCheckConfig& hc = px.http_check;
  std::string sub = l.args.size() > 1 ? l.args[1] : "";
  if (sub == "send") {
    for (std::size_t i = 2; i < l.args.size();) {
      const std::string& o = l.args[i];
      std::size_t need = o == "hdr" ? 2 : 1;
      if (o != "meth" && o != "uri" && o != "ver" && o != "hdr" && o != "body")
        throw ConfigError{fmt::format("{}'http-check send' : unknown argument '{}' (expects 'meth', 'uri', 'ver', 'hdr' or 'body').", l.where, o)};
      if (i + need >= l.args.size())
        throw ConfigError{fmt::format("{}'http-check send' : '{}' expects {}.", l.where, o,
                                      o == "hdr" ? "<name> and <value> as arguments" : "a value")};
      const std::string& v = l.args[i + 1];
      if (o == "meth") {
        hc.method = v;
      } else if (o == "uri") {
        hc.uri = v;
      } else if (o == "ver") {
        hc.version = v;
      } else if (o == "hdr") {
        hc.headers.emplace_back(v, l.args[i + 2]);
      } else if (o == "body") {
        hc.body = v;
      } else {
        throw ConfigError{fmt::format("{}'http-check send' : unknown argument '{}' (expects 'meth', 'uri', 'ver', 'hdr' or 'body').", l.where, o)};
      }
      i += need + 1;
    }
    return;
  }
  if (sub == "expect") {
    std::size_t i = 2;
    bool negate = false;
    if (i < l.args.size() && l.args[i] == "!") {
      negate = true;
      ++i;
    }
    std::string what = i < l.args.size() ? l.args[i] : "";
    static const std::pair<std::string_view, HttpCheckConfig::Expect> kKinds[] = {
        {"status", HttpCheckConfig::Expect::kStatus},
        {"rstatus", HttpCheckConfig::Expect::kRstatus},
        {"string", HttpCheckConfig::Expect::kString}};
    const HttpCheckConfig::Expect* kind = nullptr;
    for (const auto& [n, k] : kKinds)
      if (what == n) kind = &k;
    if (!kind) {
      static constexpr std::string_view kOther[] = {"rstring", "hdr", "fhdr", "custom"};
      if (std::find(std::begin(kOther), std::end(kOther), what) != std::end(kOther))
        throw ConfigError{fmt::format("{}'http-check expect {}' is not supported by sluice yet.", l.where, what)};
      throw ConfigError{fmt::format("{}'http-check expect' : unknown match '{}' (expects 'status', 'rstatus' or 'string').", l.where, what)};
    }
    if (i + 1 >= l.args.size())
      throw ConfigError{fmt::format("{}'http-check expect {}' expects a pattern as argument.", l.where, what)};
    const std::string& arg = l.args[i + 1];
    if (*kind == HttpCheckConfig::Expect::kRstatus) {
      base::Regex re;
      std::string why;
      if (!re.compile(arg, &why))
        throw ConfigError{fmt::format("{}'http-check expect rstatus' : invalid regex '{}' ({}).", l.where, arg, why)};
    }
    if (*kind == HttpCheckConfig::Expect::kStatus) {
      for (char c : arg)
        if (!(std::isdigit(static_cast<unsigned char>(c)) || c == ',' || c == '-'))
          throw ConfigError{fmt::format("{}'http-check expect status' : invalid status list '{}'.", l.where, arg)};
    }
    if (i + 2 < l.args.size())
      throw ConfigError{fmt::format("{}'http-check expect' : unexpected argument '{}' (options such as 'min-recv' and 'comment' are not supported by sluice yet).", l.where, l.args[i + 2])};
    hc.expect = *kind;
    hc.expect_negate = negate;
    hc.expect_arg = arg;
    return;
  }
  static constexpr std::string_view kOther[] = {"comment", "connect", "disable-on-404",
                                                "send-state", "set-var", "unset-var"};
  if (std::find(std::begin(kOther), std::end(kOther), sub) != std::end(kOther))
    throw ConfigError{fmt::format("{}'http-check {}' is not supported by sluice yet.", l.where, sub)};
  throw ConfigError{fmt::format("{}'http-check' : unknown keyword '{}' (expects 'send' or 'expect').", l.where, sub)};
}

void kw_balance(Parser& p, Line& l) {
  ProxyConfig& px = p.cur_proxy().cfg;
  std::string a = l.args.size() > 1 ? l.args[1] : "";
  if (a.empty()) throw ConfigError{l.where + "'balance' expects an algorithm name."};
  // HAProxy ignores words after the algorithm (uri's len/depth/whole, ...); so does sluice.
  static const std::pair<std::string_view, Balance> kPlain[] = {
      {"roundrobin", Balance::kRoundRobin}, {"static-rr", Balance::kStaticRr},
      {"leastconn", Balance::kLeastConn},   {"first", Balance::kFirst},
      {"source", Balance::kSource},         {"uri", Balance::kUri},
  };
  for (const auto& [n, b] : kPlain) {
    if (a == n) {
      px.balance = b;
      return;
    }
  }
  if (a.rfind("random", 0) == 0 && (a.size() == 6 || a[6] == '(')) {
    int draws = 2;
    if (a.size() > 7 && a[7] != ')') {   // random(<draws>), as HAProxy: strtol then ')'
      const char* beg = a.c_str() + 7;
      char* end = nullptr;
      long v = strtol(beg, &end, 0);
      if (*end != ')') {
        if (!*end) throw ConfigError{fmt::format("{}balance {} : expects ')' at the end of argument.", l.where, a)};
        throw ConfigError{fmt::format("{}balance {} : unexpected character '{}' after argument.", l.where, a, *end)};
      }
      if (v < 1 || v > INT_MAX)
        throw ConfigError{fmt::format("{}balance {} : number of draws must be at least 1.", l.where, a)};
      draws = static_cast<int>(v);
    }
    px.balance = Balance::kRandom;
    px.balance_draws = draws;
    return;
  }
  if (a.rfind("hdr(", 0) == 0) {
    std::size_t close = a.find(')', 4);
    if (close == std::string::npos || close == 4)
      throw ConfigError{l.where + "balance hdr requires an http header field name."};
    px.balance = Balance::kHdr;
    px.balance_hdr = a.substr(4, close - 4);
    return;
  }
  static constexpr std::string_view kKnown[] = {"url_param", "rdp-cookie", "hash", "log-hash", "sticky"};
  std::string base_name = a.substr(0, a.find('('));
  if (std::find(std::begin(kKnown), std::end(kKnown), base_name) != std::end(kKnown))
    throw ConfigError{fmt::format("{}balance '{}' is not supported by sluice yet.", l.where, a)};
  std::vector<std::string_view> names(std::begin(kKnown), std::end(kKnown));
  for (const auto& [n, b] : kPlain) names.push_back(n);
  names.push_back("random");
  names.push_back("hdr");
  throw ConfigError{fmt::format("{}'balance' : unknown balancing algorithm '{}'{}", l.where, a,
                                did_you_mean(a, names))};
}

// hash-type map-based|consistent [sdbm|djb2|wt6|crc32|none [avalanche]], HAProxy's messages.
void kw_hash_type(Parser& p, Line& l) {
  ProxyConfig& px = p.cur_proxy().cfg;
  std::string t = l.args.size() > 1 ? l.args[1] : "";
  if (t == "consistent") {
    px.hash_consistent = true;
  } else if (t == "map-based") {
    px.hash_consistent = false;
  } else if (t == "avalanche") {
    throw ConfigError{fmt::format("{}experimental feature 'hash-type avalanche' is not supported anymore, "
                                  "please use 'hash-type map-based sdbm avalanche' instead.", l.where)};
  } else {
    throw ConfigError{l.where + "'hash-type' only supports 'consistent' and 'map-based'."};
  }
  px.hash_avalanche = false;
  px.hash_function = HashFunction::kSdbm;
  if (l.args.size() < 3) {
    px.hash_avalanche = px.hash_consistent;   // consistent alone: sdbm + avalanche
    return;
  }
  static const std::pair<std::string_view, HashFunction> kFns[] = {
      {"sdbm", HashFunction::kSdbm}, {"djb2", HashFunction::kDjb2}, {"wt6", HashFunction::kWt6},
      {"crc32", HashFunction::kCrc32}, {"none", HashFunction::kNone}};
  bool found = false;
  for (const auto& [n, f] : kFns) {
    if (l.args[2] == n) {
      px.hash_function = f;
      found = true;
    }
  }
  if (!found)
    throw ConfigError{l.where + "'hash-type' only supports 'sdbm', 'djb2', 'crc32', or 'wt6' hash functions."};
  if (l.args.size() > 3) {
    if (l.args[3] != "avalanche")
      throw ConfigError{l.where + "'hash-type' only supports 'avalanche' as a modifier for hash functions."};
    px.hash_avalanche = true;
  }
  no_extra(l, 4);
}

void kw_id(Parser& p, Line& l) {
  if (l.args.size() < 2) throw ConfigError{l.where + "'id' expects an integer argument."};
  auto n = parse_strict_int(l.args[1], LLONG_MIN, LLONG_MAX);
  if (!n) throw ConfigError{fmt::format("{}'id' expects an integer argument, got '{}'.", l.where, l.args[1])};
  if (*n <= 0 || *n > INT_MAX) throw ConfigError{l.where + "custom id has to be > 0."};
  no_extra(l, 2);
  p.cur_proxy().cfg.id = static_cast<int>(*n);
}

void kw_disabled(Parser& p, Line& l) {
  no_extra(l, 1);
  p.cur_proxy().cfg.disabled = true;
}

void kw_enabled(Parser& p, Line& l) {
  no_extra(l, 1);
  p.cur_proxy().cfg.disabled = false;
}

void kw_description(Parser& p, Line& l) {
  if (l.args.size() < 2) throw ConfigError{l.where + "'description' expects a string argument."};
  std::string d;
  for (std::size_t i = 1; i < l.args.size(); ++i) d += (i > 1 ? " " : "") + l.args[i];
  p.cur_proxy().cfg.description = d;
}

// ---- capture request|response header ----

void kw_capture(Parser& p, Line& l) {
  const std::string kind = l.args.size() > 1 ? l.args[1] : "";
  if (kind == "cookie")
    throw ConfigError{l.where + "'capture cookie' is not supported by sluice yet."};
  if (kind != "request" && kind != "response")
    throw ConfigError{l.where + "'capture' expects 'cookie' or 'request header' or 'response header'."};
  if (l.args.size() != 6 || l.args[2] != "header" || l.args[4] != "len")
    throw ConfigError{fmt::format("{}'capture {}' expects 'header' <header_name> 'len' <len>.",
                                  l.where, kind)};
  auto len = parse_strict_int(l.args[5], 1, 65535);
  if (!len)
    throw ConfigError{fmt::format("{}'capture {} header' : invalid length '{}', expects 1 to 65535.",
                                  l.where, kind, l.args[5])};
  ProxyConfig& px = p.cur_proxy().cfg;
  if (px.capture_request.empty() && px.capture_response.empty()) px.capture_loc = l.loc;
  (kind == "request" ? px.capture_request : px.capture_response)
      .push_back(CaptureConfig{l.args[3], static_cast<int>(*len)});
}

// ---- stats: the HTTP statistics page ----

void kw_stats(Parser& p, Line& l) {
  static constexpr std::string_view kExpects =
      "expects 'uri', 'realm', 'auth', 'scope', 'enable', 'refresh', 'hide-version', 'show-node', "
      "'show-desc' or 'show-legends'";
  StatsPageConfig& st = p.cur_proxy().cfg.stats;
  if (l.args.size() < 2)
    throw ConfigError{fmt::format("{}missing keyword in 'stats', {}.", l.where, kExpects)};
  const std::string& kw = l.args[1];
  const std::string arg = l.args.size() > 2 ? l.args[2] : "";
  auto enable = [&] {
    if (!st.enabled) st.loc = l.loc;
    st.enabled = true;
  };
  auto no_more = [&](std::size_t n) {
    if (l.args.size() > n)
      throw ConfigError{fmt::format("{}'stats {}' : unexpected extra argument '{}'.", l.where, kw,
                                    l.args[n])};
  };
  if (kw == "enable") {
    no_more(2);
    enable();
  } else if (kw == "uri") {
    if (arg.empty()) throw ConfigError{l.where + "'uri' needs an URI prefix."};
    no_more(3);
    st.uri = arg;
    enable();
  } else if (kw == "realm") {
    if (arg.empty()) throw ConfigError{l.where + "'realm' needs an realm name."};
    no_more(3);
    st.realm = arg;
    enable();
  } else if (kw == "refresh") {
    if (arg.empty()) throw ConfigError{l.where + "'refresh' needs a refresh delay."};
    auto t = parse_time(arg, TimeUnit::kS);
    check_time_range(l, t, arg, "stats refresh");
    if (t.status != TimeValue::Status::kOk)
      throw ConfigError{fmt::format("{}unexpected character '{}' in argument to stats refresh "
                                    "interval.", l.where, t.bad)};
    no_more(3);
    st.refresh_s = t.value;
    enable();
  } else if (kw == "auth") {
    if (arg.empty()) throw ConfigError{l.where + "'auth' needs a user:password account."};
    if (arg.find(':') == std::string::npos)
      throw ConfigError{fmt::format("{}'stats auth' : '{}' is not a user:password account.",
                                    l.where, arg)};
    no_more(3);
    st.auth.push_back(arg);
    enable();
  } else if (kw == "scope") {
    if (arg.empty()) throw ConfigError{l.where + "'scope' needs a proxy name."};
    no_more(3);
    st.scope.push_back(arg);
    enable();
  } else if (kw == "hide-version") {
    no_more(2);
    st.hide_version = true;
  } else if (kw == "show-legends") {
    no_more(2);
    st.show_legends = true;
  } else if (kw == "show-node") {
    no_more(3);
    st.show_node = true;
    st.node = arg;
  } else if (kw == "show-desc") {
    st.show_desc = true;
    st.desc.clear();
    for (std::size_t i = 2; i < l.args.size(); ++i) st.desc += (i > 2 ? " " : "") + l.args[i];
  } else if (kw == "admin" || kw == "http-request" || kw == "show-modules") {
    // Admin actions from the page (POST) and its access rules are not implemented: accepting
    // the line would hand an operator a page that silently refuses what it was told to allow.
    throw ConfigError{fmt::format("{}'stats {}' is not supported yet.", l.where, kw)};
  } else if (kw == "socket" || kw == "timeout" || kw == "maxconn" || kw == "bind-process") {
    throw ConfigError{fmt::format("{}'stats {}' is only allowed in the 'global' section.",
                                  l.where, kw)};
  } else {
    throw ConfigError{fmt::format("{}unknown stats parameter '{}', {}.", l.where, kw, kExpects)};
  }
}

// ---- HTTP: acl, http-request/response, use_backend, http-reuse, errorfile ----

// acl / http-request / http-response: HAProxy allows them in named defaults sections only, with
// rules that its proxies inherit; sluice does not support rules in defaults yet.
void refuse_rules_in_defaults(Parser& p, const Line& l) {
  ProxyState& ps = p.cur_proxy();
  if (!ps.is_defaults) return;
  if (ps.defaults_name.empty())
    throw ConfigError{fmt::format("{}'{}' not allowed in anonymous 'defaults' section.", l.where, l.args[0])};
  throw ConfigError{fmt::format("{}'{}' in a 'defaults' section is not supported by sluice yet.", l.where, l.args[0])};
}

std::vector<std::string> tail(const Line& l, std::size_t from) {
  return std::vector<std::string>(l.args.begin() + static_cast<std::ptrdiff_t>(std::min(from, l.args.size())),
                                  l.args.end());
}

void kw_acl(Parser& p, Line& l) {
  refuse_rules_in_defaults(p, l);
  auto r = p.cur_proxy().cfg.acls.parse_acl(tail(l, 1));
  if (!r.ok()) throw ConfigError{l.where + r.error().message};
}

void kw_http_rule(Parser& p, Line& l) {
  refuse_rules_in_defaults(p, l);
  ProxyConfig& px = p.cur_proxy().cfg;
  bool req = l.args[0] == "http-request";
  auto side = req ? rules::RuleSide::kRequest : rules::RuleSide::kResponse;
  auto& list = req ? px.http_request_rules : px.http_response_rules;
  // Relative `file` paths are relative to the working directory, as in HAProxy.
  auto r = rules::parse_http_rule(tail(l, 1), side, px.acls, "");
  if (!r.ok()) {
    std::string msg = r.error().message;
    const std::string head = "error detected while parsing '";
    if (msg.rfind(head, 0) == 0)
      msg = fmt::format("error detected in {} '{}' while parsing '{}", Parser::type_word(px), px.name,
                        msg.substr(head.size()));
    // A bad rule aborts the whole load, as in HAProxy.
    p.fatal(l.where + msg);
    throw AbortLoad{};
  }
  if (!list.empty() && list.back().is_final() && list.back().cond.empty())
    p.warning(fmt::format("{}previous '{}' action is final and has no condition attached, further "
                          "entries are NOOP.", l.where, l.args[0]));
  for (const auto& w : r.value().warnings) p.warning(l.where + w);
  std::string raw = payload_fetch_refusal(r.value().cond, req ? "an 'http-request' rule" : "an 'http-response' rule", px);
  if (!raw.empty()) throw ConfigError{l.where + raw};
  list.push_back(std::move(r.value()));
}

// ---- tcp-request connection|content|inspect-delay ----

void kw_tcp_request(Parser& p, Line& l) {
  ProxyState& ps = p.cur_proxy();
  ProxyConfig& px = ps.cfg;
  const std::string in = fmt::format("{} '{}'", Parser::type_word(px), px.name);
  if (l.args.size() < 2 || l.args[1].empty())
    throw ConfigError{fmt::format("{}missing argument for 'tcp-request' in {}", l.where, in)};
  const std::string& stage = l.args[1];
  if (stage == "session")
    throw ConfigError{l.where + "'tcp-request session' is not supported by sluice yet."};
  if (stage != "connection" && stage != "content" && stage != "inspect-delay")
    throw ConfigError{fmt::format("{}'tcp-request' expects 'inspect-delay', 'connection', or "
                                  "'content' in {} (got '{}')", l.where, in, stage)};
  if (ps.is_defaults) {
    // HAProxy lets proxies inherit these from named defaults sections only.
    if (ps.defaults_name.empty())
      throw ConfigError{fmt::format("{}tcp-request {} is not allowed in anonymous 'defaults' "
                                    "sections", l.where, stage)};
    throw ConfigError{fmt::format("{}'tcp-request {}' in a 'defaults' section is not supported by "
                                  "sluice yet.", l.where, stage)};
  }
  if (!(px.caps & kFe)) {
    if (stage == "connection")
      throw ConfigError{fmt::format("{}tcp-request connection is not allowed because {} is not a "
                                    "frontend", l.where, in)};
    // HAProxy runs backend content rules once a stream reaches the backend; sluice not yet.
    throw ConfigError{fmt::format("{}'tcp-request {}' in a backend is not supported by sluice yet.",
                                  l.where, stage)};
  }
  if (stage == "inspect-delay") {
    const std::string kw = "'tcp-request inspect-delay'";
    if (l.args.size() < 3 || l.args[2].empty())
      throw ConfigError{fmt::format("{}{} expects a positive delay in milliseconds, in {}", l.where,
                                    kw, in)};
    auto t = parse_time(l.args[2], TimeUnit::kMs);
    if (t.status == TimeValue::Status::kBadChar || t.status == TimeValue::Status::kEmpty)
      throw ConfigError{fmt::format("{}{} expects a positive delay in milliseconds, in {} "
                                    "(unexpected character '{}')", l.where, kw, in, t.bad)};
    check_time_range(l, t, l.args[2], "tcp-request inspect-delay");
    no_extra(l, 3);
    if (t.trailing) p.warning(time_trailing_warning(t.trailing, l.args[2]));
    px.tcp_inspect_delay_ms = t.value;
    return;
  }
  const bool conn = stage == "connection";
  auto r = rules::parse_tcp_rule(tail(l, 2), conn ? rules::TcpRuleStage::kConnection
                                                  : rules::TcpRuleStage::kContent, px.acls);
  if (!r.ok()) throw ConfigError{l.where + r.error().message};
  // Connection rules always run first, whatever the order of the lines (HAProxy's warning).
  if (conn && !px.tcp_request_content.empty())
    p.warning(l.where + "a 'tcp-request' rule placed after a 'tcp-request content' rule will still "
                        "be processed before.");
  (conn ? px.tcp_request_connection : px.tcp_request_content)
      .push_back(TcpRuleConfig{l.loc, std::move(r.value())});
}

// ---- monitor-uri, monitor fail ----

void kw_monitor_uri(Parser& p, Line& l) {
  if (l.args.size() < 2 || l.args[1].empty())
    throw ConfigError{l.where + "'monitor-uri' expects an URI."};
  if (l.args.size() > 2)
    throw ConfigError{fmt::format("{}'monitor-uri' cannot handle unexpected argument '{}'.",
                                  l.where, l.args[2])};
  ProxyConfig& px = p.cur_proxy().cfg;
  px.monitor_uri = l.args[1];
  px.monitor_uri_loc = l.loc;
}

void kw_monitor(Parser& p, Line& l) {
  if (l.args.size() < 2 || l.args[1] != "fail")
    throw ConfigError{l.where + "'monitor' only supports 'fail'."};
  if (l.args.size() < 4 || (l.args[2] != "if" && l.args[2] != "unless"))
    throw ConfigError{l.where + "'monitor fail' requires either 'if' or 'unless' followed by a "
                                "condition."};
  ProxyConfig& px = p.cur_proxy().cfg;
  auto c = rules::parse_condition(tail(l, 2), px.acls);
  if (!c.ok())
    throw ConfigError{fmt::format("{}error detected while parsing a 'monitor fail' condition : {}.",
                                  l.where, c.error().message)};
  if (px.monitor_fail.empty()) px.monitor_fail_loc = l.loc;
  px.monitor_fail.push_back(std::move(c.value()));
}

void kw_use_backend(Parser& p, Line& l) {
  ProxyConfig& px = p.cur_proxy().cfg;
  if (l.args.size() < 2 || l.args[1].empty())
    throw ConfigError{fmt::format("{}'{}' expects a backend name.", l.where, l.args[0])};
  UseBackendConfig ub;
  ub.loc = l.loc;
  ub.name = l.args[1];
  if (ub.name.find("%[") != std::string::npos)
    throw ConfigError{fmt::format("{}'use_backend' with a dynamic name ('{}') is not supported by sluice yet.",
                                  l.where, ub.name)};
  if (l.args.size() > 2) {
    if (l.args[2] != "if" && l.args[2] != "unless")
      throw ConfigError{fmt::format("{}unexpected keyword '{}' after switching rule, only 'if' and "
                                    "'unless' are allowed.", l.where, l.args[2])};
    auto c = rules::parse_condition(tail(l, 2), px.acls);
    if (!c.ok())
      throw ConfigError{fmt::format("{}error detected while parsing switching rule : {}.", l.where,
                                    c.error().message)};
    ub.cond = std::move(c.value());
    if (const rules::Acl* a = ub.cond.response_only_acl())
      p.warning(fmt::format("{}acl '{}' will never match because it only involves keywords that are "
                            "incompatible with 'use_backend' rules", l.where, a->name));
  }
  px.use_backends.push_back(std::move(ub));
}

void kw_http_reuse(Parser& p, Line& l) {
  static const std::pair<std::string_view, HttpReuse> kModes[] = {
      {"never", HttpReuse::kNever}, {"safe", HttpReuse::kSafe},
      {"aggressive", HttpReuse::kAggressive}, {"always", HttpReuse::kAlways}};
  std::string v = l.args.size() > 1 ? l.args[1] : "";
  for (const auto& [n, m] : kModes) {
    if (v == n) {
      no_extra(l, 2);
      p.cur_proxy().cfg.http_reuse = m;
      return;
    }
  }
  throw ConfigError{fmt::format("{}'{}' only supports 'never', 'safe', 'aggressive', 'always'", l.where, l.args[0])};
}

constexpr int kErrorCodes[] = {200, 400, 401, 403, 404, 405, 407, 408, 410, 413, 414,
                               421, 422, 425, 429, 431, 500, 501, 502, 503, 504};
constexpr std::size_t kMaxErrorFile = 15360;   // tune.bufsize - tune.maxrewrite

void kw_errorfile(Parser& p, Line& l) {
  if (l.args.size() != 3 || l.args[1].empty() || l.args[2].empty())
    throw ConfigError{fmt::format("{}'{}' expects <status_code> and <file> as arguments.", l.where, l.args[0])};
  auto code = parse_strict_int(l.args[1], 0, 999);
  if (!code || std::find(std::begin(kErrorCodes), std::end(kErrorCodes), *code) == std::end(kErrorCodes))
    throw ConfigError{fmt::format("{}status code '{}' not handled.", l.where, l.args[1])};
  const std::string& file = l.args[2];
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError{fmt::format("{}error opening file '{}'.", l.where, file)};
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec) && std::filesystem::is_directory(file, ec))
    throw ConfigError{fmt::format("{}error reading file '{}'.", l.where, file)};
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw ConfigError{fmt::format("{}error reading file '{}'.", l.where, file)};
  std::string data = ss.str();
  if (data.size() > kMaxErrorFile)
    throw ConfigError{fmt::format("{}error file '{}' is too large ({} bytes, at most {}).", l.where, file,
                                  data.size(), kMaxErrorFile)};
  if (!data.empty()) {
    // The file must be a complete response head; a body must match its Content-Length.
    http::ResponseParser parser;
    auto st = parser.parse(data);
    if (st != http::ParseStatus::kComplete)
      throw ConfigError{fmt::format("{}'{}': unable to parse headers ({}).", l.where, file,
                                    st == http::ParseStatus::kIncomplete ? "incomplete response head"
                                                                          : http::to_string(parser.error()))};
    const auto& h = parser.head();
    std::size_t body = data.size() - parser.consumed();
    if (h.body == http::BodyKind::kChunked)
      throw ConfigError{fmt::format("{}'{}': chunk-encoded payload not supported.", l.where, file)};
    if (h.has_content_length && h.content_length != body)
      throw ConfigError{fmt::format("{}'{}': payload size does not match the announced content-length "
                                    "({} != {}).", l.where, file, body, h.content_length)};
  }
  auto& list = p.cur_proxy().cfg.errorfiles;
  int status = static_cast<int>(*code);
  list.erase(std::remove_if(list.begin(), list.end(), [&](const ErrorFileConfig& e) { return e.status == status; }),
             list.end());
  list.push_back(ErrorFileConfig{status, std::move(data), l.loc});
}

constexpr unsigned kDFLB = kInProxies;
constexpr unsigned kDFL = kInDefaults | kInFrontend | kInListen;
constexpr unsigned kDLB = kInDefaults | kInListen | kInBackend;
constexpr unsigned kFL = kInFrontend | kInListen;
constexpr unsigned kLB = kInListen | kInBackend;
constexpr unsigned kFLB = kInFrontend | kInListen | kInBackend;

const std::vector<KeywordDef> kProxyKeywords = {
    {"mode", kDFLB, 0, kw_mode, "tcp (default) | http. `log` and `spop` are not supported"},
    {"bind", kFL, kFe, kw_bind, "<addr>[,<addr>...] [name <s>] [maxconn <n>] [backlog <n>] [mode <octal>] [thread <set>] [shards <n>] [id <n>]"},
    {"default_backend", kDFL, kFe, kw_default_backend, "<backend>: where connections go"},
    {"timeout", kDFLB, 0, kw_timeout, "connect|client|server|tunnel|client-fin|server-fin|queue|check|http-request|http-keep-alive <time> (ms by default)"},
    {"maxconn", kDFL, kFe, kw_maxconn, "<n>: frontend connection limit (0 = global maxconn)"},
    {"backlog", kDFL, kFe, kw_backlog, "<n>: listen backlog"},
    {"retries", kDLB, kBe, kw_retries, "<n>: connection retries (default 3)"},
    {"clitcpka-cnt", kDFL, kFe, kw_tcpka, "<n>: keep-alive probes sent before a silent client connection is dropped (TCP_KEEPCNT, at most 127; 0 = system value); with option clitcpka/tcpka"},
    {"clitcpka-idle", kDFL, kFe, kw_tcpka, "<time>: idle time before the first keep-alive probe on a client connection (TCP_KEEPIDLE, seconds by default, at most 32767 s)"},
    {"clitcpka-intvl", kDFL, kFe, kw_tcpka, "<time>: time between keep-alive probes on a client connection (TCP_KEEPINTVL, seconds by default, at most 32767 s)"},
    {"srvtcpka-cnt", kDLB, kBe, kw_tcpka, "<n>: keep-alive probes sent before a silent server connection is dropped (TCP_KEEPCNT, at most 127; 0 = system value); with option srvtcpka/tcpka"},
    {"srvtcpka-idle", kDLB, kBe, kw_tcpka, "<time>: idle time before the first keep-alive probe on a server connection (TCP_KEEPIDLE, seconds by default, at most 32767 s)"},
    {"srvtcpka-intvl", kDLB, kBe, kw_tcpka, "<time>: time between keep-alive probes on a server connection (TCP_KEEPINTVL, seconds by default, at most 32767 s)"},
    {"option", kDFLB, 0, kw_option, "redispatch [<n>] | tcplog | httplog | dontlognull | allbackups | tcp-check | httpchk [<method>] [<uri>] [<version>] [<host>] | http-keep-alive | http-server-close | httpclose | forwardfor [...] | accept-unsafe-violations-in-http-request | clitcpka | srvtcpka | tcpka | nolinger | tcp-smart-connect (`no option` where negatable)"},
    {"log", kDFLB, 0, kw_log, "global | <target> [len <n>] [format <f>] <facility> [max [min]]; `no log` clears"},
    {"server", kLB, kBe, kw_server, "<name> <addr>[:port] [weight 0..256] [maxconn <n>] [backup] [disabled] [enabled] [slowstart <time>] [check] [inter|fastinter|downinter <time>] [rise|fall <n>] [port <n>] [addr <ip>] [on-marked-down shutdown-sessions]"},
    {"default-server", kDLB, kBe, kw_default_server, "[server options]: defaults for the `server` lines that follow"},
    {"http-check", kDLB, kBe, kw_http_check, "send [meth <m>] [uri <u>] [ver <v>] [hdr <n> <v>]... [body <s>] | expect [!] status <codes>|rstatus <regex>|string <text>"},
    {"balance", kDLB, kBe, kw_balance, "roundrobin (the default in sluice) | static-rr | leastconn | first | source | uri | hdr(<name>) | random[(<draws>)]; uri and hdr fall back to roundrobin in TCP mode"},
    {"hash-type", kDLB, kBe, kw_hash_type, "map-based | consistent [sdbm | djb2 | wt6 | crc32 | none [avalanche]]; default map-based sdbm, consistent alone adds avalanche"},
    {"id", kFLB, 0, kw_id, "<n>: proxy id, > 0 and unique (default: automatic from 2)"},
    {"disabled", kDFLB, 0, kw_disabled, "the proxy is not started"},
    {"enabled", kDFLB, 0, kw_enabled, "cancels `disabled`"},
    {"acl", kDFLB, 0, kw_acl, "<name> <criterion> [-i] [-m <method>] [-n] [--] <values>...: lines with the same name are ORed; see \"HTTP rules\" below for the criteria; not in defaults"},
    {"http-request", kDFLB, 0, kw_http_rule, "<action> [<args>] [if|unless <cond>]: set-header, add-header, del-header, replace-header, replace-value, set-path, deny, return, redirect, allow, use-service prometheus-exporter; not in defaults; ignored (warning) in TCP mode"},
    {"http-response", kDFLB, 0, kw_http_rule, "<action> [<args>] [if|unless <cond>]: set-header, add-header, del-header, replace-header, replace-value, deny, return, redirect location, allow; not in defaults; ignored (warning) in TCP mode"},
    {"tcp-request", kDFLB, 0, kw_tcp_request, "connection|content accept|reject [if|unless <cond>] | inspect-delay <time>: layer-4 conditions (src, src_port, dst, dst_port, always_true, always_false), and in TCP mode content rules also req.len, req.ssl_sni, req.ssl_hello_type, waiting up to inspect-delay for bytes that may still change the answer; frontends and listens; a connection reject closes with a reset before the session exists (counted in dcon, not logged), a content reject closes the session (dreq, logged PR)"},
    {"use_backend", kFL, kFe, kw_use_backend, "<backend> [if|unless <cond>]: the first matching rule chooses the backend, else default_backend; static names only; in TCP mode after the tcp-request content rules, on the bytes they saw (req.ssl_sni, ...)"},
    {"http-reuse", kDLB, kBe, kw_http_reuse, "never | safe (default) | aggressive | always: sharing of idle server connections"},
    {"errorfile", kDFLB, 0, kw_errorfile, "<code> <file>: raw HTTP response sent instead of the built-in page for 200, 400, 401, 403, 404, 405, 407, 408, 410, 413, 414, 421, 422, 425, 429, 431, 500..504; read and checked at parse time (complete head, at most 15360 bytes); an empty file sends nothing and closes"},
    {"monitor-uri", kDFLB, 0, kw_monitor_uri, "<uri>: a request for exactly this URI is answered 200 (the 200 page or `errorfile 200`), or 503 when a `monitor fail` condition holds, by the frontend, without a log line; HTTP mode; ignored with a warning in a backend"},
    {"monitor", kFL, 0, kw_monitor, "fail if|unless <cond>: makes `monitor-uri` answer 503 while the condition holds (several lines are ORed)"},
    {"capture", kFLB, 0, kw_capture, "request|response header <name> len <n>: the field's value (the last one when repeated), cut to <n> bytes, logged by option httplog as {a|b} in declaration order; frontends only (a backend warns); `capture cookie` is not supported yet"},
    {"stats", kDFLB, 0, kw_stats, "enable | uri <prefix> | refresh <delay> | realm <realm> | auth <user>:<password> | scope <proxy>|. | hide-version | show-legends | show-node [<name>] | show-desc [<text>]: the HTTP statistics page (HTML, `;csv`, `;typed`, `;json`), HTTP mode only; `stats admin` and `stats http-request` are not supported yet"},
    {"description", kFLB, 0, kw_description, "<text...>: kept with the proxy; HAProxy shows it on its HTML stats page, sluice's page (stats uri) does not show per-proxy descriptions"},
};

constexpr std::string_view kHaproxyProxy[] = {
    "compression", "cookie", "declare", "dynamic-cookie-key",
    "email-alert", "errorfiles", "errorloc", "errorloc302", "errorloc303",
    "external-check", "filter", "force-persist", "fullconn", "guid", "hash-balance-factor",
    "hash-key", "http-after-response", "http-error", "http-send-name-header", "ignore-persist", "load-server-state-from-file",
    "log-format", "log-format-sd", "log-steps", "log-tag", "max-keep-alive-queue", "max-session-srv-conns",
    "persist", "rate-limit", "redirect", "retry-on", "server-state-file-name",
    "server-template", "source", "stick", "stick-table", "tcp-check",
    "tcp-response", "unique-id-format", "unique-id-header", "use-fcgi-app", "use-server",
    "quic-initial", "error-log-format", "dispatch", "transparent",
};

}  // namespace

const std::vector<KeywordDef>& proxy_keyword_table() { return kProxyKeywords; }

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
        {"timeout", "check <time>", "whole health check (connect + response); default: the server's inter"},
        {"timeout", "queue <time>", "longest wait in the backend queue when every server is at its maxconn (default: `timeout connect`); on expiry the client is closed"},
        {"server", "enabled", "cancels `disabled`"},
        {"timeout", "connect <time>", "connection to a server"},
        {"timeout", "client <time>", "client inactivity"},
        {"timeout", "server <time>", "server inactivity"},
        {"timeout", "tunnel <time>", "inactivity once both sides are connected"},
        {"timeout", "client-fin <time>", "half-closed client side"},
        {"timeout", "server-fin <time>", "half-closed server side"},
        {"timeout", "http-request <time>", "HTTP: longest wait for a complete request head (408 on expiry); unset: only `timeout client` applies. Frontend side: in a backend it warns and is ignored"},
        {"timeout", "http-keep-alive <time>", "HTTP: idle time allowed between requests of a connection (silent close); unset: `timeout http-request`. Frontend side: in a backend it warns and is ignored"},
    };
    for (const auto& o : kOptions) d.push_back({"option", o.name, o.help});
    return d;
  }();
  return docs;
}

bool is_known_haproxy_proxy_keyword(std::string_view kw) {
  return std::find(std::begin(kHaproxyProxy), std::end(kHaproxyProxy), kw) != std::end(kHaproxyProxy);
}

}  // namespace sluice::config

// `server` and `default-server` lines and the server options they share.
#include "config/proxy_keywords.h"

#include <arpa/inet.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <climits>
#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "config/server_ssl.h"
#include "net/address.h"
#include "net/proxy_protocol.h"

namespace sluice::config::proxy_kw {

namespace {

bool literal_ip(const std::string& s) {
  net::SocketAddress a;
  return net::parse_ip_literal(s, &a);
}

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
    // QUIRK kept from HAProxy 3.5: the three check intervals share a message that names
    // 'agent-inter', and the caller adds a second final dot.
    if (o != "slowstart")
      throw ConfigError{fmt::format("{} : unexpected character '{}' in 'agent-inter' argument of server {}..",
                                    head, t.bad, srv)};
    throw ConfigError{fmt::format("{} : unexpected character '{}' in argument to <{}>.", head, t.bad, o)};
  }
  // Characters after a valid unit only warn, as for `timeout`.
  if (t.trailing) p.warning(time_trailing_warning(t.trailing, v));
  return t.value;
}

// `id <n>` and the idle-pool options (pool-max-conn, pool-low-conn, pool-purge-delay,
// max-reuse), HAProxy 3.5's messages. HAProxy reads the counts with atoi(); sluice wants
// integers.
void parse_pool_option(Parser& p, const Line& l, ServerConfig& s, const std::string& head,
                       const std::string& o, bool has_v, const std::string& v) {
  if (o == "id") {
    if (s.name.empty())
      throw ConfigError{fmt::format("[{}:{}] : 'id' option is not accepted in default-server sections",
                                    l.loc.file, l.loc.line)};
    if (!has_v || v.empty()) throw ConfigError{fmt::format("{} : 'id' : expects an integer argument.", head)};
    auto n = parse_strict_int(v, LLONG_MIN, LLONG_MAX);
    if (!n || *n < 1 || *n > 4294967295LL)
      throw ConfigError{fmt::format("{} : 'id' : custom id has to be between 1 and 4294967295..", head)};
    if (*n > INT_MAX)
      throw ConfigError{fmt::format("{} : 'id' : sluice takes ids up to {}, got '{}'.", head, INT_MAX, v)};
    s.id = static_cast<int>(*n);
    s.id_custom = true;
    return;
  }
  // QUIRK kept from HAProxy 3.5: these messages end with two dots.
  if (!has_v || v.empty()) throw ConfigError{fmt::format("{} : '{}' expects <value> as argument..", head, o)};
  if (o == "pool-purge-delay") {
    auto t = parse_time(v, TimeUnit::kMs);
    if (t.status == TimeValue::Status::kOverflow)
      throw ConfigError{fmt::format("{} : timer overflow in argument <{}> to <{}> of server {}, maximum value is 2147483647 ms (~24.8 days)..", head, v, o, s.name)};
    if (t.status != TimeValue::Status::kOk)
      throw ConfigError{fmt::format("{} : unexpected character '{}' in argument to <{}>..", head, t.bad, o)};
    if (t.trailing) p.warning(time_trailing_warning(t.trailing, v));
    s.pool_purge_delay_ms = t.value;
    return;
  }
  auto n = parse_strict_int(v, LLONG_MIN, LLONG_MAX);
  if (!n) throw ConfigError{fmt::format("{} : '{}' expects an integer argument, got '{}'.", head, o, v)};
  const long long lo = o == "pool-low-conn" ? 0 : -1;
  if (*n < lo || *n > INT_MAX)
    throw ConfigError{fmt::format("{} : '{}' must be >= {}.", head, o, lo)};
  (o == "pool-max-conn" ? s.pool_max_conn : o == "pool-low-conn" ? s.pool_low_conn : s.max_reuse) =
      static_cast<int>(*n);
}

// `set-proxy-v2-tlv-fmt(<id>) <fmt>`: a TLV of type <id> (0..255, decimal, octal or hex as
// strtoul reads it) that send-proxy-v2 adds with the format's value; the format is compiled
// once the proxy is known (Parser::compile_server_formats). HAProxy's messages. A missing
// format is an empty one (HAProxy sends the TLV empty).
ServerConfig::Pp2Tlv parse_pp2_tlv(std::string_view o, std::string_view fmt_text,
                                   const std::string& head) {
  constexpr std::string_view kw = "set-proxy-v2-tlv-fmt";
  std::string_view rest = o.substr(kw.size());
  if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')')
    throw ConfigError{fmt::format("{} : '{}' : expects set-proxy-v2-tlv(<TLV ID>).", head, o)};
  const std::string id(rest.substr(1, rest.size() - 2));
  char* end = nullptr;
  errno = 0;
  const unsigned long n = id.empty() || id.front() == '-' ? 0 : std::strtoul(id.c_str(), &end, 0);
  if (id.empty() || id.front() == '-' || errno != 0 || *end != '\0')
    throw ConfigError{fmt::format("{} : '{}' : could not convert TLV ID.", head, o)};
  if (n > 255)
    throw ConfigError{fmt::format("{} : '{}' : the maximum allowed TLV ID is 255.", head, o)};
  ServerConfig::Pp2Tlv t;
  t.type = static_cast<uint8_t>(n);
  t.text = std::string(fmt_text);
  return t;
}

// The options of a `server` or `default-server` line, from args[first] on, applied over `s`
// (which starts as the section's default-server settings).
void parse_server_options(Parser& p, const Line& l, std::size_t first, ServerConfig& s,
                          const std::string& head) {
  static const std::vector<std::string_view> kOpts = {
      "weight", "maxconn", "backup", "disabled", "enabled", "slowstart", "check", "no-check",
      "inter", "fastinter", "downinter", "rise", "fall", "port", "addr", "on-marked-down",
      "on-marked-up",
      "send-proxy", "send-proxy-v2", "no-send-proxy", "no-send-proxy-v2", "proxy-v2-options",
      "cookie", "id", "pool-max-conn", "pool-low-conn", "pool-purge-delay", "max-reuse",
      "init-addr", "set-proxy-v2-tlv-fmt", "check-send-proxy", "init-state", "track",
      "agent-check", "no-agent-check", "agent-port", "agent-addr", "agent-inter", "agent-send",
      "observe", "error-limit", "on-error", "socks4", "check-via-socks4", "ssl", "no-ssl",
      "verify", "verifyhost", "ca-file", "crl-file", "crt", "sni", "alpn", "ciphers",
      "ciphersuites", "curves", "sigalgs", "ssl-min-ver", "ssl-max-ver", "no-ssl-reuse",
      "no-tls-tickets", "check-ssl", "check-sni", "check-alpn"};
  static constexpr std::string_view kHaproxyOpts[] = {
      "maxqueue", "minconn",
      "proto",
      "redir", "resolvers", "resolve-prefer",
      "source", "ws", "tfo", "namespace",
      "usesrc", "resolve-opts", "guid", "hash-key",
      // HAProxy 3.2 to 3.5's.
      "pool-conn-name", "shard", "log-bufsize", "strict-maxconn",
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
    } else if (o == "agent-check" || o == "no-agent-check") {
      s.agent_check = o == "agent-check";
      ++i;
    } else if (o == "agent-port") {
      auto n = has_v ? parse_strict_int(v, 1, 65535) : std::nullopt;
      if (!n)
        throw ConfigError{fmt::format("{} : 'agent-port' expects a port number (1 to 65535), got '{}'.",
                                      head, v)};
      s.agent_port = static_cast<int>(*n);
      i += 2;
    } else if (o == "agent-addr") {
      auto r = has_v ? net::parse_server_address(v) : base::Result<net::ServerAddress>(base::Error::text(""));
      if (!r.ok() || r.value().addr.family() == AF_UNIX)
        throw ConfigError{fmt::format("{} : parsing agent-addr failed. Check if '{}' is correct address..",
                                      head, v)};
      s.has_agent_addr = true;
      s.agent_addr = r.value().addr;
      i += 2;
    } else if (o == "agent-inter") {
      if (!has_v) throw ConfigError{fmt::format("{} : '{}' expects <time> as argument.", head, o)};
      const uint32_t t = server_time(p, head, o, v, srv);
      if (t == 0)
        throw ConfigError{fmt::format("{} : '{}' expects a strictly positive delay, got '{}'.", head, o, v)};
      s.agent_inter_ms = t;
      i += 2;
    } else if (o == "agent-send") {
      if (!has_v) throw ConfigError{fmt::format("{} : 'agent-send' expects a string as argument.", head)};
      s.agent_send = v;
      i += 2;
    } else if (o == "inter" || o == "fastinter" || o == "downinter") {
      if (!has_v) throw ConfigError{fmt::format("{} : '{}' expects <time> as argument.", head, o)};
      uint32_t t = server_time(p, head, o, v, srv);
      if (t == 0)
        throw ConfigError{fmt::format("{} : '{}' expects a strictly positive delay, got '{}'.", head, o, v)};
      // A bare number is in milliseconds: `inter 10` was most likely meant as seconds. HAProxy
      // warns too; the wording here is the `timeout` warning's.
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
      // The check address gets the same legacy env expansion as the server's.
      v = p.address_word(l, i + 1, "addr");
      auto r = net::parse_server_address(v);
      if (!r.ok() || r.value().addr.family() == AF_UNIX)
        throw ConfigError{fmt::format("{} : 'addr' : invalid address '{}'.", head, v)};
      s.has_check_addr = true;
      s.check_addr = r.value().addr;
      i += 2;
    } else if (o == "init-addr") {
      s.init_addr.clear();
      std::string_view rest = v;
      while (!rest.empty()) {
        std::size_t comma = rest.find(',');
        std::string m(rest.substr(0, comma));
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        if (m.empty()) continue;
        if (m != "last" && m != "libc" && m != "none" && !literal_ip(m))
          throw ConfigError{fmt::format("{} : 'init-addr' : unknown init-addr method '{}', "
                                        "supported methods are 'libc', 'last', 'none'..", head, m)};
        s.init_addr.push_back(std::move(m));
      }
      i += 2;
    } else if (o == "on-marked-down") {
      if (v != "shutdown-sessions")
        throw ConfigError{fmt::format("{} : 'on-marked-down' expects 'shutdown-sessions' but got '{}'.", head, v)};
      s.shutdown_on_down = true;
      i += 2;
    } else if (o == "observe") {
      // HAProxy 3.5's messages, their double dots included.
      if (!has_v || v.empty())
        throw ConfigError{fmt::format("{} : 'observe' expects <mode> as argument..", head)};
      if (v == "none") {
        s.observe = 0;
      } else if (v == "layer4") {
        s.observe = 1;
      } else if (v == "layer7") {
        // HAProxy warns and leaves the server unobserved in a TCP proxy.
        if (p.cur_proxy().cfg.mode != Mode::kHttp)
          p.warning(fmt::format("{} : 'layer7' can only be used in http proxies..", head));
        else
          s.observe = 2;
      } else {
        throw ConfigError{fmt::format(
            "{} : 'observe' expects one of 'none', 'layer4', 'layer7' but got '{}'.", head, v)};
      }
      i += 2;
    } else if (o == "error-limit") {
      if (!has_v || v.empty())
        throw ConfigError{fmt::format("{} : 'error-limit' expects an integer argument..", head)};
      auto n = parse_strict_int(v, 1, INT_MAX);
      if (!n) throw ConfigError{fmt::format("{} : error-limit has to be > 0..", head)};
      s.error_limit = static_cast<int>(*n);
      i += 2;
    } else if (o == "on-error") {
      static constexpr std::string_view kOnError[] = {"fastinter", "fail-check", "sudden-death",
                                                       "mark-down"};
      const auto* it = std::find(std::begin(kOnError), std::end(kOnError), v);
      if (it == std::end(kOnError))
        throw ConfigError{fmt::format("{} : 'on-error' expects one of 'fastinter', 'fail-check', "
                                      "'sudden-death' or 'mark-down' but got '{}'.", head, v)};
      s.on_error = static_cast<uint8_t>(it - std::begin(kOnError));
      i += 2;
    } else if (o == "on-marked-up") {
      if (v != "shutdown-backup-sessions")
        throw ConfigError{fmt::format("{} : 'on-marked-up' expects 'shutdown-backup-sessions' but got '{}'.", head, v)};
      s.shutdown_backups_on_up = true;
      i += 2;
    } else if (o == "cookie") {
      // QUIRK kept from HAProxy 3.5: the message ends with two dots.
      if (v.empty())
        throw ConfigError{fmt::format("{} : 'cookie' expects <value> as argument..", head)};
      s.cookie = v;
      i += 2;
    } else if (o == "check") {
      s.check = true;
      ++i;
    } else if (o == "track") {
      if (!has_v || v.empty())
        throw ConfigError{fmt::format("{} : 'track' expects [<proxy>/]<server> as argument.", head)};
      s.track = v;
      i += 2;
    } else if (o == "init-state") {
      static constexpr std::string_view kStates[] = {"none", "fully-up", "up", "down", "fully-down"};
      const auto* st = std::find(std::begin(kStates), std::end(kStates), has_v ? v : "");
      if (st == std::end(kStates))
        throw ConfigError{fmt::format("{} : 'init-state' expects one of 'none', 'fully-up', 'up', "
                                      "'down', or 'fully-down' but got '{}'.", head, has_v ? v : "")};
      s.init_state = static_cast<uint8_t>(st - std::begin(kStates));
      i += 2;
    } else if (o == "socks4") {
      if (!has_v || v.empty())
        throw ConfigError{fmt::format("{} : 'socks4' expects <addr>:<port> as argument..", head)};
      auto r = net::parse_server_address(v);
      if (r.ok() && r.value().addr.family() == AF_UNIX)
        throw ConfigError{fmt::format("{} : 'socks4 {}' : a SOCKS4 proxy on a UNIX socket is not "
                                      "supported by sluice.", head, v)};
      if (r.ok() && (r.value().port_mapped || r.value().addr.port() == 0))
        throw ConfigError{fmt::format("{} : 'socks4 {}' : missing port specification in '{}'.",
                                      head, v, v)};
      if (!r.ok())
        throw ConfigError{fmt::format("{} : 'socks4 {}' : {}", head, v, r.error().message)};
      s.has_socks4 = true;
      s.socks4 = r.value().addr;
      i += 2;
    } else if (o == "check-via-socks4") {
      s.check_via_socks4 = true;
      ++i;
    } else if (o == "check-send-proxy") {
      s.check_send_proxy = true;
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
    } else if (o == "send-proxy" || o == "send-proxy-v2") {
      // A PROXY protocol header (v1 text, v2 binary) opens each connection to the server.
      s.send_proxy = o == "send-proxy" ? 1 : 2;
      ++i;
    } else if (o == "proxy-v2-options") {
      // What send-proxy-v2 adds as TLVs (added to what the line, or default-server, asked
      // already, as in HAProxy); HAProxy's words for an unknown one.
      std::string_view list = v;
      while (true) {
        const std::size_t comma = list.find(',');
        const std::string_view opt = list.substr(0, comma);
        if (opt == "unique-id") s.pp2_options |= net::pp::kOptUniqueId;
        else if (opt == "crc32c") s.pp2_options |= net::pp::kOptCrc32c;
        else if (opt == "authority") s.pp2_options |= net::pp::kOptAuthority;
        else if (opt == "ssl") s.pp2_options |= net::pp::kOptSsl;
        else if (opt == "cert-cn") s.pp2_options |= net::pp::kOptSsl | net::pp::kOptCertCn;
        else if (opt == "ssl-cipher") s.pp2_options |= net::pp::kOptSsl | net::pp::kOptSslCipher;
        else if (opt == "cert-sig") s.pp2_options |= net::pp::kOptSsl | net::pp::kOptCertSig;
        else if (opt == "cert-key") s.pp2_options |= net::pp::kOptSsl | net::pp::kOptCertKey;
        else
          throw ConfigError{fmt::format("{} : '{}' : proxy v2 option not implemented.", head, opt)};
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
      }
      i += 2;
    } else if (o == "send-proxy-v2-ssl" || o == "send-proxy-v2-ssl-cn") {
      // send-proxy-v2 with the client connection's TLS version (and its certificate's CN).
      s.send_proxy = 2;
      s.pp2_options |= net::pp::kOptSsl;
      if (o == "send-proxy-v2-ssl-cn") s.pp2_options |= net::pp::kOptCertCn;
      ++i;
    } else if (o == "no-send-proxy" || o == "no-send-proxy-v2") {
      if (s.send_proxy == (o == "no-send-proxy" ? 1 : 2)) s.send_proxy = 0;
      ++i;
    } else if (o == "id" || o == "pool-max-conn" || o == "pool-low-conn" || o == "pool-purge-delay" ||
               o == "max-reuse") {
      parse_pool_option(p, l, s, head, o, has_v, v);
      i += 2;
    } else if (o.rfind("set-proxy-v2-tlv-fmt", 0) == 0) {
      s.pp2_tlvs.push_back(parse_pp2_tlv(o, has_v ? v : std::string_view(), head));
      i += 2;
    } else if (std::size_t n = server_ssl_option(p, l, i, s, head); n > 0) {
      i += n;
    } else if (std::find(std::begin(kHaproxyOpts), std::end(kHaproxyOpts), o) != std::end(kHaproxyOpts)) {
      throw ConfigError{fmt::format("{} : '{}' is not supported by sluice yet.", head, o)};
    } else {
      throw ConfigError{fmt::format("{} : unknown keyword '{}'{}", head, o, did_you_mean(o, kOpts))};
    }
  }
}

}  // namespace

namespace {

// A host name that did not resolve (`failed`: the name the resolver refused), or (with
// init-addr) one that resolved (`failed` empty): the first init-addr method that gives an
// address wins, as in HAProxy.
void apply_init_addr(ServerConfig& s, const std::string& addr, const std::string& failed,
                     const std::string& head) {
  const bool resolved = failed.empty();
  std::string host = resolved ? net::split_host_port(addr).host : failed;
  if (resolved && literal_ip(host)) return;
  const bool written = !s.init_addr.empty();
  std::vector<std::string> methods = written ? s.init_addr : std::vector<std::string>{"last", "libc"};
  // The address with a placeholder host: its port (or port map) as written.
  auto with_host = [&](const std::string& ip) {
    std::string text = addr;
    std::size_t at = text.find(host);
    std::string rep = ip.find(':') != std::string::npos && !addr.starts_with("[") ? "[" + ip + "]" : ip;
    text.replace(at, host.size(), rep);
    auto r = net::parse_server_address(text);
    if (!r.ok()) throw ConfigError{fmt::format("{} : {}", head, r.error().message)};
    return r.value();
  };
  s.fqdn = host;
  for (const std::string& m : methods) {
    if (m == "last") {   // the server-state file's address, applied once it is read
      s.init_last = true;
      continue;
    }
    if (m == "libc") {
      if (resolved) return;
      continue;
    }
    if (m == "none") {
      s.addr = with_host("0.0.0.0");
      s.unresolved = true;
      return;
    }
    s.addr = with_host(m);
    return;
  }
  if (s.init_last) {   // only a saved address can give one
    s.addr = with_host("0.0.0.0");
    s.unresolved = s.needs_last = true;
    return;
  }
  throw ConfigError{fmt::format("{} : {} address '{}'.", head,
                                written ? "no method found to resolve" : "could not resolve", host)};
}

}  // namespace

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
  // A host name that does not resolve may still be fine: init-addr (after the options) says.
  const bool resolved = r.ok();
  static constexpr std::string_view kUnresolved = "could not resolve address '";
  if (!r.ok() && !r.error().message.starts_with(kUnresolved))
    throw ConfigError{fmt::format("{} : {}", head, r.error().message)};
  std::string failed;
  if (!resolved) {
    const std::string& m = r.error().message;
    failed = m.substr(kUnresolved.size(), m.rfind('\'') - kUnresolved.size());
  }
  if (resolved) s.addr = r.value();
  s.id_custom = false;
  s.id = 0;
  s.unresolved = false;
  parse_server_options(p, l, 3, s, head);
  finish_server_ssl(p, head, s);
  s.fqdn.clear();
  s.init_last = s.needs_last = false;
  // Every host name (not a UNIX socket): init-addr's `last` may apply to a resolved one too.
  const int family = s.addr.addr.family();
  if (!resolved || family == AF_INET || family == AF_INET6) apply_init_addr(s, addr, failed, head);
  if (s.id_custom)
    for (const ServerConfig& o : px.servers)
      if (o.id_custom && o.id == s.id)
        throw ConfigError{fmt::format("{} : 'id' : custom id {} already used at {}:{} ('server {}').",
                                      head, s.id, o.loc.file, o.loc.line, o.name)};
  // HAProxy: an agent without a port is no agent (a warning, the server stays).
  if (s.agent_check && s.agent_port == 0) {
    p.warning(fmt::format("{} : server {} does not have agent port. Agent check has been disabled.",
                          head, s.name));
    s.agent_check = false;
  }
  // HAProxy observes a server only when it checks it, without a word: say so.
  if (s.observe && !s.check)
    p.warning(fmt::format("{} : 'observe' has no effect without 'check'.", head));
  if (s.check && !s.track.empty())
    throw ConfigError{fmt::format("{} : unable to enable checks and tracking at the same time!", head)};
  // SOCKS4 carries an IPv4 destination only; HAProxy ignores check-via-socks4 without socks4.
  if (s.has_socks4 && !s.unresolved && s.addr.addr.family() != AF_INET)
    throw ConfigError{fmt::format("{} : 'socks4' : SOCKS4 can only reach an IPv4 address; the "
                                  "server's is '{}'.", head, s.addr_text)};
  if (s.check_via_socks4 && !s.has_socks4)
    p.warning(fmt::format("{} : 'check-via-socks4' has no effect without 'socks4'.", head));
  // The checks' TLS words do nothing when the checks are plain (no check-ssl, and no `ssl`
  // or a check port / addr of their own): say so rather than take them silently.
  s.tls.checks_use_tls = s.tls.check_ssl == 1 || (s.tls.check_ssl == -1 && s.tls.ssl &&
                                                   !s.check_port && !s.has_check_addr);
  if (!s.tls.checks_use_tls && (!s.tls.check_sni.empty() || !s.tls.check_alpn.empty()))
    p.warning(fmt::format("{} : '{}' has no effect: the checks of this server do not use TLS "
                          "(see 'check-ssl').", head,
                          s.tls.check_sni.empty() ? "check-alpn" : "check-sni"));
  // HAProxy takes proxy-v2-options without send-proxy-v2 and sends nothing: say so.
  if (s.pp2_options && s.send_proxy != 2)
    p.warning(fmt::format("{} : 'proxy-v2-options' has no effect without 'send-proxy-v2'.", head));
  if (!s.pp2_tlvs.empty() && s.send_proxy != 2)
    p.warning(fmt::format("{} : 'set-proxy-v2-tlv-fmt' has no effect without 'send-proxy-v2'.",
                          head));
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

}  // namespace sluice::config::proxy_kw

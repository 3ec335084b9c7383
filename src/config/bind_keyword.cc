// The `bind` line: its addresses and options.
#include "config/proxy_keywords.h"

#include <algorithm>
#include <climits>

#include <fmt/format.h>

#include "config/bind_ssl.h"
#include "config/thread_keywords.h"
#include "net/address.h"

namespace sluice::config::proxy_kw {

void kw_bind(Parser& p, Line& l) {
  if (l.args.size() < 2)
    throw ConfigError{l.where + "'bind' expects {<path>|[addr1]:port1[-end1]}{,[addr]:port[-end]}... "
                                "as arguments."};
  ProxyConfig& px = p.cur_proxy().cfg;
  BindConfig b;
  b.loc = l.loc;
  b.text = l.args[1];
  for (const auto& a : l.args) b.args_text += (b.args_text.empty() ? "" : " ") + a;
  // The global default (tune.listener.default-shards) in force now, not at the end of parsing.
  b.shards = p.global.default_shards;
  std::string addr = p.address_word(l, 1, "bind");
  auto r = net::parse_bind_address(addr);
  if (!r.ok()) throw ConfigError{fmt::format("{}'bind' : {}", l.where, r.error().message)};
  b.addrs = std::move(r.value());
  std::string head = fmt::format("{}'bind {}'", l.where, l.args[1]);
  static const std::vector<std::string_view> kOpts = {"name", "maxconn", "backlog", "mode",
                                                      "thread", "shards", "id", "accept-proxy"};
  static constexpr std::string_view kHaproxyOpts[] = {
      "accept-netscaler-cip", "allow-0rtt", "alpn", "ca-file", "crt", "crt-list",
      "defer-accept", "expose-fd", "gid", "group", "interface", "level", "namespace", "nice",
      "npn", "proto", "quic-cc-algo", "severity-output", "ssl", "strict-sni",
      "tcp-ut", "tls-ticket-keys", "transparent", "uid", "user", "v4v6",
      "v6only", "verify", "guid-prefix", "idle-ping", "mss",
  };
  for (std::size_t i = 2; i < l.args.size();) {
    const std::string& o = l.args[i];
    if (o == "accept-proxy" || o == "tfo") {   // flags: no value
      (o == "tfo" ? b.tfo : b.accept_proxy) = true;
      ++i;
      continue;
    }
    if (std::size_t n = bind_ssl_option(p, l, head, i, b)) {
      i += n;
      continue;
    }
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
  finish_bind_ssl(p, l, head, b);
  if (b.id > 0) {
    // The id names one listener: a list or a port range makes several, while shards are
    // clones of one that take the next ids, so they may carry one.
    if (b.addrs.size() > 1) throw ConfigError{head + " : 'id' can only be used with a single socket"};
    for (const auto& o : px.binds)
      if (o.id == b.id)
        throw ConfigError{fmt::format("{} : 'id' : custom id {} already used at {}:{} ('bind {}')", head,
                                      b.id, o.loc.file, o.loc.line, o.text)};
  }
  px.binds.push_back(std::move(b));
}

}  // namespace sluice::config::proxy_kw

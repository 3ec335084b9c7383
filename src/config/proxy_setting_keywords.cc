// Proxy settings: mode, default_backend, timeout, maxconn, backlog, retries, id,
// disabled / enabled and description.
#include "config/proxy_keywords.h"

#include <algorithm>
#include <climits>
#include <cstdint>

#include <fmt/format.h>

namespace sluice::config::proxy_kw {

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

void kw_default_backend(Parser& p, Line& l) {
  if (l.args.size() != 2)
    throw ConfigError{fmt::format("{}'{}' expects a backend name.", l.where, l.args[0])};
  p.cur_proxy().cfg.default_backend = l.args[1];
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
      {"tarpit", kFe | kBe, &Timeouts::tarpit},
  };
  static constexpr std::string_view kUnsupported[] = {"handshake", "client-hs"};
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

// `load-server-state-from-file global|local|none`, `server-state-file-name [<file>]`:
// HAProxy 3.5's messages.
void kw_server_state_from(Parser& p, Line& l) {
  ProxyConfig& px = p.cur_proxy().cfg;
  const std::string v = l.args.size() > 1 ? l.args[1] : "";
  if (l.args[0] == "server-state-file-name") {
    no_extra(l, 2);
    // "use-backend-name" (or nothing) names the file after the backend.
    px.state_file_name = v == "use-backend-name" ? std::string() : v;
    return;
  }
  using F = ProxyConfig::StateFrom;
  if (v == "global") px.state_from = F::kGlobal;
  else if (v == "local") px.state_from = F::kLocal;
  else if (v == "none") px.state_from = F::kNone;
  else
    throw ConfigError{fmt::format("{}'load-server-state-from-file' expects 'global', 'local' or "
                                  "'none'. Got '{}'", l.where, v)};
  no_extra(l, 2);
}

void kw_id(Parser& p, Line& l) {
  if (l.args.size() < 2) throw ConfigError{l.where + "'id' expects an integer argument."};
  auto n = parse_strict_int(l.args[1], LLONG_MIN, LLONG_MAX);
  if (!n) throw ConfigError{fmt::format("{}'id' expects an integer argument, got '{}'.", l.where, l.args[1])};
  if (*n <= 0 || *n > INT_MAX) throw ConfigError{l.where + "custom id has to be > 0."};
  no_extra(l, 2);
  p.cur_proxy().cfg.id = static_cast<int>(*n);
  p.cur_proxy().cfg.id_custom = true;
  p.cur_proxy().cfg.id_loc = l.loc;
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

}  // namespace sluice::config::proxy_kw

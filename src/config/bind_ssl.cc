// TLS on bind lines (`ssl`, `crt`, `alpn`, `ssl-min-ver`, `ciphers`, `verify`, ...) and the
// globals that set their defaults (ssl-default-bind-*, crt-base, ca-base, tune.ssl.*), with
// HAProxy 3.5's semantics and messages. The certificates are loaded as the line is parsed, so
// that `-c` reports a missing or broken one at its line.
#include "config/bind_ssl.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "config/tls_words.h"
#include "config/units.h"
#include "net/cert_store.h"
#include "net/crt_list.h"
#include "net/ticket_keys.h"

namespace sluice::config {

namespace {

// Options shared by bind lines and ssl-default-bind-options: how many words option `w` (at
// args[i]) takes, 0 when it is not one of them. `where` prefixes errors, `tail` ends them.
std::size_t common_option(const std::vector<std::string>& args, std::size_t i,
                          const std::string& where, net::tls::BindOptions& o, int& disabled,
                          bool& min_set, bool& max_set, std::string_view tail = "") {
  if (std::size_t n = tls_version_option(args, i, where, tail, o, disabled, min_set, max_set))
    return n;
  const std::string& w = args[i];
  if (w == "prefer-client-ciphers") {
    o.prefer_client_ciphers = true;
    return 1;
  }
  return 0;
}

// The ssl-bind-conf options a bind line and a crt-list line's brackets share (alpn, ciphers,
// ciphersuites, curves, ecdhe, ca-file, crl-file, verify): how many words the one at w[i]
// took, 0 when it is none of them. `warn` (null: nobody): told that h2/h3 are left out of alpn.
std::size_t bind_conf_option(const std::string& ca_base, Parser* warn,
                             const std::vector<std::string>& w, std::size_t i,
                             const std::string& where, net::tls::BindOptions& o) {
  const std::string& k = w[i];
  const bool has_v = i + 1 < w.size() && !w[i + 1].empty();
  const std::string v = has_v ? w[i + 1] : "";
  auto need = [&](std::string_view what) {
    if (!has_v) throw ConfigError{fmt::format("{}'{}' : missing {}", where, k, what)};
  };
  if (k == "alpn") {
    need("the comma-delimited ALPN protocol suite");
    o.alpn.clear();
    for (const auto& a : split_commas(v)) {
      if (a.empty() || a.size() > 255)
        throw ConfigError{fmt::format("{}'alpn' : invalid protocol name '{}'.", where, a)};
      // Offering a protocol sluice does not speak would have clients speak it: HTTP/2 or 3
      // bytes would reach the HTTP/1 parser (or a TCP-mode server) and fail.
      if (a == "h2" || a == "h3") {
        if (warn)
          warn->warning(fmt::format("{}'alpn' : '{}' is left out: sluice speaks HTTP/1.1 only, so "
                                "clients are offered the other protocols.", where, a));
        continue;
      }
      o.alpn.push_back(a);
    }
    return 2;
  }
  if (k == "ciphers" || k == "ciphersuites" || k == "curves" || k == "ecdhe") {
    need("the cipher suite");
    (k == "ciphers" ? o.ciphers : k == "ciphersuites" ? o.ciphersuites : o.curves) = v;
    return 2;
  }
  if (k == "ca-file" || k == "crl-file") {
    need(k == "ca-file" ? "CAfile path" : "CRLfile path");
    (k == "ca-file" ? o.ca_file : o.crl_file) = k == "ca-file" ? with_base(ca_base, v) : v;
    return 2;
  }
  if (k == "ca-verify-file") {
    need("CAfile path");
    const std::string path = with_base(ca_base, v);
    if (std::FILE* f = std::fopen(path.c_str(), "r")) {
      std::fclose(f);
    } else {
      throw ConfigError{fmt::format("{}'ca-verify-file' : unable to load {}", where, path)};
    }
    o.ca_verify_file = path;
    return 2;
  }
  if (k == "verify") {
    if (v == "none") o.verify = net::tls::Verify::kNone;
    else if (v == "optional") o.verify = net::tls::Verify::kOptional;
    else if (v == "required") o.verify = net::tls::Verify::kRequired;
    else
      throw ConfigError{fmt::format("{}'verify' : unknown verify method '{}', only 'none', "
                                    "'optional', and 'required' are supported", where, v)};
    return 2;
  }
  if (k == "npn")
    throw ConfigError{fmt::format("{}'npn' is not supported by sluice: NPN is obsolete (no browser "
                                  "uses it since 2016); use 'alpn'.", where)};
  if (k == "allow-0rtt" || k == "no-ca-names" || k == "ocsp-update")
    throw ConfigError{fmt::format("{}'{}' is not supported by sluice yet.", where, k)};
  return 0;
}

}  // namespace

void apply_crt_list_words(const std::vector<std::string>& w, const std::string& ca_base,
                          const std::string& where, net::tls::BindOptions& o, Parser* warn) {
  int disabled = 0;
  bool min_set = false, max_set = false;
  for (std::size_t i = 0; i < w.size();) {
    std::size_t n = 0;
    if (w[i] == "ssl-min-ver" || w[i] == "ssl-max-ver")
      n = common_option(w, i, where, o, disabled, min_set, max_set);
    else
      n = bind_conf_option(ca_base, warn, w, i, where, o);
    if (n == 0) throw ConfigError{fmt::format("{}unknown ssl keyword {}", where, w[i])};
    i += n;
  }
  if (min_set || max_set) resolve_tls_versions(o.min_version, o.max_version, disabled, where);
}

namespace {

// `crt-list <file>`: its lines become certificate sources of the bind line, in order.
void read_crt_list(Parser& p, const std::string& path, const std::string& where, BindTlsConfig& t) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw ConfigError{fmt::format("{}'crt-list' : cannot open file '{}' : {}.", where, path,
                                  std::strerror(errno))};
  std::ostringstream ss;
  ss << in.rdbuf();
  auto lines = net::tls::parse_crt_list(ss.str(), path);
  if (!lines.ok()) throw ConfigError{where + "'crt-list' : " + lines.error().message};
  t.crt_lists.emplace_back(path, lines.value());
  for (auto& l : lines.value()) {
    std::string crt = with_base(p.global.crt_base, l.crt);
    auto probe = net::tls::load_certificates(crt);
    if (!probe.ok()) throw ConfigError{where + "'crt-list' : " + probe.error().message};
    const std::string at = fmt::format("{}'crt-list' : parsing [{}:{}]: ", where, path, l.line);
    // The words are checked now (their errors name the list's line), applied at the line's end.
    net::tls::BindOptions scratch;
    apply_crt_list_words(l.options, p.global.ca_base, at, scratch, &p);
    t.options.crts.push_back({crt, nullptr, std::move(l.filters), path, l.line});
    t.entry_words.push_back(std::move(l.options));
    t.entry_where.push_back(at);
  }
}

}  // namespace

std::size_t bind_ssl_option(Parser& p, Line& l, const std::string& head, std::size_t i,
                            BindConfig& b) {
  const std::string& o = l.args[i];
  BindTlsConfig& t = b.tls;
  const std::string where = fmt::format("{} in section '{}' : ", head, p.cur_proxy().cfg.type);
  if (o == "ssl") {
    t.ssl = true;
    return 1;
  }
  if (o == "strict-sni") {
    t.options.strict_sni = true;
    return 1;
  }
  if (std::size_t n = common_option(l.args, i, where, t.options, t.disabled_versions, t.min_set,
                                    t.max_set))
    return n;
  const bool has_v = i + 1 < l.args.size();
  const std::string v = has_v ? l.args[i + 1] : "";
  auto need = [&](std::string_view what) {
    if (!has_v || v.empty())
      throw ConfigError{fmt::format("{}'{}' : missing {}", where, o, what)};
  };
  if (o == "crt") {
    need("certificate location");
    std::string path = with_base(p.global.crt_base, v);
    // Loaded now, so that an error names this line; the context is built at the line's end.
    auto probe = net::tls::load_certificates(path);
    if (!probe.ok()) throw ConfigError{where + probe.error().message};
    // A directory is a list of its files (line 0 each), which `show ssl crt-list` shows and
    // `add|del ssl crt-list` edit.
    if (auto files = net::tls::certificate_files(path);
        files.ok() && !(files.value().size() == 1 && files.value()[0] == path)) {
      std::vector<net::tls::CrtListLine> lines;
      for (const auto& f : files.value()) {
        lines.push_back({0, f, {}, {}});
        t.options.crts.push_back({f, nullptr, {}, path, 0});
        t.entry_words.emplace_back();
        t.entry_where.emplace_back();
      }
      t.crt_lists.emplace_back(path, std::move(lines));
      return 2;
    }
    t.options.crts.push_back({path, nullptr, {}, {}, 0});
    t.entry_words.emplace_back();
    t.entry_where.emplace_back();
    return 2;
  }
  if (o == "crt-list") {
    need("file path");
    read_crt_list(p, with_base(p.global.crt_base, v), where, t);
    return 2;
  }
  if (std::size_t n = bind_conf_option(p.global.ca_base, &p, l.args, i, where, t.options))
    return n;
  if (o == "generate-certificates" || o == "ca-sign-file" || o == "ca-sign-pass")
    throw ConfigError{fmt::format("{}'{}' is not supported by sluice: it does not generate "
                                  "certificates on the fly.", where, o)};
  if (o == "tls-ticket-keys") {
    need("a file name");
    auto keys = net::tls::TicketKeys::load(v);
    if (!keys.ok()) throw ConfigError{where + keys.error().message};
    t.options.ticket_keys = keys.value();
    return 2;
  }
  if (o == "ca-ignore-err" ||
      o == "crt-ignore-err" || o == "ktls")
    throw ConfigError{fmt::format("{}'{}' is not supported by sluice yet.", where, o)};
  return 0;
}

void finish_bind_ssl(Parser& p, Line& l, const std::string& head, BindConfig& b) {
  (void)l;
  BindTlsConfig& t = b.tls;
  if (!t.ssl) return;
  const std::string where = fmt::format("{} in section '{}' : ", head, p.cur_proxy().cfg.type);
  if (t.options.crts.empty())
    throw ConfigError{fmt::format("{}no SSL certificate specified for bind '{}' (use 'crt').",
                                  where, b.text)};
  // The globals first, the line's own options over them.
  const GlobalConfig& g = p.global;
  net::tls::BindOptions o = t.options;
  const net::tls::BindOptions& d = g.ssl_bind_defaults;
  if (o.ciphers.empty()) o.ciphers = d.ciphers;
  if (o.ciphersuites.empty()) o.ciphersuites = d.ciphersuites;
  if (o.curves.empty()) o.curves = d.curves;
  if (!t.min_set && g.ssl_bind_min_set) o.min_version = d.min_version;
  if (!t.max_set && g.ssl_bind_max_set) o.max_version = d.max_version;
  o.no_tickets = o.no_tickets || d.no_tickets;
  o.prefer_client_ciphers = o.prefer_client_ciphers || d.prefer_client_ciphers;
  o.cache_size = d.cache_size;
  o.lifetime_s = d.lifetime_s;
  o.dh_bits = d.dh_bits;
  resolve_tls_versions(o.min_version, o.max_version,
                       t.disabled_versions | g.ssl_bind_disabled_versions, where);
  // crt-list lines with options of their own: the line's options with theirs over them.
  for (std::size_t i = 0; i < o.crts.size() && i < t.entry_words.size(); ++i) {
    if (t.entry_words[i].empty()) continue;
    auto own = std::make_shared<net::tls::BindOptions>(o);
    own->crts.clear();
    apply_crt_list_words(t.entry_words[i], p.global.ca_base, t.entry_where[i], *own, nullptr);
    o.crts[i].options = std::move(own);
  }
  const net::tls::BindLabel label{p.cur_proxy().cfg.name, b.text, b.loc.file, b.loc.line};
  if (std::string why = net::tls::missing_ca_error(o, label); !why.empty())
    throw ConfigError{why};
  auto ctx = net::tls::ServerContext::make(o);
  if (!ctx.ok()) throw ConfigError{where + ctx.error().message};
  t.context = std::move(ctx.value());
  t.built_options = std::move(o);
}

void kw_ssl_global(Parser& p, Line& l) {
  const std::string& kw = l.args[0];
  GlobalConfig& g = p.global;
  if (l.args.size() < 2 || l.args[1].empty())
    throw ConfigError{fmt::format("{}'{}' expects an argument.", l.where, kw)};
  const std::string& v = l.args[1];
  if (kw == "crt-base" || kw == "ca-base") {
    std::string& dst = kw == "crt-base" ? g.crt_base : g.ca_base;
    if (!dst.empty())
      throw ConfigError{fmt::format("{}'{}' already specified.", l.where, kw)};
    dst = v;
    return;
  }
  net::tls::BindOptions& d = g.ssl_bind_defaults;
  if (kw == "ssl-default-bind-ciphers") d.ciphers = v;
  else if (kw == "ssl-default-bind-ciphersuites") d.ciphersuites = v;
  else if (kw == "ssl-default-bind-curves") d.curves = v;
  else if (kw == "ssl-default-bind-options") {
    for (std::size_t i = 1; i < l.args.size();) {
      std::size_t n = common_option(l.args, i, l.where, d, g.ssl_bind_disabled_versions,
                                    g.ssl_bind_min_set, g.ssl_bind_max_set,
                                    " on global statement '" + kw + "'.");
      if (n == 0)
        throw ConfigError{fmt::format("{}'{}' : unknown or unsupported option '{}'.", l.where, kw,
                                      l.args[i])};
      i += n;
    }
  } else if (kw == "tune.ssl.default-dh-param") {
    auto n = parse_strict_int(v, 1024, 16384);
    if (!n) throw ConfigError{fmt::format("{}'{}' expects a value >= 1024.", l.where, kw)};
    d.dh_bits = static_cast<int>(*n);
  } else if (kw == "tune.ssl.cachesize") {
    auto n = parse_strict_int(v, 0, INT_MAX);
    if (!n) throw ConfigError{fmt::format("{}'{}' expects an integer argument.", l.where, kw)};
    d.cache_size = static_cast<int>(*n);
  } else if (kw == "tune.ssl.maxrecord") {
    auto n = parse_strict_int(v, 0, INT_MAX);
    if (!n) throw ConfigError{fmt::format("{}'{}' expects an integer argument.", l.where, kw)};
    g.tune_ssl_maxrecord = static_cast<int>(*n);
  } else if (kw == "tune.ssl.lifetime") {
    auto t = parse_time(v, TimeUnit::kS);
    if (t.status != TimeValue::Status::kOk)
      throw ConfigError{fmt::format("{}'{}' expects a time value.", l.where, kw)};
    d.lifetime_s = static_cast<int>(std::max<uint32_t>(1, t.value));
  }
}

}  // namespace sluice::config

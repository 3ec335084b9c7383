// TLS towards servers: `server ... ssl verify required ca-file <f> sni <expr> ...`, the same
// options on default-server (and their `no-` forms), and the globals that set their defaults
// (ssl-default-server-*, ssl-server-verify), with HAProxy 3.5's semantics and messages.
#include "config/server_ssl.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "config/tls_words.h"

namespace sluice::config {

namespace {

// `alpn`: h2 and h3 are left out, as on bind lines: sluice speaks HTTP/1.1 to servers.
std::vector<std::string> alpn_list(Parser& p, const std::string& v, const std::string& where,
                                   std::string_view kw) {
  std::vector<std::string> out;
  for (const auto& a : split_commas(v)) {
    if (a.empty() || a.size() > 255)
      throw ConfigError{fmt::format("{}'{}' : invalid protocol name '{}'.", where, kw, a)};
    if (a == "h2" || a == "h3") {
      p.warning(fmt::format("{}'{}' : '{}' is left out: sluice speaks HTTP/1.1 to servers, so "
                            "they are offered the other protocols.", where, kw, a));
      continue;
    }
    out.push_back(a);
  }
  return out;
}

}  // namespace

std::size_t server_ssl_option(Parser& p, const Line& l, std::size_t i, ServerConfig& s,
                              const std::string& head) {
  const std::string& o = l.args[i];
  ServerTlsConfig& t = s.tls;
  net::tls::ClientOptions& c = t.options;
  const std::string where = head + " : ";
  const bool has_v = i + 1 < l.args.size() && !l.args[i + 1].empty();
  const std::string v = has_v ? l.args[i + 1] : "";
  auto need = [&](std::string_view what) {
    if (!has_v) throw ConfigError{fmt::format("{}'{}' : {}", where, o, what)};
  };
  if (o == "ssl" || o == "no-ssl") {
    t.ssl = o == "ssl";
    return 1;
  }
  if (std::size_t n = tls_version_option(l.args, i, where, ".", c, t.disabled_versions,
                                        t.min_set, t.max_set))
    return n;
  if (o == "tls-tickets") {
    c.no_tickets = false;
    return 1;
  }
  if (o == "no-ssl-reuse" || o == "ssl-reuse") {
    c.reuse = o == "ssl-reuse";
    return 1;
  }
  if (o == "verify") {
    need("missing verify method.");
    if (v == "none") t.verify = 0;
    else if (v == "required") t.verify = 1;
    else
      throw ConfigError{fmt::format("{}'verify' : unknown verify method '{}', only 'none' and "
                                    "'required' are supported.", where, v)};
    return 2;
  }
  if (o == "verifyhost") {
    need("missing hostname to verify against.");
    c.verifyhost = v;
    return 2;
  }
  if (o == "no-verifyhost") {
    c.verifyhost.clear();
    return 1;
  }
  if (o == "ca-file" || o == "crl-file") {
    need(o == "ca-file" ? "missing CAfile path." : "missing CRLfile path.");
    std::string path = o == "ca-file" && v != "@system-ca" ? with_base(p.global.ca_base, v) : v;
    if (path != "@system-ca") {
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        throw ConfigError{fmt::format("{}Couldn't open the {} '{}' ({}).", where, o, path,
                                      std::strerror(errno))};
      ::close(fd);
    }
    (o == "ca-file" ? c.ca_file : c.crl_file) = path;
    return 2;
  }
  if (o == "crt") {
    need("missing certificate file path.");
    std::string path = with_base(p.global.crt_base, v);
    auto probe = net::tls::load_certificates(path);
    if (!probe.ok()) throw ConfigError{where + probe.error().message};
    c.crt = path;
    return 2;
  }
  if (o == "sni") {
    need("missing sni expression.");
    t.sni_text = v;
    return 2;
  }
  if (o == "sni-auto" || o == "no-sni-auto") {
    t.sni_auto = o == "sni-auto";
    return 1;
  }
  if (o == "check-sni-auto" || o == "no-check-sni-auto")
    throw ConfigError{fmt::format("{}'{}' is not supported by sluice yet (checks send "
                                  "`check-sni` only).", where, o)};
  if (o == "alpn") {
    need("missing the comma-delimited ALPN protocol suite.");
    c.alpn = alpn_list(p, v, where, o);
    return 2;
  }
  if (o == "ciphers" || o == "ciphersuites" || o == "curves" || o == "sigalgs" ||
      o == "client-sigalgs") {
    need("missing the cipher suite.");
    (o == "ciphers"        ? c.ciphers
     : o == "ciphersuites" ? c.ciphersuites
     : o == "curves"       ? c.curves
     : o == "sigalgs"      ? c.sigalgs
                           : c.client_sigalgs) = v;
    return 2;
  }
  if (o == "check-ssl" || o == "no-check-ssl") {
    t.check_ssl = o == "check-ssl";
    return 1;
  }
  if (o == "check-sni") {
    need("missing SNI.");
    t.check_sni = v;
    return 2;
  }
  if (o == "check-alpn") {
    need("missing the comma-delimited ALPN protocol suite.");
    t.check_alpn = alpn_list(p, v, where, o);
    return 2;
  }
  if (o == "npn")
    throw ConfigError{fmt::format("{}'npn' is not supported by sluice: NPN is obsolete; use "
                                  "'alpn'.", where)};
  if (o == "allow-0rtt")
    throw ConfigError{fmt::format("{}'allow-0rtt' is not supported by sluice yet.", where)};
  return 0;
}

std::shared_ptr<const net::tls::ClientContext> make_client_context(const ServerTlsConfig& t) {
  const net::tls::ClientOptions& o = t.resolved;
  if (!t.resolve_error.empty()) throw ConfigError{t.resolve_error};
  if (o.verify && o.ca_file.empty())
    throw ConfigError{fmt::format(
        "{}verify is enabled by default but no CA file specified. If you're running on a LAN "
        "where you're certain to trust the server's certificate, please set an explicit 'verify "
        "none' statement on the 'server' line, or use 'ssl-server-verify none' in the global "
        "section to disable server-side verifications by default.", t.where)};
  auto ctx = net::tls::ClientContext::make(o);
  if (!ctx.ok()) throw ConfigError{t.where + ctx.error().message};
  return std::move(ctx.value());
}

void finish_server_ssl(Parser& p, const std::string& head, ServerConfig& s) {
  ServerTlsConfig& t = s.tls;
  const bool checks_tls = t.check_ssl == 1;
  const std::string where = head + " : ";
  const GlobalConfig& g = p.global;
  net::tls::ClientOptions o = t.options;
  const net::tls::ClientOptions& d = g.ssl_server_defaults;
  if (o.ciphers.empty()) o.ciphers = d.ciphers;
  if (o.ciphersuites.empty()) o.ciphersuites = d.ciphersuites;
  if (o.curves.empty()) o.curves = d.curves;
  if (o.sigalgs.empty()) o.sigalgs = d.sigalgs;
  if (o.client_sigalgs.empty()) o.client_sigalgs = d.client_sigalgs;
  if (!t.min_set && g.ssl_server_min_set) o.min_version = d.min_version;
  if (!t.max_set && g.ssl_server_max_set) o.max_version = d.max_version;
  o.no_tickets = o.no_tickets || d.no_tickets;
  try {
    resolve_tls_versions(o.min_version, o.max_version,
                         t.disabled_versions | g.ssl_server_disabled_versions, where);
  } catch (const ConfigError& e) {
    if (t.ssl || checks_tls) throw;
    t.resolve_error = e.text;   // a plain server: only a `connect ssl` step would need them
  }
  o.verify = t.verify >= 0 ? t.verify == 1 : g.ssl_server_verify;
  t.resolved = o;
  t.where = where;
  if (!t.ssl && !checks_tls) return;
  t.context = make_client_context(t);
  t.check_context = t.context;
  if (!t.check_alpn.empty()) {
    o.alpn = t.check_alpn;
    auto cctx = net::tls::ClientContext::make(o);
    if (!cctx.ok()) throw ConfigError{where + cctx.error().message};
    t.check_context = std::move(cctx.value());
  }
}

void kw_ssl_server_global(Parser& p, Line& l) {
  const std::string& kw = l.args[0];
  GlobalConfig& g = p.global;
  if (l.args.size() < 2 || l.args[1].empty())
    throw ConfigError{fmt::format("{}'{}' expects an argument.", l.where, kw)};
  const std::string& v = l.args[1];
  net::tls::ClientOptions& d = g.ssl_server_defaults;
  if (kw == "ssl-server-verify") {
    if (v != "none" && v != "required")
      throw ConfigError{fmt::format("{}'{}' expects 'none' or 'required' as argument.", l.where, kw)};
    g.ssl_server_verify = v == "required";
  } else if (kw == "ssl-default-server-ciphers") {
    d.ciphers = v;
  } else if (kw == "ssl-default-server-ciphersuites") {
    d.ciphersuites = v;
  } else if (kw == "ssl-default-server-curves") {
    d.curves = v;
  } else if (kw == "ssl-default-server-sigalgs") {
    d.sigalgs = v;
  } else if (kw == "ssl-default-server-client-sigalgs") {
    d.client_sigalgs = v;
  } else if (kw == "ssl-default-server-options") {
    for (std::size_t i = 1; i < l.args.size();) {
      std::size_t n = tls_version_option(l.args, i, l.where,
                                         " on global statement '" + kw + "'.", d,
                                         g.ssl_server_disabled_versions, g.ssl_server_min_set,
                                         g.ssl_server_max_set);
      if (n == 0)
        throw ConfigError{fmt::format("{}unknown option '{}' on global statement '{}'.", l.where,
                                      l.args[i], kw)};
      i += n;
    }
  }
}

}  // namespace sluice::config

#pragma once
// TLS towards servers: the `server` / `default-server` options and their globals
// (config/server_ssl.cc).
#include <cstddef>
#include <string>

#include "config/parser.h"

namespace sluice::config {

// The TLS option at l.args[i] of a server or default-server line: how many words it took, 0
// when it is none. `head`: "[f:3] : 'server b/s1'".
std::size_t server_ssl_option(Parser& p, const Line& l, std::size_t i, ServerConfig& s,
                              const std::string& head);
// At the end of a server line with `ssl` or `check-ssl`: the line's options over the
// ssl-default-server-* globals, `ssl-server-verify` for a line without `verify`, the files
// loaded and the context built (errors name the line).
void finish_server_ssl(Parser& p, const std::string& head, ServerConfig& s);
// A context from t.resolved (a server without `ssl` whose checks have a `connect ssl` step),
// with HAProxy's refusal of `verify` without a CA file. Throws ConfigError.
std::shared_ptr<const net::tls::ClientContext> make_client_context(const ServerTlsConfig& t);
// ssl-default-server-ciphers|ciphersuites|curves|sigalgs|client-sigalgs|options and
// ssl-server-verify.
void kw_ssl_server_global(Parser& p, Line& l);

}  // namespace sluice::config

#pragma once
// TLS on bind lines and its globals (config/bind_ssl.cc).
#include <cstddef>
#include <string>
#include <vector>

#include "config/parser.h"
#include "net/tls.h"

namespace sluice::config {

// The TLS option at l.args[i] of a bind line: how many words it took, 0 when it is none.
// Certificates are loaded at once (an error names the line). `head`: "parsing [f:3] : 'bind
// :443'".
std::size_t bind_ssl_option(Parser& p, Line& l, const std::string& head, std::size_t i,
                            BindConfig& b);
// At the end of the line: with `ssl`, the contexts built from the line's options over the
// globals' (ssl-default-bind-*, tune.ssl.*); `ssl` without `crt` is refused.
void finish_bind_ssl(Parser& p, Line& l, const std::string& head, BindConfig& b);
// A crt-list line's bracket words (the ssl-bind-conf keywords HAProxy allows there) over `o`,
// a copy of the bind line's options: at start-up, and for `add ssl crt-list`. Throws
// ConfigError, `where` first ("parsing [list:3]: unknown ssl keyword x"). `warn`, if not null,
// is told of alpn names left out.
void apply_crt_list_words(const std::vector<std::string>& w, const std::string& ca_base,
                          const std::string& where, net::tls::BindOptions& o, Parser* warn);
// crt-base, ca-base, ssl-default-bind-ciphers|ciphersuites|curves|options,
// tune.ssl.default-dh-param, tune.ssl.cachesize, tune.ssl.lifetime.
void kw_ssl_global(Parser& p, Line& l);

}  // namespace sluice::config

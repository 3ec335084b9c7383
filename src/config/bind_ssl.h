#pragma once
// TLS on bind lines and its globals (config/bind_ssl.cc).
#include <cstddef>
#include <string>

#include "config/parser.h"

namespace sluice::config {

// The TLS option at l.args[i] of a bind line: how many words it took, 0 when it is none.
// Certificates are loaded at once (an error names the line). `head`: "parsing [f:3] : 'bind
// :443'".
std::size_t bind_ssl_option(Parser& p, Line& l, const std::string& head, std::size_t i,
                            BindConfig& b);
// At the end of the line: with `ssl`, the contexts built from the line's options over the
// globals' (ssl-default-bind-*, tune.ssl.*); `ssl` without `crt` is refused.
void finish_bind_ssl(Parser& p, Line& l, const std::string& head, BindConfig& b);
// crt-base, ca-base, ssl-default-bind-ciphers|ciphersuites|curves|options,
// tune.ssl.default-dh-param, tune.ssl.cachesize, tune.ssl.lifetime.
void kw_ssl_global(Parser& p, Line& l);

}  // namespace sluice::config

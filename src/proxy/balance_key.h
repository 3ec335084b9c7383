#pragma once
// What the hashing balance algorithms hash for one request or session, as HAProxy picks it:
//   uri        the request target, before '?' unless `whole`, without scheme://authority with
//              `path-only`, cut at `len` characters and before the (depth+1)th '/'
//   hdr(name)  the first field of that name, not empty; `use_domain_only` keeps the label
//              before the last dot (`1wt` of `haproxy.1wt.eu`)
//   url_param, rdp-cookie, hash <expr>
//              the value of the expression (url_param(<name>), rdp_cookie(<name>)) cast to
//              binary: a string's bytes, an integer's 8 bytes in network order, an address's
//              4 or 16 bytes
// No key (a missing field, an expression without a sample) lets the algorithm fall back to
// round robin, as HAProxy does.
#include <string>
#include <string_view>
#include <vector>

#include "http/http.h"
#include "lb/algorithm.h"
#include "rules/rules.h"

namespace sluice::proxy {

std::string_view uri_hash_part(std::string_view target, const lb::BalanceSettings& b);
std::string_view domain_only(std::string_view host);
// The key of an expression-based algorithm: false when the expression has no sample.
bool expr_key(const sample::Expr& e, const rules::RequestView& view, std::string& out);
// The key of an HTTP request for `be` (uri, hdr or an expression); false: none (round
// robin), also for algorithms that hash no request (source hashes the address itself).
bool http_key(const lb::BalanceSettings& b, const sample::Expr* expr, std::string_view target,
              const std::vector<http::Header>& headers, const rules::RequestView& view,
              std::string& out);

}  // namespace sluice::proxy

#pragma once
// What changes in a message's fields when sluice forwards it (Upgrade pairing, the Connection
// field, hop-by-hop rewrites), and the proxy's built-in error pages, byte-identical to
// HAProxy's. Pure functions over parsed heads.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "http/http.h"

namespace sluice::http {

// Rewrites the fields of a received request for the server: a second (equal) Host is dropped
// and Host loses the default port of an absolute http(s) or CONNECT target; close/keep-alive
// tokens leave
// `Connection` (dropped when empty), `Upgrade` stays only when paired with a `Connection:
// upgrade` and naming a protocol (h2/h2c tokens removed; an empty field leaves, and the upgrade
// token with it), `TE` is reduced to `trailers`, Content-Length is merged into one canonical
// field (dropped with Transfer-Encoding) and Transfer-Encoding becomes `chunked`. New values are
// kept in `storage`. Returns whether the forwarded request still asks for an upgrade (an Upgrade
// field and the `upgrade` token both left): `h.conn_upgrade && h.has_upgrade` can be true for a
// request that goes out plain (`Upgrade:` empty, or only h2c).
bool rewrite_request_fields(const RequestHead& h, std::vector<Header>& fields,
                            StringStore& storage);
// The request target to forward: an absolute http(s) URI loses its default port and gets "/"
// for an empty path (`http://a:80` -> `http://a/`); other targets are returned unchanged.
std::string_view normalize_target(const RequestHead& h, StringStore& storage);
// The same for a response: framing fields are removed for 1xx, 204 and tunnels (101, 2xx to
// CONNECT), kept for HEAD and 304. A 101 keeps its `upgrade` token even when no Upgrade field
// names a protocol (empty, or none): the server switched anyway, and a client accepts a 101
// only with `Connection: upgrade` (docs/http.md, "A 101 without a protocol").
void rewrite_response_fields(const ResponseHead& h, bool tunnel, std::vector<Header>& fields,
                             StringStore& storage);

// The framing fields of a message after http-request / http-response rules ran on it. The body
// sluice forwards is the one the parser framed (`m.body`, `m.content_length`) and is re-encoded
// from that decision, never from the fields as rules left them; so the fields are checked and
// regenerated from it here, and no rule can make the peer frame the body differently
// (docs/http.md "Framing after rules").
enum class Framing : uint8_t {
  kOk,        // `fields` now frames the body exactly as it will be sent
  kRechunk,   // the rules deleted the Content-Length of a body: it goes out chunked instead,
              // `transfer-encoding: chunked` was added (HAProxy 2.6 does the same)
  kConflict,  // a rule set a framing value that contradicts the body: answer 500, send nothing
};
// `bodyless`: no body can follow whatever the fields say (a response to HEAD, 1xx, 204, 304, a
// tunnel), so the fields are left as the rules made them. `can_rechunk`: a deleted
// Content-Length may become chunked (an HTTP/1.1 request); otherwise it is put back.
// Content-Length or Transfer-Encoding, whatever the case.
bool is_framing_field(std::string_view name);

Framing finalize_framing(const MessageInfo& m, bool bodyless, bool can_rechunk,
                         std::vector<Header>& fields, StringStore& storage);

// The reason phrase of sluice's own pages ("Bad request", "Gateway Time-out"), empty when
// sluice has no page for that status.
std::string_view error_reason(int status);
bool has_error_page(int status);
// A complete built-in error response, byte-identical to HAProxy's H1 form: HTTP/1.1 status
// line, content-length, cache-control, connection: close (400 and 408), content-type, body.
std::string error_page(int status);

}  // namespace sluice::http

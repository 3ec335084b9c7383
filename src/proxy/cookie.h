#pragma once
// Cookie-based server persistence (`cookie` of a backend) and `capture cookie` (of a
// frontend), with HAProxy's semantics: the request's Cookie fields choose the server and lose
// the persistence cookie where the mode says so, the response's Set-Cookie fields are
// captured, deleted, rewritten or prefixed, and insert mode adds its own. The outcome is kept
// in a CookieTxn for the log (%CC, %CS and the cookie flags of %tsc).
//
// Only a backend with `cookie` or a frontend with `capture cookie` runs any of this: the
// transaction tests one pointer otherwise.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "http/http.h"

namespace sluice::proxy {

class CookieTable;

// `cookie <name> ...` of a backend, as the data path reads it.
struct CookieSettings {
  std::string name;
  enum class Mode : uint8_t { kNone, kRewrite, kInsert, kPrefix };
  Mode mode = Mode::kNone;
  bool indirect = false, nocache = false, postonly = false, preserve = false;
  bool httponly = false, secure = false;
  std::string domain;        // "a; domain=b" for several domains
  std::string attrs;         // `attr` values joined with "; "
  uint32_t maxidle_s = 0, maxlife_s = 0;
  std::vector<std::string> server_cookies;   // per server index; "" none
  // The values the CLI changes (proxy/cookie_table.h): once changed() they replace
  // server_cookies, read through a hazard-protected snapshot. Null in unit tests.
  std::shared_ptr<const CookieTable> table;
  // HAProxy writes the cookie flags of %tsc with rewrite, insert, prefix or indirect only.
  bool log_flags() const { return mode != Mode::kNone || indirect; }
};

// HAProxy's dynamic cookie of a server: the 16 lower-case hex digits of XXH64 (seed 0) over
// the key, the address bytes (4 or 16, network order) and the port as 4 bytes in network order.
std::string dynamic_cookie(std::string_view key, const void* addr, std::size_t addr_len,
                           uint16_t port);

// The dates of insert mode's `|<last>|<first>` suffix: 30 bits of 4-second steps since the
// epoch in 5 base64 characters (HAProxy's s30tob64 / b64tos30).
void s30_to_b64(uint32_t v, char out[5]);
int b64_to_s30(const char in[5]);   // -1: not 5 base64 characters

// One transaction's persistence state: what the log shows and what the response side needs.
struct CookieTxn {
  char ck = 'N';            // request cookie: N none, I invalid, D down, V valid, E expired,
                            // O old, U unused
  char sck = 'N';           // response: N none, P present, D deleted, I inserted, R replaced,
                            // U updated
  int server = -1;          // the server the request cookie named and that takes it, -1 none
  bool ignore = false;      // ignore-persist matched
  bool force = false;       // force-persist matched
  bool cacheable = false;   // GET or HEAD (nocache's check goes on with the response)
  uint32_t first_date = 0, last_date = 0;   // the cookie's dates (seconds), 0 none
  bool has_cli = false, has_srv = false;    // %CC / %CS captured
  std::string cli, srv;
  bool active = false;      // this transaction ran the persistence step (the log reads it)
  void reset() {
    active = false;
    ck = sck = 'N';
    server = -1;
    ignore = force = cacheable = has_cli = has_srv = false;
    first_date = last_date = 0;
    cli.clear();
    srv.clear();
  }
};

// Whether server `index` may take a request (not stopped by checks or maintenance).
struct ServerStates {
  virtual bool running(int index) const = 0;
  virtual ~ServerStates() = default;
};

struct CookieRequest {
  const CookieSettings* ck = nullptr;   // null: capture only
  std::string_view capture;             // `capture cookie` name, "" none
  int capture_len = 0;
  bool persist = false;                 // option persist
  uint32_t now_s = 0;
};

// The request side on the Cookie fields of `headers` (edited in place, new text kept in
// `store`): capture, server choice into t.server / t.ck, indirect removal, prefix strip.
// Returns whether a field changed.
bool request_cookies(const CookieRequest& in, const ServerStates& servers,
                     std::vector<http::Header>& headers, http::StringStore& store, CookieTxn& t);

struct CookieResponse {
  const CookieSettings* ck = nullptr;
  std::string_view capture;
  int capture_len = 0;
  int server = -1;          // the server that answered
  bool direct = false;      // it is the one the request cookie named (HAProxy's SF_DIRECT)
  bool post = false;        // the request's method is POST
  int status = 0;
  uint32_t now_s = 0;
};

// The response side on the Set-Cookie fields of `headers` (edited in place): capture,
// delete / rewrite / prefix the server's persistence cookie, then insert ours (and
// `cache-control: private` with nocache on a cacheable response). Returns whether a field
// changed.
bool response_cookies(const CookieResponse& in, std::vector<http::Header>& headers,
                      http::StringStore& store, CookieTxn& t);

}  // namespace sluice::proxy

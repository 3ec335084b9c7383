#pragma once
// The text of a traffic log line, built from the record a session or an HTTP transaction fills
// when it ends: HAProxy's tcplog and httplog formats, field for field. Pure; any thread.
// Sending the line (syslog framing, targets) is proxy/log.h's LogWriter.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "log/termination.h"
#include "net/address.h"
#include "sample/context.h"

namespace sluice::log {

// What one line says. Timers are milliseconds, -1 for a step that never happened.
struct Record {
  const net::SocketAddress* client = nullptr;   // %ci:%cp
  uint64_t date_wall_us = 0;   // %t: the accept (TCP) or the request's first byte (HTTP)
  std::string_view frontend;   // %f; %ft adds '~' with TLS
  bool tls = false;            // the client connection is TLS (bind ... ssl): %ft's '~'
  std::string_view ssl_version;   // its protocol (%sslv: "TLSv1.3") and cipher (%sslc)
  std::string_view ssl_cipher;
  std::string_view backend;    // %b
  std::string_view server;     // %s ("<NOSRV>" when none was used)
  long tr = -1;                // HTTP: the request head (%TR)
  long tw = -1;                // time in queues (%Tw)
  long tc = -1;                // connect (%Tc)
  long tresp = -1;             // HTTP: the server's response head (%Tr)
  long total = -1;             // %Tt (TCP) or %Ta (HTTP)
  int status = -1;             // HTTP: %ST
  uint64_t bytes_out = 0;      // %B
  Termination term;            // %ts
  int actconn = 0, feconn = 0, beconn = 0, srvconn = 0;   // %ac/%fc/%bc/%sc
  int retries = 0;             // %rc
  bool redispatched = false;   // %rc is written "+<retries>"
  // HTTP: `capture request|response header` values; a direction with no slot configured is
  // absent from the line, one with slots is written {a|b} (a value not captured is empty).
  std::size_t req_capture_slots = 0;
  std::span<const std::string> req_captures;
  std::size_t res_capture_slots = 0;
  std::span<const std::string> res_captures;
  std::string_view request_line;   // HTTP: %r, empty for a request that never parsed
  // tune.http.logurilen cut the line to nothing: %r is empty, not <BADREQ>, as in HAProxy.
  bool request_line_cut = false;
  // %r as written: the line, or "<BADREQ>" for a request that never parsed.
  std::string_view shown_request_line() const {
    return request_line.empty() && !request_line_cut ? std::string_view("<BADREQ>") : request_line;
  }

  // What only log-format aliases read (format.h); the fixed lines above do not.
  bool http = false;                                   // an HTTP transaction (%Ta, %Tt, %Ti)
  uint64_t accept_wall_us = 0;                         // %t %T %Tl %Ts %ms; 0: date_wall_us
  const net::SocketAddress* local = nullptr;           // %fi:%fp (null: unknown)
  const net::SocketAddress* server_addr = nullptr;     // %si:%sp (null: no server connection)
  const net::SocketAddress* backend_src = nullptr;     // %bi:%bp
  long th = 0;                 // %Th: handshakes (no TLS, no PROXY protocol: 0)
  long ti = 0;                 // HTTP: %Ti, idle time before the request's first byte
  uint64_t bytes_in = 0;       // %U
  uint64_t bytes_to_client = 0;   // what the client was sent (res.bytes_out)
  int srv_queue = 0, be_queue = 0;   // %sq/%bq
  uint64_t request_counter = 0;      // %rt
  uint64_t log_counter = 0;          // %lc: lines this frontend logged before
  std::string_view unique_id;        // %ID
  // `capture cookie`: %CC (request) and %CS (response); "-" when absent.
  std::string_view cli_cookie, srv_cookie;
  bool has_cli_cookie = false, has_srv_cookie = false;
  // The persistence flags of %tsc (request cookie, response cookie): "--" without them.
  char cookie_flags[2] = {'-', '-'};
  std::string_view hostname;         // %H
  int pid = 0;                       // %pid
  // option logasap: %B, %Ta, %Tt and %Tu are written "+"-prefixed (what was known when the
  // line was written, before the end), on every line of such a frontend, as HAProxy does.
  bool logasap = false;
};

// The timers the aliases derive from the record's (ms, -1 when a step is missing): %Tq (Th + Ti
// + TR), %Tt (Th + Ti + Ta in HTTP, the record's total in TCP), %Tu (Tt - Ti) and %Td (Tt less
// the steps before the data: Tq, Tw, Tc, Tr in HTTP; Tw, Tc in TCP).
struct DerivedTimes {
  long tq = -1, tt = -1, tu = -1, td = -1;
};
DerivedTimes derived_times(const Record& r);

// The answers of the timer and byte-count fetches (sample::Env::Query, kTxnTotalMs to
// kResBytesOut) for the transaction `r` describes; false for another question. `ended`: `r` is
// the transaction's end (its log line). Else it is what rules see on the way (HAProxy's
// numbers then: its close time counts as 0, so the totals are minus the time before the
// request, res.timer.data minus the time to the response head, and the byte counts are 0).
bool stream_query(const Record& r, sample::Env::Query q, bool ended, int64_t* out);

// Whether HAProxy counts the line as an error (logged at `err` with option
// log-separate-errors): a redispatch, an end other than a normal or a local one, retries
// without an error, or an HTTP status of 500 or more.
bool is_error(const Record& r);

// "%ci:%cp [%t] %ft %b/%s %Tw/%Tc/%Tt %B %ts %ac/%fc/%bc/%sc/%rc %sq/%bq"
std::string tcplog_line(const Record& r);

// The line of a connection that failed before it became a stream (a PROXY protocol header
// that never came right), as HAProxy logs one: "%ci:%cp [%t] <frontend>/<bind>: <text>".
std::string connection_error_line(const net::SocketAddress& client, uint64_t accept_wall_us,
                                  std::string_view frontend, std::string_view bind,
                                  std::string_view text);

// "%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %CC %CS %tsc %ac/%fc/%bc/%sc/%rc %sq/%bq
//  %hr %hs %{+Q}r"
std::string httplog_line(const Record& r);

// The %rc field: the connection retries, "+"-prefixed when the session was redispatched to
// another server, as HAProxy writes it.
std::string retries_field(int retries, bool redispatched);

// `%{+Q}r`: bytes outside 32..126, '#' and '"' written #XX (HAProxy's log escaping: `/a"b`
// logs as `/a#22b`). `capture`: in captured values `{`, `|` and `}` are escaped too.
void append_escaped(std::string& out, std::string_view s, bool capture = false);

}  // namespace sluice::log

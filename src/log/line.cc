#include "log/line.h"

#include <fmt/format.h>

#include "base/strings.h"
#include "log/format_internal.h"

namespace sluice::log {

namespace {

void append_captures(std::string& line, std::size_t slots, std::span<const std::string> values) {
  if (slots == 0) return;
  line += '{';
  for (std::size_t i = 0; i < slots; ++i) {
    if (i) line += '|';
    if (i < values.size()) append_escaped(line, values[i], true);
  }
  line += "} ";
}

long sum_or_absent(std::initializer_list<long> parts) {
  long s = 0;
  for (long v : parts) {
    if (v < 0) return -1;
    s += v;
  }
  return s;
}

}  // namespace

DerivedTimes derived_times(const Record& r) {
  DerivedTimes d;
  d.tq = r.tr >= 0 ? r.th + r.ti + r.tr : -1;
  d.tt = r.http && r.total >= 0 ? r.th + r.ti + r.total : r.total;
  d.tu = d.tt >= 0 ? d.tt - r.ti : -1;
  long used = r.http ? sum_or_absent({d.tq, r.tw, r.tc, r.tresp}) : sum_or_absent({r.tw, r.tc});
  d.td = used >= 0 && d.tt >= 0 ? d.tt - used : -1;
  return d;
}

bool stream_query(const Record& r, sample::Env::Query q, bool ended, int64_t* out) {
  using Q = sample::Env::Query;
  const DerivedTimes d = derived_times(r);
  // Before the end: HAProxy's timers are offsets from the accept, its close time 0.
  const long before_request = r.th + r.ti;
  switch (q) {
    case Q::kTxnTotalMs: *out = ended ? r.total : -before_request; return true;
    case Q::kTxnUserMs: *out = ended ? d.tu : -r.ti; return true;
    case Q::kReqIdleMs: *out = r.ti; return true;
    case Q::kReqTqMs: *out = d.tq; return true;
    case Q::kReqHdrMs: *out = r.tr; return true;
    case Q::kReqQueueMs: *out = r.tw; return true;
    case Q::kResHdrMs: *out = r.tresp; return true;
    case Q::kResDataMs: {
      // Td once the response head came (a TCP session has none: -1, as HAProxy answers).
      long to_data = r.tresp >= 0 ? sum_or_absent({d.tq, r.tw, r.tc, r.tresp}) : -1;
      *out = to_data < 0 ? -1 : ended ? d.td : -to_data;
      return true;
    }
    case Q::kRequestDateUs: *out = static_cast<int64_t>(r.date_wall_us); return true;
    case Q::kReqBytesIn:
    case Q::kReqBytesOut: *out = ended ? static_cast<int64_t>(r.bytes_in) : 0; return true;
    case Q::kResBytesIn: *out = ended ? static_cast<int64_t>(r.bytes_out) : 0; return true;
    case Q::kResBytesOut: *out = ended ? static_cast<int64_t>(r.bytes_to_client) : 0; return true;
    default: return false;
  }
}

bool is_error(const Record& r) {
  return r.redispatched ||
         (r.term.cause != Cause::kNone && r.term.cause != Cause::kLocal) ||
         (r.term.cause == Cause::kNone && r.retries > 0) || (r.http && r.status >= 500);
}

std::string retries_field(int retries, bool redispatched) {
  return redispatched ? fmt::format("+{}", retries) : fmt::format("{}", retries);
}

void append_escaped(std::string& out, std::string_view s, bool capture) {
  static const char* hex = "0123456789ABCDEF";
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c < 32 || c > 126 || c == '#' || c == '"' ||
        (capture && (c == '{' || c == '|' || c == '}'))) {
      out += '#';
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += ch;
    }
  }
}

std::string connection_error_line(const net::SocketAddress& client, uint64_t accept_wall_us,
                                  std::string_view frontend, std::string_view bind,
                                  std::string_view text) {
  char date[64];
  const std::size_t n = date_text(date, sizeof date, accept_wall_us, true, true);
  return fmt::format("{}:{} [{}] {}/{}: {}", client.host_string(), client.port(),
                     std::string_view(date, n), frontend, bind, text);
}

std::string tcplog_line(const Record& r) {
  return fmt::format("{}:{} [{}] {}{} {}/{} {}/{}/{} {} {} {}/{}/{}/{}/{} 0/0",
                     r.client->host_string(), r.client->port(), base::log_date(r.date_wall_us),
                     r.frontend, r.tls ? "~" : "", r.backend, r.server, r.tw, r.tc, r.total, r.bytes_out,
                     letters(r.term), r.actconn, r.feconn, r.beconn, r.srvconn,
                     retries_field(r.retries, r.redispatched));
}

std::string httplog_line(const Record& r) {
  auto cookie = [](bool has, std::string_view v) { return has && !v.empty() ? v : std::string_view("-"); };
  std::string line = fmt::format(
      "{}:{} [{}] {}{} {}/{} {}/{}/{}/{}/{} {} {} {} {} {}{} {}/{}/{}/{}/{} 0/0 ",
      r.client->host_string(), r.client->port(), base::log_date(r.date_wall_us), r.frontend,
      r.tls ? "~" : "", r.backend, r.server, r.tr, r.tw, r.tc, r.tresp, r.total, r.status, r.bytes_out,
      cookie(r.has_cli_cookie, r.cli_cookie), cookie(r.has_srv_cookie, r.srv_cookie),
      letters(r.term), std::string_view(r.cookie_flags, 2), r.actconn, r.feconn, r.beconn, r.srvconn,
      retries_field(r.retries, r.redispatched));
  append_captures(line, r.req_capture_slots, r.req_captures);
  append_captures(line, r.res_capture_slots, r.res_captures);
  line += '"';
  append_escaped(line, r.shown_request_line());
  line += '"';
  return line;
}

}  // namespace sluice::log

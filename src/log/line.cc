#include "log/line.h"

#include <fmt/format.h>

#include "base/strings.h"

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

}  // namespace

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

std::string tcplog_line(const Record& r) {
  return fmt::format("{}:{} [{}] {} {}/{} {}/{}/{} {} {} {}/{}/{}/{}/{} 0/0",
                     r.client->host_string(), r.client->port(), base::log_date(r.date_wall_us),
                     r.frontend, r.backend, r.server, r.tw, r.tc, r.total, r.bytes_out,
                     letters(r.term), r.actconn, r.feconn, r.beconn, r.srvconn,
                     retries_field(r.retries, r.redispatched));
}

std::string httplog_line(const Record& r) {
  // %CC %CS are "-" (no cookie capture) and the cookie flags of %tsc are "--".
  std::string line = fmt::format(
      "{}:{} [{}] {} {}/{} {}/{}/{}/{}/{} {} {} - - {}-- {}/{}/{}/{}/{} 0/0 ",
      r.client->host_string(), r.client->port(), base::log_date(r.date_wall_us), r.frontend,
      r.backend, r.server, r.tr, r.tw, r.tc, r.tresp, r.total, r.status, r.bytes_out,
      letters(r.term), r.actconn, r.feconn, r.beconn, r.srvconn,
      retries_field(r.retries, r.redispatched));
  append_captures(line, r.req_capture_slots, r.req_captures);
  append_captures(line, r.res_capture_slots, r.res_captures);
  line += '"';
  append_escaped(line, r.request_line.empty() ? std::string_view("<BADREQ>") : r.request_line);
  line += '"';
  return line;
}

}  // namespace sluice::log

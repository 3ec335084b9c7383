// Raw HTTP responses written by hand (errorfile, http-errors, http-reply `errorfile`): checked
// once when the configuration loads and re-encoded the way the H1 encoder writes heads.
#include <fmt/format.h>

#include "http/http.h"

namespace sluice::http {

std::string check_raw_response(std::string_view data) {
  if (data.empty()) return {};
  ResponseParser parser;
  auto st = parser.parse(data);
  if (st != ParseStatus::kComplete)
    return fmt::format("unable to parse headers ({})", st == ParseStatus::kIncomplete
                                                            ? "incomplete response head"
                                                            : to_string(parser.error()));
  const auto& h = parser.head();
  std::size_t body = data.size() - parser.consumed();
  if (h.body == BodyKind::kChunked) return "chunk-encoded payload not supported";
  if (h.has_content_length && h.content_length != body)
    return fmt::format("payload size does not match the announced content-length ({} != {})", body,
                       h.content_length);
  return {};
}

std::string normalise_raw_response(const std::string& raw) {
  if (raw.empty()) return raw;
  ResponseParser parser;
  if (parser.parse(raw) != ParseStatus::kComplete) return raw;
  std::string out;
  append_response_head(parser.head(), out);
  out.append(raw, parser.consumed(), std::string::npos);
  return out;
}

int raw_response_status(std::string_view raw) {
  // "HTTP/1.x NNN ..."
  if (raw.size() < 12 || raw.substr(0, 5) != "HTTP/") return 0;
  auto sp = raw.find(' ');
  if (sp == std::string_view::npos || sp + 4 > raw.size()) return 0;
  int v = 0;
  for (std::size_t i = sp + 1; i < sp + 4; ++i) {
    if (raw[i] < '0' || raw[i] > '9') return 0;
    v = v * 10 + (raw[i] - '0');
  }
  return v;
}

}  // namespace sluice::http

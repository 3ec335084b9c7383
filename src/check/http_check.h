#pragma once
// HTTP health checks: the request to send and the reading of the answer. Pure functions of
// their input (no sockets), any thread.
//
// This is a deliberately minimal HTTP/1.x response reader (status line, header block,
// Content-Length or read-until-close body) that covers what `http-check expect` needs. The
// real HTTP codec (src/http/) comes with HTTP mode; the check should move onto it then.
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lb/server.h"

namespace sluice::check {

struct HttpRequestSpec {
  std::string method = "OPTIONS";
  std::string uri = "/";
  std::string version = "HTTP/1.0";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

// `http-check expect [!] status <codes> | rstatus <regex> | string <text>`; kDefault accepts
// any 2xx or 3xx status.
struct HttpExpect {
  enum class Kind { kDefault, kStatus, kRstatus, kString };
  Kind kind = Kind::kDefault;
  bool negate = false;
  std::string arg;
};

// The bytes to send: request line, headers, `Connection: close` (the check reads until the
// server closes when it needs the body), blank line, body.
std::string build_request(const HttpRequestSpec& spec);

struct HttpVerdict {
  bool done = false;                       // false: need more bytes
  lb::CheckStatus status = lb::CheckStatus::kUnknown;   // kL7Ok, kL7Sts or kL7Rsp
  int code = 0;                            // HTTP status, 0 when none could be read
  std::string text;                        // reason phrase or what went wrong
};

// Judges the bytes received so far. `eof`: the server closed (or the buffer is full), so
// no more bytes will come. Any thread.
HttpVerdict evaluate_response(std::string_view data, bool eof, const HttpExpect& expect);

// Whether `code` matches a `status` argument: a comma-separated list of codes and ranges
// ("200", "200-299,304"). Any thread.
bool status_matches(int code, std::string_view list);

}  // namespace sluice::check

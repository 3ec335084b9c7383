#pragma once
// The HTTP/1 parser limits of the process's settings: tune.bufsize, tune.maxrewrite and
// tune.http.maxhdr, as HAProxy applies them. Any thread (reads settings only).
#include <cstddef>

#include "http/http.h"
#include "proxy/settings.h"

namespace sluice::proxy {

inline http::Limits http_limits(const ProcessSettings& ps) {
  http::Limits lim;
  const auto bufsize = static_cast<std::size_t>(ps.bufsize);
  const auto rewrite = static_cast<std::size_t>(ps.maxrewrite > 0 ? ps.maxrewrite : 0);
  // A start line longer than the buffer can hold is a 414; the head limit leaves the
  // tune.maxrewrite reserve free for rewrites (431 beyond it, 502 for a response).
  lim.max_request_line = bufsize > 2 ? bufsize - 2 : bufsize;
  lim.max_head = bufsize > rewrite ? bufsize - rewrite : bufsize;
  // tune.http.maxhdr counts the start line: 101 admits 100 fields, the 101st is a 400 (502 in
  // a response), as measured on HAProxy 3.5.
  lim.max_fields = ps.http_maxhdr > 1 ? static_cast<std::size_t>(ps.http_maxhdr - 1) : 0;
  lim.any_method_payload = ps.h1_any_method_payload;
  return lim;
}

}  // namespace sluice::proxy

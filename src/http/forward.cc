// Field rewrites applied when a message is forwarded HTTP/1 to HTTP/1 (Upgrade pairing, the
// Connection field, hop-by-hop rewrites) and the proxy's own error pages.
#include <cstdint>
#include <cstdio>

#include "http/forward.h"

namespace sluice::http {
namespace {

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

template <typename Fn>
void each_token(std::string_view v, Fn&& fn) {
  while (true) {
    auto comma = v.find(',');
    std::string_view e = trim_ows(v.substr(0, comma));
    if (!e.empty()) fn(e);
    if (comma == std::string_view::npos) return;
    v.remove_prefix(comma + 1);
  }
}

// Keeps the tokens of a list for which keep(token) is true; returns the rebuilt value and
// whether anything was removed.
template <typename Keep>
std::string filter_tokens(std::string_view v, Keep&& keep, bool& removed) {
  std::string out;
  removed = false;
  each_token(v, [&](std::string_view t) {
    if (!keep(t)) {
      removed = true;
      return;
    }
    if (!out.empty()) out += ", ";
    out += t;
  });
  return out;
}

std::string_view kept(StringStore& storage, std::string s) { return keep(storage, std::move(s)); }

// Connection and Upgrade pairing: Upgrade stays only if Connection lists upgrade and names
// a protocol (an empty one leaves), and the upgrade token stays only if an Upgrade field remains,
// except on a 101 (`switched`): the server has switched protocols whatever its Upgrade said, and
// the client accepts a 101 only with `Connection: upgrade` (HAProxy 3.5 keeps it too).
// close/keep-alive tokens always go. Returns whether an Upgrade field and the upgrade token left.
bool rewrite_connection(const MessageInfo& m, bool drop_upgrade_tokens, bool switched,
                        std::vector<Header>& f, StringStore& st) {
  bool upgrade_left = false;
  if (m.has_upgrade) {
    for (auto it = f.begin(); it != f.end();) {
      if (!iequals(it->name, "upgrade")) {
        ++it;
        continue;
      }
      if (!m.conn_upgrade) {
        it = f.erase(it);
        continue;
      }
      bool removed = false;
      std::string v = filter_tokens(it->value, [&](std::string_view t) {
        return !(drop_upgrade_tokens && (iequals(t, "h2c") || iequals(t, "h2")));
      }, removed);
      if (v.empty()) {
        it = f.erase(it);
        continue;
      }
      if (removed) it->value = kept(st, std::move(v));
      upgrade_left = true;
      ++it;
    }
  }
  const bool keep_token = upgrade_left || switched;
  for (auto it = f.begin(); it != f.end();) {
    if (!iequals(it->name, "connection")) {
      ++it;
      continue;
    }
    bool removed = false;
    std::string v = filter_tokens(it->value, [&](std::string_view t) {
      if (iequals(t, "close") || iequals(t, "keep-alive")) return false;
      if (iequals(t, "upgrade")) return keep_token;
      return true;
    }, removed);
    if (v.empty()) {
      it = f.erase(it);
      continue;
    }
    if (removed) it->value = kept(st, std::move(v));
    ++it;
  }
  return upgrade_left;  // only when Connection listed upgrade, and that token stayed
}

// One `content-length` with the canonical value at the first field's place, or none.
void rewrite_framing(const MessageInfo& m, bool drop_all, std::vector<Header>& f,
                     StringStore& st) {
  bool cl_done = false, te_done = false;
  for (auto it = f.begin(); it != f.end();) {
    bool cl = iequals(it->name, "content-length");
    bool te = !cl && iequals(it->name, "transfer-encoding");
    if (!cl && !te) {
      ++it;
      continue;
    }
    if (drop_all || (cl && (m.has_transfer_encoding || cl_done)) || (te && te_done)) {
      it = f.erase(it);
      continue;
    }
    if (cl) {
      it->value = kept(st, std::to_string(m.content_length));
      cl_done = true;
    } else {
      it->value = "chunked";
      te_done = true;
    }
    ++it;
  }
}

// Splits an absolute-form target into scheme, authority and the rest ("/x?q", maybe empty).
bool split_absolute(std::string_view t, std::string_view& scheme, std::string_view& authority,
                    std::string_view& rest) {
  auto sep = t.find("://");
  if (sep == std::string_view::npos || sep == 0) return false;
  scheme = t.substr(0, sep);
  std::string_view after = t.substr(sep + 3);
  auto slash = after.find_first_of("/?");
  authority = after.substr(0, slash);
  rest = slash == std::string_view::npos ? std::string_view{} : after.substr(slash);
  return true;
}

// "a:80" -> "a" when 80 is the default port `port` ("[::1]:80" -> "[::1]"). The port stays when
// no host would be left (":80", "u@:80"): the parser refuses an authority without a host, so
// sluice would send on a target that it does not itself accept.
std::string_view strip_port(std::string_view authority, std::string_view port) {
  if (authority.size() > port.size() + 1 &&
      authority.substr(authority.size() - port.size()) == port &&
      authority[authority.size() - port.size() - 1] == ':') {
    std::string_view host = authority.substr(0, authority.size() - port.size() - 1);
    if (host.back() != '@') return host;
  }
  return authority;
}

std::string_view default_port_of(std::string_view scheme) {
  if (iequals(scheme, "http")) return "80";
  if (iequals(scheme, "https")) return "443";
  return {};
}

}  // namespace

std::string_view normalize_target(const RequestHead& h, StringStore& st) {
  std::string_view scheme, authority, rest;
  if (h.method_id == Method::kConnect || !split_absolute(h.target, scheme, authority, rest))
    return h.target;
  std::string_view port = default_port_of(scheme);
  if (port.empty()) return h.target;
  std::string_view host = strip_port(authority, port);
  if (host.size() == authority.size() && !rest.empty() && rest[0] == '/') return h.target;
  std::string out;
  out.append(scheme);
  out += "://";
  out.append(host);
  if (rest.empty() || rest[0] != '/') out += '/';
  out.append(rest);
  return kept(st, std::move(out));
}

bool rewrite_request_fields(const RequestHead& h, std::vector<Header>& f,
                            StringStore& st) {
  // Host: equal duplicates are dropped; the default port of an absolute http(s) target or of
  // a CONNECT leaves the field.
  std::string_view scheme, authority, rest;
  std::string_view port;
  if (h.method_id == Method::kConnect) port = "443";
  else if (split_absolute(h.target, scheme, authority, rest)) port = default_port_of(scheme);
  bool host_seen = false;
  for (auto it = f.begin(); it != f.end();) {
    if (!iequals(it->name, "host")) {
      ++it;
      continue;
    }
    if (host_seen) {
      it = f.erase(it);
      continue;
    }
    host_seen = true;
    if (!port.empty()) {
      std::string_view v = strip_port(it->value, port);
      if (h.method_id == Method::kConnect && v.size() == it->value.size()) v = strip_port(v, "80");
      it->value = v;
    }
    ++it;
  }
  const bool upgrade = rewrite_connection(h, true, false, f, st);
  rewrite_framing(h, false, f, st);
  // TE is reduced to `trailers` when listed, else dropped.
  for (auto it = f.begin(); it != f.end();) {
    if (!iequals(it->name, "te")) {
      ++it;
      continue;
    }
    bool trailers = false;
    each_token(it->value, [&](std::string_view t) {
      if (iequals(t.substr(0, t.find(';')), "trailers")) trailers = true;
    });
    if (!trailers) {
      it = f.erase(it);
      continue;
    }
    it->value = "trailers";
    ++it;
  }
  return upgrade;
}

void rewrite_response_fields(const ResponseHead& h, bool tunnel, std::vector<Header>& f,
                             StringStore& st) {
  rewrite_connection(h, false, h.status == 101, f, st);
  // 1xx, 204 and tunnels carry no framing; 304 and HEAD keep theirs unchanged.
  rewrite_framing(h, tunnel || h.status == 204 || (h.status >= 100 && h.status < 200), f, st);
}

namespace {
// Whether a Content-Length value says `want`: digits only (blanks around trimmed), any width
// up to 2^64 - 1 as the parser admits.
bool cl_says(std::string_view v, uint64_t want) {
  v = trim_ows(v);
  if (v.empty()) return false;
  uint64_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return false;
    auto d = static_cast<uint64_t>(c - '0');
    if (n > (UINT64_MAX - d) / 10) return false;
    n = n * 10 + d;
  }
  return n == want;
}
}  // namespace

bool is_framing_field(std::string_view name) {
  return iequals(name, "content-length") || iequals(name, "transfer-encoding");
}

Framing finalize_framing(const MessageInfo& m, bool bodyless, bool can_rechunk,
                         std::vector<Header>& f, StringStore& st) {
  if (bodyless || m.body == BodyKind::kTunnel) return Framing::kOk;
  const bool chunked = m.body == BodyKind::kChunked;
  const bool sized = m.body == BodyKind::kContentLength;
  // What the body is, as a Content-Length would say it: its length, 0 for no body; a chunked or
  // close-delimited body has none.
  const uint64_t want = sized ? m.content_length : 0;
  const bool cl_allowed = !chunked && m.body != BodyKind::kUntilClose;
  bool cl_seen = false, te_seen = false;
  for (auto it = f.begin(); it != f.end();) {
    bool cl = iequals(it->name, "content-length");
    bool te = !cl && iequals(it->name, "transfer-encoding");
    if (!cl && !te) {
      ++it;
      continue;
    }
    // A value the body does not match would make the peer split the stream elsewhere than
    // sluice does: the message must not leave at all.
    if (cl && (!cl_allowed || !cl_says(it->value, want))) return Framing::kConflict;
    if (te && (!chunked || !iequals(trim_ows(it->value), "chunked"))) return Framing::kConflict;
    // One canonical field of each kind.
    if ((cl && cl_seen) || (te && te_seen)) {
      it = f.erase(it);
      continue;
    }
    if (cl) {
      // Usually already canonical (the parser checked it equals the body's length): written
      // afresh only when it has blanks or leading zeros, saving an allocation per message.
      std::string_view v = it->value;
      if (v.empty() || v.front() < '0' || v.front() > '9' || v.back() < '0' || v.back() > '9' ||
          (v.size() > 1 && v.front() == '0'))
        it->value = kept(st, std::to_string(want));
      cl_seen = true;
    } else {
      it->value = "chunked";
      te_seen = true;
    }
    ++it;
  }
  if (chunked && !te_seen) {
    // The body goes out chunked whatever the rules removed.
    f.push_back({"transfer-encoding", "chunked"});
  } else if (sized && !cl_seen) {
    if (can_rechunk) {
      f.push_back({"transfer-encoding", "chunked"});
      return Framing::kRechunk;
    }
    f.push_back({"content-length", kept(st, std::to_string(want))});
  } else if (m.body == BodyKind::kNone && m.has_content_length && !cl_seen) {
    // An empty body framed by `content-length: 0` (a 200 with CL 0): without the field a
    // response runs to the server's close, so the client would read the next response on the
    // connection as this one's body. Put back like any other deleted length.
    f.push_back({"content-length", "0"});
  }
  return Framing::kOk;
}

std::string_view error_reason(int status) {
  switch (status) {
    case 400: return "Bad request";    // HAProxy's spelling on its own pages
    case 407: return "Unauthorized";   // sic, as HAProxy's H1 layer writes it
    case 200: case 401: case 403: case 404: case 405: case 408: case 410: case 413: case 414:
    case 421: case 422: case 425: case 429: case 431: case 500: case 501: case 502: case 503:
    case 504:
      return default_reason(status);
    default: return {};
  }
}

namespace {
std::string_view error_text(int status) {
  switch (status) {
    case 200: return "Service ready.";
    case 400: return "Your browser sent an invalid request.";
    case 401:
    case 407: return "You need a valid user and password to access this content.";
    case 403: return "Request forbidden by administrative rules.";
    case 404: return "The resource could not be found.";
    case 405: return "A request was made of a resource using a request method not supported by that resource.";
    case 408: return "Your browser didn't send a complete request in time.";
    case 410: return "The resource is no longer available and will not be available again.";
    case 413: return "The request entity exceeds the maximum allowed.";
    case 414: return "The URI provided was too long for the server to process.";
    case 421: return "Request sent to a non-authoritative server.";
    case 422: return "The server cannot process the contained instructions.";
    case 425: return "Your browser sent early data.";
    case 429: return "You have sent too many requests in a given amount of time.";
    case 431: return "Request Header Fields Too Large.";
    case 500: return "An internal server error occurred.";
    case 501: return "The server does not support the functionality required to fulfill the request.";
    case 502: return "The server returned an invalid or incomplete response.";
    case 503: return "No server is available to handle this request.";
    case 504: return "The server didn't respond in time.";
    default: return {};
  }
}
}  // namespace

bool has_error_page(int status) { return !error_reason(status).empty(); }

std::string error_page(int status) {
  std::string_view reason = error_reason(status);
  if (reason.empty()) {
    status = 500;
    reason = error_reason(500);
  }
  std::string body = "<html><body><h1>" + std::to_string(status) + " " + std::string(reason) +
                     "</h1>\n" + std::string(error_text(status)) + "\n</body></html>\n";
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) + "\r\n";
  out += "content-length: " + std::to_string(body.size()) + "\r\n";
  out += "cache-control: no-cache\r\n";
  if (status == 400 || status == 408) out += "connection: close\r\n";
  out += "content-type: text/html\r\n\r\n";
  out += body;
  return out;
}

}  // namespace sluice::http

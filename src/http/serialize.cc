// Head serialization for forwarding: start lines with single SP, versions >= 1.1 as HTTP/1.1,
// field names lower-cased, a standard reason for an empty one, chunk sizes in upper-case hex.
#include <algorithm>
#include <cstring>

#include "http/http.h"

namespace sluice::http {
namespace {

void append_version(std::string_view wire, int major, int minor, std::string& out) {
  // >= 1.1 is forwarded as HTTP/1.1; 1.0 and 0.x verbatim.
  if (major > 1 || (major == 1 && minor >= 1)) out += "HTTP/1.1";
  else out += wire;
}

void append_headers(const std::vector<Header>& headers, std::string& out, bool lower_names) {
  // Sized once, then written through a pointer: a head is serialized for every message.
  std::size_t need = 2;
  for (const auto& h : headers) need += h.name.size() + h.value.size() + 4;
  std::size_t at = out.size();
  out.resize(at + need);
  char* p = out.data() + at;
  for (const auto& h : headers) {
    if (lower_names) {
      for (char c : h.name) *p++ = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
    } else {
      std::memcpy(p, h.name.data(), h.name.size());
      p += h.name.size();
    }
    *p++ = ':';
    *p++ = ' ';
    std::memcpy(p, h.value.data(), h.value.size());
    p += h.value.size();
    *p++ = '\r';
    *p++ = '\n';
  }
  *p++ = '\r';
  *p = '\n';
}

// h1-case-adjust, over the fields append_headers() just wrote from `at` on (lower-case
// names): each listed name is overwritten in place, since only the case differs. Apart from
// the common path, which it leaves as it was.
void adjust_names(const std::vector<Header>& headers, std::string& out, std::size_t at,
                  const CaseMap& adjust) {
  char* q = out.data() + at;
  for (const auto& h : headers) {
    if (const std::string* s = adjust.find(std::string_view(q, h.name.size())))
      std::memcpy(q, s->data(), s->size());
    q += h.name.size() + h.value.size() + 4;
  }
}

}  // namespace

void append_request_head(std::string_view method, std::string_view target,
                         std::string_view version, const std::vector<Header>& headers,
                         std::string& out, bool lower_names, const CaseMap* adjust) {
  out += method;
  out += ' ';
  out += target;
  out += ' ';
  out += version;
  out += "\r\n";
  const std::size_t at = out.size();
  append_headers(headers, out, lower_names);
  if (adjust && lower_names) adjust_names(headers, out, at, *adjust);
}

void append_request_head(const RequestHead& h, std::string& out, bool lower_names) {
  out += h.method;
  out += ' ';
  out += h.target;
  out += ' ';
  append_version(h.version, h.version_major, h.version_minor, out);
  out += "\r\n";
  append_headers(h.headers, out, lower_names);
}

void append_response_head(const ResponseHead& h, std::string& out, bool lower_names) {
  append_response_head(h, h.headers, out, lower_names);
}

void append_response_head(const ResponseHead& h, const std::vector<Header>& headers,
                          std::string& out, bool lower_names, const CaseMap* adjust) {
  append_version(h.version, h.version_major, h.version_minor, out);
  out += ' ';
  int s = h.status;
  out += static_cast<char>('0' + (s / 100) % 10);
  out += static_cast<char>('0' + (s / 10) % 10);
  out += static_cast<char>('0' + s % 10);
  out += ' ';
  // An empty reason gets the standard one (`HTTP/1.1 200` -> `HTTP/1.1 200 OK`).
  out += h.reason.empty() ? default_reason(s) : h.reason;
  out += "\r\n";
  const std::size_t at = out.size();
  append_headers(headers, out, lower_names);
  if (adjust && lower_names) adjust_names(headers, out, at, *adjust);
}

bool CaseMap::add(std::string lower, std::string spelled) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), lower,
                             [](const auto& e, const std::string& k) { return e.first < k; });
  if (it != entries_.end() && it->first == lower) return false;
  entries_.emplace(it, std::move(lower), std::move(spelled));
  return true;
}

const std::string* CaseMap::find(std::string_view lower) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), lower,
                             [](const auto& e, std::string_view k) { return e.first < k; });
  return it != entries_.end() && it->first == lower ? &it->second : nullptr;
}

CaseMap& case_adjust_map() {
  static CaseMap m;
  return m;
}

std::size_t format_chunk_header(uint64_t size, char (&out)[kChunkHeaderMax]) {
  char digits[16];
  std::size_t d = 0;
  do {
    digits[d++] = "0123456789ABCDEF"[size & 0xF];
    size >>= 4;
  } while (size != 0);
  std::size_t n = 0;
  while (d > 0) out[n++] = digits[--d];
  out[n++] = '\r';
  out[n++] = '\n';
  return n;
}

void append_chunk_header(uint64_t size, std::string& out) {
  char line[kChunkHeaderMax];
  out.append(line, format_chunk_header(size, line));
}

std::string_view default_reason(int status) {
  switch (status) {
    case 100: return "Continue";
    case 101: return "Switching Protocols";
    case 103: return "Early Hints";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 203: return "Non-Authoritative Information";
    case 204: return "No Content";
    case 205: return "Reset Content";
    case 206: return "Partial Content";
    case 300: return "Multiple Choices";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 303: return "See Other";
    case 304: return "Not Modified";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Time-out";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 421: return "Misdirected Request";
    case 422: return "Unprocessable Content";
    case 425: return "Too Early";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Time-out";
    default:
      // HAProxy's reason for a code it does not know: its class's name.
      switch (status / 100) {
        case 1: return "Informational";
        case 2: return "Success";
        case 3: return "Redirection";
        case 4: return "Client Error";
        case 5: return "Server Error";
        default: return "Other";
      }
  }
}

}  // namespace sluice::http

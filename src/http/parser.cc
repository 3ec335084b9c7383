// Request and response head parsing: strict mode by default, and the relaxed request mode of
// `option accept-unsafe-violations-in-http-request` (Limits::accept_unsafe_requests).
#include <array>
#include <cstring>
#include <forward_list>

#include "http/http.h"

namespace sluice::http {
namespace {

constexpr std::array<bool, 256> make_tchar() {
  std::array<bool, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[c] = true;
  for (int c = 'a'; c <= 'z'; ++c) t[c] = true;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = true;
  for (char c : std::string_view("!#$%&'*+-.^_`|~")) t[static_cast<unsigned char>(c)] = true;
  return t;
}
constexpr std::array<bool, 256> kTchar = make_tchar();

bool is_ws(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_ws(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ws(s.back())) s.remove_suffix(1);
  return s;
}

// Calls fn(element) for each comma-separated element, trimmed of OWS; empty elements included,
// because Content-Length and Transfer-Encoding must reject them.
template <typename Fn>
bool for_each_element(std::string_view v, Fn&& fn) {
  while (true) {
    auto comma = v.find(',');
    if (!fn(trim(v.substr(0, comma)))) return false;
    if (comma == std::string_view::npos) return true;
    v.remove_prefix(comma + 1);
  }
}

bool is_version(std::string_view v, int& major, int& minor) {
  if (v.size() != 8 || v.substr(0, 5) != "HTTP/" || v[6] != '.') return false;
  if (v[5] < '0' || v[5] > '9' || v[7] < '0' || v[7] > '9') return false;
  major = v[5] - '0';
  minor = v[7] - '0';
  return true;
}

// Takes the next line off `rest`. The scanner checked that every CR is followed by LF, so a
// line ends at LF, with the CR before it dropped when there is one (a bare LF only exists in a
// relaxed request head).
std::string_view next_line(std::string_view& rest) {
  auto lf = rest.find('\n');
  std::string_view line = rest.substr(0, lf);
  rest.remove_prefix(lf == std::string_view::npos ? rest.size() : lf + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// What the relaxed request mode may let through, and where it records that it did.
struct Relax {
  bool on = false;
  StringStore* owned = nullptr;  // storage for rebuilt values
  ParseError tolerated = ParseError::kNone;
  // One of the violations HAProxy 3.5 counts as a protocol glitch when it lets it through
  // (measured: a bad field name, NUL in a value, a byte HAProxy refuses in the target, an
  // authority that differs from Host; not bare LF, obs-fold nor HTTP/0.9, which HAProxy
  // takes in any mode).
  bool glitch = false;

  // True when the violation `e` is let through (and recorded); false when it must be refused.
  bool allow(ParseError e) {
    if (!on) return false;
    if (tolerated == ParseError::kNone) tolerated = e;
    glitch = glitch || e == ParseError::kBadFieldName || e == ParseError::kNulInValue ||
             e == ParseError::kBadTarget || e == ParseError::kHostMismatch;
    return true;
  }
};

// Framing and connection fields collected while walking the header list.
struct FieldState {
  bool cl_seen = false;
  uint64_t cl = 0;
  std::vector<std::string_view> te;  // every coding of every TE field, in order
  std::size_t ws_key_len = 0;
  bool ws_key_seen = false;
};

bool parse_content_length(std::string_view v, FieldState& st) {
  return for_each_element(v, [&](std::string_view e) {
    if (e.empty()) return false;
    uint64_t n = 0;
    for (char c : e) {
      if (c < '0' || c > '9') return false;
      uint64_t d = static_cast<uint64_t>(c - '0');
      if (n > (UINT64_MAX - d) / 10) return false;  // overflow
      n = n * 10 + d;
    }
    if (st.cl_seen && n != st.cl) return false;
    st.cl_seen = true;
    st.cl = n;
    return true;
  });
}

void connection_tokens(std::string_view v, MessageInfo& m) {
  for_each_element(v, [&](std::string_view e) {
    if (iequals(e, "close")) m.conn_close = true;
    else if (iequals(e, "keep-alive")) m.conn_keep_alive = true;
    else if (iequals(e, "upgrade")) m.conn_upgrade = true;
    return true;
  });
}

// What one field means for framing and connection handling.
ParseError field_semantics(const Header& h, MessageInfo& m, FieldState& st) {
  if (iequals(h.name, "content-length")) {
    m.has_content_length = true;
    if (!parse_content_length(h.value, st)) return ParseError::kBadContentLength;
  } else if (iequals(h.name, "transfer-encoding")) {
    m.has_transfer_encoding = true;
    for_each_element(h.value, [&](std::string_view e) {
      st.te.push_back(e);
      return true;
    });
  } else if (iequals(h.name, "connection")) {
    connection_tokens(h.value, m);
  } else if (iequals(h.name, "upgrade")) {
    m.has_upgrade = true;
    for_each_element(h.value, [&](std::string_view e) {
      if (iequals(e, "websocket")) m.upgrade_websocket = true;
      return true;
    });
  } else if (iequals(h.name, "sec-websocket-key")) {
    st.ws_key_seen = true;
    st.ws_key_len = h.value.size();
  }
  return ParseError::kNone;
}

// Splits the completed head [start, end) into lines and fills the header list. Returns the
// start line through `first`. A field is judged once its last line is known, because in relaxed
// mode obs-fold lines may still extend its value; errors come out in line order all the same.
ParseError split_fields(std::string_view head, const Limits& limits, Relax& relax,
                        std::string_view& first, MessageInfo& m, FieldState& st) {
  // The scanner guaranteed every line ends in CRLF (or LF in relaxed mode) and the head ends
  // with an empty line.
  first = next_line(head);
  bool pending = false;        // m.headers.back() still waits for its semantics
  bool dropping = false;       // the current field is dropped (relaxed), folds included
  bool first_field = true;     // no field line seen yet since the start line
  std::string* joined = nullptr;  // owned value of the current field once it was folded
  auto flush = [&]() {
    if (!pending) return ParseError::kNone;
    pending = false;
    return field_semantics(m.headers.back(), m, st);
  };
  while (true) {
    std::string_view line = next_line(head);
    if (line.empty()) break;
    if (is_ws(line.front())) {
      // obs-fold: strict mode refuses it (HAProxy would accept it); relaxed mode joins it to the
      // field with one SP, and drops a fold with no field to continue.
      if (!relax.allow(ParseError::kObsFold)) {
        if (auto e = flush(); e != ParseError::kNone) return e;
        return ParseError::kObsFold;
      }
      if (first_field || dropping) {
        first_field = false;
        dropping = true;
        continue;
      }
      std::string_view more = trim(line);
      if (more.empty()) continue;
      Header& h = m.headers.back();
      if (joined == nullptr) {
        joined = &relax.owned->emplace_front(h.value);
      }
      if (!joined->empty()) joined->push_back(' ');
      joined->append(more);
      h.value = *joined;
      continue;
    }
    if (auto e = flush(); e != ParseError::kNone) return e;
    first_field = false;
    dropping = false;
    joined = nullptr;
    std::size_t i = 0;
    while (i < line.size() && kTchar[static_cast<unsigned char>(line[i])]) ++i;
    if (i == 0 || i >= line.size() || line[i] != ':') {
      // A non-tchar byte in a name that still ends at a colon is dropped in relaxed mode; an
      // empty name or a line without a colon never passes.
      auto colon = line.find(':');
      if (colon == std::string_view::npos || colon == 0 ||
          !relax.allow(ParseError::kBadFieldName)) {
        return ParseError::kBadFieldName;
      }
      dropping = true;
      continue;
    }
    std::string_view value = trim(line.substr(i + 1));
    if (value.find('\0') != std::string_view::npos && !relax.allow(ParseError::kNulInValue)) {
      return ParseError::kNulInValue;
    }
    if (m.headers.size() >= limits.max_fields) return ParseError::kTooManyFields;
    m.headers.push_back(Header{line.substr(0, i), value});
    pending = true;
  }
  if (auto e = flush(); e != ParseError::kNone) return e;
  m.content_length = st.cl;
  return ParseError::kNone;
}

// Transfer-Encoding must be exactly one final `chunked`.
ParseError check_te(const std::vector<std::string_view>& te) {
  for (std::size_t i = 0; i < te.size(); ++i) {
    if (te[i].empty()) return ParseError::kBadTransferEncoding;
    if (iequals(te[i], "chunked") && i + 1 != te.size()) return ParseError::kBadTransferEncoding;
  }
  if (te.empty() || !iequals(te.back(), "chunked")) return ParseError::kBadTransferEncoding;
  // Only chunked is decoded, and the forwarded message says just `chunked`: passing on any other
  // coding would hand the peer coded bytes with nothing naming the coding. HAProxy refuses it
  // both ways (422 for a request; for a response every parse error is a 502).
  if (te.size() > 1) return ParseError::kUnsupportedCoding;
  return ParseError::kNone;
}

// Splits host[:port] where the port follows the last colon outside brackets.
void split_host_port(std::string_view a, std::string_view& host, std::string_view& port,
                     bool& has_port) {
  auto colon = a.rfind(':');
  auto bracket = a.rfind(']');
  if (colon == std::string_view::npos || (bracket != std::string_view::npos && colon < bracket)) {
    host = a;
    port = {};
    has_port = false;
    return;
  }
  host = a.substr(0, colon);
  port = a.substr(colon + 1);
  has_port = true;
}

// Equal, or equal once a default port of the scheme is dropped from either side (80 for
// http, 443 for https).
bool same_authority(std::string_view a, std::string_view b, std::string_view default_port) {
  auto strip = [&](std::string_view s) {
    std::string_view h, p;
    bool has = false;
    split_host_port(s, h, p, has);
    if (has && !default_port.empty() && p == default_port) return h;
    return s;
  };
  return iequals(strip(a), strip(b));
}

// CONNECT: a Host with a port must match host and port; without one, the target port
// must be a default one and the hosts equal.
bool same_connect_host(std::string_view host, std::string_view port, std::string_view host_field) {
  std::string_view hh, hp;
  bool h_has_port = false;
  split_host_port(host_field, hh, hp, h_has_port);
  if (h_has_port) return iequals(hh, host) && hp == port;
  return (port == "80" || port == "443") && iequals(hh, host);
}

bool is_version_token(std::string_view v) {
  if (v.empty()) return false;
  for (char c : v) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x21 || u > 0x7E) return false;
  }
  return true;
}

// Request line: method SP+ target SP+ version. `http09` tells a relaxed HTTP/0.9 request
// (no version), which has no header section.
ParseError parse_request_line(std::string_view line, RequestHead& h, Relax& relax, bool& http09) {
  http09 = false;
  std::size_t i = 0;
  while (i < line.size() && kTchar[static_cast<unsigned char>(line[i])]) ++i;
  if (i == line.size() || !is_ws(line[i])) return (ParseError::kBadMethod);
  h.method = line.substr(0, i);
  if (h.method == "PRI") return (ParseError::kPriMethod);
  h.method_id = method_from(h.method);
  while (i < line.size() && is_ws(line[i])) ++i;
  std::size_t t0 = i;
  while (i < line.size() && !is_ws(line[i])) {
    auto c = static_cast<unsigned char>(line[i]);
    if (c < 0x21 || c == 0x7F) return (ParseError::kBadTarget);
    // A fragment or a non-ASCII byte: relaxable.
    if ((c > 0x7E || c == '#') && !relax.allow(ParseError::kBadTarget)) {
      return (ParseError::kBadTarget);
    }
    ++i;
  }
  h.target = line.substr(t0, i - t0);
  if (h.target.empty()) return (ParseError::kBadTarget);
  while (i < line.size() && is_ws(line[i])) ++i;
  h.version = line.substr(i);
  if (is_version(h.version, h.version_major, h.version_minor)) return ParseError::kNone;
  if (h.version.empty()) {
    // HTTP/0.9: only a relaxed GET, presented as HTTP/1.0 and closed afterwards.
    if (h.method_id != Method::kGet || !relax.allow(ParseError::kBadVersion)) {
      return (ParseError::kBadVersion);
    }
    http09 = true;
    h.version = "HTTP/1.0";  // static storage: no need to own it
  } else if (!is_version_token(h.version) || !relax.allow(ParseError::kBadVersion)) {
    return (ParseError::kBadVersion);
  }
  // Any other version token is kept verbatim and has HTTP/1.0 semantics, in close mode.
  h.version_major = 1;
  h.version_minor = 0;
  h.force_close = true;
  return ParseError::kNone;
}

ParseError check_target(RequestHead& h, Relax& relax) {
  std::string_view t = h.target;
  if (h.method_id == Method::kConnect) {
    // Relaxed mode skips the character checks of the authority, but a `/` means the target is
    // no authority at all (`CONNECT /`, `CONNECT http://a:443`, row 27 of parser_test.cc).
    if (!valid_authority(t) &&
        (t.find('/') != std::string_view::npos || !relax.allow(ParseError::kBadTargetForm))) {
      return ParseError::kBadTargetForm;
    }
    std::string_view host, port;
    bool has_port = false;
    split_host_port(t, host, port, has_port);
    if (!has_port || port.empty() || host.empty()) return ParseError::kBadTargetForm;
    for (char c : port) {
      if (c < '0' || c > '9') return ParseError::kBadTargetForm;
    }
    // Relaxed: the authority is not compared with Host (row 28 of parser_test.cc).
    if (h.has_host && !same_connect_host(host, port, h.host) &&
        !relax.allow(ParseError::kHostMismatch)) {
      return ParseError::kHostMismatch;
    }
    return ParseError::kNone;
  }
  if (t == "*") {
    bool ok = h.method_id == Method::kOptions || h.method_id == Method::kOther;
    return ok ? ParseError::kNone : ParseError::kBadTargetForm;
  }
  if (t.front() == '/') return ParseError::kNone;
  // absolute-form: scheme "://" authority [path]
  std::size_t i = 0;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!alpha(t[0])) return ParseError::kBadTargetForm;
  while (i < t.size() && (alpha(t[i]) || (t[i] >= '0' && t[i] <= '9') || t[i] == '+' ||
                          t[i] == '-' || t[i] == '.')) {
    ++i;
  }
  if (t.substr(i, 3) != "://") return ParseError::kBadTargetForm;
  std::string_view scheme = t.substr(0, i);
  std::string_view rest = t.substr(i + 3);
  std::string_view authority = rest.substr(0, rest.find_first_of("/?"));
  if (auto at = authority.rfind('@'); at != std::string_view::npos) {
    authority.remove_prefix(at + 1);  // userinfo is forwarded, not compared
  }
  if (authority.empty()) return ParseError::kBadTargetForm;
  if (!valid_authority(authority) && !relax.allow(ParseError::kBadTargetForm)) {
    return ParseError::kBadTargetForm;
  }
  if (h.has_host) {
    std::string_view def = iequals(scheme, "http") ? "80" : iequals(scheme, "https") ? "443" : "";
    // Relaxed: the authority is not compared with Host (row 23 of parser_test.cc).
    if (!same_authority(authority, h.host, def) && !relax.allow(ParseError::kHostMismatch)) {
      return ParseError::kHostMismatch;
    }
  }
  return ParseError::kNone;
}

}  // namespace

bool is_tchar(unsigned char c) { return kTchar[c]; }

bool valid_authority(std::string_view a) {
  int depth = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto c = static_cast<unsigned char>(a[i]);
    if (c < 0x21 || c > 0x7E) return false;
    switch (c) {
      case ',': case '#': case '/': case '?': case '@': case '\\':
        return false;
      case '[':
        if (i != 0) return false;
        ++depth;
        break;
      case ']':
        if (depth != 1 || !(i + 1 == a.size() || a[i + 1] == ':')) return false;
        --depth;
        break;
      default:
        break;
    }
  }
  return depth == 0;
}

const Header* MessageInfo::find(std::string_view name) const {
  for (const auto& h : headers) {
    if (iequals(h.name, name)) return &h;
  }
  return nullptr;
}

Method method_from(std::string_view t) {
  if (t == "GET") return Method::kGet;
  if (t == "HEAD") return Method::kHead;
  if (t == "POST") return Method::kPost;
  if (t == "PUT") return Method::kPut;
  if (t == "DELETE") return Method::kDelete;
  if (t == "OPTIONS") return Method::kOptions;
  if (t == "TRACE") return Method::kTrace;
  if (t == "CONNECT") return Method::kConnect;
  return Method::kOther;
}

const char* to_string(ParseError e) {
  switch (e) {
    case ParseError::kNone: return "none";
    case ParseError::kBadStart: return "invalid byte at message start";
    case ParseError::kBareCr: return "CR not followed by LF";
    case ParseError::kBareLf: return "bare LF";
    case ParseError::kBadMethod: return "invalid method";
    case ParseError::kPriMethod: return "PRI method";
    case ParseError::kBadTarget: return "invalid request-target";
    case ParseError::kBadVersion: return "invalid HTTP version";
    case ParseError::kRequestLineTooLong: return "request line too long";
    case ParseError::kHeadTooLarge: return "header block too large";
    case ParseError::kTooManyFields: return "too many header fields";
    case ParseError::kBadFieldName: return "invalid header field name";
    case ParseError::kObsFold: return "obsolete line folding";
    case ParseError::kNulInValue: return "NUL in header value";
    case ParseError::kBadHost: return "invalid Host";
    case ParseError::kHostMismatch: return "Host does not match";
    case ParseError::kBadTargetForm: return "invalid request-target form";
    case ParseError::kBadContentLength: return "invalid Content-Length";
    case ParseError::kBadTransferEncoding: return "invalid Transfer-Encoding";
    case ParseError::kUnsupportedCoding: return "unsupported transfer coding";
    case ParseError::kTeAndCl: return "Transfer-Encoding with Content-Length";
    case ParseError::kBodyNotAllowed: return "body not allowed";
    case ParseError::kConnectWithBody: return "CONNECT with a body";
    case ParseError::kBadWebSocketKey: return "invalid Sec-WebSocket-Key";
    case ParseError::kBadStatusLine: return "invalid status line";
    case ParseError::kBadStatus: return "invalid status code";
    case ParseError::kBadUpgrade101: return "101 without Connection: upgrade";
    case ParseError::kBadChunkSize: return "invalid chunk size";
    case ParseError::kChunkSizeOverflow: return "chunk size too large";
    case ParseError::kBadChunkExtension: return "invalid chunk extension";
    case ParseError::kBadChunkData: return "chunk data not followed by CRLF";
    case ParseError::kBadTrailer: return "invalid trailer field";
    case ParseError::kTooManyTrailers: return "too many trailer fields";
  }
  return "unknown";
}

int request_status(ParseError e) {
  switch (e) {
    case ParseError::kNone: return 0;
    case ParseError::kRequestLineTooLong: return 414;
    case ParseError::kHeadTooLarge: return 431;
    case ParseError::kUnsupportedCoding: return 422;
    case ParseError::kBodyNotAllowed: return 413;
    default: return 400;
  }
}

base::Error to_error(ParseError e, base::Side side) {
  base::Error err;
  err.side = side;
  err.message = to_string(e);
  return err;
}

namespace detail {

ParseStatus HeadScanner::scan(std::string_view buf, const Limits& limits, bool is_request) {
  if (error_ != ParseError::kNone) return ParseStatus::kError;
  auto fail = [&](ParseError e) {
    error_ = e;
    return ParseStatus::kError;
  };
  while (pos_ < buf.size()) {
    char c = buf[pos_];
    if (in_prefix_) {
      // Empty lines before a message are skipped.
      if (c == '\r' || c == '\n') {
        ++pos_;
        continue;
      }
      if (!kTchar[static_cast<unsigned char>(c)]) return fail(ParseError::kBadStart);
      in_prefix_ = false;
      start_ = line_start_ = pos_;
    }
    if (c == '\n' || c == '\r') {
      std::size_t eol = 2;
      if (c == '\n') {
        // A bare LF ends a line only in a relaxed request head (HAProxy accepts it by default).
        if (!is_request || !limits.accept_unsafe_requests) return fail(ParseError::kBareLf);
        bare_lf_ = true;
        eol = 1;
      } else {
        if (pos_ + 1 >= buf.size()) break;  // need the next byte to judge the CR
        if (buf[pos_ + 1] != '\n') return fail(ParseError::kBareCr);
      }
      bool empty = pos_ == line_start_;
      pos_ += eol;
      // The final CRLF counts: the whole head must fit.
      if (pos_ - start_ > limits.max_head) return fail(ParseError::kHeadTooLarge);
      ++line_no_;
      line_start_ = pos_;
      if (empty && line_no_ > 1) return ParseStatus::kComplete;
      // Pause after the start line so the parser judges it before any later byte: the error
      // then does not depend on how the input was split.
      if (line_no_ == 1) return ParseStatus::kIncomplete;
      continue;
    }
    // The rest of the line (or of the input) in one run: only CR and LF matter here. The limit
    // checks give what a byte-by-byte walk gives, since positions only grow.
    const char* p = buf.data() + pos_ + 1;
    const char* end = buf.data() + buf.size();
    // Eight bytes at a time while none of them is CR or LF (a zero byte of w ^ pattern marks a
    // match), then byte by byte to the exact position.
    constexpr uint64_t kOnes = 0x0101010101010101ULL, kHighs = 0x8080808080808080ULL;
    auto has_zero = [](uint64_t v) { return (v - kOnes) & ~v & kHighs; };
    while (end - p >= 8) {
      uint64_t w;
      std::memcpy(&w, p, 8);
      if (has_zero(w ^ (kOnes * '\r')) | has_zero(w ^ (kOnes * '\n'))) break;
      p += 8;
    }
    while (p < end && *p != '\r' && *p != '\n') ++p;
    pos_ = static_cast<std::size_t>(p - buf.data());
    if (line_no_ == 0) {
      // Only a start line that outgrows the whole input buffer is a 414; one that ends in
      // time but leaves no room for the rest is a 431.
      if (pos_ - start_ > limits.max_request_line) {
        return fail(is_request ? ParseError::kRequestLineTooLong : ParseError::kHeadTooLarge);
      }
    } else if (pos_ - start_ > limits.max_head) {
      return fail(ParseError::kHeadTooLarge);
    }
  }
  return ParseStatus::kIncomplete;
}

}  // namespace detail

ParseStatus RequestParser::fail(ParseError e) {
  error_ = e;
  return ParseStatus::kError;
}

namespace {

// Back to a default head, keeping the field list's storage: a connection parses head after head,
// and the next one of a similar size then allocates nothing for its fields.
template <class Head>
void clear_keeping_fields(Head& h) {
  std::vector<Header> fields = std::move(h.headers);
  fields.clear();
  h = Head{};
  h.headers = std::move(fields);
}

}  // namespace

void RequestParser::reset() {
  scanner_.reset();
  clear_keeping_fields(head_);
  consumed_ = 0;
  line_checked_ = false;
  error_ = ParseError::kNone;
  tolerated_ = ParseError::kNone;
  glitch_ = false;
  owned_.clear();
}

ParseStatus RequestParser::parse(std::string_view buf) {
  if (error_ != ParseError::kNone) return ParseStatus::kError;
  if (consumed_ != 0) return ParseStatus::kComplete;
  ParseStatus s = scanner_.scan(buf, limits_, true);
  if (s == ParseStatus::kError) return fail(scanner_.error());
  if (scanner_.lines() >= 1 && !line_checked_) {
    // A bad request line is refused as soon as it ends, without waiting for the head
    // (`abc` after a body-less POST is a 400 at once).
    std::string_view rest = buf.substr(scanner_.start());
    RequestHead probe;
    Relax relax{limits_.accept_unsafe_requests, &owned_};
    bool http09 = false;
    if (auto e = parse_request_line(next_line(rest), probe, relax, http09);
        e != ParseError::kNone) {
      return fail(e);
    }
    line_checked_ = true;
    if (http09) {
      // A relaxed HTTP/0.9 request is its request line alone; the scanner paused right
      // after that line. It gets the target checks of any GET.
      if (scanner_.saw_bare_lf()) relax.allow(ParseError::kBareLf);
      if (auto e = check_target(probe, relax); e != ParseError::kNone) return fail(e);
      head_ = probe;
      tolerated_ = relax.tolerated;
      glitch_ = relax.glitch;
      consumed_ = scanner_.end();
      return ParseStatus::kComplete;
    }
    s = scanner_.scan(buf, limits_, true);
    if (s == ParseStatus::kError) return fail(scanner_.error());
  }
  if (s == ParseStatus::kIncomplete) return s;

  std::string_view headbytes = buf.substr(scanner_.start(), scanner_.end() - scanner_.start());
  std::string_view line;
  FieldState st;
  clear_keeping_fields(head_);
  owned_.clear();
  Relax relax{limits_.accept_unsafe_requests, &owned_};
  if (scanner_.saw_bare_lf()) relax.allow(ParseError::kBareLf);
  // The start line passed the probe already; parsing it first records what relaxed mode let
  // through in wire order.
  std::string_view lines = headbytes;
  bool http09 = false;
  if (auto e = parse_request_line(next_line(lines), head_, relax, http09);
      e != ParseError::kNone) {
    return fail(e);
  }
  if (auto e = split_fields(headbytes, limits_, relax, line, head_, st); e != ParseError::kNone) {
    return fail(e);
  }

  // Host: the first one is validated, a different second one is refused.
  for (const auto& h : head_.headers) {
    if (!iequals(h.name, "host")) continue;
    if (!head_.has_host) {
      if (!h.value.empty() && !valid_authority(h.value)) return fail(ParseError::kBadHost);
      head_.has_host = true;
      head_.host = h.value;
    } else if (!iequals(h.value, head_.host)) {
      return fail(ParseError::kHostMismatch);
    }
  }
  if (const Header* ex = head_.find("expect"); ex && iequals(ex->value, "100-continue")) {
    head_.expect_continue = true;
  }

  // Framing: Content-Length and Transfer-Encoding.
  if (head_.has_transfer_encoding) {
    if (auto e = check_te(st.te); e != ParseError::kNone) return fail(e);
  }
  if (head_.has_transfer_encoding && head_.has_content_length) return fail(ParseError::kTeAndCl);
  if (head_.method_id == Method::kConnect &&
      (head_.has_transfer_encoding || head_.content_length != 0)) {
    return fail(ParseError::kConnectWithBody);
  }
  if (auto e = check_target(head_, relax); e != ParseError::kNone) return fail(e);
  if (head_.has_transfer_encoding) {
    head_.body = BodyKind::kChunked;
    // An HTTP/1.0 chunked request is decoded but its connection closes afterwards.
    if (!head_.http11()) head_.force_close = true;
  } else if (head_.has_content_length && head_.content_length > 0) {
    head_.body = BodyKind::kContentLength;
  }
  if (!head_.http11() && head_.body != BodyKind::kNone && !limits_.any_method_payload &&
      (head_.method_id == Method::kGet || head_.method_id == Method::kHead ||
       head_.method_id == Method::kDelete)) {
    return fail(ParseError::kBodyNotAllowed);
  }
  if (head_.method_id == Method::kConnect) head_.body = BodyKind::kNone;
  if (head_.conn_upgrade && head_.upgrade_websocket && (!st.ws_key_seen || st.ws_key_len != 24) &&
      !relax.allow(ParseError::kBadWebSocketKey)) {
    return fail(ParseError::kBadWebSocketKey);
  }
  tolerated_ = relax.tolerated;
  glitch_ = relax.glitch;
  consumed_ = scanner_.end();
  return ParseStatus::kComplete;
}

ParseStatus ResponseParser::fail(ParseError e) {
  error_ = e;
  return ParseStatus::kError;
}

void ResponseParser::reset() {
  scanner_.reset();
  clear_keeping_fields(head_);
  consumed_ = 0;
  error_ = ParseError::kNone;
  glitch_ = false;
}

ParseStatus ResponseParser::parse(std::string_view buf) {
  if (error_ != ParseError::kNone) return ParseStatus::kError;
  if (consumed_ != 0) return ParseStatus::kComplete;
  ParseStatus s = scanner_.scan(buf, limits_, false);
  if (s == ParseStatus::kIncomplete && scanner_.end() < buf.size()) {
    s = scanner_.scan(buf, limits_, false);  // it paused after the status line
  }
  if (s == ParseStatus::kError) return fail(scanner_.error());
  if (s == ParseStatus::kIncomplete) return s;

  std::string_view headbytes = buf.substr(scanner_.start(), scanner_.end() - scanner_.start());
  std::string_view line;
  FieldState st;
  clear_keeping_fields(head_);
  owned_.clear();
  Relax relax{relaxed_, &owned_};
  if (auto e = split_fields(headbytes, limits_, relax, line, head_, st); e != ParseError::kNone) {
    return fail(e);
  }
  glitch_ = relax.glitch;
  // Status line: version SP 3DIGIT [SP reason].
  if (line.size() < 12 || !is_version(line.substr(0, 8), head_.version_major,
                                      head_.version_minor) || line[8] != ' ') {
    return fail(ParseError::kBadStatusLine);
  }
  head_.version = line.substr(0, 8);
  std::string_view rest = line.substr(9);
  int code = 0;
  std::size_t i = 0;
  while (i < rest.size() && rest[i] >= '0' && rest[i] <= '9' && i < 4) {
    code = code * 10 + (rest[i] - '0');
    ++i;
  }
  if (i != 3 || (i < rest.size() && rest[i] != ' ')) return fail(ParseError::kBadStatus);
  head_.status = code;
  if (code < 100) return fail(ParseError::kBadStatus);
  head_.reason = i < rest.size() ? rest.substr(i + 1) : std::string_view{};
  for (char c : head_.reason) {
    auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && u != '\t') || u == 0x7F) return fail(ParseError::kBadStatusLine);
  }

  if (head_.has_transfer_encoding) {
    if (auto e = check_te(st.te); e != ParseError::kNone) return fail(e);
  }
  head_.te_and_cl = head_.has_transfer_encoding && head_.has_content_length;
  if (request_method_ == Method::kHead || code < 200 || code == 204 || code == 304) {
    head_.body = BodyKind::kNone;
  } else if (request_method_ == Method::kConnect && code < 300) {
    head_.body = BodyKind::kTunnel;
  } else if (head_.has_transfer_encoding) {
    head_.body = BodyKind::kChunked;
  } else if (head_.has_content_length) {
    head_.body = head_.content_length ? BodyKind::kContentLength : BodyKind::kNone;
  } else {
    head_.body = BodyKind::kUntilClose;
  }
  if (code == 101) {
    if (!head_.conn_upgrade) return fail(ParseError::kBadUpgrade101);
    head_.body = BodyKind::kTunnel;
  }
  consumed_ = scanner_.end();
  return ParseStatus::kComplete;
}

}  // namespace sluice::http

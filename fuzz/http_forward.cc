// Fuzzes what happens to a message after it parsed: the field rewrites of forwarding
// (rewrite_request_fields / rewrite_response_fields, normalize_target), the framing check after
// rules (finalize_framing), head serialization and the body re-encoding, and then parses what
// would go on the wire again. The peer must frame the forwarded message exactly as sluice did:
// same method, target or status, same body decision (length, chunked, up to close, none), the
// same body bytes and trailers, and nothing after the body that a peer could read as a further
// message. Any difference lets a client or server smuggle a message past sluice.
//
// Input: byte 0 chooses the side and the modes, byte 1 the edits a rule set makes to the framing
// fields (as `http-request set-header/del-header content-length ...` would), the rest is the
// received message, head and body bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "http/forward.h"
#include "http/http.h"

namespace {

namespace http = sluice::http;
using http::BodyKind;
using http::ChunkEvent;
using http::Header;
using http::ParseStatus;

void check(bool ok) {
  if (!ok) std::abort();
}

// Byte 0.
constexpr uint8_t kResponse = 1 << 0;
constexpr uint8_t kRelaxed = 1 << 1;   // the request parser's accept-unsafe mode
constexpr uint8_t kRules = 1 << 2;     // rules ran: byte 1 edits the fields, then finalize_framing
constexpr uint8_t kCloseMode = 1 << 3; // server-close (requests) / client close (responses)
// Bits 4-7: the method of the request a response answers (% 9).

// Byte 1: what the "rules" do to the framing fields.
constexpr uint8_t kDelCl = 1 << 0;
constexpr uint8_t kDelTe = 1 << 1;
constexpr uint8_t kAddClExact = 1 << 2;    // the body's own length
constexpr uint8_t kAddClOther = 1 << 3;    // one more than it
constexpr uint8_t kAddTeChunked = 1 << 4;
constexpr uint8_t kAddClZero = 1 << 5;
constexpr uint8_t kAddClPadded = 1 << 6;   // " 007 " style
constexpr uint8_t kAddTeOdd = 1 << 7;      // "Chunked " / "gzip, chunked"

void apply_rules(uint8_t ops, uint64_t len, std::vector<Header>& f, http::StringStore& st) {
  auto drop = [&](std::string_view name) {
    std::erase_if(f, [&](const Header& h) { return http::iequals(h.name, name); });
  };
  if (ops & kDelCl) drop("content-length");
  if (ops & kDelTe) drop("transfer-encoding");
  if (ops & kAddClExact) f.push_back({"Content-Length", http::keep(st, std::to_string(len))});
  if (ops & kAddClOther) f.push_back({"content-length", http::keep(st, std::to_string(len + 1))});
  if (ops & kAddTeChunked) f.push_back({"transfer-encoding", "chunked"});
  if (ops & kAddClZero) f.push_back({"content-length", "0"});
  if (ops & kAddClPadded)
    f.push_back({"content-length", http::keep(st, " 00" + std::to_string(len) + " ")});
  if (ops & kAddTeOdd) f.push_back({"Transfer-Encoding", (len & 1) ? "gzip, chunked" : "Chunked "});
}

// What a body decoded to: payload, trailers as forwarded (names lower-cased) and whether it
// ended (kDone) or broke (kError) or simply ran out of bytes.
struct Body {
  std::string payload;
  std::string trailers;
  bool done = false;
  bool error = false;
  std::size_t consumed = 0;  // input bytes the decoder took
};

Body decode_chunked(std::string_view in) {
  Body b;
  http::ChunkedDecoder d;
  std::size_t pos = 0;
  for (;;) {
    ChunkEvent ev = d.next(in.substr(pos));
    check(ev.consumed <= in.size() - pos);
    using K = ChunkEvent::Kind;
    if (ev.kind == K::kError) {
      b.error = true;
      break;
    }
    if (ev.kind == K::kData) b.payload.append(ev.data);
    if (ev.kind == K::kTrailer) {
      for (char c : ev.trailer.name)
        b.trailers += c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c;
      b.trailers += ": ";
      b.trailers.append(ev.trailer.value);
      b.trailers += "\r\n";
    }
    pos += ev.consumed;
    if (ev.kind == K::kDone) {
      b.done = true;
      break;
    }
    // The decoder takes all it can in one call: what is left is an unfinished line.
    if (ev.kind == K::kNeedMore) break;
  }
  b.consumed = pos;
  return b;
}

// The body as sluice re-encodes it (the proxy's move_body: lengths copied or sent as chunks when
// re-chunked, chunked bodies decoded and re-chunked with their trailers, close-delimited bodies
// copied). Returns the decoded view of the received body too.
Body forward_body(BodyKind kind, uint64_t length, bool rechunk, std::string_view in,
                  std::string& out) {
  Body b;
  switch (kind) {
    case BodyKind::kContentLength: {
      std::size_t take = static_cast<std::size_t>(std::min<uint64_t>(length, in.size()));
      b.payload.assign(in.substr(0, take));
      b.done = take == length;
      if (rechunk) {
        if (take) {
          http::append_chunk_header(take, out);
          out.append(b.payload);
          out += "\r\n";
        }
        if (b.done) out += "0\r\n\r\n";
      } else {
        out.append(b.payload);
      }
      break;
    }
    case BodyKind::kChunked: {
      b = decode_chunked(in);
      // Data leaves as it is decoded; the trailers and the last chunk only once the body ended.
      if (!b.payload.empty()) {
        http::append_chunk_header(b.payload.size(), out);
        out.append(b.payload);
        out += "\r\n";
      }
      if (b.done) {
        out += "0\r\n";
        out += b.trailers;
        out += "\r\n";
      }
      break;
    }
    case BodyKind::kUntilClose:
      b.payload.assign(in);
      out.append(in);
      break;
    case BodyKind::kNone:
    case BodyKind::kTunnel:
      b.done = true;
      break;
  }
  return b;
}

// The forwarded body, as the peer reads it after the head it parsed: it must give the same
// bytes, end where sluice's copy ended, and leave nothing after it.
void check_body(BodyKind kind, uint64_t length, std::string_view wire, const Body& sent) {
  switch (kind) {
    case BodyKind::kContentLength:
      check(wire.size() <= length);
      check(wire == sent.payload);
      check((wire.size() == length) == sent.done);
      break;
    case BodyKind::kChunked: {
      Body got = decode_chunked(wire);
      check(!got.error);
      check(got.payload == sent.payload);
      check(got.done == sent.done);
      if (got.done) {
        check(got.trailers == sent.trailers);
        check(got.consumed == wire.size());  // nothing after the last chunk
      }
      break;
    }
    case BodyKind::kUntilClose:
      check(wire == sent.payload);
      break;
    case BodyKind::kNone:
    case BodyKind::kTunnel:
      check(wire.empty());
      break;
  }
}

bool same_fields(const std::vector<Header>& a, const std::vector<Header>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].value != b[i].value) return false;
  return true;
}

// Limits for parsing what sluice sends: the rewrites may add a few fields and bytes (the proxy
// bounds the result by tune.bufsize separately).
http::Limits wide(http::Limits l) {
  l.max_head = l.max_request_line = std::size_t{1} << 20;
  l.max_fields = 1 << 16;
  return l;
}

void forward_request(uint8_t mode, uint8_t ops, std::string_view in) {
  http::Limits limits;
  limits.accept_unsafe_requests = mode & kRelaxed;
  http::RequestParser p(limits);
  if (p.parse(in) != ParseStatus::kComplete) return;
  const http::RequestHead& h = p.head();

  // H1Connection::on_request_head, then build_server_head.
  http::StringStore st;
  std::vector<Header> f = h.headers;
  std::string_view target = http::normalize_target(h, st);
  // Whether the server is asked to switch protocols: the proxy adds no connection mode then.
  const bool upgrade = http::rewrite_request_fields(h, f, st);
  bool rechunk = false;
  if (mode & kRules) {
    apply_rules(ops, h.content_length, f, st);
    switch (http::finalize_framing(h, false, h.http11(), f, st)) {
      case http::Framing::kOk: break;
      case http::Framing::kRechunk: rechunk = true; break;
      case http::Framing::kConflict: return;  // answered 500, nothing sent
    }
  } else {
    // Without rules the proxy skips the check: the rewrites alone must already frame the body.
    std::vector<Header> copy = f;
    check(http::finalize_framing(h, false, h.http11(), copy, st) == http::Framing::kOk);
    check(same_fields(copy, f));
  }
  check(!rechunk || h.body == BodyKind::kContentLength);
  if (!upgrade) {
    if ((mode & kCloseMode) && h.http11()) f.push_back({"connection", "close"});
    else if (!(mode & kCloseMode) && !h.http11()) f.push_back({"connection", "keep-alive"});
  }
  std::string_view version = h.http11() ? std::string_view("HTTP/1.1") : h.version;
  std::string out;
  http::append_request_head(h.method, target, version, f, out);
  const std::size_t head_size = out.size();
  Body sent = forward_body(h.body, h.content_length, rechunk, in.substr(p.consumed()), out);

  // The server's view. A head the strict parser took must come out strict too; a relaxed one
  // must at least parse in the same relaxed mode.
  const bool strict_clean = p.tolerated() == http::ParseError::kNone;
  http::Limits again_limits = wide(limits);
  if (strict_clean) again_limits.accept_unsafe_requests = false;
  http::RequestParser again(again_limits);
  check(again.parse(out) == ParseStatus::kComplete);
  check(again.consumed() == head_size);
  const http::RequestHead& g = again.head();
  if (strict_clean) check(again.tolerated() == http::ParseError::kNone);
  check(g.method == h.method);
  check(g.target == target);
  check(g.http11() == h.http11());
  // HTTP/0.9 reads as HTTP/1.0 and closes (force_close); the HTTP/1.0 it is sent as need not.
  check(!g.force_close || h.force_close);
  check(g.has_host == h.has_host);
  // The server sees an upgrade exactly when sluice waits for one (a 101 then opens a tunnel),
  // and never an Upgrade without its `upgrade` token.
  check((g.conn_upgrade && g.has_upgrade) == upgrade);
  check(!g.has_upgrade || g.conn_upgrade);
  const BodyKind want = rechunk ? BodyKind::kChunked : h.body;
  check(g.body == want);
  if (want == BodyKind::kContentLength) check(g.content_length == h.content_length);
  check_body(want, h.content_length, std::string_view(out).substr(head_size), sent);
}

void forward_response(uint8_t mode, uint8_t ops, std::string_view in) {
  const auto method = static_cast<http::Method>((mode >> 4) % 9);
  http::ResponseParser p;
  p.set_request_method(method);
  if (p.parse(in) != ParseStatus::kComplete) return;
  const http::ResponseHead& h = p.head();
  http::StringStore st;
  std::vector<Header> f = h.headers;
  std::string out;
  std::size_t head_size = 0;
  Body sent;
  const bool bodyless = method == http::Method::kHead || h.status == 204 || h.status == 304;
  if (h.status < 200 && h.status != 101) {
    // Interim: forwarded with its framing fields removed, then the final response is awaited.
    http::rewrite_response_fields(h, false, f, st);
    http::append_response_head(h, f, out);
    head_size = out.size();
  } else {
    const bool tunnel = h.body == BodyKind::kTunnel;
    http::rewrite_response_fields(h, tunnel, f, st);
    if (mode & kRules) {
      apply_rules(ops, h.content_length, f, st);
      if (http::finalize_framing(h, bodyless, false, f, st) == http::Framing::kConflict) return;
    } else {
      std::vector<Header> copy = f;
      check(http::finalize_framing(h, bodyless, false, copy, st) == http::Framing::kOk);
      check(same_fields(copy, f));
    }
    const bool client_close = (mode & kCloseMode) || h.body == BodyKind::kUntilClose;
    if (!tunnel) {
      if (!client_close && !h.http11()) f.push_back({"connection", "keep-alive"});
      else if (client_close && h.http11()) f.push_back({"connection", "close"});
    }
    http::append_response_head(h, f, out);
    head_size = out.size();
    sent = forward_body(h.body, h.content_length, false, in.substr(p.consumed()), out);
  }

  // The client's view, knowing the method it sent.
  http::ResponseParser again(wide(http::Limits{}));
  again.set_request_method(method);
  ParseStatus s = again.parse(out);
  // Rules may leave any framing fields on a message that has no body whatever they say
  // (finalize_framing's `bodyless`, and tunnels): only those fields may then be wrong.
  const bool fields_free = (mode & kRules) && (bodyless || h.body == BodyKind::kTunnel);
  if (s == ParseStatus::kError) {
    const http::ParseError e = again.error();
    if (fields_free && (e == http::ParseError::kBadContentLength ||
                        e == http::ParseError::kBadTransferEncoding ||
                        e == http::ParseError::kUnsupportedCoding))
      return;
  }
  // A 101 keeps `Connection: upgrade` even without an Upgrade field that names a protocol, so
  // the client reads it as the 101 it is (crash_res_101_empty_upgrade).
  check(s == ParseStatus::kComplete);
  check(again.consumed() == head_size);
  const http::ResponseHead& g = again.head();
  check(g.status == h.status);
  check(g.http11() == h.http11());
  if (!fields_free) check(!g.te_and_cl);
  check(g.body == h.body);
  check(!g.has_upgrade || g.conn_upgrade);
  if (h.body == BodyKind::kContentLength) check(g.content_length == h.content_length);
  check_body(h.body, h.content_length, std::string_view(out).substr(head_size), sent);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  std::string_view in(reinterpret_cast<const char*>(data) + 2, size - 2);
  if (data[0] & kResponse) forward_response(data[0], data[1], in);
  else forward_request(data[0], data[1], in);
  return 0;
}

#pragma once
// HTTP/1.1 codec: an incremental, zero-copy head parser for requests and responses, a chunked
// body decoder and a head serializer. A pure codec: it never touches a socket, so the proxy can
// feed it whatever a read returned and tests can feed it one byte at a time.
//
// Buffer contract (head parser and chunked decoder alike): each call gets the bytes that were not
// consumed yet, followed by any new bytes. The head parser consumes nothing until the head is
// complete, so the views in a completed head point into the buffer of that last call; the
// caller keeps those bytes alive while it uses the head. With Limits::accept_unsafe_requests a
// few views may instead point into storage owned by the RequestParser (a value rebuilt from
// obs-fold lines): they stay valid until its next reset() or parse of a new head, and move with
// it, but a copied parser's head still points into the original's storage.
#include <cstddef>
#include <cstdint>
#include <forward_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "base/strings.h"

namespace sluice::http {

// Why a message was rejected. The status a client gets is request_status(); a server's
// response that fails to parse always becomes a 502.
// Owned strings that parsed or rewritten views point into. Node-based, so views stay valid as
// it grows, and an empty store allocates nothing (one is made per message on the data path).
using StringStore = std::forward_list<std::string>;
inline std::string_view keep(StringStore& st, std::string s) { return st.emplace_front(std::move(s)); }

enum class ParseError : uint8_t {
  kNone,
  kBadStart,            // a non-token byte where a message must start
  kBareCr,              // CR not followed by LF
  kBareLf,              // LF without CR: a 400 in strict mode, where HAProxy accepts it
  kBadMethod,
  kPriMethod,           // HTTP/2 preface method on an H1 request
  kBadTarget,
  kBadVersion,
  kRequestLineTooLong,  // 414
  kHeadTooLarge,        // 431
  kTooManyFields,       // 400, not 431, as in HAProxy
  kBadFieldName,
  kObsFold,             // a 400 in strict mode, where HAProxy accepts it
  kNulInValue,
  kBadHost,
  kHostMismatch,        // second Host differs, or Host differs from the target's authority
  kBadTargetForm,
  kBadContentLength,
  kBadTransferEncoding,
  kUnsupportedCoding,   // a coding before a final chunked: 422
  kTeAndCl,             // both framing fields: 400 (HAProxy drops the CL and reads chunked)
  kBodyNotAllowed,      // HTTP/1.0 GET/HEAD/DELETE with a body: 413
  kConnectWithBody,     // CONNECT with a non-zero CL or any TE: 400 (HAProxy answers 502)
  kBadWebSocketKey,
  kBadStatusLine,
  kBadStatus,
  kBadUpgrade101,       // 101 without Connection: upgrade
  kBadChunkSize,
  kChunkSizeOverflow,
  kBadChunkExtension,
  kBadChunkData,
  kBadTrailer,
  kTooManyTrailers,
};

const char* to_string(ParseError e);
// Status HAProxy answers a client for a request rejected with `e` (400, 413, 414, 422, 431).
int request_status(ParseError e);
inline constexpr int kResponseErrorStatus = 502;
// For callers that carry errors as base::Error on the data path.
base::Error to_error(ParseError e, base::Side side);

enum class Method : uint8_t {
  kOther, kGet, kHead, kPost, kPut, kDelete, kOptions, kTrace, kConnect
};
Method method_from(std::string_view token);  // case-sensitive: "get" is kOther

enum class BodyKind : uint8_t {
  kNone,           // no body: the next bytes are the next message
  kContentLength,  // exactly content_length bytes
  kChunked,        // decode with ChunkedDecoder
  kUntilClose,     // response without framing: body runs to server close
  kTunnel,         // 101 or 2xx to CONNECT: bytes flow untouched both ways
};

struct Header {
  std::string_view name;   // as received (case preserved)
  std::string_view value;  // leading and trailing SP/HTAB trimmed
};

// What the framing and connection-related fields said; shared by requests and responses.
struct MessageInfo {
  int version_major = 1;
  int version_minor = 1;
  std::vector<Header> headers;
  BodyKind body = BodyKind::kNone;
  uint64_t content_length = 0;
  bool has_content_length = false;
  bool has_transfer_encoding = false;
  bool conn_close = false;
  bool conn_keep_alive = false;
  bool conn_upgrade = false;
  bool has_upgrade = false;      // an Upgrade field is present
  bool upgrade_websocket = false;

  bool http11() const { return version_major > 1 || (version_major == 1 && version_minor >= 1); }
  // Persistence as the message itself asks: 1.1 unless close, 1.0 only with keep-alive.
  bool wants_keep_alive() const { return http11() ? !conn_close : (conn_keep_alive && !conn_close); }
  // First field named `name` (case-insensitive); empty view and false when absent.
  const Header* find(std::string_view name) const;
};

struct RequestHead : MessageInfo {
  std::string_view method;
  std::string_view target;
  std::string_view version;  // the 8 wire bytes, e.g. "HTTP/1.1"
  Method method_id = Method::kOther;
  std::string_view host;     // first Host value; empty when absent or empty
  bool has_host = false;
  bool expect_continue = false;
  // The connection must close after this transaction (HTTP/1.0 with chunked).
  bool force_close = false;
};

struct ResponseHead : MessageInfo {
  std::string_view version;
  int status = 0;
  std::string_view reason;
  // TE and CL together: body read as chunked, server connection not reused.
  bool te_and_cl = false;
};

struct Limits {
  std::size_t max_request_line = 16384;  // tune.bufsize: a longer start line is a 414
  std::size_t max_head = 15360;          // tune.bufsize - tune.maxrewrite, wire bytes: 431
  std::size_t max_fields = 100;          // tune.http.maxhdr - 1; also per trailer section
  // `option accept-unsafe-violations-in-http-request`: HAProxy's relaxations, plus the bare LF
  // and obs-fold that strict mode refuses.
  // Request heads only; responses and chunked bodies stay strict. When set: bare LF line ends
  // and obs-fold (joined to the field's value with one SP) are admitted; bytes >= 0x80 and `#`
  // in the target pass; a field whose name has a non-tchar byte, and a fold on the first field
  // line, are dropped from the head; NUL in a value passes; a missing version is HTTP/0.9 (GET
  // only, presented as HTTP/1.0) and any other version token is kept verbatim as non-1.1; the
  // authority of absolute and CONNECT targets is neither checked nor compared with Host; a
  // WebSocket request without a valid key passes. CL with TE, bad CL/TE, Host errors and chunk
  // errors are never relaxed.
  bool accept_unsafe_requests = false;
  // h1-accept-payload-with-any-method: an HTTP/1.0 GET, HEAD or DELETE request may have a body.
  bool any_method_payload = false;
};

enum class ParseStatus : uint8_t { kIncomplete, kComplete, kError };

namespace detail {
// Finds the end of a head incrementally: line ends, bare CR/LF and size limits. Only offsets are
// kept between calls, so the caller may move its buffer.
class HeadScanner {
 public:
  // Bare LF ends a line only for a request with Limits::accept_unsafe_requests.
  ParseStatus scan(std::string_view buf, const Limits& limits, bool is_request);
  void reset() { *this = HeadScanner{}; }
  bool saw_bare_lf() const { return bare_lf_; }
  std::size_t start() const { return start_; }
  std::size_t end() const { return pos_; }
  std::size_t lines() const { return line_no_; }  // complete lines so far
  ParseError error() const { return error_; }

 private:
  std::size_t pos_ = 0;
  std::size_t start_ = 0;      // first byte after skipped leading CR/LF
  std::size_t line_start_ = 0;
  std::size_t line_no_ = 0;
  bool in_prefix_ = true;
  bool bare_lf_ = false;
  ParseError error_ = ParseError::kNone;
};
}  // namespace detail

class RequestParser {
 public:
  explicit RequestParser(Limits limits = {}) : limits_(limits) {}
  // A recycled parser takes the limits of its next connection's frontend (then reset()).
  void set_limits(const Limits& limits) { limits_ = limits; }
  // `buf` starts at the first unconsumed byte of the connection (see the buffer contract).
  ParseStatus parse(std::string_view buf);
  // Bytes of the head, leading empty lines included, once parse() returned kComplete.
  std::size_t consumed() const { return consumed_; }
  const RequestHead& head() const { return head_; }
  ParseError error() const { return error_; }
  int error_status() const { return request_status(error_); }
  // A violation Limits::accept_unsafe_requests let through in the current head (the first found),
  // kNone when there was none: the event HAProxy still records (`show errors`) in relaxed mode.
  ParseError tolerated() const { return tolerated_; }
  // Whether the head let through a violation HAProxy counts as a protocol glitch (fc_glitches,
  // tune.h1.fe.glitches-threshold).
  bool glitch() const { return glitch_; }
  // Ready for the next request of a keep-alive connection. The field list keeps its capacity,
  // so the next head of a similar size allocates nothing.
  void reset();

 private:
  ParseStatus fail(ParseError e);
  Limits limits_;
  detail::HeadScanner scanner_;
  RequestHead head_;
  std::size_t consumed_ = 0;
  bool line_checked_ = false;
  ParseError error_ = ParseError::kNone;
  ParseError tolerated_ = ParseError::kNone;
  bool glitch_ = false;
  // Values the relaxed mode had to rebuild (obs-fold joins); head_ views point here.
  StringStore owned_;
};

class ResponseParser {
 public:
  explicit ResponseParser(Limits limits = {}) : limits_(limits) {}
  void set_limits(const Limits& limits) { limits_ = limits; }
  // The request's method decides whether a body follows (HEAD, CONNECT).
  void set_request_method(Method m) { request_method_ = m; }
  // `option accept-unsafe-violations-in-http-response`: a field whose name holds a non-tchar
  // byte is dropped instead of refusing the response, NUL passes in a value, and obs-fold is
  // joined (as for requests). The status line and framing stay strict. Kept across reset().
  void set_relaxed(bool on) { relaxed_ = on; }
  // Whether the relaxed mode let a glitch through in this head (a field name with a forbidden
  // byte, NUL in a value): bc_glitches, tune.h1.be.glitches-threshold.
  bool glitch() const { return glitch_; }
  ParseStatus parse(std::string_view buf);
  std::size_t consumed() const { return consumed_; }
  const ResponseHead& head() const { return head_; }
  ParseError error() const { return error_; }
  int error_status() const { return kResponseErrorStatus; }
  void reset();   // keeps the field list's capacity, as RequestParser::reset()

 private:
  ParseStatus fail(ParseError e);
  Limits limits_;
  Method request_method_ = Method::kGet;
  bool relaxed_ = false;
  bool glitch_ = false;
  detail::HeadScanner scanner_;
  ResponseHead head_;
  std::size_t consumed_ = 0;
  ParseError error_ = ParseError::kNone;
  StringStore owned_;   // relaxed mode's rebuilt values (obs-fold joins)
};

// Incremental chunked-body framing. Each next() call returns one event; `consumed` bytes
// of `in` may be dropped by the caller, the rest must be presented again.
struct ChunkEvent {
  enum class Kind : uint8_t { kNeedMore, kData, kTrailer, kDone, kError };
  Kind kind = Kind::kNeedMore;
  std::size_t consumed = 0;
  std::string_view data;  // kData: payload bytes, a view into `in`
  Header trailer;         // kTrailer: one trailer field, views into `in`
};

class ChunkedDecoder {
 public:
  explicit ChunkedDecoder(Limits limits = {}) : limits_(limits) {}
  ChunkEvent next(std::string_view in);
  bool done() const { return state_ == State::kDone; }
  ParseError error() const { return error_; }
  void reset() { *this = ChunkedDecoder(limits_); }

  static constexpr uint64_t kMaxChunkSize = uint64_t{1} << 52;  // >= is a 400

 private:
  enum class State : uint8_t {
    kSize, kSizeWs, kExt, kExtQuoted, kExtEscape, kSizeLf, kData, kDataCr, kDataLf,
    kTrailerLine, kDone, kError
  };
  ChunkEvent fail(ParseError e, std::size_t consumed);
  Limits limits_;
  State state_ = State::kSize;
  uint64_t size_ = 0;
  uint64_t remaining_ = 0;
  int digits_ = 0;
  std::size_t line_scanned_ = 0;  // bytes of the pending trailer line already checked
  std::size_t trailers_ = 0;
  ParseError error_ = ParseError::kNone;
};

// The payload of the chunks at the start of `in` (a chunked body as far as it arrived) appended
// to `out`, with a fresh copy of `dec` (its limits): kDone when the last chunk and the
// trailers are there, kNeedMore when more should follow, kError (and `*error`) when malformed.
ChunkEvent::Kind decode_chunks(std::string_view in, ChunkedDecoder dec, std::string* out,
                               ParseError* error = nullptr);

// `h1-case-adjust` / `h1-case-adjust-file`: the spelling some HTTP/1 peers need for a field
// name ("content-length" -> "Content-Length"), applied to the lower-cased names of forwarded
// heads by the proxies with `option h1-case-adjust-bogus-client|server`. Set at start-up,
// read-only afterwards.
class CaseMap {
 public:
  // False when `lower` is there already.
  bool add(std::string lower, std::string spelled);
  // The spelling of a lower-case name, or null.
  const std::string* find(std::string_view lower) const;
  bool empty() const { return entries_.empty(); }

 private:
  std::vector<std::pair<std::string, std::string>> entries_;   // sorted by the lower-case name
};
CaseMap& case_adjust_map();

// Head serialization, for forwarding after rewrites. Versions >= 1.1 are written HTTP/1.1,
// others verbatim; names are lower-cased when `lower_names`, then spelled as `adjust` says.
void append_request_head(const RequestHead& h, std::string& out, bool lower_names = true);
void append_response_head(const ResponseHead& h, std::string& out, bool lower_names = true);

// A response written by hand (errorfile, http-errors, an http reply's `errorfile`): empty when
// `data` is a complete head whose body matches its content-length (or is empty), else
// HAProxy's reason ("unable to parse headers (...)", "chunk-encoded payload not supported",
// "payload size does not match the announced content-length (a != b)").
std::string check_raw_response(std::string_view data);
// `raw` with its head re-encoded as the H1 encoder writes heads (lower-case names), the body
// unchanged; as given when it does not parse.
std::string normalise_raw_response(const std::string& raw);
// The status of a raw response's status line; 0 when it has none.
int raw_response_status(std::string_view raw);
// The status line of `h` with other fields (a rewritten list).
void append_response_head(const ResponseHead& h, const std::vector<Header>& headers,
                          std::string& out, bool lower_names = true,
                          const CaseMap* adjust = nullptr);
void append_request_head(std::string_view method, std::string_view target,
                         std::string_view version, const std::vector<Header>& headers,
                         std::string& out, bool lower_names = true,
                         const CaseMap* adjust = nullptr);
// Upper-case hex without leading zeros and no extensions, as HAProxy re-chunks.
void append_chunk_header(uint64_t size, std::string& out);
// The same line (size and CRLF) written into `out`, for output that is not a string. Returns
// its length (at most kChunkHeaderMax).
constexpr std::size_t kChunkHeaderMax = 18;
std::size_t format_chunk_header(uint64_t size, char (&out)[kChunkHeaderMax]);
std::string_view default_reason(int status);

// Token helpers shared with the proxy layer.
bool is_tchar(unsigned char c);
// ASCII case-insensitive equality (base/strings.h).
using base::iequals;
bool valid_authority(std::string_view a);

}  // namespace sluice::http

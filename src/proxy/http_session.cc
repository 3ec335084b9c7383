#include "proxy/http_session.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

#include "base/assert.h"
#include "base/clock.h"
#include "base/strings.h"
#include "http/forward.h"
#include "net/transport.h"
#include "proxy/server_pick.h"
#include "proxy/worker.h"

namespace sluice::proxy {

namespace {

// Bytes queued towards one side before sluice stops reading the other: bodies stream through
// with bounded memory whatever their size.
constexpr std::size_t kHighWater = 64 * 1024;
// Soft stop: how long a connection waiting for a request still gets to send it (a request in
// flight at the stop, or the next one of a client between two requests), and how long a
// closing connection's input is then read and dropped while its client's FIN is awaited.
constexpr uint64_t kStopGraceMs = 1000;
constexpr uint64_t kLingerMs = 1000;

std::string_view view_of(core::Buffer* b) {
  return b ? std::string_view(b->read_ptr(), b->size()) : std::string_view{};
}

void consume(core::Buffer* b, std::size_t n) {
  b->head += static_cast<uint32_t>(n);
  if (b->empty()) b->reset();
}

// Room at the end of a buffer, moving its bytes to the front first when that makes room.
uint32_t make_room(core::Buffer* b) {
  if (b->room() == 0 && b->head > 0) {
    std::memmove(b->data, b->read_ptr(), b->size());
    b->tail -= b->head;
    b->head = 0;
  }
  return b->room();
}

std::size_t pending(const std::string& s, std::size_t off) { return s.size() - off; }

// `%{+Q}r`: quoted, with bytes outside 32..126, '#' and '"' written #XX (specs/http1.md 6.3).
// `capture`: in captured values `{`, `|` and `}` are escaped too (6.3).
void append_log_escaped(std::string& out, std::string_view s, bool capture = false) {
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

// The response of `return` (and of `deny` with a payload): content-length, content-type, then
// the rule's `hdr` fields, names lower-cased as the H1 encoder writes them.
std::string reply_bytes(int status, const rules::Verdict& v) {
  std::string out = fmt::format("HTTP/1.1 {} {}\r\ncontent-length: {}\r\n", status,
                                http::default_reason(status), v.body.size());
  if (!v.content_type.empty()) out += fmt::format("content-type: {}\r\n", v.content_type);
  for (const auto& [n, val] : v.extra_headers) {
    for (char c : n) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out += fmt::format(": {}\r\n", val);
  }
  out += "\r\n";
  out += v.body;
  return out;
}

// The response of `redirect`. Only the temporary codes say `cache-control: no-cache`: a
// permanent redirect (301, 308) stays cacheable, as HAProxy writes them.
std::string redirect_bytes(int status, std::string_view location) {
  bool temporary = status == 302 || status == 303 || status == 307;
  return fmt::format("HTTP/1.1 {} {}\r\ncontent-length: 0\r\nlocation: {}\r\n{}\r\n", status,
                     http::default_reason(status), location,
                     temporary ? "cache-control: no-cache\r\n" : "");
}

// One read into `b` (room made first). Returns the bytes read, 0 at end of stream, -1 when
// nothing is there now (`ready` cleared, so edge-triggered readiness is tracked), -2 on an
// error. A short read drained the socket: `ready` is cleared too, unless a hang-up is pending
// (its FIN must still be read).
ssize_t read_some(net::RawTransport& t, core::Buffer* b, bool& ready, bool hup) {
  uint32_t room = make_room(b);
  if (room == 0) return -1;
  net::IoResult r = t.recv(b->write_ptr(), room);
  switch (r.status) {
    case net::IoStatus::kOk:
      b->tail += static_cast<uint32_t>(r.n);
      if (r.n < room && !hup) ready = false;
      return static_cast<ssize_t>(r.n);
    case net::IoStatus::kEof:
      return 0;
    case net::IoStatus::kAgain:
      ready = false;
      return -1;
    case net::IoStatus::kError:
      errno = r.err;
      return -2;
  }
  return -2;
}

// One write of what `out` holds past `off`. Returns the bytes sent, -1 when the socket is full
// (`ready` cleared), -2 on an error (errno set). A fully sent queue is emptied. `last`: the
// connection is closed right after these bytes, so they may wait for the FIN and leave in the
// same segment (the transport's shutdown or close pushes both; a held remainder is pushed by
// the ACKs of what went before).
ssize_t write_some(net::RawTransport& t, std::string& out, std::size_t& off, bool& ready,
                   bool last = false) {
  net::IoResult r = t.send(out.data() + off, out.size() - off, last);
  if (r.status == net::IoStatus::kOk) {
    off += r.n;
    if (off == out.size()) {
      out.clear();
      off = 0;
    } else {
      ready = false;   // a short write means the socket buffer is full
    }
    return static_cast<ssize_t>(r.n);
  }
  if (r.status == net::IoStatus::kAgain) {
    ready = false;
    return -1;
  }
  errno = r.err;
  return -2;
}

// What moving body bytes did: some moved, nothing could move, or the chunked framing is bad.
enum class BodyStep { kProgress, kIdle, kBadChunk };

// Moves body bytes from `in` to `out` until the body ends (`done`), `in` runs dry or `out`
// holds kHighWater bytes. Content-Length bodies are copied, or sent as chunks when `rechunk`
// (rules deleted their length: http::Framing::kRechunk); chunked bodies are decoded and
// re-chunked (upper-case sizes, no extensions, trailers kept: specs/http1.md 2.5).
BodyStep move_body(http::BodyKind kind, uint64_t& left, http::ChunkedDecoder& chunks,
                   std::string& trailers, core::Buffer* in_buf, std::string& out,
                   std::size_t out_sent, bool& done, bool rechunk = false) {
  BodyStep step = BodyStep::kIdle;
  std::string_view in = view_of(in_buf);
  while (!done && !in.empty() && out.size() - out_sent < kHighWater) {
    if (kind == http::BodyKind::kContentLength) {
      std::size_t take = static_cast<std::size_t>(std::min<uint64_t>(left, in.size()));
      if (rechunk) http::append_chunk_header(take, out);
      out.append(in.data(), take);
      consume(in_buf, take);
      left -= take;
      done = left == 0;
      if (rechunk) out += done ? "\r\n0\r\n\r\n" : "\r\n";
    } else if (kind == http::BodyKind::kChunked) {
      http::ChunkEvent ev = chunks.next(in);
      using K = http::ChunkEvent::Kind;
      if (ev.kind == K::kError) return BodyStep::kBadChunk;
      if (ev.kind == K::kNeedMore) {
        // The decoder keeps its state: what it read is gone from the input.
        consume(in_buf, ev.consumed);
        if (ev.consumed) step = BodyStep::kProgress;
        break;
      }
      if (ev.kind == K::kData) {
        http::append_chunk_header(ev.data.size(), out);
        out.append(ev.data);
        out += "\r\n";
      } else if (ev.kind == K::kTrailer) {
        // Trailer names are lower-cased like head names, in both directions (1.3, 4.3).
        for (char c : ev.trailer.name)
          trailers += c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c;
        trailers += ": ";
        trailers.append(ev.trailer.value);
        trailers += "\r\n";
      } else if (ev.kind == K::kDone) {
        out += "0\r\n";
        out += trailers;
        out += "\r\n";
        trailers.clear();
        done = true;
      }
      consume(in_buf, ev.consumed);   // after the views into it were used
    } else {   // runs until the server closes: everything there is
      out.append(in);
      consume(in_buf, in.size());
    }
    step = BodyStep::kProgress;
    in = view_of(in_buf);
  }
  return step;
}

}  // namespace

HttpSession::HttpSession(Worker& w, Listener& l, int fd, const net::SocketAddress& client)
    : w_(w),
      l_(l),
      fe_(*l.proxy),
      cio_(fd),
      client_(client),
      t_accept_ms_(w.loop().now_ms()),
      t_idle_ms_(t_accept_ms_),
      c_last_ms_(t_idle_ms_),
      s_last_ms_(t_idle_ms_),
      timer_(this) {
  cend_.s = this;
}

namespace {

// Output queues. An idle keep-alive connection holds none: at the end of a transaction an empty
// queue of at most a head's size is parked in the codecs going back to the worker, and the next
// transaction, of this connection or of a new one, takes it back with them, so that neither
// allocates for its heads. A queue a body grew is released instead.
constexpr std::size_t kKeepCapacity = 512;

// A transaction's scratch head, emptied for a new message (the field list keeps its storage).
rules::HeadEdit& fresh_edit(rules::HeadEdit& e, const std::vector<http::Header>& fields) {
  e.method = e.target = {};
  e.headers.assign(fields.begin(), fields.end());
  e.storage.clear();
  e.changed = false;
  return e;
}

// `q` takes the parked storage when it has none of its own (and holds nothing).
void unpark_queue(std::string& q, std::string& parked) {
  if (q.empty() && q.capacity() <= std::string().capacity()) q.swap(parked);
  std::string().swap(parked);
}

// An empty queue of a head's size is parked; any other storage is released.
void park_queue(std::string& q, std::string& parked) {
  if (!q.empty()) return;
  if (q.capacity() > std::string().capacity() && q.capacity() <= kKeepCapacity) parked.swap(q);
  std::string().swap(q);
}

}  // namespace

void HttpSession::start_codecs() {
  http::Limits lim;
  auto bufsize = static_cast<std::size_t>(w_.process().settings().bufsize);
  // A start line longer than the buffer can hold is a 414; the head limit leaves HAProxy's
  // tune.maxrewrite (1024) for rewrites.
  lim.max_request_line = bufsize > 2 ? bufsize - 2 : bufsize;
  lim.max_head = bufsize > 1024 ? bufsize - 1024 : bufsize;
  http::Limits req = lim;
  req.accept_unsafe_requests = fe_.settings.h.accept_unsafe_requests;
  auto& spares = w_.spare_codecs();
  if (spares.empty()) {
    tx_ = std::make_unique<HttpCodecs>(req, lim);
    return;
  }
  tx_ = std::move(spares.back());
  spares.pop_back();
  unpark_queue(to_cli_, tx_->parked_to_cli);
  unpark_queue(to_srv_, tx_->parked_to_srv);
  tx_->req_parser.set_limits(req);
  tx_->req_parser.reset();
  tx_->res_parser.set_limits(lim);
  tx_->res_parser.reset();
  tx_->req_chunks.reset();
  tx_->res_chunks.reset();
}

void HttpSession::release_codecs() {
  // A keep-alive request then allocates neither the object nor its field lists (they keep their
  // storage). Bounded: a burst does not leave its codecs behind.
  constexpr std::size_t kSpareCodecs = 64;
  if (!tx_) return;
  park_queue(to_cli_, tx_->parked_to_cli);   // freed with the codecs when they are not kept
  park_queue(to_srv_, tx_->parked_to_srv);
  auto& spares = w_.spare_codecs();
  if (spares.size() < kSpareCodecs) {
    tx_->req_copy = rules::HeadEdit{};   // its strings belong to the transaction that ended
    for (rules::HeadEdit* e : {&tx_->req_edit, &tx_->res_edit}) {
      e->headers.clear();   // views into buffers that are gone; the storage stays
      e->storage.clear();
    }
    spares.push_back(std::move(tx_));
  }
  tx_.reset();
}

HttpSession::~HttpSession() { SLUICE_ASSERT(phase_ == Phase::kClosed); }

const HttpSettings& HttpSession::be_http() const {
  return be_ ? be_->settings.h : fe_.settings.h;
}

void HttpSession::start() {
  if (!cio_.watch(w_.loop(), &cend_)) {
    w_.fe_counters(fe_.index).eint.add();
    quiet_ = true;
    finish("PR");
    return;
  }
  const auto& s = fe_.settings;
  if (!s.h.httplog && !s.tcplog && !s.logs.empty()) {
    std::string local = l_.addr.kind == net::ListenAddress::Kind::kInet ? l_.addr.addr.to_string()
                                                                          : l_.addr.text;
    w_.logs().send(s.logs, kInfo,
                   fmt::format("Connect from {} to {} ({}/HTTP)", client_.to_string(), local,
                               s.name));
  }
  arm_timeout();
}

// ---------------------------------------------------------------------------------------------
// Event plumbing

void HttpSession::on_client_io(uint32_t events) {
  if (phase_ == Phase::kClosed) return;
  const net::Readiness r = net::decode_readiness(events);
  if (r.readable()) c_rd_ = true;
  if (r.writable()) c_wr_ = true;
  if (r.peer_closed()) c_hup_ = true;
  // A hang-up alone (both directions shut, as after a half-close each way) is an end of stream,
  // not an error: the bytes before it are still read and forwarded. A reset comes with an
  // error, and a failed read or write says so too.
  if (r.error()) c_err_ = true;
  pump();
}

void HttpSession::on_server_io(uint32_t events) {
  if (phase_ == Phase::kClosed) return;
  if (!sc_) {
    // Our private idle connection (http-reuse never) was closed by the server.
    if (private_) {
      w_.close_server_conn(private_);
      private_ = nullptr;
    }
    return;
  }
  const net::Readiness r = net::decode_readiness(events);
  if (s_connecting_) {
    if (r.hangup_or_error()) {
      int err = sc_->io.connect_error();
      on_connect_failed(err ? err : ECONNREFUSED, false);
      pump();
      return;
    }
    if (!r.writable()) return;
    on_connected();
  }
  if (r.readable()) s_rd_ = true;
  if (r.writable()) s_wr_ = true;
  if (r.peer_closed()) {
    s_hup_ = true;
    // The server has closed (or failed): closing it now leaves no TIME_WAIT here.
    if (sc_) sc_->reset_on_close = false;
  }
  if (r.error()) s_err_ = true;   // as on the client side: a hang-up is no error
  pump();
}

void HttpSession::pump() {
  // Re-entered from a state change made inside a step (a queued session getting its slot):
  // the running loop sees the new state on its next turn.
  if (in_pump_) return;
  in_pump_ = true;
  for (int guard = 0; guard < 1000; ++guard) {
    bool progress = step();
    if (phase_ == Phase::kClosed) return;
    if (!progress) break;
  }
  in_pump_ = false;
  arm_timeout();
}

bool HttpSession::step() {
#define SLUICE_STEP(call)                       \
  do {                                          \
    progress |= (call);                         \
    if (phase_ == Phase::kClosed) return false; \
  } while (0)
  bool progress = false;
  switch (phase_) {
    case Phase::kIdle:
      SLUICE_STEP(read_client());
      SLUICE_STEP(parse_request());
      break;
    case Phase::kQueued:
    case Phase::kConnect:
      if (c_err_) {
        finish(phase_ == Phase::kQueued ? "CQ" : "CC");
        return false;
      }
      SLUICE_STEP(read_client());
      SLUICE_STEP(request_body());
      break;
    case Phase::kExchange:
      SLUICE_STEP(read_client());
      SLUICE_STEP(request_body());
      SLUICE_STEP(write_server());
      SLUICE_STEP(read_server());
      if (phase_ == Phase::kExchange && !res_head_done_) SLUICE_STEP(parse_response());
      // The body right after its head, so that both leave in one write.
      if (phase_ == Phase::kExchange && res_head_done_) SLUICE_STEP(response_body());
      SLUICE_STEP(write_client());
      if (phase_ == Phase::kExchange && req_done_ && res_done_ && pending(to_cli_, to_cli_off_) == 0) {
        end_transaction();
        return phase_ != Phase::kClosed;
      }
      if (phase_ == Phase::kExchange && c_err_ && !res_done_) {
        // The client reset the connection while its request was being served. Before any
        // response byte HAProxy logs it as a 400 (specs/http1.md 6.3: "CH--").
        if (!res_head_sent_ && status_ == -1) status_ = 400;
        finish(res_head_sent_ ? "CD" : "CH");
        return false;
      }
      break;
    case Phase::kTunnel:
      SLUICE_STEP(tunnel());
      break;
    case Phase::kClosing:
      SLUICE_STEP(write_client());
      if (pending(to_cli_, to_cli_off_) == 0) {
        close_after_last_bytes();
        return phase_ == Phase::kLinger;
      }
      break;
    case Phase::kLinger:
      SLUICE_STEP(linger());
      break;
    case Phase::kClosed:
      return false;
  }
  return progress;
#undef SLUICE_STEP
}

// ---------------------------------------------------------------------------------------------
// Client side

bool HttpSession::read_client() {
  if (c_eof_ || !c_rd_) return false;
  // Only what the current state can use: a request head, its body, or tunnelled bytes.
  // Pipelined requests wait in the kernel until the current transaction ends.
  bool want = phase_ == Phase::kIdle || phase_ == Phase::kTunnel ||
              ((phase_ == Phase::kQueued || phase_ == Phase::kConnect ||
                phase_ == Phase::kExchange) && !req_done_);
  if (!want) return false;
  if (phase_ != Phase::kIdle && pending(to_srv_, to_srv_off_) >= kHighWater) return false;
  if (!cin_ && !(cin_ = w_.buffers().try_get())) {
    out_of_memory();
    return false;
  }
  ssize_t n = read_some(cio_, cin_, c_rd_, c_hup_);
  if (n == -1) {
    // Nothing there (the speculative read after a keep-alive response finds nothing): an empty
    // buffer goes back, so that an idle connection holds none.
    if (cin_->empty()) {
      w_.buffers().put(cin_);
      cin_ = nullptr;
    }
    return false;
  }
  if (n <= 0) {
    c_eof_ = true;
    c_err_ = c_err_ || n == -2;
    return true;
  }
  uint64_t now = w_.loop().now_ms();
  c_last_ms_ = now;
  if (phase_ == Phase::kIdle && t_first_byte_ms_ == 0 &&
      view_of(cin_).find_first_not_of("\r\n") != std::string_view::npos) {
    // CR/LF between requests do not start one (3.4): the keep-alive timeout still runs.
    t_first_byte_ms_ = now;
    t_first_byte_wall_us_ = base::wall_us();
  }
  auto un = static_cast<uint64_t>(n);
  w_.fe_counters(fe_.index).bin.add(un);
  if (be_) w_.be_counters(be_->index).bin.add(un);
  if (srv_) w_.srv_counters(be_->server_base + srv_->index()).bin.add(un);
  return true;
}

bool HttpSession::write_client() {
  if (pending(to_cli_, to_cli_off_) == 0 || !c_wr_) return false;
  if (w_.sends_batched()) {
    w_.queue_flush(this);
    return false;
  }
  // The bytes that end the connection: a closing reply, or the end of the last response (pump
  // then ends the transaction and end_transaction() closes at once). They are corked, and
  // finish() sends them with the FIN by shutdown() before close(): not by close() alone, which
  // resets the connection instead when unread client input is left (a client still sending a
  // body after an error, or after its own "close"), and would then drop the corked bytes.
  const bool last = phase_ == Phase::kClosing ||
                    (phase_ == Phase::kExchange && req_done_ && res_done_ &&
                     closes_after_transaction());
  const std::size_t from = to_cli_off_;
  const bool server_held = pending(to_cli_, to_cli_off_) >= kHighWater;
  ssize_t n = write_some(cio_, to_cli_, to_cli_off_, c_wr_, last);
  // The server was not read while the client was slow (server_timeout_runs()): its idle time
  // starts again from here, as HAProxy re-arms a read timeout when reading resumes.
  if (n > 0 && server_held) s_last_ms_ = w_.loop().now_ms();
  if (n > 0 && res_head_unsent_ && from + static_cast<std::size_t>(n) > res_head_at_) {
    res_head_unsent_ = false;
    count_response_status();
  }
  if (n > 0) {
    c_last_ms_ = w_.loop().now_ms();
    return true;
  }
  if (n == -1) return false;
  // The client is gone.
  if (phase_ == Phase::kClosing) {
    close_now();
  } else {
    finish(res_done_ ? "CL" : "CD");
  }
  return false;
}

bool HttpSession::parse_request() {
  std::string_view in = view_of(cin_);
  if (std::size_t blank = std::min(in.find_first_not_of("\r\n"), in.size()); blank > 0) {
    // CR/LF before a request line are skipped in any number (1.1): dropped here so that they
    // never fill the buffer and turn into a 431. The parser may have scanned them: it starts
    // over on what is left, which begins with the request line.
    consume(cin_, blank);
    if (tx_) tx_->req_parser.reset();
    in = view_of(cin_);
  }
  if (in.empty()) {
    if (c_eof_) {
      // Closed between requests: silent after a keep-alive response; on a fresh connection
      // HAProxy logs it as a 400 CR that nobody receives.
      if (!first_request_ || (fe_.settings.dontlognull)) quiet_ = true;
      status_ = first_request_ ? 400 : -1;
      if (!quiet_) req_line_ = "<BADREQ>";
      finish("CR");
    }
    return false;
  }
  if (!tx_) start_codecs();
  switch (tx_->req_parser.parse(in)) {
    case http::ParseStatus::kIncomplete:
      if (c_eof_) {
        // Only blank lines so far count as nothing received.
        bool blank = in.find_first_not_of("\r\n") == std::string_view::npos;
        if (blank && !first_request_) quiet_ = true;
        if (blank && fe_.settings.dontlognull) quiet_ = true;
        status_ = 400;
        req_line_ = "<BADREQ>";
        if (!blank) w_.fe_counters(fe_.index).ereq.add();
        finish("CR");
        return false;
      }
      if (cin_->room() == 0 && cin_->head == 0) {
        // The head does not fit in a buffer.
        capture_error(false, in, http::ParseError::kHeadTooLarge);
        reject_request(431, "PR");
        return true;
      }
      return false;
    case http::ParseStatus::kError: {
      capture_error(false, in, tx_->req_parser.error());
      int status = tx_->req_parser.error_status();
      // The HTTP/2 preface on a connection that already carried HTTP/1 requests (2.8).
      if (tx_->req_parser.error() == http::ParseError::kPriMethod && !first_request_) status = 405;
      reject_request(status, "PR");
      return true;
    }
    case http::ParseStatus::kComplete:
      // A violation let through by accept-unsafe-violations-in-http-request is still recorded
      // (specs/http1.md 1.7).
      if (tx_->req_parser.tolerated() != http::ParseError::kNone)
        capture_error(false, in, tx_->req_parser.tolerated());
      begin_transaction();
      return true;
  }
  return false;
}

void HttpSession::capture_error(bool response, std::string_view bytes, http::ParseError why) {
  stats::ErrorSnapshot e;
  e.response = response;
  const Proxy& owner = response && be_ ? *be_ : fe_;
  const Proxy* other = response ? &fe_ : be_;
  e.proxy = owner.index;
  e.proxy_name = owner.settings.name;
  e.proxy_id = owner.settings.id;
  e.other_name = other ? other->settings.name : "<NONE>";
  e.other_id = other ? other->settings.id : -1;
  e.server_name = response && srv_ ? srv_->name() : "<NONE>";
  e.server_id = response && srv_ ? srv_->settings().id : -1;
  e.wall_us = base::wall_us();
  e.source = client_.to_string();
  e.reason = http::to_string(why);
  e.len = bytes.size();
  e.bytes.assign(bytes);
  w_.capture_error(std::move(e));
}

void HttpSession::reject_request(int status, const char* term) {
  w_.fe_counters(fe_.index).ereq.add();
  w_.fe_counters(fe_.index).req_tot.add();
  req_line_ = "<BADREQ>";
  if (t_first_byte_ms_ == 0) {
    t_first_byte_ms_ = w_.loop().now_ms();
    t_first_byte_wall_us_ = base::wall_us();
  }
  // Whatever follows the bad head is not a request: drop it and close.
  if (cin_) cin_->reset();
  req_done_ = false;
  // The H1 layer's pages: only 400 and 408 say connection: close, the others close silently.
  error_reply(status, term, true, false);
}

void HttpSession::begin_transaction() {
  // `tcp-request content` rules: in HTTP mode HAProxy runs them once a request is there, before
  // any HTTP processing, and again for each request of the connection.
  if (!fe_.settings.tcp_content_rules.empty() && !content_allowed()) return;
  const http::RequestHead& head = tx_->req_parser.head();
  uint64_t now = w_.loop().now_ms();
  if (t_first_byte_ms_ == 0) {
    t_first_byte_ms_ = now;
    t_first_byte_wall_us_ = base::wall_us();
  }
  t_head_ms_ = now;
  ++requests_;
  // Before any rule changes the head, as HAProxy captures.
  if (!fe_.settings.h.capture_request.empty())
    capture_fields(fe_.settings.h.capture_request, head.headers, cap_req_);
  auto& fc = w_.fe_counters(fe_.index);
  fc.req_tot.add();
  fc.req_rate.add(now);

  // The request line is kept only for the log line that will quote it.
  const auto& fs = fe_.settings;
  if ((fs.h.httplog || fs.tcplog) && !fs.logs.empty()) {
    req_line_.assign(head.method);
    req_line_ += ' ';
    req_line_ += head.target;
    req_line_ += ' ';
    req_line_ += head.version;
  }
  req_method_ = head.method_id;
  req_http11_ = head.http11();
  req_keep_alive_ = head.wants_keep_alive() && !head.force_close;
  expect_tunnel_ = head.method_id == http::Method::kConnect;
  req_body_ = head.body;
  req_left_ = head.content_length;
  tx_->req_chunks.reset();
  req_done_ = req_body_ == http::BodyKind::kNone;
  req_skip_ = 0;
  req_sent_ = 0;
  req_rechunk_ = false;

  rules::HeadEdit& edit = fresh_edit(tx_->req_edit, head.headers);
  edit.method = head.method;
  edit.target = http::normalize_target(head, edit.storage);
  // Whether the forwarded request still asks for an upgrade: an empty or unusable Upgrade is
  // dropped, and a 101 answering such a request is a 502, as in HAProxy 3.5.
  upgrade_ = http::rewrite_request_fields(head, edit.headers, edit.storage);
  rules::RequestView view;
  view.method = edit.method;
  view.target = edit.target;
  view.version = head.version;
  view.headers = &edit.headers;
  view.src = &client_;
  view.dst_port = l_.port;
  view.dst = l_.addr.kind == net::ListenAddress::Kind::kInet ? &l_.addr.addr : nullptr;

  bool forward = route(edit, view);
  if (forward) forward = build_server_head(edit, view);
  if (forward && (!fe_.settings.h.response_rules.empty() || !be_http().response_rules.empty())) {
    // Response rules may look at the request: keep an owned copy past the buffer.
    tx_->req_copy = rules::HeadEdit{};
    tx_->req_copy.method = tx_->req_copy.keep(std::string(edit.method));
    tx_->req_copy.target = tx_->req_copy.keep(std::string(edit.target));
    for (const auto& h : edit.headers)
      tx_->req_copy.headers.push_back({tx_->req_copy.keep(std::string(h.name)),
                                   tx_->req_copy.keep(std::string(h.value))});
    have_req_copy_ = true;
  }
  // The head's views die here: everything needed was copied.
  consume(cin_, tx_->req_parser.consumed() + req_skip_);
  tx_->req_parser.reset();
  if (!forward) return;
  connect_server();
}

bool HttpSession::content_allowed() {
  if (w_.content_allowed(l_, cio_.fd(), client_)) return true;
  // As HAProxy: a denied request on the frontend (not a request in req_tot, no status), closed
  // without a response and logged `PR` with "<BADREQ>" and no request timer.
  req_line_.clear();
  t_head_ms_ = 0;
  status_ = -1;
  finish("PR");
  return false;
}

// `capture request|response header`: the value of the last field with each name, cut to its
// length ("" when absent).
void HttpSession::capture_fields(const std::vector<std::pair<std::string, int>>& caps,
                                 const std::vector<http::Header>& fields,
                                 std::vector<std::string>& out) {
  out.resize(caps.size());
  for (std::size_t i = 0; i < caps.size(); ++i) {
    out[i].clear();
    for (const auto& f : fields)
      if (http::iequals(f.name, caps[i].first))
        out[i].assign(f.value.substr(0, static_cast<std::size_t>(caps[i].second)));
  }
}

// Called with the request head still in cin_. A body that already arrived whole is passed over,
// so that the answer leaves the connection usable for the next pipelined request; one still on
// its way is not waited for, and the connection closes after the answer as before.
void HttpSession::skip_buffered_body() {
  if (req_done_) return;
  std::string_view body = view_of(cin_).substr(tx_->req_parser.consumed());
  if (req_body_ == http::BodyKind::kContentLength) {
    if (body.size() < req_left_) return;
    req_skip_ = static_cast<std::size_t>(req_left_);
  } else if (req_body_ == http::BodyKind::kChunked) {
    // A scratch decoder: nothing is consumed unless the whole body is there and well formed.
    http::ChunkedDecoder dec = tx_->req_chunks;
    dec.reset();
    std::size_t pos = 0;
    for (;;) {
      http::ChunkEvent ev = dec.next(body.substr(pos));
      using K = http::ChunkEvent::Kind;
      if (ev.kind == K::kError || ev.kind == K::kNeedMore) return;
      pos += ev.consumed;
      if (ev.kind == K::kDone) break;
    }
    req_skip_ = pos;
  } else {
    return;
  }
  req_left_ = 0;
  req_done_ = true;
}

namespace {

// The part of a request-target the stats URI prefix is compared with: from the path on (an
// absolute-form target's scheme and authority are skipped).
std::string_view uri_from_path(std::string_view target) {
  if (target.empty() || target[0] == '/') return target;
  std::size_t scheme = target.find("://");
  if (scheme == std::string_view::npos) return target;
  std::size_t path = target.find('/', scheme + 3);
  return path == std::string_view::npos ? std::string_view("/") : target.substr(path);
}

// `Authorization: Basic <base64 of user:password>` naming one of `accounts`.
bool stats_authorized(const std::vector<http::Header>& headers,
                      const std::vector<std::string>& accounts) {
  for (const auto& h : headers) {
    if (!http::iequals(h.name, "authorization")) continue;
    std::string_view v = h.value;
    std::size_t sp = v.find(' ');
    if (sp == std::string_view::npos || !http::iequals(v.substr(0, sp), "basic")) return false;
    std::string_view token = v.substr(sp + 1);
    while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
    std::string plain;
    if (!base::base64_decode(token, &plain)) return false;
    return std::find(accounts.begin(), accounts.end(), plain) != accounts.end();
  }
  return false;
}

// The value after `key` in the stats options (`scope=`, `;st=`), up to `;`, `&`, a space or
// the end; npos-free: "" when absent.
std::string_view stats_option(std::string_view opts, std::string_view key) {
  std::size_t at = opts.find(key);
  if (at == std::string_view::npos) return {};
  std::string_view v = opts.substr(at + key.size());
  std::size_t end = v.find_first_of(";& ");
  return end == std::string_view::npos ? v : v.substr(0, end);
}

}  // namespace

// `stats uri` (specs/cli-and-stats.md 3.8): GET, HEAD and POST whose path starts with the
// prefix get the page. True when the request was answered.
bool HttpSession::serve_stats(const Proxy& px, const rules::HeadEdit& edit) {
  const auto& sp = px.settings.h.stats;
  if (!sp.enabled) return false;
  using M = http::Method;
  if (req_method_ != M::kGet && req_method_ != M::kHead && req_method_ != M::kPost) return false;
  std::string_view uri = uri_from_path(edit.target);
  if (!uri.starts_with(sp.uri)) return false;
  skip_buffered_body();
  w_.fe_counters(fe_.index).intercepted.add();
  if (!sp.auth.empty() && !stats_authorized(edit.headers, sp.auth)) {
    std::string page = http::error_page(401);
    std::size_t end = page.find("\r\n\r\n");
    page.insert(end, fmt::format("\r\nwww-authenticate: Basic realm=\"{}\"", sp.realm));
    local_reply(401, "PR", std::move(page), false);
    return true;
  }
  std::string_view opts = uri.substr(sp.uri.size());
  if (req_method_ == M::kPost) {
    // Admin actions (`stats admin`) are not supported: HAProxy's answer to a POST without
    // admin rights.
    local_reply(303, "LR",
                fmt::format("HTTP/1.1 303 See Other\r\ncache-control: no-cache\r\ncontent-type: "
                            "text/plain\r\ncontent-length: 0\r\nlocation: {};st=DENY\r\n\r\n",
                            sp.uri),
                false);
    return true;
  }
  stats::StatsPageQuery q;
  using F = stats::StatsPageQuery::Format;
  bool json_schema = opts.find(";json-schema") != std::string_view::npos;
  if (opts.find(";csv") != std::string_view::npos) q.format = F::kCsv;
  if (opts.find(";typed") != std::string_view::npos) q.format = F::kTyped;
  if (opts.find(";json") != std::string_view::npos && !json_schema) q.format = F::kJson;
  if (json_schema) {
    // sluice does not publish HAProxy's JSON schema of the typed fields.
    error_reply(404, "LR", false);
    return true;
  }
  q.hide_down = opts.find(";up") != std::string_view::npos;
  q.hide_maint = opts.find(";no-maint") != std::string_view::npos;
  q.show_legends = sp.show_legends;
  q.scope_names = sp.scope;
  std::string_view scope = stats_option(opts, "scope=");
  if (scope.size() > 20) scope = scope.substr(0, 20);
  if (scope.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:") ==
      std::string_view::npos)
    q.scope_text = std::string(scope);
  q.uri = sp.uri;
  bool refresh = sp.refresh_s && opts.find(";norefresh") == std::string_view::npos;
  q.refresh_s = refresh ? sp.refresh_s : 0;
  q.hide_version = sp.hide_version;
  q.node = sp.node;
  q.desc = sp.desc;
  q.status = std::string(stats_option(opts, ";st="));
  const char* type = q.format == F::kHtml   ? "text/html"
                     : q.format == F::kJson ? "application/json"
                                            : "text/plain";
  reply_generated(type, refresh ? fmt::format("refresh: {}\r\n", sp.refresh_s) : "",
                  w_.process().render_stats_page(q));
  return true;
}

// `use-service prometheus-exporter`: the query's `scope=` parameters pick the metric groups
// (global, frontend, backend, server, `*`; all without any), `no-maint` leaves out servers in
// maintenance, as HAProxy's exporter does.
void HttpSession::serve_metrics(const rules::HeadEdit& edit) {
  skip_buffered_body();
  stats::StatsPageQuery q;
  q.format = stats::StatsPageQuery::Format::kPrometheus;
  std::string_view query = rules::query_of(edit.target);
  bool scoped = false;
  while (!query.empty()) {
    std::size_t amp = query.find('&');
    std::string_view param = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (param == "no-maint") {
      q.hide_maint = true;
    } else if (param.starts_with("scope=")) {
      if (!scoped) q.prom_global = q.prom_frontend = q.prom_backend = q.prom_server = false;
      scoped = true;
      std::string_view v = param.substr(6);
      if (v == "global" || v == "*") q.prom_global = true;
      if (v == "frontend" || v == "*") q.prom_frontend = true;
      if (v == "backend" || v == "*") q.prom_backend = true;
      if (v == "server" || v == "*") q.prom_server = true;
    }
  }
  reply_generated("text/plain; version=0.0.4", "", w_.process().render_stats_page(q));
}

// A 200 generated by sluice (statistics page, metrics): chunked for HTTP/1.1 requests, with a
// length for HTTP/1.0 ones, the head alone for HEAD.
void HttpSession::reply_generated(std::string_view type, std::string_view extra_headers,
                                  std::string body) {
  std::string bytes = fmt::format(
      "HTTP/1.1 200 OK\r\ncache-control: no-cache\r\ncontent-type: {}\r\n{}", type, extra_headers);
  if (req_method_ == http::Method::kHead) {
    bytes += "\r\n";
  } else if (req_http11_) {
    bytes += "transfer-encoding: chunked\r\n\r\n";
    if (!body.empty()) bytes += fmt::format("{:x}\r\n{}\r\n", body.size(), body);
    bytes += "0\r\n\r\n";
  } else {
    bytes += fmt::format("content-length: {}\r\n\r\n", body.size());
    bytes += body;
  }
  local_reply(200, "LR", std::move(bytes), false);
}

// Frontend rules, backend choice, backend rules. False when the request was answered locally.
bool HttpSession::route(rules::HeadEdit& edit, rules::RequestView& view) {
  // deny / return: the proxy's page for the status, or the rule's own response.
  auto reply = [&](const rules::Verdict& v, int st, const char* term) {
    if (v.errorpage && http::has_error_page(st)) error_reply(st, term, false);
    else local_reply(st, term, reply_bytes(st, v), false);
  };
  auto answer = [&](const rules::Verdict& v, Proxy& px) {
    auto& pc = (&px == &fe_) ? w_.fe_counters(fe_.index) : w_.be_counters(px.index);
    if (v.kind != rules::Verdict::Kind::kContinue) skip_buffered_body();
    switch (v.kind) {
      case rules::Verdict::Kind::kContinue:
        return false;
      case rules::Verdict::Kind::kDeny: {
        pc.dreq.add();
        if (&px != &fe_) w_.fe_counters(fe_.index).dreq.add();
        reply(v, v.status ? v.status : 403, "PR");
        return true;
      }
      case rules::Verdict::Kind::kReturn:
        w_.fe_counters(fe_.index).intercepted.add();
        reply(v, v.status ? v.status : 200, "LR");
        return true;
      case rules::Verdict::Kind::kRedirect: {
        w_.fe_counters(fe_.index).intercepted.add();
        int st = v.status ? v.status : 302;
        local_reply(st, "LR", redirect_bytes(st, v.location), false);
        return true;
      }
      case rules::Verdict::Kind::kService:
        w_.fe_counters(fe_.index).intercepted.add();
        serve_metrics(edit);
        return true;
    }
    return false;
  };

  const auto& fh = fe_.settings.h;
  // `monitor-uri`: before any rule, as in HAProxy; the answer is not logged.
  if (!fh.monitor_uri.empty() && edit.target == fh.monitor_uri) {
    skip_buffered_body();
    w_.fe_counters(fe_.index).intercepted.add();
    bool fail = false;
    for (const auto& c : fh.monitor_fail) fail = fail || c.eval(view);
    error_reply(fail ? 503 : 200, "LR", false);
    logged_ = true;
    return false;
  }
  if (!fh.request_rules.empty()) {
    if (answer(rules::apply_rules(fh.request_rules, rules::RuleSide::kRequest, edit, view), fe_))
      return false;
  }
  if (serve_stats(fe_, edit)) return false;
  // use_backend sees the request as the frontend's rules left it (set-path...), as in HAProxy:
  // apply_rules worked on its own copy of the view.
  view.method = edit.method;
  view.target = edit.target;
  view.headers = &edit.headers;
  Proxy* be = fe_.target;
  for (const auto& u : fe_.settings.use_backends) {
    if (u.cond.eval(view)) {
      be = w_.process().proxies()[static_cast<std::size_t>(u.backend)].get();
      break;
    }
  }
  if (!be || !be->backend) {
    error_reply(503, "SC", false);
    return false;
  }
  be_ = be;
  be_->be_conns.fetch_add(1, std::memory_order_relaxed);
  auto& bc = w_.be_counters(be_->index);
  uint64_t now = w_.loop().now_ms();
  bc.stot.add();
  bc.req_tot.add();
  bc.req_rate.add(now);
  bc.smax.raise_to(static_cast<uint64_t>(be_->be_conns.load(std::memory_order_relaxed)));
  bc.sess_rate.add(now);
  bc.last_sess_ms.set(now);
  if (be_ != &fe_ && !be_->settings.h.request_rules.empty()) {
    if (answer(rules::apply_rules(be_->settings.h.request_rules, rules::RuleSide::kRequest, edit,
                                  view),
               *be_))
      return false;
  }
  if (be_ != &fe_ && serve_stats(*be_, edit)) return false;
  // The value `balance uri` / `balance hdr()` hashes.
  lb_key_.clear();
  const auto& bal = be_->settings.balance;
  if (bal.kind == lb::BalanceKind::kUri) {
    lb_key_ = std::string(rules::path_of(edit.target));
  } else if (bal.kind == lb::BalanceKind::kHdr) {
    for (const auto& h : edit.headers)
      if (http::iequals(h.name, bal.hdr_name)) {
        lb_key_ = std::string(h.value);
        break;
      }
  }
  return true;
}

bool HttpSession::build_server_head(rules::HeadEdit& edit, rules::RequestView& view) {
  using CM = HttpSettings::ConnMode;
  const auto& fh = fe_.settings.h;
  const auto& bh = be_->settings.h;
  // option forwardfor: added if either side asks, unless the client is in an `except` network
  // of a side that has the option; the backend's header name wins; if-none only when every
  // side with the option says so and the field is present (specs/http1.md 4.1).
  const bool fe_ff = fh.forwardfor.enabled, be_ff = be_ != &fe_ && bh.forwardfor.enabled;
  if (fe_ff || be_ff) {
    bool except = (fe_ff && fh.forwardfor.has_except && fh.forwardfor.except.contains(client_)) ||
                  (be_ff && bh.forwardfor.has_except && bh.forwardfor.except.contains(client_));
    const std::string& name = be_ff ? bh.forwardfor.header : fh.forwardfor.header;
    bool if_none = (!fe_ff || fh.forwardfor.if_none) && (!be_ff || bh.forwardfor.if_none);
    bool present = false;
    if (if_none) {
      for (const auto& h : edit.headers)
        if (http::iequals(h.name, name)) present = true;
    }
    bool unix_client = client_.family() == AF_UNIX;
    if (!except && !(if_none && present) && !unix_client) {
      edit.headers.push_back({edit.keep(name), edit.keep(client_.host_string())});
    }
  }
  const bool server_close_mode = fh.conn_mode == CM::kServerClose ||
                                 bh.conn_mode == CM::kServerClose || bh.conn_mode == CM::kClose;
  // An HTTP/1.0 chunked request closes its server connection too (2.4).
  server_close_ = server_close_mode || expect_tunnel_ || tx_->req_parser.head().force_close;
  if (!upgrade_) {
    if (server_close_mode && req_http11_) {
      edit.headers.push_back({"connection", "close"});
    } else if (!server_close_mode && !req_http11_) {
      edit.headers.push_back({"connection", "keep-alive"});
    }
  }
  (void)view;
  const http::RequestHead& head = tx_->req_parser.head();
  // The body is sent as the parser framed it: the fields the rules left are made to say so.
  // An HTTP/1.0 request cannot be chunked: a deleted length is put back instead. Without any
  // rule (and a forwardfor header with a framing name) the fields are as rewrite_framing()
  // left them: nothing to check.
  const bool rules_ran = !fh.request_rules.empty() || (be_ != &fe_ && !bh.request_rules.empty()) ||
                         ((fe_ff || be_ff) && http::is_framing_field(be_ff ? bh.forwardfor.header
                                                                           : fh.forwardfor.header));
  switch (rules_ran ? http::finalize_framing(head, false, head.http11(), edit.headers, edit.storage)
                    : http::Framing::kOk) {
    case http::Framing::kOk:
      break;
    case http::Framing::kRechunk:
      req_rechunk_ = true;
      break;
    case http::Framing::kConflict:
      // HAProxy 2.6 fails such a request with a 500 and sends nothing to the server.
      skip_buffered_body();
      error_reply(500, "PR", false);
      return false;
  }
  std::string_view version = head.http11() ? std::string_view("HTTP/1.1") : head.version;
  to_srv_.clear();
  to_srv_off_ = 0;
  http::append_request_head(edit.method, edit.target, version, edit.headers, to_srv_);
  // Rewrites may use the tune.maxrewrite reserve that the head limit kept free, no more: a
  // rewritten head must fit a buffer (tune.bufsize), else HAProxy fails the rewrite with a 500
  // and sends nothing. Without a bound, rules could make a head many times what was received.
  if (to_srv_.size() > static_cast<std::size_t>(w_.process().settings().bufsize)) {
    to_srv_.clear();
    skip_buffered_body();
    error_reply(500, "PR", false);
    return false;
  }
  return true;
}

// Moves request body bytes from the client buffer to the server queue, re-chunking chunked
// bodies.
bool HttpSession::request_body() {
  if (req_done_) return false;
  BodyStep step = move_body(req_body_, req_left_, tx_->req_chunks, req_trailers_, cin_, to_srv_,
                            to_srv_off_, req_done_, req_rechunk_);
  if (step == BodyStep::kBadChunk) {
    w_.fe_counters(fe_.index).ereq.add();
    if (req_sent_ == 0) {
      // Nothing of this request reached a server: a plain 400.
      to_srv_.clear();
      to_srv_off_ = 0;
      if (sc_) {
        w_.close_server_conn(sc_);
        sc_ = nullptr;
      }
      leave_queue();
      reject_request(400, "PR");
    } else {
      status_ = 400;
      finish("PH");
    }
    return true;
  }
  if (!req_done_ && c_eof_ && view_of(cin_).empty()) {
    // The client closed in the middle of its body.
    finish(phase_ == Phase::kExchange ? "CD" : "CC");
    return false;
  }
  if (cin_ && cin_->empty()) {
    w_.buffers().put(cin_);
    cin_ = nullptr;
  }
  return step == BodyStep::kProgress;
}

// ---------------------------------------------------------------------------------------------
// Server side

bool HttpSession::pick_server(bool redispatch) {
  lb::PickContext ctx;
  ctx.client = &client_;
  ctx.now_ms = w_.loop().now_ms();
  std::string_view key = lb_key_;
  const auto& bal = be_->settings.balance;
  if (bal.kind == lb::BalanceKind::kUri || (bal.kind == lb::BalanceKind::kHdr && !lb_key_.empty()))
    ctx.key = &key;
  lb::Server* s = take_server(w_, *be_, ctx, srv_, redispatch);
  if (!s) return false;
  if (redispatch && srv_ && s != srv_) redispatched_ = true;   // the log's "+" retries
  srv_ = s;
  return true;
}

void HttpSession::connect_server() {
  phase_ = Phase::kConnect;
  retries_done_ = 0;
  redispatched_ = false;
  if (!pick_server(false)) {
    if (be_->backend->usable_active() + be_->backend->usable_backup() > 0) {
      enter_queue();
      return;
    }
    server_error(503, "SC");
    return;
  }
  start_connect();
}

void HttpSession::enter_queue() {
  phase_ = Phase::kQueued;
  t_queued_ms_ = w_.loop().now_ms();
  int q = be_->queued.fetch_add(1, std::memory_order_seq_cst) + 1;
  int m = be_->queued_max.load(std::memory_order_relaxed);
  while (q > m && !be_->queued_max.compare_exchange_weak(m, q, std::memory_order_relaxed)) {
  }
  w_.queue_session(this);
  arm_timeout();
  retry_from_queue();
}

void HttpSession::leave_queue() {
  if (phase_ != Phase::kQueued) return;
  be_->queued.fetch_sub(1, std::memory_order_seq_cst);
  w_.unqueue_session(this);
  phase_ = Phase::kConnect;
}

bool HttpSession::retry_from_queue() {
  if (phase_ != Phase::kQueued) return true;
  if (!pick_server(false)) return false;
  leave_queue();
  start_connect();
  // Called by the worker outside any event of ours: a reused connection has no event coming.
  pump();
  return true;
}

void HttpSession::start_connect() {
  phase_ = Phase::kConnect;
  const int global = be_->server_base + srv_->index();
  uint64_t now = w_.loop().now_ms();
  if (t_connect_ms_ == 0 || t_connect_ms_ < t_head_ms_) t_connect_ms_ = now;
  t_connect_ms_ = now;
  // http-reuse (specs/http1.md 3.6): a private connection first, then the idle pool.
  ServerConn* c = nullptr;
  using R = HttpSettings::Reuse;
  R mode = be_->settings.h.reuse;
  if (private_) {
    if (private_->srv_global == global) c = private_;
    else w_.close_server_conn(private_);
    private_ = nullptr;
  }
  if (!c && mode != R::kNever && retries_done_ == 0) {
    if (mode == R::kAlways || !first_request_) c = w_.take_idle(global, false);
    else if (mode == R::kAggressive) c = w_.take_idle(global, true);
  }
  s_rd_ = s_eof_ = s_hup_ = s_err_ = s_shut_ = false;
  if (c) {
    sc_ = c;
    c->owner = this;
    reused_conn_ = true;
    s_connecting_ = false;
    w_.be_counters(be_->index).reuse.add();
    w_.srv_counters(global).reuse.add();
    on_connected();
    return;
  }
  reused_conn_ = false;
  w_.srv_counters(global).connect.add();
  w_.be_counters(be_->index).connect.add();
  net::SocketAddress target = srv_->target(net::SocketAddress::ipv4(0, l_.port));
  bool in_progress = false;
  // The request is sent right after connect() (below): its first segment carries the ACK
  // (option tcp-smart-connect, on by default).
  net::ConnectOptions opts;
  opts.defer_ack = be_->settings.smart_connect;
  opts.keepalive = be_->settings.srv_keepalive;
  auto r = net::connect_nonblocking(target, &in_progress, opts);
  if (!r.ok()) {
    on_connect_failed(r.error().sys_errno, false);
    return;
  }
  auto* conn = new ServerConn;
  conn->w = &w_;
  conn->io.adopt(*r);
  conn->srv_global = global;
  conn->nolinger = be_->settings.nolinger;
  conn->owner = this;
  sc_ = conn;
  if (!conn->io.watch(w_.loop(), conn)) {
    on_connect_failed(errno, false);
    return;
  }
  if (!in_progress) {
    on_connected();
    return;
  }
  s_connecting_ = true;
  // On loopback and fast links the handshake is usually complete by now: sending the request
  // at once saves waiting for the connect event (one loop turn per new server connection).
  // Not yet connected: EAGAIN, and the connect event comes as usual; refused: the error.
  // Body bytes that came with the head are checked first: a bad chunk must still be a 400
  // with nothing sent (2.5).
  if (!req_done_) {
    request_body();
    if (phase_ != Phase::kConnect || sc_ != conn) return;
  }
  if (pending(to_srv_, to_srv_off_) > 0) {
    bool ready = true;
    ssize_t n = write_some(conn->io, to_srv_, to_srv_off_, ready);
    if (n > 0) {
      on_connected();
      s_wr_ = ready;
      req_sent_ += static_cast<uint64_t>(n);
      return;
    }
    if (n == -2 && errno != ENOTCONN) {
      on_connect_failed(errno, false);
      return;
    }
  }
  arm_timeout();
}

void HttpSession::on_connected() {
  s_connecting_ = false;
  s_wr_ = true;
  t_connected_ms_ = w_.loop().now_ms();
  s_last_ms_ = t_connected_ms_;
  phase_ = Phase::kExchange;
  tx_->res_parser.reset();
  tx_->res_parser.set_request_method(req_method_);
  res_head_done_ = res_done_ = false;
  ++sc_->requests;
  w_.srv_counters(be_->server_base + srv_->index()).req_tot.add();
}

void HttpSession::on_connect_failed(int err, bool timeout) {
  (void)err;
  if (sc_) {
    w_.close_server_conn(sc_);
    sc_ = nullptr;
  }
  s_connecting_ = false;
  uint64_t delay = 0;
  switch (plan_retry(w_, *be_, srv_, retries_done_, timeout,
                     [this](bool redispatch) { return pick_server(redispatch); }, &delay)) {
    case RetryAction::kGiveUp:
      server_error(503, timeout ? "sC" : "SC");
      return;
    case RetryAction::kNow:
      start_connect();
      return;
    case RetryAction::kLater:
      phase_ = Phase::kConnect;
      t_connect_ms_ = w_.loop().now_ms() + delay;   // retry due time while sc_ is null
      w_.loop().timers().arm(timer_, t_connect_ms_);
      return;
  }
}

bool HttpSession::write_server() {
  if (!sc_ || s_connecting_ || !s_wr_ || pending(to_srv_, to_srv_off_) == 0) return false;
  if (w_.sends_batched()) {
    w_.queue_flush(this);
    return false;
  }
  const bool client_held = pending(to_srv_, to_srv_off_) >= kHighWater;
  ssize_t n = write_some(sc_->io, to_srv_, to_srv_off_, s_wr_);
  if (n > 0) {
    req_sent_ += static_cast<uint64_t>(n);
    s_last_ms_ = w_.loop().now_ms();
    if (client_held) c_last_ms_ = s_last_ms_;   // the same for a client held by a slow server
    return true;
  }
  if (n == -1) return false;
  // The server connection is dead. A reused idle connection that dies before answering makes
  // the client retry on a new connection of its own (specs/http1.md 3.5).
  if (reused_conn_ && !res_head_sent_ && view_of(sin_).empty()) {
    quiet_ = true;
    finish("SH");
    return false;
  }
  if (!res_head_sent_) server_error(502, "SH");
  else server_abort("SD");
  return false;
}

bool HttpSession::read_server() {
  if (!sc_ || s_connecting_ || s_eof_ || !s_rd_) return false;
  if (pending(to_cli_, to_cli_off_) >= kHighWater) return false;
  if (!sin_ && !(sin_ = w_.buffers().try_get())) {
    out_of_memory();
    return false;
  }
  ssize_t n = read_some(sc_->io, sin_, s_rd_, s_hup_);
  if (n == -1) return false;
  if (n <= 0) {
    s_eof_ = true;
    s_err_ = s_err_ || n == -2;
    return true;
  }
  s_last_ms_ = w_.loop().now_ms();
  auto un = static_cast<uint64_t>(n);
  bytes_out_ += un;
  w_.fe_counters(fe_.index).bout.add(un);
  w_.be_counters(be_->index).bout.add(un);
  w_.srv_counters(be_->server_base + srv_->index()).bout.add(un);
  return true;
}

// The worker's buffer pool could not have memory (BufferPool::try_get): this connection cannot
// move bytes and ends as a resource failure (`R` in the log, HAProxy's letter; eint counted).
void HttpSession::out_of_memory() {
  w_.fe_counters(fe_.index).eint.add();
  finish(phase_ == Phase::kIdle ? "RR" : "RD");
}

// ---------------------------------------------------------------------------------------------
// Response side

bool HttpSession::parse_response() {
  std::string_view in = view_of(sin_);
  if (in.empty()) {
    if (!s_eof_) return false;
    if (reused_conn_ && req_sent_ > 0) {
      // A reused connection closed under us before any response byte: close the client
      // silently so that it retries (specs/http1.md 3.5, vector 80).
      quiet_ = true;
      finish("SH");
      return false;
    }
    server_error(502, "SH");
    return true;
  }
  switch (tx_->res_parser.parse(in)) {
    case http::ParseStatus::kIncomplete:
      if (s_eof_) {
        server_error(502, "SH");
        return true;
      }
      if (sin_->room() == 0 && sin_->head == 0) {
        capture_error(true, in, http::ParseError::kHeadTooLarge);
        server_error(502, "PH");
        return true;
      }
      return false;
    case http::ParseStatus::kError:
      capture_error(true, in, tx_->res_parser.error());
      server_error(502, "PH");
      return true;
    case http::ParseStatus::kComplete:
      break;
  }
  const http::ResponseHead& rh = tx_->res_parser.head();
  const bool tunnel = rh.body == http::BodyKind::kTunnel;
  if (rh.status < 200 && rh.status != 101) {
    // Interim response: forwarded, then the final one is awaited (2.6).
    rules::HeadEdit e;
    e.headers = rh.headers;
    http::rewrite_response_fields(rh, false, e.headers, e.storage);
    http::append_response_head(rh, e.headers, to_cli_);
    // The server answered it: counted on the server only. The frontend and the backend count
    // the final status of the transaction, as HAProxy does. (Read before the reset below, which
    // clears the head `rh` refers to.)
    count_server_status(rh.status);
    consume(sin_, tx_->res_parser.consumed());
    tx_->res_parser.reset();
    tx_->res_parser.set_request_method(req_method_);
    return true;
  }
  if (rh.status == 101 && !upgrade_) {
    server_error(502, "PH");
    return true;
  }
  t_response_ms_ = w_.loop().now_ms();
  if (!fe_.settings.h.capture_response.empty())
    capture_fields(fe_.settings.h.capture_response, rh.headers, cap_res_);
  // The server's own status, whatever the client ends up getting (a response rule's answer, a
  // 502 for a bad first chunk): the server row counts what servers sent.
  count_server_status(rh.status);
  rules::HeadEdit& edit = fresh_edit(tx_->res_edit, rh.headers);
  http::rewrite_response_fields(rh, tunnel, edit.headers, edit.storage);
  // http-response rules: the backend's, then the frontend's.
  rules::RequestView view;
  view.src = &client_;
  view.dst_port = l_.port;
  view.dst = l_.addr.kind == net::ListenAddress::Kind::kInet ? &l_.addr.addr : nullptr;
  view.status = rh.status;
  if (have_req_copy_) {
    view.method = tx_->req_copy.method;
    view.target = tx_->req_copy.target;
    view.headers = &tx_->req_copy.headers;
  }
  view.res_headers = &edit.headers;
  for (Proxy* px : {be_, be_ == &fe_ ? nullptr : &fe_}) {
    if (!px || px->settings.h.response_rules.empty()) continue;
    rules::Verdict v =
        rules::apply_rules(px->settings.h.response_rules, rules::RuleSide::kResponse, edit, view);
    if (v.kind == rules::Verdict::Kind::kContinue) continue;
    // deny / return / redirect: the server's response is dropped (its connection with it, as
    // its body was not read) and the rule's answer goes to the client instead, as in HAProxy.
    int st = 0;
    const char* term = "LH";
    std::string bytes;
    switch (v.kind) {
      case rules::Verdict::Kind::kDeny:
        w_.be_counters(be_->index).dresp.add();
        if (px == &fe_) w_.fe_counters(fe_.index).dresp.add();
        w_.srv_counters(be_->server_base + srv_->index()).dresp.add();
        st = v.status ? v.status : 502;
        term = "PH";
        break;
      case rules::Verdict::Kind::kReturn:
        st = v.status ? v.status : 200;
        break;
      case rules::Verdict::Kind::kRedirect:
        st = v.status ? v.status : 302;
        bytes = redirect_bytes(st, v.location);
        break;
      case rules::Verdict::Kind::kContinue:
      case rules::Verdict::Kind::kService:   // request rules only
        break;
    }
    drop_server();
    if (!bytes.empty()) local_reply(st, term, std::move(bytes), !req_done_);
    else if (v.errorpage && http::has_error_page(st)) error_reply(st, term, !req_done_);
    else local_reply(st, term, reply_bytes(st, v), !req_done_);
    return true;
  }
  // The client frames the body by these fields, and sluice sends the body as the parser framed
  // it: a deleted length is put back (HAProxy 2.6 keeps it too), a contradicting one is a 500.
  const bool bodyless = req_method_ == http::Method::kHead || rh.status == 204 ||
                        rh.status == 304;
  const bool rules_ran = !be_->settings.h.response_rules.empty() ||
                         (be_ != &fe_ && !fe_.settings.h.response_rules.empty());
  if (rules_ran && http::finalize_framing(rh, bodyless, false, edit.headers, edit.storage) ==
                       http::Framing::kConflict) {
    server_close_ = true;
    server_error(500, "PH");
    return true;
  }
  status_ = rh.status;
  using CM = HttpSettings::ConnMode;
  client_close_ = client_close_ || !req_keep_alive_ || fe_.settings.h.conn_mode == CM::kClose ||
                  rh.body == http::BodyKind::kUntilClose || soft_stop_;
  keepalive_promised_ = !client_close_;
  server_close_ = server_close_ || !rh.wants_keep_alive() || rh.te_and_cl ||
                  rh.body == http::BodyKind::kUntilClose;
  if (!tunnel && !upgrade_) {
    if (!client_close_ && (!rh.http11() || !req_http11_)) {
      edit.headers.push_back({"connection", "keep-alive"});
    } else if (client_close_ && rh.http11()) {
      edit.headers.push_back({"connection", "close"});
    }
  }
  res_head_at_ = to_cli_.size();
  http::append_response_head(rh, edit.headers, to_cli_);
  if (to_cli_.size() - res_head_at_ > static_cast<std::size_t>(w_.process().settings().bufsize)) {
    // A rewritten head must fit a buffer, as for requests (build_server_head).
    to_cli_.resize(res_head_at_);
    server_error(500, "PH");
    return true;
  }
  res_head_unsent_ = true;
  consume(sin_, tx_->res_parser.consumed());
  // Counted when a byte of the head leaves (or the transaction ends): until then a body error
  // can still turn it into a 502, which must not count as this status too.
  res_uncounted_ = rh.status;
  res_head_done_ = true;
  res_head_sent_ = true;
  res_body_ = rh.body;
  res_left_ = rh.content_length;
  tx_->res_chunks.reset();
  res_trailers_.clear();
  if (tunnel) {
    enter_tunnel();
    return true;
  }
  if (res_body_ == http::BodyKind::kNone) {
    res_done_ = true;
    if (!view_of(sin_).empty()) server_close_ = true;   // bytes beyond the response
  }
  return true;
}

bool HttpSession::response_body() {
  if (res_done_) return false;
  BodyStep step = move_body(res_body_, res_left_, tx_->res_chunks, res_trailers_, sin_, to_cli_,
                            to_cli_off_, res_done_);
  if (step == BodyStep::kBadChunk) {
    if (res_head_unsent_) {
      // Nothing of this response reached the client (head and bad chunk came in one read):
      // take it back and answer a 502 as for a bad head; the interim responses before it stay.
      to_cli_.resize(res_head_at_);
      res_head_unsent_ = false;
      res_uncounted_ = 0;
      server_error(502, "PH");
      return true;
    }
    w_.be_counters(be_->index).eresp.add();
    w_.srv_counters(be_->server_base + srv_->index()).eresp.add();
    finish("PD");
    return false;
  }
  bool progress = step == BodyStep::kProgress;
  if (res_done_ && !view_of(sin_).empty()) server_close_ = true;   // excess bytes
  if (!res_done_ && s_eof_ && view_of(sin_).empty()) {
    if (res_body_ == http::BodyKind::kUntilClose) {
      res_done_ = true;
      server_close_ = true;
      progress = true;
      if (s_err_) {
        // A reset, not a FIN: the body may be cut and nobody can tell, as its end is the close.
        // What arrived is still delivered and the client connection closes after it, but the
        // transaction is a server abort (SD, eresp and srv_abrt), as HAProxy reports it.
        term_[0] = 'S';
        term_[1] = 'D';
        count_server_abort(true);
      }
    } else {
      // The server closed in the middle of its body.
      server_abort("SD");
      return false;
    }
  }
  if (sin_ && sin_->empty()) {
    w_.buffers().put(sin_);
    sin_ = nullptr;
  }
  return progress;
}

// The server failed after the response head was queued for the client: the transaction ends
// here (logged and counted now), but what the server had sent is still delivered before the
// client connection closes, as HAProxy does. Closing at once would drop the queued bytes: a head
// that arrived with the close never reached the client, which saw a bare close while the log
// said 200.
void HttpSession::server_abort(const char* term) {
  term_[0] = term[0];
  term_[1] = term[1];
  if (be_ && (!res_done_ || !req_done_)) count_server_abort(term[0] == 'S');
  res_done_ = req_done_ = true;   // nothing more moves; finish() must not count again
  if (sc_) {
    w_.close_server_conn(sc_);
    sc_ = nullptr;
  }
  to_srv_.clear();
  to_srv_off_ = 0;
  count_response_status();
  log_transaction();
  // The server's slot is free now, not after a slow client took the last bytes.
  release_backend();
  client_close_ = true;
  phase_ = Phase::kClosing;
  if (pending(to_cli_, to_cli_off_) == 0) close_now();
}

void HttpSession::release_backend() {
  if (srv_) {
    srv_->release();
    w_.process().server_slot_freed(*be_);
    srv_ = nullptr;
  }
  if (be_) {
    be_->be_conns.fetch_sub(1, std::memory_order_relaxed);
    be_ = nullptr;
  }
}

void HttpSession::count_server_abort(bool response_error) {
  auto& bc = w_.be_counters(be_->index);
  bc.srv_abrt.add();
  if (response_error) bc.eresp.add();
  if (srv_) {
    auto& sc = w_.srv_counters(be_->server_base + srv_->index());
    sc.srv_abrt.add();
    if (response_error) sc.eresp.add();
  }
}

void HttpSession::count_response_status() {
  if (res_uncounted_ == 0) return;
  count_status(res_uncounted_);
  res_uncounted_ = 0;
}

namespace {
int status_class(int status) { return status >= 100 && status < 600 ? status / 100 - 1 : 5; }
}  // namespace

// The status the client got, on the frontend and the backend. Pages sluice generates (502, 503,
// 504, rule answers) count there only, not on the server, which sent none of them.
void HttpSession::count_status(int status) {
  int cls = status_class(status);
  w_.fe_counters(fe_.index).hrsp[cls].add();
  if (be_) w_.be_counters(be_->index).hrsp[cls].add();
}

void HttpSession::count_server_status(int status) {
  if (be_ && srv_) w_.srv_counters(be_->server_base + srv_->index()).hrsp[status_class(status)].add();
}

void HttpSession::local_reply(int status, const char* term, std::string bytes, bool close_after,
                              bool announce_close) {
  status_ = status;
  term_[0] = term[0];
  term_[1] = term[1];
  count_status(status);
  if (bytes.empty()) close_after = true;   // an empty errorfile: send nothing, close
  if (!req_done_) {
    // The rest of the request was not read: the connection cannot carry another one.
    close_after = true;
    req_done_ = true;
  }
  using CM = HttpSettings::ConnMode;
  if (requests_ > 0 && (!req_keep_alive_ || fe_.settings.h.conn_mode == CM::kClose)) close_after = true;
  client_close_ = client_close_ || close_after || soft_stop_;
  keepalive_promised_ = !client_close_;
  // A response to HEAD is its head alone (RFC 9110 9.3.2), whatever the page: a body would be
  // read as the start of the next response. The content-length stays the page's, as HAProxy
  // sends it.
  if (req_method_ == http::Method::kHead) {
    if (std::size_t end = bytes.find("\r\n\r\n"); end != std::string::npos) bytes.resize(end + 4);
  }
  if (client_close_ && announce_close && !bytes.empty()) {
    // Say so, as the H1 encoder does, unless the page already does.
    std::size_t end = bytes.find("\r\n\r\n");
    std::string_view head(bytes.data(), end == std::string::npos ? 0 : end);
    if (end != std::string::npos && head.find("\r\nconnection:") == std::string_view::npos)
      bytes.insert(end, "\r\nconnection: close");
  }
  to_cli_ += bytes;
  res_head_done_ = res_done_ = res_head_sent_ = true;
  bytes_out_ = 0;   // %B counts server bytes only; sluice's pages count 0
  phase_ = Phase::kExchange;
}

void HttpSession::error_reply(int status, const char* term, bool close_after,
                              bool announce_close) {
  const std::string* custom = nullptr;
  if (be_) custom = be_->settings.h.errorfile(status);
  if (!custom) custom = fe_.settings.h.errorfile(status);
  if (custom) {
    local_reply(status, term, *custom, close_after, announce_close);
  } else {
    local_reply(status, term, http::error_page(status), close_after || status == 400 || status == 408,
                announce_close);
  }
}

// A server failure before any response byte went to the client: drop the server connection
// and answer with an error page. The client connection stays usable when its request was
// fully read (specs/http1.md 3.5).
void HttpSession::server_error(int status, const char* term) {
  if (be_) {
    if (term[0] == 'S' || term[0] == 'P' || term[0] == 's') {
      if (status == 502 || status == 504) {
        w_.be_counters(be_->index).eresp.add();
        if (srv_) w_.srv_counters(be_->server_base + srv_->index()).eresp.add();
      }
    }
  }
  drop_server();
  error_reply(status, term, !req_done_);
}

void HttpSession::drop_server() {
  leave_queue();
  if (sc_) {
    w_.close_server_conn(sc_);
    sc_ = nullptr;
  }
  s_connecting_ = false;
  to_srv_.clear();
  to_srv_off_ = 0;
  if (sin_) {
    w_.buffers().put(sin_);
    sin_ = nullptr;
  }
  server_close_ = true;
}

void HttpSession::detach_server(bool reusable) {
  if (!sc_) return;
  if (sin_) {
    if (!sin_->empty()) reusable = false;
    w_.buffers().put(sin_);
    sin_ = nullptr;
  }
  if (reusable && !s_eof_ && !s_hup_ && pending(to_srv_, to_srv_off_) == 0) {
    if (be_->settings.h.reuse == HttpSettings::Reuse::kNever) {
      private_ = sc_;   // stays ours (owner unchanged) until the client leaves
    } else {
      w_.park_idle(sc_);
    }
  } else {
    w_.close_server_conn(sc_);
  }
  sc_ = nullptr;
}

void HttpSession::end_transaction() {
  count_response_status();
  // %B counts what the server sent to the client: bytes read past the end of the response
  // (a server sending more than its length) are dropped with the connection, not sent. Without
  // this the count depended on whether they came in the same read as the body.
  if (std::string_view excess = view_of(sin_); !excess.empty() && bytes_out_ >= excess.size())
    bytes_out_ -= excess.size();
  log_transaction();
  detach_server(!server_close_);
  release_backend();
  if (closes_after_transaction()) {
    phase_ = Phase::kClosing;
    if (pending(to_cli_, to_cli_off_) == 0) close_after_last_bytes();
    return;
  }
  // Ready for the next request (possibly already in the buffer: pipelining).
  phase_ = Phase::kIdle;
  first_request_ = false;
  uint64_t now = w_.loop().now_ms();
  t_idle_ms_ = now;
  t_first_byte_ms_ =
      cin_ && view_of(cin_).find_first_not_of("\r\n") != std::string_view::npos ? now : 0;
  t_first_byte_wall_us_ = t_first_byte_ms_ ? base::wall_us() : 0;
  t_head_ms_ = t_queued_ms_ = t_connect_ms_ = t_connected_ms_ = t_response_ms_ = 0;
  status_ = -1;
  term_[0] = term_[1] = '-';
  bytes_out_ = 0;
  req_done_ = res_done_ = res_head_done_ = res_head_sent_ = res_head_unsent_ = false;
  req_method_ = http::Method::kGet;   // until the next head says otherwise (a 408 has no method)
  logged_ = false;
  cap_req_.clear();
  cap_res_.clear();
  server_close_ = client_close_ = keepalive_promised_ = false;
  reused_conn_ = false;
  retries_done_ = 0;
  redispatched_ = false;
  have_req_copy_ = false;
  s_connecting_ = false;
  if (cin_ && cin_->empty()) {
    w_.buffers().put(cin_);
    cin_ = nullptr;
  }
  // An idle keep-alive connection keeps no output queue (release_codecs() parks them with the
  // codecs, for the next transaction), no request line and no field list.
  std::string().swap(req_line_);
  std::string().swap(lb_key_);
  // The parsers and the request copy for response rules: the next request starts afresh.
  release_codecs();
  // Unread pipelined bytes may already sit in the socket: their edge was consumed.
  c_rd_ = true;
  // A soft stop came after this response promised the client another one: the connection
  // waits for it as an idle one does at the stop (on_soft_stop()).
  if (soft_stop_ && !t_first_byte_ms_) stop_grace_ms_ = now + kStopGraceMs;
}

// Whether the client connection closes once this transaction is over. A soft stop closes it
// unless the response already told the client that the connection stays open: its next request
// is then awaited (and answered with `connection: close`) rather than lost in a close.
bool HttpSession::closes_after_transaction() const {
  return client_close_ || c_eof_ || (soft_stop_ && !keepalive_promised_);
}

// ---------------------------------------------------------------------------------------------
// Tunnel (101 Switching Protocols, 2xx to CONNECT): bytes flow untouched both ways.

void HttpSession::enter_tunnel() {
  phase_ = Phase::kTunnel;
  req_done_ = true;
  // Whatever already arrived after the heads belongs to the tunnel.
  if (std::string_view in = view_of(sin_); !in.empty()) {
    to_cli_.append(in);
    consume(sin_, in.size());
  }
  if (std::string_view in = view_of(cin_); !in.empty()) {
    to_srv_.append(in);
    consume(cin_, in.size());
  }
}

bool HttpSession::tunnel() {
  bool progress = false;
  progress |= read_client();
  if (phase_ == Phase::kClosed) return false;
  if (std::string_view in = view_of(cin_); !in.empty()) {
    to_srv_.append(in);
    consume(cin_, in.size());
    progress = true;
  }
  progress |= write_server();
  if (phase_ == Phase::kClosed) return false;
  progress |= read_server();
  if (std::string_view in = view_of(sin_); !in.empty()) {
    to_cli_.append(in);
    consume(sin_, in.size());
    progress = true;
  }
  progress |= write_client();
  if (phase_ == Phase::kClosed) return false;
  // Pass each FIN on once everything before it was delivered.
  if (c_eof_ && !s_shut_ && pending(to_srv_, to_srv_off_) == 0 && sc_) {
    sc_->io.shutdown_write();
    s_shut_ = true;
    progress = true;
  }
  if (s_eof_ && !c_shut_ && pending(to_cli_, to_cli_off_) == 0) {
    cio_.shutdown_write();
    c_shut_ = true;
    progress = true;
  }
  // The tunnel ends when both directions are done: each FIN read and passed on after its data.
  if (c_eof_ && s_eof_ && s_shut_ && c_shut_) {
    res_done_ = true;
    finish("--");
    return false;
  }
  // A reset from the client: nothing more can reach it. A reset from the server: what it sent
  // before is still delivered to the client, then both close.
  if (c_err_ && c_eof_) {
    finish("CD");
    return false;
  }
  if (s_err_ && s_eof_ && pending(to_cli_, to_cli_off_) == 0) {
    finish("SD");
    return false;
  }
  return progress;
}

// Tunnelled server bytes were counted when read; those still queued when the tunnel ends never
// reached the client, and the log line (%B) and the byte counters say what was delivered.
// (Only unsent bytes of the rewritten 101/2xx head could also be queued: at most what was read.)
void HttpSession::uncount_undelivered() {
  uint64_t lost = std::min<uint64_t>(pending(to_cli_, to_cli_off_), bytes_out_);
  if (lost == 0) return;
  bytes_out_ -= lost;
  w_.fe_counters(fe_.index).bout.take_back(lost);
  if (be_) w_.be_counters(be_->index).bout.take_back(lost);
  if (be_ && srv_) w_.srv_counters(be_->server_base + srv_->index()).bout.take_back(lost);
}

// ---------------------------------------------------------------------------------------------
// Timeouts

uint64_t HttpSession::deadline() const {
  const Timeouts& fto = fe_.settings.timeouts;
  const Timeouts& bto = be_ ? be_->settings.timeouts : fto;
  uint64_t d = 0;
  auto consider = [&d](uint64_t when) {
    if (when && (d == 0 || when < d)) d = when;
  };
  uint32_t http_req = fto.http_request ? fto.http_request : fto.client;
  switch (phase_) {
    case Phase::kIdle:
      // Soft stop: a connection with no request byte yet waits for it a short while only.
      if (stop_grace_ms_ && !t_first_byte_ms_) consider(stop_grace_ms_);
      if (first_request_) {
        if (http_req) consider(t_idle_ms_ + http_req);
      } else if (t_first_byte_ms_) {
        // Counted from the end of the previous response, not from this request's first byte
        // (3.4): a slow client gets no more than http-request for its whole head.
        if (http_req) consider(t_idle_ms_ + http_req);
      } else {
        uint32_t ka = fto.http_keep_alive ? fto.http_keep_alive : http_req;
        if (ka) consider(t_idle_ms_ + ka);
      }
      return d;
    case Phase::kQueued:
      if (bto.queue) consider(t_queued_ms_ + bto.queue);
      return d;
    case Phase::kConnect:
      if (!sc_) return t_connect_ms_;   // waiting for a retry
      if (bto.connect) consider(t_connect_ms_ + bto.connect);
      return d;
    case Phase::kExchange:
      if (client_timeout_runs() && fto.client) consider(c_last_ms_ + fto.client);
      if (server_timeout_runs() && bto.server) consider(s_last_ms_ + bto.server);
      return d;
    case Phase::kTunnel: {
      uint32_t t = bto.tunnel;
      if (t) return std::max(c_last_ms_, s_last_ms_) + t;
      if (fto.client) consider(c_last_ms_ + fto.client);
      if (bto.server) consider(s_last_ms_ + bto.server);
      return d;
    }
    case Phase::kClosing:
      if (fto.client) consider(c_last_ms_ + fto.client);
      return d;
    case Phase::kLinger:
      return linger_until_ms_;
    case Phase::kClosed:
      return 0;
  }
  return d;
}

// In an exchange, each side's timeout runs only while sluice waits on that side: for bytes
// it sends there, or for bytes to read from it. A side that sluice stopped reading because the
// other side is slow to take what it already sent (kHighWater) is not idle by its own doing: a
// client that reads a large response slowly is a client timeout (cD), not the server's (sD),
// and a server that reads an upload slowly is not the client's timeout.
bool HttpSession::client_timeout_runs() const {
  if (pending(to_cli_, to_cli_off_) > 0) return true;
  return !req_done_ && pending(to_srv_, to_srv_off_) < kHighWater;
}

bool HttpSession::server_timeout_runs() const {
  if (!sc_) return false;
  if (pending(to_srv_, to_srv_off_) > 0) return true;
  return !res_done_ && pending(to_cli_, to_cli_off_) < kHighWater;
}

void HttpSession::arm_timeout() {
  if (phase_ == Phase::kClosed) return;
  w_.loop().timers().arm_lazy(timer_, deadline());
}

void HttpSession::on_timer(core::Timer&) {
  if (phase_ == Phase::kClosed) return;
  uint64_t now = w_.loop().now_ms();
  uint64_t d = deadline();
  if (d == 0) return;
  if (now < d) {
    w_.loop().timers().arm(timer_, d);
    return;
  }
  const Timeouts& fto = fe_.settings.timeouts;
  switch (phase_) {
    case Phase::kIdle: {
      bool received = cin_ && cin_->size() > 0 &&
                      view_of(cin_).find_first_not_of("\r\n") != std::string_view::npos;
      if (stop_grace_ms_ && !received && now >= stop_grace_ms_) {
        // Soft stop, and no request came in the grace: closed with a FIN, silently.
        quiet_ = true;
        begin_linger();
        pump();
        return;
      }
      if (received || first_request_) {
        // timeout http-request: 408 and close (specs/http1.md 3.4).
        if (!received && fe_.settings.dontlognull) quiet_ = true;
        w_.fe_counters(fe_.index).ereq.add();
        req_line_ = "<BADREQ>";
        if (t_first_byte_ms_ == 0) {
          t_first_byte_ms_ = t_idle_ms_;
          t_first_byte_wall_us_ = base::wall_us() - (now - t_idle_ms_) * 1000;
        }
        if (cin_) cin_->reset();
        error_reply(408, "cR", true);
        pump();
        return;
      }
      quiet_ = true;   // keep-alive expiry: silent close
      finish("cR");
      return;
    }
    case Phase::kQueued:
      // An expired queue wait counts as a failed connection, as in HAProxy.
      w_.be_counters(be_->index).econ.add();
      if (srv_) w_.srv_counters(be_->server_base + srv_->index()).econ.add();
      server_error(503, "sQ");
      pump();
      return;
    case Phase::kConnect:
      if (!sc_) {
        start_connect();
      } else {
        on_connect_failed(ETIMEDOUT, true);
      }
      pump();
      return;
    case Phase::kExchange: {
      const Timeouts& bto = be_ ? be_->settings.timeouts : fto;
      bool server_expired =
          server_timeout_runs() && bto.server && now >= s_last_ms_ + bto.server;
      if (server_expired) {
        if (!res_head_sent_) {
          server_error(504, "sH");
          pump();
        } else {
          server_abort("sD");
          pump();
        }
        return;
      }
      finish(res_head_sent_ ? "cD" : (req_done_ ? "cH" : "cD"));
      return;
    }
    case Phase::kTunnel:
      finish(fto.client && now >= c_last_ms_ + fto.client ? "cD" : "sD");
      return;
    case Phase::kClosing:
    case Phase::kLinger:
      close_now();
      return;
    case Phase::kClosed:
      return;
  }
}

// ---------------------------------------------------------------------------------------------
// Ending

void HttpSession::flush_sends() {
  if (phase_ != Phase::kClosed) pump();
}

void HttpSession::on_soft_stop() {
  // Every response from now on says `connection: close` (soft_stop_ is part of that decision).
  soft_stop_ = true;
  // A keep-alive connection between two requests may have the next one on the wire, or its
  // client may be about to send it: closing it now would lose that request. It gets
  // kStopGraceMs for it to arrive; it is then served with `connection: close`, and a connection
  // that stays idle is closed with a FIN (lingering, so that a request crossing the FIN meets
  // no reset and the client can retry it). A connection that has not sent its first request
  // yet was accepted for a request on its way (often just before a reload): HAProxy serves it
  // whenever it comes, within the usual http-request timeout.
  if (phase_ == Phase::kIdle && !first_request_ && !t_first_byte_ms_) {
    stop_grace_ms_ = w_.loop().now_ms() + kStopGraceMs;
    arm_timeout();
  }
}

// The last bytes of a closing connection are out. A soft-stopping process lingers (see
// begin_linger()); otherwise the connection closes at once, as before.
void HttpSession::close_after_last_bytes() {
  if (soft_stop_ && !c_eof_ && !fe_.settings.nolinger) {
    begin_linger();
  } else {
    close_now();
  }
}

// Sends the FIN (with any corked last bytes), then reads and drops what the client still sends
// until its own FIN, for at most kLingerMs: a close() with unread input would reset the
// connection, and a client could neither read the last response reliably nor know that its
// next request was never seen.
void HttpSession::begin_linger() {
  logged_ = true;   // as in close_now(): a closing transaction was logged already
  cio_.shutdown_write();
  c_shut_ = true;
  phase_ = Phase::kLinger;
  linger_until_ms_ = w_.loop().now_ms() + kLingerMs;
  detach_server(false);
  release_backend();
  if (cin_) {
    w_.buffers().put(cin_);
    cin_ = nullptr;
  }
  c_rd_ = true;   // input may already wait: its edge was consumed
  arm_timeout();
}

bool HttpSession::linger() {
  if (!c_rd_) return false;
  char drop[4096];
  for (;;) {
    net::IoResult r = cio_.recv(drop, sizeof drop);
    if (r.status == net::IoStatus::kOk) continue;
    if (r.status == net::IoStatus::kAgain) {
      c_rd_ = false;
      return false;
    }
    close_now();   // the client's FIN (or an error): nothing is left unread
    return false;
  }
}

void HttpSession::describe(SessionInfo* info) const {
  info->listener = &l_;
  info->backend = be_;
  info->server = srv_;
  info->client = client_;
  info->accept_ms = t_accept_ms_;
  info->expire_ms = phase_ == Phase::kClosed ? 0 : deadline();
  // The current transaction's bytes: HAProxy's streams are per request too.
  info->bytes_in = req_sent_;
  info->bytes_out = bytes_out_;
  info->requests = requests_;
  switch (phase_) {
    case Phase::kIdle: info->state = t_first_byte_ms_ ? "REQ" : "IDLE"; break;
    case Phase::kQueued: info->state = "QUEUED"; break;
    case Phase::kConnect: info->state = "CON"; break;
    case Phase::kExchange: info->state = "EST"; break;
    case Phase::kTunnel: info->state = "TUNNEL"; break;
    case Phase::kClosing: info->state = "CLOSING"; break;
    case Phase::kLinger: info->state = "LINGER"; break;
    case Phase::kClosed: info->state = "CLO"; break;
  }
  info->client_fd = cio_.fd();
  info->server_fd = sc_ ? sc_->io.fd() : -1;
}

void HttpSession::abort(const char* reason) {
  (void)reason;
  finish("KD");
}

// Closing after the last response was flushed: the transaction was already logged.
void HttpSession::close_now() {
  logged_ = true;
  finish("--");
}

void HttpSession::finish(const char* term) {
  if (phase_ == Phase::kClosed) return;
  leave_queue();
  count_response_status();
  if (phase_ == Phase::kTunnel) uncount_undelivered();
  if (term_[0] == '-' && term[0] != '-') {
    term_[0] = term[0];
    term_[1] = term[1];
  }
  // A transaction cut short is logged now (unless it ended silently).
  if (!logged_ && !quiet_ && (t_first_byte_ms_ || status_ != -1 || term[0] != '-')) {
    log_transaction();
  }
  // An abort while either message was still moving: a response not complete, or a request body
  // still being forwarded after the response ended (a server answering early, then closing).
  if (be_ && (!res_done_ || !req_done_)) {
    if (term[0] == 'C' || term[0] == 'c') {
      w_.be_counters(be_->index).cli_abrt.add();
      if (srv_) w_.srv_counters(be_->server_base + srv_->index()).cli_abrt.add();
    }
    // A server that closed or reset in the data phase is also a response error (eresp
    // includes those aborts); a server timeout (sD) is an abort only, as in HAProxy.
    if (term[0] == 'S' || term[0] == 's') count_server_abort(term[0] == 'S' && term[1] == 'D');
  }
  phase_ = Phase::kClosed;
  w_.unqueue_flush(this);
  w_.loop().timers().cancel(timer_);
  // option nolinger: a reset instead of the FIN, last bytes pushed first (CloseMode::kPushReset).
  cio_.close(fe_.settings.nolinger ? net::CloseMode::kPushReset : net::CloseMode::kPushedFin);
  if (sc_) {
    w_.close_server_conn(sc_);
    sc_ = nullptr;
  }
  if (private_) {
    w_.close_server_conn(private_);
    private_ = nullptr;
  }
  if (cin_) w_.buffers().put(cin_);
  if (sin_) w_.buffers().put(sin_);
  cin_ = sin_ = nullptr;
  to_cli_.clear();
  to_srv_.clear();
  to_cli_off_ = to_srv_off_ = 0;
  release_codecs();
  release_backend();
  release_client_slots(w_, l_);
  w_.session_closed(this);
}

void HttpSession::log_transaction() {
  if (logged_) return;
  logged_ = true;
  const auto& s = fe_.settings;
  if ((!s.h.httplog && !s.tcplog) || s.logs.empty() || quiet_) return;
  if (s.dontlognull && t_first_byte_ms_ == 0) return;
  uint64_t now = w_.loop().now_ms();
  uint64_t wall = t_first_byte_wall_us_ ? t_first_byte_wall_us_ : base::wall_us();
  uint64_t start = t_first_byte_ms_ ? t_first_byte_ms_ : t_idle_ms_;
  const std::string date = base::log_date(wall);
  auto span = [](uint64_t from, uint64_t to) -> long {
    return from && to && to >= from ? static_cast<long>(to - from) : -1;
  };
  long tr = t_head_ms_ ? span(start, t_head_ms_) : -1;
  // Tw: from the end of the head to the first connection attempt; -1 when never routed.
  long tw = -1, tc = -1, trs = -1;
  if (t_head_ms_ && (t_connect_ms_ || t_queued_ms_ || srv_)) {
    uint64_t first_attempt = t_queued_ms_ ? t_queued_ms_ : t_head_ms_;
    tw = t_queued_ms_ && t_connect_ms_ ? span(t_queued_ms_, t_connect_ms_) : 0;
    (void)first_attempt;
  }
  if (t_connected_ms_) tc = span(t_connect_ms_, t_connected_ms_);
  if (t_response_ms_) trs = span(t_connected_ms_, t_response_ms_);
  long ta = static_cast<long>(now - start);
  std::string backend = be_ ? be_->settings.name : s.name;
  // Counts as HAProxy logs them, once this stream left the backend and the server.
  int beconn = be_ ? std::max(0, be_->be_conns.load(std::memory_order_relaxed) - 1) : 0;
  int srvconn = srv_ ? std::max(0, srv_->current_conns() - 1) : 0;
  std::string server = srv_ && t_connect_ms_ ? srv_->name() : std::string("<NOSRV>");
  if (!s.h.httplog) {
    // option tcplog on an HTTP frontend: the TCP line, without the HTTP timers (6.2).
    std::string line = fmt::format(
        "{}:{} [{}] {} {}/{} {}/{}/{} {} {} {}/{}/{}/{}/{} 0/0", client_.host_string(),
        client_.port(), date, s.name, backend, server, tw, tc, ta,
        bytes_out_, term_, w_.process().actconn().current(), fe_.feconn.current(), beconn,
        srvconn, log_retries(retries_done_, redispatched_));
    w_.logs().send(s.logs, kInfo, line);
    return;
  }
  std::string line = fmt::format(
      "{}:{} [{}] {} {}/{} {}/{}/{}/{}/{} {} {} - - {}-- {}/{}/{}/{}/{} 0/0 ",
      client_.host_string(), client_.port(), date, s.name, backend, server,
      tr, tw, tc, trs, ta, status_, bytes_out_, term_, w_.process().actconn().current(),
      fe_.feconn.current(), beconn, srvconn, log_retries(retries_done_, redispatched_));
  // %hr %hs: `{a|b}` per direction with captures configured, absent otherwise (6.3).
  for (auto [caps, values] : {std::pair{&s.h.capture_request, &cap_req_},
                              std::pair{&s.h.capture_response, &cap_res_}}) {
    if (caps->empty()) continue;
    line += '{';
    for (std::size_t i = 0; i < caps->size(); ++i) {
      if (i) line += '|';
      if (i < values->size()) append_log_escaped(line, (*values)[i], true);
    }
    line += "} ";
  }
  line += '"';
  append_log_escaped(line, req_line_.empty() ? std::string_view("<BADREQ>") : req_line_);
  line += '"';
  w_.logs().send(s.logs, kInfo, line);
}

}  // namespace sluice::proxy

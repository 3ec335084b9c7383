#pragma once
// What the files of H1Connection (h1_connection.cc, h1_server_side.cc, h1_response.cc,
// h1_connection_end.cc) share: buffer and queue helpers, the socket read and write steps on a
// transport, body moves. Internal to proxy. Worker-local.
#include <sys/types.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "base/assert.h"
#include "core/buffer.h"
#include "core/buffer_queue.h"
#include "proxy/out_queue.h"
#include "http/forward.h"
#include "http/http.h"
#include "net/transport.h"
#include "rules/rules.h"

namespace sluice::proxy::http_internal {


// Bytes queued towards one side before sluice stops reading the other: bodies stream through
// with bounded memory whatever their size.
constexpr std::size_t kHighWater = 64 * 1024;
// Soft stop: how long a connection waiting for a request still gets to send it (a request in
// flight at the stop, or the next one of a client between two requests), and how long a
// closing connection's input is then read and dropped while its client's FIN is awaited.
constexpr uint64_t kStopGraceMs = 1000;
constexpr uint64_t kLingerMs = 1000;

inline std::string_view view_of(core::Buffer* b) {
  return b ? std::string_view(b->read_ptr(), b->size()) : std::string_view{};
}

inline void consume(core::Buffer* b, std::size_t n) {
  b->head += static_cast<uint32_t>(n);
  if (b->empty()) b->reset();
}

// Room at the end of a buffer, moving its bytes to the front first when that makes room.
inline uint32_t make_room(core::Buffer* b) {
  if (b->room() == 0 && b->head > 0) {
    std::memmove(b->data, b->read_ptr(), b->size());
    b->tail -= b->head;
    b->head = 0;
  }
  return b->room();
}

// Where a head is serialized before it is queued: its size is checked against tune.bufsize
// first, and its storage stays with the thread for the next head (no allocation per request).
inline std::string& head_scratch() {
  static thread_local std::string s;
  s.clear();
  return s;
}

// One read into `b` (room made first). Returns the bytes read, 0 at end of stream, -1 when
// nothing is there now (`ready` cleared, so edge-triggered readiness is tracked), -2 on an
// error. A short read drained the socket: `ready` is cleared too, unless a hang-up is pending
// (its FIN must still be read).
inline ssize_t read_some(net::RawTransport& t, core::Buffer* b, bool& ready, bool hup) {
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
  SLUICE_BUG("read_some: a read status without a case");
  errno = EIO;
  return -2;
}

// Writes what `out` holds (its heads, then its body buffers) in one gathered write. Returns the
// bytes sent, -1 when the socket is full (`ready` cleared), -2 on an error (errno set). A short
// write means the socket buffer is full: `ready` is cleared too. `last`: the connection is
// closed right after these bytes, so they may wait for the FIN and leave in the same segment
// (the transport's shutdown or close pushes both; a held remainder is pushed by the ACKs of
// what went before).
// What write_some() returns for a write of `total` bytes that ended as `r`.
inline ssize_t write_result(const net::IoResult& r, std::size_t total, bool& ready) {
  switch (r.status) {
    case net::IoStatus::kOk:
      if (r.n < total) ready = false;   // a short write means the socket buffer is full
      return static_cast<ssize_t>(r.n);
    case net::IoStatus::kAgain:
      ready = false;
      return -1;
    case net::IoStatus::kEof:
    case net::IoStatus::kError:
      break;
  }
  errno = r.err;
  return -2;
}

inline ssize_t write_some(net::RawTransport& t, OutQueue& out, bool& ready, bool last = false) {
  if (out.queued_body().empty()) {
    // Heads only (a request without a body, a local answer): one plain send.
    std::string_view h = out.unsent_heads();
    net::IoResult r = t.send(h.data(), h.size(), last);
    if (r.status == net::IoStatus::kOk) out.consume_heads(r.n);
    return write_result(r, h.size(), ready);
  }
  constexpr int kParts = 8;
  iovec parts[kParts];
  int n = 0;
  std::size_t total = 0;
  if (std::string_view h = out.unsent_heads(); !h.empty()) {
    parts[n++] = {const_cast<char*>(h.data()), h.size()};
    total += h.size();
  }
  for (const core::Buffer* b = out.queued_body().first_buffer(); b && n < kParts; b = b->next) {
    parts[n++] = {b->data + b->head, b->size()};
    total += b->size();
  }
  // Bytes beyond these parts follow at once: they may wait to share a segment.
  const bool more = last || total < out.size();
  net::IoResult r = t.sendv(parts, n, more);
  if (r.status == net::IoStatus::kOk) out.consume(r.n);
  return write_result(r, total, ready);
}

// What moving body bytes did: some moved, nothing could move, or the chunked framing is bad.
enum class BodyStep { kProgress, kIdle, kBadChunk };

// A chunk's size line (http::format_chunk_header()), queued.
inline void queue_chunk_header(std::size_t size, core::BufferQueue& out) {
  char line[http::kChunkHeaderMax];
  out.append(line, http::format_chunk_header(size, line));
}

// Moves body bytes from `in_buf` to `out` until the body ends (`done`), `in_buf` runs dry or
// `out` holds kHighWater bytes. A Content-Length body, or one that runs until the close, moves
// as the buffer it was read into when the buffer holds nothing else (BufferQueue::splice(): no
// copy; `in_buf` may then be null), and is copied into the queue's buffers otherwise; it is
// sent as chunks when `rechunk` (rules deleted its length: http::Framing::kRechunk). Chunked
// bodies are decoded and re-chunked (sizes in upper-case hex without leading zeros, no
// extensions, trailers kept; chunk boundaries may differ from the input's).
inline BodyStep move_body(http::BodyKind kind, uint64_t& left, http::ChunkedDecoder& chunks,
                          std::string& trailers, core::Buffer*& in_buf, OutQueue& queue,
                          bool& done, bool rechunk = false, bool drop_trailers = false) {
  core::BufferQueue& out = queue.body();
  BodyStep step = BodyStep::kIdle;
  std::string_view in = view_of(in_buf);
  while (!done && !in.empty() && queue.size() < kHighWater) {
    if (kind == http::BodyKind::kContentLength) {
      std::size_t take = static_cast<std::size_t>(std::min<uint64_t>(left, in.size()));
      left -= take;
      done = left == 0;
      if (rechunk) queue_chunk_header(take, out);
      if (take == in.size()) {
        out.splice(in_buf);
      } else {
        out.append(in.data(), take);
        consume(in_buf, take);
      }
      if (rechunk) out.append(done ? std::string_view("\r\n0\r\n\r\n") : std::string_view("\r\n"));
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
        queue_chunk_header(ev.data.size(), out);
        out.append(ev.data);
        out.append(std::string_view("\r\n"));
      } else if (ev.kind == K::kTrailer && !drop_trailers) {
        // Trailer names are lower-cased like head names, in both directions (1.3, 4.3).
        // option http-drop-request|response-trailers: left out.
        for (char c : ev.trailer.name)
          trailers += c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c;
        trailers += ": ";
        trailers.append(ev.trailer.value);
        trailers += "\r\n";
      } else if (ev.kind == K::kDone) {
        out.append(std::string_view("0\r\n"));
        out.append(trailers);
        out.append(std::string_view("\r\n"));
        trailers.clear();
        done = true;
      }
      consume(in_buf, ev.consumed);   // after the views into it were used
    } else {   // runs until the server closes: everything there is
      out.splice(in_buf);
    }
    step = BodyStep::kProgress;
    in = view_of(in_buf);
  }
  return step;
}



// Output queues. An idle keep-alive connection holds none: at the end of a transaction an empty
// heads string of at most a head's size is parked in the codecs going back to the worker, and
// the next transaction, of this connection or of a new one, takes it back with them, so that
// neither allocates for its heads. A string a large answer grew is released instead.
constexpr std::size_t kKeepCapacity = 512;

// `q` takes the parked storage when it has none of its own (and holds nothing).
inline void unpark_queue(std::string& q, std::string& parked) {
  if (q.empty() && q.capacity() <= std::string().capacity()) q.swap(parked);
  std::string().swap(parked);
}

// An empty heads string of a head's size is parked; any other storage is released.
inline void park_queue(std::string& q, std::string& parked) {
  if (!q.empty()) return;
  if (q.capacity() > std::string().capacity() && q.capacity() <= kKeepCapacity) parked.swap(q);
  std::string().swap(q);
}

// A transaction's scratch head, emptied for a new message (the field list keeps its storage).
inline rules::HeadEdit& fresh_edit(rules::HeadEdit& e, const std::vector<http::Header>& fields) {
  e.method = e.target = {};
  e.status = 0;
  e.reason = {};
  e.headers.assign(fields.begin(), fields.end());
  e.storage.clear();
  e.changed = false;
  return e;
}

}  // namespace sluice::proxy::http_internal

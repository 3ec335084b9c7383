// Fuzzes the HTTP/1.1 codec: the request and response head parsers and the chunked decoder get
// arbitrary bytes split into a few reads. Whatever the split, they must not crash, must never
// consume more than they were given, and must reach the same verdict as with the whole input.
// Every input goes through the request parser twice: strict, and with the relaxed mode of
// `option accept-unsafe-violations-in-http-request` (Limits::accept_unsafe_requests).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "http/http.h"

namespace {

using sluice::http::ChunkEvent;
using sluice::http::ChunkedDecoder;
using sluice::http::ParseStatus;

void check(bool ok) {
  if (!ok) std::abort();
}

// Presents the input growing by `step` bytes, as a connection would after each read.
ParseStatus feed_request(std::string_view in, const sluice::http::Limits& limits, std::size_t step,
                         std::size_t& consumed, sluice::http::ParseError& err) {
  sluice::http::RequestParser p(limits);
  auto in_buf = [&](std::string_view v, std::size_t n) {
    return v.data() >= in.data() && v.data() + v.size() <= in.data() + n;
  };
  ParseStatus s = ParseStatus::kIncomplete;
  for (std::size_t n = 0; n < in.size() && s == ParseStatus::kIncomplete;) {
    n = std::min(in.size(), n + step);
    s = p.parse(in.substr(0, n));
    if (s == ParseStatus::kComplete) {
      check(p.consumed() <= n);
      check(p.consumed() > 0);
      // The views must point into the buffer that completed the head; in relaxed mode a value
      // rebuilt from obs-fold lives in the parser, and HTTP/0.9 reads as HTTP/1.0.
      const auto& h = p.head();
      check(in_buf(h.target, n));
      check(in_buf(h.version, n) || (limits.accept_unsafe_requests && h.version == "HTTP/1.0"));
      for (const auto& f : h.headers) {
        check(in_buf(f.name, n));
        check(in_buf(f.value, n) || limits.accept_unsafe_requests);
        check(f.value.find_first_of("\r\n") == std::string_view::npos);
      }
      if (!limits.accept_unsafe_requests) check(p.tolerated() == sluice::http::ParseError::kNone);
      std::string out;
      sluice::http::append_request_head(h, out);
      // A serialized head must parse again, in the same mode, to the same framing.
      sluice::http::RequestParser again(limits);
      check(again.parse(out) == ParseStatus::kComplete);
      check(again.head().body == h.body);
      check(again.head().headers.size() == h.headers.size());
    }
  }
  consumed = p.consumed();
  err = p.error();
  return s;
}

void decode_chunked(std::string_view in, std::size_t step) {
  ChunkedDecoder d;
  std::string pending;
  std::size_t fed = 0;
  std::size_t payload = 0;
  for (int guard = 0; guard < 1 << 20; ++guard) {
    ChunkEvent ev = d.next(pending);
    check(ev.consumed <= pending.size());
    if (ev.kind == ChunkEvent::Kind::kData) {
      check(!ev.data.empty());
      check(ev.data.data() >= pending.data() &&
            ev.data.data() + ev.data.size() <= pending.data() + pending.size());
      payload += ev.data.size();
    }
    if (ev.kind == ChunkEvent::Kind::kDone || ev.kind == ChunkEvent::Kind::kError) return;
    pending.erase(0, ev.consumed);
    if (ev.kind == ChunkEvent::Kind::kNeedMore) {
      if (fed == in.size()) return;
      std::size_t n = std::min(step, in.size() - fed);
      pending.append(in.substr(fed, n));
      fed += n;
    }
  }
  check(payload <= in.size());
  std::abort();  // no progress: the decoder looped
}

}  // namespace

// The request parser in one mode: the same verdict whatever the split. Returns the verdict and
// the bytes of the head.
ParseStatus check_request(std::string_view in, const sluice::http::Limits& limits,
                          std::size_t& whole_consumed) {
  sluice::http::ParseError whole_err{};
  ParseStatus whole =
      feed_request(in, limits, in.size() ? in.size() : 1, whole_consumed, whole_err);
  const std::size_t steps[] = {1, 7, 64};
  for (std::size_t step : steps) {
    std::size_t consumed = 0;
    sluice::http::ParseError err{};
    ParseStatus s = feed_request(in, limits, step, consumed, err);
    check(s == whole && consumed == whole_consumed && err == whole_err);
  }
  return whole;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::size_t whole_consumed = 0;
  ParseStatus whole = check_request(in, sluice::http::Limits{}, whole_consumed);
  sluice::http::Limits relaxed;
  relaxed.accept_unsafe_requests = true;
  std::size_t relaxed_consumed = 0;
  ParseStatus relaxed_status = check_request(in, relaxed, relaxed_consumed);
  // Relaxing only admits more: a strict head is a relaxed head of the same length.
  if (whole == ParseStatus::kComplete) {
    check(relaxed_status == ParseStatus::kComplete && relaxed_consumed == whole_consumed);
  }

  sluice::http::ResponseParser rp;
  if (size > 0) rp.set_request_method(static_cast<sluice::http::Method>(data[0] % 9));
  if (rp.parse(in) == ParseStatus::kComplete) check(rp.consumed() <= size);

  // The body after a complete head, and the raw input itself, go through the chunked decoder.
  if (whole == ParseStatus::kComplete) decode_chunked(in.substr(whole_consumed), 3);
  decode_chunked(in, 1);
  decode_chunked(in, 16);
  return 0;
}

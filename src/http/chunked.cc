// Chunked transfer coding: sizes, extensions, CRLFs and trailers.
#include "http/http.h"

#include "base/strings.h"

namespace sluice::http {
namespace {

bool is_ctl(unsigned char c) { return c < 0x20 || c == 0x7F; }

}  // namespace

ChunkEvent ChunkedDecoder::fail(ParseError e, std::size_t consumed) {
  state_ = State::kError;
  error_ = e;
  ChunkEvent ev;
  ev.kind = ChunkEvent::Kind::kError;
  ev.consumed = consumed;
  return ev;
}

ChunkEvent ChunkedDecoder::next(std::string_view in) {
  ChunkEvent ev;
  if (state_ == State::kError) return fail(error_, 0);
  if (state_ == State::kDone) {
    ev.kind = ChunkEvent::Kind::kDone;
    return ev;
  }
  std::size_t i = 0;
  while (i < in.size()) {
    auto c = static_cast<unsigned char>(in[i]);
    switch (state_) {
      case State::kSize: {
        int v = base::hex_value(static_cast<char>(c));
        if (v >= 0) {
          size_ = size_ * 16 + static_cast<uint64_t>(v);
          ++digits_;
          // Checked per digit so the accumulator can never wrap.
          if (size_ >= kMaxChunkSize) return fail(ParseError::kChunkSizeOverflow, i);
          ++i;
          break;
        }
        if (digits_ == 0) return fail(ParseError::kBadChunkSize, i);
        if (c == ' ' || c == '\t') state_ = State::kSizeWs;
        else if (c == ';') state_ = State::kExt;
        else if (c == '\r') state_ = State::kSizeLf;
        else return fail(ParseError::kBadChunkSize, i);
        ++i;
        break;
      }
      case State::kSizeWs:
        if (c == ';') state_ = State::kExt;
        else if (c == '\r') state_ = State::kSizeLf;
        else if (c != ' ' && c != '\t') return fail(ParseError::kBadChunkSize, i);
        ++i;
        break;
      case State::kExt:
        if (c == '"') state_ = State::kExtQuoted;
        else if (c == '\r') state_ = State::kSizeLf;
        else if (c == '\\' || (is_ctl(c) && c != '\t')) {
          return fail(ParseError::kBadChunkExtension, i);
        }
        ++i;
        break;
      case State::kExtQuoted:
        if (c == '"') state_ = State::kExt;
        else if (c == '\\') state_ = State::kExtEscape;
        else if (is_ctl(c) && c != '\t') return fail(ParseError::kBadChunkExtension, i);
        ++i;
        break;
      case State::kExtEscape:
        if (is_ctl(c) && c != '\t') return fail(ParseError::kBadChunkExtension, i);
        state_ = State::kExtQuoted;
        ++i;
        break;
      case State::kSizeLf:
        if (c != '\n') return fail(ParseError::kBadChunkSize, i);
        ++i;
        if (size_ == 0) {
          state_ = State::kTrailerLine;
          line_scanned_ = 0;
        } else {
          state_ = State::kData;
          remaining_ = size_;
        }
        break;
      case State::kData: {
        std::size_t n = in.size() - i;
        if (n > remaining_) n = static_cast<std::size_t>(remaining_);
        remaining_ -= n;
        if (remaining_ == 0) state_ = State::kDataCr;
        ev.kind = ChunkEvent::Kind::kData;
        ev.data = in.substr(i, n);
        ev.consumed = i + n;
        return ev;
      }
      case State::kDataCr:
        if (c != '\r') return fail(ParseError::kBadChunkData, i);
        state_ = State::kDataLf;
        ++i;
        break;
      case State::kDataLf:
        if (c != '\n') return fail(ParseError::kBadChunkData, i);
        state_ = State::kSize;
        size_ = 0;
        digits_ = 0;
        ++i;
        break;
      case State::kTrailerLine: {
        // A trailer field is reported whole, so its bytes stay unconsumed until its CRLF.
        std::string_view rest = in.substr(i);
        std::size_t j = line_scanned_;
        while (j < rest.size() && rest[j] != '\r' && rest[j] != '\n') ++j;
        if (j > limits_.max_head) return fail(ParseError::kBadTrailer, i);
        if (j == rest.size()) {
          line_scanned_ = j;
          ev.consumed = i;
          return ev;
        }
        if (rest[j] == '\n') return fail(ParseError::kBadTrailer, i);
        if (j + 1 == rest.size()) {
          line_scanned_ = j;
          ev.consumed = i;
          return ev;
        }
        if (rest[j + 1] != '\n') return fail(ParseError::kBadTrailer, i);
        std::string_view line = rest.substr(0, j);
        line_scanned_ = 0;
        if (line.empty()) {
          state_ = State::kDone;
          ev.kind = ChunkEvent::Kind::kDone;
          ev.consumed = i + j + 2;
          return ev;
        }
        std::size_t k = 0;
        while (k < line.size() && is_tchar(static_cast<unsigned char>(line[k]))) ++k;
        if (k == 0 || k == line.size() || line[k] != ':') return fail(ParseError::kBadTrailer, i);
        std::string_view value = line.substr(k + 1);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
          value.remove_prefix(1);
        }
        while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) {
          value.remove_suffix(1);
        }
        if (value.find('\0') != std::string_view::npos) return fail(ParseError::kBadTrailer, i);
        if (++trailers_ > limits_.max_fields) return fail(ParseError::kTooManyTrailers, i);
        ev.kind = ChunkEvent::Kind::kTrailer;
        ev.trailer = Header{line.substr(0, k), value};
        ev.consumed = i + j + 2;
        return ev;
      }
      case State::kDone:
      case State::kError:
        break;
    }
  }
  ev.consumed = i;
  return ev;
}

ChunkEvent::Kind decode_chunks(std::string_view in, ChunkedDecoder dec, std::string* out,
                               ParseError* error) {
  dec.reset();
  for (std::size_t pos = 0;;) {
    ChunkEvent ev = dec.next(in.substr(pos));
    pos += ev.consumed;
    switch (ev.kind) {
      case ChunkEvent::Kind::kData:
        out->append(ev.data);
        break;
      case ChunkEvent::Kind::kTrailer:
        break;
      case ChunkEvent::Kind::kError:
        if (error) *error = dec.error();
        return ev.kind;
      case ChunkEvent::Kind::kDone:
      case ChunkEvent::Kind::kNeedMore:
        return ev.kind;
    }
  }
}

}  // namespace sluice::http

// Chunked body framing: chunk sizes, extensions, CRLFs, trailers and their limits.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "http/http.h"

namespace sluice::http {
namespace {

struct Decoded {
  bool done = false;
  ParseError error = ParseError::kNone;
  std::string payload;
  std::vector<std::pair<std::string, std::string>> trailers;
  std::size_t leftover = 0;  // bytes after the end of the body
};

// Feeds `raw` in pieces of `step` bytes, keeping unconsumed bytes as the contract requires.
Decoded decode(std::string_view raw, std::size_t step = 0, Limits limits = {}) {
  if (step == 0) step = raw.size() ? raw.size() : 1;
  ChunkedDecoder d(limits);
  Decoded out;
  std::string pending;
  std::size_t fed = 0;
  while (true) {
    std::string_view in = pending;
    ChunkEvent ev = d.next(in);
    switch (ev.kind) {
      case ChunkEvent::Kind::kData:
        EXPECT_GT(ev.data.size(), 0u);
        out.payload += ev.data;
        break;
      case ChunkEvent::Kind::kTrailer:
        out.trailers.emplace_back(ev.trailer.name, ev.trailer.value);
        break;
      case ChunkEvent::Kind::kDone:
        out.done = true;
        out.leftover = pending.size() - ev.consumed + (raw.size() - fed);
        return out;
      case ChunkEvent::Kind::kError:
        out.error = d.error();
        return out;
      case ChunkEvent::Kind::kNeedMore:
        break;
    }
    EXPECT_LE(ev.consumed, pending.size());
    pending.erase(0, ev.consumed);
    if (ev.kind == ChunkEvent::Kind::kNeedMore) {
      if (fed == raw.size()) return out;  // truncated
      std::size_t n = std::min(step, raw.size() - fed);
      pending.append(raw.substr(fed, n));
      fed += n;
    }
  }
}

TEST(ChunkedDecoder, PayloadTrailersAndExtensions) {
  std::string raw = "3;a=b;c=\"x y\"\r\nabc\r\nA\r\n0123456789\r\n0;z\r\nX-T: 1\r\n"
                    "Content-Length: 5\r\n\r\nNEXT";
  Decoded d = decode(raw);
  ASSERT_TRUE(d.done) << to_string(d.error);
  EXPECT_EQ(d.payload, "abc0123456789");
  ASSERT_EQ(d.trailers.size(), 2u);
  EXPECT_EQ(d.trailers[0].first, "X-T");
  EXPECT_EQ(d.trailers[0].second, "1");
  EXPECT_EQ(d.trailers[1].first, "Content-Length");
  EXPECT_EQ(d.leftover, 4u);
}

TEST(ChunkedDecoder, EverySplitGivesTheSameResult) {
  const std::string inputs[] = {
      "3;a=b;c=\"x\\\"y\"\r\nabc\r\nA\r\n0123456789\r\n0;z\r\nX-T: 1\r\n\r\n",
      "0000000000003\r\nabc\r\n00\r\n\r\n",
      "3 \t\r\nabc\r\n0\r\n\r\n",
      "3\r\nabcd\r\n0\r\n\r\n",
      "3;n=\"v\r\nabc\r\n",
      "0\r\nX T: 1\r\n\r\n",
      "10000000000000\r\n",
  };
  for (const auto& raw : inputs) {
    Decoded whole = decode(raw);
    for (std::size_t step = 1; step < raw.size(); ++step) {
      Decoded d = decode(raw, step);
      EXPECT_EQ(d.done, whole.done) << raw << " step " << step;
      EXPECT_EQ(d.error, whole.error) << raw << " step " << step;
      EXPECT_EQ(d.payload, whole.payload) << raw << " step " << step;
      EXPECT_EQ(d.trailers, whole.trailers) << raw << " step " << step;
    }
  }
}

TEST(ChunkedDecoder, Errors) {
  struct Row {
    const char* raw;
    ParseError error;
  };
  const Row rows[] = {
      {"0x3\r\nabc\r\n0\r\n\r\n", ParseError::kBadChunkSize},
      {" 3\r\nabc\r\n", ParseError::kBadChunkSize},
      {"-3\r\n", ParseError::kBadChunkSize},
      {"\r\n", ParseError::kBadChunkSize},
      {"3\nabc\r\n", ParseError::kBadChunkSize},
      {"3 x\r\n", ParseError::kBadChunkSize},
      {"10000000000000\r\n", ParseError::kChunkSizeOverflow},
      {"FFFFFFFFFFFFFFFFFFFFFFFF\r\n", ParseError::kChunkSizeOverflow},
      {"3;n=\"v\r\n", ParseError::kBadChunkExtension},
      {"3;n=a\\b\r\n", ParseError::kBadChunkExtension},
      {"3;n=v\n", ParseError::kBadChunkExtension},
      {"3;n=\x01\r\n", ParseError::kBadChunkExtension},
      {"3\r\nabc\n", ParseError::kBadChunkData},
      {"3\r\nabcd\r\n", ParseError::kBadChunkData},
      {"3\r\nabc\rX", ParseError::kBadChunkData},
      {"0\r\nX T: 1\r\n\r\n", ParseError::kBadTrailer},
      {"0\n\n", ParseError::kBadChunkSize},
      {"0\r\nX-T: 1\n\r\n", ParseError::kBadTrailer},
      {"0\r\nX-T: 1\rX\r\n", ParseError::kBadTrailer},
      {"0\r\n folded\r\n\r\n", ParseError::kBadTrailer},
      {"0\r\n: v\r\n\r\n", ParseError::kBadTrailer},
  };
  for (const auto& r : rows) {
    Decoded d = decode(r.raw);
    EXPECT_FALSE(d.done) << r.raw;
    EXPECT_EQ(d.error, r.error) << r.raw << " got " << to_string(d.error);
  }
  // NUL inside a trailer value.
  Decoded d = decode(std::string("0\r\nX: a\0b\r\n\r\n", 14));
  EXPECT_EQ(d.error, ParseError::kBadTrailer);
}

TEST(ChunkedDecoder, LargestSizeBelowTheLimitIsAccepted) {
  ChunkedDecoder d;
  ChunkEvent ev = d.next("FFFFFFFFFFFFF\r\nab");
  ASSERT_EQ(ev.kind, ChunkEvent::Kind::kData);
  EXPECT_EQ(ev.data, "ab");
  EXPECT_EQ(ev.consumed, 17u);
}

TEST(ChunkedDecoder, TrailerCountLimit) {
  Limits l;
  l.max_fields = 2;
  EXPECT_TRUE(decode("0\r\nA: 1\r\nB: 2\r\n\r\n", 0, l).done);
  EXPECT_EQ(decode("0\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", 0, l).error,
            ParseError::kTooManyTrailers);
}

TEST(ChunkedDecoder, OverlongTrailerLineIsRefusedWithoutItsEnd) {
  Limits l;
  l.max_head = 32;
  Decoded d = decode("0\r\nX: " + std::string(100, 'v'), 1, l);
  EXPECT_EQ(d.error, ParseError::kBadTrailer);
}

TEST(ChunkedDecoder, TruncatedBodyNeedsMore) {
  Decoded d = decode("5\r\nab");
  EXPECT_FALSE(d.done);
  EXPECT_EQ(d.error, ParseError::kNone);
  EXPECT_EQ(d.payload, "ab");
}

TEST(ChunkedDecoder, DoneAndErrorAreSticky) {
  ChunkedDecoder d;
  EXPECT_EQ(d.next("0\r\n\r\n").kind, ChunkEvent::Kind::kDone);
  EXPECT_TRUE(d.done());
  EXPECT_EQ(d.next("junk").kind, ChunkEvent::Kind::kDone);
  ChunkedDecoder e;
  EXPECT_EQ(e.next("z").kind, ChunkEvent::Kind::kError);
  EXPECT_EQ(e.next("0\r\n\r\n").kind, ChunkEvent::Kind::kError);
  e.reset();
  EXPECT_EQ(e.next("0\r\n\r\n").kind, ChunkEvent::Kind::kDone);
}

// decode_chunks: the payload of what arrived, and whether the body ended.
TEST(DecodeChunks, PrefixOfABody) {
  std::string out;
  EXPECT_EQ(decode_chunks("5\r\nhello\r\n3;x=y\r\nabc\r\n0\r\nT: v\r\n\r\n", ChunkedDecoder(), &out),
            ChunkEvent::Kind::kDone);
  EXPECT_EQ(out, "helloabc");
  out.clear();
  EXPECT_EQ(decode_chunks("5\r\nhello\r\n3\r\nab", ChunkedDecoder(), &out),
            ChunkEvent::Kind::kNeedMore);
  EXPECT_EQ(out, "helloab");
  out.clear();
  ParseError e = ParseError::kNone;
  EXPECT_EQ(decode_chunks("zz\r\n", ChunkedDecoder(), &out, &e), ChunkEvent::Kind::kError);
  EXPECT_NE(e, ParseError::kNone);
}

}  // namespace
}  // namespace sluice::http

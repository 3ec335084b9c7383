// Response head parsing (body kinds, errors answered 502, status lines split anywhere), the head
// serializer, and parser reuse across messages.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "http/http.h"

namespace sluice::http {
namespace {

using namespace std::string_literals;

struct ResponseOutcome {
  ParseStatus status;
  ResponseHead head;
};

TEST(ResponseParser, BodyKinds) {
  struct Row {
    const char* raw;
    Method method;
    BodyKind body;
  };
  const Row rows[] = {
      {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", Method::kGet, BodyKind::kContentLength},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", Method::kGet, BodyKind::kChunked},
      {"HTTP/1.1 200 OK\r\n\r\n", Method::kGet, BodyKind::kUntilClose},                // 78
      {"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n", Method::kGet, BodyKind::kNone},
      {"HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n", Method::kGet, BodyKind::kNone},
      {"HTTP/1.1 100 Continue\r\n\r\n", Method::kPost, BodyKind::kNone},
      {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", Method::kHead, BodyKind::kNone},
      {"HTTP/1.1 200 OK\r\n\r\n", Method::kConnect, BodyKind::kTunnel},
      {"HTTP/1.1 407 Auth\r\nContent-Length: 1\r\n\r\n", Method::kConnect,
       BodyKind::kContentLength},
      {"HTTP/1.1 101 Switching\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
       Method::kGet, BodyKind::kTunnel},
  };
  for (const auto& r : rows) {
    ResponseParser p;
    p.set_request_method(r.method);
    ASSERT_EQ(p.parse(r.raw), ParseStatus::kComplete) << r.raw << to_string(p.error());
    EXPECT_EQ(p.head().body, r.body) << r.raw;
  }
}

TEST(ResponseParser, TeAndClReadsChunkedAndMarksTheConnection) {
  ResponseParser p;
  ASSERT_EQ(p.parse("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"),
            ParseStatus::kComplete);
  EXPECT_EQ(p.head().body, BodyKind::kChunked);
  EXPECT_TRUE(p.head().te_and_cl);
}

TEST(ResponseParser, ErrorsAre502) {
  const char* rows[] = {
      "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",  // 76
      "HTTP/1.1 200 OK\r\nX-A: 1\0" "2\r\n\r\n",
      "HTTP/1.1 2000 OK\r\n\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
      // Any coding before chunked: forwarding only `chunked` would drop it.
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity, chunked\r\n\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: deflate\r\nTransfer-Encoding: chunked\r\n\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
      "hello\r\n\r\n",
      "HTTP/1.1 20 OK\r\n\r\n",
      "HTTP/1.1 OK\r\n\r\n",
      "HTTP/1.1 101 Switching\r\nUpgrade: websocket\r\n\r\n",
      "HTTP/1.1 200 OK\r\nX A: 1\r\n\r\n",
      "HTTP/1.1 200 OK\nContent-Length: 0\n\n",
  };
  for (std::string_view raw : rows) {
    ResponseParser p;
    // The NUL row: std::string_view from a literal stops at the NUL; use the full length.
    std::string bytes = raw == "HTTP/1.1 200 OK\r\nX-A: 1"
                            ? std::string("HTTP/1.1 200 OK\r\nX-A: 1\0" "2\r\n\r\n", 30)
                            : std::string(raw);
    EXPECT_EQ(p.parse(bytes), ParseStatus::kError) << raw;
    EXPECT_EQ(p.error_status(), 502);
  }
}

TEST(ResponseParser, StatusLineAndOneByteAtATime) {
  std::string raw = "HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok";  // 82
  ResponseParser p;
  ParseStatus s = ParseStatus::kIncomplete;
  for (std::size_t n = 1; n <= raw.size() && s == ParseStatus::kIncomplete; ++n) {
    s = p.parse(std::string_view(raw).substr(0, n));
  }
  ASSERT_EQ(s, ParseStatus::kComplete);
  EXPECT_EQ(p.head().status, 200);
  EXPECT_EQ(p.head().reason, "");
  EXPECT_EQ(p.consumed(), raw.size() - 2);
  std::string out;
  append_response_head(p.head(), out);
  EXPECT_EQ(out, "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n");
}

TEST(ResponseParser, HttpTwoVersionIsWrittenAsOneOne) {
  ResponseParser p;
  ASSERT_EQ(p.parse("HTTP/2.0 200 Fine\r\n\r\n"), ParseStatus::kComplete);
  std::string out;
  append_response_head(p.head(), out);
  EXPECT_EQ(out, "HTTP/1.1 200 Fine\r\n\r\n");
}

TEST(Serializer, RequestHead) {
  RequestParser p;
  ASSERT_EQ(p.parse("GET\t/\tHTTP/1.2\r\nHost: a\r\nX-Y:  v \r\n\r\n"), ParseStatus::kComplete);
  std::string out;
  append_request_head(p.head(), out);
  EXPECT_EQ(out, "GET / HTTP/1.1\r\nhost: a\r\nx-y: v\r\n\r\n");
  p.reset();
  ASSERT_EQ(p.parse("GET / HTTP/1.0\r\n\r\n"), ParseStatus::kComplete);
  out.clear();
  append_request_head(p.head(), out, false);
  EXPECT_EQ(out, "GET / HTTP/1.0\r\n\r\n");
  out.clear();
  append_request_head("POST", "/x", "HTTP/1.1", {{"Host", "a"}}, out, false);
  EXPECT_EQ(out, "POST /x HTTP/1.1\r\nHost: a\r\n\r\n");
}

TEST(Serializer, ChunkHeaderIsUpperCaseHex) {
  std::string out;
  append_chunk_header(0, out);
  append_chunk_header(10, out);
  append_chunk_header(0xABCDEF, out);
  EXPECT_EQ(out, "0\r\nA\r\nABCDEF\r\n");
  EXPECT_EQ(default_reason(431), "Request Header Fields Too Large");
}


TEST(ResponseParser, EverySplitParsesAlike) {
  const std::string rows[] = {
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
      "\r\nHTTP/1.0 404 Not Found\r\nX-A: 1\r\n\r\n",
      "HTTP/1.1 2000 OK\r\n\r\n",
      "HTTP/1.1 200 OK\r\nX A: 1\r\n\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
  };
  for (const auto& raw : rows) {
    ResponseParser whole;
    ParseStatus ws = whole.parse(raw);
    for (std::size_t cut = 1; cut < raw.size(); ++cut) {
      ResponseParser p;
      ParseStatus s = p.parse(std::string_view(raw).substr(0, cut));
      if (s == ParseStatus::kIncomplete) s = p.parse(raw);
      ASSERT_EQ(s, ws) << raw << " cut " << cut;
      EXPECT_EQ(p.error(), whole.error());
      EXPECT_EQ(p.consumed(), whole.consumed());
      EXPECT_EQ(p.head().status, whole.head().status);
    }
  }
}


TEST(ParserReset, FieldListKeepsItsStorageAcrossMessages) {
  // A keep-alive connection parses head after head: reset() keeps the field list's storage, so
  // the next head of a similar size is parsed without allocating it again.
  RequestParser rp;
  std::string req = "GET /a HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n";
  ASSERT_EQ(rp.parse(req), ParseStatus::kComplete);
  ASSERT_EQ(rp.head().headers.size(), 4u);
  const Header* storage = rp.head().headers.data();
  std::size_t capacity = rp.head().headers.capacity();
  rp.reset();
  EXPECT_TRUE(rp.head().headers.empty());
  EXPECT_EQ(rp.head().method, "");
  std::string next = "POST /b HTTP/1.1\r\nHost: b\r\nContent-Length: 0\r\nD: 4\r\n\r\n";
  ASSERT_EQ(rp.parse(next), ParseStatus::kComplete);
  EXPECT_EQ(rp.head().headers.data(), storage);
  EXPECT_EQ(rp.head().headers.capacity(), capacity);
  EXPECT_EQ(rp.head().method, "POST");
  EXPECT_EQ(rp.head().headers[1].name, "Content-Length");

  ResponseParser sp;
  std::string res = "HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nContent-Length: 0\r\n\r\n";
  ASSERT_EQ(sp.parse(res), ParseStatus::kComplete);
  storage = sp.head().headers.data();
  sp.reset();
  EXPECT_TRUE(sp.head().headers.empty());
  EXPECT_EQ(sp.head().status, 0);
  ASSERT_EQ(sp.parse(res), ParseStatus::kComplete);
  EXPECT_EQ(sp.head().headers.data(), storage);
  EXPECT_EQ(sp.head().status, 200);
}


}  // namespace
}  // namespace sluice::http

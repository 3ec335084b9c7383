// Field rewrites for forwarding (Upgrade pairing, the Connection field, hop-by-hop rewrites) and
// the built-in error pages. "Vector N" numbers a case as parser_test.cc does.
#include <gtest/gtest.h>

#include <forward_list>
#include <string>

#include "http/forward.h"

namespace sluice::http {
namespace {

// Parses `raw` as a request and returns its rewritten fields as "name: value\n" lines.
std::string rewritten_request(const std::string& raw) {
  RequestParser p;
  EXPECT_EQ(p.parse(raw), ParseStatus::kComplete) << raw;
  std::vector<Header> f = p.head().headers;
  StringStore st;
  rewrite_request_fields(p.head(), f, st);
  std::string out;
  for (const auto& h : f) out += std::string(h.name) + ": " + std::string(h.value) + "\n";
  return out;
}

std::string rewritten_response(const std::string& raw, Method m = Method::kGet) {
  ResponseParser p;
  p.set_request_method(m);
  EXPECT_EQ(p.parse(raw), ParseStatus::kComplete) << raw;
  std::vector<Header> f = p.head().headers;
  StringStore st;
  rewrite_response_fields(p.head(), p.head().body == BodyKind::kTunnel, f, st);
  std::string out;
  for (const auto& h : f) out += std::string(h.name) + ": " + std::string(h.value) + "\n";
  return out;
}

TEST(ForwardRequest, ConnectionTokensCloseAndKeepAliveLeave) {
  EXPECT_EQ(rewritten_request("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"), "Host: a\n");
  EXPECT_EQ(rewritten_request("GET / HTTP/1.1\r\nConnection: CLOSE, foo\r\n\r\n"), "Connection: foo\n");
  // Vector 71: keep-alive token removed, X-A and the hop-by-hop fields it names stay.
  EXPECT_EQ(rewritten_request("GET / HTTP/1.1\r\nConnection: keep-alive, X-A\r\nX-A: 1\r\n"
                              "Keep-Alive: timeout=5\r\nProxy-Connection: x\r\nTE: trailers, deflate\r\n\r\n"),
            "Connection: X-A\nX-A: 1\nKeep-Alive: timeout=5\nProxy-Connection: x\nTE: trailers\n");
}

TEST(ForwardRequest, TeWithoutTrailersIsDropped) {
  EXPECT_EQ(rewritten_request("GET / HTTP/1.1\r\nTE: deflate\r\n\r\n"), "");
}

TEST(ForwardRequest, UpgradeNeedsConnectionUpgrade) {
  // Vector 68: Upgrade without Connection: upgrade is removed.
  EXPECT_EQ(rewritten_request("GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n"), "");
  // Vector 69: h2c is removed from Upgrade, and with it the upgrade token.
  EXPECT_EQ(rewritten_request("GET / HTTP/1.1\r\nConnection: Upgrade, HTTP2-Settings\r\n"
                              "Upgrade: h2c\r\nHTTP2-Settings: AAA\r\n\r\n"),
            "Connection: HTTP2-Settings\nHTTP2-Settings: AAA\n");
  EXPECT_EQ(rewritten_request("GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                              "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"),
            "Connection: Upgrade\nUpgrade: websocket\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\n");
}

TEST(ForwardRequest, AnUpgradeIsAskedOnlyWhenItIsForwarded) {
  auto asks = [](const std::string& raw) {
    RequestParser p;
    EXPECT_EQ(p.parse(raw), ParseStatus::kComplete) << raw;
    std::vector<Header> f = p.head().headers;
    StringStore st;
    return rewrite_request_fields(p.head(), f, st);
  };
  EXPECT_TRUE(asks("GET / HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: foo\r\n\r\n"));
  // The parser saw both fields, but nothing of the upgrade reaches the server (HAProxy 3.5
  // sends the request plain too): the proxy must not wait for a 101 or skip its Connection.
  EXPECT_FALSE(asks("GET / HTTP/1.1\r\nConnection: upgrade\r\nUpgrade:\r\n\r\n"));
  EXPECT_EQ(rewritten_request("GET / HTTP/1.1\r\nConnection: upgrade\r\nUpgrade:\r\n\r\n"), "");
  EXPECT_FALSE(asks("GET / HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: h2c\r\n\r\n"));
  EXPECT_FALSE(asks("GET / HTTP/1.1\r\nUpgrade: foo\r\n\r\n"));
  EXPECT_FALSE(asks("GET / HTTP/1.1\r\nConnection: upgrade\r\n\r\n"));
}

TEST(ForwardRequest, ContentLengthMergedAndCanonical) {
  // Vector 43 and 46.
  EXPECT_EQ(rewritten_request("POST / HTTP/1.1\r\nContent-Length: 3, 3\r\n\r\n"), "Content-Length: 3\n");
  EXPECT_EQ(rewritten_request("POST / HTTP/1.1\r\nContent-Length: 3\r\nX: y\r\nContent-Length: 3\r\n\r\n"),
            "Content-Length: 3\nX: y\n");
  EXPECT_EQ(rewritten_request("POST / HTTP/1.1\r\nContent-Length: 0003\r\n\r\n"), "Content-Length: 3\n");
  EXPECT_EQ(rewritten_request("POST / HTTP/1.1\r\nTransfer-Encoding: ChUnKeD\r\n\r\n"),
            "Transfer-Encoding: chunked\n");
}

TEST(ForwardRequest, DefaultPortLeavesTheTargetOnlyWithAHostLeft) {
  auto target = [](const std::string& raw) {
    RequestParser p;
    EXPECT_EQ(p.parse(raw), ParseStatus::kComplete) << raw;
    StringStore st;
    return std::string(normalize_target(p.head(), st));
  };
  EXPECT_EQ(target("GET http://a:80 HTTP/1.1\r\n\r\n"), "http://a/");
  EXPECT_EQ(target("GET http://u@a:80/x HTTP/1.1\r\n\r\n"), "http://u@a/x");
  // Found by fuzz/http_forward: `http://a@/` is a target the parser refuses (no host), so
  // the port stays where nothing else would.
  EXPECT_EQ(target("GET http://a@:80 HTTP/1.1\r\n\r\n"), "http://a@:80/");
  EXPECT_EQ(target("GET http://:80/x HTTP/1.1\r\n\r\n"), "http://:80/x");
  RequestParser again;
  EXPECT_EQ(again.parse("GET http://a@:80/ HTTP/1.1\r\n\r\n"), ParseStatus::kComplete);
}

TEST(ForwardResponse, FramingRemovedFor204AndTunnels) {
  // Vector 77.
  EXPECT_EQ(rewritten_response("HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n"), "");
  EXPECT_EQ(rewritten_response("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX: 1\r\n\r\n", Method::kConnect),
            "X: 1\n");
  // 304 and HEAD keep their length.
  EXPECT_EQ(rewritten_response("HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n"),
            "Content-Length: 5\n");
  EXPECT_EQ(rewritten_response("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", Method::kHead),
            "Content-Length: 5\n");
}

TEST(ForwardResponse, A101KeepsItsUpgradeTokenWithoutAUsableUpgrade) {
  // Found by fuzz/http_forward (crash_res_101_empty_upgrade): an empty Upgrade field names no
  // protocol and leaves, but the 101 keeps `Connection: upgrade`, as HAProxy 3.5 forwards it.
  // Dropping the token too sent a 101 that sluice's own parser refuses (kBadUpgrade101).
  const std::string empty = "HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\n"
                            "Upgrade:\r\n\r\n";
  EXPECT_EQ(rewritten_response(empty), "Connection: upgrade\n");
  EXPECT_EQ(rewritten_response("HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\n\r\n"),
            "Connection: upgrade\n");
  EXPECT_EQ(rewritten_response("HTTP/1.1 101 Switching Protocols\r\nConnection: close, Upgrade, x"
                               "\r\nUpgrade: , ,\r\n\r\n"),
            "Connection: Upgrade, x\n");
  // A 101 with a protocol is forwarded as it came.
  EXPECT_EQ(rewritten_response("HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\n"
                               "Upgrade:\r\nUpgrade: websocket\r\n\r\n"),
            "Connection: upgrade\nUpgrade: websocket\n");
  // Outside a 101 the pairing rule holds: no Upgrade left, no upgrade token.
  EXPECT_EQ(rewritten_response("HTTP/1.1 426 Upgrade Required\r\nConnection: upgrade\r\n"
                               "Upgrade:\r\nContent-Length: 0\r\n\r\n"),
            "Content-Length: 0\n");

  // What the client reads back is a 101 it accepts, a tunnel.
  ResponseParser p;
  ASSERT_EQ(p.parse(empty), ParseStatus::kComplete);
  std::vector<Header> f = p.head().headers;
  StringStore st;
  rewrite_response_fields(p.head(), true, f, st);
  std::string out;
  append_response_head(p.head(), f, out);
  EXPECT_EQ(out, "HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\n\r\n");
  ResponseParser again;
  ASSERT_EQ(again.parse(out), ParseStatus::kComplete) << to_string(again.error());
  EXPECT_EQ(again.head().body, BodyKind::kTunnel);
}

TEST(ForwardResponse, TransferEncodingWinsOverContentLength) {
  // Vector 75: the client gets chunked and no Content-Length.
  EXPECT_EQ(rewritten_response("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"),
            "Transfer-Encoding: chunked\n");
  // A server's Connection: close is not propagated.
  EXPECT_EQ(rewritten_response("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"),
            "Content-Length: 0\n");
}

TEST(ErrorPages, ByteIdenticalToHaproxy) {
  EXPECT_EQ(error_page(400),
            "HTTP/1.1 400 Bad request\r\ncontent-length: 90\r\ncache-control: no-cache\r\n"
            "connection: close\r\ncontent-type: text/html\r\n\r\n"
            "<html><body><h1>400 Bad request</h1>\nYour browser sent an invalid request.\n"
            "</body></html>\n");
  EXPECT_EQ(error_page(503),
            "HTTP/1.1 503 Service Unavailable\r\ncontent-length: 107\r\ncache-control: no-cache\r\n"
            "content-type: text/html\r\n\r\n"
            "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this "
            "request.\n</body></html>\n");
}

TEST(ErrorPages, ContentLengthsOfTheTable) {
  // The Content-Length of each of HAProxy's built-in pages.
  const std::pair<int, int> cls[] = {
      {200, 58},  {400, 90},  {401, 112}, {403, 93},  {404, 83},  {405, 147}, {407, 112},
      {408, 110}, {410, 114}, {413, 106}, {414, 110}, {421, 104}, {422, 116}, {425, 80},
      {429, 117}, {431, 105}, {500, 97},  {501, 135}, {502, 107}, {503, 107}, {504, 92}};
  for (auto [status, cl] : cls) {
    std::string page = error_page(status);
    std::string want = "content-length: " + std::to_string(cl) + "\r\n";
    EXPECT_NE(page.find(want), std::string::npos) << status << "\n" << page;
    EXPECT_EQ(page.size() - page.find("\r\n\r\n") - 4, static_cast<std::size_t>(cl)) << status;
    bool closes = page.find("connection: close") != std::string::npos;
    EXPECT_EQ(closes, status == 400 || status == 408) << status;
  }
  EXPECT_FALSE(has_error_page(418));
  EXPECT_EQ(error_reason(407), "Unauthorized");
}

// Framing after rules: the fields are regenerated from the parser's decision (docs/http.md).
struct Finalized {
  Framing result;
  std::string fields;
};

Finalized finalize(const std::string& raw, void (*edit)(std::vector<Header>&), bool rechunk = true) {
  RequestParser p;
  EXPECT_EQ(p.parse(raw), ParseStatus::kComplete) << raw;
  std::vector<Header> f = p.head().headers;
  StringStore st;
  rewrite_request_fields(p.head(), f, st);
  edit(f);
  Finalized out{finalize_framing(p.head(), false, rechunk, f, st), {}};
  for (const auto& h : f) out.fields += std::string(h.name) + ": " + std::string(h.value) + "\n";
  return out;
}

void drop(std::vector<Header>& f, std::string_view name) {
  std::erase_if(f, [&](const Header& h) { return iequals(h.name, name); });
}

TEST(FinalizeFraming, DeletedLengthOfABodyBecomesChunked) {
  auto r = finalize("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n",
                    [](std::vector<Header>& f) { drop(f, "content-length"); });
  EXPECT_EQ(r.result, Framing::kRechunk);
  EXPECT_EQ(r.fields, "transfer-encoding: chunked\n");
  // Where chunking is not possible (HTTP/1.0) the length is put back.
  r = finalize("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n",
               [](std::vector<Header>& f) { drop(f, "content-length"); }, false);
  EXPECT_EQ(r.result, Framing::kOk);
  EXPECT_EQ(r.fields, "content-length: 5\n");
}

TEST(FinalizeFraming, ContradictingLengthIsAConflict) {
  auto set0 = [](std::vector<Header>& f) {
    drop(f, "content-length");
    f.push_back({"content-length", "0"});
  };
  EXPECT_EQ(finalize("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n", set0).result,
            Framing::kConflict);
  // The same value is no conflict; a length on a bodyless request must say 0.
  EXPECT_EQ(finalize("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", set0).result, Framing::kOk);
  auto set7 = [](std::vector<Header>& f) { f.push_back({"content-length", "7"}); };
  EXPECT_EQ(finalize("GET / HTTP/1.1\r\n\r\n", set7).result, Framing::kConflict);
  EXPECT_EQ(finalize("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", set7).result,
            Framing::kConflict);
  auto te = [](std::vector<Header>& f) { f.push_back({"Transfer-Encoding", "chunked"}); };
  EXPECT_EQ(finalize("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n", te).result,
            Framing::kConflict);
  EXPECT_EQ(finalize("GET / HTTP/1.1\r\n\r\n", te).result, Framing::kConflict);
}

TEST(FinalizeFraming, HugeLengthStaysExact) {
  auto r = finalize("POST / HTTP/1.1\r\nContent-Length: 18446744073709551615\r\n\r\n",
                    [](std::vector<Header>&) {});
  EXPECT_EQ(r.result, Framing::kOk);
  EXPECT_EQ(r.fields, "Content-Length: 18446744073709551615\n");
}

TEST(FinalizeFraming, DeletedTransferEncodingIsPutBack) {
  auto r = finalize("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nX: 1\r\n\r\n",
                    [](std::vector<Header>& f) { drop(f, "transfer-encoding"); });
  EXPECT_EQ(r.result, Framing::kOk);
  EXPECT_EQ(r.fields, "X: 1\ntransfer-encoding: chunked\n");
  auto gz = [](std::vector<Header>& f) {
    drop(f, "transfer-encoding");
    f.push_back({"transfer-encoding", "gzip"});
  };
  EXPECT_EQ(finalize("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", gz).result,
            Framing::kConflict);
}

TEST(FinalizeFraming, DeletedZeroLengthOfAResponseIsPutBack) {
  // A 200 with `content-length: 0` whose length a rule deleted would run to the server's close
  // for the client, which then reads the next response on the connection as its body. Found by
  // fuzz/http_forward.
  ResponseParser p;
  ASSERT_EQ(p.parse("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: 1\r\n\r\n"),
            ParseStatus::kComplete);
  ASSERT_EQ(p.head().body, BodyKind::kNone);
  std::vector<Header> fields = {{"X", "1"}};
  StringStore st;
  EXPECT_EQ(finalize_framing(p.head(), false, false, fields, st), Framing::kOk);
  ASSERT_EQ(fields.size(), 2u);
  EXPECT_EQ(fields[1].name, "content-length");
  EXPECT_EQ(fields[1].value, "0");
  // The same for a request: put back, never re-chunked (no body follows to end the chunks).
  auto r = finalize("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
                    [](std::vector<Header>& f) { drop(f, "content-length"); });
  EXPECT_EQ(r.result, Framing::kOk);
  EXPECT_EQ(r.fields, "content-length: 0\n");
  // Without any length there is nothing to put back.
  r = finalize("GET / HTTP/1.1\r\n\r\n", [](std::vector<Header>&) {});
  EXPECT_EQ(r.fields, "");
}

TEST(FinalizeFraming, ResponseLengthIsPutBackAndBodylessResponsesAreLeftAlone) {
  ResponseParser p;
  std::string raw = "HTTP/1.1 200 OK\r\nContent-Length: 31\r\n\r\n";
  ASSERT_EQ(p.parse(raw), ParseStatus::kComplete);
  std::vector<Header> f;
  StringStore st;
  EXPECT_EQ(finalize_framing(p.head(), false, false, f, st), Framing::kOk);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].value, "31");
  // A response to HEAD carries no body whatever its fields say.
  f = {{"content-length", "99"}};
  EXPECT_EQ(finalize_framing(p.head(), true, false, f, st), Framing::kOk);
  EXPECT_EQ(f[0].value, "99");
}

}  // namespace
}  // namespace sluice::http

// The ClientHello reader behind req.ssl_sni and req.ssl_hello_type: a real hello, every
// truncation of it (need more), garbage, SSLv2, no SNI, several names, lengths that lie.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sample/tls_hello.h"

namespace sluice::sample {
namespace {

// `openssl s_client -connect 127.0.0.1:PORT -servername x.example.com` (OpenSSL 3.0), as the
// server received it: one handshake record holding the ClientHello.
const char kOpensslHelloHex[] =
    "160301013a010001360303b4413c725c2ad845d0e9e1f65fc4ce0a61818529092b98723dc54693bbca5076207ed661a8"
    "d115eee8b60009088a24e44ac3e4170786093156e14c98d048305f4e003e130213031301c02cc030009fcca9cca8ccaa"
    "c02bc02f009ec024c028006bc023c0270067c00ac0140039c009c0130033009d009c003d003c0035002f00ff010000af"
    "00000012001000000d782e6578616d706c652e636f6d000b000403000102000a00160014001d0017001e001900180100"
    "0101010201030104002300000016000000170000000d002a0028040305030603080708080809080a080b080408050806"
    "040105010601030303010302040205020602002b0009080304030303020301002d00020101003300260024001d002030"
    "f42434edb6f70c037a59851d6a7cc4556459bc7f0c3bfa4bbde9b7fb2fd756";

std::string unhex(std::string_view h) {
  std::string out;
  for (std::size_t i = 0; i + 1 < h.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16)));
  return out;
}

void put16(std::string& s, std::size_t v) {
  s.push_back(static_cast<char>(v >> 8));
  s.push_back(static_cast<char>(v));
}
void put24(std::string& s, std::size_t v) {
  s.push_back(static_cast<char>(v >> 16));
  put16(s, v & 0xffff);
}

std::string ext(uint16_t type, const std::string& body) {
  std::string e;
  put16(e, type);
  put16(e, body.size());
  return e + body;
}

// A server_name extension with these (type, name) entries.
std::string sni_ext(const std::vector<std::pair<uint8_t, std::string>>& names) {
  std::string list;
  for (const auto& [t, n] : names) {
    list.push_back(static_cast<char>(t));
    put16(list, n.size());
    list += n;
  }
  std::string body;
  put16(body, list.size());
  return ext(0, body + list);
}

// A ClientHello record by hand: version, random, session id, two suites, null compression,
// then `exts` (the extensions block, without its length; none at all when `no_exts`).
std::string hello(const std::string& exts, bool no_exts = false, std::size_t sid = 32) {
  std::string body = "\x03\x03" + std::string(32, 'R');
  body.push_back(static_cast<char>(sid));
  body += std::string(sid, 'S');
  put16(body, 4);
  body += std::string("\x13\x01\x13\x02", 4);
  body += std::string("\x01\x00", 2);
  if (!no_exts) {
    put16(body, exts.size());
    body += exts;
  }
  std::string hs = "\x01";
  put24(hs, body.size());
  hs += body;
  std::string rec = std::string("\x16\x03\x01", 3);
  put16(rec, hs.size());
  return rec + hs;
}

TEST(TlsHello, RealClientHello) {
  std::string h = unhex(kOpensslHelloHex);
  SniResult r = tls_client_hello_sni(h);
  ASSERT_EQ(r.status, HelloStatus::kFound);
  EXPECT_EQ(r.name, "x.example.com");
  HelloTypeResult t = tls_hello_type(h);
  EXPECT_EQ(t.status, HelloStatus::kFound);
  EXPECT_EQ(t.type, 1);
  // Bytes after the hello (the next record) change nothing.
  EXPECT_EQ(tls_client_hello_sni(h + "\x17\x03\x03").name, "x.example.com");
}

TEST(TlsHello, EveryTruncationNeedsMore) {
  for (const std::string& h : {unhex(kOpensslHelloHex), hello(sni_ext({{0, "a.example"}}))}) {
    for (std::size_t n = 0; n < h.size(); ++n) {
      // A copy of exactly n bytes: a reader going past it is caught by ASan.
      std::string cut = h.substr(0, n);
      EXPECT_EQ(tls_client_hello_sni(cut).status, HelloStatus::kNeedMore) << n;
      EXPECT_EQ(tls_hello_type(cut).status, HelloStatus::kNeedMore) << n;
    }
    EXPECT_EQ(tls_client_hello_sni(h).status, HelloStatus::kFound);
  }
}

TEST(TlsHello, NotTlsIsKnownFromTheFirstBytes) {
  EXPECT_EQ(tls_client_hello_sni("G").status, HelloStatus::kNone);
  EXPECT_EQ(tls_hello_type("GET / HTTP/1.1\r\n\r\n").status, HelloStatus::kNone);
  EXPECT_EQ(tls_client_hello_sni(std::string("\x16\x02", 2)).status, HelloStatus::kNone);
  // SSLv2-style hello: a two-byte length with the high bit set, then message type 1.
  std::string v2 = unhex("802b0103010012000000100100800700c0030080060040020080");
  EXPECT_EQ(tls_client_hello_sni(v2).status, HelloStatus::kNone);
  EXPECT_EQ(tls_hello_type(v2).status, HelloStatus::kNone);
  // Another record type, or another handshake message.
  EXPECT_EQ(tls_hello_type(std::string("\x17\x03\x03\x00\x05hello", 10)).status, HelloStatus::kNone);
  std::string server_hello = hello(sni_ext({{0, "a"}}));
  server_hello[5] = 2;
  EXPECT_EQ(tls_client_hello_sni(server_hello).status, HelloStatus::kNone);
  HelloTypeResult t = tls_hello_type(server_hello);
  EXPECT_EQ(t.status, HelloStatus::kFound);
  EXPECT_EQ(t.type, 2);
}

TEST(TlsHello, NoServerName) {
  EXPECT_EQ(tls_client_hello_sni(hello("", true)).status, HelloStatus::kNone);   // no extensions
  EXPECT_EQ(tls_client_hello_sni(hello("")).status, HelloStatus::kNone);         // empty block
  EXPECT_EQ(tls_client_hello_sni(hello(ext(43, "\x02\x03\x04"))).status, HelloStatus::kNone);
  EXPECT_EQ(tls_client_hello_sni(hello(sni_ext({{0, ""}}))).status, HelloStatus::kNone);
  EXPECT_EQ(tls_client_hello_sni(hello(sni_ext({{1, "not-a-host"}}))).status, HelloStatus::kNone);
  // Still a ClientHello.
  EXPECT_EQ(tls_hello_type(hello("", true)).type, 1);
}

TEST(TlsHello, NamesAmongOtherExtensions) {
  std::string exts = ext(10, std::string("\x00\x02\x00\x1d", 4)) + ext(0xff01, std::string(1, '\0')) +
                     sni_ext({{1, "other"}, {0, "first.example"}, {0, "second.example"}});
  const std::string h = hello(exts, false, 0);
  SniResult r = tls_client_hello_sni(h);
  ASSERT_EQ(r.status, HelloStatus::kFound);
  EXPECT_EQ(r.name, "first.example");   // the first host_name entry
}

TEST(TlsHello, LengthsThatLie) {
  const std::string good = hello(sni_ext({{0, "a.example"}}));
  auto with = [&](std::size_t at, uint8_t v) {
    std::string h = good;
    h[at] = static_cast<char>(v);
    return h;
  };
  // Record shorter than the handshake it announces: fragmented or lying, not read.
  EXPECT_EQ(tls_client_hello_sni(with(4, 0x10)).status, HelloStatus::kNone);
  EXPECT_EQ(tls_hello_type(with(4, 0x10)).status, HelloStatus::kNone);
  EXPECT_EQ(tls_client_hello_sni(with(4, 0x02)).status, HelloStatus::kNone);   // < 4
  // Handshake length beyond everything: waits (the caller's buffer limit ends the wait).
  std::string huge = good;
  huge[3] = huge[4] = static_cast<char>(0xff);
  huge[6] = 0x00, huge[7] = static_cast<char>(0xff), huge[8] = static_cast<char>(0xf0);
  EXPECT_EQ(tls_client_hello_sni(huge).status, HelloStatus::kNeedMore);
  // Inner lengths past the end of the hello: session id (> 32, then 32 bytes past), suites,
  // compression, extensions block, one extension, the name list, one name.
  const std::size_t sid = 9 + 2 + 32;
  EXPECT_EQ(tls_client_hello_sni(with(sid, 33)).status, HelloStatus::kNone);
  EXPECT_EQ(tls_client_hello_sni(with(sid + 1 + 32, 0xff)).status, HelloStatus::kNone);
  EXPECT_EQ(tls_client_hello_sni(with(sid + 1 + 32 + 1, 3)).status, HelloStatus::kNone);   // odd
  const std::size_t comp = sid + 1 + 32 + 2 + 4;
  EXPECT_EQ(tls_client_hello_sni(with(comp, 0xff)).status, HelloStatus::kNone);
  EXPECT_EQ(tls_client_hello_sni(with(comp, 0)).status, HelloStatus::kNone);
  const std::size_t exts = comp + 2;
  EXPECT_EQ(tls_client_hello_sni(with(exts, 0xff)).status, HelloStatus::kNone);
  EXPECT_EQ(tls_client_hello_sni(with(exts + 2 + 2, 0xff)).status, HelloStatus::kNone);
  EXPECT_EQ(tls_client_hello_sni(with(exts + 2 + 4, 0xff)).status, HelloStatus::kNone);
  EXPECT_EQ(tls_client_hello_sni(with(exts + 2 + 4 + 2 + 1, 0xff)).status, HelloStatus::kNone);
  EXPECT_EQ(tls_client_hello_sni(good).name, "a.example");
}

TEST(TlsHello, NeverReadsPastTheInput) {
  // Every byte of a small hello set to every value, each input its own allocation (ASan).
  const std::string good = hello(sni_ext({{0, "ab"}}), false, 1);
  for (std::size_t i = 0; i < good.size(); ++i)
    for (int v = 0; v < 256; ++v) {
      std::string h = good;
      h[i] = static_cast<char>(v);
      for (std::size_t n : {h.size(), h.size() - 1}) {
        std::string cut = h.substr(0, n);
        SniResult r = tls_client_hello_sni(cut);
        if (r.status == HelloStatus::kFound) {
          EXPECT_GE(r.name.data(), cut.data());
          EXPECT_LE(r.name.data() + r.name.size(), cut.data() + cut.size());
        }
        (void)tls_hello_type(cut);
      }
    }
}

}  // namespace
}  // namespace sluice::sample

namespace sluice::sample {
namespace {

std::string alpn_ext(const std::vector<std::string>& protos) {
  std::string list;
  for (const auto& p : protos) {
    list.push_back(static_cast<char>(p.size()));
    list += p;
  }
  std::string body;
  put16(body, list.size());
  return ext(16, body + list);
}

TEST(TlsHello, Alpn) {
  // The first protocol the client lists (req.ssl_alpn), wherever the extension is.
  const std::string h = hello(sni_ext({{0, "a.test"}}) + alpn_ext({"h2", "http/1.1"}));
  SniResult r = tls_client_hello_alpn(h);
  ASSERT_EQ(r.status, HelloStatus::kFound);
  EXPECT_EQ(r.name, "h2");
  EXPECT_EQ(tls_client_hello_sni(h).name, "a.test");
  // Truncations need more; no ALPN extension, an empty name, a lying length: none.
  for (std::size_t n = 0; n < h.size(); ++n)
    EXPECT_EQ(tls_client_hello_alpn(h.substr(0, n)).status, HelloStatus::kNeedMore) << n;
  EXPECT_EQ(tls_client_hello_alpn(hello(sni_ext({{0, "a.test"}}))).status, HelloStatus::kNone);
  EXPECT_EQ(tls_client_hello_alpn(hello(alpn_ext({""}))).status, HelloStatus::kNone);
  std::string lying = alpn_ext({"http/1.1"});
  lying[6] = 20;   // the first name says 20 bytes, the list holds 8
  EXPECT_EQ(tls_client_hello_alpn(hello(lying)).status, HelloStatus::kNone);
  // The real OpenSSL hello has no ALPN.
  EXPECT_EQ(tls_client_hello_alpn(unhex(kOpensslHelloHex)).status, HelloStatus::kNone);
}

std::string hex(std::string_view b) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (char c : b) {
    out.push_back(d[static_cast<uint8_t>(c) >> 4]);
    out.push_back(d[static_cast<uint8_t>(c) & 15]);
  }
  return out;
}

TEST(TlsHello, TheOtherFieldsOfARealClientHello) {
  // The values HAProxy 3.5 gives for an OpenSSL 3.0 ClientHello of the same shape.
  const std::string hello = unhex(kOpensslHelloHex);
  std::string scratch;
  auto field = [&](HelloField f) { return tls_client_hello_field(hello, f, &scratch); };
  HelloFieldResult r = field(HelloField::kCipherList);
  ASSERT_EQ(r.status, HelloStatus::kFound);
  EXPECT_EQ(hex(r.bytes).substr(0, 16), "130213031301c02c");
  EXPECT_EQ(r.bytes.size(), 62u);
  EXPECT_EQ(hex(r.bytes).substr(120), "00ff");
  EXPECT_EQ(hex(field(HelloField::kSigAlgs).bytes),
            "040305030603080708080809080a080b080408050806040105010601030303010302040205020602");
  EXPECT_EQ(hex(field(HelloField::kSupportedGroups).bytes), "001d0017001e0019001801000101010201030104");
  EXPECT_EQ(hex(field(HelloField::kKeyShareGroups).bytes), "001d");
  EXPECT_EQ(field(HelloField::kEcExt).value, 1);
  EXPECT_EQ(field(HelloField::kSessionTicket).value, 1);   // present and empty
  // Every truncation asks for more bytes.
  for (std::size_t n = 0; n < hello.size(); ++n)
    EXPECT_EQ(tls_client_hello_field(hello.substr(0, n), HelloField::kSigAlgs, &scratch).status,
              HelloStatus::kNeedMore) << n;
  // Not TLS: nothing.
  EXPECT_EQ(tls_client_hello_field("GET / HTTP/1.1\r\n\r\n", HelloField::kCipherList, &scratch).status,
            HelloStatus::kNone);
}

}  // namespace
}  // namespace sluice::sample

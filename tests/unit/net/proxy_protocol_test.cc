// The PROXY protocol parser and builders: the specification's examples, every prefix of a
// header waiting for more, truncated and lying lengths, and round trips through the builders.
#include "net/proxy_protocol.h"

#include <gtest/gtest.h>

#include <string>

#include "base/crc.h"

namespace sluice::net::pp {
namespace {

const std::string kSig("\r\n\r\n\0\r\nQUIT\n", 12);

std::string v2(uint8_t ver_cmd, uint8_t fam, const std::string& body) {
  std::string h = kSig;
  h.push_back(static_cast<char>(ver_cmd));
  h.push_back(static_cast<char>(fam));
  h.push_back(static_cast<char>(body.size() >> 8));
  h.push_back(static_cast<char>(body.size() & 0xff));
  return h + body;
}

Result parse_all(const std::string& s, Header* h) { return parse(s, h); }

TEST(ProxyProtocol, V1Tcp4) {
  const std::string in = "PROXY TCP4 192.168.0.1 192.168.0.11 56324 443\r\nGET / HTTP/1.1\r\n";
  Header h;
  Result r = parse_all(in, &h);
  ASSERT_EQ(r.status, Status::kDone);
  EXPECT_EQ(h.version, 1);
  EXPECT_EQ(h.length, in.find("GET"));
  ASSERT_TRUE(h.has_addresses);
  EXPECT_EQ(h.src.to_string(), "192.168.0.1:56324");
  EXPECT_EQ(h.dst.to_string(), "192.168.0.11:443");
  // Every prefix waits for more.
  for (std::size_t n = 0; n < h.length; ++n) {
    Header p;
    EXPECT_EQ(parse(std::string_view(in).substr(0, n), &p).status, Status::kIncomplete) << n;
  }
}

TEST(ProxyProtocol, V1Tcp6AndUnknown) {
  Header h;
  ASSERT_EQ(parse_all("PROXY TCP6 2001:db8::1 ::1 1 65535\r\n", &h).status, Status::kDone);
  EXPECT_EQ(h.src.to_string(), "[2001:db8::1]:1");
  EXPECT_EQ(h.dst.to_string(), "[::1]:65535");
  ASSERT_EQ(parse_all("PROXY UNKNOWN\r\n", &h).status, Status::kDone);
  EXPECT_FALSE(h.has_addresses);
  ASSERT_EQ(parse_all("PROXY UNKNOWN ffff::1 ::1 1 2\r\n", &h).status, Status::kDone);
  EXPECT_FALSE(h.has_addresses);
}

TEST(ProxyProtocol, V1Refused) {
  Header h;
  auto err = [&](const std::string& s) { return parse_all(s, &h); };
  EXPECT_EQ(err("GET / HTTP/1.1\r\n").error, Error::kNotHeader);
  EXPECT_EQ(err("PROXY TCP4 1.2.3.4 5.6.7.8 1111\r\n").error, Error::kBadHeader);
  EXPECT_EQ(err("PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n").error, Error::kBadHeader);
  EXPECT_EQ(err("PROXY TCP4 1.2.3.4 5.6.7.8 65536 1\r\n").error, Error::kBadHeader);
  EXPECT_EQ(err("PROXY TCP4 1.2.3.4 5.6.7.8 01 1\r\n").error, Error::kBadHeader);
  EXPECT_EQ(err("PROXY TCP4 ::1 5.6.7.8 1 1\r\n").error, Error::kBadHeader);
  EXPECT_EQ(err("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n").error, Error::kBadHeader);   // bare LF
  EXPECT_EQ(err("PROXY UDP4 1.2.3.4 5.6.7.8 1 2\r\n").error, Error::kBadProto);
  // No end of line within the 107 bytes a v1 header may take.
  EXPECT_EQ(err("PROXY TCP6 " + std::string(100, '1')).error, Error::kTruncated);
}

TEST(ProxyProtocol, V2Inet4WithTlvs) {
  std::string body = std::string("\x01\x02\x03\x04\x05\x06\x07\x08\x00\x50\x01\xbb", 12);
  body += std::string("\x02\x00\x0b", 3) + "example.com";
  body += std::string("\x05\x00\x02", 3) + "id";
  const std::string in = v2(0x21, 0x11, body) + "payload";
  Header h;
  ASSERT_EQ(parse_all(in, &h).status, Status::kDone);
  EXPECT_EQ(h.version, 2);
  EXPECT_EQ(h.length, in.size() - 7);
  EXPECT_EQ(h.src.to_string(), "1.2.3.4:80");
  EXPECT_EQ(h.dst.to_string(), "5.6.7.8:443");
  ASSERT_NE(h.tlv(kTlvAuthority), nullptr);
  EXPECT_EQ(h.tlv(kTlvAuthority)->value, "example.com");
  EXPECT_EQ(h.tlv(kTlvUniqueId)->value, "id");
  for (std::size_t n = 0; n < h.length; ++n) {
    Header p;
    EXPECT_EQ(parse(std::string_view(in).substr(0, n), &p).status, Status::kIncomplete) << n;
  }
}

TEST(ProxyProtocol, V2LocalUnspecAndRefusals) {
  Header h;
  ASSERT_EQ(parse_all(v2(0x20, 0x00, ""), &h).status, Status::kDone);   // LOCAL
  EXPECT_FALSE(h.has_addresses);
  ASSERT_EQ(parse_all(v2(0x21, 0x00, "xyz"), &h).status, Status::kDone);   // PROXY, UNSPEC
  EXPECT_FALSE(h.has_addresses);
  EXPECT_EQ(parse_all(v2(0x11, 0x11, std::string(12, 'a')), &h).error, Error::kBadHeader);   // v1?
  EXPECT_EQ(parse_all(v2(0x22, 0x11, std::string(12, 'a')), &h).error, Error::kBadHeader);   // cmd
  EXPECT_EQ(parse_all(v2(0x21, 0x12, std::string(12, 'a')), &h).error, Error::kBadProto);   // UDP
  EXPECT_EQ(parse_all(v2(0x21, 0x31, std::string(216, 'a')), &h).error, Error::kBadProto);  // UNIX
  // A length too short for the addresses, a TLV running past the header, a TLV cut short.
  EXPECT_EQ(parse_all(v2(0x21, 0x11, std::string(4, 'a')), &h).error, Error::kBadHeader);
  EXPECT_EQ(parse_all(v2(0x21, 0x11, std::string(12, 'a') + std::string("\x02\x00\x09" "ab", 5)), &h)
                .error,
            Error::kBadHeader);
  EXPECT_EQ(parse_all(v2(0x21, 0x11, std::string(12, 'a') + std::string("\x02\x00", 2)), &h).error,
            Error::kBadHeader);
  // A length past what sluice accepts (4 KiB of addresses and TLVs).
  std::string big = kSig + std::string("\x21\x11\xff\xff", 4);
  EXPECT_EQ(parse_all(big, &h).error, Error::kBadHeader);
  // A lying length: the rest has not come, so it waits (the caller's timeout ends it).
  EXPECT_EQ(parse_all(kSig + std::string("\x21\x11\x00\x40", 4) + std::string(12, 'a'), &h).status,
            Status::kIncomplete);
}

TEST(ProxyProtocol, BuildersRoundTrip) {
  const SocketAddress a = SocketAddress::ipv4(0x01020304, 1111);
  const SocketAddress b = SocketAddress::ipv4(0x05060708, 2222);
  EXPECT_EQ(build_v1(a, b), "PROXY TCP4 1.2.3.4 5.6.7.8 1111 2222\r\n");
  Header h;
  const std::string w = build_v2(a, b, {Tlv{kTlvUniqueId, "abc"}});
  ASSERT_EQ(parse(w, &h).status, Status::kDone);
  EXPECT_EQ(h.length, w.size());
  EXPECT_EQ(h.src.to_string(), "1.2.3.4:1111");
  EXPECT_EQ(h.dst.to_string(), "5.6.7.8:2222");
  EXPECT_EQ(h.tlv(kTlvUniqueId)->value, "abc");
  // A CRC32C TLV: the checksum of the whole header with its own four bytes at zero.
  const std::string with_crc = build_v2(a, b, {Tlv{kTlvUniqueId, "abc"}}, true);
  ASSERT_EQ(parse(with_crc, &h).status, Status::kDone);
  ASSERT_NE(h.tlv(kTlvCrc32c), nullptr);
  const std::string sum = h.tlv(kTlvCrc32c)->value;
  ASSERT_EQ(sum.size(), 4u);
  std::string zeroed = with_crc;
  zeroed.replace(with_crc.size() - 4, 4, std::string(4, '\0'));
  const uint32_t want = base::crc32c(zeroed);
  const auto* s = reinterpret_cast<const unsigned char*>(sum.data());
  EXPECT_EQ((uint32_t{s[0]} << 24) | (uint32_t{s[1]} << 16) | (uint32_t{s[2]} << 8) | s[3], want);
  EXPECT_EQ(base::crc32c("123456789"), 0xE3069283u);   // the check value of CRC-32C
  // Mixed families: nothing to say about the addresses.
  sockaddr_in6 s6{};
  s6.sin6_family = AF_INET6;
  const SocketAddress c =
      SocketAddress::from_sockaddr(reinterpret_cast<const sockaddr*>(&s6), sizeof s6);
  EXPECT_EQ(build_v1(a, c), "PROXY UNKNOWN\r\n");
  ASSERT_EQ(parse(build_v2(a, c), &h).status, Status::kDone);
  EXPECT_FALSE(h.has_addresses);
}

// The CRC32C goes where it is asked (HAProxy 3.5 sends set-proxy-v2-tlv-fmt's TLVs before it,
// the authority and the unique id after); checks send the LOCAL command without addresses. The
// bytes are those HAProxy 3.5 sent for a check with `set-proxy-v2-tlv-fmt(0xE1) %[srv_name]`.
TEST(ProxyProtocol, CrcPositionAndLocal) {
  const SocketAddress a = SocketAddress::ipv4(0x7f000001, 1111);
  const std::string w = build_v2(a, a, {Tlv{0xE1, "x"}, Tlv{kTlvUniqueId, ""}}, true, 1);
  const std::string addr_end = w.substr(28);
  EXPECT_EQ(addr_end.substr(0, 4), std::string("\xe1\x00\x01x", 4));
  EXPECT_EQ(addr_end.substr(4, 3), std::string("\x03\x00\x04", 3));
  EXPECT_EQ(addr_end.substr(11), std::string("\x05\x00\x00", 3));
  Header h;
  ASSERT_EQ(parse(w, &h).status, Status::kDone);
  EXPECT_EQ(h.length, w.size());

  const std::string l = build_v2_local({Tlv{0xE1, "s1"}}, true);
  std::string want = kSig + std::string("\x20\x00\x00\x0c\xe1\x00\x02s1\x03\x00\x04", 12);
  ASSERT_EQ(l.size(), want.size() + 4);
  EXPECT_EQ(l.substr(0, want.size()), want);
  std::string zeroed = l;
  zeroed.replace(l.size() - 4, 4, std::string(4, '\0'));
  const uint32_t c = base::crc32c(zeroed);
  EXPECT_EQ(l.substr(l.size() - 4), std::string({static_cast<char>(c >> 24), static_cast<char>(c >> 16),
                                                 static_cast<char>(c >> 8), static_cast<char>(c)}));
  EXPECT_EQ(build_v2_local({}, false), kSig + std::string("\x20\x00\x00\x00", 4));
  ASSERT_EQ(parse(build_v2_local({}, false), &h).status, Status::kDone);
  EXPECT_FALSE(h.has_addresses);
  // A header never claims more than its 16-bit length holds: a TLV that does not fit is left
  // out.
  const std::string big = build_v2(a, a, {Tlv{0xE0, std::string(70000, 'a')}, Tlv{0xE2, "y"}});
  ASSERT_EQ(parse(big, &h).status, Status::kDone);
  EXPECT_EQ(h.tlv(0xE0), nullptr);
  EXPECT_EQ(h.tlv(0xE2)->value, "y");
}

}  // namespace
}  // namespace sluice::net::pp

#include "net/proxy_protocol.h"

#include <arpa/inet.h>

#include <cstring>

#include "base/crc.h"

namespace sluice::net::pp {

namespace {

constexpr std::string_view kV1Prefix = "PROXY ";
constexpr char kV2Sig[12] = {'\r', '\n', '\r', '\n', '\0', '\r', '\n', 'Q', 'U', 'I', 'T', '\n'};

Result fail(Error e) { return {Status::kError, e}; }

// A v1 port: 1 to 5 digits, no sign, no leading zero (as the specification writes them),
// at most 65535.
bool v1_port(std::string_view s, uint16_t* out) {
  if (s.empty() || s.size() > 5 || (s.size() > 1 && s[0] == '0')) return false;
  uint32_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint32_t>(c - '0');
  }
  if (v > 65535) return false;
  *out = static_cast<uint16_t>(v);
  return true;
}

bool v1_address(std::string_view s, int family, uint16_t port, SocketAddress* out) {
  char buf[INET6_ADDRSTRLEN + 1];
  if (s.empty() || s.size() >= sizeof(buf)) return false;
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  *out = SocketAddress{};
  if (family == AF_INET) {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    if (inet_pton(AF_INET, buf, &sin.sin_addr) != 1) return false;
    sin.sin_port = htons(port);
    *out = SocketAddress::from_sockaddr(reinterpret_cast<const sockaddr*>(&sin), sizeof(sin));
  } else {
    sockaddr_in6 sin6{};
    sin6.sin6_family = AF_INET6;
    if (inet_pton(AF_INET6, buf, &sin6.sin6_addr) != 1) return false;
    sin6.sin6_port = htons(port);
    *out = SocketAddress::from_sockaddr(reinterpret_cast<const sockaddr*>(&sin6), sizeof(sin6));
  }
  return true;
}

Result parse_v1(std::string_view bytes, Header* out) {
  // The line ends at the first LF, which must follow a CR; none within the longest line the
  // specification allows is not a header. Otherwise the rest may still come.
  const std::size_t lf = bytes.find('\n');
  if (lf == std::string_view::npos)
    return bytes.size() >= kMaxV1 ? fail(Error::kTruncated) : Result{};
  if (bytes[lf - 1] != '\r' || lf + 1 > kMaxV1) return fail(Error::kBadHeader);
  const std::size_t eol = lf - 1;
  std::string_view line = bytes.substr(kV1Prefix.size(), eol - kV1Prefix.size());
  out->version = 1;
  out->length = eol + 2;
  out->tlvs.clear();
  // "UNKNOWN" (with anything after it): the sender does not know; the connection's own
  // addresses stay.
  if (line.substr(0, 7) == "UNKNOWN" && (line.size() == 7 || line[7] == ' ')) {
    out->has_addresses = false;
    return {Status::kDone, Error::kNone};
  }
  int family;
  if (line.substr(0, 5) == "TCP4 ") family = AF_INET;
  else if (line.substr(0, 5) == "TCP6 ") family = AF_INET6;
  else return fail(Error::kBadProto);
  line.remove_prefix(5);
  std::string_view part[4];
  for (int i = 0; i < 4; ++i) {
    const std::size_t sp = line.find(' ');
    if (i < 3 && sp == std::string_view::npos) return fail(Error::kBadHeader);
    if (i == 3 && sp != std::string_view::npos) return fail(Error::kBadHeader);
    part[i] = line.substr(0, sp);
    if (i < 3) line.remove_prefix(sp + 1);
  }
  uint16_t sport, dport;
  if (!v1_port(part[2], &sport) || !v1_port(part[3], &dport) ||
      !v1_address(part[0], family, sport, &out->src) ||
      !v1_address(part[1], family, dport, &out->dst))
    return fail(Error::kBadHeader);
  out->has_addresses = true;
  return {Status::kDone, Error::kNone};
}

uint16_t be16(const unsigned char* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }

Result parse_v2(std::string_view bytes, Header* out) {
  if (bytes.size() < 16) return {};
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const unsigned ver = p[12] >> 4, cmd = p[12] & 0x0f;
  if (ver != 2) return fail(Error::kBadHeader);
  if (cmd > 1) return fail(Error::kBadHeader);
  const std::size_t len = be16(p + 14);
  if (16 + len > kMaxV2) return fail(Error::kBadHeader);
  if (bytes.size() < 16 + len) return {};   // the rest may come
  const unsigned family = p[13] >> 4, proto = p[13] & 0x0f;
  out->version = 2;
  out->length = 16 + len;
  out->has_addresses = false;
  out->tlvs.clear();
  std::size_t addr_len = 0;
  if (cmd == 1) {   // PROXY
    if (family == 1 || family == 2) {
      if (proto != 1) return fail(Error::kBadProto);   // only STREAM over IPv4 / IPv6
      addr_len = family == 1 ? 12 : 36;
      if (len < addr_len) return fail(Error::kBadHeader);
      const unsigned char* a = p + 16;
      if (family == 1) {
        sockaddr_in s{}, d{};
        s.sin_family = d.sin_family = AF_INET;
        std::memcpy(&s.sin_addr, a, 4);
        std::memcpy(&d.sin_addr, a + 4, 4);
        std::memcpy(&s.sin_port, a + 8, 2);
        std::memcpy(&d.sin_port, a + 10, 2);
        out->src = SocketAddress::from_sockaddr(reinterpret_cast<const sockaddr*>(&s), sizeof(s));
        out->dst = SocketAddress::from_sockaddr(reinterpret_cast<const sockaddr*>(&d), sizeof(d));
      } else {
        sockaddr_in6 s{}, d{};
        s.sin6_family = d.sin6_family = AF_INET6;
        std::memcpy(&s.sin6_addr, a, 16);
        std::memcpy(&d.sin6_addr, a + 16, 16);
        std::memcpy(&s.sin6_port, a + 32, 2);
        std::memcpy(&d.sin6_port, a + 34, 2);
        out->src = SocketAddress::from_sockaddr(reinterpret_cast<const sockaddr*>(&s), sizeof(s));
        out->dst = SocketAddress::from_sockaddr(reinterpret_cast<const sockaddr*>(&d), sizeof(d));
      }
      out->has_addresses = true;
    } else if (family == 0) {
      // UNSPEC: no addresses; the connection's own stay (as for LOCAL).
    } else if (family == 3) {
      // AF_UNIX: 216 bytes of addresses, which the connection cannot take on; skipped, the
      // connection's own addresses stay (HAProxy refuses it as unhandled).
      return fail(Error::kBadProto);
    } else {
      return fail(Error::kBadHeader);
    }
  }
  // TLVs after the addresses: each one type, a 2-byte length and the value, all inside the
  // header. The payload of a LOCAL command or of an UNSPEC family is skipped whole, as the
  // specification says.
  if (out->has_addresses) {
    std::size_t off = 16 + addr_len;
    const std::size_t end = 16 + len;
    while (off < end) {
      if (end - off < 3) return fail(Error::kBadHeader);
      const uint8_t type = p[off];
      const std::size_t vlen = be16(p + off + 1);
      off += 3;
      if (end - off < vlen) return fail(Error::kBadHeader);
      out->tlvs.push_back(Tlv{type, std::string(bytes.substr(off, vlen))});
      off += vlen;
    }
  }
  return {Status::kDone, Error::kNone};
}

void put16(std::string& out, uint16_t v) {
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v & 0xff));
}

}  // namespace

Result parse(std::string_view bytes, Header* out) {
  if (bytes.empty()) return {};
  // Each byte that arrived must agree with one of the two signatures.
  const std::size_t v2n = std::min(bytes.size(), sizeof(kV2Sig));
  if (std::memcmp(bytes.data(), kV2Sig, v2n) == 0) {
    return v2n < sizeof(kV2Sig) ? Result{} : parse_v2(bytes, out);
  }
  const std::size_t v1n = std::min(bytes.size(), kV1Prefix.size());
  if (bytes.substr(0, v1n) != kV1Prefix.substr(0, v1n)) return fail(Error::kNotHeader);
  if (v1n < kV1Prefix.size()) return {};
  return parse_v1(bytes, out);
}

std::string build_v1(const SocketAddress& src, const SocketAddress& dst) {
  const int f = src.family();
  if ((f != AF_INET && f != AF_INET6) || dst.family() != f) return "PROXY UNKNOWN\r\n";
  std::string out = f == AF_INET ? "PROXY TCP4 " : "PROXY TCP6 ";
  out += src.host_string();
  out += ' ';
  out += dst.host_string();
  out += ' ';
  out += std::to_string(src.port());
  out += ' ';
  out += std::to_string(dst.port());
  out += "\r\n";
  return out;
}

namespace {
// A v2 header: the command byte, the family byte, the address block, the TLVs with the CRC
// before tlvs[crc_pos].
std::string assemble_v2(uint8_t command, uint8_t family, std::string body,
                        const std::vector<Tlv>& tlvs, bool crc32c, std::size_t crc_pos) {
  std::string out(kV2Sig, sizeof(kV2Sig));
  out.push_back(static_cast<char>(command));
  out.push_back(static_cast<char>(family));
  std::size_t crc_at = 0;
  auto put_crc = [&] {
    body.push_back(static_cast<char>(kTlvCrc32c));
    put16(body, 4);
    crc_at = 16 + body.size();
    body.append(4, '\0');
  };
  for (std::size_t i = 0; i < tlvs.size(); ++i) {
    if (crc32c && i == crc_pos) put_crc();
    const Tlv& t = tlvs[i];
    const std::size_t n = t.value.size();
    // The header's length is 16 bits: a TLV that would not fit (with the CRC still to come)
    // is left out rather than sent with a length that lies.
    if (body.size() + 3 + n + (crc32c && crc_at == 0 ? 7 : 0) > 0xffff) continue;
    body.push_back(static_cast<char>(t.type));
    put16(body, static_cast<uint16_t>(n));
    body.append(t.value, 0, n);
  }
  if (crc32c && crc_pos >= tlvs.size()) put_crc();
  put16(out, static_cast<uint16_t>(body.size()));
  out += body;
  if (crc32c) {
    const uint32_t c = base::crc32c(out);
    for (int i = 0; i < 4; ++i) out[crc_at + static_cast<std::size_t>(i)] = static_cast<char>(c >> (24 - 8 * i));
  }
  return out;
}
}  // namespace

std::string build_v2(const SocketAddress& src, const SocketAddress& dst,
                     const std::vector<Tlv>& tlvs, bool crc32c, std::size_t crc_pos) {
  const int f = src.family();
  const bool inet = (f == AF_INET || f == AF_INET6) && dst.family() == f;
  std::string body;
  if (inet && f == AF_INET) {
    const auto* s = reinterpret_cast<const sockaddr_in*>(src.sa());
    const auto* d = reinterpret_cast<const sockaddr_in*>(dst.sa());
    body.append(reinterpret_cast<const char*>(&s->sin_addr), 4);
    body.append(reinterpret_cast<const char*>(&d->sin_addr), 4);
    body.append(reinterpret_cast<const char*>(&s->sin_port), 2);
    body.append(reinterpret_cast<const char*>(&d->sin_port), 2);
  } else if (inet) {
    const auto* s = reinterpret_cast<const sockaddr_in6*>(src.sa());
    const auto* d = reinterpret_cast<const sockaddr_in6*>(dst.sa());
    body.append(reinterpret_cast<const char*>(&s->sin6_addr), 16);
    body.append(reinterpret_cast<const char*>(&d->sin6_addr), 16);
    body.append(reinterpret_cast<const char*>(&s->sin6_port), 2);
    body.append(reinterpret_cast<const char*>(&d->sin6_port), 2);
  }
  // Version 2, PROXY; TCP over IPv4 (0x11), over IPv6 (0x21), else UNSPEC.
  return assemble_v2(0x21, !inet ? 0x00 : f == AF_INET ? 0x11 : 0x21, std::move(body), tlvs,
                     crc32c, crc_pos);
}

std::string build_v2_local(const std::vector<Tlv>& tlvs, bool crc32c) {
  return assemble_v2(0x20, 0x00, {}, tlvs, crc32c, tlvs.size());
}

}  // namespace sluice::net::pp

#pragma once
// The PROXY protocol (versions 1 and 2, as HAProxy's proxy-protocol.txt specifies them): the
// header a load balancer in front sends before the client's bytes, carrying the client's and
// the destination's addresses, and the one sluice sends to servers (`send-proxy`,
// `send-proxy-v2`). Pure and bounds-checked: parse() reads what has arrived so far and says
// whether a header is complete, may still complete, or cannot be one; the caller reads exactly
// `length` bytes once it is complete, so that the client's first bytes stay in the socket.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "net/address.h"

namespace sluice::net::pp {

// v1: 107 bytes at most ("PROXY " ... CRLF). v2: 16 bytes and a length of up to 65535; sluice
// accepts 4 KiB of addresses and TLVs, far more than any sender uses.
inline constexpr std::size_t kMaxV1 = 107;
inline constexpr std::size_t kMaxV2 = 16 + 4096;

// Why a header was refused, as HAProxy's connection error codes name them (fc_err 13 to 17;
// the connection's own end, 11 and 12, and the timeout are the caller's).
enum class Error : uint8_t {
  kNone,
  kTruncated,   // 14: the header stops before its end (a v1 line without CRLF in 107 bytes)
  kNotHeader,   // 15: "does not look like a PROXY protocol header"
  kBadHeader,   // 16: "an invalid PROXY protocol header"
  kBadProto,    // 17: "an unhandled protocol in the PROXY protocol header"
};

enum class Status : uint8_t {
  kIncomplete,   // a prefix of a valid header: wait for more bytes
  kDone,         // `*out` holds it; `out->length` bytes are the header
  kError,        // not a header (error says why)
};

// A v2 type-length-value field.
struct Tlv {
  uint8_t type = 0;
  std::string value;
};
inline constexpr uint8_t kTlvAlpn = 0x01;
inline constexpr uint8_t kTlvAuthority = 0x02;
inline constexpr uint8_t kTlvCrc32c = 0x03;
inline constexpr uint8_t kTlvNoop = 0x04;
inline constexpr uint8_t kTlvUniqueId = 0x05;
// PP2_TYPE_SSL: a client byte (the flags below), the certificate's verify result (4 bytes,
// network order), then sub-TLVs.
inline constexpr uint8_t kTlvSsl = 0x20;
inline constexpr uint8_t kSubSslVersion = 0x21;
inline constexpr uint8_t kSubSslCn = 0x22;
inline constexpr uint8_t kSubSslCipher = 0x23;
inline constexpr uint8_t kSubSslSigAlg = 0x24;
inline constexpr uint8_t kSubSslKeyAlg = 0x25;
inline constexpr uint8_t kClientSsl = 0x01;        // the client connection is TLS
inline constexpr uint8_t kClientCertConn = 0x02;   // it sent a certificate on this connection
inline constexpr uint8_t kClientCertSess = 0x04;   // its session has one (a resumed one too)

// `server ... proxy-v2-options`: the TLVs sluice adds to the v2 headers it sends.
inline constexpr uint8_t kOptUniqueId = 1;    // the stream's unique id (unique-id-format)
inline constexpr uint8_t kOptCrc32c = 2;      // a CRC32C of the header
inline constexpr uint8_t kOptAuthority = 4;   // the authority a received header carried
// The TLS facts of the client connection (kTlvSsl): `ssl` (its version), and each of these
// implies it: `cert-cn` (the client certificate's CN), `ssl-cipher`, `cert-sig` and `cert-key`
// (the signature and key algorithms of the certificate the frontend presented).
inline constexpr uint8_t kOptSsl = 8;
inline constexpr uint8_t kOptCertCn = 16;
inline constexpr uint8_t kOptSslCipher = 32;
inline constexpr uint8_t kOptCertSig = 64;
inline constexpr uint8_t kOptCertKey = 128;

struct Header {
  int version = 0;            // 1 or 2
  std::size_t length = 0;     // bytes the header takes
  // The addresses it carries; false for v1 "UNKNOWN", a v2 LOCAL command or an address
  // family v2 allows without addresses (AF_UNSPEC): the connection's own addresses stay.
  bool has_addresses = false;
  SocketAddress src, dst;
  std::vector<Tlv> tlvs;      // v2 only
  const Tlv* tlv(uint8_t type) const {
    for (const Tlv& t : tlvs)
      if (t.type == type) return &t;
    return nullptr;
  }
};

struct Result {
  Status status = Status::kIncomplete;
  Error error = Error::kNone;
};

// Reads a header from the start of `bytes` (what has arrived so far).
Result parse(std::string_view bytes, Header* out);

// The headers sluice sends to a server for a connection from `src` to `dst` (both of one
// family, else v1's "UNKNOWN" and v2's LOCAL-less UNSPEC form, as HAProxy sends them).
std::string build_v1(const SocketAddress& src, const SocketAddress& dst);
// `crc32c`: a CRC32C TLV (0x03) checksums the whole header, as the specification says; it
// goes before tlvs[crc_pos] (after them all when crc_pos is past the end). A TLV that would
// take the header past its 16-bit length is left out.
std::string build_v2(const SocketAddress& src, const SocketAddress& dst,
                     const std::vector<Tlv>& tlvs = {}, bool crc32c = false,
                     std::size_t crc_pos = SIZE_MAX);
// The v2 header of a connection that carries no client (health checks): the LOCAL command,
// no addresses, `tlvs` then the CRC32C when asked, as HAProxy 3.5's checks send it.
std::string build_v2_local(const std::vector<Tlv>& tlvs, bool crc32c);

}  // namespace sluice::net::pp

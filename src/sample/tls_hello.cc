// A reader for the start of a TLS connection, written for routing on it. Every length read
// from the input is checked against the bytes that remain before it is used: the input comes
// from any client.
#include "sample/tls_hello.h"

#include <cstddef>

namespace sluice::sample {

namespace {

constexpr uint8_t kHandshakeRecord = 22;
constexpr uint8_t kClientHello = 1;
constexpr uint16_t kServerNameExt = 0;
constexpr uint16_t kAlpnExt = 16;
constexpr uint16_t kSupportedGroupsExt = 10;
constexpr uint16_t kSigAlgsExt = 13;
constexpr uint16_t kSessionTicketExt = 35;
constexpr uint16_t kKeyShareExt = 51;
constexpr uint8_t kHostName = 0;
constexpr std::size_t kRecordHeader = 5;      // type, version(2), length(2)
constexpr std::size_t kHandshakeHeader = 4;   // type, length(3)

// A cursor over a byte range that refuses to move or read past its end.
class Reader {
 public:
  explicit Reader(std::string_view d) : d_(d) {}
  std::size_t left() const { return d_.size() - pos_; }
  bool skip(std::size_t n) {
    if (n > left()) return false;
    pos_ += n;
    return true;
  }
  bool u8(uint32_t& v) { return uint(1, v); }
  bool u16(uint32_t& v) { return uint(2, v); }
  bool u24(uint32_t& v) { return uint(3, v); }
  // A sub-reader over the next `n` bytes, which this one then skips.
  bool sub(std::size_t n, Reader& out) {
    if (n > left()) return false;
    out = Reader(d_.substr(pos_, n));
    pos_ += n;
    return true;
  }
  std::string_view rest() const { return d_.substr(pos_); }

 private:
  bool uint(std::size_t n, uint32_t& v) {
    if (n > left()) return false;
    v = 0;
    for (std::size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<uint8_t>(d_[pos_ + i]);
    pos_ += n;
    return true;
  }
  std::string_view d_;
  std::size_t pos_ = 0;
};

uint8_t byte_at(std::string_view d, std::size_t i) { return static_cast<uint8_t>(d[i]); }

// The extensions block of a ClientHello body; kNone unless a host_name is found.
SniResult find_server_name(Reader exts) {
  while (exts.left() > 0) {
    uint32_t type = 0, len = 0;
    Reader body("");
    if (!exts.u16(type) || !exts.u16(len) || !exts.sub(len, body)) return {};
    if (type != kServerNameExt) continue;
    uint32_t list_len = 0;
    Reader list("");
    if (!body.u16(list_len) || !body.sub(list_len, list)) return {};
    while (list.left() > 0) {
      uint32_t name_type = 0, name_len = 0;
      if (!list.u8(name_type) || !list.u16(name_len) || name_len > list.left()) return {};
      std::string_view name = list.rest().substr(0, name_len);
      list.skip(name_len);
      if (name_type == kHostName) {
        if (name.empty()) return {};
        return {HelloStatus::kFound, name};
      }
    }
    return {};   // one server_name extension only (RFC 8446 4.2)
  }
  return {};
}

// The first protocol name of the ALPN extension (RFC 7301 3.1); kNone without one.
SniResult find_alpn(Reader exts) {
  while (exts.left() > 0) {
    uint32_t type = 0, len = 0;
    Reader body("");
    if (!exts.u16(type) || !exts.u16(len) || !exts.sub(len, body)) return {};
    if (type != kAlpnExt) continue;
    uint32_t list_len = 0, name_len = 0;
    Reader list("");
    if (!body.u16(list_len) || !body.sub(list_len, list)) return {};
    if (!list.u8(name_len) || name_len == 0 || name_len > list.left()) return {};
    return {HelloStatus::kFound, list.rest().substr(0, name_len)};
  }
  return {};
}

// The extensions of the ClientHello at the start of `data`: kNeedMore, kNone, or kFound with
// `exts` set (and `suites`, when given, on the cipher_suites bytes).
HelloStatus client_hello_extensions(std::string_view data, Reader* exts,
                                    std::string_view* suites = nullptr) {
  // Each header byte is checked as soon as it is there, so that a client that is not speaking
  // TLS is recognised from its first byte instead of after the whole inspect-delay.
  if (data.empty()) return HelloStatus::kNeedMore;
  if (byte_at(data, 0) != kHandshakeRecord) return HelloStatus::kNone;
  if (data.size() < 2) return HelloStatus::kNeedMore;
  if (byte_at(data, 1) < 3) return HelloStatus::kNone;   // SSL 3.0 or a TLS version
  if (data.size() < kRecordHeader) return HelloStatus::kNeedMore;
  const std::size_t record_len = (std::size_t{byte_at(data, 3)} << 8) | byte_at(data, 4);
  if (record_len < kHandshakeHeader) return HelloStatus::kNone;
  if (data.size() < kRecordHeader + 1) return HelloStatus::kNeedMore;
  if (byte_at(data, kRecordHeader) != kClientHello) return HelloStatus::kNone;
  if (data.size() < kRecordHeader + kHandshakeHeader) return HelloStatus::kNeedMore;
  const std::size_t hello_len = (std::size_t{byte_at(data, 6)} << 16) |
                                (std::size_t{byte_at(data, 7)} << 8) | byte_at(data, 8);
  if (kHandshakeHeader + hello_len > record_len) return HelloStatus::kNone;   // fragmented
  if (data.size() - kRecordHeader - kHandshakeHeader < hello_len) return HelloStatus::kNeedMore;
  Reader hello(data.substr(kRecordHeader + kHandshakeHeader, hello_len));
  uint32_t sid_len = 0, suites_len = 0, comp_len = 0, exts_len = 0;
  if (!hello.skip(2 + 32)) return HelloStatus::kNone;   // legacy_version, random
  if (!hello.u8(sid_len) || sid_len > 32 || !hello.skip(sid_len)) return HelloStatus::kNone;
  if (!hello.u16(suites_len) || suites_len < 2 || suites_len % 2 != 0) return HelloStatus::kNone;
  const std::string_view suite_bytes = hello.rest().substr(0, suites_len);
  if (!hello.skip(suites_len)) return HelloStatus::kNone;
  if (!hello.u8(comp_len) || comp_len < 1 || !hello.skip(comp_len)) return HelloStatus::kNone;
  if (suites) *suites = suite_bytes;   // a well-formed hello up to its extensions
  if (hello.left() == 0) return HelloStatus::kNone;   // no extensions at all
  if (!hello.u16(exts_len) || !hello.sub(exts_len, *exts)) return HelloStatus::kNone;
  return HelloStatus::kFound;
}

// The body of the first extension of type `type`, or false without one (or a malformed list).
bool find_extension(Reader exts, uint32_t want, Reader* body) {
  while (exts.left() > 0) {
    uint32_t type = 0, len = 0;
    if (!exts.u16(type) || !exts.u16(len) || !exts.sub(len, *body)) return false;
    if (type == want) return true;
  }
  return false;
}

// An extension whose body is a list with a 2-byte length: the list, or kNone.
HelloFieldResult u16_list(Reader exts, uint32_t type) {
  Reader body("");
  uint32_t len = 0;
  if (!find_extension(exts, type, &body) || !body.u16(len) || len != body.left()) return {};
  return {HelloStatus::kFound, body.rest(), 0};
}

}  // namespace

HelloFieldResult tls_client_hello_field(std::string_view data, HelloField field,
                                        std::string* scratch) {
  Reader exts("");
  std::string_view suites;
  const HelloStatus st = client_hello_extensions(data, &exts, &suites);
  if (st == HelloStatus::kNeedMore) return {st, {}, 0};
  // A ClientHello without any extension still has its cipher suites.
  if (field == HelloField::kCipherList && !suites.empty()) return {HelloStatus::kFound, suites, 0};
  if (st != HelloStatus::kFound) return {};
  Reader body("");
  switch (field) {
    case HelloField::kCipherList: return {};
    case HelloField::kSigAlgs: return u16_list(exts, kSigAlgsExt);
    case HelloField::kSupportedGroups: return u16_list(exts, kSupportedGroupsExt);
    case HelloField::kEcExt:
      return {HelloStatus::kFound, {}, find_extension(exts, kSupportedGroupsExt, &body) ? 1 : 0};
    case HelloField::kSessionTicket:
      if (!find_extension(exts, kSessionTicketExt, &body)) return {HelloStatus::kFound, {}, 0};
      return {HelloStatus::kFound, {}, body.left() == 0 ? 1 : 2};
    case HelloField::kKeyShareGroups: {
      uint32_t len = 0;
      Reader shares("");
      if (!find_extension(exts, kKeyShareExt, &body) || !body.u16(len) || !body.sub(len, shares) ||
          !scratch)
        return {};
      scratch->clear();
      while (shares.left() > 0) {
        uint32_t group = 0, key_len = 0;
        if (!shares.u16(group) || !shares.u16(key_len) || !shares.skip(key_len)) return {};
        scratch->push_back(static_cast<char>(group >> 8));
        scratch->push_back(static_cast<char>(group & 0xFF));
      }
      if (scratch->empty()) return {};
      return {HelloStatus::kFound, *scratch, 0};
    }
  }
  return {};
}

SniResult tls_client_hello_alpn(std::string_view data) {
  Reader exts("");
  const HelloStatus st = client_hello_extensions(data, &exts);
  if (st != HelloStatus::kFound) return {st, {}};
  return find_alpn(exts);
}

SniResult tls_client_hello_sni(std::string_view data) {
  Reader exts("");
  const HelloStatus st = client_hello_extensions(data, &exts);
  if (st != HelloStatus::kFound) return {st, {}};
  return find_server_name(exts);
}

HelloTypeResult tls_hello_type(std::string_view data) {
  if (data.empty()) return {HelloStatus::kNeedMore, 0};
  if (byte_at(data, 0) != kHandshakeRecord) return {};
  if (data.size() < kRecordHeader + kHandshakeHeader) return {HelloStatus::kNeedMore, 0};
  if (byte_at(data, 1) < 3) return {};
  const std::size_t record_len = (std::size_t{byte_at(data, 3)} << 8) | byte_at(data, 4);
  if (record_len < kHandshakeHeader) return {};
  const std::size_t msg_len = (std::size_t{byte_at(data, 6)} << 16) |
                              (std::size_t{byte_at(data, 7)} << 8) | byte_at(data, 8);
  if (kHandshakeHeader + msg_len > record_len) return {};
  if (data.size() - kRecordHeader - kHandshakeHeader < msg_len) return {HelloStatus::kNeedMore, 0};
  return {HelloStatus::kFound, byte_at(data, kRecordHeader)};
}

}  // namespace sluice::sample

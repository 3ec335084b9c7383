// mqtt_is_valid and mqtt_field_value(<packettype>,<fieldname or property ID>) (HAProxy's section
// 7.3.1): the first MQTT 3.1.1 or 5.0 control packet of a stream, a CONNECT from the client or a
// CONNACK from the server. HAProxy's rules, checked against HAProxy 3.5:
//   - a packet is a fixed header (type and flags in one byte, flags as the MQTT specification
//     fixes them for each type, any for PUBLISH; then the remaining length, a variable byte
//     integer of at most 4 bytes), then that many bytes; bytes after them are not read;
//   - fewer than 2 bytes, or fewer than the remaining length, is "not known yet": no sample;
//     a bad type or flags byte, a truncated or 5-byte length, and any type but CONNECT and
//     CONNACK are invalid;
//   - CONNECT: protocol name (not checked), level 3 or 4 (3.1.1) or 5, flags with the reserved
//     bit clear, keep alive, properties (5.0), client identifier, then, as the flags say, will
//     properties (5.0), will topic and will payload, user name, password; every length inside
//     the packet and the packet used exactly;
//   - CONNACK: flags 0 or 1, reason code; a remaining length of 2 is 3.1.1 (protocol version
//     4), more is 5.0 with properties, used exactly;
//   - properties: one-byte identifiers, each allowed where it stands and at most once (user
//     properties excepted), byte values 0 or 1 where the specification says so, Receive Maximum
//     and Maximum Packet Size not 0, Authentication Data only with an Authentication Method.
// mqtt_field_value answers text: numbers in decimal, strings and binary data as they are; an
// empty one is no sample. A 5.0 numeric property left out reads 0 (will properties only with
// the will flag); properties of a 3.1.1 packet and User Property (38) give no sample.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "http/http.h"
#include "sample/tables.h"

namespace sluice::sample::tables {

namespace {

enum : uint8_t { kConnect = 1, kConnack = 2, kPublish = 3 };

constexpr std::string_view kTypeNames[] = {
    "",       "connect",    "connack",  "publish", "puback",  "pubrec",
    "pubrel", "pubcomp",    "subscribe", "suback", "unsubscribe", "unsuback",
    "pingreq", "pingresp",  "disconnect", "auth"};

// CONNECT flags.
enum : uint8_t {
  kFlReserved = 0x01, kFlWill = 0x04, kFlPassword = 0x40, kFlUsername = 0x80,
};

enum class PropKind : uint8_t { kNone, kBool, kByte, kU16, kU32, kStr, kPair };
// Where a property may stand.
enum : uint8_t { kInConnect = 1, kInWill = 2, kInConnack = 4 };

struct PropDef {
  PropKind kind = PropKind::kNone;
  uint8_t where = 0;
  bool nonzero = false;   // 0 is a protocol error
};

constexpr std::array<PropDef, 43> make_props() {
  std::array<PropDef, 43> p{};
  p[1] = {PropKind::kBool, kInWill};                      // Payload Format Indicator
  p[2] = {PropKind::kU32, kInWill};                       // Message Expiry Interval
  p[3] = {PropKind::kStr, kInWill};                       // Content Type
  p[8] = {PropKind::kStr, kInWill};                       // Response Topic
  p[9] = {PropKind::kStr, kInWill};                       // Correlation Data
  p[17] = {PropKind::kU32, kInConnect | kInConnack};      // Session Expiry Interval
  p[18] = {PropKind::kStr, kInConnack};                   // Assigned Client Identifier
  p[19] = {PropKind::kU16, kInConnack};                   // Server Keep Alive
  p[21] = {PropKind::kStr, kInConnect | kInConnack};      // Authentication Method
  p[22] = {PropKind::kStr, kInConnect | kInConnack};      // Authentication Data
  p[23] = {PropKind::kBool, kInConnect};                  // Request Problem Information
  p[24] = {PropKind::kU32, kInWill};                      // Will Delay Interval
  p[25] = {PropKind::kBool, kInConnect};                  // Request Response Information
  p[26] = {PropKind::kStr, kInConnack};                   // Response Information
  p[28] = {PropKind::kStr, kInConnack};                   // Server Reference
  p[31] = {PropKind::kStr, kInConnack};                   // Reason String
  p[33] = {PropKind::kU16, kInConnect | kInConnack, true};   // Receive Maximum
  p[34] = {PropKind::kU16, kInConnect | kInConnack};      // Topic Alias Maximum
  p[36] = {PropKind::kBool, kInConnack};                  // Maximum QoS
  p[37] = {PropKind::kBool, kInConnack};                  // Retain Available
  p[38] = {PropKind::kPair, kInConnect | kInWill | kInConnack};   // User Property
  p[39] = {PropKind::kU32, kInConnect | kInConnack, true};   // Maximum Packet Size
  p[40] = {PropKind::kBool, kInConnack};                  // Wildcard Subscription Available
  p[41] = {PropKind::kBool, kInConnack};                  // Subscription Identifiers Available
  p[42] = {PropKind::kBool, kInConnack};                  // Shared Subscription Available
  return p;
}
constexpr std::array<PropDef, 43> kProps = make_props();

// The values of one property block.
struct Props {
  uint64_t seen = 0;   // bit per identifier
  std::array<uint32_t, 43> num{};
  std::array<std::string_view, 43> str{};
};

struct Packet {
  uint8_t type = 0;
  uint8_t version = 0;        // CONNECT: the level; CONNACK: 4 or 5
  uint8_t flags = 0;          // CONNECT flags, CONNACK acknowledge flags
  uint8_t reason = 0;         // CONNACK
  uint16_t keepalive = 0;
  std::string_view protocol_name, client_id, will_topic, will_payload, username, password;
  Props props, will;
};

enum class Check : uint8_t { kValid, kInvalid, kNeedMore };

// A cursor over the packet's bytes; any read past the end fails.
struct Reader {
  std::string_view s;
  std::size_t p = 0;
  bool byte(uint8_t* v) {
    if (p >= s.size()) return false;
    *v = static_cast<uint8_t>(s[p++]);
    return true;
  }
  bool u16(uint16_t* v) {
    uint8_t a = 0, b = 0;
    if (!byte(&a) || !byte(&b)) return false;
    *v = static_cast<uint16_t>(a << 8 | b);
    return true;
  }
  bool u32(uint32_t* v) {
    uint16_t a = 0, b = 0;
    if (!u16(&a) || !u16(&b)) return false;
    *v = static_cast<uint32_t>(a) << 16 | b;
    return true;
  }
  // A two-byte length, then that many bytes (UTF-8 strings and binary data alike).
  bool str(std::string_view* v) {
    uint16_t n = 0;
    if (!u16(&n) || s.size() - p < n) return false;
    *v = s.substr(p, n);
    p += n;
    return true;
  }
  // A variable byte integer of at most four bytes.
  bool varint(uint32_t* v) {
    uint32_t out = 0;
    for (int i = 0; i < 4; ++i) {
      uint8_t b = 0;
      if (!byte(&b)) return false;
      out |= static_cast<uint32_t>(b & 0x7f) << (7 * i);
      if (!(b & 0x80)) {
        *v = out;
        return true;
      }
    }
    return false;
  }
  bool done() const { return p == s.size(); }
};

// A property block (5.0) at the cursor, for the place `where`.
bool read_props(Reader& r, uint8_t where, Props* out) {
  uint32_t len = 0;
  if (!r.varint(&len) || r.s.size() - r.p < len) return false;
  Reader in{r.s.substr(r.p, len)};
  r.p += len;
  while (!in.done()) {
    uint8_t id = 0;
    in.byte(&id);
    if (id >= kProps.size() || !(kProps[id].where & where)) return false;
    const PropDef& d = kProps[id];
    if (d.kind != PropKind::kPair) {
      if (out->seen >> id & 1) return false;
      out->seen |= uint64_t{1} << id;
    }
    uint8_t b = 0;
    uint16_t w = 0;
    std::string_view k, v;
    switch (d.kind) {
      case PropKind::kBool:
      case PropKind::kByte:
        if (!in.byte(&b) || (d.kind == PropKind::kBool && b > 1)) return false;
        out->num[id] = b;
        break;
      case PropKind::kU16:
        if (!in.u16(&w)) return false;
        out->num[id] = w;
        break;
      case PropKind::kU32:
        if (!in.u32(&out->num[id])) return false;
        break;
      case PropKind::kStr:
        if (!in.str(&out->str[id])) return false;
        break;
      case PropKind::kPair:
        if (!in.str(&k) || !in.str(&v)) return false;
        break;
      case PropKind::kNone:
        return false;
    }
    if (d.nonzero && out->num[id] == 0) return false;
  }
  // Authentication Data needs an Authentication Method.
  return !(out->seen >> 22 & 1) || (out->seen >> 21 & 1);
}

bool read_connect(Reader& r, Packet* pk) {
  if (!r.str(&pk->protocol_name) || !r.byte(&pk->version)) return false;
  if (pk->version < 3 || pk->version > 5) return false;
  if (!r.byte(&pk->flags) || (pk->flags & kFlReserved) || !r.u16(&pk->keepalive)) return false;
  bool v5 = pk->version == 5;
  if (v5 && !read_props(r, kInConnect, &pk->props)) return false;
  if (!r.str(&pk->client_id)) return false;
  if (pk->flags & kFlWill) {
    if (v5 && !read_props(r, kInWill, &pk->will)) return false;
    if (!r.str(&pk->will_topic) || !r.str(&pk->will_payload)) return false;
  }
  if ((pk->flags & kFlUsername) && !r.str(&pk->username)) return false;
  if ((pk->flags & kFlPassword) && !r.str(&pk->password)) return false;
  return r.done();
}

bool read_connack(Reader& r, Packet* pk) {
  if (!r.byte(&pk->flags) || (pk->flags & ~1u) || !r.byte(&pk->reason)) return false;
  if (r.done()) {
    pk->version = 4;
    return true;
  }
  pk->version = 5;
  return read_props(r, kInConnack, &pk->props) && r.done();
}

Check validate(std::string_view m, Packet* pk) {
  if (m.size() < 2) return Check::kNeedMore;
  auto b0 = static_cast<uint8_t>(m[0]);
  pk->type = b0 >> 4;
  uint8_t flags = b0 & 0x0f;
  if (pk->type == 0) return Check::kInvalid;
  // PUBREL, SUBSCRIBE and UNSUBSCRIBE have flags 0010, PUBLISH any, the others 0000.
  uint8_t want = pk->type == 6 || pk->type == 8 || pk->type == 10 ? 2 : 0;
  if (pk->type != kPublish && flags != want) return Check::kInvalid;
  Reader hdr{m, 1};
  uint32_t len = 0;
  if (!hdr.varint(&len)) return Check::kInvalid;
  if (m.size() - hdr.p < len) return Check::kNeedMore;
  Reader body{m.substr(hdr.p, len)};
  bool ok = pk->type == kConnect   ? read_connect(body, pk)
            : pk->type == kConnack ? read_connack(body, pk)
                                   : false;
  return ok ? Check::kValid : Check::kInvalid;
}

bool c_mqtt_is_valid(const Arg*, Sample& s, const Ctx&) {
  Packet pk;
  Check r = validate(s.str, &pk);
  if (r == Check::kNeedMore) return false;
  s = Sample::boolean(r == Check::kValid);
  return true;
}

// mqtt_field_value's fields by name; a property is its identifier.
enum Field : int64_t {
  kFlags = 1000, kProtocolName, kProtocolVersion, kClientId, kWillTopic, kWillPayload,
  kUsername, kPassword, kKeepalive, kReasonCode,
};

struct FieldName {
  std::string_view name;
  Field field;
  uint8_t type;
};
constexpr FieldName kFieldNames[] = {
    {"flags", kFlags, kConnect},           {"protocol_name", kProtocolName, kConnect},
    {"protocol_version", kProtocolVersion, kConnect},
    {"client_identifier", kClientId, kConnect},
    {"will_topic", kWillTopic, kConnect}, {"will_payload", kWillPayload, kConnect},
    {"username", kUsername, kConnect},     {"password", kPassword, kConnect},
    {"keepalive", kKeepalive, kConnect},   {"flags", kFlags, kConnack},
    {"protocol_version", kProtocolVersion, kConnack},
    {"reason_code", kReasonCode, kConnack},
};

// Compiles the packet type into a[0].sint and the field into a[1].sint.
std::string check_mqtt_field(Arg* a, const ParseCtx&) {
  uint32_t type = 0;
  if (!digits_u32(a[0].str, &type)) {
    for (uint32_t t = 1; t < std::size(kTypeNames); ++t)
      if (http::iequals(a[0].str, kTypeNames[t])) type = t;
  }
  if (type == 0 || type >= std::size(kTypeNames))
    return fmt::format("Unknown MQTT type '{}'", a[0].str);
  a[0].sint = type;
  std::string_view f = a[1].str;
  for (const auto& n : kFieldNames) {
    if (n.type == type && http::iequals(f, n.name)) {
      a[1].sint = n.field;
      return {};
    }
  }
  // A property identifier, in decimal without leading zeros.
  uint32_t id = 0;
  uint8_t where = type == kConnect ? kInConnect | kInWill : type == kConnack ? kInConnack : 0;
  if (!f.empty() && f.size() <= 2 && f[0] != '0' && digits_u32(f, &id) && id < kProps.size() &&
      (kProps[id].where & where)) {
    a[1].sint = id;
    return {};
  }
  return fmt::format("Unknown MQTT field name '{}' for packet type '{}'", f, a[0].str);
}

bool answer_text(Sample& s, std::string_view v) {
  if (v.empty()) return false;
  s = Sample::string(v);
  return true;
}

bool answer_number(Sample& s, uint32_t v, const Ctx& ctx) {
  std::string& b = ctx.sc().next();
  fmt::format_to(std::back_inserter(b), "{}", v);
  s = Sample::string(b);
  return true;
}

bool c_mqtt_field_value(const Arg* a, Sample& s, const Ctx& ctx) {
  Packet pk;
  if (validate(s.str, &pk) != Check::kValid || pk.type != a[0].sint) return false;
  switch (a[1].sint) {
    case kFlags: return answer_number(s, pk.flags, ctx);
    case kProtocolName: return answer_text(s, pk.protocol_name);
    case kProtocolVersion: return answer_number(s, pk.version, ctx);
    case kClientId: return answer_text(s, pk.client_id);
    case kWillTopic: return answer_text(s, pk.will_topic);
    case kWillPayload: return answer_text(s, pk.will_payload);
    case kUsername: return answer_text(s, pk.username);
    case kPassword: return answer_text(s, pk.password);
    case kKeepalive: return answer_number(s, pk.keepalive, ctx);
    case kReasonCode: return answer_number(s, pk.reason, ctx);
    default: break;
  }
  auto id = static_cast<std::size_t>(a[1].sint);
  if (pk.version != 5 || id >= kProps.size()) return false;
  const PropDef& d = kProps[id];
  const Props* p = &pk.props;
  if (pk.type == kConnect && (d.where & kInWill)) {
    if (!(pk.flags & kFlWill)) return false;
    p = &pk.will;
  }
  switch (d.kind) {
    case PropKind::kStr: return answer_text(s, p->str[id]);
    case PropKind::kPair:
    case PropKind::kNone: return false;
    default: return answer_number(s, p->num[id], ctx);
  }
}

constexpr ConvDef kConvs[] = {
    {"mqtt_is_valid", c_mqtt_is_valid, no_args(), nullptr, Type::kBin, Type::kBool},
    {"mqtt_field_value", c_mqtt_field_value, args(2, ArgType::kStr, ArgType::kStr),
     check_mqtt_field, Type::kBin, Type::kStr},
};

}  // namespace

std::span<const ConvDef> mqtt_convs() { return kConvs; }

}  // namespace sluice::sample::tables

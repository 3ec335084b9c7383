#pragma once
// What `req.ssl_sni`, `req.ssl_alpn`, `req.ssl_hello_type` and the other `req.ssl_*` fetches
// (cipher list, signature algorithms, groups, key shares, extensions) read from the first bytes a client sent: a
// bounds-checked reader of the TLS record and handshake headers and of a ClientHello up to its
// server_name and ALPN extensions (RFC 8446 4.1.2, RFC 6066 3, RFC 7301 3.1). Pure: no allocation, never reads past
// `data`, and tells "not enough bytes yet" apart from "not TLS / no such value", because the
// first makes `tcp-request content` rules wait (within inspect-delay) and the second is final.
#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::sample {

enum class HelloStatus : uint8_t {
  kNeedMore,   // a prefix of something that may still become a value: more bytes can decide
  kNone,       // decided: not a TLS handshake record, not a ClientHello, or no server name
  kFound,      // decided: the value is there
};

struct SniResult {
  HelloStatus status = HelloStatus::kNone;
  std::string_view name;   // kFound: the first host_name entry, pointing into the input
};

struct HelloTypeResult {
  HelloStatus status = HelloStatus::kNone;
  int type = 0;            // kFound: the handshake type (1 ClientHello, 2 ServerHello)
};

// The server name of a ClientHello at the start of `data`. The whole handshake message must be
// in the first record (a ClientHello fragmented over several records is kNone). Any thread.
SniResult tls_client_hello_sni(std::string_view data);
// The first protocol name of a ClientHello's ALPN extension (`name`), the same way.
SniResult tls_client_hello_alpn(std::string_view data);
// The other parts of a ClientHello that req.ssl_* fetches read (HAProxy 3.5's values):
//   kCipherList       the cipher_suites bytes, 2 per suite;
//   kSigAlgs          the signature_algorithms extension's list (without its length);
//   kSupportedGroups  the supported_groups extension's list (without its length);
//   kKeyShareGroups   the group of each key_share entry, 2 bytes each, written to `scratch`;
//   kEcExt            `value` 1 when the supported_groups (elliptic_curves) extension is there;
//   kSessionTicket    `value` 0 without a session_ticket extension, 1 empty, 2 with a ticket.
// An absent list is kNone; kEcExt and kSessionTicket are kFound for any ClientHello.
enum class HelloField : uint8_t {
  kCipherList, kSigAlgs, kSupportedGroups, kKeyShareGroups, kEcExt, kSessionTicket
};
struct HelloFieldResult {
  HelloStatus status = HelloStatus::kNone;
  std::string_view bytes;   // the lists: pointing into the input (or into `scratch`)
  int value = 0;            // kEcExt, kSessionTicket
};
HelloFieldResult tls_client_hello_field(std::string_view data, HelloField field,
                                        std::string* scratch);

// The type of the handshake message at the start of `data`, once that whole message is there.
// SSLv2-style hellos and records other than handshakes are kNone. Any thread.
HelloTypeResult tls_hello_type(std::string_view data);

}  // namespace sluice::sample

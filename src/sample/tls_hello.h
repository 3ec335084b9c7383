#pragma once
// What `req.ssl_sni`, `req.ssl_alpn` and `req.ssl_hello_type` read from the first bytes a client sent: a
// bounds-checked reader of the TLS record and handshake headers and of a ClientHello up to its
// server_name and ALPN extensions (RFC 8446 4.1.2, RFC 6066 3, RFC 7301 3.1). Pure: no allocation, never reads past
// `data`, and tells "not enough bytes yet" apart from "not TLS / no such value", because the
// first makes `tcp-request content` rules wait (within inspect-delay) and the second is final.
#include <cstdint>
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
// The type of the handshake message at the start of `data`, once that whole message is there.
// SSLv2-style hellos and records other than handshakes are kNone. Any thread.
HelloTypeResult tls_hello_type(std::string_view data);

}  // namespace sluice::sample

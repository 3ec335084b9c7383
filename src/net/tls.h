#pragma once
// TLS with OpenSSL 3, on the listening side (`bind ... ssl crt ...`) and towards servers
// (`server ... ssl`, ClientContext below).
//
// A bind line's options become a ServerContext: one OpenSSL context per certificate name
// (holding every certificate of that name, one per key type, so that OpenSSL serves an ECDSA
// or an RSA one by what the client supports), an index of the names (exact, and `*.` wildcards
// one label deep), and the first certificate as the default. The SNI of a client hello picks
// the context; without a match the default serves, unless `strict-sni` refuses the handshake.
//
// A connection is an OpenSSL object on the accepted socket (ssl_st, opaque here). The proxy
// runs its handshake before any session exists (proxy/tls_handshake.h), then the connection's
// RawTransport carries it: recv() decrypts and send() encrypts through the functions below,
// and nothing above the transport knows that bytes were encrypted.
//
// Contexts are shared by every worker (OpenSSL's own locks); a connection belongs to the
// worker that owns its socket.
#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "net/transport.h"

struct ssl_st;
struct ssl_session_st;
struct ssl_ctx_st;

namespace sluice::net::tls {

enum class Verify : uint8_t { kNone, kOptional, kRequired };

class TicketKeys;

struct BindOptions;

// Where a bind line's certificates come from: a `crt` (a PEM file or a directory of them), or
// a line of a crt-list, which may have its own options and SNI filters.
struct CertSource {
  std::string path;
  std::shared_ptr<const BindOptions> options;   // the crt-list line's own; null: the bind line's
  std::vector<std::string> filters;             // names (`*.x` wildcards, `!x` exclusions)
  // The crt-list file (or `crt` directory) it is a line of, and that line's number (0 for a
  // directory's files); empty for a plain `crt` file. `add|del ssl crt-list` edit by them.
  std::string list;
  int line = 0;
};

// What a `bind ... ssl` line asks, the ssl-default-bind-* globals already applied.
struct BindOptions {
  std::vector<CertSource> crts;
  std::vector<std::string> alpn;   // protocol names, in the server's order of preference
  int min_version = 0;             // TLS1_2_VERSION...; 0: TLS 1.2 (HAProxy's default floor)
  int max_version = 0;             // 0: the library's highest
  std::string ciphers;             // TLS <= 1.2 cipher list; empty: the library's
  std::string ciphersuites;        // TLS 1.3 suites; empty: the library's
  std::string curves;              // groups for the key exchange; empty: the library's
  bool no_tickets = false;
  std::shared_ptr<TicketKeys> ticket_keys;   // tls-ticket-keys: tickets sealed with the file's
  bool prefer_client_ciphers = false;   // the client's cipher order wins (default: the server's)
  bool strict_sni = false;
  std::string ca_file;             // client certificates are checked against these
  std::string ca_verify_file;      // and these, whose names the server does not send
  Verify verify = Verify::kNone;
  std::string crl_file;
  int cache_size = 20000;          // tune.ssl.cachesize: sessions kept for resumption by id
  int lifetime_s = 300;            // tune.ssl.lifetime
  int dh_bits = 0;                 // tune.ssl.default-dh-param: the ffdhe group of DHE; 0: no DHE
};

class ServerContext {
 public:
  // Loads the certificates and builds the contexts. Errors name the file and what OpenSSL
  // said ("unable to load certificate from file '...'").
  static base::Result<std::shared_ptr<ServerContext>> make(const BindOptions& o);
  ~ServerContext();
  ServerContext(const ServerContext&) = delete;
  ServerContext& operator=(const ServerContext&) = delete;

  // A new server-side connection on `fd` (the handshake not started); null when OpenSSL
  // cannot allocate one.
  ssl_st* new_conn(int fd) const;
  // Seals tickets with `old`'s keys, so that the sessions it gave out resume here (a context
  // rebuilt for a crt-list change). Without effect when `o.ticket_keys` names a file.
  void keep_ticket_keys(const ServerContext& old);
  // The names the certificates answer for, for `show ssl cert`-like listings and tests.
  std::vector<std::string> names() const;
  // The session cache of its contexts: resumptions that found their session (by id or
  // ticket) and session ids that were not found. Any thread.
  void cache_stats(uint64_t* hits, uint64_t* misses) const;

 private:
  ServerContext() = default;
  static int on_client_hello(ssl_st* s, int* alert, void* arg);
  static int on_alpn(ssl_st* s, const unsigned char** out, unsigned char* outlen,
                     const unsigned char* in, unsigned int inlen, void* arg);
  ssl_ctx_st* context_for(std::string_view name) const;

  ssl_ctx_st* default_ = nullptr;
  std::vector<ssl_ctx_st*> all_;                       // owned
  std::unordered_map<std::string, ssl_ctx_st*> exact_;   // lower-case names
  std::unordered_map<std::string, ssl_ctx_st*> wild_;    // "*.example.com" under "example.com"
  std::unordered_map<ssl_ctx_st*, std::vector<std::string>> excluded_;   // crt-list `!name`s
  bool strict_sni_ = false;
  std::vector<std::unique_ptr<std::string>> alpn_wires_;   // per context: length-prefixed names
  // Each context's options (owned by the BindOptions the make() caller keeps alive: copied
  // below), applied to a connection when the client hello picks that context.
  std::unordered_map<ssl_ctx_st*, const BindOptions*> settings_;
  std::vector<std::shared_ptr<const BindOptions>> kept_;
};

// What a `server ... ssl` line asks (the ssl-default-server-* globals and default-server
// already applied): TLS towards a server, sluice being the client.
struct ClientOptions {
  std::vector<std::string> alpn;   // offered, in order
  int min_version = 0;             // 0: TLS 1.2 (HAProxy's default floor)
  int max_version = 0;             // 0: the library's highest
  std::string ciphers;             // TLS <= 1.2 cipher list; empty: the library's
  std::string ciphersuites;        // TLS 1.3 suites; empty: the library's
  std::string curves;              // key exchange groups; empty: the library's
  std::string sigalgs;             // signature algorithms; empty: the library's
  std::string client_sigalgs;      // those the client certificate may sign with
  std::string ca_file;             // the server's certificate is checked against these
                                   // ("@system-ca": the system's store)
  std::string crl_file;
  std::string crt;                 // a client certificate (PEM: leaf, chain, key); empty: none
  bool verify = true;              // `verify required` (else `none`)
  std::string verifyhost;          // the name the certificate must carry without an SNI
  bool no_tickets = false;         // no session tickets asked
  bool reuse = true;               // resume the last session (no-ssl-reuse: never)
};

// The session a worker keeps for one server, to resume it on the next connection (HAProxy
// keeps the last one per server and thread). Worker-local: no lock. The SNI it was made for
// goes with it: a session resumes only towards the same name.
struct SessionSlot {
  SessionSlot() = default;
  SessionSlot(const SessionSlot&) = delete;
  SessionSlot& operator=(const SessionSlot&) = delete;
  ~SessionSlot();
  void clear();
  ssl_session_st* session = nullptr;
  std::string sni;
};

// Offers `protocols` by ALPN on a client connection (before its handshake), instead of its
// context's.
void offer_alpn(ssl_st* s, const std::vector<std::string>& protocols);

class ClientContext {
 public:
  // Loads the CA, CRL and client certificate files and sets the options; the errors are
  // HAProxy's ("unable to set SSL cipher list to 'x'.").
  static base::Result<std::shared_ptr<ClientContext>> make(const ClientOptions& o);
  ~ClientContext();
  ClientContext(const ClientContext&) = delete;
  ClientContext& operator=(const ClientContext&) = delete;

  // A client connection on `fd` (connected; the handshake not started) that sends `sni`
  // (empty: none), checks the certificate's name when verifying (the SNI, else verifyhost),
  // resumes the session `slot` keeps for that name and keeps the new ones there (`slot` null:
  // no reuse). Null when OpenSSL cannot allocate it.
  ssl_st* new_conn(int fd, std::string_view sni, SessionSlot* slot) const;
  const ClientOptions& options() const { return o_; }

 private:
  ClientContext() = default;
  static int on_new_session(ssl_st* s, ssl_session_st* sess);
  ssl_ctx_st* ctx_ = nullptr;
  ClientOptions o_;
};

// TLS connections (both sides) open now and made since start-up (show info's CurrSslConns and
// CumSslConns): counted by the contexts' new_conn() and free(). Any thread.
uint64_t live_connections();
uint64_t total_connections();
void count_new_connection();   // the contexts' new_conn()

enum class Step : uint8_t {
  kDone,        // the handshake completed
  kWantRead,    // wait for the socket to be readable
  kWantWrite,   // wait for it to be writable
  kClosed,      // the peer closed during the handshake
  kFailed,      // a protocol error (handshake failure), or a socket error (errno set)
};
Step handshake(ssl_st* s);

// The transport's operations (RawTransport calls them when it carries a connection). recv()
// fills `room` as far as the socket allows (it decrypts record after record until OpenSSL
// wants more bytes), so that a short read means the socket is drained, as with a plain one;
// send() and sendv() write until done or the socket is full, so that a short write means it
// is full.
IoResult recv(ssl_st* s, char* dst, std::size_t room);
IoResult send(ssl_st* s, const char* src, std::size_t len);
IoResult sendv(ssl_st* s, const iovec* parts, int n);
// tune.ssl.maxrecord: at most `bytes` go into one TLS write (0: no limit). Start-up.
void set_max_record(int bytes);
// Sends close_notify (without waiting for the peer's).
void shutdown(ssl_st* s);
void free(ssl_st* s);
// The OpenSSL error code that broke the connection (its handshake, or a record later), 0
// when none did (ssl_fc_err, ssl_bc_err), and its reason ("tlsv1 alert unknown ca").
unsigned long last_error(ssl_st* s);
std::string_view error_reason(unsigned long code);
// Bytes are waiting inside OpenSSL (decrypted, or read ahead from the socket).
bool pending(ssl_st* s);

// What the ssl_fc_* fetches report of a connection.
std::string_view protocol(ssl_st* s);     // "TLSv1.3"
std::string_view cipher(ssl_st* s);       // "TLS_AES_256_GCM_SHA384"
std::string_view sni(ssl_st* s);          // empty without one
std::string_view alpn(ssl_st* s);         // empty without one
// The key exchange group ("X25519", "prime256v1"; OpenSSL's short names), empty without one.
std::string_view curve(ssl_st* s);
bool session_reused(ssl_st* s);
// A frontend connection that resumed its session from a ticket (TLS 1.3, or a TLS 1.2 client
// that offered one), not from the session cache by id.
bool resumed_by_ticket(ssl_st* s);
int cipher_bits(ssl_st* s, int* alg_bits);
bool has_peer_cert(ssl_st* s);            // the peer sent a certificate (this handshake)

// A certificate's fields, as the ssl_c_* (`peer`: the other side's) and ssl_f_* (this side's)
// fetches report them. False when there is no such certificate (or field).
enum class CertField : uint8_t {
  kSerial,      // the serial number's bytes
  kNotAfter,    // "YYMMDDhhmmssZ" (ASN.1 UTCTime, as written in the certificate)
  kNotBefore,
  kSigAlg,      // "ecdsa-with-SHA256": the signature's algorithm
  kKeyAlg,      // "rsaEncryption", "id-ecPublicKey": the public key's
  kSha1,        // the SHA-1 digest of the DER form
  kDer,         // the DER form
  kVersion,     // "3" for a v3 certificate
};
bool cert_field(ssl_st* s, bool peer, CertField f, std::string* out);
// The subject's (or with `issuer` the issuer's) distinguished name: "/C=FR/O=x/CN=y"; with
// `entry` (a field name such as CN or OU), that field's value, occurrence `occ` (1 the first,
// -1 the last, 0 the first); with `rfc2253`, the whole name as RFC 2253 writes it
// ("CN=y,O=x,C=FR").
bool cert_dn(ssl_st* s, bool peer, bool issuer, std::string_view entry, int occ, bool rfc2253,
             std::string* out);
long verify_result(ssl_st* s);            // X509_V_OK (0) or the verification error
// The key of this side's certificate as `show ssl cert` names it: "EC256", "RSA2048" ("":
// none).
std::string local_key_alg(ssl_st* s);

// Loads the certificates a `crt` names (a PEM file, or every file of a directory) and checks
// each one's key, as the context will; the number loaded. The errors are HAProxy's ("unable to
// stat SSL certificate from file '...' : No such file or directory.").
base::Result<int> load_certificates(const std::string& path);
// The files a `crt` names: the file, or a directory's certificate files in name order.
base::Result<std::vector<std::string>> certificate_files(const std::string& path);

// "OpenSSL 3.0.19 27 Jan 2026": the library built with, and running with.
std::string built_version();
std::string running_version();
void running_version_numbers(int* major, int* minor, int* patch);
// `ssl-min-ver` / `ssl-max-ver` words (SSLv3, TLSv1.0 ... TLSv1.3) to OpenSSL's numbers; 0
// for an unknown word.
int version_number(std::string_view word);

}  // namespace sluice::net::tls

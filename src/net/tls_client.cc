// ClientContext: TLS towards a server (`server ... ssl`), and the per-worker session kept for
// resumption (net/tls.h).
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <cstring>

#include "net/tls.h"

namespace sluice::net::tls {

namespace {
// ALPN's wire form of `protocols` (each name after its length byte) in `out`; the first name
// that cannot be sent (empty, or over 255 bytes), "" when all can.
std::string alpn_wire(const std::vector<std::string>& protocols, std::string* out) {
  for (const auto& p : protocols) {
    if (p.empty() || p.size() > 255) return p.empty() ? std::string("(empty)") : p;
    out->push_back(static_cast<char>(p.size()));
    *out += p;
  }
  return "";
}
}  // namespace

namespace {

// The SSL ex_data slot that points a client connection at its SessionSlot.
int slot_index() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

}  // namespace

SessionSlot::~SessionSlot() { clear(); }

void SessionSlot::clear() {
  SSL_SESSION_free(session);
  session = nullptr;
  sni.clear();
}

ClientContext::~ClientContext() { SSL_CTX_free(ctx_); }

base::Result<std::shared_ptr<ClientContext>> ClientContext::make(const ClientOptions& o) {
  std::shared_ptr<ClientContext> cc(new ClientContext);
  cc->o_ = o;
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (!ctx) {
    ERR_clear_error();
    return base::Error::text("cannot create an SSL context.");
  }
  cc->ctx_ = ctx;
  SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_ENABLE_PARTIAL_WRITE |
                            SSL_MODE_RELEASE_BUFFERS);
  uint64_t opts = SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_COMPRESSION;
  if (o.no_tickets) opts |= SSL_OP_NO_TICKET;
  SSL_CTX_set_options(ctx, opts);
  SSL_CTX_set_min_proto_version(ctx, o.min_version ? o.min_version : TLS1_2_VERSION);
  if (o.max_version) SSL_CTX_set_max_proto_version(ctx, o.max_version);
  if (!o.ciphers.empty() && SSL_CTX_set_cipher_list(ctx, o.ciphers.c_str()) != 1) {
    ERR_clear_error();
    return base::Error::text("unable to set SSL cipher list to '" + o.ciphers + "'.");
  }
  if (!o.ciphersuites.empty() && SSL_CTX_set_ciphersuites(ctx, o.ciphersuites.c_str()) != 1) {
    ERR_clear_error();
    return base::Error::text("unable to set TLS 1.3 cipher suites to '" + o.ciphersuites + "'.");
  }
  if (!o.curves.empty() && SSL_CTX_set1_groups_list(ctx, o.curves.c_str()) != 1) {
    ERR_clear_error();
    return base::Error::text("unable to set SSL curves list to '" + o.curves + "'.");
  }
  if (!o.sigalgs.empty() && SSL_CTX_set1_sigalgs_list(ctx, o.sigalgs.c_str()) != 1) {
    ERR_clear_error();
    return base::Error::text("unable to set SSL Signature Algorithm list to '" + o.sigalgs + "'.");
  }
  if (!o.client_sigalgs.empty() &&
      SSL_CTX_set1_client_sigalgs_list(ctx, o.client_sigalgs.c_str()) != 1) {
    ERR_clear_error();
    return base::Error::text("unable to set SSL Signature Algorithm list to '" +
                             o.client_sigalgs + "'.");
  }
  if (!o.alpn.empty()) {
    std::string wire;
    if (std::string bad = alpn_wire(o.alpn, &wire); !bad.empty())
      return base::Error::text("invalid ALPN protocol name '" + bad + "'.");
    // 0 is success here.
    if (SSL_CTX_set_alpn_protos(ctx, reinterpret_cast<const unsigned char*>(wire.data()),
                                static_cast<unsigned int>(wire.size())) != 0) {
      ERR_clear_error();
      return base::Error::text("cannot set the ALPN protocols.");
    }
  }
  if (!o.ca_file.empty()) {
    const bool ok = o.ca_file == "@system-ca"
                        ? SSL_CTX_set_default_verify_paths(ctx) == 1
                        : SSL_CTX_load_verify_locations(ctx, o.ca_file.c_str(), nullptr) == 1;
    if (!ok) {
      ERR_clear_error();
      return base::Error::text("unable to load CA file '" + o.ca_file + "'.");
    }
  }
  if (!o.crl_file.empty()) {
    X509_STORE* store = SSL_CTX_get_cert_store(ctx);
    if (X509_STORE_load_file(store, o.crl_file.c_str()) != 1) {
      ERR_clear_error();
      return base::Error::text("unable to configure CRL file '" + o.crl_file + "'.");
    }
    X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL);
  }
  if (!o.crt.empty()) {
    // The checks and their messages are the bind side's (a file that is missing, has no
    // certificate or a key that does not match it).
    auto loaded = load_certificates(o.crt);
    if (!loaded.ok()) return loaded.error();
    if (SSL_CTX_use_certificate_chain_file(ctx, o.crt.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, o.crt.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx) != 1) {
      ERR_clear_error();
      return base::Error::text("unable to load SSL certificate from PEM file '" + o.crt + "'.");
    }
  }
  SSL_CTX_set_verify(ctx, o.verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nullptr);
  if (o.reuse) {
    // Sessions go to the connection's slot (no internal store: the slot is the cache).
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(ctx, &ClientContext::on_new_session);
  } else {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  }
  ERR_clear_error();
  return cc;
}

int ClientContext::on_new_session(SSL* s, SSL_SESSION* sess) {
  auto* slot = static_cast<SessionSlot*>(SSL_get_ex_data(s, slot_index()));
  if (!slot) return 0;   // not kept: OpenSSL frees it
  SSL_SESSION_free(slot->session);
  slot->session = sess;   // the reference OpenSSL hands over (returning 1)
  const char* name = SSL_get_servername(s, TLSEXT_NAMETYPE_host_name);
  slot->sni = name ? name : "";
  return 1;
}

SSL* ClientContext::new_conn(int fd, std::string_view sni, SessionSlot* slot) const {
  SSL* s = SSL_new(ctx_);
  if (!s) {
    ERR_clear_error();
    return nullptr;
  }
  bool ok = SSL_set_fd(s, fd) == 1;
  std::string name(sni);
  if (ok && !name.empty()) ok = SSL_set_tlsext_host_name(s, name.c_str()) == 1;
  // The name sent wins over verifyhost, as in HAProxy.
  const std::string& check = name.empty() ? o_.verifyhost : name;
  if (ok && o_.verify && !check.empty()) {
    SSL_set_hostflags(s, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    ok = SSL_set1_host(s, check.c_str()) == 1;
  }
  if (ok && slot && o_.reuse) {
    ok = SSL_set_ex_data(s, slot_index(), slot) == 1;
    // A session resumes towards the name it was made for only.
    if (ok && slot->session && slot->sni == name) SSL_set_session(s, slot->session);
  }
  if (!ok) {
    SSL_free(s);
    ERR_clear_error();
    return nullptr;
  }
  SSL_set_connect_state(s);
  count_new_connection();
  return s;
}

void offer_alpn(SSL* s, const std::vector<std::string>& protocols) {
  std::string wire;
  if (!alpn_wire(protocols, &wire).empty()) return;   // the configuration checked the names
  SSL_set_alpn_protos(s, reinterpret_cast<const unsigned char*>(wire.data()),
                      static_cast<unsigned int>(wire.size()));
}

}  // namespace sluice::net::tls

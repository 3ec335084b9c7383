// ServerContext: the certificates of a `bind ... ssl` line and the OpenSSL contexts that serve
// them (net/tls.h).
#include <dirent.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "net/tls.h"

namespace sluice::net::tls {

namespace {

std::string openssl_error() {
  unsigned long e = ERR_get_error();
  std::string out;
  while (e) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
    e = ERR_get_error();
  }
  return out.empty() ? "unknown error" : out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A certificate file: the leaf, its chain and its key.
struct CertKey {
  std::string path;
  X509* leaf = nullptr;
  STACK_OF(X509)* chain = nullptr;
  EVP_PKEY* key = nullptr;
  std::vector<std::string> names;   // DNS subjectAltNames, else the subject's CN; lower case
  ~CertKey() {
    X509_free(leaf);
    sk_X509_pop_free(chain, X509_free);
    EVP_PKEY_free(key);
  }
};

base::Result<std::unique_ptr<CertKey>> load_pem(const std::string& path) {
  auto ck = std::make_unique<CertKey>();
  ck->path = path;
  BIO* in = BIO_new_file(path.c_str(), "r");
  if (!in) {
    ERR_clear_error();
    return base::Error::text("unable to load certificate from file '" + path + "': " +
                             std::strerror(errno) + ".");
  }
  ck->leaf = PEM_read_bio_X509_AUX(in, nullptr, nullptr, nullptr);
  if (!ck->leaf) {
    BIO_free(in);
    const char* why = ERR_reason_error_string(ERR_peek_last_error());
    ERR_clear_error();
    return base::Error::text("unable to load certificate from file '" + path + "'" +
                             (why ? std::string(": ") + why : std::string()) + ".");
  }
  ck->chain = sk_X509_new_null();
  while (X509* x = PEM_read_bio_X509(in, nullptr, nullptr, nullptr)) sk_X509_push(ck->chain, x);
  ERR_clear_error();   // the end of the file ends that loop with an error
  if (BIO_reset(in) == 0) ck->key = PEM_read_bio_PrivateKey(in, nullptr, nullptr, nullptr);
  BIO_free(in);
  if (!ck->key) {
    ERR_clear_error();
    return base::Error::text("unable to load SSL private key from PEM file '" + path + "'.");
  }
  if (X509_check_private_key(ck->leaf, ck->key) != 1) {
    ERR_clear_error();
    return base::Error::text("inconsistencies between private key and certificate loaded from PEM "
                             "file '" + path + "'.");
  }
  if (auto* sans = static_cast<GENERAL_NAMES*>(
          X509_get_ext_d2i(ck->leaf, NID_subject_alt_name, nullptr, nullptr))) {
    for (int i = 0; i < sk_GENERAL_NAME_num(sans); ++i) {
      const GENERAL_NAME* g = sk_GENERAL_NAME_value(sans, i);
      if (g->type != GEN_DNS) continue;
      const unsigned char* d = ASN1_STRING_get0_data(g->d.dNSName);
      ck->names.push_back(lower(std::string_view(reinterpret_cast<const char*>(d),
                                                 static_cast<std::size_t>(ASN1_STRING_length(g->d.dNSName)))));
    }
    GENERAL_NAMES_free(sans);
  }
  if (ck->names.empty()) {
    char cn[256];
    if (X509_NAME_get_text_by_NID(X509_get_subject_name(ck->leaf), NID_commonName, cn, sizeof cn) > 0)
      ck->names.push_back(lower(cn));
  }
  return ck;
}

// The files a `crt` names: the file, or the files of a directory in name order (those ending
// in .key, .ocsp, .issuer, .sctl, .ckch and dot files skipped, as HAProxy skips them).
base::Result<std::vector<std::string>> crt_files(const std::string& path) {
  struct stat st{};
  if (stat(path.c_str(), &st) != 0)
    return base::Error::text("unable to stat SSL certificate from file '" + path + "' : " +
                             std::strerror(errno) + ".");
  if (!S_ISDIR(st.st_mode)) return std::vector<std::string>{path};
  std::vector<std::string> out;
  DIR* d = opendir(path.c_str());
  if (!d) return base::Error::text("unable to scan directory '" + path + "'.");
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n.empty() || n[0] == '.') continue;
    bool skip = false;
    for (std::string_view ext : {".key", ".ocsp", ".issuer", ".sctl", ".ckch"})
      if (n.size() > ext.size() && n.ends_with(ext)) skip = true;
    if (skip) continue;
    std::string full = path + (path.ends_with('/') ? "" : "/") + n;
    struct stat fst{};
    if (stat(full.c_str(), &fst) == 0 && S_ISREG(fst.st_mode)) out.push_back(std::move(full));
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  if (out.empty()) return base::Error::text("no certificate in directory '" + path + "'.");
  return out;
}

}  // namespace

base::Result<int> load_certificates(const std::string& path) {
  auto files = crt_files(path);
  if (!files.ok()) return files.error();
  for (const auto& f : *files) {
    auto ck = load_pem(f);
    if (!ck.ok()) return ck.error();
  }
  return static_cast<int>(files->size());
}

namespace {

bool same_names(const CertKey& a, const CertKey& b) {
  auto x = a.names, y = b.names;
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  return x == y;
}

}  // namespace

ServerContext::~ServerContext() {
  for (SSL_CTX* c : all_) SSL_CTX_free(c);
}

base::Result<std::shared_ptr<ServerContext>> ServerContext::make(const BindOptions& o) {
  if (o.crts.empty()) return base::Error::text("'ssl' needs at least one 'crt'.");
  std::vector<std::unique_ptr<CertKey>> certs;
  for (const auto& c : o.crts) {
    auto files = crt_files(c);
    if (!files.ok()) return files.error();
    for (const auto& f : *files) {
      auto ck = load_pem(f);
      if (!ck.ok()) return ck.error();
      certs.push_back(std::move(ck.value()));
    }
  }
  std::shared_ptr<ServerContext> sc(new ServerContext);
  sc->strict_sni_ = o.strict_sni;
  for (const auto& p : o.alpn) {
    if (p.empty() || p.size() > 255) return base::Error::text("invalid ALPN protocol name '" + p + "'.");
    sc->alpn_wire_.push_back(static_cast<char>(p.size()));
    sc->alpn_wire_ += p;
  }
  // One context per set of names: certificates with the same names (an RSA and an ECDSA one)
  // share it, and OpenSSL serves the one the client's algorithms allow.
  std::vector<std::pair<const CertKey*, SSL_CTX*>> groups;
  for (const auto& ck : certs) {
    SSL_CTX* ctx = nullptr;
    for (auto& [first, c] : groups)
      if (same_names(*first, *ck)) ctx = c;
    const bool fresh = ctx == nullptr;
    if (fresh) {
      ctx = SSL_CTX_new(TLS_server_method());
      if (!ctx) return base::Error::text("cannot create an SSL context: " + openssl_error());
      sc->all_.push_back(ctx);
      groups.emplace_back(ck.get(), ctx);
      SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_ENABLE_PARTIAL_WRITE |
                                SSL_MODE_RELEASE_BUFFERS);
      uint64_t opts = SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_COMPRESSION;
      if (!o.prefer_client_ciphers) opts |= SSL_OP_CIPHER_SERVER_PREFERENCE;
      if (o.no_tickets) opts |= SSL_OP_NO_TICKET;
      SSL_CTX_set_options(ctx, opts);
      SSL_CTX_set_min_proto_version(ctx, o.min_version ? o.min_version : TLS1_2_VERSION);
      if (o.max_version) SSL_CTX_set_max_proto_version(ctx, o.max_version);
      if (!o.ciphers.empty() && SSL_CTX_set_cipher_list(ctx, o.ciphers.c_str()) != 1)
        return base::Error::text("unable to set SSL cipher list to '" + o.ciphers + "'.");
      if (!o.ciphersuites.empty() && SSL_CTX_set_ciphersuites(ctx, o.ciphersuites.c_str()) != 1)
        return base::Error::text("unable to set TLS 1.3 cipher suites to '" + o.ciphersuites + "'.");
      if (!o.curves.empty() && SSL_CTX_set1_groups_list(ctx, o.curves.c_str()) != 1)
        return base::Error::text("unable to set SSL curves list to '" + o.curves + "'.");
      SSL_CTX_set_dh_auto(ctx, 1);
      // Resumption by session id across the bind line's contexts and every worker.
      static const unsigned char kSid[] = "sluice";
      SSL_CTX_set_session_id_context(ctx, kSid, sizeof kSid - 1);
      SSL_CTX_set_session_cache_mode(ctx, o.cache_size > 0 ? SSL_SESS_CACHE_SERVER : SSL_SESS_CACHE_OFF);
      if (o.cache_size > 0) SSL_CTX_sess_set_cache_size(ctx, o.cache_size);
      SSL_CTX_set_timeout(ctx, o.lifetime_s);
      SSL_CTX_set_tlsext_servername_callback(ctx, &ServerContext::on_servername);
      SSL_CTX_set_tlsext_servername_arg(ctx, sc.get());
      if (!sc->alpn_wire_.empty()) SSL_CTX_set_alpn_select_cb(ctx, &ServerContext::on_alpn, sc.get());
      if (!o.ca_file.empty()) {
        if (SSL_CTX_load_verify_locations(ctx, o.ca_file.c_str(), nullptr) != 1)
          return base::Error::text("unable to load CA file '" + o.ca_file + "'.");
        if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(o.ca_file.c_str()))
          SSL_CTX_set_client_CA_list(ctx, names);
      }
      if (o.verify != Verify::kNone) {
        // optional: a client without a certificate goes on; one whose certificate does not
        // verify is refused all the same, as in HAProxy.
        int mode = SSL_VERIFY_PEER;
        if (o.verify == Verify::kRequired) mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
        SSL_CTX_set_verify(ctx, mode, nullptr);
      }
      if (!o.crl_file.empty()) {
        X509_STORE* store = SSL_CTX_get_cert_store(ctx);
        if (X509_STORE_load_file(store, o.crl_file.c_str()) != 1)
          return base::Error::text("unable to configure CRL file '" + o.crl_file + "'.");
        X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL);
      }
    }
    if (SSL_CTX_use_certificate(ctx, ck->leaf) != 1 || SSL_CTX_use_PrivateKey(ctx, ck->key) != 1)
      return base::Error::text("unable to use the certificate of '" + ck->path + "': " + openssl_error());
    for (int i = 0; i < sk_X509_num(ck->chain); ++i)
      SSL_CTX_add1_chain_cert(ctx, sk_X509_value(ck->chain, i));
    if (!sc->default_) sc->default_ = ctx;
    for (const auto& n : ck->names) {
      if (n.starts_with("*.")) sc->wild_.emplace(n.substr(2), ctx);
      else sc->exact_.emplace(n, ctx);
    }
  }
  return sc;
}

SSL_CTX* ServerContext::context_for(std::string_view name) const {
  std::string n = lower(name);
  if (auto it = exact_.find(n); it != exact_.end()) return it->second;
  if (auto dot = n.find('.'); dot != std::string::npos) {
    if (auto it = wild_.find(n.substr(dot + 1)); it != wild_.end()) return it->second;
  }
  return nullptr;
}

int ServerContext::on_servername(SSL* s, int* alert, void* arg) {
  const auto* sc = static_cast<const ServerContext*>(arg);
  const char* name = SSL_get_servername(s, TLSEXT_NAMETYPE_host_name);
  if (!name || !*name) {
    if (sc->strict_sni_) {
      *alert = SSL_AD_UNRECOGNIZED_NAME;
      return SSL_TLSEXT_ERR_ALERT_FATAL;
    }
    return SSL_TLSEXT_ERR_OK;
  }
  SSL_CTX* ctx = sc->context_for(name);
  if (!ctx) {
    if (sc->strict_sni_) {
      *alert = SSL_AD_UNRECOGNIZED_NAME;
      return SSL_TLSEXT_ERR_ALERT_FATAL;
    }
    return SSL_TLSEXT_ERR_OK;   // the default certificate
  }
  if (ctx != SSL_get_SSL_CTX(s)) SSL_set_SSL_CTX(s, ctx);
  return SSL_TLSEXT_ERR_OK;
}

int ServerContext::on_alpn(SSL*, const unsigned char** out, unsigned char* outlen,
                           const unsigned char* in, unsigned int inlen, void* arg) {
  const auto* sc = static_cast<const ServerContext*>(arg);
  unsigned char* sel = nullptr;
  unsigned char sel_len = 0;
  // The server's preference, as HAProxy picks.
  if (SSL_select_next_proto(&sel, &sel_len,
                            reinterpret_cast<const unsigned char*>(sc->alpn_wire_.data()),
                            static_cast<unsigned int>(sc->alpn_wire_.size()), in,
                            inlen) != OPENSSL_NPN_NEGOTIATED)
    return SSL_TLSEXT_ERR_NOACK;
  *out = sel;
  *outlen = sel_len;
  return SSL_TLSEXT_ERR_OK;
}

SSL* ServerContext::new_conn(int fd) const {
  SSL* s = SSL_new(default_);
  if (!s) {
    ERR_clear_error();
    return nullptr;
  }
  if (SSL_set_fd(s, fd) != 1) {
    SSL_free(s);
    ERR_clear_error();
    return nullptr;
  }
  SSL_set_accept_state(s);
  return s;
}

std::vector<std::string> ServerContext::names() const {
  std::vector<std::string> out;
  for (const auto& [n, _] : exact_) out.push_back(n);
  for (const auto& [n, _] : wild_) out.push_back("*." + n);
  std::sort(out.begin(), out.end());
  return out;
}

int version_number(std::string_view w) {
  if (w == "SSLv3") return SSL3_VERSION;
  if (w == "TLSv1.0") return TLS1_VERSION;
  if (w == "TLSv1.1") return TLS1_1_VERSION;
  if (w == "TLSv1.2") return TLS1_2_VERSION;
  if (w == "TLSv1.3") return TLS1_3_VERSION;
  return 0;
}

std::string built_version() { return OPENSSL_VERSION_TEXT; }
std::string running_version() { return OpenSSL_version(OPENSSL_VERSION); }
void running_version_numbers(int* major, int* minor, int* patch) {
  *major = static_cast<int>(OPENSSL_version_major());
  *minor = static_cast<int>(OPENSSL_version_minor());
  *patch = static_cast<int>(OPENSSL_version_patch());
}

}  // namespace sluice::net::tls

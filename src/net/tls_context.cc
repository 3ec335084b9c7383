// ServerContext: the certificates of a `bind ... ssl` line and the OpenSSL contexts that serve
// them (net/tls.h).
#include <dirent.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "net/cert_store.h"
#include "net/ticket_keys.h"
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

// DH parameters for `bits`: as HAProxy 3.5 picks among its built-in sizes (measured: 3072
// gives 2048, 8192 gives 4096), the RFC 7919 group of 4096 bits from 4096 up, else 2048; null
// when OpenSSL cannot make them.
EVP_PKEY* ffdhe_params(int bits) {
  const char* group = bits >= 4096 ? "ffdhe4096" : "ffdhe2048";
  EVP_PKEY_CTX* pc = EVP_PKEY_CTX_new_from_name(nullptr, "DH", nullptr);
  EVP_PKEY* out = nullptr;
  if (pc && EVP_PKEY_paramgen_init(pc) == 1) {
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("group", const_cast<char*>(group), 0),
                           OSSL_PARAM_construct_end()};
    if (EVP_PKEY_CTX_set_params(pc, params) != 1 || EVP_PKEY_paramgen(pc, &out) != 1) out = nullptr;
  }
  EVP_PKEY_CTX_free(pc);
  ERR_clear_error();
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

// A certificate file's leaf, chain and key: `text` when given, else what was committed for it
// on the CLI (cert_store.h), else the file. Without `need_key`, a text may have no key.
base::Result<std::unique_ptr<CertKey>> load_pem(const std::string& path,
                                                const std::string* text = nullptr,
                                                bool need_key = true) {
  auto ck = std::make_unique<CertKey>();
  ck->path = path;
  std::string committed;
  if (!text && CertStore::global().committed(path, &committed)) text = &committed;
  BIO* in = text ? BIO_new_mem_buf(text->data(), static_cast<int>(text->size()))
                 : BIO_new_file(path.c_str(), "r");
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
  // The key, from the start again (a fresh reader: a memory buffer's reset does not rewind).
  BIO_free(in);
  in = text ? BIO_new_mem_buf(text->data(), static_cast<int>(text->size()))
            : BIO_new_file(path.c_str(), "r");
  if (in) ck->key = PEM_read_bio_PrivateKey(in, nullptr, nullptr, nullptr);
  BIO_free(in);
  if (!ck->key) {
    ERR_clear_error();
    if (!need_key) return ck;
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

base::Result<std::vector<std::string>> certificate_files(const std::string& path) {
  return crt_files(path);
}

std::string check_pem(const std::string& path, const std::string& pem, bool need_key) {
  auto ck = load_pem(path, &pem, need_key);
  return ck.ok() ? std::string() : ck.error().message;
}

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

// The names a certificate answers for: the positive filters of its crt-list line, else its
// own names; minus the `!` exclusions. Sorted, lower case.
std::vector<std::string> served_names(const CertKey& ck, const std::vector<std::string>& filters,
                                      std::vector<std::string>* excluded) {
  std::vector<std::string> pos;
  for (const auto& f : filters) {
    if (f[0] == '!') excluded->push_back(lower(std::string_view(f).substr(1)));
    else pos.push_back(lower(f));
  }
  std::vector<std::string> out = pos.empty() ? ck.names : pos;
  std::erase_if(out, [&](const std::string& n) {
    return std::find(excluded->begin(), excluded->end(), n) != excluded->end();
  });
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

ServerContext::~ServerContext() {
  for (SSL_CTX* c : all_) SSL_CTX_free(c);
}

base::Result<std::shared_ptr<ServerContext>> ServerContext::make(const BindOptions& o) {
  if (o.crts.empty()) return base::Error::text("'ssl' needs at least one 'crt'.");
  struct Loaded {
    std::unique_ptr<CertKey> ck;
    const BindOptions* options;
    std::vector<std::string> names, excluded;
  };
  std::vector<Loaded> certs;
  std::shared_ptr<ServerContext> sc(new ServerContext);
  // The options each context keeps for the client hello callback: copies, owned by `sc`.
  auto base = std::make_shared<BindOptions>(o);
  base->crts.clear();
  sc->kept_.push_back(base);
  for (const auto& c : o.crts) {
    if (c.options) sc->kept_.push_back(c.options);
    auto files = crt_files(c.path);
    if (!files.ok()) return files.error();
    for (const auto& f : *files) {
      auto ck = load_pem(f);
      if (!ck.ok()) return ck.error();
      Loaded l{std::move(ck.value()), c.options ? c.options.get() : base.get(), {}, {}};
      l.names = served_names(*l.ck, c.filters, &l.excluded);
      certs.push_back(std::move(l));
    }
  }
  sc->strict_sni_ = o.strict_sni;
  // One context per set of names and options: certificates with the same names (an RSA and an
  // ECDSA one) share it, and OpenSSL serves the one the client's algorithms allow.
  struct Group {
    const BindOptions* options;
    const std::vector<std::string>* names;
    SSL_CTX* ctx;
  };
  std::vector<Group> groups;
  for (const auto& lc : certs) {
    const CertKey* ck = lc.ck.get();
    const BindOptions& so = *lc.options;
    SSL_CTX* ctx = nullptr;
    for (const auto& g : groups)
      if (g.options == lc.options && *g.names == lc.names) ctx = g.ctx;
    const bool fresh = ctx == nullptr;
    if (fresh) {
      ctx = SSL_CTX_new(TLS_server_method());
      if (!ctx) return base::Error::text("cannot create an SSL context: " + openssl_error());
      sc->all_.push_back(ctx);
      groups.push_back({lc.options, &lc.names, ctx});
      SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_ENABLE_PARTIAL_WRITE |
                                SSL_MODE_RELEASE_BUFFERS);
      // One recv() takes what the socket holds instead of a record header, then its body: the
      // transport reads until OpenSSL wants more anyway (tls::recv()), so a drained socket
      // costs one call fewer per record.
      SSL_CTX_set_read_ahead(ctx, 1);
      uint64_t opts = SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_COMPRESSION;
      if (!so.prefer_client_ciphers) opts |= SSL_OP_CIPHER_SERVER_PREFERENCE;
      if (so.no_tickets) opts |= SSL_OP_NO_TICKET;
      SSL_CTX_set_options(ctx, opts);
      if (so.ticket_keys) so.ticket_keys->install(ctx);
      SSL_CTX_set_min_proto_version(ctx, so.min_version ? so.min_version : TLS1_2_VERSION);
      if (so.max_version) SSL_CTX_set_max_proto_version(ctx, so.max_version);
      if (!so.ciphers.empty() && SSL_CTX_set_cipher_list(ctx, so.ciphers.c_str()) != 1)
        return base::Error::text("unable to set SSL cipher list to '" + so.ciphers + "'.");
      if (!so.ciphersuites.empty() && SSL_CTX_set_ciphersuites(ctx, so.ciphersuites.c_str()) != 1)
        return base::Error::text("unable to set TLS 1.3 cipher suites to '" + so.ciphersuites + "'.");
      if (!so.curves.empty() && SSL_CTX_set1_groups_list(ctx, so.curves.c_str()) != 1)
        return base::Error::text("unable to set SSL curves list to '" + so.curves + "'.");
      // DHE (TLS 1.2 DHE-* ciphers) only with tune.ssl.default-dh-param, as in HAProxy 3.5: its
      // size's RFC 7919 group, set below per RSA certificate (not above the key's size).
      // Resumption by session id across the bind line's contexts and every worker.
      static const unsigned char kSid[] = "sluice";
      SSL_CTX_set_session_id_context(ctx, kSid, sizeof kSid - 1);
      SSL_CTX_set_session_cache_mode(ctx, so.cache_size > 0 ? SSL_SESS_CACHE_SERVER : SSL_SESS_CACHE_OFF);
      if (so.cache_size > 0) SSL_CTX_sess_set_cache_size(ctx, so.cache_size);
      SSL_CTX_set_timeout(ctx, so.lifetime_s);
      // The certificate is chosen from the client hello, before the version and the cipher are:
      // a crt-list line's own versions and ciphers then apply (a server name callback would
      // come after them).
      SSL_CTX_set_client_hello_cb(ctx, &ServerContext::on_client_hello, sc.get());
      sc->settings_.emplace(ctx, &so);
      if (!so.alpn.empty()) {
        std::string wire;
        for (const auto& p : so.alpn) {
          if (p.empty() || p.size() > 255) return base::Error::text("invalid ALPN protocol name '" + p + "'.");
          wire.push_back(static_cast<char>(p.size()));
          wire += p;
        }
        sc->alpn_wires_.push_back(std::make_unique<std::string>(std::move(wire)));
        SSL_CTX_set_alpn_select_cb(ctx, &ServerContext::on_alpn, sc->alpn_wires_.back().get());
      }
      if (!so.ca_file.empty()) {
        if (SSL_CTX_load_verify_locations(ctx, so.ca_file.c_str(), nullptr) != 1)
          return base::Error::text("unable to load CA file '" + so.ca_file + "'.");
        if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(so.ca_file.c_str()))
          SSL_CTX_set_client_CA_list(ctx, names);
      }
      // CAs that verify without being named in the certificate request (roots, typically).
      if (!so.ca_verify_file.empty() &&
          X509_STORE_load_file(SSL_CTX_get_cert_store(ctx), so.ca_verify_file.c_str()) != 1)
        return base::Error::text("unable to load CA file '" + so.ca_verify_file + "'.");
      if (so.verify != Verify::kNone) {
        // optional: a client without a certificate goes on; one whose certificate does not
        // verify is refused all the same, as in HAProxy.
        int mode = SSL_VERIFY_PEER;
        if (so.verify == Verify::kRequired) mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
        SSL_CTX_set_verify(ctx, mode, nullptr);
      }
      if (!so.crl_file.empty()) {
        X509_STORE* store = SSL_CTX_get_cert_store(ctx);
        if (X509_STORE_load_file(store, so.crl_file.c_str()) != 1)
          return base::Error::text("unable to configure CRL file '" + so.crl_file + "'.");
        X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL);
      }
    }
    if (lc.options->dh_bits > 0 && EVP_PKEY_get_base_id(ck->key) == EVP_PKEY_RSA) {
      // As HAProxy sizes it: tune.ssl.default-dh-param, but not above the RSA key's size.
      EVP_PKEY* dh = ffdhe_params(std::min(lc.options->dh_bits, EVP_PKEY_get_bits(ck->key)));
      if (dh && SSL_CTX_set0_tmp_dh_pkey(ctx, dh) != 1) EVP_PKEY_free(dh);
    }
    if (SSL_CTX_use_certificate(ctx, ck->leaf) != 1 || SSL_CTX_use_PrivateKey(ctx, ck->key) != 1)
      return base::Error::text("unable to use the certificate of '" + ck->path + "': " + openssl_error());
    for (int i = 0; i < sk_X509_num(ck->chain); ++i)
      SSL_CTX_add1_chain_cert(ctx, sk_X509_value(ck->chain, i));
    if (!sc->default_) sc->default_ = ctx;
    for (const auto& n : lc.excluded) sc->excluded_[ctx].push_back(n);
    for (const auto& n : lc.names) {
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
    if (auto it = wild_.find(n.substr(dot + 1)); it != wild_.end()) {
      // A `!name` of that certificate's crt-list line excludes the name from its wildcard.
      if (auto ex = excluded_.find(it->second); ex != excluded_.end() &&
          std::find(ex->second.begin(), ex->second.end(), n) != ex->second.end())
        return nullptr;
      return it->second;
    }
  }
  return nullptr;
}

namespace {

// The host_name of a client hello's server_name extension; empty without one (or a bad one).
std::string hello_server_name(SSL* s) {
  const unsigned char* p = nullptr;
  std::size_t len = 0;
  if (SSL_client_hello_get0_ext(s, TLSEXT_TYPE_server_name, &p, &len) != 1 || len < 2) return {};
  std::size_t list = (std::size_t{p[0]} << 8) | p[1];
  if (list + 2 > len) return {};
  std::size_t i = 2;
  while (i + 3 <= 2 + list) {
    const unsigned type = p[i];
    const std::size_t n = (std::size_t{p[i + 1]} << 8) | p[i + 2];
    i += 3;
    if (i + n > 2 + list) return {};
    if (type == TLSEXT_NAMETYPE_host_name) return std::string(reinterpret_cast<const char*>(p + i), n);
    i += n;
  }
  return {};
}

}  // namespace

namespace {

// The SSL ex_data slot marking a client hello that offered a session ticket.
int ticket_offered_index() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

}  // namespace

bool resumed_by_ticket(SSL* s) {
  return SSL_session_reused(s) == 1 &&
         (SSL_version(s) >= TLS1_3_VERSION || SSL_get_ex_data(s, ticket_offered_index()));
}

int ServerContext::on_client_hello(SSL* s, int* alert, void* arg) {
  const auto* sc = static_cast<const ServerContext*>(arg);
  // A TLS 1.2 resumption by ticket does not look the session up in the cache: known here.
  const unsigned char* ticket = nullptr;
  std::size_t ticket_len = 0;
  if (SSL_client_hello_get0_ext(s, TLSEXT_TYPE_session_ticket, &ticket, &ticket_len) == 1 &&
      ticket_len > 0)
    SSL_set_ex_data(s, ticket_offered_index(), s);
  const std::string name = hello_server_name(s);
  SSL_CTX* ctx = name.empty() ? nullptr : sc->context_for(name);
  if (!ctx) {
    if (sc->strict_sni_) {
      *alert = SSL_AD_UNRECOGNIZED_NAME;
      return SSL_CLIENT_HELLO_ERROR;
    }
    ctx = sc->default_;
  }
  // The connection was made from the default context: it has its settings already.
  if (ctx == SSL_get_SSL_CTX(s)) return SSL_CLIENT_HELLO_SUCCESS;
  SSL_set_SSL_CTX(s, ctx);
  // What SSL_set_SSL_CTX() leaves as the first context had it: the chosen one's versions,
  // ciphers, groups, options and client certificate checks.
  auto it = sc->settings_.find(ctx);
  if (it == sc->settings_.end()) return SSL_CLIENT_HELLO_SUCCESS;
  const BindOptions& o = *it->second;
  SSL_set_min_proto_version(s, SSL_CTX_get_min_proto_version(ctx));
  SSL_set_max_proto_version(s, SSL_CTX_get_max_proto_version(ctx));
  SSL_clear_options(s, SSL_get_options(s));
  SSL_set_options(s, SSL_CTX_get_options(ctx));
  if (!o.ciphers.empty()) SSL_set_cipher_list(s, o.ciphers.c_str());
  if (!o.ciphersuites.empty()) SSL_set_ciphersuites(s, o.ciphersuites.c_str());
  if (!o.curves.empty()) SSL_set1_groups_list(s, o.curves.c_str());
  SSL_set_verify(s, SSL_CTX_get_verify_mode(ctx), nullptr);
  if (STACK_OF(X509_NAME)* cas = SSL_CTX_get_client_CA_list(ctx))
    SSL_set_client_CA_list(s, SSL_dup_CA_list(cas));
  ERR_clear_error();
  return SSL_CLIENT_HELLO_SUCCESS;
}

int ServerContext::on_alpn(SSL*, const unsigned char** out, unsigned char* outlen,
                           const unsigned char* in, unsigned int inlen, void* arg) {
  const auto* wire = static_cast<const std::string*>(arg);   // this context's protocols
  unsigned char* sel = nullptr;
  unsigned char sel_len = 0;
  // The server's preference, as HAProxy picks.
  if (SSL_select_next_proto(&sel, &sel_len, reinterpret_cast<const unsigned char*>(wire->data()),
                            static_cast<unsigned int>(wire->size()), in,
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
  count_new_connection();
  return s;
}

void ServerContext::keep_ticket_keys(const ServerContext& old) {
  if (kept_.empty() || kept_.front()->ticket_keys || !old.default_) return;
  // A ticket is sealed and opened by the context the connection began with (the default one);
  // OpenSSL's own keys are 80 bytes: name, HMAC secret, AES key.
  unsigned char keys[80];
  if (SSL_CTX_get_tlsext_ticket_keys(old.default_, keys, sizeof keys) != 1) {
    ERR_clear_error();
    return;
  }
  for (SSL_CTX* c : all_) SSL_CTX_set_tlsext_ticket_keys(c, keys, sizeof keys);
  OPENSSL_cleanse(keys, sizeof keys);
}

void ServerContext::cache_stats(uint64_t* hits, uint64_t* misses) const {
  for (SSL_CTX* c : all_) {
    *hits += static_cast<uint64_t>(SSL_CTX_sess_hits(c));
    *misses += static_cast<uint64_t>(SSL_CTX_sess_misses(c));
  }
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

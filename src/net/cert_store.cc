#include "net/cert_store.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <algorithm>

#include "net/x509_text.h"

namespace sluice::net::tls {

namespace {

std::string time_text(const ASN1_TIME* t) {
  BIO* b = BIO_new(BIO_s_mem());
  std::string out;
  if (b && ASN1_TIME_print(b, t) == 1) {
    char* p = nullptr;
    const long n = BIO_get_mem_data(b, &p);
    if (n > 0) out.assign(p, static_cast<std::size_t>(n));
  }
  BIO_free(b);
  return out;
}

std::string hex(const unsigned char* p, std::size_t n) {
  static const char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out += kDigits[p[i] >> 4];
    out += kDigits[p[i] & 15];
  }
  return out;
}

}  // namespace

base::Result<CertInfo> describe_pem(const std::string& pem) {
  BIO* in = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (!in) return base::Error::text("out of memory");
  X509* leaf = PEM_read_bio_X509_AUX(in, nullptr, nullptr, nullptr);
  if (!leaf) {
    BIO_free(in);
    ERR_clear_error();
    return base::Error::text("no certificate");
  }
  CertInfo ci;
  const ASN1_INTEGER* serial = X509_get0_serialNumber(leaf);
  ci.serial = hex(ASN1_STRING_get0_data(serial), static_cast<std::size_t>(ASN1_STRING_length(serial)));
  ci.not_before = time_text(X509_get0_notBefore(leaf));
  ci.not_after = time_text(X509_get0_notAfter(leaf));
  if (auto* sans = static_cast<GENERAL_NAMES*>(
          X509_get_ext_d2i(leaf, NID_subject_alt_name, nullptr, nullptr))) {
    for (int i = 0; i < sk_GENERAL_NAME_num(sans); ++i) {
      const GENERAL_NAME* g = sk_GENERAL_NAME_value(sans, i);
      if (g->type != GEN_DNS) continue;
      if (!ci.san.empty()) ci.san += ", ";
      ci.san += "DNS:";
      ci.san.append(reinterpret_cast<const char*>(ASN1_STRING_get0_data(g->d.dNSName)),
                    static_cast<std::size_t>(ASN1_STRING_length(g->d.dNSName)));
    }
    GENERAL_NAMES_free(sans);
  }
  if (EVP_PKEY* k = X509_get0_pubkey(leaf)) {
    const int id = EVP_PKEY_get_base_id(k);
    ci.algorithm = (id == EVP_PKEY_EC ? "EC" : id == EVP_PKEY_RSA ? "RSA" : id == EVP_PKEY_DSA ? "DSA" : "") +
                   std::to_string(EVP_PKEY_get_bits(k));
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int md_len = 0;
  if (X509_digest(leaf, EVP_sha1(), md, &md_len) == 1) ci.sha1 = hex(md, md_len);
  ci.subject = x509_name_line(X509_get_subject_name(leaf));
  ci.issuer = x509_name_line(X509_get_issuer_name(leaf));
  while (X509* x = PEM_read_bio_X509(in, nullptr, nullptr, nullptr)) {
    ci.chain.emplace_back(x509_name_line(X509_get_subject_name(x)), x509_name_line(X509_get_issuer_name(x)));
    X509_free(x);
  }
  ERR_clear_error();
  X509_free(leaf);
  BIO_free(in);
  return ci;
}

CertStore& CertStore::global() {
  static CertStore store;
  return store;
}

void CertStore::clear() {
  std::lock_guard lock(mu_);
  binds_.clear();
  committed_.clear();
  created_.clear();
  crt_lists_.clear();
  tx_path_.clear();
  tx_pem_.clear();
}

void CertStore::add_bind(const BindOptions& o, std::shared_ptr<ContextSlot> slot) {
  Bind b{o, std::move(slot), {}};
  for (const CertSource& c : o.crts) {
    auto files = certificate_files(c.path);
    if (files.ok())
      for (auto& f : files.value()) b.files.push_back(std::move(f));
  }
  std::lock_guard lock(mu_);
  binds_.push_back(std::move(b));
}

bool CertStore::committed(const std::string& path, std::string* pem) const {
  std::lock_guard lock(mu_);
  auto it = committed_.find(path);
  if (it == committed_.end()) return false;
  *pem = it->second;
  return true;
}

std::vector<std::string> CertStore::files() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out = created_;
  for (const Bind& b : binds_) out.insert(out.end(), b.files.begin(), b.files.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool CertStore::used(const std::string& path) const {
  std::lock_guard lock(mu_);
  for (const Bind& b : binds_)
    if (std::find(b.files.begin(), b.files.end(), path) != b.files.end()) return true;
  return false;
}

bool CertStore::known(const std::string& path) const {
  if (used(path)) return true;
  std::lock_guard lock(mu_);
  return std::find(created_.begin(), created_.end(), path) != created_.end();
}

std::string CertStore::transaction() const {
  std::lock_guard lock(mu_);
  return tx_path_;
}

base::Result<bool> CertStore::set(const std::string& path, const std::string& pem) {
  if (std::string why = check_pem(path, pem, /*need_key=*/false); !why.empty())
    return base::Error::text(why);
  std::lock_guard lock(mu_);
  if (!tx_path_.empty() && tx_path_ != path)
    return base::Error::text("The ongoing transaction is about '" + tx_path_ +
                             "' but you are trying to set '" + path + "'");
  const bool opened = tx_path_.empty();
  tx_path_ = path;
  tx_pem_ = pem;
  return opened;
}

base::Result<int> CertStore::commit(const std::string& path) {
  std::unique_lock lock(mu_);
  if (tx_path_.empty() || tx_path_ != path) return base::Error::text("no transaction");
  const std::string pem = std::move(tx_pem_);
  tx_path_.clear();
  tx_pem_.clear();
  lock.unlock();
  if (std::string why = check_pem(path, pem, /*need_key=*/true); !why.empty())
    return base::Error::text("unable to load SSL private key into SSL Context '" + path +
                             "': " + why);
  lock.lock();
  std::string before;
  const bool had = committed_.count(path) > 0;
  if (had) before = committed_[path];
  committed_[path] = pem;
  std::vector<Bind> users;
  for (const Bind& b : binds_)
    if (std::find(b.files.begin(), b.files.end(), path) != b.files.end()) users.push_back(b);
  lock.unlock();
  // The new contexts first; none is published unless all of them build.
  std::vector<std::shared_ptr<const ServerContext>> built;
  for (const Bind& b : users) {
    auto c = ServerContext::make(b.options);
    if (!c.ok()) {
      lock.lock();
      if (had) committed_[path] = before;
      else committed_.erase(path);
      return c.error();
    }
    built.push_back(std::move(c.value()));
  }
  for (std::size_t i = 0; i < users.size(); ++i) users[i].slot->set(std::move(built[i]));
  return static_cast<int>(users.size());
}

bool CertStore::abort(const std::string& path) {
  std::lock_guard lock(mu_);
  if (tx_path_.empty() || tx_path_ != path) return false;
  tx_path_.clear();
  tx_pem_.clear();
  return true;
}

base::Result<bool> CertStore::create(const std::string& path) {
  if (known(path)) return base::Error::text("Certificate '" + path + "' already exists!");
  std::lock_guard lock(mu_);
  created_.push_back(path);
  return true;
}

base::Result<bool> CertStore::remove(const std::string& path) {
  if (used(path))
    return base::Error::text("Can't remove the certificate: certificate '" + path +
                             "' in use, can't be deleted!");
  std::lock_guard lock(mu_);
  auto it = std::find(created_.begin(), created_.end(), path);
  if (it == created_.end())
    return base::Error::text("Can't remove the certificate: certificate '" + path +
                             "' doesn't exist!");
  if (tx_path_ == path)
    return base::Error::text("Can't remove the certificate: certificate '" + path +
                             "' is in a transaction!");
  created_.erase(it);
  committed_.erase(path);
  return true;
}

base::Result<CertInfo> CertStore::info(const std::string& path, bool transaction) const {
  std::string pem;
  {
    std::lock_guard lock(mu_);
    if (transaction) {
      if (tx_path_ != path) return base::Error::text("not found");
      pem = tx_pem_;
    } else if (auto it = committed_.find(path); it != committed_.end()) {
      pem = it->second;
    }
  }
  if (pem.empty() && !transaction) {
    // The file as the bind line loaded it.
    BIO* in = BIO_new_file(path.c_str(), "r");
    if (!in) {
      ERR_clear_error();
      return base::Error::text("not found");
    }
    char buf[4096];
    int n;
    while ((n = BIO_read(in, buf, sizeof buf)) > 0) pem.append(buf, static_cast<std::size_t>(n));
    BIO_free(in);
  }
  return describe_pem(pem);
}

void CertStore::add_crt_list(const std::string& path, const std::vector<CrtListLine>& lines) {
  std::lock_guard lock(mu_);
  for (const auto& [p, _] : crt_lists_)
    if (p == path) return;   // several bind lines may read the same list
  crt_lists_.emplace_back(path, lines);
}

std::vector<std::string> CertStore::crt_lists() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [p, _] : crt_lists_) out.push_back(p);
  std::sort(out.begin(), out.end());   // by name, as HAProxy lists them
  return out;
}

bool CertStore::crt_list(const std::string& path, std::vector<CrtListLine>* lines) const {
  std::lock_guard lock(mu_);
  for (const auto& [p, l] : crt_lists_) {
    if (p != path) continue;
    *lines = l;
    return true;
  }
  return false;
}

}  // namespace sluice::net::tls

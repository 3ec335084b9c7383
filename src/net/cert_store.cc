#include "net/cert_store.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <algorithm>

#include <fmt/format.h>

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

bool read_file(const std::string& path, std::string* out) {
  BIO* in = BIO_new_file(path.c_str(), "r");
  if (!in) {
    ERR_clear_error();
    return false;
  }
  char buf[4096];
  int n;
  while ((n = BIO_read(in, buf, sizeof buf)) > 0) out->append(buf, static_cast<std::size_t>(n));
  BIO_free(in);
  return true;
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
  if (EVP_PKEY* k = X509_get0_pubkey(leaf)) ci.algorithm = key_algorithm(k);
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
  ca_base_.clear();
}

void CertStore::index_files(Bind& b) {
  b.files.clear();
  for (const CertSource& c : b.options.crts) {
    auto files = certificate_files(c.path);
    if (files.ok())
      for (auto& f : files.value()) b.files.push_back(std::move(f));
    if (!c.list.empty() && std::find(b.lists.begin(), b.lists.end(), c.list) == b.lists.end())
      b.lists.push_back(c.list);
  }
}

void CertStore::add_bind(const BindOptions& o, std::shared_ptr<ContextSlot> slot, BindLabel label) {
  Bind b{o, std::move(slot), std::move(label), {}, {}};
  index_files(b);
  std::lock_guard lock(mu_);
  binds_.push_back(std::move(b));
}

void CertStore::set_ca_base(std::string base) {
  std::lock_guard lock(mu_);
  ca_base_ = std::move(base);
}

std::string CertStore::ca_base() const {
  std::lock_guard lock(mu_);
  return ca_base_;
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
  std::lock_guard edit(edit_mu_);
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
  // The file as the bind line loaded it.
  if (pem.empty() && !transaction && !read_file(path, &pem))
    return base::Error::text("not found");
  return describe_pem(pem);
}

void CertStore::add_crt_list(const std::string& path, const std::vector<CrtListLine>& lines) {
  std::lock_guard lock(mu_);
  if (find_list(path)) return;   // several bind lines may read the same list
  CrtList l{path, lines, 0};
  for (const auto& x : lines) l.last_line = std::max(l.last_line, x.line);
  crt_lists_.push_back(std::move(l));
}

CertStore::CrtList* CertStore::find_list(const std::string& path) {
  for (auto& l : crt_lists_)
    if (l.path == path) return &l;
  return nullptr;
}

std::vector<std::string> CertStore::crt_lists() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& l : crt_lists_) out.push_back(l.path);
  std::sort(out.begin(), out.end());   // by name, as HAProxy lists them
  return out;
}

bool CertStore::crt_list(const std::string& path, std::vector<CrtListLine>* lines) const {
  std::lock_guard lock(mu_);
  for (const auto& l : crt_lists_) {
    if (l.path != path) continue;
    *lines = l.lines;
    return true;
  }
  return false;
}

CertStore::Cert CertStore::state(const std::string& path) const {
  if (used(path)) return Cert::kLoaded;
  std::lock_guard lock(mu_);
  if (std::find(created_.begin(), created_.end(), path) == created_.end()) return Cert::kUnknown;
  return committed_.count(path) ? Cert::kLoaded : Cert::kEmpty;
}

base::Result<bool> CertStore::publish(std::vector<Bind> changed) {
  std::vector<std::shared_ptr<ServerContext>> built;
  for (Bind& b : changed) {
    auto c = ServerContext::make(b.options);
    if (!c.ok()) return c.error();
    if (auto old = b.slot->get()) c.value()->keep_ticket_keys(*old);
    built.push_back(std::move(c.value()));
    index_files(b);
  }
  std::lock_guard lock(mu_);
  for (std::size_t i = 0; i < changed.size(); ++i) {
    changed[i].slot->set(std::move(built[i]));
    for (Bind& b : binds_)
      if (b.slot == changed[i].slot) b = std::move(changed[i]);
  }
  return true;
}

base::Result<bool> CertStore::add_crt_list_entry(const std::string& list, CrtListLine line,
                                                 const EntryOptions& options_for) {
  std::lock_guard edit(edit_mu_);
  std::vector<Bind> binds;
  {
    std::lock_guard lock(mu_);
    CrtList* l = find_list(list);
    if (!l) return base::Error::text("crt-list '" + list + "' does not exist!");
    line.line = l->last_line + 1;
    binds = binds_;
  }
  std::vector<Bind> changed;
  for (Bind& b : binds) {
    if (std::find(b.lists.begin(), b.lists.end(), list) == b.lists.end()) continue;
    CertSource src{line.crt, nullptr, line.filters, list, line.line};
    if (!line.options.empty()) {
      BindOptions base = b.options;
      base.crts.clear();
      auto own = options_for(base);
      if (!own.ok()) return own.error();
      src.options = std::move(own.value());
    }
    // After the list's last line on this bind line (at the end when none is left).
    auto& crts = b.options.crts;
    auto at = crts.end();
    for (auto it = crts.begin(); it != crts.end(); ++it)
      if (it->list == list) at = it + 1;
    crts.insert(at, std::move(src));
    if (std::string why = missing_ca_error(b.options, b.label); !why.empty())
      return base::Error::text(why);
    changed.push_back(std::move(b));
  }
  if (auto r = publish(std::move(changed)); !r.ok()) return r;
  std::lock_guard lock(mu_);
  if (CrtList* l = find_list(list)) {
    l->last_line = line.line;
    l->lines.push_back(std::move(line));
  }
  return true;
}

base::Result<bool> CertStore::del_crt_list_entry(const std::string& list, const std::string& crt,
                                                 int line) {
  std::lock_guard edit(edit_mu_);
  std::vector<int> numbers;
  std::vector<Bind> binds;
  {
    std::lock_guard lock(mu_);
    CrtList* l = find_list(list);
    if (!l) return base::Error::text("crt-list '" + list + "' does not exist!");
    for (const auto& x : l->lines)
      if (x.crt == crt) numbers.push_back(x.line);
    binds = binds_;
  }
  if (state(crt) == Cert::kUnknown)
    return base::Error::text("certificate '" + crt + "' does not exist!");
  if (numbers.empty())
    return base::Error::text("certificate '" + crt + "' can't be found in crt-list '" + list + "'!");
  std::string listed;
  for (int n : numbers) listed += (listed.empty() ? "" : ", ") + std::to_string(n);
  if (line >= 0 && std::find(numbers.begin(), numbers.end(), line) == numbers.end())
    return base::Error::text("found a certificate '" + crt + "' but the line number is incorrect, "
                             "please specify a correct line number preceded by colons (" +
                             listed + ")!");
  if (line < 0 && numbers.size() > 1)
    return base::Error::text("found the certificate '" + crt + "' in several entries, please "
                             "specify a line number preceded by colons (" + listed + ")!");
  const int target = line >= 0 ? line : numbers.front();
  auto is_target = [&](const CertSource& c) {
    return c.list == list && c.line == target && c.path == crt;
  };
  std::string defaults;
  std::vector<Bind> changed;
  for (Bind& b : binds) {
    auto& crts = b.options.crts;
    auto it = std::find_if(crts.begin(), crts.end(), is_target);
    if (it == crts.end()) continue;
    if (it == crts.begin()) {
      defaults += fmt::format("\n\t- {}:{}", b.label.file, b.label.line);
      continue;
    }
    crts.erase(it);
    changed.push_back(std::move(b));
  }
  if (!defaults.empty())
    return base::Error::text("certificate '" + crt + "' cannot be deleted, it is used as default "
                             "certificate by the following frontends:" + defaults);
  if (auto r = publish(std::move(changed)); !r.ok()) return r;
  const bool still_used = used(crt);
  std::string pem;
  if (!still_used) read_file(crt, &pem);
  std::lock_guard lock(mu_);
  if (CrtList* l = find_list(list))
    std::erase_if(l->lines, [&](const CrtListLine& x) { return x.crt == crt && x.line == target; });
  // A certificate no line uses any more stays known, unused, with the text it had (HAProxy's
  // store keeps it until `del ssl cert`).
  if (!still_used && std::find(created_.begin(), created_.end(), crt) == created_.end()) {
    created_.push_back(crt);
    if (!committed_.count(crt) && !pem.empty()) committed_[crt] = std::move(pem);
  }
  return true;
}

std::string missing_ca_error(const BindOptions& o, const BindLabel& where) {
  auto lacks = [](const BindOptions& x) {
    return x.verify != Verify::kNone && x.ca_file.empty() && x.ca_verify_file.empty();
  };
  bool bad = lacks(o);
  for (const CertSource& c : o.crts)
    if (c.options && lacks(*c.options)) bad = true;
  if (!bad) return "";
  return fmt::format("Proxy '{}': verify is enabled but no CA file specified for bind '{}' at "
                     "[{}:{}].", where.proxy, where.text, where.file, where.line);
}

}  // namespace sluice::net::tls

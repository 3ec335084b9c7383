#include "net/ticket_keys.h"

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>

#include <cstring>
#include <fstream>

#include "base/strings.h"

namespace sluice::net::tls {

namespace {

std::mutex g_files_mu;
std::vector<std::weak_ptr<TicketKeys>> g_files;   // id order

int ex_index() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

// A key line (base64, as `openssl base64 -A` writes it), trailing blanks and CR left out.
bool decode(std::string_view in, std::string* out) {
  while (!in.empty() && (in.back() == '\r' || in.back() == ' ' || in.back() == '\t')) in.remove_suffix(1);
  return base::base64_decode(in, out);
}

}  // namespace

base::Result<std::shared_ptr<TicketKeys>> TicketKeys::load(const std::string& path) {
  std::lock_guard lock(g_files_mu);
  for (const auto& w : g_files)
    if (auto k = w.lock(); k && k->path_ == path) return k;
  std::ifstream in(path);
  if (!in) return base::Error::text("'" + path + "' : unable to load ssl tickets keys file");
  auto keys = std::shared_ptr<TicketKeys>(new TicketKeys);
  keys->path_ = path;
  std::string line, raw;
  int n = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    ++n;
    if (!decode(line, &raw))
      return base::Error::text("'" + path + "' : unable to decode base64 key on line " + std::to_string(n));
    if (n == 1 && raw.size() != 48 && raw.size() != 80)
      return base::Error::text("'" + path + "' : wrong sized key on line " + std::to_string(n));
    if (n == 1) keys->size_ = raw.size();
    if (raw.size() != keys->size_)
      return base::Error::text("'" + path + "' : wrong sized key on line " + std::to_string(n));
    Key& k = keys->ring_[(n - 1) % kRing];
    std::memcpy(k.raw.data(), raw.data(), raw.size());
    k.base64 = line;
  }
  if (n < kRing)
    return base::Error::text("'" + path + "' : please supply at least 3 keys in the tls-tickets-file");
  keys->seal_ = (n - 2) % kRing;   // the next-to-last key seals
  g_files.push_back(keys);
  return keys;
}

std::vector<std::shared_ptr<TicketKeys>> TicketKeys::all() {
  std::lock_guard lock(g_files_mu);
  std::vector<std::shared_ptr<TicketKeys>> out;
  for (const auto& w : g_files) out.push_back(w.lock());
  return out;
}

void TicketKeys::install(SSL_CTX* ctx) const {
  SSL_CTX_set_ex_data(ctx, ex_index(), const_cast<TicketKeys*>(this));
  SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, &TicketKeys::on_ticket);
}

bool TicketKeys::add(std::string_view base64, std::string* why) {
  std::string raw;
  if (!decode(base64, &raw) || raw.size() != size_) {
    *why = "'set ssl tls-key' received a key of wrong size.";
    return false;
  }
  std::lock_guard lock(mu_);
  // The new key is the newest; the one that was newest seals.
  Key& k = ring_[(seal_ + 2) % kRing];
  std::memcpy(k.raw.data(), raw.data(), raw.size());
  k.base64 = std::string(base64);
  seal_ = (seal_ + 1) % kRing;
  return true;
}

std::vector<std::string> TicketKeys::shown() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (int i = 0; i < kRing; ++i) out.push_back(ring_[(seal_ + kRing - 1 + i) % kRing].base64);
  return out;
}

int TicketKeys::on_ticket(SSL* s, unsigned char* name, unsigned char* iv, EVP_CIPHER_CTX* cipher,
                          EVP_MAC_CTX* mac, int enc) {
  // Tickets are handled by the context the connection began with.
  const auto* self = static_cast<const TicketKeys*>(
      SSL_CTX_get_ex_data(SSL_get_SSL_CTX(s), ex_index()));
  if (!self) return 0;
  const std::size_t half = (self->size_ - 16) / 2;   // 16 or 32
  Key key;
  bool renew = false;
  {
    std::lock_guard lock(self->mu_);
    if (enc) {
      key = self->ring_[self->seal_];
    } else {
      int found = -1;
      for (int i = 0; i < kRing; ++i)
        if (std::memcmp(self->ring_[i].raw.data(), name, 16) == 0) found = i;
      if (found < 0) return 0;   // unknown key: a full handshake
      key = self->ring_[found];
      renew = found != self->seal_;
    }
  }
  const EVP_CIPHER* aes = half == 32 ? EVP_aes_256_cbc() : EVP_aes_128_cbc();
  const unsigned char* aes_key = key.raw.data() + 16;
  unsigned char* hmac_key = key.raw.data() + 16 + half;
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, hmac_key, half),
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, const_cast<char*>("SHA256"), 0),
      OSSL_PARAM_construct_end()};
  if (enc) {
    std::memcpy(name, key.raw.data(), 16);
    if (RAND_bytes(iv, EVP_MAX_IV_LENGTH) != 1 ||
        EVP_EncryptInit_ex(cipher, aes, nullptr, aes_key, iv) != 1 ||
        EVP_MAC_CTX_set_params(mac, params) != 1)
      return -1;
    return 1;
  }
  if (EVP_DecryptInit_ex(cipher, aes, nullptr, aes_key, iv) != 1 ||
      EVP_MAC_CTX_set_params(mac, params) != 1)
    return -1;
  return renew ? 2 : 1;
}

}  // namespace sluice::net::tls

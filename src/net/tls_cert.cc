// The fields of a TLS connection's certificates that the ssl_c_* and ssl_f_* fetches report
// (net/tls.h).
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <string>
#include <vector>

#include "net/tls.h"
#include "net/x509_text.h"

namespace sluice::net::tls {

namespace {

X509* cert_of(SSL* s, bool peer) {
  return peer ? SSL_get0_peer_certificate(s) : SSL_get_certificate(s);
}

bool asn1_time(const ASN1_TIME* t, std::string* out) {
  if (!t) return false;
  out->assign(reinterpret_cast<const char*>(ASN1_STRING_get0_data(t)),
              static_cast<std::size_t>(ASN1_STRING_length(t)));
  return true;
}

}  // namespace

bool cert_field(SSL* s, bool peer, CertField f, std::string* out) {
  X509* x = cert_of(s, peer);
  if (!x) return false;
  switch (f) {
    case CertField::kSerial: {
      const ASN1_INTEGER* n = X509_get0_serialNumber(x);
      out->assign(reinterpret_cast<const char*>(ASN1_STRING_get0_data(n)),
                  static_cast<std::size_t>(ASN1_STRING_length(n)));
      return true;
    }
    case CertField::kNotAfter: return asn1_time(X509_get0_notAfter(x), out);
    case CertField::kNotBefore: return asn1_time(X509_get0_notBefore(x), out);
    case CertField::kSigAlg:
    case CertField::kKeyAlg: {
      const int nid = f == CertField::kSigAlg ? X509_get_signature_nid(x)
                                              : EVP_PKEY_get_base_id(X509_get0_pubkey(x));
      // The public key's algorithm by its OID's name (EVP's ids name the key type).
      int oid_nid = nid;
      if (f == CertField::kKeyAlg) {
        X509_PUBKEY* pk = X509_get_X509_PUBKEY(x);
        ASN1_OBJECT* obj = nullptr;
        if (pk && X509_PUBKEY_get0_param(&obj, nullptr, nullptr, nullptr, pk) == 1 && obj)
          oid_nid = OBJ_obj2nid(obj);
      }
      const char* name = OBJ_nid2sn(oid_nid);
      if (!name) return false;
      out->assign(name);
      return true;
    }
    case CertField::kSha1: {
      unsigned char md[EVP_MAX_MD_SIZE];
      unsigned int n = 0;
      if (X509_digest(x, EVP_sha1(), md, &n) != 1) return false;
      out->assign(reinterpret_cast<const char*>(md), n);
      return true;
    }
    case CertField::kDer: {
      unsigned char* der = nullptr;
      const int n = i2d_X509(x, &der);
      if (n <= 0) return false;
      out->assign(reinterpret_cast<const char*>(der), static_cast<std::size_t>(n));
      OPENSSL_free(der);
      return true;
    }
    case CertField::kVersion:
      *out = std::to_string(X509_get_version(x) + 1);
      return true;
  }
  return false;
}

bool cert_dn(SSL* s, bool peer, bool issuer, std::string_view entry, int occ, bool rfc2253,
             std::string* out) {
  X509* x = cert_of(s, peer);
  if (!x) return false;
  const X509_NAME* name = issuer ? X509_get_issuer_name(x) : X509_get_subject_name(x);
  if (!name) return false;
  out->clear();
  const int n = X509_NAME_entry_count(name);
  if (!entry.empty()) {
    // The entries of that field, in the order written; occ counts from the first (1) or the
    // last (-1); 0 is the first.
    std::vector<int> at;
    for (int i = 0; i < n; ++i) {
      const X509_NAME_ENTRY* e = X509_NAME_get_entry(name, i);
      const int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(e));
      const char* sn = nid != NID_undef ? OBJ_nid2sn(nid) : nullptr;
      if (sn && entry == sn) at.push_back(i);
    }
    if (at.empty()) return false;
    const int count = static_cast<int>(at.size());
    const int idx = occ > 0 ? occ - 1 : occ < 0 ? count + occ : 0;
    if (idx < 0 || idx >= count) return false;
    const ASN1_STRING* v = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, at[static_cast<std::size_t>(idx)]));
    out->assign(reinterpret_cast<const char*>(ASN1_STRING_get0_data(v)),
                static_cast<std::size_t>(ASN1_STRING_length(v)));
    return true;
  }
  if (rfc2253) {
    BIO* b = BIO_new(BIO_s_mem());
    if (!b) return false;
    X509_NAME_print_ex(b, name, 0, XN_FLAG_RFC2253);
    char* p = nullptr;
    const long len = BIO_get_mem_data(b, &p);
    if (len > 0) out->assign(p, static_cast<std::size_t>(len));
    BIO_free(b);
    return !out->empty();
  }
  *out = x509_name_line(name);
  return !out->empty();
}

std::string key_algorithm(EVP_PKEY* key) {
  const int id = EVP_PKEY_get_base_id(key);
  const char* name = id == EVP_PKEY_EC ? "EC" : id == EVP_PKEY_RSA ? "RSA" : id == EVP_PKEY_DSA ? "DSA" : "";
  return name + std::to_string(EVP_PKEY_get_bits(key));
}

std::string x509_name_line(const X509_NAME* name) {
  std::string out;
  for (int i = 0; i < X509_NAME_entry_count(name); ++i) {
    const X509_NAME_ENTRY* e = X509_NAME_get_entry(name, i);
    const int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(e));
    char oid[80];
    const char* sn = nid != NID_undef ? OBJ_nid2sn(nid) : nullptr;
    if (!sn) {
      OBJ_obj2txt(oid, sizeof oid, X509_NAME_ENTRY_get_object(e), 1);
      sn = oid;
    }
    const ASN1_STRING* v = X509_NAME_ENTRY_get_data(e);
    out += '/';
    out += sn;
    out += '=';
    out.append(reinterpret_cast<const char*>(ASN1_STRING_get0_data(v)),
               static_cast<std::size_t>(ASN1_STRING_length(v)));
  }
  return out;
}

std::string local_key_alg(SSL* s) {
  X509* x = SSL_get_certificate(s);
  EVP_PKEY* k = x ? X509_get0_pubkey(x) : nullptr;
  return k ? key_algorithm(k) : "";
}

}  // namespace sluice::net::tls

#pragma once
// Internal to net: a certificate name as HAProxy writes it in fetches and on the CLI
// ("/C=FR/O=x/CN=y"; an attribute OpenSSL has no short name for by its dotted OID), and a
// key's algorithm.
#include <openssl/x509.h>

#include <string>

namespace sluice::net::tls {

std::string x509_name_line(const X509_NAME* name);
// A public key as HAProxy names it (`show ssl cert`'s Algorithm, PROXY v2's key algorithm):
// "EC256", "RSA2048".
std::string key_algorithm(EVP_PKEY* key);

}  // namespace sluice::net::tls

#pragma once
// Internal to net: a certificate name as HAProxy writes it in fetches and on the CLI
// ("/C=FR/O=x/CN=y"; an attribute OpenSSL has no short name for by its dotted OID).
#include <openssl/x509.h>

#include <string>

namespace sluice::net::tls {

std::string x509_name_line(const X509_NAME* name);

}  // namespace sluice::net::tls

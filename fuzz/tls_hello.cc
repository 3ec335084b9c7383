// Fuzzes the ClientHello reader behind req.ssl_sni, req.ssl_alpn, req.ssl_hello_type and the other req.ssl_* fetches. Whatever the bytes:
// no read outside the input (ASan), a name that lies inside the input and is not empty, and
// decisions that are final: once a prefix of the input yields "not TLS / no name" or a name,
// the whole input (that prefix plus more bytes) yields the same answer, since content rules act
// on a decision without waiting for more.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sample/tls_hello.h"

namespace {

using sluice::sample::HelloStatus;

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string whole(reinterpret_cast<const char*>(data), size);
  const auto sni = sluice::sample::tls_client_hello_sni(whole);
  const auto alpn = sluice::sample::tls_client_hello_alpn(whole);
  const auto type = sluice::sample::tls_hello_type(whole);
  if (sni.status == HelloStatus::kFound) {
    check(!sni.name.empty());
    check(sni.name.data() >= whole.data() &&
          sni.name.data() + sni.name.size() <= whole.data() + whole.size());
  }
  // The other fields: a list lies inside the input (the key share groups in the scratch).
  std::string scratch;
  using sluice::sample::HelloField;
  for (HelloField f : {HelloField::kCipherList, HelloField::kSigAlgs, HelloField::kSupportedGroups,
                       HelloField::kKeyShareGroups, HelloField::kEcExt, HelloField::kSessionTicket}) {
    const auto r = sluice::sample::tls_client_hello_field(whole, f, &scratch);
    if (r.status != HelloStatus::kFound || r.bytes.empty()) continue;
    const std::string_view in = f == HelloField::kKeyShareGroups ? std::string_view(scratch) : whole;
    check(r.bytes.data() >= in.data() && r.bytes.data() + r.bytes.size() <= in.data() + in.size());
  }
  if (alpn.status == HelloStatus::kFound) {
    check(!alpn.name.empty());
    check(alpn.name.data() >= whole.data() &&
          alpn.name.data() + alpn.name.size() <= whole.data() + whole.size());
  }
  for (std::size_t n = 0; n < size; n += n < 16 ? 1 : 7) {
    // Each prefix in its own allocation, so that reading past it is caught.
    const std::string cut = whole.substr(0, n);
    const auto p = sluice::sample::tls_client_hello_sni(cut);
    if (p.status != HelloStatus::kNeedMore) {
      check(p.status == sni.status);
      check(p.name == sni.name);
    }
    const auto a = sluice::sample::tls_client_hello_alpn(cut);
    if (a.status != HelloStatus::kNeedMore) {
      check(a.status == alpn.status);
      check(a.name == alpn.name);
    }
    const auto t = sluice::sample::tls_hello_type(cut);
    if (t.status != HelloStatus::kNeedMore) {
      check(t.status == type.status);
      check(t.type == type.type);
    }
  }
  return 0;
}

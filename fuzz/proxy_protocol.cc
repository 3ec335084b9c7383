// Fuzzes the PROXY protocol header parser (bind ... accept-proxy): arbitrary bytes, presented
// growing a few bytes at a time as reads would bring them. It must not crash or read out of
// bounds, a complete header must never claim more bytes than it was given, every prefix of a
// complete header must read as incomplete (never as an error), and the verdict on the whole
// input must not depend on how it arrived.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "net/proxy_protocol.h"

namespace {
void check(bool ok) {
  if (!ok) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  namespace pp = sluice::net::pp;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  pp::Header whole;
  const pp::Result all = pp::parse(in, &whole);
  if (all.status == pp::Status::kDone) {
    check(whole.length > 0 && whole.length <= size);
    check(whole.version == 1 || whole.version == 2);
    // Its prefixes were still waiting for more.
    for (std::size_t n = 0; n < whole.length; n += 1 + n / 8) {
      pp::Header h;
      check(pp::parse(in.substr(0, n), &h).status == pp::Status::kIncomplete);
    }
    // The header alone reads the same.
    pp::Header again;
    const pp::Result r = pp::parse(in.substr(0, whole.length), &again);
    check(r.status == pp::Status::kDone && again.length == whole.length &&
          again.has_addresses == whole.has_addresses && again.tlvs.size() == whole.tlvs.size());
  }
  // Growing reads reach the same verdict once everything arrived, and never an error before
  // the whole input says error.
  const std::size_t step = size > 0 ? 1 + data[0] % 7 : 1;
  for (std::size_t n = 0; n < size; n += step) {
    pp::Header h;
    const pp::Result r = pp::parse(in.substr(0, n), &h);
    if (r.status == pp::Status::kDone) check(all.status == pp::Status::kDone && h.length == whole.length);
    if (r.status == pp::Status::kError) check(all.status == pp::Status::kError);
  }
  return 0;
}

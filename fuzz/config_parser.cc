// libFuzzer target: any bytes as one configuration file. The loader must never crash, hang or
// leak, whatever the input; diagnostics are discarded.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/loader.h"
#include "net/address.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool once = [] {
    // Never reach a DNS server from the fuzzer: only "localhost" resolves.
    sluice::net::set_host_resolver([](const std::string& host, int family,
                                      sluice::net::SocketAddress* out) {
      if (host != "localhost" || family == AF_INET6) return false;
      *out = sluice::net::SocketAddress::ipv4(0x7f000001, 0);
      return true;
    });
    return true;
  }();
  (void)once;
  sluice::config::LoadOptions options;
  options.diag = size > 0 && (data[0] & 1);
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = sluice::config::load_text(text, "fuzz.cfg", options, [](const sluice::config::Diagnostic&) {});
  (void)r;
  return 0;
}

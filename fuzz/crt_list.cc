// Fuzzes the crt-list parser (net/crt_list.h). Whatever the bytes: no read outside the input
// (ASan), no crash, and on success lines in increasing order, each with a certificate word
// that is not an option, and no word holding a bracket, blank or newline.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "net/crt_list.h"

namespace {
void check(bool ok) {
  if (!ok) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = sluice::net::tls::parse_crt_list(text, "fuzz.list");
  if (!r.ok()) {
    check(!r.error().message.empty());
    return 0;
  }
  int last = 0;
  for (const auto& l : r.value()) {
    check(l.line > last);
    last = l.line;
    check(!l.crt.empty() && l.crt[0] != '[' && l.crt[0] != '#');
    for (const auto& w : l.options) check(!w.empty() && w.find_first_of("[] \t\n") == std::string::npos);
    for (const auto& w : l.filters) check(!w.empty() && w.find_first_of("[] \t\n") == std::string::npos);
  }
  return 0;
}

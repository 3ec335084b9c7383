#include "config/tls_words.h"

#include "config/parser.h"
#include "net/tls.h"

namespace sluice::config {

int tls_version_bit(std::string_view no_word) {
  static constexpr std::string_view kNo[] = {"no-sslv3", "no-tlsv10", "no-tlsv11", "no-tlsv12",
                                             "no-tlsv13"};
  for (int i = 0; i < 5; ++i)
    if (kNo[i] == no_word) return i;
  return -1;
}

int tls_force_bit(std::string_view word) {
  static constexpr std::string_view kForce[] = {"force-sslv3", "force-tlsv10", "force-tlsv11",
                                                "force-tlsv12", "force-tlsv13"};
  for (int i = 0; i < 5; ++i)
    if (kForce[i] == word) return i;
  return -1;
}

std::string with_base(const std::string& base, const std::string& path) {
  if (base.empty() || path.empty() || path[0] == '/') return path;
  return base + (base.ends_with('/') ? "" : "/") + path;
}

std::vector<std::string> split_commas(const std::string& v) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= v.size()) {
    std::size_t c = v.find(',', start);
    if (c == std::string::npos) c = v.size();
    out.push_back(v.substr(start, c - start));
    start = c + 1;
  }
  return out;
}

void resolve_tls_versions(int& min_version, int& max_version, int disabled,
                          const std::string& where) {
  const int lo = min_version ? min_version : net::tls::version_number("TLSv1.2");
  const int hi = max_version ? max_version : net::tls::version_number("TLSv1.3");
  int first = -1, last = -1;
  for (int i = 0; i < 5; ++i) {
    const int v = net::tls::version_number(kTlsVersions[i]);
    if (v < lo || v > hi || (disabled & (1 << i))) continue;
    if (first < 0) first = v;
    last = v;
  }
  if (first < 0) throw ConfigError{where + "all SSL/TLS versions are disabled."};
  min_version = first;
  max_version = last;
}

}  // namespace sluice::config

#pragma once
// Words the TLS keywords of bind lines, server lines and their globals share
// (config/tls_words.cc): protocol versions, file bases, comma lists.
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "config/parser.h"
#include "net/tls.h"

namespace sluice::config {

// SSLv3, TLSv1.0, TLSv1.1, TLSv1.2, TLSv1.3: bit i of a disabled-versions mask.
inline constexpr std::string_view kTlsVersions[] = {"SSLv3", "TLSv1.0", "TLSv1.1", "TLSv1.2",
                                                    "TLSv1.3"};
// The bit of `no-sslv3` ... `no-tlsv13`, -1 for another word.
int tls_version_bit(std::string_view no_word);
// The version of `force-sslv3` ... `force-tlsv13`, -1 for another word.
int tls_force_bit(std::string_view word);
// `path` under crt-base / ca-base when it is relative.
std::string with_base(const std::string& base, const std::string& path);
std::vector<std::string> split_commas(const std::string& v);
// The versions allowed: ssl-min-ver / ssl-max-ver (0: TLS 1.2 / 1.3), narrowed by the no-*
// flags of `disabled`; written back as the first and last allowed. None left: HAProxy's error,
// after `where`.
void resolve_tls_versions(int& min_version, int& max_version, int disabled,
                          const std::string& where);

// The version words bind lines, server lines and their ssl-default-*-options share (no-sslv3
// ... no-tlsv13, force-*, no-tls-tickets, ssl-min-ver / ssl-max-ver <v>) into `o`
// (net::tls::BindOptions or ClientOptions): how many words the one at args[i] took, 0 when it
// is none of them. A version it does not know is HAProxy's error, "<where>'TLSv9' : unknown
// ssl/tls version<tail>" (its tail differs by place: "" on bind lines, "." on server lines).
template <class Options>
std::size_t tls_version_option(const std::vector<std::string>& args, std::size_t i,
                               const std::string& where, std::string_view tail, Options& o,
                               int& disabled, bool& min_set, bool& max_set) {
  const std::string& w = args[i];
  if (int b = tls_version_bit(w); b >= 0) {
    disabled |= 1 << b;
    return 1;
  }
  if (int b = tls_force_bit(w); b >= 0) {
    // HAProxy: deprecated, the same as ssl-min-ver and ssl-max-ver both at that version.
    o.min_version = o.max_version = net::tls::version_number(kTlsVersions[b]);
    min_set = max_set = true;
    return 1;
  }
  if (w == "no-tls-tickets") {
    o.no_tickets = true;
    return 1;
  }
  if (w == "ssl-min-ver" || w == "ssl-max-ver") {
    const std::string v = i + 1 < args.size() ? args[i + 1] : std::string();
    const int n = net::tls::version_number(v);
    if (!n)
      throw ConfigError{fmt::format("{}'{}' : unknown ssl/tls version{}", where, v, tail)};
    (w == "ssl-min-ver" ? o.min_version : o.max_version) = n;
    (w == "ssl-min-ver" ? min_set : max_set) = true;
    return 2;
  }
  return 0;
}

}  // namespace sluice::config

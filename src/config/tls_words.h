#pragma once
// Words the TLS keywords of bind lines, server lines and their globals share
// (config/tls_words.cc): protocol versions, file bases, comma lists.
#include <string>
#include <string_view>
#include <vector>

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

}  // namespace sluice::config

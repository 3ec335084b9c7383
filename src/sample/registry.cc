// Every fetch and converter by name, from the tables of the fetch_*.cc and conv_*.cc files.
#include <algorithm>
#include <vector>

#include "sample/tables.h"

namespace sluice::sample {

namespace {

template <typename Def>
struct Index {
  std::vector<const Def*> sorted;
  explicit Index(std::initializer_list<std::span<const Def>> tables) {
    for (auto t : tables)
      for (const Def& d : t) sorted.push_back(&d);
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const Def* a, const Def* b) { return a->name < b->name; });
  }
  std::vector<std::string_view> names() const {
    std::vector<std::string_view> out;
    for (const Def* d : sorted)
      if (out.empty() || out.back() != d->name) out.push_back(d->name);
    return out;
  }
  const Def* find(std::string_view name) const {
    auto it = std::lower_bound(sorted.begin(), sorted.end(), name,
                               [](const Def* d, std::string_view n) { return d->name < n; });
    return it != sorted.end() && (*it)->name == name ? *it : nullptr;
  }
};

const Index<FetchDef>& fetch_index() {
  static const Index<FetchDef> idx({tables::internal_fetches(), tables::l4_fetches(),
                                    tables::ssl_fetches(),
                                    tables::payload_fetches(), tables::http_fetches(),
                                    tables::http_hdr_fetches(), tables::http_cookie_fetches(),
                                    tables::http_auth_fetches(), tables::vars_fetches()});
  return idx;
}

const Index<ConvDef>& conv_index() {
  static const Index<ConvDef> idx({tables::string_convs(), tables::text_convs(),
                                   tables::arith_convs(),
                                   tables::hash_convs(), tables::encode_convs(),
                                   tables::misc_convs(), tables::json_convs(),
                                   tables::rfc7239_convs(), tables::cond_convs(),
                                   tables::fix_convs(), tables::mqtt_convs(),
                                   tables::map_convs()});
  return idx;
}

struct Unsupported {
  std::string_view prefix;   // a name, or a prefix ending in '*'
  std::string_view why;
};

// HAProxy fetches that need a feature sluice does not have yet.
constexpr Unsupported kFetches[] = {
    {"ssl_*", "sluice's TLS does not report it yet"},
    {"sc_*", "it needs stick tables"},  {"sc0_*", "it needs stick tables"},
    {"sc1_*", "it needs stick tables"}, {"sc2_*", "it needs stick tables"},
    {"src_*", "it needs stick tables"}, {"table_*", "it needs stick tables"},
    {"fc_saved_syn", "it needs the bind option tcp-ss"},
    {"fs.*", "it needs the multiplexer's stream state"},
    {"bs.*", "it needs the multiplexer's stream state"},
    {"term_events", "it needs the stream's termination events"},
    {"51d.*", "it needs 51Degrees"},    {"da-csv-conv", "it needs DeviceAtlas"},    {"x509_v_err_str", "sluice's TLS does not report it yet"},
    {"eth.*", "it needs the bind option tcp-ss"}, {"ip.*", "it needs the bind option tcp-ss"},
    {"tcp.*", "it needs the bind option tcp-ss"},
    {"wurfl-*", "it needs WURFL"},      {"quic_*", "it needs QUIC"},
    {"req.ssl_*", "sluice does not read it from the client hello yet"},
    {"res.ssl_*", "sluice does not read it from the server hello yet"},
    {"jwt_*", "it needs JWT support"},  {"ocsp_*", "sluice's TLS has no OCSP yet"},
    {"lua.*", "it needs Lua"},
    {"http_first_req", "it needs the connection's request count"},
    {"server_status", "it needs the status as the server sent it"},
    {"waiting_entity", "it needs the stream's waiting state"},
    {"cookie", "it is deprecated: use req.cook or res.cook"},
    {"distcc_*", "it needs the distcc protocol"},
    {"fcgi.*", "it needs FastCGI applications"},
    {"internal.*", "it reads HAProxy's internal HTX representation"},
    {"res.cache_*", "it needs the HTTP cache"},
    {"res.comp*", "it needs HTTP compression"},
    {"spoe.*", "it needs SPOE"},
};

// Converters that issue 18 leaves out or that need missing features.
constexpr Unsupported kConvs[] = {
    {"jwt_*", "it needs JWT support"},          {"aes_*", "sluice has no AES converters yet"},
    {"protobuf", "it needs gRPC support"},      {"ungrpc", "it needs gRPC support"},
    {"table_*", "it needs stick tables"},       {"in_table", "it needs stick tables"},
    {"51d.*", "it needs 51Degrees"},
    {"da-csv-conv", "it needs DeviceAtlas"},    {"x509_v_err_str", "sluice's TLS does not report it yet"},
    {"eth.*", "it needs the bind option tcp-ss"}, {"ip.*", "it needs the bind option tcp-ss"},
    {"tcp.*", "it needs the bind option tcp-ss"},
};

std::string_view lookup(std::span<const Unsupported> list, std::string_view name) {
  for (const auto& u : list) {
    std::string_view p = u.prefix;
    if (!p.empty() && p.back() == '*') {
      p.remove_suffix(1);
      if (name.size() >= p.size() && name.substr(0, p.size()) == p) return u.why;
    } else if (name == p) {
      return u.why;
    }
  }
  return {};
}

}  // namespace

const FetchDef* find_fetch(std::string_view name) { return fetch_index().find(name); }
const ConvDef* find_conv(std::string_view name) { return conv_index().find(name); }
std::vector<std::string_view> fetch_names() { return fetch_index().names(); }
std::vector<std::string_view> conv_names() { return conv_index().names(); }
std::string_view unsupported_fetch(std::string_view name) { return lookup(kFetches, name); }
std::string_view unsupported_conv(std::string_view name) { return lookup(kConvs, name); }

}  // namespace sluice::sample

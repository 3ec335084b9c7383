// `balance` (the load-balancing algorithm) and `hash-type` (how hashing algorithms map a key).
#include "config/proxy_keywords.h"

#include <algorithm>
#include <climits>
#include <cstdlib>

#include <fmt/format.h>

namespace sluice::config::proxy_kw {

void kw_balance(Parser& p, Line& l) {
  ProxyConfig& px = p.cur_proxy().cfg;
  std::string a = l.args.size() > 1 ? l.args[1] : "";
  if (a.empty()) throw ConfigError{l.where + "'balance' expects an algorithm name."};
  // HAProxy ignores words after the algorithm (uri's len/depth/whole, ...); so does sluice.
  static const std::pair<std::string_view, Balance> kPlain[] = {
      {"roundrobin", Balance::kRoundRobin}, {"static-rr", Balance::kStaticRr},
      {"leastconn", Balance::kLeastConn},   {"first", Balance::kFirst},
      {"source", Balance::kSource},         {"uri", Balance::kUri},
  };
  for (const auto& [n, b] : kPlain) {
    if (a == n) {
      px.balance = b;
      return;
    }
  }
  if (a.rfind("random", 0) == 0 && (a.size() == 6 || a[6] == '(')) {
    int draws = 2;
    if (a.size() > 7 && a[7] != ')') {   // random(<draws>), as HAProxy: strtol then ')'
      const char* beg = a.c_str() + 7;
      char* end = nullptr;
      long v = strtol(beg, &end, 0);
      if (*end != ')') {
        if (!*end) throw ConfigError{fmt::format("{}balance {} : expects ')' at the end of argument.", l.where, a)};
        throw ConfigError{fmt::format("{}balance {} : unexpected character '{}' after argument.", l.where, a, *end)};
      }
      if (v < 1 || v > INT_MAX)
        throw ConfigError{fmt::format("{}balance {} : number of draws must be at least 1.", l.where, a)};
      draws = static_cast<int>(v);
    }
    px.balance = Balance::kRandom;
    px.balance_draws = draws;
    return;
  }
  if (a.rfind("hdr(", 0) == 0) {
    std::size_t close = a.find(')', 4);
    if (close == std::string::npos || close == 4)
      throw ConfigError{l.where + "balance hdr requires an http header field name."};
    px.balance = Balance::kHdr;
    px.balance_hdr = a.substr(4, close - 4);
    return;
  }
  static constexpr std::string_view kKnown[] = {"url_param", "rdp-cookie", "hash", "log-hash", "sticky"};
  std::string base_name = a.substr(0, a.find('('));
  if (std::find(std::begin(kKnown), std::end(kKnown), base_name) != std::end(kKnown))
    throw ConfigError{fmt::format("{}balance '{}' is not supported by sluice yet.", l.where, a)};
  std::vector<std::string_view> names(std::begin(kKnown), std::end(kKnown));
  for (const auto& [n, b] : kPlain) names.push_back(n);
  names.push_back("random");
  names.push_back("hdr");
  throw ConfigError{fmt::format("{}'balance' : unknown balancing algorithm '{}'{}", l.where, a,
                                did_you_mean(a, names))};
}

// hash-type map-based|consistent [sdbm|djb2|wt6|crc32|none [avalanche]], HAProxy's messages.
void kw_hash_type(Parser& p, Line& l) {
  ProxyConfig& px = p.cur_proxy().cfg;
  std::string t = l.args.size() > 1 ? l.args[1] : "";
  if (t == "consistent") {
    px.hash_consistent = true;
  } else if (t == "map-based") {
    px.hash_consistent = false;
  } else if (t == "avalanche") {
    throw ConfigError{fmt::format("{}experimental feature 'hash-type avalanche' is not supported anymore, "
                                  "please use 'hash-type map-based sdbm avalanche' instead.", l.where)};
  } else {
    throw ConfigError{l.where + "'hash-type' only supports 'consistent' and 'map-based'."};
  }
  px.hash_avalanche = false;
  px.hash_function = HashFunction::kSdbm;
  if (l.args.size() < 3) {
    px.hash_avalanche = px.hash_consistent;   // consistent alone: sdbm + avalanche
    return;
  }
  static const std::pair<std::string_view, HashFunction> kFns[] = {
      {"sdbm", HashFunction::kSdbm}, {"djb2", HashFunction::kDjb2}, {"wt6", HashFunction::kWt6},
      {"crc32", HashFunction::kCrc32}, {"none", HashFunction::kNone}};
  bool found = false;
  for (const auto& [n, f] : kFns) {
    if (l.args[2] == n) {
      px.hash_function = f;
      found = true;
    }
  }
  if (!found)
    throw ConfigError{l.where + "'hash-type' only supports 'sdbm', 'djb2', 'crc32', or 'wt6' hash functions."};
  if (l.args.size() > 3) {
    if (l.args[3] != "avalanche")
      throw ConfigError{l.where + "'hash-type' only supports 'avalanche' as a modifier for hash functions."};
    px.hash_avalanche = true;
  }
  no_extra(l, 4);
}

}  // namespace sluice::config::proxy_kw

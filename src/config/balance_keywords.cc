// `balance` (the load-balancing algorithm) and `hash-type` (how hashing algorithms map a key).
#include "config/proxy_keywords.h"

#include <algorithm>
#include <climits>
#include <cstdlib>

#include <fmt/format.h>

namespace sluice::config::proxy_kw {

namespace {

// `balance uri [len <n>] [depth <n>] [whole] [path-only]`, HAProxy's messages.
void uri_options(ProxyConfig& px, const Line& l) {
  for (std::size_t i = 2; i < l.args.size(); ++i) {
    const std::string& o = l.args[i];
    if (o == "whole") {
      px.balance_uri_whole = true;
    } else if (o == "path-only") {
      px.balance_uri_path_only = true;
    } else if (o == "len" || o == "depth") {
      const std::string v = i + 1 < l.args.size() ? l.args[i + 1] : "";
      char* end = nullptr;
      long n = v.empty() ? 0 : strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || n <= 0 || n > INT_MAX)
        throw ConfigError{fmt::format("{}balance uri : '{}' expects a positive integer (got '{}').",
                                      l.where, o, v)};
      (o == "len" ? px.balance_uri_len : px.balance_uri_depth) = static_cast<int>(n);
      ++i;
    } else {
      throw ConfigError{fmt::format("{}balance uri only accepts parameters 'len', 'depth', "
                                    "'path-only', and 'whole' (got '{}').", l.where, o)};
    }
  }
}

// A text as one argument of a sample expression: quoted when it holds what would end it.
std::string quoted_arg(std::string_view v) {
  if (v.find_first_of("(),\\\"' \t") == std::string_view::npos) return std::string(v);
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + '"';
}

}  // namespace

void kw_balance(Parser& p, Line& l) {
  ProxyConfig& px = p.cur_proxy().cfg;
  std::string a = l.args.size() > 1 ? l.args[1] : "";
  if (a.empty()) throw ConfigError{l.where + "'balance' expects an algorithm name."};
  px.balance_hdr_domain_only = false;
  px.balance_uri_len = px.balance_uri_depth = 0;
  px.balance_uri_whole = px.balance_uri_path_only = false;
  px.balance_expr_text.clear();
  px.balance_expr.reset();
  // As in HAProxy, words after roundrobin, static-rr, leastconn, first, source, random and
  // rdp-cookie are not read; uri, hdr, url_param and hash check theirs.
  static const std::pair<std::string_view, Balance> kPlain[] = {
      {"roundrobin", Balance::kRoundRobin}, {"static-rr", Balance::kStaticRr},
      {"leastconn", Balance::kLeastConn},   {"first", Balance::kFirst},
      {"source", Balance::kSource},
  };
  for (const auto& [n, b] : kPlain) {
    if (a == n) {
      px.balance = b;
      return;
    }
  }
  if (a == "uri") {
    px.balance = Balance::kUri;
    uri_options(px, l);
    return;
  }
  if (a == "url_param") {
    if (l.args.size() < 3 || l.args[2].empty())
      throw ConfigError{l.where + "balance url_param requires an URL parameter name."};
    if (l.args.size() > 3) {
      if (l.args[3] != "check_post")
        throw ConfigError{fmt::format("{}balance url_param only accepts 'check_post' modifier (got '{}').",
                                      l.where, l.args[3])};
      // HAProxy then waits for the request body (as option http-buffer-request does) to
      // look for the parameter in a POSTed form; sluice cannot wait for a body yet.
      throw ConfigError{l.where + "balance url_param : 'check_post' is not supported by sluice yet "
                                  "(it needs the request body to be buffered before load balancing)."};
    }
    px.balance = Balance::kUrlParam;
    px.balance_expr_text = "url_param(" + quoted_arg(l.args[2]) + ")";
    return;
  }
  if (a.rfind("rdp-cookie", 0) == 0 && (a.size() == 10 || a[10] == '(')) {
    std::string name = "mstshash";
    if (a.size() > 10) {
      std::size_t close = a.find(')', 11);
      if (close == std::string::npos || close == 11)
        throw ConfigError{l.where + "balance rdp-cookie : missing cookie name."};
      name = a.substr(11, close - 11);
    }
    px.balance = Balance::kRdpCookie;
    px.balance_expr_text = "rdp_cookie(" + quoted_arg(name) + ")";
    return;
  }
  if (a == "hash") {
    if (l.args.size() < 3 || l.args[2].empty())
      throw ConfigError{l.where + "balance hash requires a sample expression."};
    if (l.args.size() > 3)
      throw ConfigError{fmt::format("{}balance hash takes no other argument (got '{}').", l.where, l.args[3])};
    px.balance = Balance::kHash;
    px.balance_expr_text = l.args[2];
    return;
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
    if (l.args.size() > 2) {
      if (l.args[2] != "use_domain_only")
        throw ConfigError{fmt::format("{}balance {} only accepts 'use_domain_only' modifier (got '{}').",
                                      l.where, a, l.args[2])};
      px.balance_hdr_domain_only = true;
    }
    return;
  }
  static constexpr std::string_view kKnown[] = {"log-hash", "sticky"};
  if (std::find(std::begin(kKnown), std::end(kKnown), a.substr(0, a.find('('))) != std::end(kKnown))
    throw ConfigError{fmt::format("{}balance '{}' is not supported by sluice yet (it balances "
                                  "the log servers of 'mode log').", l.where, a)};
  throw ConfigError{l.where + "balance only supports 'roundrobin', 'static-rr', 'leastconn', 'source', "
                              "'uri', 'url_param', 'hash', 'hdr(name)', 'rdp-cookie(name)', 'log-hash' "
                              "and 'sticky' options."};
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

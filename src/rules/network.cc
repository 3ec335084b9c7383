// Target parts and small helpers shared by the rules module.
#include <arpa/inet.h>

#include <cctype>
#include <cstring>

#include <fmt/format.h>

#include "http/http.h"
#include "rules/internal.h"

namespace sluice::rules {

std::string_view path_of(std::string_view target) {
  if (target.empty()) return target;
  std::size_t start = 0;
  if (target[0] != '/') {
    if (target == "*") return target;
    auto scheme = target.find("://");
    if (scheme == std::string_view::npos) return {};   // authority-form (CONNECT)
    start = target.find_first_of("/?#", scheme + 3);
    if (start == std::string_view::npos || target[start] != '/') return {};
  }
  auto end = target.find('?', start);
  return target.substr(start, end == std::string_view::npos ? target.size() - start : end - start);
}

std::string_view query_of(std::string_view target) {
  auto q = target.find('?');
  if (q == std::string_view::npos) return {};
  return target.substr(q + 1);
}

namespace detail {

bool iequals(std::string_view a, std::string_view b) { return http::iequals(a, b); }

void split_raw(std::string_view value, std::vector<std::string_view>& out) {
  std::size_t start = 0;
  bool quoted = false;
  for (std::size_t i = 0; i < value.size(); ++i) {
    char c = value[i];
    if (quoted) {
      if (c == '\\' && i + 1 < value.size()) {
        ++i;
      } else if (c == '"') {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(value.substr(start, i - start));
      start = i + 1;
    }
  }
  out.push_back(value.substr(start));
}

std::string_view trim_blanks(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

void split_values(std::string_view value, std::vector<std::string_view>& out) {
  std::size_t first = out.size();
  split_raw(value, out);
  for (std::size_t i = first; i < out.size(); ++i) out[i] = trim_blanks(out[i]);
}

std::string addr_host(const net::SocketAddress& a) {
  if (a.family() != AF_INET && a.family() != AF_INET6) return {};
  return a.host_string();
}

}  // namespace detail

}  // namespace sluice::rules

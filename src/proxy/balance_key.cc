#include "proxy/balance_key.h"

namespace sluice::proxy {

std::string_view uri_hash_part(std::string_view uri, const lb::BalanceSettings& b) {
  if (b.uri_path_only && !uri.empty() && uri[0] != '/') {
    // absolute-form: what follows scheme://authority ("" when there is no path)
    auto scheme = uri.find("://");
    if (scheme != std::string_view::npos) {
      auto path = uri.find('/', scheme + 3);
      uri = path == std::string_view::npos ? std::string_view() : uri.substr(path);
    }
  }
  if (b.uri_len > 0 && static_cast<std::size_t>(b.uri_len) < uri.size())
    uri = uri.substr(0, static_cast<std::size_t>(b.uri_len));
  int slashes = 0;
  std::size_t i = 0;
  for (; i < uri.size(); ++i) {
    char c = uri[i];
    if (c == '/') {
      // depth N keeps N levels: the scan stops at the (N+1)th slash
      if (b.uri_depth > 0 && ++slashes == b.uri_depth + 1) break;
    } else if (c == '?' && !b.uri_whole) {
      break;
    }
  }
  return uri.substr(0, i);
}

std::string_view domain_only(std::string_view v) {
  // From the end: the last dot ends the domain, the dot before it starts it; without a dot
  // the whole value. The first character is never taken for a dot.
  std::size_t end = v.size(), start = 0;
  bool in_domain = false;
  for (std::size_t p = v.size(); p >= 1; --p) {
    if (in_domain) {
      if (v[p - 1] == '.') {
        start = p;
        break;
      }
    } else if (p < v.size() && v[p] == '.') {
      end = p;
      in_domain = true;
    }
  }
  return v.substr(start, end - start);
}

bool expr_key(const sample::Expr& e, const rules::RequestView& view, std::string& out) {
  sample::Sample s;
  if (!e.eval(view, s)) return false;
  if (!sample::cast(s, sample::Type::kBin, sample::thread_scratch())) return false;
  out.assign(s.str);
  return true;
}

bool http_key(const lb::BalanceSettings& b, const sample::Expr* expr, std::string_view target,
              const std::vector<http::Header>& headers, const rules::RequestView& view,
              std::string& out) {
  switch (b.kind) {
    case lb::BalanceKind::kUri:
      out.assign(uri_hash_part(target, b));
      return true;
    case lb::BalanceKind::kHdr:
      for (const auto& h : headers)
        if (http::iequals(h.name, b.hdr_name)) {
          if (h.value.empty()) return false;
          out.assign(b.hdr_domain_only ? domain_only(h.value) : h.value);
          return true;
        }
      return false;
    case lb::BalanceKind::kUrlParam:
    case lb::BalanceKind::kRdpCookie:
    case lb::BalanceKind::kHash:
      return expr && expr_key(*expr, view, out);
    default:
      return false;
  }
}

}  // namespace sluice::proxy

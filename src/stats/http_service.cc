// The statistics page and the Prometheus exporter as HTTP services: the request's method,
// target and credentials in, what to answer out.
#include "stats/http_service.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "base/strings.h"

namespace sluice::stats {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// The part of a request-target the stats URI prefix is compared with: from the path on (an
// absolute-form target's scheme and authority are skipped).
std::string_view uri_from_path(std::string_view target) {
  if (target.empty() || target[0] == '/') return target;
  std::size_t scheme = target.find("://");
  if (scheme == std::string_view::npos) return target;
  std::size_t path = target.find('/', scheme + 3);
  return path == std::string_view::npos ? std::string_view("/") : target.substr(path);
}

// `Authorization: Basic <base64 of user:password>` naming one of `accounts`.
bool authorized(std::optional<std::string_view> authorization,
                const std::vector<std::string>& accounts) {
  if (!authorization) return false;
  std::string_view v = *authorization;
  std::size_t sp = v.find(' ');
  if (sp == std::string_view::npos || !iequals(v.substr(0, sp), "basic")) return false;
  std::string_view token = v.substr(sp + 1);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  std::string plain;
  if (!base::base64_decode(token, &plain)) return false;
  return std::find(accounts.begin(), accounts.end(), plain) != accounts.end();
}

// The value after `key` in the stats options (`scope=`, `;st=`), up to `;`, `&`, a space or
// the end; "" when absent.
std::string_view stats_option(std::string_view opts, std::string_view key) {
  std::size_t at = opts.find(key);
  if (at == std::string_view::npos) return {};
  std::string_view v = opts.substr(at + key.size());
  std::size_t end = v.find_first_of(";& ");
  return end == std::string_view::npos ? v : v.substr(0, end);
}

// What follows the first `?` of a target; "" without one.
std::string_view query_of(std::string_view target) {
  std::size_t q = target.find('?');
  return q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
}

}  // namespace

Reply HttpService::stats_page(const ServiceRequest& req, const PageSettings& sp) const {
  Reply r;
  if (!sp.enabled) return r;
  using M = ServiceRequest::Method;
  if (req.method != M::kGet && req.method != M::kHead && req.method != M::kPost) return r;
  std::string_view uri = uri_from_path(req.target);
  if (!uri.starts_with(sp.uri)) return r;
  if (!sp.auth.empty() && !authorized(req.authorization, sp.auth)) {
    r.kind = Reply::Kind::kUnauthorized;
    r.realm = sp.realm;
    return r;
  }
  std::string_view opts = uri.substr(sp.uri.size());
  if (req.method == M::kPost) {
    r.kind = Reply::Kind::kRedirect;
    r.location = sp.uri + ";st=DENY";
    return r;
  }
  StatsPageQuery q;
  using F = StatsPageQuery::Format;
  bool json_schema = opts.find(";json-schema") != std::string_view::npos;
  if (json_schema) {
    r.kind = Reply::Kind::kNotFound;
    return r;
  }
  if (opts.find(";csv") != std::string_view::npos) q.format = F::kCsv;
  if (opts.find(";typed") != std::string_view::npos) q.format = F::kTyped;
  if (opts.find(";json") != std::string_view::npos) q.format = F::kJson;
  q.hide_down = opts.find(";up") != std::string_view::npos;
  q.hide_maint = opts.find(";no-maint") != std::string_view::npos;
  q.show_legends = sp.show_legends;
  q.scope_names = sp.scope;
  std::string_view scope = stats_option(opts, "scope=");
  if (scope.size() > 20) scope = scope.substr(0, 20);
  if (scope.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:") ==
      std::string_view::npos)
    q.scope_text = std::string(scope);
  q.uri = sp.uri;
  bool refresh = sp.refresh_s && opts.find(";norefresh") == std::string_view::npos;
  q.refresh_s = refresh ? sp.refresh_s : 0;
  q.hide_version = sp.hide_version;
  q.node = sp.node;
  q.desc = sp.desc;
  q.status = std::string(stats_option(opts, ";st="));
  r.kind = Reply::Kind::kPage;
  r.content_type = q.format == F::kHtml   ? "text/html"
                   : q.format == F::kJson ? "application/json"
                                          : "text/plain";
  if (refresh) r.headers = fmt::format("refresh: {}\r\n", sp.refresh_s);
  r.body = render_stats_page(source_, q);
  return r;
}

Reply HttpService::prometheus(const ServiceRequest& req) const {
  StatsPageQuery q;
  q.format = StatsPageQuery::Format::kPrometheus;
  std::string_view query = query_of(req.target);
  bool scoped = false;
  while (!query.empty()) {
    std::size_t amp = query.find('&');
    std::string_view param = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (param == "no-maint") {
      q.hide_maint = true;
    } else if (param.starts_with("scope=")) {
      if (!scoped) q.prom_global = q.prom_frontend = q.prom_backend = q.prom_server = false;
      scoped = true;
      std::string_view v = param.substr(6);
      if (v == "global" || v == "*") q.prom_global = true;
      if (v == "frontend" || v == "*") q.prom_frontend = true;
      if (v == "backend" || v == "*") q.prom_backend = true;
      if (v == "server" || v == "*") q.prom_server = true;
    }
  }
  Reply r;
  r.kind = Reply::Kind::kPage;
  r.content_type = "text/plain; version=0.0.4";
  r.body = render_stats_page(source_, q);
  return r;
}

}  // namespace sluice::stats

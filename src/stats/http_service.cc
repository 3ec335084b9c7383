// The statistics page and the Prometheus exporter as HTTP services: the request's method,
// target and credentials in, what to answer out.
#include "stats/http_service.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "auth/userlist.h"
#include "base/strings.h"
#include "stats/admin.h"

namespace sluice::stats {
namespace {


// `Authorization: Basic <base64 of user:password>` naming one of `accounts`.
bool authorized(std::optional<std::string_view> authorization,
                const std::vector<std::string>& accounts) {
  if (!authorization) return false;
  const auth::Credentials c = auth::parse_authorization(*authorization);
  if (c.method != auth::Credentials::Method::kBasic) return false;
  const std::string account = c.user + ":" + c.pass;
  return std::find(accounts.begin(), accounts.end(), account) != accounts.end();
}

// The value after `key` in the stats options (`scope=`), up to `;`, `&`, a space or
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

// The result code of `;st=`: the four characters after it, whatever they are (HAProxy shows
// "Unexpected result." for an unknown code, and no banner when fewer than four follow).
std::string_view status_code(std::string_view opts) {
  std::size_t at = opts.find(";st=");
  if (at == std::string_view::npos || opts.size() - at - 4 < 4) return {};
  return opts.substr(at + 4, 4);
}

Reply redirect_status(const PageSettings& sp, AdminStatus status) {
  Reply r;
  r.kind = Reply::Kind::kRedirect;
  // Always the configured prefix, whatever options the POST's target carried.
  r.location = sp.uri + ";st=" + std::string(admin_status_code(status));
  return r;
}

}  // namespace

Reply HttpService::admin_post(const ServiceRequest& req, const PageSettings& sp) const {
  // Without admin rights the body is not even read. Without a ServerControl (a process
  // that cannot change its servers) there is nothing to apply it to either.
  if (!req.admin || !control_) return redirect_status(sp, AdminStatus::kDeny);
  using B = ServiceRequest::Body;
  if (req.body_state == B::kNotRead) {
    Reply r;
    r.kind = Reply::Kind::kNeedBody;
    return r;
  }
  if (req.body_state == B::kTooLarge) return redirect_status(sp, AdminStatus::kExcd);
  return redirect_status(sp, apply_admin_form(parse_admin_form(req.body), *control_));
}

// The part of a request-target the stats URI prefix is compared with: from the path on (an
// absolute-form target's scheme and authority are skipped).
std::string_view stats_uri_path(std::string_view target) {
  if (target.empty() || target[0] == '/') return target;
  std::size_t scheme = target.find("://");
  if (scheme == std::string_view::npos) return target;
  std::size_t path = target.find('/', scheme + 3);
  return path == std::string_view::npos ? std::string_view("/") : target.substr(path);
}

bool HttpService::claims(const ServiceRequest& req, const PageSettings& sp) {
  using M = ServiceRequest::Method;
  if (!sp.enabled) return false;
  if (req.method != M::kGet && req.method != M::kHead && req.method != M::kPost) return false;
  return stats_uri_path(req.target).starts_with(sp.uri);
}

Reply HttpService::stats_page(const ServiceRequest& req, const PageSettings& sp) const {
  Reply r;
  if (!claims(req, sp)) return r;
  using M = ServiceRequest::Method;
  std::string_view uri = stats_uri_path(req.target);
  if (!sp.auth.empty() && !authorized(req.authorization, sp.auth)) {
    r.kind = Reply::Kind::kUnauthorized;
    r.realm = sp.realm;
    return r;
  }
  std::string_view opts = uri.substr(sp.uri.size());
  if (req.method == M::kPost) return admin_post(req, sp);
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
  q.status = std::string(status_code(opts));
  q.admin = req.admin;
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

#pragma once
// The HTTP services of the stats module: the statistics page (`stats uri`, `stats auth`, ...)
// and the Prometheus exporter (`http-request use-service prometheus-exporter`). The HTTP
// transaction (proxy::H1Connection) hands over what it parsed of the request and sends the
// Reply: it frames the body (chunked, with a length, or the head alone for HEAD), counts and
// logs it as for any answer it generates. Nothing here touches a socket. Any thread (reads the
// StatsSource, which any thread may).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stats/control.h"
#include "stats/page.h"
#include "stats/snapshot.h"

namespace sluice::stats {

// `stats uri` and friends, as one proxy's configuration sets them.
struct PageSettings {
  bool enabled = false;
  std::string uri;                        // the prefix of the page's URIs
  uint32_t refresh_s = 0;                 // `stats refresh`; 0: none
  std::string realm;                      // `stats realm`
  std::vector<std::string> auth;          // "user:password"; empty: no authentication
  std::vector<std::string> scope;         // proxy names ("." already resolved)
  bool hide_version = false;
  bool show_legends = false;
  std::string node, desc;                 // shown when not empty
};

// What the services read of a request.
struct ServiceRequest {
  enum class Method { kGet, kHead, kPost, kOther };
  Method method = Method::kGet;
  std::string_view target;                     // the request-target, as the rules left it
  std::optional<std::string_view> authorization;  // the first Authorization field's value
  // `stats admin if|unless <cond>` matched this request: the page shows the admin forms and
  // a POST may change servers.
  bool admin = false;
  // A POST's body, which the admin actions read. kNotRead: the transaction has not waited
  // for it (stats_page() then answers kNeedBody when it needs it); kComplete: `body` is the
  // whole body, chunks decoded; kTooLarge: it did not fit in a buffer.
  enum class Body { kNotRead, kComplete, kTooLarge };
  Body body_state = Body::kNotRead;
  std::string_view body;
};

// What to answer. The session builds the bytes: a kPage is a 200 with `cache-control:
// no-cache`, `content-type`, the `headers` lines and the framed `body`; a kRedirect a 303
// to `location` with no body; kUnauthorized the built-in 401 page with `www-authenticate:
// Basic realm="<realm>"`; kNotFound the proxy's 404 error page. kNeedBody: ask again with
// the request's body (ServiceRequest::body_state kComplete or kTooLarge).
struct Reply {
  enum class Kind { kNotMine, kPage, kRedirect, kUnauthorized, kNotFound, kNeedBody };
  Kind kind = Kind::kNotMine;                  // kNotMine: not this service's request
  std::string content_type;                    // kPage
  std::string headers;                         // kPage: extra "name: value\r\n" lines
  std::string body;                            // kPage
  std::string location;                        // kRedirect
  std::string realm;                           // kUnauthorized
};

// The part of a request-target the page's prefix is compared with: from the path on (an
// absolute-form target's scheme and authority skipped).
std::string_view stats_uri_path(std::string_view target);

class HttpService {
 public:
  // `control` applies the admin actions of a POST; without one a POST is denied.
  explicit HttpService(const StatsSource& source, ServerControl* control = nullptr)
      : source_(source), control_(control) {}

  // `stats uri`: GET, HEAD and POST whose path (an absolute-form target's scheme and authority
  // skipped) starts with the prefix are this page's; anything else is kNotMine. The options
  // after the prefix pick the form (`;csv`, `;typed`, `;json`; `;json-schema` is a 404, as
  // sluice publishes no schema), the rows (`;up`, `;no-maint`, `scope=<text>`), `;norefresh`
  // and the result banner (`;st=<code>`). A POST asks for admin actions (HAProxy's form:
  // `s=<server>` repeated, `action=<act>`, `b=<backend or #id>`): without `admin` it is
  // redirected to `<uri>;st=DENY`; with it, the actions are applied through the
  // ServerControl and the answer is a 303 to `<uri>;st=<DONE|NONE|PART|ERRP|EXCD|IVAL>`.
  Reply stats_page(const ServiceRequest& req, const PageSettings& settings) const;
  // Whether stats_page() would take the request (not kNotMine): GET, HEAD or POST whose path
  // starts with the page's prefix. The proxy runs its `stats http-request` rules only then.
  static bool claims(const ServiceRequest& req, const PageSettings& settings);

  // `use-service prometheus-exporter`: the query's `scope=` parameters pick the metric groups
  // (global, frontend, backend, server, `*`; all without any), `no-maint` leaves out servers
  // in maintenance, as HAProxy's exporter does. Always a kPage.
  Reply prometheus(const ServiceRequest& req) const;

 private:
  // A POST to the page: the admin actions (stats/admin.h) and the 303 that reports them.
  Reply admin_post(const ServiceRequest& req, const PageSettings& settings) const;

  const StatsSource& source_;
  ServerControl* control_;
};

}  // namespace sluice::stats

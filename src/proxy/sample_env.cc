#include "proxy/sample_env.h"

#include <algorithm>

#include "lb/backend.h"
#include "lb/server.h"

namespace sluice::proxy {

bool ProxyEnv::query(Query q, int64_t* out) const {
  return stream && stream->stream_query(q, response_side, out);
}

std::string_view ProxyEnv::backend_name() const {
  return be ? std::string_view(be->settings.name) : std::string_view();
}

std::string_view ProxyEnv::server_name() const {
  return srv ? std::string_view(srv->name()) : std::string_view();
}

int ProxyEnv::server_id() const { return srv ? srv->settings().id : 0; }

std::string_view ProxyEnv::listener_name() const {
  if (!l_ || !l_->line) return {};
  return l_->line->settings.name;
}

const Proxy* ProxyEnv::proxy_named(std::string_view name, bool frontend) const {
  if (name.empty()) return frontend ? &fe_ : be;
  return p_.proxy_named(name, frontend);
}

const lb::Server* ProxyEnv::server_named(const Proxy* px, std::string_view name) const {
  if (!px || !px->backend) return nullptr;
  if (name.empty()) return px == be ? srv : nullptr;
  return px->backend->find_server(name);
}

int ProxyEnv::nbsrv(std::string_view backend) const {
  const Proxy* px = proxy_named(backend, false);
  if (!px || !px->backend) return -1;
  // HAProxy: the usable active servers, or the usable backups when no active one is.
  int active = px->backend->usable_active();
  return active > 0 ? active : px->backend->usable_backup();
}

int ProxyEnv::be_conn(std::string_view backend) const {
  const Proxy* px = proxy_named(backend, false);
  return px ? px->be_conns.load(std::memory_order_relaxed) : -1;
}

int ProxyEnv::fe_conn(std::string_view frontend) const {
  const Proxy* px = proxy_named(frontend, true);
  return px ? px->feconn.current() : -1;
}

int ProxyEnv::srv_conn(std::string_view backend, std::string_view server) const {
  const lb::Server* s = server_named(proxy_named(backend, false), server);
  return s ? s->current_conns() : -1;
}

bool ProxyEnv::stopping() const { return p_.stopping(); }

int ProxyEnv::thread_id() const { return thread_; }

bool ProxyEnv::proxy_stat(ProxyStat st, std::string_view proxy, std::string_view server,
                          int64_t* out) const {
  const bool fe_side = st == ProxyStat::kFeReqRate || st == ProxyStat::kFeSessRate;
  const Proxy* px = proxy_named(proxy, fe_side);
  if (!px) return false;
  switch (st) {
    case ProxyStat::kQueue:
      *out = px->queued.load(std::memory_order_relaxed);
      return true;
    case ProxyStat::kAvgQueue: {
      if (!px->backend) return false;
      int64_t q = px->queued.load(std::memory_order_relaxed);
      int64_t n = px->backend->usable_active();
      if (n == 0) n = px->backend->usable_backup();
      *out = n > 0 ? (q + n - 1) / n : q;
      return true;
    }
    case ProxyStat::kConnSlots:
    case ProxyStat::kBeConnFree: {
      if (!px->backend) return false;
      int64_t free_slots = 0;
      for (const auto& s : px->backend->servers()) {
        if (!s->usable()) continue;
        int m = s->maxconn();
        if (m == 0) {
          *out = -1;   // unlimited
          return true;
        }
        if (s->current_conns() < m) free_slots += m - s->current_conns();
      }
      *out = free_slots;
      return true;
    }
    case ProxyStat::kSrvConnFree:
    case ProxyStat::kSrvIsUp:
    case ProxyStat::kSrvWeight:
    case ProxyStat::kSrvIweight:
    case ProxyStat::kSrvUweight: {
      const lb::Server* s = server_named(px, server);
      if (!s) return false;
      switch (st) {
        case ProxyStat::kSrvConnFree: {
          int m = s->maxconn();
          *out = m == 0 ? -1 : std::max(0, m - s->current_conns());
          return true;
        }
        case ProxyStat::kSrvIsUp: *out = s->admin_up() && s->check_up() ? 1 : 0; return true;
        case ProxyStat::kSrvWeight: *out = s->eweight(); return true;
        case ProxyStat::kSrvIweight: *out = s->initial_weight(); return true;
        default: *out = s->weight(); return true;
      }
    }
    default:
      // Rates and server queues: not kept per proxy in a form the data path can read yet.
      return false;
  }
}

bool ProxyEnv::text(TextQuery q, std::string_view* out) const {
  if (q == TextQuery::kDefaultBackend) {
    int i = fe_.settings.default_backend;
    if (i < 0) return false;
    *out = p_.proxies()[static_cast<std::size_t>(i)]->settings.name;
    return true;
  }
  return false;
}

}  // namespace sluice::proxy

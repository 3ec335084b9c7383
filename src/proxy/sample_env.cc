#include "proxy/sample_env.h"

#include <algorithm>

#include "base/clock.h"
#include "lb/backend.h"
#include "lb/server.h"
#include "log/conn_error.h"
#include "log/line.h"
#include "proxy/backend_leg.h"
#include "proxy/worker.h"

namespace sluice::proxy {

bool ProxyEnv::query(Query q, int64_t* out) const {
  // The stream answers first (its timers, ids, its server connection, set-timeout's values);
  // what is left is the process's, the listener's and the proxies' settings.
  if (rec && log::stream_query(*rec, q, true, out)) return true;
  const auto answer = [out](int64_t v) {
    *out = v;
    return true;
  };
  if (stream) {
    if (q == Query::kTxnId32) return answer(static_cast<uint32_t>(stream->stream_number()));
    if (q == Query::kFcTotalMs)
      return answer(static_cast<int64_t>(base::monotonic_ms() - stream->accept_ms()));
    if (stream->stream_query(q, response_side, out)) return true;
  }
  switch (q) {
    case Query::kActConn: return answer(p_.actconn().current());
    case Query::kCpuUsageThr:
    case Query::kCpuUsageGrp:
    case Query::kCpuUsageProc: {
      // This worker's share, or the average of its group's or of all workers.
      const auto& ws = p_.workers();
      if (static_cast<std::size_t>(thread_) >= ws.size()) return false;
      const Worker& me = *ws[static_cast<std::size_t>(thread_)];
      if (q == Query::kCpuUsageThr) return answer(me.cpu_usage());
      int64_t sum = 0, n = 0;
      for (const auto& w : ws) {
        if (q == Query::kCpuUsageGrp && w->group() != me.group()) continue;
        sum += w->cpu_usage();
        ++n;
      }
      return answer(n ? sum / n : 0);
    }
    case Query::kUptime:
      return answer(static_cast<int64_t>((base::monotonic_ms() - p_.start_mono_ms()) / 1000));
    // No set-priority-*, no task profiling (HAProxy's values are 0 without
    // `profiling.tasks on`), no connection error and no protocol glitch to report (an HTTP
    // stream answers fc_err and fc_glitches itself).
    case Query::kPrioClass:
    case Query::kPrioOffset:
    case Query::kCpuNsTot:
    case Query::kLatNsTot:
    case Query::kFcErr:   // a stream that saw no error on its client connection
    case Query::kFcGlitches:
    case Query::kFcHandshakeMs:   // no TLS, no PROXY protocol: nothing between accept and data
      return answer(0);
    case Query::kFcNbStreams:     // HTTP/1 and TCP: one stream per connection
    case Query::kFcStreamsLimit:
      return answer(1);
    case Query::kDstConn: {
      if (!l_) return false;
      int64_t n = 0;
      for (std::size_t i = 0; i < l_->threads.size(); ++i)
        n += std::max(0, l_->given[i].load(std::memory_order_relaxed));
      return answer(n);
    }
    case Query::kFeClientTimeout:
    case Query::kCurClientTimeout:
      return answer(fe_.settings.timeouts.client);
    // sluice has no `timeout tarpit` yet: a frontend's is then 0 and a backend's is its
    // connect timeout, as HAProxy sets them.
    case Query::kFeTarpitTimeout: return answer(0);
    default: break;
  }
  // Before a backend is chosen the stream's backend is the proxy itself, as in HAProxy: a
  // listen's settings, or nothing (0) for a frontend, which has no backend side.
  const Proxy* bp = be ? be : fe_.backend ? &fe_ : nullptr;
  const Timeouts none;
  const Timeouts& t = bp ? bp->settings.timeouts : none;
  switch (q) {
    case Query::kBeServerTimeout:
    case Query::kCurServerTimeout: return answer(t.server);
    case Query::kBeTunnelTimeout:
    case Query::kCurTunnelTimeout: return answer(t.tunnel);
    case Query::kBeConnectTimeout:
    case Query::kCurConnectTimeout:
    case Query::kBeTarpitTimeout:
    case Query::kCurTarpitTimeout: return answer(t.connect);
    case Query::kBeQueueTimeout:
    case Query::kCurQueueTimeout: return answer(t.queue);
    case Query::kBeMaxRetries:
    case Query::kCurMaxRetries: return answer(bp ? bp->settings.retries : 0);
    default: return false;
  }
}

bool leg_query(const BackendLeg& leg, bool http, bool reused, sample::Env::Query q, int64_t* out) {
  using Q = sample::Env::Query;
  const auto answer = [out](int64_t v) {
    *out = v;
    return true;
  };
  switch (q) {
    case Q::kConnRetries: return answer(leg.retries());
    case Q::kRedispatched: return answer(leg.redispatched() ? 1 : 0);
    case Q::kBcErr: return leg.error_code(out);
    default: break;
  }
  // The rest describes the server connection: nothing before there is one.
  if (!leg.connected_ms()) return false;
  switch (q) {
    case Q::kBcConnectMs: return answer(static_cast<int64_t>(leg.connected_ms() - leg.connect_ms()));
    case Q::kBcReused: return answer(reused ? 1 : 0);
    case Q::kBcGlitches: return answer(0);
    case Q::kBcNbStreams:
    case Q::kBcStreamsLimit: return answer(1);
    case Q::kBcHttpMajor: return http && answer(1);
    // The queues this stream found when it was queued; one that never waited found none.
    case Q::kBcSrvQueue:
    case Q::kBcBeQueue: return !leg.queued_ms() && answer(0);
    default: return false;
  }
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
    case ProxyStat::kFeReqRate:
    case ProxyStat::kFeSessRate:
    case ProxyStat::kBeSessRate: {
      // Every worker's share of the rate, as `show stat` adds them.
      const uint64_t now = base::monotonic_ms();
      uint64_t sum = 0;
      for (const auto& w : p_.workers()) {
        if (st == ProxyStat::kBeSessRate) sum += w->be_counters(px->index).sess_rate.read(now);
        else if (st == ProxyStat::kFeSessRate) sum += w->fe_counters(px->index).sess_rate.read(now);
        else sum += w->fe_counters(px->index).req_rate.read(now);
      }
      *out = static_cast<int64_t>(sum);
      return true;
    }
    case ProxyStat::kSrvSessRate:
    case ProxyStat::kSrvQueue: {
      const lb::Server* s = server_named(px, server);
      if (!s) return false;
      if (st == ProxyStat::kSrvQueue) {
        *out = 0;   // sessions wait in their backend's queue (qcur of the server row is 0 too)
        return true;
      }
      const uint64_t now = base::monotonic_ms();
      uint64_t sum = 0;
      for (const auto& w : p_.workers())
        sum += w->srv_counters(px->server_base + s->index()).sess_rate.read(now);
      *out = static_cast<int64_t>(sum);
      return true;
    }
  }
  return false;
}

bool ProxyEnv::text(TextQuery q, std::string_view* out) const {
  if (q == TextQuery::kTermState && rec) {
    // A log line: how the stream ended.
    term_[0] = log::cause_letter(rec->term.cause);
    term_[1] = log::state_letter(rec->term.state);
    *out = std::string_view(term_, 2);
    return true;
  }
  if (stream && stream->stream_text(q, out)) return true;
  switch (q) {
    case TextQuery::kDefaultBackend: {
      int i = fe_.settings.default_backend;
      if (i < 0) return false;
      *out = p_.proxies()[static_cast<std::size_t>(i)]->settings.name;
      return true;
    }
    case TextQuery::kFcErrStr:
    case TextQuery::kFcErrName:
    case TextQuery::kBcErrStr:
    case TextQuery::kBcErrName: {
      // The texts of fc_err / bc_err: a connection without an error is HAProxy's "Success"
      // with no short name.
      const bool fc = q == TextQuery::kFcErrStr || q == TextQuery::kFcErrName;
      int64_t code = -1;
      if (!query(fc ? Query::kFcErr : Query::kBcErr, &code)) return false;
      const auto e = static_cast<log::ConnError>(code);
      *out = q == TextQuery::kFcErrStr || q == TextQuery::kBcErrStr ? log::conn_error_text(e)
                                                                    : log::conn_error_name(e);
      return true;
    }
    default:
      return false;
  }
}

}  // namespace sluice::proxy

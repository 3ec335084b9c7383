#include "proxy/stats_view.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "base/clock.h"
#include "base/version.h"
#include "core/thread_plan.h"
#include "net/socket.h"
#include "net/cert_store.h"
#include "net/tls.h"
#include "proxy/log.h"
#include "proxy/worker.h"

namespace sluice::proxy {

namespace {

// Adds one thread's block into a snapshot.
void accumulate(stats::Counters& c, const stats::TrafficCounters& t, uint64_t now_ms,
                uint64_t& last_sess_ms) {
  c.stot += t.stot.get();
  c.smax = std::max(c.smax, t.smax.get());
  c.bin += t.bin.get();
  c.bout += t.bout.get();
  c.econ += t.econ.get();
  c.eresp += t.eresp.get();
  c.wretr += t.wretr.get();
  c.wredis += t.wredis.get();
  c.cli_abrt += t.cli_abrt.get();
  c.srv_abrt += t.srv_abrt.get();
  c.connect += t.connect.get();
  c.lbtot += t.lbtot.get();
  c.conn_tot += t.conn_tot.get();
  c.ereq += t.ereq.get();
  c.eint += t.eint.get();
  c.rate += t.sess_rate.read(now_ms);
  // Peak rates are kept per thread; their sum bounds the process peak from above and equals
  // it when the load is spread evenly, which is what multi-threaded listeners aim for.
  c.rate_max += t.sess_rate.max();
  c.conn_rate += t.conn_rate.read(now_ms);
  c.conn_rate_max += t.conn_rate.max();
  last_sess_ms = std::max(last_sess_ms, t.last_sess_ms.get());
  c.req_tot += t.req_tot.get();
  c.hrsp_1xx += t.hrsp[0].get();
  c.hrsp_2xx += t.hrsp[1].get();
  c.hrsp_3xx += t.hrsp[2].get();
  c.hrsp_4xx += t.hrsp[3].get();
  c.hrsp_5xx += t.hrsp[4].get();
  c.hrsp_other += t.hrsp[5].get();
  c.dreq += t.dreq.get();
  c.dcon += t.dcon.get();
  c.dses += t.dses.get();
  c.dresp += t.dresp.get();
  c.intercepted += t.intercepted.get();
  c.reuse += t.reuse.get();
  c.req_rate += t.req_rate.read(now_ms);
  c.req_rate_max += t.req_rate.max();
}

int64_t age_s(uint64_t last_ms, uint64_t now_ms) {
  if (last_ms == 0) return -1;
  return static_cast<int64_t>((now_ms - std::min(now_ms, last_ms)) / 1000);
}


// Health-check fields of a server row (spec cli-and-stats 3.4-3.6), from what its checker
// publishes in lb::CheckState. Runs after the admin-state fields: only a running server's
// status ("no check") is replaced by the check's view of it.
void fill_health_fields(const lb::Server& srv, stats::ServerSnapshot& ss, uint64_t now) {
  const lb::CheckState& cs = srv.check_state();
  ss.hanafail = cs.hanafail.load(std::memory_order_relaxed);
  if (!cs.enabled) return;
  int health = cs.health.load(std::memory_order_relaxed);
  ss.check_configured = true;
  ss.check_last_status = lb::check_status_code(cs.status.load(std::memory_order_relaxed));
  ss.check_last_health = health;
  if (cs.paused.load(std::memory_order_relaxed)) return;   // `disable health`: "no check"
  ss.check_enabled = true;
  int top = cs.rise + cs.fall - 1;
  ss.check_rise = cs.rise;
  ss.check_fall = cs.fall;
  ss.check_health = health;
  ss.check_status = lb::check_status_code(cs.status.load(std::memory_order_relaxed));
  ss.check_code = cs.code.load(std::memory_order_relaxed);
  // A verdict of the traffic (HANA) took no time: HAProxy shows 0 (its logs show none).
  const bool hana = cs.status.load(std::memory_order_relaxed) == lb::CheckStatus::kHana;
  ss.check_duration_ms =
      std::max<int64_t>(cs.duration_ms.load(std::memory_order_relaxed), hana ? 0 : -1);
  ss.last_chk = cs.text();
  ss.chkfail = cs.chkfail.load(std::memory_order_relaxed);
  ss.chkdown = cs.chkdown.load(std::memory_order_relaxed);
  ss.downtime_s = cs.downtime_at(now) / 1000;
  if (uint64_t t = srv.last_change_ms(); t && now >= t) ss.lastchg_s = static_cast<int64_t>((now - t) / 1000);
  // MAINT wins over everything, resolution maintenance (init-addr none) too.
  if (srv.admin_state() == lb::AdminState::kMaint || srv.settings().unresolved) return;
  std::string progress =
      health < top ? fmt::format(" {}/{}", health - cs.rise + 1, cs.fall) : std::string();
  // Stopping (spec 3.5 rule 5) comes before the drain of a running server (rule 4).
  if (srv.check_up() && srv.stopping()) {
    ss.status = "NOLB" + progress;
    return;
  }
  if (srv.admin_state() != lb::AdminState::kReady) return;   // DRAIN: the admin state wins
  if (srv.check_up()) {
    ss.status = "UP" + progress;
  } else {
    ss.op_state = 0;
    ss.status = health == 0 ? "DOWN" : fmt::format("DOWN {}/{}", health, cs.rise);
  }
}

// The health check's fields, then the agent's (agent-check): an agent that said down makes
// a server HAProxy's "DOWN (agent)" unless it is in maintenance or its check has it DOWN.
void fill_check_fields(const lb::Server& srv, stats::ServerSnapshot& ss, uint64_t now) {
  fill_health_fields(srv, ss, now);
  const lb::CheckState& cs = srv.check_state();
  ss.check_port = cs.port.load(std::memory_order_relaxed);
  ss.check_addr = cs.addr();
  const lb::CheckState& as = srv.agent_state();
  if (as.enabled) {
    ss.agent_port = as.port.load(std::memory_order_relaxed);
    ss.agent_addr = as.addr();
  }
  if (!as.enabled || as.paused.load(std::memory_order_relaxed)) return;
  ss.agent_enabled = true;
  ss.agent_status = lb::check_status_code(as.status.load(std::memory_order_relaxed));
  ss.agent_duration_ms = as.duration_ms.load(std::memory_order_relaxed);
  ss.last_agt = as.text();
  ss.agent_rise = as.rise;
  ss.agent_fall = as.fall;
  ss.agent_health = as.health.load(std::memory_order_relaxed);
  if (!srv.agent_up() && srv.check_up() && srv.admin_state() != lb::AdminState::kMaint &&
      !srv.settings().unresolved) {
    ss.op_state = 0;
    ss.status = "DOWN (agent)";
  }
}

}  // namespace

stats::ProcessSnapshot StatsView::process() const {
  stats::ProcessSnapshot s;
  uint64_t now = base::monotonic_ms();
  const auto& set = p_.settings();
  s.version = base::kVersion;
  s.release_date = base::kReleaseDate;
  s.pid = getpid();
  s.nbthread = static_cast<int>(p_.workers().size());
  s.nbtgroups = p_.settings().nbtgroups;
  s.uptime_s = (now - p_.start_mono_ms()) / 1000;
  s.start_time_s = p_.start_wall_s();
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  s.ulimit_n = rl.rlim_cur;
  s.maxsock = rl.rlim_cur;
  s.maxconn = static_cast<uint64_t>(std::max(0, p_.actconn().limit()));   // `set maxconn global`
  s.hard_maxconn = static_cast<uint64_t>(set.hard_maxconn ? set.hard_maxconn : set.maxconn);
  s.curr_conns = static_cast<uint64_t>(std::max(0, p_.actconn().current()));
  s.cum_conns = p_.cum_conns().load(std::memory_order_relaxed);
  s.conn_rate_limit = static_cast<uint64_t>(std::max(0, set.max_conn_rate));
  s.sess_rate_limit = s.conn_rate_limit;
  s.node = set.node;
  s.description = set.description;
  s.stopping = p_.stopping() || p_.stop_announced();
  s.listeners = 0;
  // A soft stop shuts the proxy listeners down (their descriptors stay open until the end):
  // HAProxy deletes them then, which takes them out of Listeners and Jobs.
  if (!p_.stopping())
    for (const auto& l : p_.listeners())
      if (l->fd >= 0) ++s.listeners;
  // Stats sockets are listeners too, and their connections are jobs (HAProxy counts both),
  // although neither counts against maxconn (CurrConns). HAProxy gives a stats socket one
  // listener per thread group (sharding spec 4 and 6); sluice serves it from one socket.
  uint64_t cli_conns = 0;
  const uint64_t groups = static_cast<uint64_t>(std::max(1, p_.settings().nbtgroups));
  for (const auto& sl : p_.special_listeners()) {
    // Shut down at a soft stop too (established CLI connections stay), as HAProxy does.
    if (sl->fd >= 0 && !p_.stopping() && !sl->channel) s.listeners += groups;
    cli_conns += static_cast<uint64_t>(std::max(0, sl->conns.load(std::memory_order_relaxed)));
  }
  s.dropped_logs = LogWriter::dropped.load(std::memory_order_relaxed);
  uint64_t tasks = 0;
  uint64_t ticket_resumptions = 0;
  for (const auto& w : p_.workers()) {
    for (std::size_t i = 0; i < p_.proxies().size(); ++i) {
      const auto& fc = w->fe_counters(static_cast<int>(i));
      s.conn_rate += fc.conn_rate.read(now);
      s.max_conn_rate += fc.conn_rate.max();
      s.sess_rate += fc.sess_rate.read(now);
      s.cum_req += fc.req_tot.get();   // HTTP requests received by every frontend
      s.max_sess_rate += fc.sess_rate.max();
      s.total_bytes_out += fc.bout.get();
      s.cum_streams += fc.stot.get();
    }
    tasks += w->sessions();
    const Worker::TlsRates& tr = w->tls_rates();
    s.ssl_rate += tr.conns.read(now);
    s.max_ssl_rate += tr.conns.max();
    s.ssl_fe_key_rate += tr.fe_keys.read(now);
    s.ssl_fe_max_key_rate += tr.fe_keys.max();
    s.ssl_be_key_rate += tr.be_keys.read(now);
    s.ssl_be_max_key_rate += tr.be_keys.max();
    ticket_resumptions += tr.ticket_resumptions.get();
  }
  s.curr_ssl_conns = net::tls::live_connections();
  s.max_ssl_conns = static_cast<uint64_t>(std::max(0, set.max_ssl_conn));
  s.ssl_rate_limit = static_cast<uint64_t>(std::max(0, set.max_ssl_rate));
  s.cum_ssl_conns = net::tls::total_connections();
  // HAProxy's rounding: the share of frontend connections that needed no new key.
  if (s.ssl_fe_key_rate < s.ssl_rate)
    s.ssl_fe_reuse_pct = 100 - (100 * s.ssl_fe_key_rate + (s.ssl_rate - 1) / 2) / s.ssl_rate;
  // Each bind line's session cache, once (its context is shared by the line's shards).
  // OpenSSL counts the resumptions from tickets among its hits; HAProxy's lookups are those
  // of the cache by session id only.
  std::vector<const net::tls::ContextSlot*> seen;
  for (const auto& l : p_.listeners()) {
    const net::tls::ContextSlot* slot = l->line ? l->line->settings.tls.get() : nullptr;
    if (!slot || std::find(seen.begin(), seen.end(), slot) != seen.end()) continue;
    seen.push_back(slot);
    uint64_t hits = 0, misses = 0;
    slot->get()->cache_stats(&hits, &misses);
    s.ssl_cache_lookups += hits + misses;
    s.ssl_cache_misses += misses;
  }
  s.ssl_cache_lookups -= std::min(s.ssl_cache_lookups, ticket_resumptions);
  s.tasks = tasks;
  s.curr_streams = tasks;
  s.jobs = s.curr_conns + cli_conns + s.listeners;
  s.maxconn_reached = p_.maxconn_reached_count();
  return s;
}

std::vector<stats::ProxySnapshot> StatsView::proxies() const {
  std::vector<stats::ProxySnapshot> out;
  uint64_t now = base::monotonic_ms();
  for (const auto& pp : p_.proxies()) {
    const Proxy& p = *pp;
    // Disabled proxies are left out of every dump (spec 3.3); their ids stay taken.
    if (p.settings.disabled) continue;
    stats::ProxySnapshot ps;
    ps.name = p.settings.name;
    ps.id = p.settings.id;
    ps.id_forced = p.settings.id_forced;
    ps.is_frontend = p.settings.frontend;
    ps.is_backend = p.settings.backend;
    ps.mode = p.settings.http ? "http" : "tcp";
    ps.maxconn = p.feconn.limit();   // `set maxconn frontend` changes it
    int fe_state = p.fe_state.load(std::memory_order_acquire);
    ps.frontend_status = p_.stopping() || fe_state == Proxy::kFeStopped ? "STOP"
                         : fe_state == Proxy::kFePaused                 ? "PAUSED"
                                                                        : "OPEN";
    uint64_t fe_last = 0, be_last = 0;
    for (const auto& w : p_.workers()) {
      accumulate(ps.frontend, w->fe_counters(p.index), now, fe_last);
      accumulate(ps.backend, w->be_counters(p.index), now, be_last);
    }
    ps.frontend.scur = static_cast<uint64_t>(std::max(0, p.feconn.current()));
    // `option socket-stats`: one row per listener, as HAProxy keeps counters per listener only
    // then. sluice counts connections per listener (current and total); the rest stays 0.
    if (p.settings.frontend && p.settings.socket_stats) {
      for (auto& li : listeners()) {
        if (li.proxy != ps.name) continue;
        li.c.scur = li.cur_conns;
        li.c.stot = li.c.conn_tot = li.cum_conns;
        ps.listeners.push_back(std::move(li));
      }
    }
    if (p.settings.backend) {
      auto& be = *p.backend;
      // Without traffic no pick moves a slow start on: the weights shown must not lag.
      be.catch_up_slowstart(now);
      ps.algo = be.algorithm_name();
      if (p.settings.cookie) ps.cookie = p.settings.cookie->name;
      ps.backend.scur = static_cast<uint64_t>(std::max(0, p.be_conns.load(std::memory_order_relaxed)));
      ps.backend.last_sess_s = age_s(be_last, now);
      ps.backend_qcur = static_cast<uint64_t>(std::max(0, p.queued.load(std::memory_order_relaxed)));
      ps.backend_qmax = static_cast<uint64_t>(std::max(0, p.queued_max.load(std::memory_order_relaxed)));
      // A backend without any server is UP for HAProxy (it only counts servers that failed).
      ps.backend_status =
          be.servers().empty() || (be.usable_active() + be.usable_backup()) > 0 ? "UP" : "DOWN";
      ps.backend_lastchg_s = static_cast<int64_t>((now - p_.start_mono_ms()) / 1000);
      // fullconn: HAProxy's default is 10% of the sum of the maxconns of the frontends that
      // use this backend, at least 1.
      long sum = 0;
      for (const auto& f : p_.proxies())
        if (f->target == &p && f->settings.frontend) sum += f->settings.maxconn;
      ps.fullconn = static_cast<int>(std::max<long>(1, (sum + 9) / 10));
      for (const auto& sp : be.servers()) {
        const lb::Server& srv = *sp;
        stats::ServerSnapshot ss;
        const auto& st = srv.settings();
        ss.name = st.name;
        ss.id = st.id;
        ss.id_forced = st.id_forced;
        // The value the CLI published last (`set dynamic-cookie-key`...), not the configured one.
        ss.cookie = p.settings.cookie_table
                        ? p.settings.cookie_table->value(static_cast<std::size_t>(srv.index()))
                        : st.cookie;
        // The address `set server addr` published last, not the configured one.
        const lb::ServerEndpoint ep = srv.endpoint();
        if (!st.unresolved) {   // init-addr none: no address to show (HAProxy: empty, "-")
          ss.addr = ep.addr.to_string();
          ss.host = ep.addr.host_string();
        }
        ss.port = ep.port_mapped ? 0 : ep.addr.port();
        ss.fqdn = st.fqdn;
        ss.use_ssl = st.tls != nullptr;
        ss.weight = srv.weight();
        ss.eweight = srv.eweight();
        ss.eweight_scaled = ss.weight * srv.ramp();
        ss.throttle = srv.throttle();
        ss.initial_weight = st.weight;
        ss.maxconn = srv.maxconn();
        ss.backup = st.backup;
        // Administrative state first (spec 3.5: MAINT wins over everything), then the
        // operational state that the health verdict (or `set server health`) gives.
        const lb::AdminState adm = srv.admin_state();
        // init-addr none: HAProxy's resolution maintenance (SRV_ADMF_RMAINT).
        const bool rmaint = st.unresolved;
        // `disabled` in the configuration is HAProxy's CMAINT (0x04), which stays while the
        // CLI makes the server ready or drains it: a saved state (server-state-file) tells a
        // server put back in service from one the configuration disables since.
        ss.admin_state = (adm == lb::AdminState::kMaint   ? 0x01
                          : adm == lb::AdminState::kDrain ? 0x08
                                                          : 0) |
                         (st.disabled ? 0x04 : 0) | (rmaint ? 0x20 : 0);
        ss.op_state = adm == lb::AdminState::kMaint || rmaint ? 0
                      : !srv.check_up()             ? 0
                      : srv.stopping()              ? 3
                      : srv.throttle() >= 0         ? 1   // starting: warming up
                                                    : 2;
        ss.status = adm == lb::AdminState::kMaint   ? "MAINT"
                    : rmaint                        ? "MAINT (resolution)"
                    : !srv.check_up()               ? "DOWN"
                    : srv.stopping()                ? "NOLB"
                    : adm == lb::AdminState::kDrain ? "DRAIN"
                    : !st.tracked.empty()           ? "UP"   // the tracked server's checks
                                                    : "no check";
        ss.tracked = st.tracked;
        if (srv.last_change_ms())
          ss.lastchg_s = static_cast<int64_t>((now - std::min(now, srv.last_change_ms())) / 1000);
        ss.check_enabled = false;
        if (!srv.last_change_ms()) ss.lastchg_s = ps.backend_lastchg_s;
        fill_check_fields(srv, ss, now);
        uint64_t last = 0;
        for (const auto& w : p_.workers())
          accumulate(ss.c, w->srv_counters(p.server_base + srv.index()), now, last);
        ss.c.scur = static_cast<uint64_t>(std::max(0, srv.current_conns()));
        ss.c.last_sess_s = age_s(last, now);
        ps.servers.push_back(std::move(ss));
      }
    }
    out.push_back(std::move(ps));
  }
  return out;
}

stats::ActivitySnapshot StatsView::activity(int current_thread) const {
  stats::ActivitySnapshot a;
  a.current_thread = current_thread;
  a.date_now_us = base::wall_us();
  a.uptime_now_us = (base::monotonic_ms() - p_.start_mono_ms()) * 1000;
  auto metric = [&](const char* name, auto get) {
    std::vector<uint64_t> v;
    for (const auto& w : p_.workers()) v.push_back(get(*w));
    a.metrics.emplace_back(name, std::move(v));
  };
  metric("loops", [](const Worker& w) { return w.loop().loops.load(std::memory_order_relaxed); });
  metric("wake_signal", [](const Worker& w) { return w.loop().wake_signal.load(std::memory_order_relaxed); });
  metric("poll_io", [](const Worker& w) { return w.loop().poll_io.load(std::memory_order_relaxed); });
  metric("curr_sess", [](const Worker& w) { return w.sessions(); });
  metric("accepted", [](const Worker& w) { return w.activity().accepted.get(); });
  metric("accq_pushed", [](const Worker& w) { return w.activity().accq_pushed.get(); });
  metric("accq_full", [](const Worker& w) { return w.activity().accq_full.get(); });
  metric("accq_ring", [](const Worker& w) { return static_cast<uint64_t>(w.accq_length()); });
  metric("sess_started", [](const Worker& w) { return w.activity().sess_started.get(); });
  return a;
}


std::vector<stats::ListenerSnapshot> StatsView::listeners() const {
  std::vector<stats::ListenerSnapshot> out;
  for (const auto& lp : p_.listeners()) {
    const Listener& l = *lp;
    stats::ListenerSnapshot s;
    s.proxy = l.proxy->settings.name;
    s.bind = l.line->settings.text;
    s.where = l.line->settings.file + ":" + std::to_string(l.line->settings.line);
    s.shard = l.shard;
    s.shard_count = l.shard_count;
    s.fell_back = l.fell_back;
    s.steered = l.steered;
    s.inode = l.inode;
    s.groups = core::format_cpu_list(l.groups);
    s.threads = core::format_cpu_list(l.threads);
    for (std::size_t i = 0; i < l.threads.size(); ++i)
      s.cur_conns += static_cast<uint64_t>(std::max(0, l.given[i].load(std::memory_order_relaxed)));
    s.cum_conns = l.cum_conns.load(std::memory_order_relaxed);
    s.id = l.id;
    s.name = l.line->settings.name.empty() ? "sock-" + std::to_string(l.id) : l.line->settings.name;
    s.addr = l.addr.kind == net::ListenAddress::Kind::kInet ? l.addr.addr.to_string() : l.addr.text;
    s.proto = l.addr.kind == net::ListenAddress::Kind::kInet ? net::proto_name(l.addr.addr)
              : l.addr.kind == net::ListenAddress::Kind::kUnix ? "unix_stream"
                                                               : "inherited";
    s.maxconn = l.line->settings.maxconn;
    int fe_state = l.proxy->fe_state.load(std::memory_order_acquire);
    s.status = p_.stopping() || fe_state == Proxy::kFeStopped ? "STOP"
               : fe_state == Proxy::kFePaused                 ? "PAUSED"
               : l.line->limit.has_room()                     ? "OPEN"
                                                              : "FULL";
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace sluice::proxy

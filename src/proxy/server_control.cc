#include "proxy/server_control.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "proxy/log.h"
#include "proxy/worker.h"

namespace sluice::proxy {

namespace {

// `name` or `#<id>` (HAProxy: atoi of what follows '#').
bool name_matches(std::string_view want, const std::string& name, int id) {
  if (want.size() > 1 && want[0] == '#') {
    int v = 0;
    std::from_chars(want.data() + 1, want.data() + want.size(), v);
    return v == id;
  }
  return want == name;
}

bool same_ip(const net::SocketAddress& a, const net::SocketAddress& b) {
  if (a.family() != b.family()) return false;
  if (a.family() == AF_INET)
    return reinterpret_cast<const sockaddr_in*>(a.sa())->sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in*>(b.sa())->sin_addr.s_addr;
  if (a.family() == AF_INET6)
    return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(a.sa())->sin6_addr,
                       &reinterpret_cast<const sockaddr_in6*>(b.sa())->sin6_addr,
                       sizeof(in6_addr)) == 0;
  return a == b;
}

}  // namespace

void ServerControlImpl::log(stats::ServerRef ref, int level, std::string msg) const {
  // The same path as the checks' state-change lines: a worker's LogWriter, which is local to
  // its thread, so the line is posted to that worker's loop.
  const auto& workers = p_.workers();
  if (workers.empty()) return;
  Worker* w = workers.front().get();
  const Proxy* px = p_.proxies()[static_cast<std::size_t>(ref.proxy)].get();
  w->loop().post([w, px, level, m = std::move(msg)] { w->logs().send(px->settings.logs, level, m); });
}

void ServerControlImpl::log_admin_change(stats::ServerRef ref, lb::AdminState before,
                                         bool was_down, bool was_usable) const {
  // HAProxy's texts and levels for forced admin changes (measured on 2.6).
  const lb::Backend& be = backend(ref);
  const lb::Server& s = server(ref);
  const lb::AdminState after = s.admin_state();
  if (after == before) return;
  const std::string who = std::string(s.settings().backup ? "Backup " : "") + "Server " +
                          be.name() + "/" + s.name();
  if (after == lb::AdminState::kMaint) {
    if (was_down) {
      log(ref, kNotice, who + " was DOWN and now enters maintenance.");
    } else {
      // Alert unless it was already out of load balancing by draining (srv_was_stopping).
      log(ref, before == lb::AdminState::kDrain ? kNotice : kAlert,
          who + " is going DOWN for maintenance" + be.state_tail(s, true));
    }
  } else if (before == lb::AdminState::kMaint) {
    const bool drain = after == lb::AdminState::kDrain;
    log(ref, kNotice, who + " is " + (!s.check_up() ? "DOWN" : drain ? "UP/DRAIN" : "UP/READY") +
                          " (leaving forced maintenance).");
    if (drain) log(ref, kNotice, who + " remains in forced drain mode.");
  } else if (after == lb::AdminState::kDrain) {
    log(ref, kNotice, who + " enters drain state" + be.state_tail(s, false));
  } else {
    log(ref, kNotice, who + " is " + (s.check_up() ? "UP" : "DOWN") + " (leaving forced drain).");
  }
  if (was_usable && be.usable_active() + be.usable_backup() == 0)
    // The log line names the backend bare; HAProxy's stderr copy quotes it.
    log(ref, kEmerg, "backend " + be.name() + " has no server available!");
}

lb::Backend& ServerControlImpl::backend(stats::ServerRef s) const {
  return *p_.proxies()[static_cast<std::size_t>(s.proxy)]->backend;
}

lb::Server& ServerControlImpl::server(stats::ServerRef s) const {
  return *backend(s).servers()[static_cast<std::size_t>(s.server)];
}

stats::FindResult ServerControlImpl::find_server(std::string_view be, std::string_view srv,
                                                 stats::ServerRef* out) const {
  const auto& proxies = p_.proxies();
  for (std::size_t i = 0; i < proxies.size(); ++i) {
    const Proxy& px = *proxies[i];
    if (!px.settings.backend || !px.backend) continue;
    if (!name_matches(be, px.settings.name, px.settings.id)) continue;
    const auto& servers = px.backend->servers();
    for (std::size_t j = 0; j < servers.size(); ++j) {
      if (name_matches(srv, servers[j]->name(), servers[j]->settings().id)) {
        *out = {static_cast<int>(i), static_cast<int>(j)};
        return px.settings.disabled ? stats::FindResult::kDisabled : stats::FindResult::kOk;
      }
    }
    return stats::FindResult::kNoServer;
  }
  return stats::FindResult::kNoBackend;
}

stats::ServerFacts ServerControlImpl::facts(stats::ServerRef ref) const {
  const lb::Backend& be = backend(ref);
  const lb::Server& s = server(ref);
  stats::ServerFacts f;
  f.weight = s.weight();
  f.initial_weight = s.initial_weight();
  // HAProxy's BE_LB_PROP_DYN: static-rr and map-based hashing cannot change weights live.
  const auto& b = be.balance();
  f.static_lb = b.kind == lb::BalanceKind::kStaticRr || (lb::hashes(b.kind) && !b.hash.consistent);
  f.tracking = hooks_.tracking && hooks_.tracking(s);
  f.check_configured = hooks_.check_configured && hooks_.check_configured(s);
  f.agent_configured = hooks_.agent_configured && hooks_.agent_configured(s);
  f.check_running =
      f.check_configured && !s.check_state().paused.load(std::memory_order_relaxed);
  f.agent_running =
      f.agent_configured && !s.agent_state().paused.load(std::memory_order_relaxed);
  return f;
}

void ServerControlImpl::set_admin_state(stats::ServerRef ref, stats::AdminChange state) {
  lb::AdminState st = state == stats::AdminChange::kReady   ? lb::AdminState::kReady
                      : state == stats::AdminChange::kDrain ? lb::AdminState::kDrain
                                                            : lb::AdminState::kMaint;
  lb::Server& s = server(ref);
  lb::CheckState& cs = s.check_state();
  const bool checked = cs.enabled && !cs.paused.load(std::memory_order_relaxed);
  const lb::AdminState before = s.admin_state();
  const bool was_down = !s.check_up();
  const bool was_usable = backend(ref).usable_active() + backend(ref).usable_backup() > 0;
  const uint64_t now = base::monotonic_ms();
  if (checked && st == lb::AdminState::kMaint && before != lb::AdminState::kMaint &&
      s.check_up()) {
    // Entering maintenance takes an UP server DOWN: HAProxy counts it in chkdown and its
    // downtime runs from now (spec 5). The checker is paused meanwhile and writes nothing.
    cs.chkdown.fetch_add(1, std::memory_order_relaxed);
    cs.down_since_ms.store(std::max<uint64_t>(now, 1), std::memory_order_relaxed);
  }
  if (checked && before == lb::AdminState::kMaint && st != lb::AdminState::kMaint) {
    // Leaving maintenance restarts the check at health = rise: UP, shown "UP 1/<fall>" until
    // the next checks pass (spec 5, checklist 11). The counters change here so that the
    // next `show stat` sees them; the checker's own counter follows on its loop.
    cs.health.store(cs.rise, std::memory_order_relaxed);
    uint64_t since = cs.down_since_ms.exchange(0, std::memory_order_relaxed);
    if (since && now > since) cs.downtime_ms.fetch_add(now - since, std::memory_order_relaxed);
    backend(ref).set_stopping(s, false, now);
    backend(ref).set_check_up(s, true, now);
    if (hooks_.restart_check) hooks_.restart_check(s);
  }
  backend(ref).set_admin_state(s, st, now);
  log_admin_change(ref, before, was_down && before != lb::AdminState::kMaint, was_usable);
}

void ServerControlImpl::set_weight(stats::ServerRef ref, int weight) {
  backend(ref).set_weight(server(ref), weight, base::monotonic_ms());
}

stats::AddrResult ServerControlImpl::set_addr(stats::ServerRef ref, std::string_view ip,
                                              int port) {
  stats::AddrResult r;
  lb::Server& s = server(ref);
  lb::ServerEndpoint cur = s.endpoint();
  net::SocketAddress addr;
  if (!net::parse_ip_literal(ip, &addr)) {
    r.status = stats::AddrResult::Status::kInvalidAddr;
    return r;
  }
  if (s.settings().unresolved) {
    r.status = stats::AddrResult::Status::kNoFamily;
    return r;
  }
  r.old_ip = cur.addr.host_string();
  r.new_ip = addr.host_string();
  r.old_port = cur.port_mapped ? 0 : cur.addr.port();
  r.new_port = port >= 0 ? port : r.old_port;
  if (port >= 0 && cur.port_mapped) {
    r.status = stats::AddrResult::Status::kPortMapped;
    return r;
  }
  if (same_ip(addr, cur.addr) && r.new_port == r.old_port) return r;
  lb::ServerEndpoint next = cur;
  next.addr = addr;
  next.addr.set_port(static_cast<uint16_t>(r.new_port));
  s.set_endpoint(next);
  // HAProxy recomputes the server's dynamic cookie from its new address (srv_set_dyncookie).
  const Proxy& px = *p_.proxies()[static_cast<std::size_t>(ref.proxy)];
  if (px.settings.cookie_table)
    px.settings.cookie_table->set_addr(static_cast<std::size_t>(ref.server), next.addr);
  return r;
}

namespace {

// A proxy with a backend side named `name` or `#<id>`, `disabled` ones included; null none.
const Proxy* backend_named(const Process& p, std::string_view name) {
  for (const auto& pp : p.proxies()) {
    const ProxySettings& s = pp->settings;
    if (s.backend && pp->backend && name_matches(name, s.name, s.id)) return pp.get();
  }
  return nullptr;
}

}  // namespace

bool ServerControlImpl::has_backend(std::string_view name) const {
  return backend_named(p_, name) != nullptr;
}

void ServerControlImpl::change_dynamic_cookie(std::string_view name, DynCookieChange change,
                                              std::string_view key) {
  const Proxy* px = backend_named(p_, name);
  if (!px || !px->settings.cookie_table) return;
  CookieTable& t = *px->settings.cookie_table;
  switch (change) {
    case DynCookieChange::kSetKey: t.set_key(std::string(key)); break;
    case DynCookieChange::kEnable: t.set_dynamic(true); break;
    case DynCookieChange::kDisable: t.set_dynamic(false); break;
  }
}

void ServerControlImpl::set_maxconn(stats::ServerRef ref, int maxconn) {
  server(ref).set_maxconn(maxconn);
  // A raised limit has free slots at once: the sessions waiting in the backend's queue take
  // them now rather than when some connection ends (HAProxy dequeues here too).
  p_.server_slot_freed(*p_.proxies()[static_cast<std::size_t>(ref.proxy)]);
}

stats::HealthResult ServerControlImpl::set_health(stats::ServerRef ref,
                                                  stats::HealthChange change) {
  lb::Server& s = server(ref);
  if (hooks_.tracking && hooks_.tracking(s)) return stats::HealthResult::kTracking;
  if (hooks_.check_configured && hooks_.check_configured(s) && hooks_.set_health) {
    hooks_.set_health(s, change);
    return stats::HealthResult::kOk;
  }
  // No check: HAProxy still forces the operational state (srv_set_running/stopping/stopped).
  // A stopping server stays up but takes no new load-balanced connections (NOLB).
  uint64_t now = base::monotonic_ms();
  backend(ref).set_stopping(s, change == stats::HealthChange::kStopping, now);
  backend(ref).set_check_up(s, change != stats::HealthChange::kDown, now);
  return stats::HealthResult::kOk;
}

stats::HealthResult ServerControlImpl::enable_health(stats::ServerRef ref, bool enable) {
  lb::Server& s = server(ref);
  bool configured = hooks_.check_configured && hooks_.check_configured(s);
  if (!configured) return enable ? stats::HealthResult::kNotConfigured : stats::HealthResult::kOk;
  if (hooks_.enable_check) hooks_.enable_check(s, enable);
  return stats::HealthResult::kOk;
}

stats::HealthResult ServerControlImpl::set_agent(stats::ServerRef ref, bool up) {
  lb::Server& s = server(ref);
  if (!(hooks_.agent_configured && hooks_.agent_configured(s)))
    return stats::HealthResult::kNotConfigured;
  if (hooks_.set_agent) hooks_.set_agent(s, up);
  return stats::HealthResult::kOk;
}

stats::HealthResult ServerControlImpl::set_check_target(stats::ServerRef ref, bool agent,
                                                        std::string_view ip, int port) {
  lb::Server& s = server(ref);
  const auto& configured = agent ? hooks_.agent_configured : hooks_.check_configured;
  if (!(configured && configured(s)) || !hooks_.set_check_target)
    return stats::HealthResult::kNotConfigured;
  hooks_.set_check_target(s, agent, ip, port);
  return stats::HealthResult::kOk;
}

stats::HealthResult ServerControlImpl::set_agent_send(stats::ServerRef ref, std::string_view text) {
  lb::Server& s = server(ref);
  if (!(hooks_.agent_configured && hooks_.agent_configured(s)) || !hooks_.set_agent_send)
    return stats::HealthResult::kNotConfigured;
  hooks_.set_agent_send(s, text);
  return stats::HealthResult::kOk;
}

stats::HealthResult ServerControlImpl::enable_agent(stats::ServerRef ref, bool enable) {
  lb::Server& s = server(ref);
  bool configured = hooks_.agent_configured && hooks_.agent_configured(s);
  if (!configured) return enable ? stats::HealthResult::kNotConfigured : stats::HealthResult::kOk;
  if (hooks_.enable_agent) hooks_.enable_agent(s, enable);
  return stats::HealthResult::kOk;
}

bool ServerControlImpl::has_frontend(std::string_view frontend) const {
  for (const auto& pp : p_.proxies())
    if (pp->settings.frontend && name_matches(frontend, pp->settings.name, pp->settings.id))
      return true;
  return false;
}

stats::ServerControl::FrontendResult ServerControlImpl::change_frontend(std::string_view frontend,
                                                                       FrontendAction action) {
  for (auto& pp : p_.proxies()) {
    Proxy& px = *pp;
    if (!px.settings.frontend || !name_matches(frontend, px.settings.name, px.settings.id))
      continue;
    // A soft stop shuts every frontend down: HAProxy answers as for one shut down by hand.
    if (p_.stopping())
      return action == FrontendAction::kShutdown ? FrontendResult::kAlready
                                                 : FrontendResult::kWasShutDown;
    Process::FrontendChange r = action == FrontendAction::kDisable  ? p_.pause_frontend(px)
                                : action == FrontendAction::kEnable ? p_.resume_frontend(px)
                                                                    : p_.stop_frontend(px);
    switch (r) {
      case Process::FrontendChange::kOk: return FrontendResult::kOk;
      case Process::FrontendChange::kAlready: return FrontendResult::kAlready;
      case Process::FrontendChange::kWasStopped: return FrontendResult::kWasShutDown;
    }
  }
  return FrontendResult::kNoFrontend;
}

bool ServerControlImpl::set_frontend_maxconn(std::string_view frontend, int maxconn) {
  for (auto& pp : p_.proxies()) {
    Proxy& px = *pp;
    if (!px.settings.frontend || !name_matches(frontend, px.settings.name, px.settings.id))
      continue;
    px.feconn.set_limit(maxconn);
    // A raised limit must wake listeners paused at the old one.
    p_.slot_freed();
    return true;
  }
  return false;
}

int ServerControlImpl::hard_maxconn() const {
  const auto& s = p_.settings();
  return s.hard_maxconn ? s.hard_maxconn : s.maxconn;
}

void ServerControlImpl::set_global_maxconn(int maxconn) {
  p_.actconn().set_limit(maxconn > 0 ? maxconn : hard_maxconn());
  p_.slot_freed();
}

void ServerControlImpl::clear_counters(bool all) {
  // The counters are per worker; each block is reset in place (see LocalCounter::reset()).
  for (const auto& wp : p_.workers()) {
    Worker& w = *wp;
    for (const auto& pp : p_.proxies()) {
      const Proxy& px = *pp;
      std::vector<stats::TrafficCounters*> blocks{&w.fe_counters(px.index),
                                                  &w.be_counters(px.index)};
      if (px.backend)
        for (const auto& s : px.backend->servers())
          blocks.push_back(&w.srv_counters(px.server_base + s->index()));
      for (stats::TrafficCounters* c : blocks) {
        if (all) c->clear_all();
        else c->clear_maxima();
      }
    }
    // `show activity` restarts from zero with either form (spec 5).
    Activity& a = w.activity();
    for (stats::LocalCounter* c : {&a.accepted, &a.accq_pushed, &a.accq_full, &a.sess_started})
      c->reset();
    w.loop().loops.store(0, std::memory_order_relaxed);
    w.loop().poll_io.store(0, std::memory_order_relaxed);
    w.loop().wake_signal.store(0, std::memory_order_relaxed);
  }
  for (const auto& pp : p_.proxies()) {
    Proxy& px = *pp;
    px.queued_max.store(0, std::memory_order_relaxed);
    if (!all || !px.backend) continue;
    for (const auto& s : px.backend->servers()) {
      lb::CheckState& cs = s->check_state();
      cs.chkfail.store(0, std::memory_order_relaxed);
      cs.chkdown.store(0, std::memory_order_relaxed);
    }
  }
}

void ServerControlImpl::clear_server_counters(stats::ServerRef s) {
  lb::Server& srv = server(s);
  int global = p_.proxies()[static_cast<std::size_t>(s.proxy)]->server_base + srv.index();
  for (const auto& wp : p_.workers()) wp->srv_counters(global).clear_all();
  lb::CheckState& cs = srv.check_state();
  cs.chkfail.store(0, std::memory_order_relaxed);
  cs.chkdown.store(0, std::memory_order_relaxed);
}

namespace {

// Asks every worker, in thread order, then answers on the CLI's thread. Each worker's part
// comes back to the CLI's thread by a post of its own, so `left` and `parts` are only touched
// there. A worker whose loop has ended refuses the post: its part is empty, counted at once
// (through a post too, so that `done` never runs inside the call).
template <typename Part, typename Ask, typename Answer>
void ask_every_worker(Process& p, int thread, Ask ask, Answer answer) {
  const auto& workers = p.workers();
  if (thread < 1 || static_cast<std::size_t>(thread) > workers.size()) return;
  Worker* home = workers[static_cast<std::size_t>(thread) - 1].get();
  struct Gather {
    std::vector<Part> parts;
    std::size_t left;
    Answer answer;
  };
  auto g = std::make_shared<Gather>(Gather{std::vector<Part>(workers.size()), workers.size(),
                                           std::move(answer)});
  auto arrive = [g](std::size_t i, Part part) {
    g->parts[i] = std::move(part);
    if (--g->left == 0) g->answer(g->parts);
  };
  for (std::size_t i = 0; i < workers.size(); ++i) {
    Worker* w = workers[i].get();
    bool asked = w->loop().post([w, home, i, ask, arrive] {
      Part part = ask(*w);
      home->loop().post([arrive, i, part = std::move(part)]() mutable {
        arrive(i, std::move(part));
      });
    });
    if (!asked) home->loop().post([arrive, i] { arrive(i, Part{}); });
  }
}

}  // namespace

void ServerControlImpl::dump_sessions(int thread, uint64_t id, bool detail,
                                      std::function<void(std::string, std::size_t)> done) {
  using Part = std::pair<std::string, std::size_t>;
  ask_every_worker<Part>(
      p_, thread,
      [id, detail](Worker& w) {
        Part part;
        part.second = w.describe_sessions(static_cast<uintptr_t>(id), detail, &part.first);
        return part;
      },
      [done = std::move(done)](const std::vector<Part>& parts) {
        std::string text;
        std::size_t count = 0;
        for (const Part& part : parts) {
          text += part.first;
          count += part.second;
        }
        done(std::move(text), count);
      });
}

void ServerControlImpl::shutdown_session(int thread, uint64_t id,
                                         std::function<void(bool)> done) {
  // A char, not a bool: std::vector<bool> packs its elements.
  ask_every_worker<char>(
      p_, thread, [id](Worker& w) { return static_cast<char>(w.kill_session(id)); },
      [done = std::move(done)](const std::vector<char>& found) {
        done(std::find(found.begin(), found.end(), 1) != found.end());
      });
}

void ServerControlImpl::shutdown_server_sessions(stats::ServerRef s) {
  const lb::Server* target = &server(s);
  for (const auto& wp : p_.workers()) {
    Worker* w = wp.get();
    w->loop().post([w, target] { w->shutdown_sessions_of(target); });
  }
}

bool ServerControlImpl::find_proxy(std::string_view name_or_id, int* index) const {
  // HAProxy's `show errors` also takes a bare number as a proxy id.
  bool digits = !name_or_id.empty() &&
                name_or_id.find_first_not_of("0123456789") == std::string_view::npos;
  for (const auto& pp : p_.proxies()) {
    const ProxySettings& ps = pp->settings;
    bool match = digits ? name_or_id == std::to_string(ps.id)
                        : name_matches(name_or_id, ps.name, ps.id);
    if (match) {
      *index = pp->index;
      return true;
    }
  }
  return false;
}

void ServerControlImpl::collect_errors(
    int thread, std::function<void(std::vector<stats::ErrorSnapshot>, uint64_t)> done) {
  using Part = std::vector<stats::ErrorSnapshot>;
  Process* p = &p_;
  ask_every_worker<Part>(
      p_, thread, [](Worker& w) { return w.error_snapshots(); },
      [p, done = std::move(done)](const std::vector<Part>& parts) {
        // The most recent snapshot of each proxy and direction, whichever worker has it.
        std::vector<stats::ErrorSnapshot> latest;
        for (const Part& part : parts) {
          for (const stats::ErrorSnapshot& e : part) {
            auto same = std::find_if(latest.begin(), latest.end(), [&e](const auto& l) {
              return l.proxy == e.proxy && l.response == e.response;
            });
            if (same == latest.end()) latest.push_back(e);
            else if (e.event > same->event) *same = e;
          }
        }
        std::sort(latest.begin(), latest.end(), [](const auto& a, const auto& b) {
          return a.proxy != b.proxy ? a.proxy < b.proxy : a.response < b.response;
        });
        done(std::move(latest), p->error_events());
      });
}

}  // namespace sluice::proxy

#include "app/checks_setup.h"

#include <unistd.h>

#include <algorithm>
#include <optional>
#include <random>

#include <fmt/format.h>

#include "base/clock.h"
#include "base/host.h"
#include "net/proxy_protocol.h"
#include "proxy/log.h"
#include "proxy/proxy_header.h"
#include "proxy/sample_env.h"
#include "proxy/worker.h"
#include "sample/expr.h"
#include "sample/vars.h"

namespace sluice::app {

namespace {
// option external-check: the command line and environment HAProxy 3.5 gives the command
// (measured by a script that prints them).
void external_command(const config::ConfigModel& model, const config::ProxyConfig& p,
                      const config::ServerConfig& s, check::CheckSettings* c) {
  c->type = check::CheckSettings::Type::kExternal;
  // The proxy's first bound address, if it has one ("NOT_USED" for a backend).
  std::string paddr, pport;
  for (const auto& b : p.binds) {
    for (const auto& a : b.addrs) {
      if (a.kind != net::ListenAddress::Kind::kInet) continue;
      paddr = a.addr.host_string();
      pport = std::to_string(a.addr.port());
      break;
    }
    if (!paddr.empty()) break;
  }
  const std::string saddr = s.addr.addr.host_string();
  const std::string sport = std::to_string(s.addr.addr.port());
  c->ext_argv = {p.external_check_command, paddr.empty() ? "NOT_USED" : paddr,
                 pport.empty() ? "NOT_USED" : pport, saddr, sport};
  std::vector<std::string> env;
  if (model.global.external_check_preserve_env)
    for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
  env.push_back("PATH=" + p.external_check_path);
  env.push_back("HAPROXY_PROXY_ADDR=" + paddr);
  env.push_back("HAPROXY_PROXY_ID=" + std::to_string(p.id));
  env.push_back("HAPROXY_PROXY_NAME=" + p.name);
  env.push_back("HAPROXY_PROXY_PORT=" + pport);
  env.push_back("HAPROXY_SERVER_ADDR=" + saddr);
  env.push_back("HAPROXY_SERVER_ID=" + std::to_string(s.id));
  env.push_back("HAPROXY_SERVER_MAXCONN=" + std::to_string(s.maxconn));
  env.push_back("HAPROXY_SERVER_NAME=" + s.name);
  env.push_back("HAPROXY_SERVER_PORT=" + sport);
  env.push_back("HAPROXY_SERVER_PROTO=tcp");
  env.push_back("HAPROXY_SERVER_SSL=0");
  c->ext_env = std::move(env);
}

// option httpchk: the http-check rules as written, with the option's request where a send does
// not say its method, URI or version (and a send of it first when none is written), and the
// default expect (a 2xx or 3xx status) when the last send has none after it.
std::shared_ptr<const check::RuleSet> http_rule_set(const config::ProxyConfig& p) {
  using check::CheckRule;
  const config::HttpCheckConfig& hc = p.http_check;
  auto rs = std::make_shared<check::RuleSet>();
  rs->ok_info.clear();   // HAProxy gives a passing HTTP check no words
  std::vector<CheckRule> rules = p.http_check_rules.rules;
  auto is_send = [](const CheckRule& r) { return r.kind == CheckRule::Kind::kSend; };
  if (std::none_of(rules.begin(), rules.end(), is_send)) {
    CheckRule s;
    s.kind = CheckRule::Kind::kSend;
    s.http = true;
    auto at = std::find_if(rules.begin(), rules.end(), [](const CheckRule& r) {
      return r.kind != CheckRule::Kind::kConnect && r.kind != CheckRule::Kind::kComment &&
             r.kind != CheckRule::Kind::kSetVar && r.kind != CheckRule::Kind::kUnsetVar;
    });
    rules.insert(at, std::move(s));
  }
  bool first = true;
  for (CheckRule& r : rules) {
    if (!is_send(r)) continue;
    if (r.method.empty()) r.method = hc.method;
    if (r.uri.empty() && r.fmt < 0) r.uri = hc.uri;
    if (r.version.empty()) r.version = hc.version;
    if (first) {   // option httpchk's host goes with the first request
      std::vector<CheckRule::Field> f;
      for (const auto& [n, v] : hc.headers) f.push_back({n, v, -1});
      r.fields.insert(r.fields.begin(), f.begin(), f.end());
      first = false;
    }
  }
  auto last_send = std::find_if(rules.rbegin(), rules.rend(), is_send);
  const bool expect_after = std::any_of(rules.rbegin(), last_send, [](const CheckRule& r) {
    return r.kind == CheckRule::Kind::kExpect;
  });
  if (!expect_after) {
    CheckRule e;
    e.kind = CheckRule::Kind::kExpect;
    e.match = CheckRule::Match::kStatus;
    e.pattern = "200-399";
    rules.push_back(std::move(e));
  }
  rs->rules = std::move(rules);
  return rs;
}
}  // namespace

check::CheckSettings check_settings(const config::ProxyConfig& p, const config::ServerConfig& s) {
  check::CheckSettings c;
  c.type = check::CheckSettings::Type::kTcp;
  if (p.check_type == config::ProxyConfig::CheckType::kHttp) {
    c.rules = http_rule_set(p);
    c.type = check::CheckSettings::Type::kRules;
    c.disable_on_404 = p.http_check.disable_on_404;
    c.send_state = p.http_check.send_state;
  } else if (p.option_tcp_check && !p.tcp_check.rules.empty()) {
    auto rs = std::make_shared<check::RuleSet>();
    rs->rules = p.tcp_check.rules;
    rs->ok_info = p.tcp_check.ok_info;
    c.rules = std::move(rs);
    c.type = check::CheckSettings::Type::kRules;
  }
  c.log_checks = p.option_log_health_checks;
  c.addr = s.has_check_addr ? s.check_addr : s.addr.addr;
  // `port` wins; otherwise the server's own port (validation refused port-mapped servers
  // without a check port). With `addr` alone, the server's port still applies.
  int port = s.check_port ? s.check_port : s.addr.addr.port();
  c.addr.set_port(static_cast<uint16_t>(port));
  c.own_addr = s.has_check_addr;
  c.own_port = s.check_port != 0;
  c.rise = s.rise;
  c.fall = s.fall;
  c.init_state = static_cast<check::InitState>(s.init_state);
  c.intervals = {s.inter_ms, s.fastinter_ms, s.downinter_ms};
  c.timeout_ms = p.timeouts.check ? p.timeouts.check : s.inter_ms;
  c.shutdown_sessions = s.shutdown_on_down;
  c.shutdown_backup_sessions = s.shutdown_backups_on_up;
  // HAProxy: checks send the PROXY header when asked (`check-send-proxy`: the server's
  // version, v1 without one), or when the traffic does and the check goes where it goes (no
  // `port` nor `addr` of its own).
  if (s.check_send_proxy) c.send_proxy = s.send_proxy == 2 ? 2 : 1;
  else if (!s.check_port && !s.has_check_addr) c.send_proxy = s.send_proxy;
  c.pp2_crc32c = (s.pp2_options & net::pp::kOptCrc32c) != 0;
  c.has_socks4 = s.has_socks4;
  c.socks4 = s.socks4;
  c.via_socks4 = s.check_via_socks4;
  // TLS: config::ServerTlsConfig::checks_use_tls says when (HAProxy's rule).
  if (s.tls.checks_use_tls) c.tls = s.tls.check_context;
  c.tls_sni = s.tls.check_sni;
  c.rule_tls = s.tls.rule_context;
  return c;
}

namespace {
// A check has no stream: its formats see the backend (as the frontend too, as HAProxy's
// checks do), the server and what the server sent (res.payload), and no client nor request.
struct CheckContext {
  log::Record r;
  proxy::ProxyEnv env;
  sample::Ctx ctx;
  CheckContext(proxy::Worker& w, const proxy::Proxy& px, const lb::Server& srv,
               std::string_view received, sample::VarStore* vars = nullptr)
      : env(w.process(), w.id(), nullptr, px) {
    ctx.check_vars = vars;
    r.date_wall_us = base::wall_us();
    r.frontend = px.settings.name;
    r.backend = px.settings.name;
    r.server = srv.name();
    r.hostname = w.logs().host();
    r.pid = w.logs().pid();
    env.rec = &r;
    env.be = &px;
    env.srv = &srv;
    ctx.avail = config::check_sample_avail();
    ctx.env = &env;
    ctx.now_us = r.date_wall_us;
    ctx.res_payload = received;
  }
};

void render_check_tlvs(proxy::Worker& w, const proxy::Proxy& px, const lb::Server& srv,
                       const std::vector<proxy::ProxySettings::Pp2TlvFormat>& formats,
                       std::vector<net::pp::Tlv>* out) {
  CheckContext c(w, px, srv, {});
  proxy::render_pp2_tlvs(formats, c.r, &c.ctx, out);
}

// A tcp-check log-format (send-lf, on-success...): an absent value is empty, not '-'.
std::string render_check_format(proxy::Worker& w, const proxy::Proxy& px, const lb::Server& srv,
                                const log::Format& f, std::string_view received,
                                sample::VarStore* vars) {
  CheckContext c(w, px, srv, received, vars);
  std::string out;
  f.render(c.r, &c.ctx, out, log::kOptNoDash);
  return out;
}
}  // namespace

HealthChecks::HealthChecks(proxy::Process& process, const config::ConfigModel& model)
    : process_(process), max_spread_ms_(model.global.max_spread_checks_ms) {
  auto& proxies = process.proxies();
  // track: who follows whom, the newest tracker first.
  for (std::size_t i = 0; i < proxies.size() && i < model.proxies.size(); ++i) {
    const config::ProxyConfig& pc = model.proxies[i];
    if (!proxies[i]->backend || pc.disabled || proxies[i]->settings.name != pc.name) continue;
    const auto& srvs = proxies[i]->backend->servers();
    for (std::size_t k = 0; k < pc.servers.size() && k < srvs.size(); ++k) {
      const config::ServerConfig& sc = pc.servers[k];
      if (sc.track_proxy < 0 || static_cast<std::size_t>(sc.track_proxy) >= proxies.size()) continue;
      proxy::Proxy& tp = *proxies[static_cast<std::size_t>(sc.track_proxy)];
      if (!tp.backend || static_cast<std::size_t>(sc.track_server) >= tp.backend->servers().size())
        continue;
      auto& list = trackers_[tp.backend->servers()[static_cast<std::size_t>(sc.track_server)].get()];
      list.insert(list.begin(), Tracker{proxies[i].get(), srvs[k].get()});
    }
  }
  for (std::size_t i = 0; i < proxies.size() && i < model.proxies.size(); ++i) {
    proxy::Proxy& px = *proxies[i];
    const config::ProxyConfig& pc = model.proxies[i];
    if (!px.backend || pc.disabled || px.settings.name != pc.name) continue;
    const auto& srvs = px.backend->servers();
    for (std::size_t k = 0; k < pc.servers.size() && k < srvs.size(); ++k) {
      const config::ServerConfig& sc = pc.servers[k];
      lb::Server& srv = *srvs[k];
      if (sc.agent_check) {
        // The agent: its own address and port, its own interval; its answers only.
        check::CheckSettings a;
        a.type = check::CheckSettings::Type::kAgent;
        a.addr = sc.has_agent_addr ? sc.agent_addr : sc.addr.addr;
        a.addr.set_port(static_cast<uint16_t>(sc.agent_port));
        a.own_addr = sc.has_agent_addr;
        a.own_port = true;
        a.intervals.inter_ms = sc.agent_inter_ms ? sc.agent_inter_ms : sc.inter_ms;
        a.timeout_ms = pc.timeouts.check ? pc.timeouts.check : a.intervals.inter_ms;
        a.agent_send = sc.agent_send;
        auto& as = srv.agent_state();
        as.enabled = true;
        as.port.store(sc.agent_port, std::memory_order_relaxed);
        if (sc.has_agent_addr) as.set_addr(sc.agent_addr.host_string());
        as.rise = 1;   // an agent's word counts at once (HAProxy shows 1/1)
        as.fall = 1;
        as.health.store(1, std::memory_order_relaxed);
        plans_.push_back({&px, &srv, std::move(a), {}, true, {}, {}});
      }
      if (!sc.check) continue;
      auto& cs = srv.check_state();
      cs.enabled = true;
      cs.port.store(sc.check_port, std::memory_order_relaxed);
      if (sc.has_check_addr) cs.set_addr(sc.check_addr.host_string());
      cs.rise = sc.rise;
      cs.fall = sc.fall;
      check::CheckSettings cs_settings = check_settings(pc, sc);
      if (pc.check_type == config::ProxyConfig::CheckType::kExternal)
        external_command(model, pc, sc, &cs_settings);
      // init-state: where the counter starts, and whether the server starts DOWN.
      const check::Health start(sc.rise, sc.fall, cs_settings.init_state);
      cs.health.store(start.health(), std::memory_order_relaxed);
      if (!start.up()) {
        px.backend->set_check_up(srv, false, 0);
        follow(srv, false, nullptr);
      }
      cs_settings.node = model.global.node.empty() ? base::host_name() : model.global.node;
      cs_settings.spread_pct = model.global.spread_checks;
      const bool http = pc.check_type == config::ProxyConfig::CheckType::kHttp;
      // observe: the workers report what they see; set before they start.
      if (srv.settings().observe != lb::Observe::kNone) srv.set_analyzer(this);
      const config::TcpCheckConfig& tc = http ? pc.http_check_rules : pc.tcp_check;
      plans_.push_back({&px, &srv, std::move(cs_settings), tc.compiled, false, tc.actions, tc.exprs});
    }
  }
}

HealthChecks::~HealthChecks() = default;

void HealthChecks::start() {
  const auto& workers = process_.workers();
  if (workers.empty() || plans_.empty()) return;
  std::mt19937 rng(std::random_device{}());
  std::size_t n = plans_.size();
  for (std::size_t i = 0; i < n; ++i) {
    Plan& plan = plans_[i];
    proxy::Worker* w = workers[i % workers.size()].get();
    proxy::Proxy* px = plan.proxy;
    check::CheckHooks hooks;
    // Runs on w's thread: its LogWriter is worker-local to that thread.
    hooks.log = [w, px](int level, const std::string& msg) {
      w->logs().send(px->settings.logs, level, msg);
    };
    proxy::Process* process = &process_;
    hooks.shutdown_sessions = [process](lb::Server& srv) {
      const lb::Server* target = &srv;
      for (const auto& other : process->workers()) {
        proxy::Worker* ow = other.get();
        ow->loop().post([ow, target] { ow->shutdown_sessions_of(target); });
      }
    };
    if (plan.settings.send_proxy == 2) {
      const auto* formats = px->settings.pp2_tlvs_of(static_cast<std::size_t>(plan.server->index()));
      if (formats) hooks.pp2_tlvs = [w, px, srv = plan.server, formats](std::vector<net::pp::Tlv>* out) {
        render_check_tlvs(*w, *px, *srv, *formats, out);
      };
    }
    // The check's own variables (check.*): one store per checker, emptied as each check
    // begins, read and written by its steps and formats on the checker's thread.
    std::shared_ptr<sample::VarStore> vars;
    if (!plan.actions.empty()) {
      vars = std::make_shared<sample::VarStore>(sample::Scope::kCheck, sample::var_limits().check);
      hooks.begin = [vars] { vars->clear(); };
      hooks.set_var = [w, px, srv = plan.server, actions = plan.actions, vars](
                          const check::CheckRule& r, std::string_view received) {
        if (r.action < 0 || static_cast<std::size_t>(r.action) >= actions.size()) return;
        CheckContext c(*w, *px, *srv, received, vars.get());
        actions[static_cast<std::size_t>(r.action)]->run(c.ctx);
      };
    }
    if (!plan.exprs.empty()) {
      hooks.eval_int = [w, px, srv = plan.server, exprs = plan.exprs, vars](
                           int index, std::string_view received, int64_t* out) {
        if (index < 0 || static_cast<std::size_t>(index) >= exprs.size()) return false;
        CheckContext c(*w, *px, *srv, received, vars.get());
        sample::Sample smp;
        if (!exprs[static_cast<std::size_t>(index)]->eval(c.ctx, smp) ||
            !sample::cast(smp, sample::Type::kSint, c.ctx.sc()))
          return false;
        *out = smp.sint;
        return true;
      };
    }
    if (!plan.formats.empty()) {
      hooks.render = [w, px, srv = plan.server, formats = plan.formats, vars](
                         int index, std::string_view received) {
        if (index < 0 || static_cast<std::size_t>(index) >= formats.size()) return std::string();
        return render_check_format(*w, *px, *srv, *formats[static_cast<std::size_t>(index)],
                                   received, vars.get());
      };
    }
    if (!trackers_.empty())
      hooks.state_changed = [this, w](lb::Server& srv, bool up) { follow(srv, up, w); };
    if (plan.agent && agent_apply_)
      hooks.agent_apply = [this, px](lb::Server& s, const check::AgentReply& r) {
        agent_apply_(px->settings.name, s, r);
      };
    uint32_t inter = plan.settings.intervals.inter_ms;
    // max-spread-checks bounds the spread of the first checks.
    if (max_spread_ms_ && max_spread_ms_ < inter) inter = max_spread_ms_;
    auto c = std::make_unique<check::Checker>(w->loop(), *px->backend, *plan.server,
                                              plan.settings, std::move(hooks));
    // Spread: the i-th check starts at i/n of its interval, plus up to 1/(2n) of jitter.
    uint64_t slot = static_cast<uint64_t>(inter) * i / n;
    uint64_t jitter_span = std::max<uint64_t>(1, inter / (2 * n));
    uint64_t delay = slot + std::uniform_int_distribution<uint64_t>(0, jitter_span - 1)(rng);
    check::Checker* cp = c.get();
    checkers_.push_back(std::move(c));
    w->loop().post([cp, delay] { cp->start(delay); });
  }
  ready_.store(true, std::memory_order_release);
}

void HealthChecks::follow(const lb::Server& srv, bool up, proxy::Worker* w) {
  auto it = trackers_.find(&srv);
  if (it == trackers_.end()) return;
  for (const Tracker& t : it->second) {
    lb::Backend& be = *t.proxy->backend;
    if (t.server->check_up() == up) continue;
    be.set_check_up(*t.server, up, w ? w->loop().now_ms() : 0);
    if (w) {
      // HAProxy: DOWN at alert, UP at notice; a backend left without servers at emerg.
      const auto& logs = t.proxy->settings.logs;
      w->logs().send(logs, up ? 5 : 1,
                     fmt::format("{}Server {}/{} is {} via {}{}",
                                 t.server->settings().backup ? "Backup " : "", be.name(),
                                 t.server->name(), up ? "UP" : "DOWN", t.server->settings().tracked,
                                 be.state_tail(*t.server, !up)));
      if (!up && be.usable_active() + be.usable_backup() == 0)
        w->logs().send(logs, 0, fmt::format("backend {} has no server available!", be.name()));
    }
    follow(*t.server, up, w);
  }
}

bool HealthChecks::restore(lb::Server& server, int health, bool up) {
  for (Plan& plan : plans_) {
    if (plan.server != &server || plan.agent) continue;
    const int top = plan.settings.rise + plan.settings.fall - 1;
    health = std::clamp(health, 0, top);
    plan.settings.restored_health = health;
    plan.settings.restored_up = up;
    server.check_state().health.store(health, std::memory_order_relaxed);
    plan.proxy->backend->set_check_up(server, up, 0);
    follow(server, up, nullptr);
    return true;
  }
  return false;
}

void HealthChecks::on_errors(lb::Server& server, int count, lb::Hana last) {
  check::Checker* c = find(server);
  if (!c) return;
  c->loop().post([c, count, last] { c->analyze(count, last); });
}

check::Checker* HealthChecks::find(const lb::Server& server) const {
  if (!ready_.load(std::memory_order_acquire)) return nullptr;
  for (std::size_t i = 0; i < checkers_.size(); ++i)
    if (&checkers_[i]->server() == &server && !plans_[i].agent) return checkers_[i].get();
  return nullptr;
}

check::Checker* HealthChecks::find_agent(const lb::Server& server) const {
  if (!ready_.load(std::memory_order_acquire)) return nullptr;
  for (std::size_t i = 0; i < checkers_.size(); ++i)
    if (&checkers_[i]->server() == &server && plans_[i].agent) return checkers_[i].get();
  return nullptr;
}

bool HealthChecks::has_agent(const lb::Server& server) const {
  return server.agent_state().enabled;
}

bool HealthChecks::enable_agent(const lb::Server& server, bool on) {
  check::Checker* c = find_agent(server);
  if (!c) return false;
  lb::Server& s = c->server();
  s.agent_state().paused.store(!on, std::memory_order_relaxed);
  c->loop().post([c, on] {
    if (on) {
      c->start(0);
    } else {
      c->stop();
      c->force_agent(true);   // a stopped agent no longer keeps the server down
    }
  });
  return true;
}

bool HealthChecks::set_check_target(const lb::Server& server, bool agent, std::string_view ip,
                                    int port) {
  check::Checker* c = agent ? find_agent(server) : find(server);
  if (!c) return false;
  std::optional<net::SocketAddress> addr;
  if (!ip.empty()) {
    auto r = net::parse_server_address(ip);
    if (!r.ok()) return false;
    addr = r.value().addr;
  }
  c->loop().post([c, addr, port] { c->retarget(addr ? &*addr : nullptr, port); });
  return true;
}

bool HealthChecks::set_agent_send(const lb::Server& server, std::string_view text) {
  check::Checker* c = find_agent(server);
  if (!c) return false;
  c->loop().post([c, t = std::string(text)]() mutable { c->set_agent_send(std::move(t)); });
  return true;
}

bool HealthChecks::force_agent(const lb::Server& server, bool up) {
  check::Checker* c = find_agent(server);
  if (!c) return false;
  c->loop().post([c, up] { c->force_agent(up); });
  return true;
}

bool HealthChecks::enable(const lb::Server& server, bool on) {
  check::Checker* c = find(server);
  if (!c) return false;
  for (const auto& plan : plans_) {
    if (plan.server != &server) continue;
    lb::Server& s = *plan.server;
    lb::Backend& be = *plan.proxy->backend;
    s.check_state().paused.store(!on, std::memory_order_relaxed);
    c->loop().post([c, &s, &be, on] {
      if (on) {
        c->start(0);
      } else {
        // A server whose checks are disabled counts as UP (HAProxy shows "no check").
        c->stop();
        be.set_check_up(s, true, c->loop().now_ms());
      }
    });
    return true;
  }
  return false;
}

bool HealthChecks::force(const lb::Server& server, bool up, bool stopping) {
  check::Checker* c = find(server);
  if (!c) return false;
  c->loop().post([c, up, stopping] { c->force(up, stopping); });
  return true;
}

bool HealthChecks::restart(const lb::Server& server) {
  check::Checker* c = find(server);
  if (!c) return false;
  c->loop().post([c] { c->restart(); });
  return true;
}

}  // namespace sluice::app

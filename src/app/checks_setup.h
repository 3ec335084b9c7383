#pragma once
// Health checks: app turns the configuration's check settings into check::Checker objects,
// gives each one a worker's event loop and the hooks that reach proxy/ (logs, closing
// sessions), which check/ may not include.
#include <atomic>
#include <memory>
#include <unordered_map>
#include <vector>

#include "check/checker.h"
#include "config/model.h"
#include "proxy/process.h"

namespace sluice::app {

class HealthChecks : public lb::HealthAnalyzer {
 public:
  // Main thread, before Process::start(): marks the checked servers (CheckState enabled,
  // rise, fall, initial health) so that stats show them from the first instant.
  HealthChecks(proxy::Process& process, const config::ConfigModel& model);
  // Main thread, after the workers have joined.
  ~HealthChecks() override;

  // Main thread, after Process::start(): one checker per checked server, assigned to the
  // workers round-robin; the first checks are spread evenly over each one's `inter` (plus a
  // small random jitter) so that they never all start in the same instant.
  void start();

  std::size_t size() const { return plans_.size(); }

  // CLI hooks (`enable/disable health`, `set server ... health`). Any thread: the change is
  // posted to the loop of the server's checker. False when the server has no check.
  bool enable(const lb::Server& server, bool enable);
  // `stopping` (`health stopping`) keeps the server UP at the top of its counter, soft-stopped.
  bool force(const lb::Server& server, bool up, bool stopping = false);
  // The server left maintenance: its counter restarts at rise (Checker::restart).
  bool restart(const lb::Server& server);
  // Main thread, before start(): a saved state (server-state file) for a checked server, its
  // counter `health` and verdict `up` (the backend takes the verdict now). False when the
  // server has no check.
  bool restore(lb::Server& server, int health, bool up);
  // agent-check: what an agent's answer does to the server's admin state, weight and maxconn
  // (main sets it to the CLI's paths before start()). The CLI's `enable|disable agent` and
  // `set server ... agent up|down`. Any thread.
  using AgentApply =
      std::function<void(std::string_view backend, lb::Server&, const check::AgentReply&)>;
  void set_agent_apply(AgentApply fn) {
    agent_apply_ = std::move(fn);
  }
  bool has_agent(const lb::Server& server) const;
  bool enable_agent(const lb::Server& server, bool on);
  bool force_agent(const lb::Server& server, bool up);
  // `set server ... check-addr|check-port|agent-addr|agent-port|agent-send`.
  bool set_check_target(const lb::Server& server, bool agent, std::string_view ip, int port);
  bool set_agent_send(const lb::Server& server, std::string_view text);

  // `observe`: a server's traffic reached its error-limit (lb::Server::analyze, any worker):
  // posted to its checker (Checker::analyze). Nothing before start() has built the checkers.
  void on_errors(lb::Server& server, int count, lb::Hana last) override;

 private:
  struct Plan {
    proxy::Proxy* proxy;
    lb::Server* server;
    check::CheckSettings settings;
    // The log-formats of the proxy's tcp-check rules (CheckHooks::render).
    std::vector<std::shared_ptr<const log::Format>> formats;
    bool agent = false;   // the server's agent check, not its health check
    // The rules' variable actions and expressions (CheckHooks::set_var, eval_int).
    std::vector<std::shared_ptr<const rules::VarAction>> actions;
    std::vector<std::shared_ptr<const sample::Expr>> exprs;
  };
  // `track`: the servers that follow each tracked server, newest first (HAProxy's order).
  struct Tracker {
    proxy::Proxy* proxy;
    lb::Server* server;
  };
  // The servers tracking `srv` take its state `up`, each logged as HAProxy does ("Server c/s3
  // is DOWN via b/s2. ..."), and so on down the chains. `w`: the worker whose loop runs this
  // (its log writer); null before the workers run (nothing is logged then).
  void follow(const lb::Server& srv, bool up, proxy::Worker* w);
  proxy::Process& process_;
  uint32_t max_spread_ms_ = 0;   // global max-spread-checks (0: the interval)
  std::unordered_map<const lb::Server*, std::vector<Tracker>> trackers_;
  AgentApply agent_apply_;
  check::Checker* find_agent(const lb::Server& server) const;
  std::vector<Plan> plans_;
  std::vector<std::unique_ptr<check::Checker>> checkers_;
  check::Checker* find(const lb::Server& server) const;
  // Set once start() has built every checker: the CLI hooks may run on a worker from then on.
  std::atomic<bool> ready_{false};
};

// The runtime check settings of one server of `p`. Main thread.
check::CheckSettings check_settings(const config::ProxyConfig& p, const config::ServerConfig& s);

}  // namespace sluice::app

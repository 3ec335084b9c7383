#pragma once
// The ServerControl the CLI calls (stats/control.h), over the live proxy::Process: server
// changes go through lb::Backend's writer methods and lb::Server's atomics, frontend and
// global maxconn through the ConnLimit ceilings. Nothing here is on the connection path;
// readers there see each change at their next pick or connect, without a lock.
#include <functional>
#include <string>

#include "proxy/process.h"
#include "stats/control.h"

namespace sluice::proxy {

// Hooks the health-check module provides (wired by app). An empty function means "no health
// check module": every server then behaves as a server without a check.
struct HealthHooks {
  std::function<bool(const lb::Server&)> check_configured;
  std::function<bool(const lb::Server&)> agent_configured;
  std::function<bool(const lb::Server&)> tracking;
  // Called only for servers whose check (agent) is configured.
  std::function<void(lb::Server&, bool enable)> enable_check;
  std::function<void(lb::Server&, stats::HealthChange)> set_health;
  // The server left maintenance: the checker restarts its counter at rise.
  std::function<void(lb::Server&)> restart_check;
  std::function<void(lb::Server&, bool enable)> enable_agent;
  std::function<void(lb::Server&, bool up)> set_agent;
  std::function<void(lb::Server&, bool agent, std::string_view ip, int port)> set_check_target;
  std::function<void(lb::Server&, std::string_view text)> set_agent_send;
};

class ServerControlImpl : public stats::ServerControl {
 public:
  explicit ServerControlImpl(Process& process) : p_(process) {}

  // Main thread, before any CLI session runs.
  void set_health_hooks(HealthHooks hooks) { hooks_ = std::move(hooks); }

  stats::FindResult find_server(std::string_view backend, std::string_view server,
                                stats::ServerRef* out) const override;
  stats::ServerFacts facts(stats::ServerRef s) const override;
  void set_admin_state(stats::ServerRef s, stats::AdminChange state) override;
  void set_weight(stats::ServerRef s, int weight) override;
  stats::AddrResult set_addr(stats::ServerRef s, std::string_view ip, int port) override;
  void set_maxconn(stats::ServerRef s, int maxconn) override;
  stats::HealthResult set_health(stats::ServerRef s, stats::HealthChange change) override;
  stats::HealthResult enable_health(stats::ServerRef s, bool enable) override;
  stats::HealthResult set_agent(stats::ServerRef s, bool up) override;
  stats::HealthResult enable_agent(stats::ServerRef s, bool enable) override;
  stats::HealthResult set_check_target(stats::ServerRef s, bool agent, std::string_view ip,
                                       int port) override;
  stats::HealthResult set_agent_send(stats::ServerRef s, std::string_view text) override;
  bool has_frontend(std::string_view frontend) const override;
  bool has_backend(std::string_view backend) const override;
  void change_dynamic_cookie(std::string_view backend, DynCookieChange change,
                             std::string_view key) override;
  bool set_frontend_maxconn(std::string_view frontend, int maxconn) override;
  FrontendResult change_frontend(std::string_view frontend, FrontendAction action) override;
  int hard_maxconn() const override;
  void set_global_maxconn(int maxconn) override;
  void clear_counters(bool all) override;
  void clear_server_counters(stats::ServerRef s) override;
  void dump_sessions(int thread, uint64_t id, bool detail,
                     std::function<void(std::string, std::size_t)> done) override;
  void shutdown_session(int thread, uint64_t id, std::function<void(bool)> done) override;
  void shutdown_server_sessions(stats::ServerRef s) override;
  bool find_proxy(std::string_view name_or_id, int* index) const override;
  void collect_errors(
      int thread,
      std::function<void(std::vector<stats::ErrorSnapshot>, uint64_t)> done) override;

 private:
  lb::Backend& backend(stats::ServerRef s) const;
  lb::Server& server(stats::ServerRef s) const;
  // Sends a line to the logs of the server's proxy. CLI thread.
  void log(stats::ServerRef s, int level, std::string msg) const;
  // Logs an admin state change of `s` as HAProxy does, from `before` to its current state.
  void log_admin_change(stats::ServerRef s, lb::AdminState before, bool was_down,
                        bool was_usable) const;

  Process& p_;
  HealthHooks hooks_;
};

}  // namespace sluice::proxy

#pragma once
// A ServerControl over a few named servers that records the calls the admin actions make:
// backend "be" (id 3) with s1 (check and agent), s2 (no check), t1 (tracks another server);
// backend "off" (id 4, a disabled proxy) with v1. Calls are recorded as "<call> <server>
// <argument>", e.g. "admin s1 maint".
#include <string>
#include <string_view>
#include <vector>

#include "stats/control.h"

namespace sluice::stats::testing {

class FakeControl : public ServerControl {
 public:
  struct Srv {
    std::string backend;
    std::string name;
    ServerFacts facts;
  };
  std::vector<Srv> servers;
  std::vector<std::string> calls;

  FakeControl() {
    ServerFacts checked;
    checked.check_configured = checked.agent_configured = true;
    checked.check_running = checked.agent_running = true;
    ServerFacts tracking;
    tracking.tracking = true;
    servers = {{"be", "s1", checked}, {"be", "s2", {}}, {"be", "t1", tracking}, {"off", "v1", {}}};
  }

  FindResult find_server(std::string_view backend, std::string_view server,
                         ServerRef* out) const override {
    // Names or `#<id>`, as the real control accepts (be is #3, off #4; servers #1..).
    auto be_matches = [&](const std::string& name) {
      int id = name == "be" ? 3 : 4;
      return backend == name || backend == "#" + std::to_string(id);
    };
    bool backend_found = false;
    int index = 0;
    for (std::size_t i = 0; i < servers.size(); ++i) {
      if (!be_matches(servers[i].backend)) continue;
      backend_found = true;
      ++index;
      if (server == servers[i].name || server == "#" + std::to_string(index)) {
        *out = {servers[i].backend == "be" ? 0 : 1, static_cast<int>(i)};
        return servers[i].backend == "off" ? FindResult::kDisabled : FindResult::kOk;
      }
    }
    return backend_found ? FindResult::kNoServer : FindResult::kNoBackend;
  }
  ServerFacts facts(ServerRef s) const override { return srv(s).facts; }

  void set_admin_state(ServerRef s, AdminChange state) override {
    record("admin", s, state == AdminChange::kReady   ? "ready"
                       : state == AdminChange::kDrain ? "drain"
                                                      : "maint");
  }
  HealthResult set_health(ServerRef s, HealthChange change) override {
    if (srv(s).facts.tracking) return HealthResult::kTracking;
    record("health", s, change == HealthChange::kUp         ? "up"
                        : change == HealthChange::kStopping ? "stopping"
                                                            : "down");
    return HealthResult::kOk;
  }
  HealthResult enable_health(ServerRef s, bool enable) override {
    record("enable_health", s, enable ? "1" : "0");
    return HealthResult::kOk;
  }
  HealthResult set_agent(ServerRef s, bool up) override {
    record("agent", s, up ? "up" : "down");
    return HealthResult::kOk;
  }
  HealthResult enable_agent(ServerRef s, bool enable) override {
    record("enable_agent", s, enable ? "1" : "0");
    return HealthResult::kOk;
  }
  void shutdown_server_sessions(ServerRef s) override { record("shutdown", s, ""); }

  // Not used by the admin actions.
  void set_weight(ServerRef, int) override {}
  AddrResult set_addr(ServerRef, std::string_view, int) override { return {}; }
  void set_maxconn(ServerRef, int) override {}
  bool has_frontend(std::string_view) const override { return false; }
  bool set_frontend_maxconn(std::string_view, int) override { return false; }
  FrontendResult change_frontend(std::string_view, FrontendAction) override {
    return FrontendResult::kNoFrontend;
  }
  int hard_maxconn() const override { return 0; }
  void set_global_maxconn(int) override {}
  void clear_counters(bool) override {}
  void clear_server_counters(ServerRef) override {}
  void dump_sessions(int, uint64_t, bool,
                     std::function<void(std::string, std::size_t)>) override {}
  void shutdown_session(int, uint64_t, std::function<void(bool)>) override {}
  bool find_proxy(std::string_view, int*) const override { return false; }
  void collect_errors(int, std::function<void(std::vector<ErrorSnapshot>, uint64_t)>) override {}

 private:
  const Srv& srv(ServerRef s) const { return servers[static_cast<std::size_t>(s.server)]; }
  void record(std::string_view call, ServerRef s, std::string_view arg) {
    std::string line = std::string(call) + " " + srv(s).name;
    if (!arg.empty()) line += " " + std::string(arg);
    calls.push_back(line);
  }
};

}  // namespace sluice::stats::testing

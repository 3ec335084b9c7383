// Server management commands against a fake ServerControl: parsing, the calls made, and
// HAProxy's exact answers (spec section 5 and checklist items 9-22).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cli/builtin.h"
#include "cli/cli.h"
#include "cli/server_commands.h"

namespace sluice::cli {
namespace {

// be (id 3): s1 (id 1, weight 1), s2 (id 2, weight 10, agent); st (id 4, static-rr): t1;
// fe (frontend, id 2). hard maxconn 1000.
class FakeControl : public stats::ServerControl {
 public:
  struct Srv {
    std::string be, name;
    int be_id, id;
    int weight, initial;
    bool static_lb = false, tracking = false, check = false, agent = false;
    std::string ip = "127.0.0.1";
    int port = 18081;
    int maxconn = 0;
    std::string admin = "ready";
    std::string health = "";
    bool check_enabled = true;
    bool disabled = false;        // its proxy is `disabled`
  };
  std::vector<Srv> servers{{"be", "s1", 3, 1, 1, 1},
                           {"be", "s2", 3, 2, 10, 10, false, false, true, true},
                           {"st", "t1", 4, 1, 1, 1, true, true}};
  std::map<std::string, int> fe_maxconn{{"fe", 100}};
  int global = 1000;
  std::vector<std::string> calls;

  static bool match(std::string_view want, const std::string& name, int id) {
    if (want.size() > 1 && want[0] == '#') return std::to_string(id) == want.substr(1);
    return want == name;
  }
  stats::FindResult find_server(std::string_view be, std::string_view sv,
                                stats::ServerRef* out) const override {
    bool be_found = false;
    for (std::size_t i = 0; i < servers.size(); ++i) {
      if (!match(be, servers[i].be, servers[i].be_id)) continue;
      be_found = true;
      if (match(sv, servers[i].name, servers[i].id)) {
        *out = {0, static_cast<int>(i)};
        return servers[i].disabled ? stats::FindResult::kDisabled : stats::FindResult::kOk;
      }
    }
    return be_found ? stats::FindResult::kNoServer : stats::FindResult::kNoBackend;
  }
  Srv& at(stats::ServerRef r) { return servers[static_cast<std::size_t>(r.server)]; }
  const Srv& at(stats::ServerRef r) const { return servers[static_cast<std::size_t>(r.server)]; }
  stats::ServerFacts facts(stats::ServerRef r) const override {
    const Srv& s = at(r);
    stats::ServerFacts f;
    f.weight = s.weight;
    f.initial_weight = s.initial;
    f.static_lb = s.static_lb;
    f.tracking = s.tracking;
    f.check_configured = s.check;
    f.agent_configured = s.agent;
    f.check_running = s.check;
    f.agent_running = s.agent;
    return f;
  }
  void set_admin_state(stats::ServerRef r, stats::AdminChange a) override {
    at(r).admin = a == stats::AdminChange::kReady ? "ready"
                  : a == stats::AdminChange::kDrain ? "drain" : "maint";
  }
  void set_weight(stats::ServerRef r, int w) override { at(r).weight = w; }
  stats::AddrResult set_addr(stats::ServerRef r, std::string_view ip, int port) override {
    stats::AddrResult res;
    if (ip.find_first_not_of("0123456789.:abcdef") != std::string_view::npos) {
      res.status = stats::AddrResult::Status::kInvalidAddr;
      return res;
    }
    Srv& s = at(r);
    res.old_ip = s.ip;
    res.old_port = s.port;
    s.ip = std::string(ip);
    if (port >= 0) s.port = port;
    res.new_ip = s.ip;
    res.new_port = s.port;
    return res;
  }
  void set_maxconn(stats::ServerRef r, int m) override { at(r).maxconn = m; }
  stats::HealthResult set_health(stats::ServerRef r, stats::HealthChange h) override {
    at(r).health = h == stats::HealthChange::kUp ? "up"
                   : h == stats::HealthChange::kStopping ? "stopping" : "down";
    return stats::HealthResult::kOk;
  }
  stats::HealthResult enable_health(stats::ServerRef r, bool e) override {
    if (!at(r).check) return e ? stats::HealthResult::kNotConfigured : stats::HealthResult::kOk;
    at(r).check_enabled = e;
    return stats::HealthResult::kOk;
  }
  stats::HealthResult set_agent(stats::ServerRef r, bool up) override {
    calls.push_back(std::string("agent ") + (up ? "up" : "down") + " " + at(r).name);
    return stats::HealthResult::kOk;
  }
  stats::HealthResult enable_agent(stats::ServerRef r, bool e) override {
    if (!at(r).agent) return e ? stats::HealthResult::kNotConfigured : stats::HealthResult::kOk;
    return stats::HealthResult::kOk;
  }
  bool has_frontend(std::string_view f) const override { return fe_maxconn.count(std::string(f)); }
  bool set_frontend_maxconn(std::string_view f, int m) override {
    if (!has_frontend(f)) return false;
    fe_maxconn[std::string(f)] = m;
    return true;
  }
  int hard_maxconn() const override { return 1000; }
  void set_global_maxconn(int m) override { global = m; }
  void clear_counters(bool all) override { calls.push_back(all ? "clear all" : "clear max"); }
  void clear_server_counters(stats::ServerRef r) override {
    calls.push_back("clear server " + at(r).name);
  }
  // Session commands answer later: the test delivers the answers (as the CLI thread would).
  std::vector<std::function<void()>> later;
  void dump_sessions(int thread, uint64_t id, bool detail,
                     std::function<void(std::string, std::size_t)> done) override {
    calls.push_back(fmt::format("dump t{} id={:x} detail={}", thread, id, detail));
    later.push_back([id, done] {
      if (id == 0 || id == 0xabc) done(fmt::format("0x{:x}: proto=tcpv4\n", id ? id : 0xabc), 1);
      else done("", 0);
    });
  }
  void shutdown_session(int thread, uint64_t id, std::function<void(bool)> done) override {
    calls.push_back(fmt::format("shutdown t{} id={:x}", thread, id));
    later.push_back([id, done] { done(id == 0xabc); });
  }
  void shutdown_server_sessions(stats::ServerRef r) override {
    calls.push_back("shutdown sessions " + at(r).name);
  }
  std::map<std::string, int> fe_state{{"fe", 0}};   // 0 open, 1 disabled, 2 shut down
  FrontendResult change_frontend(std::string_view f, FrontendAction a) override {
    auto it = fe_state.find(std::string(f));
    if (it == fe_state.end()) return FrontendResult::kNoFrontend;
    int want = a == FrontendAction::kDisable ? 1 : a == FrontendAction::kEnable ? 0 : 2;
    if (it->second == want) return FrontendResult::kAlready;
    if (it->second == 2) return FrontendResult::kWasShutDown;
    it->second = want;
    return FrontendResult::kOk;
  }
  bool find_proxy(std::string_view name, int* index) const override {
    if (name == "fe" || name == "2") *index = 0;
    else if (name == "be" || name == "3") *index = 1;
    else return false;
    return true;
  }
  std::vector<stats::ErrorSnapshot> snapshots;
  void collect_errors(int thread,
                      std::function<void(std::vector<stats::ErrorSnapshot>, uint64_t)> done) override {
    later.push_back([this, done] { done(snapshots, 7); });
  }
  bool has_backend(std::string_view b) const override {
    for (const auto& s : servers)
      if (match(b, s.be, s.be_id)) return true;
    return false;
  }
  void change_dynamic_cookie(std::string_view b, DynCookieChange c, std::string_view key) override {
    const char* what = c == DynCookieChange::kSetKey ? "key" : c == DynCookieChange::kEnable ? "on" : "off";
    calls.push_back(fmt::format("dyncookie {} {} {}", b, what, key));
  }
  void deliver() {
    auto all = std::move(later);
    later.clear();
    for (auto& fn : all) fn();
  }
};

class ServerCommands : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { register_server_commands(); }

  // A command that answers later: the workers' answers are delivered, then the session goes on.
  std::string later(const std::string& line, Level level = Level::kAdmin) {
    CliSession s(level, nullptr, 1, &ctl);
    std::string out;
    s.feed(line + "\n", &out);
    ctl.deliver();
    s.feed({}, &out);
    return out;
  }
  std::string run(const std::string& line, Level level = Level::kAdmin) {
    CliSession s(level, nullptr, 1, &ctl);
    std::string out;
    s.feed(line + "\n", &out);
    return out;
  }
  FakeControl ctl;
};

// The dynamic cookie commands: HAProxy 3.5's answers (measured), admin level.
TEST_F(ServerCommands, DynamicCookie) {
  EXPECT_EQ(run("set dynamic-cookie-key backend"), "A backend name is expected.\n\n");
  EXPECT_EQ(run("set dynamic-cookie-key backend be"), "String value expected.\n\n");
  EXPECT_EQ(run("set dynamic-cookie-key backend nosuch"), "No such backend.\n\n");
  EXPECT_EQ(run("set dynamic-cookie-key backend nosuch k"), "No such backend.\n\n");
  EXPECT_EQ(run("enable dynamic-cookie backend"), "A backend name is expected.\n\n");
  EXPECT_EQ(run("disable dynamic-cookie backend #9"), "No such backend.\n\n");
  EXPECT_EQ(run("set dynamic-cookie-key backend be k", Level::kOperator), "Permission denied\n\n");
  EXPECT_EQ(run("enable dynamic-cookie backend be", Level::kOperator), "Permission denied\n\n");
  EXPECT_EQ(run("disable dynamic-cookie backend be", Level::kOperator), "Permission denied\n\n");
  EXPECT_TRUE(ctl.calls.empty());
  EXPECT_EQ(run("set dynamic-cookie-key backend be k1 extra"), "\n");
  EXPECT_EQ(run("enable dynamic-cookie backend #3"), "\n");
  EXPECT_EQ(run("disable dynamic-cookie backend st"), "\n");
  EXPECT_EQ(ctl.calls, (std::vector<std::string>{"dyncookie be key k1", "dyncookie #3 on ",
                                                 "dyncookie st off "}));
  const std::string out = run("set dynamic-cookie-key be k");
  EXPECT_NE(out.find("  set dynamic-cookie-key backend <bk> <k> : change a backend secret key "
                     "for dynamic cookies\n"),
            std::string::npos)
      << out;
}

// Spec 5 and checklist 21: `clear counters` is operator level, `clear counters all` admin.
TEST_F(ServerCommands, ClearCounters) {
  EXPECT_EQ(run("clear counters", Level::kOperator), "\n");
  EXPECT_EQ(run("clear counters all", Level::kOperator), "Permission denied\n\n");
  EXPECT_EQ(run("clear counters", Level::kUser), "Permission denied\n\n");
  EXPECT_EQ(run("clear counters all"), "\n");
  EXPECT_EQ(ctl.calls, (std::vector<std::string>{"clear max", "clear all"}));
}

// Spec 5: a server of a `disabled` proxy is found, then refused.
TEST_F(ServerCommands, DisabledProxy) {
  ctl.servers.push_back({"off", "x", 5, 1, 1, 1});
  ctl.servers.back().disabled = true;
  EXPECT_EQ(run("set server off/x state ready"), "Proxy is disabled.\n\n");
  EXPECT_EQ(run("get weight off/x"), "Proxy is disabled.\n\n");
  EXPECT_EQ(run("disable server off/x"), "Proxy is disabled.\n\n");
  EXPECT_EQ(ctl.servers.back().admin, "ready");
  EXPECT_EQ(run("set server off/nope state ready"), "No such server.\n\n");
}

TEST_F(ServerCommands, SetServerState) {                       // checklist 9, 10, 11, 12
  EXPECT_EQ(run("set server be/s1 state drain"), "\n");
  EXPECT_EQ(ctl.servers[0].admin, "drain");
  EXPECT_EQ(run("set server be/s1 state maint"), "\n");
  EXPECT_EQ(ctl.servers[0].admin, "maint");
  EXPECT_EQ(run("set server be/s1 state ready"), "\n");
  EXPECT_EQ(ctl.servers[0].admin, "ready");
  EXPECT_EQ(run("set server be/s1 state foo"),
            "'set server <srv> state' expects 'ready', 'drain' and 'maint'.\n\n");
  EXPECT_EQ(run("set server be/s1 state"),
            "'set server <srv> state' expects 'ready', 'drain' and 'maint'.\n\n");
}

TEST_F(ServerCommands, ServerResolution) {                     // checklist 13
  EXPECT_EQ(run("set server be/x state ready"), "No such server.\n\n");
  EXPECT_EQ(run("set server x/s1 state ready"), "No such backend.\n\n");
  EXPECT_EQ(run("set server be state ready"), "Require 'backend/server'.\n\n");
  EXPECT_EQ(run("set server"), "Require 'backend/server'.\n\n");
  EXPECT_EQ(run("set server be/ state ready"), "Require 'backend/server'.\n\n");
  EXPECT_EQ(run("set server #3/#2 state maint"), "\n");
  EXPECT_EQ(ctl.servers[1].admin, "maint");
  EXPECT_EQ(run("get weight #9/s1"), "No such backend.\n\n");
}

TEST_F(ServerCommands, WeightAndGetWeight) {                   // checklist 14, 15
  EXPECT_EQ(run("set server be/s1 weight 50"), "\n");
  EXPECT_EQ(run("get weight be/s1"), "50 (initial 1)\n\n");
  EXPECT_EQ(run("set server be/s1 weight 300"),
            "Absolute weight can only be between 0 and 256 inclusive.\n\n");
  EXPECT_EQ(run("set server be/s1 weight -1"),
            "Absolute weight can only be between 0 and 256 inclusive.\n\n");
  EXPECT_EQ(run("set server be/s1 weight"), "Require <weight> or <weight%>.\n\n");
  EXPECT_EQ(run("set server be/s1 weight x"),
            "Empty weight string empty or preceded by garbage\n\n");
  EXPECT_EQ(run("set server be/s1 weight 5x"), "Trailing garbage in weight string\n\n");
  EXPECT_EQ(run("set server be/s1 weight -5%"), "Relative weight must be positive.\n\n");
  EXPECT_EQ(run("set server be/s2 weight 50%"), "\n");
  EXPECT_EQ(ctl.servers[1].weight, 5);
  EXPECT_EQ(run("set weight be/s2 1000%"), "\n");
  EXPECT_EQ(ctl.servers[1].weight, 100);
  EXPECT_EQ(run("set weight be/s2 99999999%"), "\n");
  EXPECT_EQ(ctl.servers[1].weight, 256);
  EXPECT_EQ(run("set weight be/s2 7"), "\n");
  EXPECT_EQ(run("get weight be/s2"), "7 (initial 10)\n\n");
  EXPECT_EQ(run("set weight be/s2"), "Require <weight> or <weight%>.\n\n");
  EXPECT_EQ(run("set weight be"), "Require 'backend/server'.\n\n");
}

TEST_F(ServerCommands, StaticAlgorithmOnlyAcceptsZeroOrFull) {
  const char* msg =
      "Backend is using a static LB algorithm and only accepts weights '0%' and '100%'.\n\n";
  EXPECT_EQ(run("set server st/t1 weight 5"), msg);
  EXPECT_EQ(run("set server st/t1 weight 0%"), "\n");
  EXPECT_EQ(ctl.servers[2].weight, 0);
  EXPECT_EQ(run("set server st/t1 weight 100%"), "\n");
  EXPECT_EQ(ctl.servers[2].weight, 1);
}

TEST_F(ServerCommands, SetServerAddr) {                        // checklist 16
  EXPECT_EQ(run("set server be/s1 addr 127.0.0.2"),
            "IP changed from '127.0.0.1' to '127.0.0.2' by 'stats socket command'\n\n");
  EXPECT_EQ(run("set server be/s1 addr 127.0.0.2"), "nothing changed\n\n");
  EXPECT_EQ(run("set server be/s1 addr ::1 port 18085"),
            "IP changed from '127.0.0.2' to '::1', port changed from '18081' to '18085' by "
            "'stats socket command'\n\n");
  EXPECT_EQ(run("set server be/s1 addr ::1 port 18086"),
            "port changed from '18085' to '18086' by 'stats socket command'\n\n");
  EXPECT_EQ(run("set server be/s1 addr foo"), "Invalid addr 'foo'\n\n");
  EXPECT_EQ(run("set server be/s1 addr"),
            "set server <b>/<s> addr requires an address and optionally a port.\n\n");
  EXPECT_EQ(run("set server be/s1 addr ::1 port x"), "provided port is not an integer\n\n");
  EXPECT_EQ(run("set server be/s1 addr ::1 port 70000"), "provided port is invalid\n\n");
}

TEST_F(ServerCommands, SetServerHealth) {                      // checklist 17
  EXPECT_EQ(run("set server be/s1 health down"), "\n");
  EXPECT_EQ(ctl.servers[0].health, "down");
  EXPECT_EQ(run("set server be/s1 health stopping"), "\n");
  EXPECT_EQ(ctl.servers[0].health, "stopping");
  EXPECT_EQ(run("set server be/s1 health up"), "\n");
  EXPECT_EQ(ctl.servers[0].health, "up");
  EXPECT_EQ(run("set server be/s1 health maybe"),
            "'set server <srv> health' expects 'up', 'stopping', or 'down'.\n\n");
  EXPECT_EQ(run("set server st/t1 health up"), "cannot change health on a tracking server.\n\n");
}

TEST_F(ServerCommands, AgentAndCheckSettings) {
  EXPECT_EQ(run("set server be/s1 agent up"), "agent checks are not enabled on this server.\n\n");
  EXPECT_EQ(run("set server be/s2 agent up"), "\n");
  EXPECT_EQ(run("set server be/s2 agent sideways"),
            "'set server <srv> agent' expects 'up' or 'down'.\n\n");
  ASSERT_EQ(ctl.calls.size(), 1u);
  EXPECT_EQ(ctl.calls[0], "agent up s2");
  EXPECT_EQ(run("set server be/s1 check-port 80"),
            "health checks are not enabled on this server\n\n");
  EXPECT_EQ(run("enable agent be/s1"), "Agent was not configured on this server, cannot enable.\n\n");
  EXPECT_EQ(run("disable agent be/s1"), "\n");
  EXPECT_EQ(run("enable agent be/s2"), "\n");
}

TEST_F(ServerCommands, UsageForAnythingElse) {
  std::string usage =
      "usage: set server <backend>/<server> addr | agent | agent-addr | agent-port | agent-send "
      "| check-addr | check-port | fqdn | health | name | ssl | state | weight\n\n";
  EXPECT_EQ(run("set server be/s1 frobnicate"), usage);
  EXPECT_EQ(run("set server be/s1"), usage);
}

TEST_F(ServerCommands, EnableDisableServer) {
  EXPECT_EQ(run("disable server be/s1"), "\n");
  EXPECT_EQ(ctl.servers[0].admin, "maint");
  EXPECT_EQ(run("enable server be/s1"), "\n");
  EXPECT_EQ(ctl.servers[0].admin, "ready");
  EXPECT_EQ(run("disable server be/zz"), "No such server.\n\n");
  EXPECT_EQ(run("enable server"), "Require 'backend/server'.\n\n");
}

TEST_F(ServerCommands, EnableDisableHealth) {                  // checklist 18
  EXPECT_EQ(run("enable health be/s1"),
            "Health check was not configured on this server, cannot enable.\n\n");
  EXPECT_EQ(run("disable health be/s1"), "\n");
  EXPECT_EQ(run("disable health be/s2"), "\n");
  EXPECT_FALSE(ctl.servers[1].check_enabled);
  EXPECT_EQ(run("enable health be/s2"), "\n");
  EXPECT_TRUE(ctl.servers[1].check_enabled);
}

TEST_F(ServerCommands, SetMaxconnServer) {
  EXPECT_EQ(run("set maxconn server be/s1 10"), "\n");
  EXPECT_EQ(ctl.servers[0].maxconn, 10);
  EXPECT_EQ(run("set maxconn server be/s1 0"), "\n");
  EXPECT_EQ(ctl.servers[0].maxconn, 0);
  EXPECT_EQ(run("set maxconn server be/s1"), "Require <maxconn>.\n\n");
  EXPECT_EQ(run("set maxconn server be/s1 x"), "maxconn string empty or preceded by garbage\n\n");
  EXPECT_EQ(run("set maxconn server be/s1 5x"), "Trailing garbage in maxconn string\n\n");
  EXPECT_EQ(run("set maxconn server be/nope 5"), "No such server.\n\n");
}

TEST_F(ServerCommands, SetMaxconnFrontend) {                   // checklist 19
  EXPECT_EQ(run("set maxconn frontend fe 500"), "\n");
  EXPECT_EQ(ctl.fe_maxconn["fe"], 500);
  EXPECT_EQ(run("set maxconn frontend"), "A frontend name is expected.\n\n");
  EXPECT_EQ(run("set maxconn frontend nope 5"), "No such frontend.\n\n");
  EXPECT_EQ(run("set maxconn frontend nope"), "No such frontend.\n\n");
  EXPECT_EQ(run("set maxconn frontend fe"), "Integer value expected.\n\n");
  EXPECT_EQ(run("set maxconn frontend fe -1"), "Value out of range.\n\n");
  EXPECT_EQ(ctl.fe_maxconn["fe"], 500);
}

TEST_F(ServerCommands, SetMaxconnGlobal) {                     // checklist 20
  EXPECT_EQ(run("set maxconn global 5000"), "Value out of range.\n\n");
  EXPECT_EQ(ctl.global, 1000);
  EXPECT_EQ(run("set maxconn global 200"), "\n");
  EXPECT_EQ(ctl.global, 200);
  EXPECT_EQ(run("set maxconn global 0"), "\n");
  EXPECT_EQ(ctl.global, 1000);
  EXPECT_EQ(run("set maxconn global"), "Expects an integer value.\n\n");
}

TEST_F(ServerCommands, AdminOnlyBelowAdminIsDenied) {          // checklist 22
  for (Level level : {Level::kOperator, Level::kUser}) {
    for (const char* cmd :
         {"set server be/s1 state maint", "set weight be/s1 5", "disable server be/s1",
          "enable server be/s1", "disable health be/s1", "enable health be/s1",
          "set maxconn server be/s1 3", "set maxconn frontend fe 3", "set maxconn global 3",
          "set server be/s1 addr 10.0.0.1"}) {
      EXPECT_EQ(run(cmd, level), "Permission denied\n\n") << cmd;
    }
  }
  EXPECT_EQ(ctl.servers[0].admin, "ready");
  EXPECT_EQ(ctl.servers[0].weight, 1);
  EXPECT_EQ(ctl.servers[0].ip, "127.0.0.1");
  EXPECT_EQ(ctl.global, 1000);
  // get weight is a user-level command.
  EXPECT_EQ(run("get weight be/s1", Level::kUser), "1 (initial 1)\n\n");
}

TEST_F(ServerCommands, WithoutControlNothingChanges) {
  CliSession s(Level::kAdmin, nullptr, 1, nullptr);
  std::string out;
  s.feed("set server be/s1 state maint\n", &out);
  EXPECT_EQ(out, "No such backend.\n\n");
}

TEST_F(ServerCommands, ListedInHelp) {
  std::string out = run("help");
  for (const char* u : {"set server <bk>/<srv> [opts]", "get weight <bk>/<srv>",
                        "set maxconn global <value>", "enable health"})
    EXPECT_NE(out.find(u), std::string::npos) << u;
}

// `show sess` and `shutdown session` answer once every worker has answered: nothing is
// written, and nothing more runs, until then (Command::run_later).
TEST_F(ServerCommands, ShowSessWaitsForTheWorkers) {
  CliSession s(Level::kAdmin, nullptr, 2, &ctl);
  int woken = 0;
  s.set_on_reply([&] { ++woken; });
  std::string out;
  EXPECT_TRUE(s.feed("prompt\n", &out));
  out.clear();
  EXPECT_TRUE(s.feed("show sess; echo after\n", &out));
  EXPECT_EQ(out, "");
  EXPECT_TRUE(s.waiting());
  EXPECT_TRUE(s.blocked());
  // More input waits too.
  EXPECT_TRUE(s.feed("echo next\n", &out));
  EXPECT_EQ(out, "");
  ctl.deliver();
  EXPECT_EQ(woken, 1);
  EXPECT_FALSE(s.waiting());
  EXPECT_TRUE(s.feed({}, &out));
  EXPECT_EQ(out, "0xabc: proto=tcpv4\n\nafter\n\n> next\n\n> ");
  EXPECT_EQ(ctl.calls, (std::vector<std::string>{"dump t2 id=0 detail=false"}));
}

TEST_F(ServerCommands, ShowSessArguments) {
  auto answer = [&](const std::string& line, Level level = Level::kAdmin) {
    CliSession s(level, nullptr, 1, &ctl);
    std::string out;
    bool open = s.feed(line + "\n", &out);
    ctl.deliver();
    if (s.waiting()) return std::string("still waiting");
    open = s.feed({}, &out);
    EXPECT_FALSE(open);   // the default mode closes after the answer
    return out;
  };
  EXPECT_EQ(answer("show sess all"), "0xabc: proto=tcpv4\n\n");
  EXPECT_EQ(answer("show sess 0xabc"), "0xabc: proto=tcpv4\n\n");
  EXPECT_EQ(answer("show sess 0x999"), "Session not found.\n\n");
  EXPECT_EQ(answer("show sess 0xzz"), "Session pointer expected (use 'show sess').\n\n");
  EXPECT_EQ(answer("show sess -1"), "Session pointer expected (use 'show sess').\n\n");
  EXPECT_EQ(answer("show sess help").substr(0, 37), "Usage: show sess [help | all | <id>]\n");
  EXPECT_EQ(answer("show sess", Level::kUser), "Permission denied\n\n");
  EXPECT_EQ(ctl.calls, (std::vector<std::string>{"dump t1 id=0 detail=true",
                                                 "dump t1 id=abc detail=true",
                                                 "dump t1 id=999 detail=true"}));
}

TEST_F(ServerCommands, ShutdownSession) {
  EXPECT_EQ(later("shutdown session 0xabc"), "\n");
  EXPECT_EQ(later("shutdown session 0x1234"), "No such session (use 'show sess').\n\n");
  EXPECT_EQ(later("shutdown session"), "Session pointer expected (use 'show sess').\n\n");
  EXPECT_EQ(later("shutdown session foo"), "Session pointer expected (use 'show sess').\n\n");
  EXPECT_EQ(later("shutdown session 0xabc", Level::kOperator), "Permission denied\n\n");
  EXPECT_EQ(run("shutdown sessions server be/s2"), "\n");
  EXPECT_EQ(run("shutdown sessions server be/zz"), "No such server.\n\n");
  EXPECT_EQ(run("shutdown sessions server be/s2", Level::kOperator), "Permission denied\n\n");
  EXPECT_EQ(ctl.calls, (std::vector<std::string>{"shutdown t1 id=abc", "shutdown t1 id=1234",
                                                 "shutdown sessions s2"}));
}

// A reply that arrives after its connection was closed does nothing.
TEST_F(ServerCommands, ReplyAfterTheSessionIsGone) {
  {
    CliSession s(Level::kAdmin, nullptr, 1, &ctl);
    std::string out;
    s.set_on_reply([] { ADD_FAILURE() << "woke a destroyed session"; });
    s.feed("show sess\n", &out);
  }
  ctl.deliver();
}

// Spec 5: disable / enable / shutdown frontend, with HAProxy 2.6's messages.
TEST_F(ServerCommands, FrontendStates) {
  EXPECT_EQ(run("disable frontend"), "A frontend name is expected.\n\n");
  EXPECT_EQ(run("disable frontend nope"), "No such frontend.\n\n");
  EXPECT_EQ(run("enable frontend fe"), "All sockets are already enabled.\n\n");
  EXPECT_EQ(run("disable frontend fe"), "\n");
  EXPECT_EQ(run("disable frontend fe"), "All sockets are already disabled.\n\n");
  EXPECT_EQ(run("enable frontend fe"), "\n");
  EXPECT_EQ(run("shutdown frontend fe"), "\n");
  EXPECT_EQ(run("shutdown frontend fe"), "Frontend was already shut down.\n\n");
  EXPECT_EQ(run("enable frontend fe"), "Frontend was previously shut down, cannot enable.\n\n");
  EXPECT_EQ(run("disable frontend fe"), "Frontend was previously shut down, cannot disable.\n\n");
  EXPECT_EQ(run("shutdown frontend"), "A frontend name is expected.\n\n");
  EXPECT_EQ(run("disable frontend fe", Level::kOperator), "Permission denied\n\n");
}

TEST_F(ServerCommands, ClearServerCounters) {
  EXPECT_EQ(run("clear counters server be/s1"), "Server counters cleared.\n\n");
  EXPECT_EQ(run("clear counters server be/s1 force"), "Server counters cleared.\n\n");
  EXPECT_EQ(run("clear counters server be/nope"), "No such server.\n\n");
  EXPECT_EQ(run("clear counters server"), "Require 'backend/server'.\n\n");
  EXPECT_EQ(run("clear counters server be/s1", Level::kOperator), "Permission denied\n\n");
  EXPECT_EQ(ctl.calls, (std::vector<std::string>{"clear server s1", "clear server s1"}));
}

// The printable dump of `show errors`: one line per message line, escapes, long lines
// continued with `+`.
TEST(ShowErrorsDump, Lines) {
  EXPECT_EQ(dump_message("GET /a b HTTP/1.1\r\nHost: x\r\n\r\n"),
            "  00000  GET /a b HTTP/1.1\\r\\n\n"
            "  00019  Host: x\\r\\n\n"
            "  00028  \\r\\n\n");
  EXPECT_EQ(dump_message(std::string("a\tb\\c\x01\xff\0", 8)),
            "  00000  a\\tb\\\\c\\x01\\xff\\x00\n");
  std::string long_line(100, 'x');
  EXPECT_EQ(dump_message(long_line + "\n"),
            "  00000  " + std::string(72, 'x') + "\n  00072+ " + std::string(28, 'x') + "\\n\n");
  EXPECT_EQ(dump_message(""), "");
}

TEST_F(ServerCommands, ShowErrors) {
  stats::ErrorSnapshot req;
  req.proxy = 0;
  req.proxy_name = "fe";
  req.proxy_id = 2;
  req.other_name = "<NONE>";
  req.server_name = "<NONE>";
  req.wall_us = 1'700'000'000'123'000;
  req.event = 3;
  req.source = "127.0.0.1:4000";
  req.reason = "invalid request-target";
  req.len = 18;
  req.bytes = "GET /a b HTTP/1.1\n";
  stats::ErrorSnapshot res = req;
  res.response = true;
  res.proxy = 1;
  res.proxy_name = "be";
  res.proxy_id = 3;
  res.other_name = "fe";
  res.other_id = 2;
  res.server_name = "s1";
  res.server_id = 1;
  res.event = 6;
  res.reason = "invalid status line";
  res.bytes = "HTTP/1.1 2000 OK\r\n";
  res.len = res.bytes.size();
  ctl.snapshots = {req, res};
  std::string all = later("show errors");
  EXPECT_TRUE(all.starts_with("Total events captured on [")) << all;
  EXPECT_NE(all.find("] : 7\n \n["), std::string::npos) << all;
  EXPECT_NE(all.find("] frontend fe (#2): invalid request\n"
                     "  backend <NONE> (#-1), server <NONE> (#-1), event #3, src 127.0.0.1:4000\n"
                     "  len 18, invalid request-target :\n  \n"
                     "  00000  GET /a b HTTP/1.1\\n\n \n["),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("] backend be (#3): invalid response\n"
                     "  frontend fe (#2), server s1 (#1), event #6, src 127.0.0.1:4000\n"),
            std::string::npos)
      << all;
  EXPECT_TRUE(all.ends_with("  00000  HTTP/1.1 2000 OK\\r\\n\n\n")) << all;
  EXPECT_EQ(later("show errors be").find("invalid request"), std::string::npos);
  EXPECT_NE(later("show errors 3").find("invalid response"), std::string::npos);
  EXPECT_EQ(later("show errors -1 request").find("invalid response"), std::string::npos);
  EXPECT_NE(later("show errors -1 request").find("invalid request"), std::string::npos);
  EXPECT_EQ(later("show errors fe response").find("invalid"), std::string::npos);
  EXPECT_EQ(later("show errors nope"), "No such proxy.\n\n");
  EXPECT_EQ(later("show errors", Level::kUser), "Permission denied\n\n");
}

}  // namespace
}  // namespace sluice::cli

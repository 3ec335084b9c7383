// The stats page's admin form: how a POST body is read, which ServerControl call each action
// makes, and the result codes, as HAProxy 3.5 answers them.
#include "stats/admin.h"

#include <gtest/gtest.h>

#include "fake_control.h"

namespace sluice::stats {
namespace {

using S = AdminStatus;
using Calls = std::vector<std::string>;

struct Outcome {
  S status;
  Calls calls;
};

Outcome post(std::string_view body) {
  testing::FakeControl c;
  S st = apply_admin_form(parse_admin_form(body), c);
  return {st, c.calls};
}

TEST(statsAdminForm, Decoding) {
  AdminForm f = parse_admin_form("s=a+b&s=c%2Fd&action=maint&b=%233");
  // Applied last first, as HAProxy walks the body backwards.
  EXPECT_EQ(f.servers, (std::vector<std::string>{"c/d", "a b"}));
  EXPECT_EQ(f.backend, "#3");
  EXPECT_EQ(f.action, "maint");
  EXPECT_FALSE(f.too_long);
  // Keys are decoded too; unknown keys and a parameter without `=` are ignored or empty.
  f = parse_admin_form("%73=x&y&s&&action=drain&z=1");
  EXPECT_EQ(f.servers, (std::vector<std::string>{"", "x"}));
  EXPECT_EQ(f.action, "drain");
  EXPECT_FALSE(f.backend);
  // A decoded NUL ends the value (HAProxy compares C strings).
  EXPECT_EQ(parse_admin_form("s=s1%00zz").servers, (std::vector<std::string>{"s1"}));
  // Keys and values are case-sensitive: `S` is not a server.
  EXPECT_TRUE(parse_admin_form("S=s1").servers.empty());
}

TEST(statsAdminForm, LastBackendAndActionWin) {
  AdminForm f = parse_admin_form("b=x&action=ready&s=s1&action=maint&b=be");
  EXPECT_EQ(f.backend, "be");
  EXPECT_EQ(f.action, "maint");
  EXPECT_EQ(post("b=nobe&s=s1&action=maint&b=be").status, S::kDone);
  EXPECT_EQ(post("s=s1&b=be&action=ready&b=nobe").status, S::kErrp);
  EXPECT_EQ(post("action=frob&s=s1&action=ready&b=be").status, S::kDone);
  EXPECT_EQ(post("s=s1&action=ready&action=frob&b=be").status, S::kErrp);
}

TEST(statsAdminForm, UndecodableStopsReading) {
  // Read from the end: what precedes the bad parameter is not read, without an error.
  AdminForm f = parse_admin_form("s=s1%zz&s=s2&action=maint&b=be");
  EXPECT_EQ(f.servers, (std::vector<std::string>{"s2"}));
  EXPECT_EQ(post("s=s1%zz&s=s2&action=maint&b=be").status, S::kDone);
  EXPECT_EQ(post("s=s1&action=ready&b=be%zz").status, S::kNone);
  EXPECT_EQ(post("s=s1&action=ready&b=be%2").status, S::kNone);
}

TEST(statsAdminForm, TooLongParameter) {
  // 2047 bytes fit HAProxy's key buffer, 2048 do not.
  std::string fits = "s=s1&x=" + std::string(2045, 'x') + "&action=maint&b=be";
  EXPECT_EQ(post(fits).status, S::kDone);
  std::string too_long = "s=s1&x=" + std::string(2046, 'x') + "&action=maint&b=be";
  Outcome o = post(too_long);
  EXPECT_EQ(o.status, S::kErrp);
  EXPECT_TRUE(o.calls.empty());   // s=s1 comes before it: never read
  // What follows it is applied, and the answer is still ERRP.
  o = post("x=" + std::string(3000, 'x') + "&s=s1&action=maint&b=be");
  EXPECT_EQ(o.status, S::kErrp);
  EXPECT_EQ(o.calls, (Calls{"admin s1 maint"}));
}

TEST(statsAdminForm, Codes) {
  Outcome o = post("s=s1&s=s2&action=maint&b=be");
  EXPECT_EQ(o.status, S::kDone);
  EXPECT_EQ(o.calls, (Calls{"admin s2 maint", "admin s1 maint"}));
  // Already in that state: still counted (the fake, like HAProxy, does not tell).
  EXPECT_EQ(post("s=s1&s=s1&action=maint&b=be").status, S::kDone);
  // Unknown server among known ones; all unknown; no server known at all.
  o = post("s=s1&s=zz&action=ready&b=be");
  EXPECT_EQ(o.status, S::kPart);
  EXPECT_EQ(o.calls, (Calls{"admin s1 ready"}));
  EXPECT_EQ(post("s=zz&s=yy&action=maint&b=be").status, S::kErrp);
  EXPECT_EQ(post("s=&action=maint&b=be").status, S::kErrp);
  EXPECT_EQ(post("s&action=maint&b=be").status, S::kErrp);
  // The page names servers: `#<id>` is not one.
  EXPECT_EQ(post("s=%231&action=maint&b=be").status, S::kErrp);
  // Unknown backend or action: ERRP even without a server, and nothing is applied.
  o = post("s=s1&action=maint&b=nobe");
  EXPECT_EQ(o.status, S::kErrp);
  EXPECT_TRUE(o.calls.empty());
  EXPECT_EQ(post("action=maint&b=nobe").status, S::kErrp);
  EXPECT_EQ(post("s=s1&action=frob&b=be").status, S::kErrp);
  EXPECT_EQ(post("s=s1&action=MAINT&b=be").status, S::kErrp);
  EXPECT_EQ(post("s=s1&action=&b=be").status, S::kErrp);
  EXPECT_EQ(post("action=frob").status, S::kErrp);
  // Missing pieces: nothing to do.
  EXPECT_EQ(post("action=maint&b=be").status, S::kNone);
  EXPECT_EQ(post("s=s1&action=maint").status, S::kNone);
  EXPECT_EQ(post("s=s1&b=be").status, S::kNone);
  EXPECT_EQ(post("").status, S::kNone);
  EXPECT_TRUE(post("s=s1&b=be").calls.empty());
  // The backend by name or by id.
  EXPECT_EQ(post("s=s1&action=maint&b=%233").status, S::kDone);
  EXPECT_EQ(post("s=s1&action=maint&b=#3").status, S::kDone);
}

TEST(statsAdminForm, EachActionsCall) {
  struct Case {
    const char* action;
    Calls calls;
  } cases[] = {
      {"ready", {"admin s1 ready"}},
      {"drain", {"admin s1 drain"}},
      {"maint", {"admin s1 maint"}},
      {"dhlth", {"enable_health s1 0"}},
      {"ehlth", {"enable_health s1 1"}},
      {"hrunn", {"health s1 up"}},
      {"hnolb", {"health s1 stopping"}},
      {"hdown", {"health s1 down"}},
      {"dagent", {"enable_agent s1 0"}},
      {"eagent", {"enable_agent s1 1"}},
      {"arunn", {"agent s1 up"}},
      {"adown", {"agent s1 down"}},
      {"shutdown", {"shutdown s1"}},
  };
  for (const auto& c : cases) {
    Outcome o = post(std::string("s=s1&action=") + c.action + "&b=be");
    EXPECT_EQ(o.status, S::kDone) << c.action;
    EXPECT_EQ(o.calls, c.calls) << c.action;
  }
}

TEST(statsAdminForm, ActionsThatDoNotApply) {
  // s2 has no check and no agent: health and agent actions skip it (not counted).
  for (const char* a : {"dhlth", "ehlth", "dagent", "eagent", "arunn", "adown"}) {
    Outcome o = post(std::string("s=s2&action=") + a + "&b=be");
    EXPECT_EQ(o.status, S::kNone) << a;
    EXPECT_TRUE(o.calls.empty()) << a;
    // With a server it applies to, the skipped one does not make it partial.
    EXPECT_EQ(post(std::string("s=s1&s=s2&action=") + a + "&b=be").status, S::kDone) << a;
    // Nor with an unknown one: one named, none changed.
    EXPECT_EQ(post(std::string("s=s2&s=zz&action=") + a + "&b=be").status, S::kErrp) << a;
  }
  // An agent stopped by `disable agent`: it can be enabled again, but not forced up or down.
  for (const char* a : {"arunn", "adown", "eagent"}) {
    testing::FakeControl stopped;
    stopped.servers[0].facts.agent_running = false;
    S st = apply_admin_form(parse_admin_form(std::string("s=s1&action=") + a + "&b=be"), stopped);
    EXPECT_EQ(st, std::string_view(a) == "eagent" ? S::kDone : S::kNone) << a;
  }
  // Forced health: applies without a check, not to a tracking server.
  Outcome o = post("s=s2&action=hdown&b=be");
  EXPECT_EQ(o.status, S::kDone);
  EXPECT_EQ(o.calls, (Calls{"health s2 down"}));
  o = post("s=t1&action=hrunn&b=be");
  EXPECT_EQ(o.status, S::kNone);
  EXPECT_TRUE(o.calls.empty());
  EXPECT_EQ(post("s=t1&s=s2&action=hdown&b=be").status, S::kDone);
  // A disabled proxy: its servers change state, but it has no sessions to kill.
  EXPECT_EQ(post("s=v1&action=maint&b=off").status, S::kDone);
  o = post("s=v1&action=shutdown&b=off");
  EXPECT_EQ(o.status, S::kNone);
  EXPECT_TRUE(o.calls.empty());
}

TEST(statsAdminForm, ActionList) {
  std::vector<std::string_view> values;
  for (const auto& a : admin_actions()) values.push_back(a.value);
  EXPECT_EQ(values, (std::vector<std::string_view>{"ready", "drain", "maint", "dhlth", "ehlth",
                                                   "hrunn", "hnolb", "hdown", "dagent",
                                                   "eagent", "arunn", "adown", "shutdown"}));
  EXPECT_EQ(parse_admin_action("shutdown"), AdminAction::kShutdown);
  EXPECT_FALSE(parse_admin_action("Shutdown"));
  EXPECT_EQ(admin_status_code(S::kPart), "PART");
  EXPECT_EQ(admin_status_code(S::kExcd), "EXCD");
}

}  // namespace
}  // namespace sluice::stats

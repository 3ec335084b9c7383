// The stats page's admin form: reading a POST body and applying it to the servers, with the
// result codes HAProxy 3.5 answers (measured on its binary: see admin.h for the rules).
#include "stats/admin.h"

#include <array>

#include "base/strings.h"

namespace sluice::stats {
namespace {

using A = AdminAction;

constexpr std::array<AdminActionInfo, 13> kActions = {{
    {"ready", "Set state to READY", A::kReady},
    {"drain", "Set state to DRAIN", A::kDrain},
    {"maint", "Set state to MAINT", A::kMaint},
    {"dhlth", "Health: disable checks", A::kDisableHealth},
    {"ehlth", "Health: enable checks", A::kEnableHealth},
    {"hrunn", "Health: force UP", A::kHealthUp},
    {"hnolb", "Health: force NOLB", A::kHealthNolb},
    {"hdown", "Health: force DOWN", A::kHealthDown},
    {"dagent", "Agent: disable checks", A::kDisableAgent},
    {"eagent", "Agent: enable checks", A::kEnableAgent},
    {"arunn", "Agent: force UP", A::kAgentUp},
    {"adown", "Agent: force DOWN", A::kAgentDown},
    {"shutdown", "Kill Sessions", A::kShutdown},
}};

// HAProxy reads each parameter into a 2048-byte buffer with its terminating NUL.
constexpr std::size_t kMaxParam = 2047;

// application/x-www-form-urlencoded: `%XX` and `+`. False on a `%` without two hex digits.
// The text stops at a decoded NUL, as the C string HAProxy compares would.
bool form_decode(std::string_view in, std::string* out) {
  out->clear();
  for (std::size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '+') {
      c = ' ';
    } else if (c == '%') {
      int hi = i + 1 < in.size() ? base::hex_value(in[i + 1]) : -1;
      int lo = i + 2 < in.size() ? base::hex_value(in[i + 2]) : -1;
      if (hi < 0 || lo < 0) return false;
      c = static_cast<char>(hi * 16 + lo);
      i += 2;
    }
    out->push_back(c);
  }
  std::size_t nul = out->find('\0');
  if (nul != std::string::npos) out->resize(nul);
  return true;
}

// What one action did to one found server: true when it counts as changed. The checks
// before each call are HAProxy's conditions for counting the server at all.
bool apply_to(ServerControl& c, ServerRef ref, AdminAction action, bool proxy_disabled) {
  switch (action) {
    case A::kReady:
      c.set_admin_state(ref, AdminChange::kReady);
      return true;
    case A::kDrain:
      c.set_admin_state(ref, AdminChange::kDrain);
      return true;
    case A::kMaint:
      c.set_admin_state(ref, AdminChange::kMaint);
      return true;
    case A::kDisableHealth:
    case A::kEnableHealth:
      // Disabling a check that does not exist "succeeds" on the CLI, but the page does not
      // count it: without a check the server is skipped either way.
      if (!c.facts(ref).check_configured) return false;
      return c.enable_health(ref, action == A::kEnableHealth) == HealthResult::kOk;
    case A::kHealthUp:
    case A::kHealthNolb:
    case A::kHealthDown: {
      // Forced even without a check (the operational state itself), but never on a server
      // whose health follows another one's.
      if (c.facts(ref).tracking) return false;
      HealthChange h = action == A::kHealthUp     ? HealthChange::kUp
                       : action == A::kHealthNolb ? HealthChange::kStopping
                                                  : HealthChange::kDown;
      return c.set_health(ref, h) == HealthResult::kOk;
    }
    case A::kDisableAgent:
    case A::kEnableAgent:
      if (!c.facts(ref).agent_configured) return false;
      return c.enable_agent(ref, action == A::kEnableAgent) == HealthResult::kOk;
    case A::kAgentUp:
    case A::kAgentDown:
      // HAProxy skips a server whose agent is not configured, or stopped by `disable agent`.
      if (!c.facts(ref).agent_running) return false;
      return c.set_agent(ref, action == A::kAgentUp) == HealthResult::kOk;
    case A::kShutdown:
      // A disabled proxy has no sessions to kill; HAProxy leaves it out of the count.
      if (proxy_disabled) return false;
      c.shutdown_server_sessions(ref);
      return true;
  }
  return false;
}

}  // namespace

std::span<const AdminActionInfo> admin_actions() { return kActions; }

std::optional<AdminAction> parse_admin_action(std::string_view value) {
  for (const auto& a : kActions)
    if (a.value == value) return a.action;
  return std::nullopt;
}

AdminForm parse_admin_form(std::string_view body) {
  AdminForm f;
  std::string key, value;
  // From the end: HAProxy's page puts `action` and `b` after the servers, and its parser
  // walks backwards so that it knows them first. What it stops at bounds what counts.
  std::size_t end = body.size();
  while (true) {
    std::size_t amp = end == 0 ? std::string_view::npos : body.rfind('&', end - 1);
    std::size_t start = amp == std::string_view::npos ? 0 : amp + 1;
    std::string_view param = body.substr(start, end - start);
    if (param.size() > kMaxParam) {
      f.too_long = true;
      break;
    }
    std::size_t eq = param.find('=');
    std::string_view raw_key = param.substr(0, eq);
    std::string_view raw_value = eq == std::string_view::npos ? std::string_view()
                                                              : param.substr(eq + 1);
    if (!form_decode(raw_key, &key) || !form_decode(raw_value, &value)) break;
    if (key == "s") {
      f.servers.push_back(value);
    } else if (key == "b") {
      if (!f.backend) f.backend = value;
    } else if (key == "action") {
      if (!f.action) f.action = value;
    }
    if (amp == std::string_view::npos) break;
    end = amp;
  }
  return f;
}

std::string_view admin_status_code(AdminStatus s) {
  switch (s) {
    case AdminStatus::kDone: return "DONE";
    case AdminStatus::kNone: return "NONE";
    case AdminStatus::kPart: return "PART";
    case AdminStatus::kErrp: return "ERRP";
    case AdminStatus::kExcd: return "EXCD";
    case AdminStatus::kDeny: return "DENY";
  }
  return "UNKN";
}

AdminStatus apply_admin_form(const AdminForm& form, ServerControl& control) {
  // A named backend or action is checked as soon as it is read, servers or not.
  if (form.backend) {
    ServerRef probe;
    // No server has an empty name: kNoServer tells that the backend exists.
    if (control.find_server(*form.backend, "", &probe) == FindResult::kNoBackend)
      return AdminStatus::kErrp;
  }
  std::optional<AdminAction> action;
  if (form.action) {
    action = parse_admin_action(*form.action);
    if (!action) return AdminStatus::kErrp;
  }
  int named = 0, changed = 0;
  // Servers wait for both the backend and the action; without either, none is looked at.
  if (form.backend && action) {
    for (const std::string& name : form.servers) {
      ServerRef ref;
      // The page names servers, never `#<id>` (which a server name cannot start with).
      FindResult fr = name.empty() || name[0] == '#'
                          ? FindResult::kNoServer
                          : control.find_server(*form.backend, name, &ref);
      if (fr == FindResult::kNoBackend || fr == FindResult::kNoServer) {
        ++named;   // unknown: named, not changed
        continue;
      }
      if (apply_to(control, ref, *action, fr == FindResult::kDisabled)) {
        ++named;
        ++changed;
      }
    }
  }
  if (form.too_long) return AdminStatus::kErrp;
  if (named == 0) return AdminStatus::kNone;
  if (changed == 0) return AdminStatus::kErrp;
  return changed == named ? AdminStatus::kDone : AdminStatus::kPart;
}

}  // namespace sluice::stats

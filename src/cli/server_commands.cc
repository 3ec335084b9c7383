// Server and limit management commands. Messages are HAProxy's (spec section 5), including
// its inconsistencies (some end with a period, some do not), because scripts match them.
#include "cli/server_commands.h"

#include <arpa/inet.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <string>

#include "cli/builtin.h"

namespace sluice::cli {
namespace {

using Words = std::vector<std::string>;

const std::string& arg(const Words& w, std::size_t i) {
  static const std::string kEmpty;
  return i < w.size() ? w[i] : kEmpty;
}

// Resolves `<backend>/<server>` (names or `#<id>`); on failure appends the error and returns
// false.
bool find_server(const CommandContext& ctx, const std::string& text, stats::ServerRef* ref,
                 std::string* out) {
  std::size_t slash = text.find('/');
  if (text.empty() || slash == std::string::npos || slash == 0 || slash + 1 == text.size()) {
    *out += "Require 'backend/server'.\n";
    return false;
  }
  if (!ctx.control) {
    *out += "No such backend.\n";
    return false;
  }
  std::string_view be(text.data(), slash);
  std::string_view sv(text.data() + slash + 1, text.size() - slash - 1);
  switch (ctx.control->find_server(be, sv, ref)) {
    case stats::FindResult::kOk: return true;
    case stats::FindResult::kNoBackend: *out += "No such backend.\n"; return false;
    case stats::FindResult::kNoServer: *out += "No such server.\n"; return false;
    case stats::FindResult::kDisabled: *out += "Proxy is disabled.\n"; return false;
  }
  return false;
}

// HAProxy's server_parse_weight_change_request(): returns an error message or "" after
// applying the weight.
std::string change_weight(const CommandContext& ctx, stats::ServerRef ref,
                          const std::string& text) {
  if (text.empty()) return "Require <weight> or <weight%>.\n";
  const char* str = text.c_str();
  char* end = nullptr;
  long w = std::strtol(str, &end, 10);
  if (end == str) return "Empty weight string empty or preceded by garbage";
  stats::ServerFacts f = ctx.control->facts(ref);
  if (end[0] == '%' && end[1] == '\0') {
    if (w < 0) return "Relative weight must be positive.\n";
    if (w > 25600) w = 25600;   // no overflow below
    w = f.initial_weight * w / 100;
    if (w > 256) w = 256;
  } else if (w < 0 || w > 256) {
    return "Absolute weight can only be between 0 and 256 inclusive.\n";
  } else if (end[0] != '\0') {
    return "Trailing garbage in weight string";
  }
  if (w && w != f.initial_weight && f.static_lb)
    return "Backend is using a static LB algorithm and only accepts weights '0%' and '100%'.\n";
  ctx.control->set_weight(ref, static_cast<int>(w));
  return {};
}

// `addr <ip> [port <p>]` of `set server`.
void change_addr(const CommandContext& ctx, stats::ServerRef ref, const Words& w,
                 std::string* out) {
  const std::string& ip = arg(w, 4);
  if (ip.empty()) {
    *out += "set server <b>/<s> addr requires an address and optionally a port.\n";
    return;
  }
  int port = -1;
  if (arg(w, 5) == "port") {
    const std::string& p = arg(w, 6);
    char* end = nullptr;
    long v = p.empty() ? 0 : std::strtol(p.c_str(), &end, 10);
    if (p.empty() || end == p.c_str() || *end != '\0') {
      *out += "provided port is not an integer\n";
      return;
    }
    if (v < 0 || v > 65535) {
      *out += "provided port is invalid\n";
      return;
    }
    port = static_cast<int>(v);
  }
  stats::AddrResult r = ctx.control->set_addr(ref, ip, port);
  switch (r.status) {
    case stats::AddrResult::Status::kInvalidAddr:
      *out += fmt::format("Invalid addr '{}'\n", ip);
      return;
    case stats::AddrResult::Status::kPortMapped:
      *out += "can't change <port> when port map is enabled\n";
      return;
    case stats::AddrResult::Status::kNoFamily:
      *out += "Update for the current server address family is only supported through "
              "configuration file.\n";
      return;
    case stats::AddrResult::Status::kOk: break;
  }
  std::string msg;
  if (r.old_ip != r.new_ip) msg = fmt::format("IP changed from '{}' to '{}'", r.old_ip, r.new_ip);
  if (r.old_port != r.new_port) {
    if (!msg.empty()) msg += ", ";
    msg += fmt::format("port changed from '{}' to '{}'", r.old_port, r.new_port);
  }
  *out += msg.empty() ? std::string("nothing changed")
                      : msg + " by 'stats socket command'";
  *out += '\n';
}

// `set server <b>/<s> check-port <port> | check-addr <ip> [port <port>] | agent-port <port> |
// agent-addr <ip> [port <port>] | agent-send <text>`, HAProxy 3.5's answers: nothing when it
// worked.
void change_check_target(const CommandContext& ctx, stats::ServerRef ref, const Words& w,
                         std::string* out) {
  const std::string& what = arg(w, 3);
  const bool agent = what.starts_with("agent");
  const stats::ServerFacts f = ctx.control->facts(ref);
  // Refused when the check is not configured or stopped by `disable health|agent`, with
  // HAProxy 3.5's words (agent-send's sentence alone ends with a period).
  if (agent ? !f.agent_running : !f.check_running) {
    *out += !agent                   ? "health checks are not enabled on this server\n"
            : what == "agent-send" ? "agent checks are not enabled on this server.\n"
                                   : "agent checks are not enabled on this server\n";
    return;
  }
  if (what == "agent-send") {
    ctx.control->set_agent_send(ref, arg(w, 4));
    return;
  }
  auto port_of = [&](const std::string& text, int* port) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0) {
      *out += "provided port is not an integer\n";
      return false;
    }
    if (v < 1 || v > 65535) {
      *out += "provided port is invalid\n";
      return false;
    }
    *port = static_cast<int>(v);
    return true;
  };
  std::string ip;
  int port = 0;
  if (what.ends_with("-port")) {
    if (!port_of(arg(w, 4), &port)) return;
  } else {
    ip = arg(w, 4);
    unsigned char buf[16];
    if (inet_pton(AF_INET, ip.c_str(), buf) != 1 && inet_pton(AF_INET6, ip.c_str(), buf) != 1) {
      *out += fmt::format("invalid addr '{}'\n", ip);
      return;
    }
    if (arg(w, 5) == "port" && !port_of(arg(w, 6), &port)) return;
  }
  ctx.control->set_check_target(ref, agent, ip, port);
}

constexpr std::string_view kSetServerUsage =
    "usage: set server <backend>/<server> addr | agent | agent-addr | agent-port | agent-send | "
    "check-addr | check-port | fqdn | health | name | ssl | state | weight\n";

void cmd_set_server(const CommandContext& ctx, const Words& w, std::string* out) {
  stats::ServerRef ref;
  if (!find_server(ctx, arg(w, 2), &ref, out)) return;
  const std::string& what = arg(w, 3);
  const std::string& val = arg(w, 4);
  if (what == "weight") {
    *out += change_weight(ctx, ref, val);
  } else if (what == "state") {
    if (val == "ready") ctx.control->set_admin_state(ref, stats::AdminChange::kReady);
    else if (val == "drain") ctx.control->set_admin_state(ref, stats::AdminChange::kDrain);
    else if (val == "maint") ctx.control->set_admin_state(ref, stats::AdminChange::kMaint);
    else *out += "'set server <srv> state' expects 'ready', 'drain' and 'maint'.\n";
  } else if (what == "health") {
    stats::HealthChange change;
    if (ctx.control->facts(ref).tracking) {
      *out += "cannot change health on a tracking server.\n";
      return;
    }
    if (val == "up") change = stats::HealthChange::kUp;
    else if (val == "stopping") change = stats::HealthChange::kStopping;
    else if (val == "down") change = stats::HealthChange::kDown;
    else {
      *out += "'set server <srv> health' expects 'up', 'stopping', or 'down'.\n";
      return;
    }
    if (ctx.control->set_health(ref, change) == stats::HealthResult::kTracking)
      *out += "cannot change health on a tracking server.\n";
  } else if (what == "agent") {
    if (!ctx.control->facts(ref).agent_running) {
      *out += "agent checks are not enabled on this server.\n";
    } else if (val == "up" || val == "down") {
      ctx.control->set_agent(ref, val == "up");
    } else {
      *out += "'set server <srv> agent' expects 'up' or 'down'.\n";
    }
  } else if (what == "addr") {
    change_addr(ctx, ref, w, out);
  } else if (what == "check-port" || what == "check-addr" || what == "agent-port" ||
             what == "agent-addr" || what == "agent-send") {
    change_check_target(ctx, ref, w, out);
  } else if (what == "fqdn") {
    *out += "set server <b>/<s> fqdn failed because no resolution is configured.\n";
  } else {
    *out += kSetServerUsage;
  }
}

void cmd_set_weight(const CommandContext& ctx, const Words& w, std::string* out) {
  stats::ServerRef ref;
  if (!find_server(ctx, arg(w, 2), &ref, out)) return;
  *out += change_weight(ctx, ref, arg(w, 3));
}

void cmd_get_weight(const CommandContext& ctx, const Words& w, std::string* out) {
  stats::ServerRef ref;
  if (!find_server(ctx, arg(w, 2), &ref, out)) return;
  stats::ServerFacts f = ctx.control->facts(ref);
  *out += fmt::format("{} (initial {})\n", f.weight, f.initial_weight);
}

void cmd_admin_server(const CommandContext& ctx, const Words& w, std::string* out,
                      stats::AdminChange change) {
  stats::ServerRef ref;
  if (!find_server(ctx, arg(w, 2), &ref, out)) return;
  ctx.control->set_admin_state(ref, change);
}

void cmd_health(const CommandContext& ctx, const Words& w, std::string* out, bool enable) {
  stats::ServerRef ref;
  if (!find_server(ctx, arg(w, 2), &ref, out)) return;
  if (ctx.control->enable_health(ref, enable) == stats::HealthResult::kNotConfigured)
    *out += "Health check was not configured on this server, cannot enable.\n";
}

void cmd_agent(const CommandContext& ctx, const Words& w, std::string* out, bool enable) {
  stats::ServerRef ref;
  if (!find_server(ctx, arg(w, 2), &ref, out)) return;
  if (ctx.control->enable_agent(ref, enable) == stats::HealthResult::kNotConfigured)
    *out += "Agent was not configured on this server, cannot enable.\n";
}

void cmd_set_maxconn_server(const CommandContext& ctx, const Words& w, std::string* out) {
  stats::ServerRef ref;
  if (!find_server(ctx, arg(w, 3), &ref, out)) return;
  const std::string& text = arg(w, 4);
  if (text.empty()) {
    *out += "Require <maxconn>.\n";
    return;
  }
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str()) {
    *out += "maxconn string empty or preceded by garbage\n";
    return;
  }
  if (*end != '\0') {
    *out += "Trailing garbage in maxconn string\n";
    return;
  }
  ctx.control->set_maxconn(ref, static_cast<int>(std::clamp<long>(v, 0, INT_MAX)));
}

void cmd_set_maxconn_frontend(const CommandContext& ctx, const Words& w, std::string* out) {
  const std::string& name = arg(w, 3);
  if (name.empty()) {
    *out += "A frontend name is expected.\n";
    return;
  }
  // HAProxy resolves the frontend before it looks at the value.
  if (!ctx.control || !ctx.control->has_frontend(name)) {
    *out += "No such frontend.\n";
    return;
  }
  const std::string& text = arg(w, 4);
  if (text.empty()) {
    *out += "Integer value expected.\n";
    return;
  }
  int64_t v = parse_atoi(text);
  if (v < 0) {
    *out += "Value out of range.\n";
    return;
  }
  ctx.control->set_frontend_maxconn(name, static_cast<int>(std::min<int64_t>(v, INT_MAX)));
}

void cmd_set_maxconn_global(const CommandContext& ctx, const Words& w, std::string* out) {
  const std::string& text = arg(w, 3);
  if (text.empty()) {
    *out += "Expects an integer value.\n";
    return;
  }
  if (!ctx.control) return;
  int64_t v = parse_atoi(text);
  int hard = ctx.control->hard_maxconn();
  if (v > hard) {
    *out += "Value out of range.\n";
    return;
  }
  ctx.control->set_global_maxconn(v <= 0 ? hard : static_cast<int>(v));
}

// `clear counters [all]` (spec 5): the table's levels make the plain form operator and `all`
// admin, so an operator asking for `all` gets `Permission denied`.
void cmd_clear_counters(const CommandContext& ctx, const Words& w, std::string*) {
  if (ctx.control) ctx.control->clear_counters(arg(w, 2) == "all");
}

// A session id as `show sess` prints it: `0x` and hex digits (strtoull's base 0, so decimal
// and octal are read too); the whole word, not 0.
bool parse_session_id(const std::string& text, uint64_t* id) {
  if (text.empty() || text[0] == '-' || text[0] == '+') return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(text.c_str(), &end, 0);
  if (errno != 0 || end == text.c_str() || *end != '\0' || v == 0) return false;
  *id = v;
  return true;
}

constexpr std::string_view kShowSessUsage =
    "Usage: show sess [help | all | <id>]\n"
    "  (nothing) : one line per session, this CLI connection included; the line starts\n"
    "              with the session's id, which 'shutdown session' takes\n"
    "  all       : a block of several lines per session\n"
    "  <id>      : the block of that session only\n"
    "  help      : this message\n";

// `show sess [help|all|<id>]` (spec 5): every worker lists its own sessions.
void cmd_show_sess(const CommandContext& ctx, const Words& w, Reply reply) {
  const std::string& a = arg(w, 2);
  if (a == "help") return reply(std::string(kShowSessUsage));
  uint64_t id = 0;
  bool detail = !a.empty();
  if (!a.empty() && a != "all" && !parse_session_id(a, &id))
    return reply("Session pointer expected (use 'show sess').\n");
  if (!ctx.control) return reply(id ? "Session not found.\n" : "");
  ctx.control->dump_sessions(ctx.thread, id, detail,
                             [id, reply](std::string text, std::size_t count) {
                               if (id && count == 0) text = "Session not found.\n";
                               reply(std::move(text));
                             });
}

// `shutdown session <id>` (spec 5): silent when found.
void cmd_shutdown_session(const CommandContext& ctx, const Words& w, Reply reply) {
  uint64_t id = 0;
  if (!parse_session_id(arg(w, 2), &id))
    return reply("Session pointer expected (use 'show sess').\n");
  if (!ctx.control) return reply("No such session (use 'show sess').\n");
  ctx.control->shutdown_session(ctx.thread, id, [reply](bool found) {
    reply(found ? std::string() : std::string("No such session (use 'show sess').\n"));
  });
}

// `shutdown sessions server <b>/<s>` (spec 5): silent.
void cmd_shutdown_sessions_server(const CommandContext& ctx, const Words& w, std::string* out) {
  stats::ServerRef ref;
  if (!find_server(ctx, arg(w, 3), &ref, out)) return;
  ctx.control->shutdown_server_sessions(ref);
}

// `disable frontend`, `enable frontend`, `shutdown frontend` (spec 5): HAProxy's messages.
void cmd_frontend(const CommandContext& ctx, const Words& w, std::string* out,
                  stats::ServerControl::FrontendAction action) {
  using A = stats::ServerControl::FrontendAction;
  using R = stats::ServerControl::FrontendResult;
  const std::string& name = arg(w, 2);
  if (name.empty()) {
    *out += "A frontend name is expected.\n";
    return;
  }
  R r = ctx.control ? ctx.control->change_frontend(name, action) : R::kNoFrontend;
  switch (r) {
    case R::kOk: return;
    case R::kNoFrontend: *out += "No such frontend.\n"; return;
    case R::kAlready:
      *out += action == A::kDisable  ? "All sockets are already disabled.\n"
              : action == A::kEnable ? "All sockets are already enabled.\n"
                                     : "Frontend was already shut down.\n";
      return;
    case R::kWasShutDown:
      *out += action == A::kDisable ? "Frontend was previously shut down, cannot disable.\n"
                                    : "Frontend was previously shut down, cannot enable.\n";
      return;
  }
}

// `clear counters server <b>/<s> [force]` (spec 5). sluice keeps no shared-memory stats file,
// so `force` changes nothing.
void cmd_clear_counters_server(const CommandContext& ctx, const Words& w, std::string* out) {
  stats::ServerRef ref;
  if (!find_server(ctx, arg(w, 3), &ref, out)) return;
  ctx.control->clear_server_counters(ref);
  *out += "Server counters cleared.\n";
}

}  // namespace

namespace {

Command later(std::vector<std::string> words, std::string usage, std::string help, Level level,
              void (*fn)(const CommandContext&, const Words&, Reply)) {
  Command c{std::move(words), std::move(usage), std::move(help), level, nullptr};
  c.run_later = fn;
  return c;
}

}  // namespace

std::vector<Command> server_commands() {
  using L = Level;
  return {
      {{"set", "server"}, "set server <bk>/<srv> [opts]",
       "change a server's state, weight, address or ssl", L::kAdmin, cmd_set_server},
      {{"set", "weight"}, "set weight <bk>/<srv> (<w>|<w>%)",
       "change a server's weight (deprecated)", L::kAdmin, cmd_set_weight},
      {{"get", "weight"}, "get weight <bk>/<srv>", "report a server's current weight", L::kUser,
       cmd_get_weight},
      {{"disable", "server"}, "disable server (DEPRECATED)",
       "disable a server for maintenance (use 'set server' instead)", L::kAdmin,
       [](const CommandContext& c, const Words& w, std::string* o) {
         cmd_admin_server(c, w, o, stats::AdminChange::kMaint);
       }},
      {{"enable", "server"}, "enable server  (DEPRECATED)",
       "enable a disabled server (use 'set server' instead)", L::kAdmin,
       [](const CommandContext& c, const Words& w, std::string* o) {
         cmd_admin_server(c, w, o, stats::AdminChange::kReady);
       }},
      {{"disable", "health"}, "disable health", "disable health checks", L::kAdmin,
       [](const CommandContext& c, const Words& w, std::string* o) { cmd_health(c, w, o, false); }},
      {{"enable", "health"}, "enable health", "enable health checks", L::kAdmin,
       [](const CommandContext& c, const Words& w, std::string* o) { cmd_health(c, w, o, true); }},
      {{"disable", "agent"}, "disable agent", "disable agent checks", L::kAdmin,
       [](const CommandContext& c, const Words& w, std::string* o) { cmd_agent(c, w, o, false); }},
      {{"enable", "agent"}, "enable agent", "enable agent checks", L::kAdmin,
       [](const CommandContext& c, const Words& w, std::string* o) { cmd_agent(c, w, o, true); }},
      {{"set", "maxconn", "server"}, "set maxconn server <bk>/<srv>",
       "change a server's maxconn setting", L::kAdmin, cmd_set_maxconn_server},
      {{"set", "maxconn", "frontend"}, "set maxconn frontend <frontend> <value>",
       "change a frontend's maxconn setting", L::kAdmin, cmd_set_maxconn_frontend},
      {{"set", "maxconn", "global"}, "set maxconn global <value>",
       "change the per-process maxconn setting", L::kAdmin, cmd_set_maxconn_global},
      {{"clear", "counters"}, "clear counters [all]",
       "clear max statistics counters (or all counters)", L::kOperator, cmd_clear_counters},
      // Listed once, by the line above.
      {{"clear", "counters", "all"}, "", "", L::kAdmin, cmd_clear_counters},
      {{"clear", "counters", "server"}, "clear counters server <bk>/<srv> [force]",
       "clear one server's statistics counters", L::kAdmin, cmd_clear_counters_server},
      later({"show", "sess"}, "show sess [help|all|<id>]",
            "report the list of current sessions or dump this exact session", L::kOperator,
            cmd_show_sess),
      later({"shutdown", "session"}, "shutdown session <id>", "kill a specific session",
            L::kAdmin, cmd_shutdown_session),
      later({"show", "errors"}, "show errors [<px>|<iid>] [request|response]",
            "report last request and/or response errors for each proxy", L::kOperator,
            cmd_show_errors),
      {{"disable", "frontend"}, "disable frontend <frontend>", "temporarily disable specific frontend",
       L::kAdmin,
       [](const CommandContext& c, const Words& w, std::string* o) {
         cmd_frontend(c, w, o, stats::ServerControl::FrontendAction::kDisable);
       }},
      {{"enable", "frontend"}, "enable frontend <frontend>", "re-enable specific frontend",
       L::kAdmin,
       [](const CommandContext& c, const Words& w, std::string* o) {
         cmd_frontend(c, w, o, stats::ServerControl::FrontendAction::kEnable);
       }},
      {{"shutdown", "frontend"}, "shutdown frontend <frontend>", "stop a specific frontend",
       L::kAdmin,
       [](const CommandContext& c, const Words& w, std::string* o) {
         cmd_frontend(c, w, o, stats::ServerControl::FrontendAction::kShutdown);
       }},
      {{"shutdown", "sessions", "server"}, "shutdown sessions server <bk>/<srv>",
       "kill sessions on a server", L::kAdmin, cmd_shutdown_sessions_server},
  };
}

void register_server_commands() {
  for (auto& c : server_commands()) register_command(std::move(c));
  for (auto& c : cookie_commands()) register_command(std::move(c));
}

}  // namespace sluice::cli

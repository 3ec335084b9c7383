// `show servers state`, `show backend` and `show activity` (spec sections 4 and 5).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "cli/builtin.h"

namespace sluice::cli {
namespace {

// HAProxy's numeric check status codes (spec section 4), used by server-state files.
int check_status_code(std::string_view status) {
  static constexpr std::pair<std::string_view, int> kCodes[] = {
      {"UNK", 0},     {"INI", 1},     {"CHECKED", 3}, {"HANA", 4},     {"SOCKERR", 5},
      {"L4OK", 6},    {"L4TOUT", 7},  {"L4CON", 8},   {"L6OK", 9},     {"L6TOUT", 10},
      {"L6RSP", 11},  {"L7TOUT", 12}, {"L7RSP", 13},  {"L7OK", 15},    {"L7OKC", 16},
      {"L7STS", 17},  {"PROCERR", 18}, {"PROCTOUT", 19}, {"PROCOK", 20},
  };
  for (const auto& [name, code] : kCodes)
    if (name == status) return code;
  return 1;   // a server that never ran a check reports INI, as HAProxy initialises it
}

// 0 unknown, 1 neutral, 2 failed, 3 passed, 4 conditionally passed.
int check_result(std::string_view status) {
  if (status == "L4OK" || status == "L6OK" || status == "L7OK" || status == "PROCOK") return 3;
  if (status == "L7OKC") return 4;
  if (status == "SOCKERR" || status == "L4TOUT" || status == "L4CON" || status == "L6TOUT" ||
      status == "L6RSP" || status == "L7TOUT" || status == "L7RSP" || status == "L7STS" ||
      status == "PROCERR" || status == "PROCTOUT")
    return 2;
  return 0;
}

void server_state_line(const stats::ProxySnapshot& px, const stats::ServerSnapshot& s,
                       std::string* out) {
  bool maint = (s.admin_state & (0x01 | 0x02 | 0x20)) != 0;
  // Check state bits: 2 configured, 4 enabled, 8 paused (maintenance pauses the check). A
  // check stopped by `disable health` stays configured and keeps its last result (spec 4).
  int check_state = s.check_configured ? (2 | (s.check_enabled ? 4 : 0) | (maint ? 8 : 0)) : 0;
  // The agent's: the same bits, and 16 that says it is an agent.
  const int agent_state = s.agent_port ? (2 | 16 | (s.agent_enabled ? 4 : 0)) : 0;
  *out += fmt::format("{} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}\n",
                      px.id, px.name, s.id, s.name, s.host.empty() ? "-" : s.host, s.op_state,
                      s.admin_state, s.weight, s.initial_weight, s.lastchg_s,
                      s.check_configured ? check_status_code(s.check_last_status) : 1,
                      s.check_configured ? check_result(s.check_last_status) : 0,
                      s.check_configured ? s.check_last_health : 0, check_state, agent_state,
                      px.id_forced ? 1 : 0, s.id_forced ? 1 : 0,
                      s.fqdn.empty() ? "-" : s.fqdn, s.port, "-", s.use_ssl ? 1 : 0, s.check_port, s.check_addr.empty() ? "-" : s.check_addr,
                      s.agent_addr.empty() ? "-" : s.agent_addr, s.agent_port);
}

}  // namespace

void cmd_show_servers_state(const CommandContext& ctx, const std::vector<std::string>& words,
                            std::string* out) {
  std::vector<stats::ProxySnapshot> proxies;
  if (ctx.stats) proxies = ctx.stats->proxies();
  const stats::ProxySnapshot* only = nullptr;
  if (words.size() > 3) {
    const std::string& want = words[3];
    for (const auto& px : proxies) {
      if (!px.is_backend) continue;
      // A backend may be named or given as #<id>, like everywhere in the CLI.
      if (px.name == want || (want.size() > 1 && want[0] == '#' &&
                              parse_atoi(std::string_view(want).substr(1)) == px.id)) {
        only = &px;
        break;
      }
    }
    if (!only) {
      *out += "Can't find backend.\n";
      return;
    }
  }
  *out += "1\n# be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state "
          "srv_uweight srv_iweight srv_time_since_last_change srv_check_status "
          "srv_check_result srv_check_health srv_check_state srv_agent_state bk_f_forced_id "
          "srv_f_forced_id srv_fqdn srv_port srvrecord srv_use_ssl srv_check_port "
          "srv_check_addr srv_agent_addr srv_agent_port\n";
  for (const auto& px : proxies) {
    if (!px.is_backend || (only && only != &px)) continue;
    for (const auto& s : px.servers) server_state_line(px, s, out);
  }
}

void cmd_show_backend(const CommandContext& ctx, const std::vector<std::string>& words,
                      std::string* out) {
  *out += "# name\n";
  if (!ctx.stats) return;
  for (const auto& px : ctx.stats->proxies())
    if (px.is_backend) *out += px.name + "\n";
}

void cmd_show_activity(const CommandContext& ctx, const std::vector<std::string>& words,
                       std::string* out) {
  stats::ActivitySnapshot a;
  if (ctx.stats) a = ctx.stats->activity(ctx.thread);
  std::size_t nbthread = 0;
  for (const auto& m : a.metrics) nbthread = std::max(nbthread, m.second.size());
  if (nbthread == 0 && ctx.stats) nbthread = static_cast<std::size_t>(std::max(1, ctx.stats->process().nbthread));
  if (nbthread == 0) nbthread = 1;

  int64_t thr = words.size() > 2 ? parse_atoi(words[2]) : -1;
  if (thr < -1 || thr > static_cast<int64_t>(nbthread)) {
    *out += "Thread ID number must be between -1 and nbthread\n";
    return;
  }
  *out += fmt::format("thread_id: {} ({}..{})\n", a.current_thread, 1, nbthread);
  *out += fmt::format("date_now: {}.{:06}\n", a.date_now_us / 1000000, a.date_now_us % 1000000);
  *out += fmt::format("uptime_now: {}.{:06}\n", a.uptime_now_us / 1000000,
                      a.uptime_now_us % 1000000);
  for (const auto& [name, per_thread] : a.metrics) {
    // HAProxy keeps these as 32-bit counters that wrap; so do the printed values and sums.
    std::vector<uint32_t> v(nbthread, 0);
    for (std::size_t i = 0; i < per_thread.size() && i < nbthread; ++i)
      v[i] = static_cast<uint32_t>(per_thread[i]);
    uint32_t total = 0;
    if (name == "avg_cpu_pct" || name == "avg_loop_us") {
      uint64_t sum = 0;
      for (auto x : v) sum += x;
      total = static_cast<uint32_t>((sum + nbthread / 2) / nbthread);
    } else {
      for (auto x : v) total += x;
    }
    if (thr > 0) {
      *out += fmt::format("{}: {}\n", name, v[static_cast<std::size_t>(thr - 1)]);
    } else if (thr == 0 || nbthread == 1) {
      *out += fmt::format("{}: {}\n", name, total);
    } else {
      *out += fmt::format("{}: {} [ {} ]\n", name, total, fmt::join(v, " "));
    }
  }
}

}  // namespace sluice::cli

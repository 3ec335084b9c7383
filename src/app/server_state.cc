#include "app/server_state.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "base/clock.h"
#include "base/strings.h"
#include "config/units.h"
#include "proxy/log.h"

namespace sluice::app {

namespace {

// HAProxy's srv_admin_state bits that a saved state carries over.
constexpr int kForcedMaint = 0x01;
constexpr int kConfigMaint = 0x04;
constexpr int kForcedDrain = 0x08;
// `show servers state` version 1: the fields up to srv_port are needed.
constexpr std::size_t kMinFields = 19;

struct StateFile {
  bool usable = false;
  std::vector<std::vector<std::string>> lines;   // the servers' lines, split into fields
};

std::string state_path(const config::GlobalConfig& g, const std::string& name) {
  if (name.starts_with('/') || g.server_state_base.empty()) return name;
  std::string base = g.server_state_base;
  if (!base.ends_with('/')) base += '/';
  return base + name;
}

// Reads a saved state. A file that cannot be opened (the first start has none) is a notice; a
// version that is not 1, or any line that is not a server's state, makes the whole file
// unusable, with HAProxy's warnings (its lines counted from 0).
StateFile parse_state(std::istream& in, const std::string& path, const char* kind,
                      std::vector<std::string>* warnings) {
  StateFile f;
  std::string line;
  if (!std::getline(in, line) || base::trim(line, " \t\r") != "1") {
    warnings->push_back(fmt::format("config: Can't get version of the {} server state file '{}'.",
                                    kind, path));
    return f;
  }
  for (int n = 1; std::getline(in, line); ++n) {
    std::string_view t = base::trim(line, " \t\r");
    if (t.empty() || t.front() == '#') continue;
    std::vector<std::string> fields;
    while (!t.empty()) {
      const std::size_t end = t.find_first_of(" \t\r");
      fields.emplace_back(t.substr(0, end));
      t = end == std::string_view::npos ? std::string_view() : base::trim(t.substr(end), " \t\r");
    }
    if (fields.size() < kMinFields) {
      warnings->push_back(fmt::format("config: corrupted {} server state file '{}' at line {}.",
                                      kind, path, n));
      return StateFile{};
    }
    f.lines.push_back(std::move(fields));
  }
  f.usable = true;
  return f;
}

StateFile read_state_file(const std::string& path, const char* kind,
                          std::vector<std::string>* notices, std::vector<std::string>* warnings) {
  std::ifstream in(path);
  if (!in) {
    notices->push_back(fmt::format("config: Can't open {} server state file '{}': {}", kind, path,
                                   std::strerror(errno)));
    return StateFile{};
  }
  return parse_state(in, path, kind, warnings);
}

std::optional<int> field_int(const std::string& v, int lo, int hi) {
  auto n = config::parse_strict_int(v, lo, hi);
  if (!n) return std::nullopt;
  return static_cast<int>(*n);
}

// The saved state of a backend's servers, or null (none asked for, none readable).
const StateFile* state_of(const config::ConfigModel& model, const config::ProxyConfig& pc,
                          const StateFile& live, std::map<std::string, StateFile>& files,
                          std::vector<std::string>* notices, std::vector<std::string>* warnings) {
  using F = config::ProxyConfig::StateFrom;
  if (pc.state_from == F::kNone || !(pc.caps & config::ProxyConfig::kBackend) || pc.disabled)
    return nullptr;
  const bool global = pc.state_from == F::kGlobal;
  if (global && model.global.server_state_file.empty()) return nullptr;
  if (live.usable) return &live;
  const std::string path = state_path(
      model.global, global ? model.global.server_state_file
                           : (pc.state_file_name.empty() ? pc.name : pc.state_file_name));
  auto it = files.find(path);
  if (it == files.end())
    it = files.emplace(path, read_state_file(path, global ? "global" : "local", notices, warnings)).first;
  return it->second.usable ? &it->second : nullptr;
}

}  // namespace

std::string apply_saved_addresses(config::ConfigModel& model, const std::string* live_state,
                                  std::vector<std::string>* notices,
                                  std::vector<std::string>* warnings) {
  StateFile live;
  if (live_state && !live_state->empty()) {
    std::istringstream in(*live_state);
    live = parse_state(in, "(the previous worker's state)", "global", warnings);
  }
  std::map<std::string, StateFile> files;
  for (auto& pc : model.proxies) {
    bool wanted = false;
    for (const auto& s : pc.servers) wanted = wanted || s.init_last;
    if (!wanted) continue;
    const StateFile* state = state_of(model, pc, live, files, notices, warnings);
    for (auto& s : pc.servers) {
      if (!s.init_last || !state) continue;
      for (const auto& f : state->lines) {
        if (f[1] != pc.name || f[3] != s.name) continue;
        net::SocketAddress a;
        if (!net::parse_ip_literal(f[4], &a)) break;   // "-": it had none
        a.set_port(s.addr.addr.port());
        s.addr.addr = a;
        s.unresolved = s.needs_last = false;
        break;
      }
    }
  }
  for (const auto& pc : model.proxies)
    for (const auto& s : pc.servers)
      if (s.needs_last)
        return fmt::format("[{}:{}] : 'server {}/{}' : {} address '{}'.", s.loc.file, s.loc.line,
                           pc.name, s.name,
                           s.init_addr.empty() ? "could not resolve" : "no method found to resolve",
                           s.fqdn);
  return {};
}

void load_server_states(const config::ConfigModel& model, proxy::Process& process,
                        HealthChecks& checks, std::vector<std::string>* notices,
                        std::vector<std::string>* warnings, std::vector<StateLine>* logs,
                        const std::string* live_state) {
  std::map<std::string, StateFile> files;   // each file read once
  StateFile live;
  if (live_state) {
    std::istringstream in(*live_state);
    live = parse_state(in, "(the previous worker's state)", "global", warnings);
  }
  auto& proxies = process.proxies();
  for (std::size_t i = 0; i < proxies.size() && i < model.proxies.size(); ++i) {
    const config::ProxyConfig& pc = model.proxies[i];
    proxy::Proxy& px = *proxies[i];
    if (!px.backend || px.settings.name != pc.name) continue;
    const StateFile* state = state_of(model, pc, live, files, notices, warnings);
    if (!state) continue;
    lb::Backend& be = *px.backend;
    for (const auto& f : state->lines) {
      if (f[1] != pc.name) continue;
      lb::Server* found = be.find_server(f[3]);
      if (!found) continue;
      lb::Server& srv = *found;
      const std::string who = fmt::format("{}/{}", pc.name, srv.name());
      auto bad = [&](const char* field, const std::string& v) {
        warnings->push_back(fmt::format("server-state application failed for server '{}', "
                                        "invalid {} value '{}'", who, field, v));
      };
      const auto op = field_int(f[5], 0, 3);
      const auto admin = field_int(f[6], 0, 255);
      const auto uweight = field_int(f[7], 0, 256);
      const auto iweight = field_int(f[8], 0, 256);
      const auto health = field_int(f[12], 0, 1 << 20);
      const auto port = field_int(f[18], 0, 65535);
      const auto since = field_int(f[9], 0, INT_MAX);
      if (!op) { bad("srv_op_state", f[5]); continue; }
      if (!admin) { bad("srv_admin_state", f[6]); continue; }
      if (!uweight) { bad("srv_uweight", f[7]); continue; }
      if (!iweight) { bad("srv_iweight", f[8]); continue; }
      if (!health) { bad("srv_check_health", f[12]); continue; }
      if (!port) { bad("srv_port", f[18]); continue; }
      if (!since) { bad("srv_last_time_change", f[9]); continue; }
      const uint64_t now = base::monotonic_ms();
      auto log = [&](int level, std::string text) {
        warnings->push_back(text);
        logs->push_back({&px, level, std::move(text)});
      };
      // The weight set at run time, unless the configured one changed since.
      if (*iweight == srv.initial_weight() && *uweight != srv.weight()) be.set_weight(srv, *uweight, now);
      // The admin state set at run time, unless `disabled` changed in the configuration.
      const bool cfg_disabled = srv.settings().disabled;
      const bool was_maint = srv.admin_state() == lb::AdminState::kMaint;
      const bool was_up = srv.check_up();
      bool left_maint = false;
      if (cfg_disabled == ((*admin & kConfigMaint) != 0)) {
        if (*admin & kForcedMaint) {
          be.set_admin_state(srv, lb::AdminState::kMaint, now);
        } else if (*admin & kForcedDrain) {
          be.set_admin_state(srv, lb::AdminState::kDrain, now);
        } else if (cfg_disabled) {
          be.set_admin_state(srv, lb::AdminState::kReady, now);
          left_maint = true;
        }
      }
      // A checked server's verdict and counter; stopping stays stopping.
      if (srv.check_state().enabled) {
        checks.restore(srv, *health, *op != 0);
        if (*op == 3) be.set_stopping(srv, true, now);
      }
      if (*port != 0 && !srv.settings().port_mapped && *port != srv.settings().addr.port()) {
        lb::ServerEndpoint e = srv.endpoint();
        e.addr.set_port(static_cast<uint16_t>(*port));
        srv.set_endpoint(e);
        if (px.settings.cookie_table)
          px.settings.cookie_table->set_addr(static_cast<std::size_t>(srv.index()), e.addr);
      }
      // The time since the last change goes on from where it was.
      const uint64_t age = static_cast<uint64_t>(*since) * 1000;
      srv.set_last_change_ms(now > age ? now - age : 1);
      // Logged when the saved state takes the server down: into maintenance, or a checked
      // server DOWN (not one the configuration already keeps in maintenance).
      const bool now_maint = srv.admin_state() == lb::AdminState::kMaint;
      const bool went_down = (now_maint && !was_maint) || (!now_maint && was_up && !srv.check_up());
      if (*op == 0 && went_down)
        log(proxy::kAlert, fmt::format("{}Server {} is DOWN, changed from server-state after a "
                                       "reload{}", srv.settings().backup ? "Backup " : "", who,
                                       be.state_tail(srv, true)));
      else if (left_maint)
        log(proxy::kNotice, fmt::format("{}Server {} is UP/READY (leaving forced maintenance).",
                                        srv.settings().backup ? "Backup " : "", who));
    }
  }
}

}  // namespace sluice::app

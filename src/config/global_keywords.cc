// The `global` section's keywords and their table.
#include <algorithm>
#include <cctype>
#include <climits>
#include <fstream>

#include <grp.h>
#include <pwd.h>

#include <fmt/format.h>

#include "base/strings.h"
#include "config/bind_ssl.h"
#include "config/server_ssl.h"
#include "config/global_var_keywords.h"
#include "config/log_keyword.h"
#include "config/parser.h"
#include "config/thread_keywords.h"
#include "config/tunable_keywords.h"
#include "config/units.h"
#include "net/address.h"

namespace sluice::config {

namespace {

void no_extra(const Line& l, std::size_t n) {
  if (l.args.size() > n)
    throw ConfigError{fmt::format("{}'{}' cannot handle unexpected argument '{}'.", l.where,
                                  l.args[0], l.args[n])};
}

void need_args(const Line& l, std::size_t n, std::string_view what) {
  if (l.args.size() < n + 1) throw ConfigError{fmt::format("{}'{}' expects {}.", l.where, l.args[0], what)};
}

void kw_nbthread(Parser& p, Line& l) {
  require_first_global(p, l);
  std::string v = l.args.size() > 1 ? l.args[1] : "";
  auto n = parse_strict_int(v, LLONG_MIN, LLONG_MAX);
  if (!n) throw ConfigError{fmt::format("{}passed a missing or unparsable integer value in '{}'", l.where, v)};
  if (*n < 1 || *n > 1024)
    throw ConfigError{fmt::format("{}'nbthread' must be between 1 and 1024 (got {}).", l.where, *n)};
  no_extra(l, 2);
  p.global.nbthread = static_cast<int>(*n);   // the last one wins, as in HAProxy
}

void kw_maxconn(Parser& p, Line& l) {
  if (p.global_maxconn_set) {
    // HAProxy's non-fatal alert: the first value stays.
    p.alert(l.where + "'maxconn' already specified. Continuing.");
    return;
  }
  std::string v = l.args.size() > 1 ? l.args[1] : "";
  // 0 is HAProxy's "automatic", the model's "not set": derived from ulimit -n.
  auto n = parse_strict_int(v, 0, INT_MAX);
  if (!n) throw ConfigError{fmt::format("{}cannot parse 'maxconn' value '{}', an integer is expected.", l.where, v)};
  no_extra(l, 2);
  p.global.maxconn = static_cast<int>(*n);
  p.global_maxconn_set = true;
}

// `maxconnrate` / `maxsessrate`: accepted connections (sessions) per second, process-wide.
// In TCP mode a session starts with its connection, so both limit the same thing; the lower
// one wins.
void kw_rate_limit(Parser& p, Line& l) {
  std::string v = l.args.size() > 1 ? l.args[1] : "";
  auto n = parse_strict_int(v, 1, INT_MAX);
  if (!n)
    throw ConfigError{fmt::format("{}'{}' expects a positive integer (connections per second), got '{}'.",
                                  l.where, l.args[0], v)};
  no_extra(l, 2);
  (l.args[0] == "maxconnrate" ? p.global.max_conn_rate : p.global.max_sess_rate) = static_cast<int>(*n);
}

// `maxsslconn` / `maxsslrate`: TLS connections open (both sides) and TLS handshakes accepted
// per second, process-wide; a TLS listener stops accepting at the limit.
void kw_ssl_limit(Parser& p, Line& l) {
  std::string v = l.args.size() > 1 ? l.args[1] : "";
  auto n = parse_strict_int(v, 0, INT_MAX);
  if (!n)
    throw ConfigError{fmt::format("{}'{}' expects an integer argument.", l.where, l.args[0])};
  no_extra(l, 2);
  (l.args[0] == "maxsslconn" ? p.global.max_ssl_conn : p.global.max_ssl_rate) = static_cast<int>(*n);
}

void stats_socket(Parser& p, Line& l) {
  if (l.args.size() < 3)
    throw ConfigError{l.where + "'stats socket' expects an address (a UNIX path, ipv4@addr:port, "
                                "addr:port or fd@N)."};
  StatsSocketConfig s;
  s.loc = l.loc;
  s.text = l.args[2];
  std::string addr = p.address_word(l, 2, "stats socket");
  auto r = net::parse_bind_address(addr);
  if (!r.ok()) throw ConfigError{fmt::format("{}'stats socket' : {}", l.where, r.error().message)};
  if (r.value().size() != 1)
    throw ConfigError{fmt::format("{}'stats socket' : '{}' must be a single address (no list, no "
                                  "port range).", l.where, addr)};
  s.addr = r.value()[0];
  for (std::size_t i = 3; i < l.args.size(); i += 2) {
    const std::string& o = l.args[i];
    std::string v = i + 1 < l.args.size() ? l.args[i + 1] : "";
    if (o == "level") {
      if (v == "user") {
        s.level = CliLevel::kUser;
      } else if (v == "operator") {
        s.level = CliLevel::kOperator;
      } else if (v == "admin") {
        s.level = CliLevel::kAdmin;
      } else {
        throw ConfigError{fmt::format("{}'stats socket' : 'level' only supports 'user', "
                                      "'operator', and 'admin' (got '{}').", l.where, v)};
      }
    } else if (o == "mode") {
      bool ok = !v.empty() && v.size() <= 4;
      int mode = 0;
      for (char c : v) {
        ok = ok && c >= '0' && c <= '7';
        if (ok) mode = mode * 8 + (c - '0');
      }
      if (!ok) throw ConfigError{fmt::format("{}'stats socket' : 'mode' expects an octal value, got '{}'.", l.where, v)};
      s.unix_mode = mode;
    } else if (o == "shards") {
      // sluice decision: the CLI is never sharded (one socket, any group may serve it).
      throw ConfigError{fmt::format("{}'stats socket' : 'shards' is not accepted: the stats socket "
                                    "is never sharded.", l.where)};
    } else if (o == "expose-fd") {
      if (v != "listeners")
        throw ConfigError{fmt::format("{}'stats socket' : ''expose-fd' only supports 'listeners' "
                                      "(got '{}')'", l.where, v)};
      s.expose_listeners = true;
    } else if (o == "user" || o == "group" || o == "uid" || o == "gid" ||
               o == "accept-proxy" || o == "ssl" || o == "crt" || o == "process" ||
               o == "thread" || o == "name" || o == "maxconn") {
      throw ConfigError{fmt::format("{}'stats socket' : '{}' is not supported by sluice yet.", l.where, o)};
    } else {
      std::string best = base::closest_match(o, {"level", "mode"});
      throw ConfigError{fmt::format("{}'stats socket' : unknown keyword '{}'{}", l.where, o,
                                    best.empty() ? "" : fmt::format("; did you mean '{}' maybe ?", best))};
    }
  }
  p.global.stats_sockets.push_back(std::move(s));
}

void kw_stats(Parser& p, Line& l) {
  std::string sub = l.args.size() > 1 ? l.args[1] : "";
  if (sub == "socket") return stats_socket(p, l);
  if (sub == "timeout") {
    std::string v = l.args.size() > 2 ? l.args[2] : "";
    auto t = parse_time(v, TimeUnit::kMs);
    if (t.status == TimeValue::Status::kBadChar)
      throw ConfigError{fmt::format("{}unexpected character '{}' in argument to 'stats timeout'.", l.where, t.bad)};
    if (t.status == TimeValue::Status::kOverflow)
      throw ConfigError{fmt::format("{}timer overflow in argument '{}' to 'stats timeout' (maximum "
                                    "value is 2147483647 ms or ~24.8 days)", l.where, v)};
    if (t.status != TimeValue::Status::kOk || t.value == 0)
      throw ConfigError{l.where + "'stats timeout' expects a positive value"};
    if (t.trailing) p.warning(time_trailing_warning(t.trailing, v));
    no_extra(l, 3);
    p.global.stats_timeout_ms = t.value;
    return;
  }
  if (sub == "maxconn") {
    std::string v = l.args.size() > 2 ? l.args[2] : "";
    auto n = parse_strict_int(v, 1, INT_MAX);
    if (!n) throw ConfigError{l.where + "'stats maxconn' expects a positive value"};
    no_extra(l, 3);
    p.global.stats_maxconn = static_cast<int>(*n);
    return;
  }
  if (sub == "bind-process")
    throw ConfigError{l.where + "'stats bind-process' is not supported by sluice yet."};
  throw ConfigError{l.where + "'stats' supports 'socket', 'maxconn' and 'timeout'"};
}

void kw_log(Parser& p, Line& l) { parse_log(p, l, &p.global.logs, true); }

void kw_log_tag(Parser& p, Line& l) {
  if (l.args.size() < 2)
    throw ConfigError{fmt::format("{}'log-tag' expects a tag for use in syslog.", l.where)};
  p.global.log_tag = l.args[1];
}

void kw_daemon(Parser& p, Line& l) {
  no_extra(l, 1);
  p.global.daemon = true;
}

void kw_master_worker(Parser& p, Line& l) {
  if (l.args.size() > 1 && l.args[1] != "no-exit-on-failure")
    throw ConfigError{l.where + "'master-worker' only supports 'no-exit-on-failure' option"};
  no_extra(l, 2);
  p.global.master_worker = true;
  p.global.mworker_exit_on_failure = l.args.size() < 2;
}

void kw_mworker_max_reloads(Parser& p, Line& l) {
  if (l.args.size() < 2 || l.args[1].empty())
    throw ConfigError{l.where + "'mworker-max-reloads' expects an integer argument."};
  auto n = parse_strict_int(l.args[1], -2147483647LL, 2147483647LL);
  if (!n) throw ConfigError{l.where + "'mworker-max-reloads' expects an integer argument."};
  if (*n < 0) throw ConfigError{l.where + "'mworker-max-reloads' expects a positive value or zero."};
  no_extra(l, 2);
  p.global.mworker_max_reloads = static_cast<int>(*n);
}

// One h1-case-adjust pair into `g`: "" or HAProxy's reason for refusing it.
std::string add_h1_case_adjust(GlobalConfig& g, std::string_view from, std::string_view to) {
  if (!base::iequals(from, to)) return "<from> and <to> must not differ except the case";
  std::string lower(from);
  for (char& c : lower)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  for (const auto& e : g.h1_case_adjust)
    if (e.first == lower) return fmt::format("duplicate entry '{}'", lower);
  g.h1_case_adjust.emplace_back(std::move(lower), std::string(to));
  return {};
}

// `h1-case-adjust <from> <to>`: HAProxy 3.5's checks and messages.
void kw_h1_case_adjust(Parser& p, Line& l) {
  if (l.args.size() < 3 || l.args[1].empty() || l.args[2].empty())
    throw ConfigError{l.where + "'h1-case-adjust' expects <from> and <to> as argument."};
  if (l.args.size() > 3)
    throw ConfigError{fmt::format("{}'h1-case-adjust' cannot handle unexpected argument '{}'.",
                                  l.where, l.args[3])};
  if (std::string why = add_h1_case_adjust(p.global, l.args[1], l.args[2]); !why.empty())
    throw ConfigError{l.where + why};
}

void kw_h1_case_adjust_file(Parser& p, Line& l) {
  if (l.args.size() < 2 || l.args[1].empty())
    throw ConfigError{l.where + "'h1-case-adjust-file' expects <file> as argument."};
  no_extra(l, 2);
  p.global.h1_case_adjust_file = l.args[1];
}

void kw_expose_experimental(Parser& p, Line& l) {
  no_extra(l, 1);
  p.global.expose_experimental = true;
}

// ---- chroot, user/uid, group/gid: privileges dropped after binding (main.cc) ----

void kw_chroot(Parser& p, Line& l) {
  if (p.chroot_set) {
    p.warning(l.where + "'chroot' already specified. Continuing.");
    return;
  }
  need_args(l, 1, "a directory as an argument");
  no_extra(l, 2);
  p.global.chroot = l.args[1];
  p.chroot_set = true;
}

void kw_uid_gid(Parser& p, Line& l) {
  const std::string& kw = l.args[0];
  bool is_uid = kw == "uid" || kw == "user";
  bool& set = is_uid ? p.uid_set : p.gid_set;
  if (set) {
    p.warning(fmt::format("{}{} already specified. Continuing.", l.where,
                          is_uid ? "user/uid" : "group/gid"));
    return;
  }
  const std::string arg = l.args.size() > 1 ? l.args[1] : "";
  int id = -1;
  if (kw == "uid" || kw == "gid") {
    auto v = parse_strict_int(arg, 0, INT_MAX);
    if (!v) throw ConfigError{fmt::format("{}'{}' expects an integer argument.", l.where, kw)};
    id = static_cast<int>(*v);
  } else if (kw == "user") {
    const passwd* pw = arg.empty() ? nullptr : getpwnam(arg.c_str());
    if (!pw) throw ConfigError{fmt::format("{}cannot find user id for '{}'.", l.where, arg)};
    id = static_cast<int>(pw->pw_uid);
  } else {
    const group* gr = arg.empty() ? nullptr : getgrnam(arg.c_str());
    if (!gr) throw ConfigError{fmt::format("{}cannot find group id for '{}'.", l.where, arg)};
    id = static_cast<int>(gr->gr_gid);
  }
  no_extra(l, 2);
  (is_uid ? p.global.uid : p.global.gid) = id;
  set = true;
}

// Settings of TLS, which sluice does not have yet: every line that would use them (`ssl` and
// `crt` on bind and server lines) is refused, so they can change nothing. Accepted with a
// warning that says so, because they are in most configurations (Debian's default one
// included) that otherwise use nothing of TLS.
void kw_pidfile(Parser& p, Line& l) {
  if (p.pidfile_set) {
    p.warning(l.where + "'pidfile' already specified. Continuing.");
    return;
  }
  need_args(l, 1, "a file name as argument");
  no_extra(l, 2);
  p.global.pidfile = l.args[1];
  p.pidfile_set = true;
}

void kw_hard_stop_after(Parser& p, Line& l) {
  std::string v = l.args.size() > 1 ? l.args[1] : "";
  auto t = parse_time(v, TimeUnit::kMs);
  if (t.status == TimeValue::Status::kEmpty)
    throw ConfigError{l.where + "'hard-stop-after' expects <time> as argument."};
  if (t.status == TimeValue::Status::kBadChar)
    throw ConfigError{fmt::format("{}unexpected character '{}' in argument to 'hard-stop-after'.", l.where, t.bad)};
  if (t.status == TimeValue::Status::kOverflow)
    throw ConfigError{fmt::format("{}timer overflow in argument '{}' to 'hard-stop-after' "
                                  "(maximum value is 2147483647 ms or ~24.8 days)", l.where, v)};
  if (t.trailing) p.warning(time_trailing_warning(t.trailing, v));
  no_extra(l, 2);
  p.global.hard_stop_after_ms = t.value;
}

// `spread-checks <0..50>`: each check interval varies by up to that percentage either way;
// `max-spread-checks <time>`: the longest delay before a server's first check. HAProxy's
// messages (sluice also refuses a value that is not a number, which HAProxy reads as 0).
// `server-state-file <path>` / `server-state-base <dir>`: HAProxy 3.5's messages (its typo
// in the first one included).
void kw_server_state(Parser& p, Line& l) {
  const bool base = l.args[0] == "server-state-base";
  if (l.args.size() < 2 || l.args[1].empty())
    throw ConfigError{fmt::format("{}'{}' {} one argument: {}.", l.where, l.args[0],
                                  base ? "expects" : "expect",
                                  base ? "a directory path" : "a file path")};
  no_extra(l, 2);
  (base ? p.global.server_state_base : p.global.server_state_file) = l.args[1];
}

void kw_spread_checks(Parser& p, Line& l) {
  const std::string v = l.args.size() > 1 ? l.args[1] : "";
  if (l.args[0] == "spread-checks") {
    auto n = parse_strict_int(v, 0, 50);
    if (!n)
      throw ConfigError{fmt::format("{}'spread-checks' needs a positive value in range 0..50.",
                                    l.where)};
    no_extra(l, 2);
    p.global.spread_checks = static_cast<int>(*n);
    return;
  }
  auto t = parse_time(v, TimeUnit::kMs);
  if (t.status == TimeValue::Status::kEmpty)
    throw ConfigError{l.where + "'max-spread-checks' expects an integer argument."};
  if (t.status == TimeValue::Status::kBadChar)
    throw ConfigError{fmt::format("{}unsupported character '{}' in 'max-spread-checks' (wants an "
                                  "integer delay).", l.where, t.bad)};
  if (t.status == TimeValue::Status::kOverflow)
    throw ConfigError{fmt::format("{}timer overflow in argument '{}' to 'max-spread-checks' "
                                  "(maximum value is 2147483647 ms or ~24.8 days)", l.where, v)};
  no_extra(l, 2);
  p.global.max_spread_checks_ms = t.value;
}

void kw_grace(Parser& p, Line& l) {
  // HAProxy's texts for this keyword (measured on 2.6) name it in angle brackets for a bad
  // character, unlike hard-stop-after.
  std::string v = l.args.size() > 1 ? l.args[1] : "";
  auto t = parse_time(v, TimeUnit::kMs);
  if (t.status == TimeValue::Status::kEmpty)
    throw ConfigError{l.where + "'grace' expects <time> as argument."};
  if (t.status == TimeValue::Status::kBadChar)
    throw ConfigError{fmt::format("{}unexpected character '{}' in argument to <grace>.", l.where, t.bad)};
  if (t.status == TimeValue::Status::kOverflow)
    throw ConfigError{fmt::format("{}timer overflow in argument '{}' to 'grace' "
                                  "(maximum value is 2147483647 ms or ~24.8 days)", l.where, v)};
  if (t.trailing) p.warning(time_trailing_warning(t.trailing, v));
  no_extra(l, 2);
  p.global.grace_ms = t.value;
}

void kw_bufsize(Parser& p, Line& l) {
  std::string v = l.args.size() > 1 ? l.args[1] : "";
  if (v.empty()) throw ConfigError{l.where + "'tune.bufsize' expects a positive integer argument."};
  auto s = parse_size(v, INT_MAX - 15);
  if (!s.ok)
    throw ConfigError{fmt::format("{}unexpected '{}' after size passed to 'tune.bufsize'", l.where, s.rest)};
  if (s.value == 0) throw ConfigError{l.where + "'tune.bufsize' expects a positive integer argument."};
  no_extra(l, 2);
  // Buffers are handed out in 16-byte aligned chunks, so round up as HAProxy does.
  p.global.tune_bufsize = static_cast<int>((s.value + 15) & ~uint64_t{15});
}

void kw_maxaccept(Parser& p, Line& l) {
  if (p.maxaccept_set) {
    p.warning(l.where + "'tune.maxaccept' already specified. Continuing.");
    return;
  }
  std::string v = l.args.size() > 1 ? l.args[1] : "";
  auto n = parse_strict_int(v, -1, INT_MAX);
  if (!n)
    throw ConfigError{fmt::format("{}'tune.maxaccept' expects -1 (unlimited) or an integer from 0 to "
                                  "{} (0 = the default), got '{}'.", l.where, INT_MAX, v)};
  no_extra(l, 2);
  // HAProxy turns 0 into its default at start-up; the model holds the value to use.
  p.global.tune_maxaccept = *n == 0 ? GlobalConfig{}.tune_maxaccept : static_cast<int>(*n);
  p.maxaccept_set = true;
}

void kw_node(Parser& p, Line& l) {
  need_args(l, 1, "a node name");
  no_extra(l, 2);
  p.global.node = l.args[1];
}

void kw_description(Parser& p, Line& l) {
  need_args(l, 1, "a string argument");
  std::string d;
  for (std::size_t i = 1; i < l.args.size(); ++i) d += (i > 1 ? " " : "") + l.args[i];
  p.global.description = d;
}

void kw_zero_warning(Parser& p, Line& l) {
  no_extra(l, 1);
  p.global.zero_warning = true;
}

void kw_setenv(Parser& p, Line& l) {
  if (l.args.size() < 2 || l.args[1].empty())
    throw ConfigError{fmt::format("{}'{}' expects a name and a value.", l.where, l.args[0])};
  if (l.args.size() < 3 || l.args[2].empty())
    throw ConfigError{fmt::format("{}'{}' expects environment variable value for '{}'.", l.where,
                                  l.args[0], l.args[1])};
  no_extra(l, 3);
  p.env.set(l.args[1], l.args[2], l.args[0] == "setenv");
}

void kw_unsetenv(Parser& p, Line& l) {
  need_args(l, 1, "at least one variable name");
  for (std::size_t i = 1; i < l.args.size(); ++i) p.env.unset(l.args[i]);
}

void kw_resetenv(Parser& p, Line& l) {
  p.env.reset(std::vector<std::string>(l.args.begin() + 1, l.args.end()));
}

constexpr std::string_view kHaproxyGlobal[] = {
    "cluster-secret", "log-send-hostname", "lua-load",
    "nbproc", "noepoll", "nopoll",
    "numa-cpu-mapping", "quiet", "set-dumpable",
    "cpu-set", "cpu-affinity",
    "strict-limits", "ulimit-n", "unix-bind", "busy-polling",
    "maxzlibmem",
    "httpclient.resolvers.disabled",
    "tune.maxpollevents", "tune.runqueue-depth",
    "tune.recv_enough", "ssl-engine", "stats",
};

const std::vector<KeywordDef> kGlobalKeywords = {
    {"nbthread", kInGlobal, 0, kw_nbthread, "<1..1024>: worker threads; strict integer; only in the first global sections"},
    {"maxconn", kInGlobal, 0, kw_maxconn, "<n>: process-wide connection limit; strict integer; 0 or unset = derived from ulimit -n; a second one is ignored with an alert"},
    {"stats", kInGlobal, 0, kw_stats, "socket <addr> [level user|operator|admin] [mode <octal>] [expose-fd listeners] | timeout <time> | maxconn <n>; `expose-fd listeners` lets a new process started with `-x <socket>` take the listening sockets (the old one then leaves them to it, queued connections included)"},
    {"log-tag", kInGlobal, 0, kw_log_tag, "<tag>: the syslog tag of every log line (default \"sluice\"); a proxy's own `log-tag` overrides it for its traffic lines"},
    {"log", kInGlobal, 0, kw_log, "<target> [len <n>] [format rfc3164|rfc5424|local|priority|short|timed|iso|raw] <facility> [max [min]]; `no log` clears"},
    {"daemon", kInGlobal, 0, kw_daemon, "run in the background"},
    {"master-worker", kInGlobal, 0, kw_master_worker, "[no-exit-on-failure]: master-worker mode, as `-W`: a master process holds the listening sockets and runs a worker; SIGUSR2 (or `reload` on the master CLI, `-S`) re-reads the configuration and starts a new worker on the same sockets, then soft-stops the old one. By default the master stops everything when the current worker dies; with `no-exit-on-failure` the old workers still draining go on (and a reload brings a new one); the master exits once no worker is left. proc variables set at run time live on across a reload"},
    {"mworker-max-reloads", kInGlobal, 0, kw_mworker_max_reloads, "<n>: in master-worker mode, a former worker still draining after more than <n> reloads gets SIGTERM"},
    {"expose-experimental-directives", kInGlobal, 0, kw_expose_experimental, "allows the keywords HAProxy marks experimental, which refuse to load without it: `http-request normalize-uri`"},
    {"chroot", kInGlobal, 0, kw_chroot, "<dir>: chroot there once every socket is bound, before serving (as root)"},
    {"user", kInGlobal, 0, kw_uid_gid, "<name>: run as this user once every socket is bound (its uid, looked up at parse time)"},
    {"uid", kInGlobal, 0, kw_uid_gid, "<n>: run with this user id once every socket is bound"},
    {"group", kInGlobal, 0, kw_uid_gid, "<name>: run with this group once every socket is bound; supplementary groups are dropped"},
    {"gid", kInGlobal, 0, kw_uid_gid, "<n>: run with this group id once every socket is bound"},
    {"ca-base", kInGlobal, 0, kw_ssl_global, "<dir>: where relative `ca-file` paths of bind and server lines start (declared before them)"},
    {"crt-base", kInGlobal, 0, kw_ssl_global, "<dir>: where relative `crt` paths of bind and server lines start (declared before them)"},
    {"ssl-default-bind-ciphers", kInGlobal, 0, kw_ssl_global, "<list>: the TLS 1.2 and older cipher list of `bind ... ssl` lines without `ciphers` (OpenSSL's syntax)"},
    {"ssl-default-bind-ciphersuites", kInGlobal, 0, kw_ssl_global, "<list>: the TLS 1.3 cipher suites of `bind ... ssl` lines without `ciphersuites`"},
    {"ssl-default-bind-curves", kInGlobal, 0, kw_ssl_global, "<list>: the key exchange groups of `bind ... ssl` lines without `curves`"},
    {"ssl-default-bind-options", kInGlobal, 0, kw_ssl_global, "<options>: for every `bind ... ssl` line: no-sslv3, no-tlsv10, no-tlsv11, no-tlsv12, no-tlsv13, force-tlsv1x, ssl-min-ver <v>, ssl-max-ver <v>, no-tls-tickets, prefer-client-ciphers (a line's own ssl-min-ver / ssl-max-ver win); without any, TLS 1.2 is the lowest version, as in HAProxy"},
    {"ssl-default-server-ciphers", kInGlobal, 0, kw_ssl_server_global, "<list>: the TLS 1.2 and older cipher list of `server ... ssl` lines without `ciphers`"},
    {"ssl-default-server-ciphersuites", kInGlobal, 0, kw_ssl_server_global, "<list>: the TLS 1.3 cipher suites of `server ... ssl` lines without `ciphersuites`"},
    {"ssl-default-server-curves", kInGlobal, 0, kw_ssl_server_global, "<list>: the key exchange groups of `server ... ssl` lines without `curves`"},
    {"ssl-default-server-sigalgs", kInGlobal, 0, kw_ssl_server_global, "<list>: the signature algorithms of `server ... ssl` lines without `sigalgs`"},
    {"ssl-default-server-client-sigalgs", kInGlobal, 0, kw_ssl_server_global, "<list>: the algorithms a server line's client certificate signs with, without `client-sigalgs`"},
    {"ssl-default-server-options", kInGlobal, 0, kw_ssl_server_global, "<options>: for every `server ... ssl` line: no-sslv3, no-tlsv10, no-tlsv11, no-tlsv12, no-tlsv13, force-tlsv1x, ssl-min-ver <v>, ssl-max-ver <v>, no-tls-tickets (a line's own ssl-min-ver / ssl-max-ver win); without any, TLS 1.2 is the lowest version, as in HAProxy"},
    {"ssl-server-verify", kInGlobal, 0, kw_ssl_server_global, "none|required: whether `server ... ssl` lines without `verify` check the server's certificate (default required, which then needs a `ca-file`, as in HAProxy)"},
    {"tune.ssl.default-dh-param", kInGlobal, 0, kw_ssl_global, "<bits>: the size of the Diffie-Hellman group of DHE key exchanges (TLS 1.2 DHE-* ciphers), not above the RSA key's size, as in HAProxy: 4096 bits from 4096 up, else 2048 (HAProxy 3.5's sizes; RFC 7919 ffdhe groups). Without it DHE ciphers are not offered, as in HAProxy 3.5; TLS 1.3 and ECDHE do not use it"},
    {"tune.ssl.cachesize", kInGlobal, 0, kw_ssl_global, "<sessions>: sessions each bind line keeps for resumption by id, shared by every worker (default 20000; 0: none)"},
    {"tune.ssl.lifetime", kInGlobal, 0, kw_ssl_global, "<time>: how long a session can be resumed (default 300s)"},
    {"tune.ssl.maxrecord", kInGlobal, 0, kw_ssl_global, "<bytes>: at most this many bytes go into one TLS write, so records stay small enough for a client to decrypt the first bytes before the rest arrives (0 or unset: OpenSSL's 16384)"},
    {"pidfile", kInGlobal, 0, kw_pidfile, "<path>: write the pid there; a second one warns"},
    {"hard-stop-after", kInGlobal, 0, kw_hard_stop_after, "<time>: longest soft-stop duration"},
    {"spread-checks", kInGlobal, 0, kw_spread_checks, "<0..50>: each health check interval varies at random by up to that percentage either way (default 0), so that checks started together drift apart"},
    {"server-state-file", kInGlobal, 0, kw_server_state, "<path>: the file `load-server-state-from-file global` reads at start-up (the output of `show servers state`, saved before a reload); relative to server-state-base when it does not start with '/'"},
    {"server-state-base", kInGlobal, 0, kw_server_state, "<dir>: where relative server-state file paths start"},
    {"max-spread-checks", kInGlobal, 0, kw_spread_checks, "<time>: the first checks are spread over each server's interval (the i-th of n checkers at i/n of it); this bounds that delay (default: the interval)"},
    {"grace", kInGlobal, 0, kw_grace, "<time>: delay between SIGUSR1 and the soft stop; meanwhile `show info` says `Stopping: 1` and the listeners still accept; `hard-stop-after` counts from the end of it"},
    {"tune.bufsize", kInGlobal, 0, kw_bufsize, "<size>: buffer size, rounded up to a multiple of 16 (default 16384); 256m or more is fatal when a proxy is in HTTP mode"},
    {"maxconnrate", kInGlobal, 0, kw_rate_limit, "<n>: accepted connections per second, process-wide"},
    {"maxsslconn", kInGlobal, 0, kw_ssl_limit, "<n>: TLS connections open at once, process-wide, client and server sides together; TLS listeners stop accepting at the limit (0 or unset: none)"},
    {"maxsslrate", kInGlobal, 0, kw_ssl_limit, "<n>: TLS connections accepted per second, process-wide; TLS listeners stop accepting for the rest of the second at the limit (0 or unset: none)"},
    {"maxsessrate", kInGlobal, 0, kw_rate_limit, "<n>: new sessions per second, process-wide (equal to connections in TCP mode)"},
    {"tune.maxaccept", kInGlobal, 0, kw_maxaccept, "<n>|-1: connections accepted per wake-up (default 4, also for 0; -1 = unlimited)"},
    {"node", kInGlobal, 0, kw_node, "<name>: node name shown by stats"},
    {"description", kInGlobal, 0, kw_description, "<text...>: description shown by stats"},
    {"zero-warning", kInGlobal, 0, kw_zero_warning, "make any warning fatal"},
    {"setenv", kInGlobal, 0, kw_setenv, "<name> <value>: set an environment variable"},
    {"presetenv", kInGlobal, 0, kw_setenv, "<name> <value>: set it unless already set"},
    {"unsetenv", kInGlobal, 0, kw_unsetenv, "<name>...: remove variables"},
    {"resetenv", kInGlobal, 0, kw_resetenv, "[<name>...]: remove all variables but these"},
    {"thread-groups", kInGlobal, 0, kw_thread_groups, "<1..32>: thread groups; strict integer; only in the first global sections; makes the per-group cap 64"},
    {"thread-group", kInGlobal, 0, kw_thread_group, "<g> <N|N-M>[,...]...: place threads in group g (contiguous); redefining a group or moving a thread warns; only in the first global sections"},
    {"max-threads-per-group", kInGlobal, 0, kw_max_threads_per_group, "<1..64>: derives the group count when thread-groups is not set (default 16)"},
    {"thread-hard-limit", kInGlobal, 0, kw_thread_hard_limit, "<1..1024>: caps the detected or configured thread count"},
    {"cpu-map", kInGlobal, 0, kw_cpu_map, "[auto:]<groups>[/<threads>] <cpuset>...: bind threads to CPUs; sets all|odd|even|N|N-M; auto: one group with a thread range, or a group range, same size as the CPU set"},
    {"cpu-policy", kInGlobal, 0, kw_cpu_policy, "none|group-by-ccx|performance (default): how threads and groups follow the CPU topology; ignored with cpu-map, nbthread or thread-groups"},
    {"tune.listener.default-shards", kInGlobal, 0, kw_default_shards, "by-process|by-group (default)|by-thread: shards of the bind lines that follow"},
    {"tune.listener.multi-queue", kInGlobal, 0, kw_multi_queue, "on (default)|fair|off: hand accepted connections to less loaded threads"},
    {"tune.listener.reuseport-steering", kInGlobal, 0, kw_reuseport_steering, "hash (default)|cpu: sluice's own; how the kernel picks a shard's socket"},
    {"noreuseport", kInGlobal, 0, kw_noreuseport, "no SO_REUSEPORT: one socket per address, no sharding"},
    {"set-var", kInGlobal, 0, kw_global_set_var, "<proc.name> <expr>: sets a process-wide variable while the configuration is read (fetches that need no traffic: constants, env(), other proc variables)"},
    {"set-var-fmt", kInGlobal, 0, kw_global_set_var, "<proc.name> <fmt>: the same with a log-format string"},
    {"tune.vars.global-max-size", kInGlobal, 0, kw_tune_vars, "<bytes>: the memory all variables of the process may use (0, the default, or empty = unlimited; digits only)"},
    {"tune.vars.proc-max-size", kInGlobal, 0, kw_tune_vars, "<bytes>: the same bound, as in HAProxy: every variable counts in the process total"},
    {"tune.vars.sess-max-size", kInGlobal, 0, kw_tune_vars, "<bytes>: the memory of one session's variables, its transactions' included"},
    {"tune.vars.txn-max-size", kInGlobal, 0, kw_tune_vars, "<bytes>: the memory of one transaction's txn, req and res variables"},
    {"tune.vars.reqres-max-size", kInGlobal, 0, kw_tune_vars, "<bytes>: the memory of a transaction's req and res variables together"},
    {"tune.vars.check-max-size", kInGlobal, 0, kw_tune_vars, "<bytes>: the memory of one health check's check.* variables (tcp-check / http-check set-var)"},
    {"tune.h1.be.glitches-threshold", kInGlobal, 0, kw_h1_glitches, "<n>: server connections whose responses had n protocol glitches are not reused (0, the default: no limit): a glitch is a violation that `option accept-unsafe-violations-in-http-response` lets through (a field name with a forbidden byte, NUL in a value), counted once per response (bc_glitches); as HAProxy 3.5 does, from n - 1 glitches on the connection is closed after the response, which goes on; strict integer"},
    {"tune.h1.fe.glitches-threshold", kInGlobal, 0, kw_h1_glitches, "<n>: client connections whose requests had n protocol glitches are closed (0, the default: never): a glitch is a violation that `option accept-unsafe-violations-in-http-request` lets through (a field name with a forbidden byte, NUL in a value, a forbidden byte in the target, an authority that differs from Host), counted once per request (fc_glitches); as HAProxy 3.5 does, the request that brings the count to n - 1 is answered with `connection: close` and is the last, and reaching n (a threshold of 1) closes the connection without an answer; strict integer"},
    {"tune.maxrewrite", kInGlobal, 0, kw_maxrewrite, "<n>: the room of a buffer kept for rewrites (default 1024, at most half of tune.bufsize): a request or response head larger than tune.bufsize minus this is refused (431 / 502); strict integer"},
    {"tune.http.maxhdr", kInGlobal, 0, kw_http_maxhdr, "<1..32767>: the most header fields of a message, its start line counted as one (default 101): a request with more is answered 400, a response with more 502, as in HAProxy"},
    {"tune.http.cookielen", kInGlobal, 0, kw_http_cookielen, "<n>: the longest `capture cookie` value (default 63); longer `len` values are lowered to it; strict integer"},
    {"tune.http.logurilen", kInGlobal, 0, kw_http_logurilen, "<n>: the request line in log lines (%r, %HM, %HU, %HP, %HQ, %HV) is cut to n bytes (default 1024), as measured on HAProxy 3.5; strict integer"},
    {"h1-case-adjust", kInGlobal, 0, kw_h1_case_adjust, "<from> <to>: the spelling of a field name (`content-length Content-Length`) in the heads sent by proxies with `option h1-case-adjust-bogus-client` (to clients) or `h1-case-adjust-bogus-server` (to servers), which otherwise get lower-case names as HAProxy sends them; <from> and <to> differ only by their case"},
    {"h1-case-adjust-file", kInGlobal, 0, kw_h1_case_adjust_file, "<file>: more `h1-case-adjust` pairs, two names per line (`#` comments and blank lines skipped), read once the configuration is parsed"},
    {"nosplice", kInGlobal, 0, kw_splice_tunables, "checked; no effect: sluice never splices (what it forwards goes through its own buffers), so there is no splicing to turn off"},
    {"maxpipes", kInGlobal, 0, kw_splice_tunables, "<n>: checked; no effect: sluice uses no pipes (it never splices)"},
    {"tune.pipesize", kInGlobal, 0, kw_splice_tunables, "<n>: checked; no effect: sluice uses no pipes (it never splices)"},
    {"tune.idle-pool.shared", kInGlobal, 0, kw_idle_pool_shared, "on|off|full: checked; no effect: sluice keeps one idle server-connection pool per thread and never hands an idle connection to another thread, which is `off`"},
    {"tune.h1.zero-copy-fwd-recv", kInGlobal, 0, kw_h1_zero_copy, "on|off: checked; no effect: sluice has no pipes and already forwards a body as the buffer it was read into"},
    {"tune.h1.zero-copy-fwd-send", kInGlobal, 0, kw_h1_zero_copy, "on|off: checked; no effect: sluice has no pipes and already forwards a body as the buffer it was read into"},
    {"insecure-setuid-wanted", kInGlobal, 0, kw_insecure_setuid_wanted, "without it, as in HAProxy, the serving process sets PR_SET_NO_NEW_PRIVS once its privileges are dropped: what it executes (external checks) cannot gain privileges through setuid bits or file capabilities; with it, they can"},
    {"tune.rcvbuf.client", kInGlobal, 0, kw_socket_buffers, "<bytes>: SO_RCVBUF of client connections (set on the listening sockets, which accepted ones inherit)"},
    {"tune.sndbuf.client", kInGlobal, 0, kw_socket_buffers, "<bytes>: SO_SNDBUF of client connections (set on the listening sockets, which accepted ones inherit)"},
    {"tune.rcvbuf.server", kInGlobal, 0, kw_socket_buffers, "<bytes>: SO_RCVBUF of each server connection, set before connect()"},
    {"tune.sndbuf.server", kInGlobal, 0, kw_socket_buffers, "<bytes>: SO_SNDBUF of each server connection, set before connect()"},
    {"tune.pattern.cache-size", kInGlobal, 0, kw_pattern_cache_size, "<n>: checked; no effect: sluice keeps no cache of pattern matches (its lookups are trees and hashes)"},
    {"tune.chksize", kInGlobal, 0, kw_chksize, "refused with HAProxy's message: it is not supported any more, tune.bufsize is used instead"},
    {"h1-accept-payload-with-any-method", kInGlobal, 0, kw_h1_flag, "HTTP/1.0 GET, HEAD and DELETE requests with a body (Content-Length above 0 or chunked) are accepted and forwarded instead of being answered 413, as in HAProxy"},
    {"h1-do-not-close-on-insecure-transfer-encoding", kInGlobal, 0, kw_h1_flag, "a server connection whose response had both Transfer-Encoding and Content-Length (or Transfer-Encoding in HTTP/1.0) stays reusable; without it it is closed after that response, as HAProxy does. Requests with both are refused (400) whatever it says: sluice is stricter than HAProxy there"},
    {"insecure-fork-wanted", kInGlobal, 0, kw_insecure_fork_wanted, "HAProxy's consent to starting processes: without it `option external-check` warns that it will likely fail, as HAProxy warns (sluice starts them with posix_spawn whatever it says)"},
    {"external-check", kInGlobal, 0, kw_external_check_global, "[preserve-env]: `option external-check` may run commands (without it, HAProxy's fatal error); preserve-env passes the process's environment to them besides their HAPROXY_* variables"},
    {"localpeer", kInGlobal, 0, kw_localpeer, "<name>: the local peer name (default: -L, else the host name), in $HAPROXY_LOCALPEER from the first line of the configuration on; set twice, or with -L, it is an error as in HAProxy; sluice has no peers section, so nothing else uses it yet"},
};

}  // namespace

const std::vector<KeywordDef>& global_keyword_table() { return kGlobalKeywords; }

const std::vector<SubKeywordDoc>& global_sub_keyword_docs() {
  static const std::vector<SubKeywordDoc> docs = {
      {"stats", "socket <addr>", "CLI socket: UNIX path, unix@path, ipv4@addr:port, addr:port or fd@N; one address; several lines allowed"},
      {"stats socket", "level user|operator|admin", "CLI privilege level (default operator)"},
      {"stats socket", "mode <octal>", "permissions of a UNIX socket"},
      {"stats", "timeout <time>", "CLI idle timeout, > 0 (default 10s)"},
      {"stats", "maxconn <n>", "concurrent CLI connections, > 0 (default 10)"},
  };
  return docs;
}

std::string read_h1_case_adjust_file(GlobalConfig& g) {
  const std::string& path = g.h1_case_adjust_file;
  std::ifstream in(path);
  if (!in) return fmt::format("h1-headers-case-adjust-file '{}': failed to open file.", path);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    // Two names per line, `#` comments and blank lines skipped, as HAProxy reads it; what
    // follows the first name is the second, whatever it holds.
    std::string_view t = base::trim(line, " \t\r");
    if (t.empty() || t[0] == '#') continue;
    const std::size_t sp = std::min(t.find_first_of(" \t"), t.size());
    const std::string_view to = base::trim(t.substr(sp), " \t");
    std::string why = to.empty() ? "expect <to>" : add_h1_case_adjust(g, t.substr(0, sp), to);
    if (!why.empty())
      return fmt::format("h1-headers-case-adjust-file '{}' : {} at line {}.", path, why, n);
  }
  return {};
}

std::string_view haproxy_global_keyword_reason(std::string_view kw) {
  struct Reason {
    std::string_view prefix;   // a keyword, or a prefix ending in '*'
    std::string_view why;
  };
  static constexpr Reason kReasons[] = {
      {"tune.ssl.*", "sluice's TLS does not have this setting yet"},
      {"ssl-engine", "OpenSSL 3 has no engines (providers replace them)"},
      {"maxzlibmem", "it needs HTTP compression"},
      {"tune.comp.*", "it needs HTTP compression"},
      {"tune.zlib.*", "it needs HTTP compression"},
      {"lua-*", "it needs Lua"},
      {"tune.lua.*", "it needs Lua"},
      {"nbproc", "sluice runs one process of nbthread threads"},
      {"noepoll", "epoll is sluice's only poller"},
      {"nopoll", "epoll is sluice's only poller"},
  };
  for (const auto& r : kReasons) {
    const bool prefix = r.prefix.ends_with('*');
    if (prefix ? kw.starts_with(r.prefix.substr(0, r.prefix.size() - 1)) : kw == r.prefix)
      return r.why;
  }
  return {};
}

bool is_known_haproxy_global_keyword(std::string_view kw) {
  for (auto k : kHaproxyGlobal)
    if (k == kw) return true;
  return kw.starts_with("tune.") || kw.starts_with("ssl-");
}

}  // namespace sluice::config

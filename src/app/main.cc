// Start-up order: command line, configuration (parsed and validated), runtime plan, every
// listening socket bound (so any bind error is a start-up error naming its line), daemon fork,
// workers started, then the main thread waits for signals.
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "app/build.h"
#include "app/checks_setup.h"
#include "app/cli_endpoint.h"
#include "app/cmdline.h"
#include "app/listener_plan.h"
#include "app/master.h"
#include "app/messages.h"
#include "net/tls.h"
#include "app/server_state.h"
#include "base/clock.h"
#include "base/regex.h"
#include "base/version.h"
#include "cli/server_commands.h"
#include "config/loader.h"
#include "net/fd_passing.h"
#include "proxy/log.h"
#include "proxy/process.h"
#include "proxy/server_control.h"
#include "proxy/stats_view.h"
#include "sample/vars.h"

namespace sluice::app {
namespace {

void print_version(int level) {
  std::printf("sluice version %s %s - https://github.com/sluice-lb/sluice\n", base::kVersion,
              base::kReleaseDate);
  std::printf("HAProxy configuration language level: %s\n", base::kHaproxyCompatVersion);
  if (level < 2) return;
  std::printf("Running on: Linux\n");
  std::printf("Build options :\n  TARGET  = linux\n  CXX     = %s\n  BUILD   = %s\n  SANITIZE= %s\n",
              base::kCompiler, base::kBuildType, base::kSanitizers[0] ? base::kSanitizers : "none");
  std::string features;
  for (const auto& f : config::build_features()) features += " +" + f;
  std::printf("Feature list :%s\n", features.c_str());
  std::printf("Default settings :\n  bufsize = 16384, maxaccept = 4, maxpollevents = 256\n");
  std::printf("Limits :\n  Max threads: %d, max thread groups: %d, max threads per group: %d "
              "(default %d), default nbthread: %d (usable CPUs)\n",
              core::kMaxThreads, core::kMaxGroups, core::kMaxThreadsPerGroupHard,
              core::kDefaultMaxThreadsPerGroup, usable_cpus());
  std::printf("Built with SSL library version : %s\n", net::tls::built_version().c_str());
  std::printf("Running on SSL library version : %s\n", net::tls::running_version().c_str());
  std::printf("SSL library supports TLS extensions : yes\nSSL library supports SNI : yes\n");
  std::printf("SSL library supports : TLSv1.0 TLSv1.1 TLSv1.2 TLSv1.3\n");
  std::printf("Built with PCRE2 version : %s\n", base::Regex::library_version().c_str());
  std::printf("PCRE2 library supports JIT : %s\n", base::Regex::jit_supported() ? "yes" : "no");
  std::printf("Available polling systems :\n  epoll : pref=300, test result OK\n");
  std::printf("Available multiplexer protocols :\n  tcp : mode=TCP\n");
}

long raise_fd_limit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 1024;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
  }
  return static_cast<long>(rl.rlim_cur);
}

// `chroot`, `group`/`gid`, `user`/`uid`, with HAProxy's messages. False: an alert was printed.
bool drop_privileges(const config::GlobalConfig& g) {
  if (!g.chroot.empty() && (chroot(g.chroot.c_str()) == -1 || chdir("/") == -1)) {
    alert(fmt::format("[sluice.main()] Cannot chroot({}).", g.chroot));
    return false;
  }
  if (g.gid >= 0) {
    // Supplementary groups would keep what the new gid is meant to take away.
    if (getgroups(0, nullptr) > 0 && setgroups(0, nullptr) == -1)
      warning("[sluice.main()] Failed to drop supplementary groups. Using 'gid'/'group' without "
              "'uid'/'user' is generally useless.");
    if (setgid(static_cast<gid_t>(g.gid)) == -1) {
      alert(fmt::format("[sluice.main()] Cannot set gid {}.", g.gid));
      return false;
    }
  }
  if (g.uid >= 0 && setuid(static_cast<uid_t>(g.uid)) == -1) {
    alert(fmt::format("[sluice.main()] Cannot set uid {}.", g.uid));
    return false;
  }
  return true;
}

bool write_pidfile(const std::string& path, pid_t pid) {
  std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) return false;
  std::fprintf(f, "%d\n", static_cast<int>(pid));
  bool ok = std::fclose(f) == 0;
  return ok && std::rename(tmp.c_str(), path.c_str()) == 0;
}

void detach_stdio() {
  int fd = open("/dev/null", O_RDWR);
  if (fd < 0) return;
  dup2(fd, 0);
  dup2(fd, 1);
  dup2(fd, 2);
  if (fd > 2) close(fd);
}

// Sends `sig` to every process named by -sf / -st; returns how many could be signalled.
int tell_old_pids(const CommandLine& cmd, int sig) {
  int told = 0;
  for (const auto* pids : {&cmd.soft_stop_pids, &cmd.hard_stop_pids})
    for (int pid : *pids) told += kill(pid, sig) == 0;
  return told;
}

// Opens the listening sockets. A reload without SO_REUSEPORT (`noreuseport`, -dR) finds its
// ports still held by the old process: as HAProxy does, ask the old process to pause (SIGTTOU
// shuts its listeners down; still bound, they no longer stop a SO_REUSEADDR bind) and try
// again every 10 ms, for about a second. If the ports cannot be had, whatever was bound is
// released first, then the old process resumes (SIGTTIN) and goes on serving.
base::Result<void> bind_taking_over(proxy::Process& process, const CommandLine& cmd) {
  constexpr int kRetries = 100;
  bool paused_old = false;
  auto r = process.bind_all();
  // -x: the old process's sockets are ours too now; pausing it would shut them down.
  if (!cmd.takeover_socket.empty()) return r;
  for (int retry = 0; !r.ok() && r.error().sys_errno == EADDRINUSE && retry < kRetries; ++retry) {
    if (tell_old_pids(cmd, SIGTTOU) == 0) break;
    paused_old = true;
    process.unbind_all();
    usleep(10 * 1000);
    r = process.bind_all();
  }
  if (!r.ok() && paused_old) {
    process.unbind_all();
    tell_old_pids(cmd, SIGTTIN);
  }
  return r;
}

int run(int argc, char** argv) {
  CommandLine cmd;
  bool show_usage = false;
  std::string err = parse_command_line(argc, argv, &cmd, &show_usage);
  MessageOptions mo;
  mo.executable = argv[0];
  if (char* real = realpath("/proc/self/exe", nullptr)) {
    mo.executable = real;
    free(real);
  }
  mo.quiet = cmd.quiet;
  mo.verbose = cmd.verbose;
  mo.diag = cmd.diag;
  set_message_options(mo);
  if (!err.empty() || show_usage) {
    if (!err.empty()) alert(err);
    std::fputs(usage_text(argv[0]).c_str(), stderr);
    return 1;
  }
  if (cmd.version_quiet) {
    // -vq: the version alone; -vqs and -vqb: its branch (major.minor), as scripts read them.
    std::string v = base::kVersion;
    if (cmd.version_quiet == 2) {
      const std::size_t dot = v.find('.');
      const std::size_t second = dot == std::string::npos ? dot : v.find_first_of(".-", dot + 1);
      if (second != std::string::npos) v.resize(second);
    }
    std::printf("%s\n", v.c_str());
    return 0;
  }
  if (cmd.version) {
    print_version(cmd.version);
    return 0;
  }
  if (cmd.has_condition) {
    std::string cerr;
    int r = config::evaluate_condition(cmd.condition, &cerr);
    if (r < 0) {
      alert(cerr);   // already the whole message, with its "Failed to..." or "Syntax Error..."
      return 2;
    }
    return r ? 0 : 1;
  }
  // Master-worker mode: what a reloading master handed over (app/master.h). Its start-up
  // messages are kept for the master CLI.
  MasterState mstate = take_master_state();
  capture_messages();
  // A reload whose configuration cannot be used keeps the old workers serving: the master
  // goes on with them instead of exiting. `bound` holds the sockets this image took or
  // opened: those of the old configuration go back to the master, the new ones are closed.
  proxy::Process* bound = nullptr;
  auto failed_start = [&](int code) {
    if (!mstate.reexec) return code;
    if (bound) {
      bound->unbind_all();
      mstate.listener_fds = bound->release_inherited();
    }
    MasterSettings ms;
    ms.argv = cmd.reexec_argv;
    ms.systemd = cmd.systemd;
    ms.exit_on_failure = mstate.exit_on_failure;
    ms.max_reloads = mstate.max_reloads;
    return run_master(mstate, ms, nullptr).exit_code;
  };
  // The master's image after a reload runs in the directory the first one changed to.
  if (!cmd.chdir.empty() && !mstate.reexec && chdir(cmd.chdir.c_str()) != 0) {
    alert(fmt::format("Cannot chdir to '{}': {}", cmd.chdir, std::strerror(errno)));
    return 1;
  }
  if (cmd.config_paths.empty()) {
    alert("No configuration file specified: use -f <file|dir>.");
    std::fputs(usage_text(argv[0]).c_str(), stderr);
    return failed_start(1);
  }
  long fd_limit = raise_fd_limit();
  config::LoadOptions lo;
  lo.paths = cmd.config_paths;
  lo.diag = cmd.diag;
  lo.localpeer = cmd.localpeer;
  config::LoadResult loaded = config::load(lo, [](const config::Diagnostic& d) { print(d); });
  if (!loaded.model) return failed_start(1);
  config::ConfigModel& model = *loaded.model;
  // A master-worker reload: the servers' states set at run time come from the worker that
  // served (see load_server_states() below).
  std::string live_state;
  if (mstate.reexec) live_state = ask_current_worker(mstate, "show servers state\n");
  // init-addr `last`: the saved addresses, before the configuration is built (-c too).
  std::vector<std::string> state_file_notices, state_file_warnings;
  if (std::string bad = apply_saved_addresses(model, live_state.empty() ? nullptr : &live_state,
                                              &state_file_notices, &state_file_warnings);
      !bad.empty()) {
    for (const auto& n : state_file_notices) notice(n);
    for (const auto& w : state_file_warnings) warning(w);
    alert(bad);
    alert("Failed to initialize server(s) addr.");
    return failed_start(1);
  }

  auto threads = plan_thread_layout(model.global);
  if (!threads.ok()) {
    alert(threads.error().message);
    return failed_start(1);
  }
  for (const auto& n : threads->notices) notice(n);
  for (const auto& w : threads->warnings) warning(w);
  RuntimePlan plan = build_plan(model, fd_limit, cmd.maxconn, cmd.maxpconn);
  for (const auto& w : plan.warnings) warning(w);
  // tune.vars.*: read by every variable store made from now on; the proc store keeps what
  // the global set-var lines put there.
  sample::var_limits() = model.global.vars_limits;
  sample::ProcVars::instance().set_max_size(model.global.vars_limits.proc);
  plan.process.multi_queue =
      model.global.multi_queue == config::GlobalConfig::MultiQueue::kOn     ? proxy::MultiQueue::kOn
      : model.global.multi_queue == config::GlobalConfig::MultiQueue::kFair ? proxy::MultiQueue::kFair
                                                                            : proxy::MultiQueue::kOff;
  plan.process.steer_by_cpu = model.global.reuseport_steering == config::GlobalConfig::Steering::kCpu;
  ShardingResult sharding;
  if (auto r = plan_listeners(model, *threads, cmd.no_reuseport, plan.process, plan.proxies, sharding);
      !r.ok()) {
    alert(r.error().message);
    return failed_start(1);
  }
  for (const auto& w : sharding.warnings) warning(w);
  for (const auto& d : sharding.diagnostics) print(config::Severity::kDiag, d);
  if (cmd.explain) std::fputs(explain(model, *threads, plan.process, plan.proxies).c_str(), stdout);
  if ((model.global.zero_warning || cmd.zero_warning) && warnings_printed() > 0) {
    alert("Some warnings were found and 'zero-warning' is set. Aborting.");
    return failed_start(1);
  }
  const bool master_worker = cmd.master_worker || model.global.master_worker || mstate.reexec;
  if (cmd.check) {
    if (warnings_printed() > 0 && !cmd.quiet) std::printf("Warnings were found.\n");
    if (cmd.verbose) std::printf("Configuration file is valid\n");
    return 0;
  }

  // Signals are taken synchronously by the main thread (the loop at the end of run()); every
  // thread started later inherits the blocked mask. Blocked before the first listener opens:
  // whoever sees the port listening may signal at once (a SIGUSR1 right after a start, a
  // SIGUSR2 from a reload script), and until then the default action would kill the process.
  sigset_t sigs;
  sigemptyset(&sigs);
  for (int s : {SIGINT, SIGTERM, SIGUSR1, SIGHUP, SIGTTOU, SIGTTIN, SIGUSR2}) sigaddset(&sigs, s);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  signal(SIGPIPE, SIG_IGN);

  plan.process.debug = cmd.debug;
  proxy::Process process(plan.process);
  for (auto& p : plan.proxies) process.add_proxy(std::move(p));
  // -x: the listening sockets of the running process, taken over its stats socket (it must
  // say `expose-fd listeners`). Without them the start fails, as HAProxy's does: the old
  // process, which no -sf reached, goes on serving.
  if (!cmd.takeover_socket.empty()) {
    auto fds = net::fetch_fds(cmd.takeover_socket);
    if (!fds.ok()) {
      warning(fmt::format("Failed to connect to the old process socket '{}' ({})",
                          cmd.takeover_socket, fds.error().message));
      alert("Failed to get the sockets from the old process!");
      return failed_start(1);
    }
    process.set_inherited_fds(std::move(fds.value()));
  } else if (mstate.reexec) {
    // A reload in master-worker mode: the sockets the master kept open across execve().
    // Those the new configuration does not use stay open until its worker serves: should
    // the load fail, the old worker goes on with them.
    process.set_inherited_fds(mstate.listener_fds);
    process.keep_unused_inherited();
    mstate.listener_fds.clear();
    bound = &process;
  }
  if (auto r = bind_taking_over(process, cmd); !r.ok()) {
    alert(r.error().message);
    return failed_start(1);
  }
  for (const auto& w : process.bind_warnings()) warning(w);
  // Declared after `process`: checkers are destroyed first, after the workers have joined.
  HealthChecks checks(process, model);
  proxy::StatsView stats(process);
  proxy::ServerControlImpl control(process);
  {
    proxy::HealthHooks hooks;
    hooks.check_configured = [](const lb::Server& s) { return s.check_state().enabled; };
    hooks.enable_check = [&checks](lb::Server& s, bool on) { checks.enable(s, on); };
    hooks.set_health = [&checks](lb::Server& s, stats::HealthChange change) {
      checks.force(s, change == stats::HealthChange::kUp,
                   change == stats::HealthChange::kStopping);
    };
    hooks.restart_check = [&checks](lb::Server& s) { checks.restart(s); };
    hooks.agent_configured = [&checks](const lb::Server& s) { return checks.has_agent(s); };
    hooks.enable_agent = [&checks](lb::Server& s, bool on) { checks.enable_agent(s, on); };
    hooks.set_agent = [&checks](lb::Server& s, bool up) { checks.force_agent(s, up); };
    hooks.tracking = [](const lb::Server& s) { return !s.settings().tracked.empty(); };
    hooks.set_check_target = [&checks](lb::Server& s, bool agent, std::string_view ip, int port) {
      checks.set_check_target(s, agent, ip, port);
    };
    hooks.set_agent_send = [&checks](lb::Server& s, std::string_view text) {
      checks.set_agent_send(s, text);
    };
    control.set_health_hooks(std::move(hooks));
    // An agent's answer changes the admin state, weight and maxconn as the CLI does.
    checks.set_agent_apply([&control](std::string_view be, lb::Server& s,
                                      const check::AgentReply& r) {
      stats::ServerRef ref;
      if (control.find_server(be, s.name(), &ref) != stats::FindResult::kOk) return;
      using A = check::AgentReply::Admin;
      if (r.admin != A::kNone)
        control.set_admin_state(ref, r.admin == A::kReady   ? stats::AdminChange::kReady
                                     : r.admin == A::kDrain ? stats::AdminChange::kDrain
                                                            : stats::AdminChange::kMaint);
      if (r.weight_pct >= 0)
        control.set_weight(ref, s.initial_weight() * r.weight_pct / 100);
      if (r.maxconn >= 0) control.set_maxconn(ref, r.maxconn);
    });
  }
  // server-state-file: the saved states, before any traffic (and before the first checks).
  std::vector<StateLine> state_logs;
  {
    std::vector<std::string> state_notices, state_warnings;
    load_server_states(model, process, checks, &state_notices, &state_warnings, &state_logs,
                       live_state.empty() ? nullptr : &live_state);
    for (const auto& n : state_notices) notice(n);
    for (const auto& w : state_warnings) warning(w);
  }
  process.set_server_control(&control);
  cli::register_server_commands();
  if (auto r = open_stats_sockets(model.global, process, stats, &control); !r.ok()) {
    alert(r.error().message);
    return failed_start(1);
  }

  bool daemon = (cmd.daemon || model.global.daemon) && !cmd.debug && !cmd.no_background &&
                !mstate.reexec;
  std::string pidfile = !cmd.pidfile.empty() ? cmd.pidfile : model.global.pidfile;
  if (mstate.reexec) pidfile.clear();   // the master's pid, written at its first start
  if (!master_worker) capture_messages(false);
  if (daemon) {
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t child = fork();
    if (child < 0) {
      alert(fmt::format("Cannot fork: {}", std::strerror(errno)));
      return 1;
    }
    if (child > 0) {
      // The parent records the daemon's pid before returning, so whoever started us can read
      // the pidfile as soon as we exit.
      if (!pidfile.empty() && !write_pidfile(pidfile, child)) {
        alert(fmt::format("Cannot write pidfile '{}': {}", pidfile, std::strerror(errno)));
        kill(child, SIGTERM);
        return 1;
      }
      return 0;
    }
    setsid();
    detach_stdio();
  } else if (!pidfile.empty() && !write_pidfile(pidfile, getpid())) {
    alert(fmt::format("Cannot write pidfile '{}': {}", pidfile, std::strerror(errno)));
    return 1;
  }

  // Master-worker mode: this process becomes the master, which forks the worker that goes on
  // from here (the worker drops privileges; the master keeps them to reload).
  int master_channel = -1;
  int master_pid = 0;
  if (master_worker) {
    MasterSettings ms;
    ms.argv = cmd.reexec_argv;
    ms.cli_binds = cmd.master_cli;
    ms.systemd = cmd.systemd;
    ms.exit_on_failure = model.global.mworker_exit_on_failure;
    ms.max_reloads = model.global.mworker_max_reloads;
    ms.soft_stop_pids = cmd.soft_stop_pids;
    ms.hard_stop_pids = cmd.hard_stop_pids;
    if (mstate.executable.empty()) mstate.executable = mo.executable;
    MasterOutcome outcome = run_master(mstate, ms, &process);
    if (!outcome.worker) return outcome.exit_code;
    master_channel = outcome.channel;
    master_pid = outcome.master_pid;
    cmd.soft_stop_pids.clear();   // the master tells them, once this worker serves
    cmd.hard_stop_pids.clear();
    open_master_channel(master_channel, model.global, process, stats, &control);
  }

  // Privileges go once every socket is bound and the pidfile written, before any thread
  // serves (HAProxy's order): a listener on a port below 1024 needs root only to bind.
  if (!drop_privileges(model.global)) return 1;
  // HAProxy's default: nothing this process executes (external checks) gains privileges
  // through setuid bits or file capabilities, unless `insecure-setuid-wanted`. The master of
  // master-worker mode is left out: it re-executes its own binary on a reload.
  if (!model.global.insecure_setuid_wanted) prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (master_channel >= 0) {
    // A change of uid or gid clears the parent-death signal: set it again, and leave if the
    // master went away meanwhile.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != master_pid) return 1;
  }

  process.start();
  checks.start();
  if (master_channel >= 0) worker_ready(master_channel);
  proxy::LogWriter main_log(plan.process.log_tag, plan.process.node);
  for (const auto& p : process.proxies())
    main_log.send(plan.process.global_logs, proxy::kNotice,
                  fmt::format("Proxy {} started.", p->settings.name));
  for (const auto& l : state_logs) main_log.send(l.proxy->settings.logs, l.level, l.text);
  if (cmd.debug) {
    for (const auto& n : cmd.notes) notice(n);
    for (const auto& l : process.listeners())
      notice(fmt::format("{} '{}' listening on {}", l->proxy->settings.type, l->proxy->settings.name,
                         l->addr.kind == net::ListenAddress::Kind::kInet ? l->addr.addr.to_string()
                                                                         : l->addr.text));
  }
  // Reload: the new process is listening (SO_REUSEPORT lets both bind), now the old ones go.
  for (int pid : cmd.soft_stop_pids) kill(pid, SIGUSR1);
  for (int pid : cmd.hard_stop_pids) kill(pid, SIGTERM);

  int stopped_by = 0;   // SIGTERM or SIGINT, when one stopped the process
  uint64_t hard_deadline = 0;
  uint64_t grace_deadline = 0;   // SIGUSR1 received, `grace` running
  auto soft_stop_now = [&] {
    process.soft_stop();
    // HAProxy's lines (a warning on stderr and on each proxy's log targets), which tell the
    // operator what the old process had served.
    // The snapshots leave the disabled proxies out, as HAProxy leaves them out here.
    const auto snaps = stats.proxies();
    for (const auto& pp : process.proxies()) {
      const auto& p = *pp;
      auto snap = std::find_if(snaps.begin(), snaps.end(),
                               [&](const auto& s) { return s.name == p.settings.name; });
      if (snap == snaps.end()) continue;
      std::string msg = fmt::format("Proxy {} stopped (cumulated conns: FE: {}, BE: {}).",
                                    p.settings.name, snap->frontend.conn_tot, snap->backend.stot);
      warning(msg);
      main_log.send(p.settings.logs, proxy::kWarning, msg);
    }
    // As in HAProxy, hard-stop-after counts from the real soft stop, after any grace.
    if (plan.process.hard_stop_after_ms)
      hard_deadline = base::monotonic_ms() + plan.process.hard_stop_after_ms;
  };
  for (;;) {
    timespec ts{0, 100 * 1000 * 1000};
    siginfo_t info;
    int sig = sigtimedwait(&sigs, &info, &ts);
    if (sig == SIGINT || sig == SIGTERM) {
      main_log.send(plan.process.global_logs, proxy::kNotice,
                    fmt::format("Stopping on signal {}.", sig == SIGINT ? "SIGINT" : "SIGTERM"));
      process.stop_now();
      stopped_by = sig;
      break;
    }
    // The master soft-stops an old worker after a reload with this value: the new worker
    // listens on the same sockets, which must then be left as they are.
    if (sig == SIGUSR1 && info.si_code == SI_QUEUE && info.si_value.sival_int == kStopAfterReload)
      process.mark_listeners_exported();
    if (sig == SIGUSR1 && !process.stopping() && !grace_deadline) {
      if (plan.process.grace_ms) {
        // `grace`: the process says it is stopping but keeps accepting for a while, so that
        // whatever watches it (a load balancer's health check) can take it out first.
        // HAProxy's texts and levels.
        std::string msg = fmt::format("Scheduling a soft-stop in {} ms.", plan.process.grace_ms);
        notice(msg);
        main_log.send(plan.process.global_logs, proxy::kWarning, msg);
        process.announce_stop();
        grace_deadline = base::monotonic_ms() + plan.process.grace_ms;
      } else {
        soft_stop_now();
      }
    }
    if (grace_deadline && !process.stopping() && base::monotonic_ms() >= grace_deadline) {
      const char* msg = "Grace period expired, proceeding with soft-stop now.";
      notice(msg);
      main_log.send(plan.process.global_logs, proxy::kNotice, msg);
      soft_stop_now();
    }
    if ((sig == SIGTTOU || sig == SIGTTIN) && !process.stopping()) {
      // HAProxy's pause and resume: new connections are refused while paused (TCP
      // listeners); connections in progress and the CLI go on.
      bool pause = sig == SIGTTOU;
      pause ? process.pause_listeners() : process.resume_listeners();
      for (const auto& p : process.proxies())
        if (p->settings.frontend)
          main_log.send(plan.process.global_logs, proxy::kWarning,
                        fmt::format("{} {} {}.", pause ? "Paused" : "Resumed", p->settings.type,
                                    p->settings.name));
    }
    if (sig == SIGUSR2 && master_channel < 0) {
      // SIGUSR2 reloads in master-worker mode (-W, where the master takes it); a process
      // without a master must not die of it (its default action).
      main_log.send(plan.process.global_logs, proxy::kNotice,
                    "SIGUSR2 ignored: no master-worker mode; reload with -sf <pid>.");
    }
    if (hard_deadline && base::monotonic_ms() >= hard_deadline) {
      const char* msg = "soft-stop running for too long, performing a hard-stop.";
      warning(msg);
      main_log.send(plan.process.global_logs, proxy::kWarning, msg);
      for (const auto& p : process.proxies()) {
        int left = p->feconn.current();
        if (!p->settings.frontend || left <= 0) continue;
        std::string line = fmt::format("Proxy {} hard-stopped ({} remaining conns will be closed).",
                                       p->settings.name, left);
        warning(line);
        main_log.send(p->settings.logs, proxy::kWarning, line);
      }
      process.stop_now();
      break;
    }
    if (process.wait_workers(1)) break;
  }
  process.join();
  if (master_channel >= 0 && stopped_by) {
    // A worker stopped by a signal says so to its master, as HAProxy's do ("exited with code
    // 143 (Terminated)"), and the master tells a normal stop (SIGTERM) from the others.
    std::fflush(stderr);
    signal(stopped_by, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, stopped_by);
    pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
    raise(stopped_by);
  }
  return 0;
}

}  // namespace
}  // namespace sluice::app

int main(int argc, char** argv) { return sluice::app::run(argc, argv); }

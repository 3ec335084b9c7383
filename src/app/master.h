#pragma once
// Master-worker mode (-W, -Ws, global `master-worker`), HAProxy's process model.
//
// The master parses the configuration and binds every listening socket, then forks a worker
// that serves on them (the rest of the start-up: checks, stats sockets' service, privileges,
// threads). The master itself serves nothing: it holds the listening sockets, watches its
// workers, answers its own CLI (-S, app/master_cli.h) and reloads.
//
// A reload (SIGUSR2, or `reload` on the master CLI) re-executes the master's binary with the
// same command line: the new image reads the configuration again, takes back the listening
// sockets it was handed (kept open across execve(), listed in the environment with the
// workers it supervises), binds what is new, and forks a new worker. Once that worker says it
// serves, the old ones are soft-stopped. They stop accepting, but the sockets stay open in
// the master and the new worker, so the kernel's accept queues, and the connections waiting
// in them, survive the reload. A configuration that fails to load leaves the old worker
// serving and the master waiting with it ("Success=0"; `show proc` counts it as failed).
//
// Worker <-> master: one socketpair per worker (its "channel"). The worker writes 'R' once it
// serves; the master sends it the connections its CLI forwards (`@1 show info`), one
// descriptor per message (net::send_mark()).
//
// Main thread only; the master is single-threaded.
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::proxy {
class Process;
}

namespace sluice::app {

struct WorkerRecord {
  int pid = 0;
  int channel = -1;        // the master's end of the worker's socketpair
  int reloads = 0;         // reloads it has lived through
  int64_t start_s = 0;     // when it was forked (wall clock, seconds)
  bool current = false;    // the worker of the latest load
  bool ready = false;      // it said it serves
};

// What a master hands over to the image it re-executes (in the environment).
struct MasterState {
  bool reexec = false;               // this process is a master re-executed by a reload
  int reloads = 0;
  int failed = 0;                    // reloads that did not start a worker
  int64_t start_s = 0;               // the master's first start
  std::string executable;            // what a reload executes
  std::vector<WorkerRecord> workers;
  std::vector<int> listener_fds;     // the listening sockets, for the next worker
  std::vector<int> cli_fds;          // the master CLI's sockets (-S)
  int reload_client = -1;            // the master CLI connection that asked for the reload
  bool hard = false;                 // `hard-reload`: old workers get SIGTERM
  bool exit_on_failure = true;       // kept for a reload whose configuration fails
  int max_reloads = -1;
};

// The state the previous image left (reexec false when there is none). It is taken out of the
// environment, so that workers and external checks never see it. Call once, at start-up.
MasterState take_master_state();

struct MasterSettings {
  std::vector<std::string> argv;     // re-executed as is (-sf, -st and -x taken out)
  std::vector<std::string> cli_binds;   // -S <bind>[,<options>]
  bool systemd = false;              // -Ws: sd_notify on $NOTIFY_SOCKET
  bool exit_on_failure = true;       // `master-worker` without `no-exit-on-failure`
  int max_reloads = -1;              // `mworker-max-reloads`
  std::vector<int> soft_stop_pids;   // -sf / -st of the first start: told once ready
  std::vector<int> hard_stop_pids;
};

struct MasterOutcome {
  bool worker = false;   // true in a forked worker, which goes on starting
  int channel = -1;      // the worker's end of its channel to the master
  int master_pid = 0;    // in the worker: its master
  int exit_code = 0;     // the master's exit status, when !worker
};

// Runs the master. `process` holds the bound listeners of a configuration that loaded; null
// when it failed to load (a reload: the master goes on with the workers it had). Returns in
// the master when it exits, and in the new worker right after the fork.
MasterOutcome run_master(MasterState& state, const MasterSettings& settings,
                         proxy::Process* process);

// In a worker: tells the master it serves.
void worker_ready(int channel);

// What the worker that served until this reload answers to a CLI `command` (one line, with
// its newline) over its channel, within a second; empty when there is none or it cannot say.
std::string ask_current_worker(const MasterState& state, std::string_view command);

// sigqueue() value with which the master soft-stops a worker after a reload: a new worker
// serves on the same sockets, so the old one must leave them as they are (no shutdown).
inline constexpr int kStopAfterReload = 0x5e1d;

}  // namespace sluice::app

#pragma once
// haproxy's command-line conventions, so that process managers and scripts that drive
// haproxy drive sluice unchanged. Main thread only.
#include <string>
#include <vector>

namespace sluice::app {

struct CommandLine {
  std::vector<std::string> config_paths;   // -f, repeatable, in order
  bool check = false;                      // -c
  bool verbose = false;                    // -V
  bool quiet = false;                      // -q
  bool debug = false;                      // -d: foreground, trace connections on stderr
  bool daemon = false;                     // -D
  bool diag = false;                       // -dD
  bool zero_warning = false;               // -dW
  bool no_reuseport = false;               // -dR
  bool explain = false;                    // --explain: print the thread and shard plan
  std::string pidfile;                     // -p
  std::string chdir;                       // -C
  std::string localpeer;                   // -L: the local peer name
  std::string condition;                   // -cc
  bool has_condition = false;
  int version = 0;                         // 1 for -v, 2 for -vv
  int version_quiet = 0;                   // 1 for -vq (the version), 2 for -vqs/-vqb (branch)
  bool no_background = false;              // -db: foreground, whatever `daemon` says
  int maxconn = 0;                         // -n
  int maxpconn = 0;                        // -N: maxconn of the frontends that set none
  std::vector<int> soft_stop_pids;         // -sf: after start-up, SIGUSR1 these (reload)
  std::vector<int> hard_stop_pids;         // -st: after start-up, SIGTERM these
  std::string takeover_socket;             // -x: take the listeners of the process there
  bool master_worker = false;              // -W, -Ws
  bool systemd = false;                    // -Ws
  std::vector<std::string> master_cli;     // -S <bind>[,<options>], repeatable
  // The command line without -sf, -st and -x: what a master re-executes on a reload.
  std::vector<std::string> reexec_argv;
  std::vector<std::string> notes;          // accepted harmless flags, shown with -d
};

// Returns an error message (empty when fine). `usage` is filled on -h or an unknown flag.
std::string parse_command_line(int argc, char** argv, CommandLine* out, bool* show_usage);

std::string usage_text(const char* argv0);

}  // namespace sluice::app

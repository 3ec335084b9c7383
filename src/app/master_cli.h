#pragma once
// The master CLI (-S <bind>[,<options>]), HAProxy's: `show proc`, `reload`, `hard-reload`,
// `@<n> <command>` / `@!<pid> <command>` forwarded to a worker's CLI, `@master`, `prompt`,
// `help`, `quit`, `echo`, `show version`, `show env`, `show startup-logs`, `show cli level`,
// `show cli sockets`, `operator`, `user`. Served by the master's single-threaded poll loop
// (app/master.h): every socket is non-blocking and no command waits on a worker.
#include <poll.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "config/model.h"

namespace sluice::app {

// What the master offers its CLI.
class MasterCliHost {
 public:
  virtual ~MasterCliHost() = default;
  virtual std::string show_proc() const = 0;
  // `reload` / `hard-reload`: the connection `fd` now belongs to the master, which answers
  // "Success=1|0" and the start-up messages once the new worker serves or fails.
  virtual void reload(int fd, bool hard) = 0;
  // The channel of the worker a prefix names (`1` for @1, `!1234` for @!1234); -1 when none
  // matches. *pid gets the worker's pid.
  virtual int worker_channel(std::string_view target, int* pid) const = 0;
};

// One -S argument: "<address>[,<option>,<value>...]" with options `mode <octal>` and
// `level user|operator|admin`. Binds it; the descriptor is non-blocking and close-on-exec.
struct MasterCliBind {
  int fd = -1;
  std::string shown;   // "unix@/run/sluice-master.sock"
};
base::Result<MasterCliBind> bind_master_cli(const std::string& spec);

class MasterCli {
 public:
  explicit MasterCli(MasterCliHost& host);
  ~MasterCli();
  MasterCli(const MasterCli&) = delete;
  MasterCli& operator=(const MasterCli&) = delete;

  // A listening socket (bound by bind_master_cli(), or kept across a reload) and its level.
  void add_listener(int fd, std::string shown, config::CliLevel level);
  // Every descriptor to watch, appended to *fds (listeners, clients, forwarded commands).
  void collect(std::vector<pollfd>* fds) const;
  // After poll(): serves what `fds` says is ready (entries of other owners are skipped).
  void serve(const std::vector<pollfd>& fds, uint64_t now_ms);
  // The listeners' descriptors, kept across a reload.
  std::vector<int> listener_fds() const;
  // In a forked worker: closes every descriptor without touching the connections (the master
  // still owns them).
  void abandon();

 private:
  struct Listener {
    int fd;
    std::string shown;
    config::CliLevel level;
  };
  struct Client;
  void accept_on(Listener& l, uint64_t now_ms);
  // Runs complete input lines until one waits for a worker; false when the client is done.
  bool advance(Client& c);
  bool run_line(Client& c, std::string_view line);
  void run_command(Client& c, std::vector<std::string> words, std::string_view raw);
  bool forward(Client& c, std::string_view target, std::string_view command, bool tunnel = false);
  void pump_upstream(Client& c);
  void flush(Client& c);
  void close_client(std::size_t i);
  std::string help_text(config::CliLevel level, std::string_view filter) const;

  MasterCliHost& host_;
  std::vector<Listener> listeners_;
  std::vector<std::unique_ptr<Client>> clients_;
  uint64_t accept_paused_until_ = 0;
};

}  // namespace sluice::app

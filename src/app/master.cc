#include "app/master.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "app/master_cli.h"
#include "app/messages.h"
#include "base/clock.h"
#include "base/strings.h"
#include "base/version.h"
#include "net/fd_passing.h"
#include "proxy/process.h"
#include "sample/vars.h"

namespace sluice::app {

namespace {

constexpr const char* kStateVar = "SLUICE_MWORKER_STATE";

int64_t wall_s() { return static_cast<int64_t>(::time(nullptr)); }

void set_cloexec(int fd, bool on) {
  int f = fcntl(fd, F_GETFD);
  if (f < 0) return;
  fcntl(fd, F_SETFD, on ? (f | FD_CLOEXEC) : (f & ~FD_CLOEXEC));
}

std::string join_ints(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

// A descriptor handed over by the previous image: open, and a socket.
bool is_socket(int fd) {
  struct stat st{};
  return fd > 2 && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

// A worker the previous image left: a child of this process (the same pid across execve()).
bool is_child(int pid) {
  if (pid <= 1) return false;
  FILE* f = std::fopen(fmt::format("/proc/{}/stat", pid).c_str(), "r");
  if (!f) return false;
  char buf[512];
  std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* close_paren = std::strrchr(buf, ')');
  int ppid = 0;
  char state = 0;
  return close_paren && std::sscanf(close_paren + 1, " %c %d", &state, &ppid) == 2 &&
         ppid == getpid();
}

std::vector<long long> split_ints(std::string_view s, char sep) {
  std::vector<long long> v;
  while (!s.empty()) {
    std::size_t c = s.find(sep);
    std::string part(s.substr(0, c));
    v.push_back(std::strtoll(part.c_str(), nullptr, 10));
    if (c == std::string_view::npos) break;
    s.remove_prefix(c + 1);
  }
  return v;
}

// "key=value;key=value;...", the executable last (a path may hold any of the separators).
std::string serialize(const MasterState& s, const std::vector<std::string>& cli_shown) {
  std::string out = fmt::format("r={};f={};s={};l={};q={};h={};e={};m={}", s.reloads, s.failed,
                                s.start_s, join_ints(s.listener_fds), s.reload_client,
                                s.hard ? 1 : 0, s.exit_on_failure ? 1 : 0, s.max_reloads);
  for (std::size_t i = 0; i < s.cli_fds.size(); ++i)
    out += fmt::format(";c={}:{}", s.cli_fds[i], base::hex_encode(i < cli_shown.size() ? cli_shown[i] : ""));
  for (const auto& w : s.workers)
    out += fmt::format(";w={},{},{},{},{},{}", w.pid, w.channel, w.reloads, w.start_s,
                       w.current ? 1 : 0, w.ready ? 1 : 0);
  out += ";x=" + s.executable;
  return out;
}

// The -S listeners handed over, with their shown names ("unix@/path admin").
std::vector<std::string>& inherited_cli_shown() {
  static std::vector<std::string> v;
  return v;
}

config::CliLevel level_of(std::string_view shown) {
  if (shown.ends_with(" user")) return config::CliLevel::kUser;
  if (shown.ends_with(" operator")) return config::CliLevel::kOperator;
  return config::CliLevel::kAdmin;
}

// systemd's notify protocol: one datagram to $NOTIFY_SOCKET ('@' starts an abstract name).
void sd_notify(bool enabled, const std::string& text) {
  if (!enabled) return;
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (!path || !*path) return;
  sockaddr_un sun{};
  sun.sun_family = AF_UNIX;
  const std::size_t len = std::strlen(path);
  if (len >= sizeof sun.sun_path) return;
  std::memcpy(sun.sun_path, path, len);
  if (sun.sun_path[0] == '@') sun.sun_path[0] = '\0';
  int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return;
  sendto(s, text.data(), text.size(), MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&sun),
         static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len));
  close(s);
}

std::string how_it_ended(int status, int* code) {
  if (WIFSIGNALED(status)) {
    *code = 128 + WTERMSIG(status);
    const char* name = strsignal(WTERMSIG(status));
    return name ? name : "Signal";
  }
  *code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  return "Exit";
}

std::string uptime(int64_t since) {
  int64_t up = std::max<int64_t>(0, wall_s() - since);
  return fmt::format("{}d{:02}h{:02}m{:02}s", up / 86400, (up / 3600) % 24, (up / 60) % 60, up % 60);
}

// What the worker on `channel` answers to a CLI `ask` (its hidden `_getvars` command for the
// proc variables, `show servers state`), within a second; empty when it cannot say.
std::string ask_worker(int channel, std::string_view ask) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) return {};
  const bool sent = net::send_mark(channel, 'C', sv[1], 200);
  close(sv[1]);
  std::string out;
  if (!sent || send(sv[0], ask.data(), ask.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(ask.size())) {
    close(sv[0]);
    return {};
  }
  const uint64_t deadline = base::monotonic_ms() + 1000;
  for (;;) {
    char buf[16384];
    ssize_t n = recv(sv[0], buf, sizeof buf, 0);
    if (n > 0) {
      out.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) break;
    if (errno == EINTR) continue;
    const uint64_t now = base::monotonic_ms();
    if ((errno != EAGAIN && errno != EWOULDBLOCK) || now >= deadline) {
      out.clear();
      break;
    }
    pollfd p{sv[0], POLLIN, 0};
    poll(&p, 1, static_cast<int>(deadline - now));
  }
  close(sv[0]);
  return out;
}

class Master final : public MasterCliHost {
 public:
  Master(MasterState& state, const MasterSettings& settings, proxy::Process* process)
      : s_(state), settings_(settings), process_(process), cli_(*this) {}

  MasterOutcome run();

  std::string show_proc() const override {
    std::string out = fmt::format("{:<15} {:<15} {:<15} {:<15} {:<15}\n", "#<PID>", "<type>",
                                  "<reloads>", "<uptime>", "<version>");
    out += fmt::format("{:<15} {:<15} {:<15} {:<15} {:<15}\n", getpid(), "master",
                       fmt::format("{} [failed: {}]", s_.reloads, s_.failed), uptime(s_.start_s),
                       base::kVersion);
    out += "# workers\n";
    auto row = [&](const WorkerRecord& w) {
      out += fmt::format("{:<15} {:<15} {:<15} {:<15} {:<15}\n", w.pid, "worker", w.reloads,
                         uptime(w.start_s), base::kVersion);
    };
    for (const auto& w : s_.workers)
      if (w.current) row(w);
    bool old = false;
    for (const auto& w : s_.workers) {
      if (w.current) continue;
      if (!old) out += "# old workers\n";
      old = true;
      row(w);
    }
    out += "\n";
    return out;
  }

  void reload(int fd, bool hard) override {
    if (loading_pid_ || pending_client_ >= 0) {
      // HAProxy's answer: one reload at a time, the next once the new worker serves.
      const std::string text = "Success=0\n--\nAnother reload is still in progress.\n\n";
      (void)!send(fd, text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      close(fd);
      return;
    }
    pending_client_ = fd;
    reload_now(hard);
  }

  int worker_channel(std::string_view target, int* pid) const override {
    for (const auto& w : s_.workers) {
      if (w.channel < 0) continue;
      const bool match = target.starts_with('!') ? std::to_string(w.pid) == target.substr(1)
                                                 : (target == "1" && w.current);
      if (match) {
        *pid = w.pid;
        return w.channel;
      }
    }
    return -1;
  }

 private:
  bool fork_worker(MasterOutcome* out);
  void reload_now(bool hard);
  void reap();
  void on_channel(WorkerRecord& w);
  void loaded(bool success, bool reload);
  void answer_reload_client(bool success);
  void stop_all(int sig);
  void close_master_fds_in_worker(int keep);

  MasterState& s_;
  const MasterSettings& settings_;
  proxy::Process* process_;
  MasterCli cli_;
  int sigfd_ = -1;
  int pending_client_ = -1;      // waits for the outcome of this image's load
  int loading_pid_ = 0;          // the worker of this load, until it serves or fails
  int previous_current_ = 0;     // the worker that served before this load
  bool stopping_ = false;
  int exit_code_ = 0;
  bool first_start_ = false;
};

void Master::close_master_fds_in_worker(int keep) {
  cli_.abandon();
  if (sigfd_ >= 0) close(sigfd_);
  if (pending_client_ >= 0) close(pending_client_);
  for (auto& w : s_.workers)
    if (w.channel >= 0 && w.channel != keep) close(w.channel);
  // The master's copies of the stats sockets were for the worker only.
}

bool Master::fork_worker(MasterOutcome* out) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) {
    alert(fmt::format("Cannot create the channel to a new worker: {}", std::strerror(errno)));
    return false;
  }
  const pid_t master = getpid();
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    alert(fmt::format("Cannot fork a new worker: {}", std::strerror(errno)));
    close(sv[0]);
    close(sv[1]);
    return false;
  }
  if (pid == 0) {
    close(sv[0]);
    close_master_fds_in_worker(-1);
    // The old configuration's sockets this one does not use: a worker holding them would keep
    // them in their reuseport group, where connections would wait for it in vain.
    process_->close_inherited();
    // A worker does not outlive its master (execve() on a reload does not count).
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != master) _exit(0);
    unsetenv("NOTIFY_SOCKET");
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    pthread_sigmask(SIG_UNBLOCK, &chld, nullptr);
    capture_messages(false);
    out->worker = true;
    out->channel = sv[1];
    out->master_pid = master;
    return true;
  }
  close(sv[1]);
  notice(fmt::format("Initializing new worker ({})", pid));
  for (auto& w : s_.workers) {
    if (w.current) previous_current_ = w.pid;
    w.current = false;
  }
  WorkerRecord r;
  r.pid = pid;
  r.channel = sv[0];
  r.start_s = wall_s();
  r.current = true;
  s_.workers.push_back(r);
  loading_pid_ = pid;
  // The stats sockets were bound here for the worker, which has them now.
  for (auto& sl : process_->special_listeners()) {
    if (sl->fd >= 0) close(sl->fd);
    sl->fd = -1;
  }
  return true;
}

void Master::answer_reload_client(bool success) {
  if (pending_client_ < 0) return;
  std::string text = fmt::format("Success={}\n--\n{}\n", success ? 1 : 0, captured_messages());
  // Blocking for this one answer (bounded by the socket's buffer and a second).
  int fl = fcntl(pending_client_, F_GETFL);
  fcntl(pending_client_, F_SETFL, fl & ~O_NONBLOCK);
  timeval tv{1, 0};
  setsockopt(pending_client_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  std::size_t off = 0;
  const uint64_t deadline = base::monotonic_ms() + 2000;
  while (off < text.size() && base::monotonic_ms() < deadline) {
    ssize_t n = send(pending_client_, text.data() + off, text.size() - off, MSG_NOSIGNAL);
    if (n <= 0) break;
    off += static_cast<std::size_t>(n);
  }
  close(pending_client_);
  pending_client_ = -1;
}

void Master::loaded(bool success, bool reload) {
  const std::string pid_line = fmt::format("MAINPID={}\n", getpid());
  if (success) {
    notice("Loading success.");
    sd_notify(settings_.systemd, "READY=1\n" + pid_line + "STATUS=Ready.\n");
    // The old workers leave the sockets to the new one (net/fd_passing.h's rule): a
    // sigqueue()d value tells them so.
    for (auto& w : s_.workers) {
      if (w.current) continue;
      if (s_.hard) {
        kill(w.pid, SIGTERM);
      } else {
        sigval v{};
        v.sival_int = kStopAfterReload;
        sigqueue(w.pid, SIGUSR1, v);
      }
      if (s_.max_reloads >= 0 && w.reloads > s_.max_reloads) {
        warning(fmt::format("Former worker ({}) exceeded mworker-max-reloads ({} reloads, limit {}), "
                            "sending SIGTERM.", w.pid, w.reloads, s_.max_reloads));
        kill(w.pid, SIGTERM);
      }
    }
    if (process_) process_->close_inherited();   // the old configuration's, unused now
    if (!reload) {
      // -sf / -st of the command line: processes of an earlier start, told once we serve.
      for (int pid : settings_.soft_stop_pids) kill(pid, SIGUSR1);
      for (int pid : settings_.hard_stop_pids) kill(pid, SIGTERM);
    }
  } else if (reload) {
    ++s_.failed;
    sd_notify(settings_.systemd, "READY=1\nSTATUS=Reload failed!\n");
  }
  answer_reload_client(success);
  s_.hard = false;
}

void Master::reload_now(bool hard) {
  notice("Reloading sluice");
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  sd_notify(settings_.systemd,
            fmt::format("RELOADING=1\nSTATUS=Reloading Configuration.\nMONOTONIC_USEC={}\n",
                        static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000));
  MasterState next = s_;
  next.reexec = true;
  next.reloads = s_.reloads + 1;
  next.hard = hard;
  next.reload_client = pending_client_;
  for (auto& w : next.workers) ++w.reloads;
  if (process_) {
    next.listener_fds = process_->listener_fds();
    // The old configuration's sockets this load did not take, while its worker serves.
    for (int fd : process_->inherited_fds()) next.listener_fds.push_back(fd);
  }
  next.cli_fds = cli_.listener_fds();
  std::vector<std::string> shown = inherited_cli_shown();
  std::vector<int> keep = next.listener_fds;
  keep.insert(keep.end(), next.cli_fds.begin(), next.cli_fds.end());
  for (const auto& w : next.workers) keep.push_back(w.channel);
  if (pending_client_ >= 0) keep.push_back(pending_client_);
  for (int fd : keep)
    if (fd >= 0) set_cloexec(fd, false);
  setenv(kStateVar, serialize(next, shown).c_str(), 1);
  std::vector<char*> argv;
  for (const auto& a : settings_.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  execv(s_.executable.c_str(), argv.data());
  // Still here: the old image goes on with what it had.
  const int err = errno;
  unsetenv(kStateVar);
  for (int fd : keep)
    if (fd >= 0) set_cloexec(fd, true);
  alert(fmt::format("Cannot re-execute '{}' for the reload: {}", s_.executable, std::strerror(err)));
  loaded(false, true);
}

void Master::stop_all(int sig) {
  stopping_ = true;
  sd_notify(settings_.systemd, "STOPPING=1\n");
  for (const auto& w : s_.workers) kill(w.pid, sig);
}

void Master::on_channel(WorkerRecord& w) {
  for (;;) {
    char buf[64];
    ssize_t n = recv(w.channel, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
      if (std::memchr(buf, 'R', static_cast<std::size_t>(n)) && !w.ready) {
        w.ready = true;
        if (w.pid == loading_pid_) {
          loading_pid_ = 0;
          loaded(true, s_.reexec);
        }
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    // The worker is gone (or going): its exit is reaped by reap().
    close(w.channel);
    w.channel = -1;
    return;
  }
}

void Master::reap() {
  for (;;) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    auto it = std::find_if(s_.workers.begin(), s_.workers.end(),
                           [&](const WorkerRecord& w) { return w.pid == pid; });
    if (it == s_.workers.end()) continue;
    int code = 0;
    const std::string how = how_it_ended(status, &code);
    WorkerRecord w = *it;
    s_.workers.erase(it);
    if (w.channel >= 0) close(w.channel);
    if (pid == loading_pid_) {
      // The new worker did not make it: the old ones go on serving.
      loading_pid_ = 0;
      warning(fmt::format("Failed to load worker ({}) exited with code {} ({})", pid, code, how));
      for (auto& o : s_.workers)
        if (o.pid == previous_current_) o.current = true;
      if (s_.workers.empty()) exit_code_ = code;   // nothing left: the master fails with it
      loaded(false, s_.reexec);
    } else if (w.current) {
      const std::string line =
          fmt::format("Current worker ({}) exited with code {} ({})", pid, code, how);
      code == 0 ? warning(line) : alert(line);
      // The master exits with the first status that says something went wrong: a clean exit
      // and SIGTERM (143) are the normal ends of a worker, SIGINT (130) and the rest are
      // reported, as HAProxy's master does.
      if (exit_code_ == 0 && code != 0 && code != 143) exit_code_ = code;
      // A worker that ended as asked (a clean exit, SIGINT, SIGTERM) is no failure.
      const bool failure = code != 0 && code != 130 && code != 143;
      if (!stopping_ && failure && s_.exit_on_failure && !s_.workers.empty()) {
        alert("exit-on-failure: killing every processes with SIGTERM");
        stop_all(SIGTERM);
      }
    } else {
      warning(fmt::format("Former worker ({}) exited with code {} ({})", pid, code, how));
    }
  }
}

MasterOutcome Master::run() {
  MasterOutcome out;
  first_start_ = !s_.reexec;
  if (first_start_) s_.start_s = wall_s();
  s_.exit_on_failure = settings_.exit_on_failure;
  s_.max_reloads = settings_.max_reloads;
  pending_client_ = s_.reload_client;
  s_.reload_client = -1;
  for (std::size_t i = 0; i < s_.cli_fds.size(); ++i) {
    const std::string shown = i < inherited_cli_shown().size() ? inherited_cli_shown()[i] : "";
    cli_.add_listener(s_.cli_fds[i], shown, level_of(shown));
  }
  if (first_start_) {
    for (const auto& spec : settings_.cli_binds) {
      auto b = bind_master_cli(spec);
      if (!b.ok()) {
        alert(b.error().message);
        out.exit_code = 1;
        return out;
      }
      inherited_cli_shown().push_back(b->shown);
      cli_.add_listener(b->fd, b->shown, level_of(b->shown));
    }
  }

  // Ignored SIGCHLD (inherited so) would have the kernel reap the workers unseen.
  signal(SIGCHLD, SIG_DFL);
  sigset_t sigs;
  sigemptyset(&sigs);
  for (int sg : {SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGHUP, SIGTTOU, SIGTTIN, SIGCHLD})
    sigaddset(&sigs, sg);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  sigfd_ = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);

  if (process_) {
    // proc variables live on across a reload: the worker that serves says what it holds, and
    // the new worker starts with it (over what the configuration's global set-var lines set).
    for (const auto& w : s_.workers)
      if (w.current && w.ready && w.channel >= 0)
        sample::ProcVars::instance().restore(ask_worker(w.channel, "_getvars\n"));
    if (!fork_worker(&out)) {
      for (auto& o : s_.workers)
        if (o.pid == previous_current_) o.current = true;
      loaded(false, s_.reexec);
      if (s_.workers.empty()) {
        out.exit_code = 1;
        return out;
      }
    }
    if (out.worker) return out;
  } else {
    // This reload's configuration did not load: the workers go on as they were.
    loaded(false, true);
  }

  for (;;) {
    reap();
    if (s_.workers.empty()) {
      warning(fmt::format("All workers exited. Exiting... ({})", exit_code_));
      out.exit_code = exit_code_;
      answer_reload_client(false);
      return out;
    }
    std::vector<pollfd> fds;
    fds.push_back(pollfd{sigfd_, POLLIN, 0});
    for (const auto& w : s_.workers)
      if (w.channel >= 0) fds.push_back(pollfd{w.channel, POLLIN, 0});
    cli_.collect(&fds);
    int n = poll(fds.data(), fds.size(), 1000);
    if (n < 0 && errno != EINTR) {
      alert(fmt::format("master: poll() failed: {}", std::strerror(errno)));
      stop_all(SIGTERM);
    }
    if (n <= 0) {
      cli_.serve({}, base::monotonic_ms());
      continue;
    }
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo si{};
      while (read(sigfd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
        const int sig = static_cast<int>(si.ssi_signo);
        if (sig == SIGUSR2 && !stopping_) {
          if (loading_pid_) warning("Another reload is still in progress: SIGUSR2 ignored.");
          else reload_now(false);
        } else if (sig == SIGTERM || sig == SIGINT) {
          if (!stopping_) warning("Exiting Master process...");
          stop_all(sig);   // the workers get the signal the master got, as in HAProxy
        } else if (sig == SIGUSR1) {
          stop_all(SIGUSR1);
        } else if (sig == SIGHUP || sig == SIGTTOU || sig == SIGTTIN) {
          for (const auto& w : s_.workers)
            if (w.current) kill(w.pid, sig);
        }
      }
    }
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      for (auto& w : s_.workers)
        if (w.channel == fds[i].fd) on_channel(w);
    }
    cli_.serve(fds, base::monotonic_ms());
  }
}

}  // namespace

MasterState take_master_state() {
  MasterState s;
  const char* env = std::getenv(kStateVar);
  if (!env) return s;
  std::string text = env;
  unsetenv(kStateVar);
  // What the old image kept open across execve() must not leak into what this one executes
  // (external checks): close-on-exec again, once read below.
  struct Cloexec {
    MasterState& s;
    ~Cloexec() {
      for (int fd : s.listener_fds) set_cloexec(fd, true);
      for (int fd : s.cli_fds) set_cloexec(fd, true);
      for (const auto& w : s.workers)
        if (w.channel >= 0) set_cloexec(w.channel, true);
      if (s.reload_client >= 0) set_cloexec(s.reload_client, true);
    }
  } cloexec{s};
  s.reexec = true;
  std::size_t x = text.find(";x=");
  if (x != std::string::npos) {
    s.executable = text.substr(x + 3);
    text.resize(x);
  }
  std::string_view rest = text;
  while (!rest.empty()) {
    std::size_t c = rest.find(';');
    std::string_view kv = rest.substr(0, c);
    rest = c == std::string_view::npos ? std::string_view() : rest.substr(c + 1);
    if (kv.size() < 2 || kv[1] != '=') continue;
    std::string_view v = kv.substr(2);
    switch (kv[0]) {
      case 'r': s.reloads = static_cast<int>(std::strtol(std::string(v).c_str(), nullptr, 10)); break;
      case 'f': s.failed = static_cast<int>(std::strtol(std::string(v).c_str(), nullptr, 10)); break;
      case 's': s.start_s = std::strtoll(std::string(v).c_str(), nullptr, 10); break;
      case 'q': {
        const int fd = static_cast<int>(std::strtol(std::string(v).c_str(), nullptr, 10));
        s.reload_client = is_socket(fd) ? fd : -1;
        break;
      }
      case 'h': s.hard = v == "1"; break;
      case 'e': s.exit_on_failure = v == "1"; break;
      case 'm': s.max_reloads = static_cast<int>(std::strtol(std::string(v).c_str(), nullptr, 10)); break;
      case 'l':
        for (long long fd : split_ints(v, ','))
          if (is_socket(static_cast<int>(fd))) s.listener_fds.push_back(static_cast<int>(fd));
        break;
      case 'c': {
        std::size_t colon = v.find(':');
        const int fd = static_cast<int>(std::strtol(std::string(v.substr(0, colon)).c_str(), nullptr, 10));
        if (!is_socket(fd)) break;
        s.cli_fds.push_back(fd);
        std::string shown;
        if (colon != std::string_view::npos) base::hex_decode(v.substr(colon + 1), &shown);
        inherited_cli_shown().push_back(std::move(shown));
        break;
      }
      case 'w': {
        auto f = split_ints(v, ',');
        if (f.size() < 6) break;
        WorkerRecord w;
        w.pid = static_cast<int>(f[0]);
        w.channel = static_cast<int>(f[1]);
        w.reloads = static_cast<int>(f[2]);
        w.start_s = f[3];
        w.current = f[4] != 0;
        w.ready = f[5] != 0;
        if (!is_child(w.pid)) {
          // Gone already (reaped by the kernel?) or not ours: nothing to watch or to signal.
          if (w.channel > 2 && is_socket(w.channel)) close(w.channel);
          break;
        }
        if (!is_socket(w.channel)) w.channel = -1;
        s.workers.push_back(w);
        break;
      }
      default: break;
    }
  }
  return s;
}

MasterOutcome run_master(MasterState& state, const MasterSettings& settings,
                         proxy::Process* process) {
  Master m(state, settings, process);
  return m.run();
}

std::string ask_current_worker(const MasterState& state, std::string_view command) {
  for (const auto& w : state.workers)
    if (w.current && w.ready && w.channel >= 0) return ask_worker(w.channel, command);
  return {};
}

void worker_ready(int channel) {
  const char r = 'R';
  while (send(channel, &r, 1, MSG_NOSIGNAL) < 0 && errno == EINTR) {
  }
}

}  // namespace sluice::app

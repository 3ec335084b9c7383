// External checks (`option external-check`): the configured command runs for each check, as
// HAProxy runs it (its arguments and HAPROXY_* environment); exit status 0 passes. A worker
// never waits on it: the command is started with posix_spawn, and its end comes through a
// pidfd watched by the event loop; at `timeout check` it is killed and reaped the same way.
#include <signal.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "check/checker.h"

extern char** environ;

namespace sluice::check {

void Checker::begin_external() {
  ext_killed_ = false;
  std::vector<std::string> env = s_.ext_env;
  env.push_back("HAPROXY_SERVER_CURCONN=" + std::to_string(srv_.current_conns()));
  std::vector<char*> argv, envp;
  for (auto& a : s_.ext_argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  // The command starts with no signal blocked and the default dispositions (sluice's threads
  // block the ones the main thread takes, and ignore SIGPIPE).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  // Its own process group: a timeout kills what it started too (a shell's children).
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, s_.ext_argv[0].c_str(), nullptr, &attr, argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    complete(lb::CheckStatus::kProcErr, 0, errno_text(rc));
    return;
  }
  const int pfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pfd < 0) {
    const int err = errno;
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);   // killed: it goes at once
    complete(lb::CheckStatus::kSockErr, 0, errno_text(err));
    return;
  }
  pid_ = pid;
  fd_ = pfd;
  phase_ = Phase::kReading;
  if (!loop_.add(fd_, EPOLLIN, this)) {
    const int err = errno;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
    close(fd_);
    fd_ = -1;
    complete(lb::CheckStatus::kSockErr, 0, errno_text(err));
  }
}

void Checker::external_done() {
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == 0) return;   // not yet (a spurious wake-up)
  pid_ = -1;
  if (ext_killed_) {
    complete(lb::CheckStatus::kProcTout, 0, "");
    return;
  }
  const int code = r < 0 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  complete(code == 0 ? lb::CheckStatus::kProcOk : lb::CheckStatus::kProcErr, code < 0 ? 0 : code, "");
}

void Checker::external_timeout() {
  if (pid_ < 0 || ext_killed_) return;
  ext_killed_ = true;
  kill(-pid_, SIGKILL);   // the group; reaped when its pidfd says it ended (external_done)
}

}  // namespace sluice::check

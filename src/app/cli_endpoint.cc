#include "app/cli_endpoint.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "cli/cli.h"
#include "net/socket.h"
#include "proxy/worker.h"

namespace sluice::app {

namespace {

// One CLI client. Worker-local (the first worker).
class CliConnection : public core::IoHandler, public core::Deferred, public core::TimerHandler {
 public:
  CliConnection(proxy::Worker& w, proxy::Process::SpecialListener& l, int fd, config::CliLevel level,
                const stats::StatsSource& stats, stats::ServerControl* control, uint32_t idle_ms)
      : w_(w), l_(l), fd_(fd), session_(level, &stats, w.id() + 1, control), idle_ms_(idle_ms),
        timer_(this) {}

  ~CliConnection() override {
    if (fd_ >= 0) close(fd_);
  }

  void start() {
    if (!w_.loop().add(fd_, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, this)) {
      finish();
      return;
    }
    rearm();
  }

  void on_io(uint32_t events) override {
    if (closed_) return;
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) read_ready_ = true;
    if (events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) write_ready_ = true;
    run();
  }

  void on_timer(core::Timer&) override {
    // `stats timeout` (or `set timeout cli`): an idle CLI connection is closed silently.
    if (!closed_) finish();
  }

 private:
  void run() {
    char buf[4096];
    while (read_ready_ && !peer_done_ && keep_open_) {
      ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n > 0) {
        keep_open_ = session_.feed(std::string_view(buf, static_cast<std::size_t>(n)), &out_);
        rearm();
      } else if (n == 0) {
        // The client half-closed: a command without LF is never run (HAProxy does the same).
        peer_done_ = true;
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        read_ready_ = false;
      } else if (errno != EINTR) {
        finish();
        return;
      }
    }
    while (!out_.empty() && write_ready_) {
      ssize_t n = send(fd_, out_.data(), out_.size(), MSG_NOSIGNAL);
      if (n > 0) {
        out_.erase(0, static_cast<std::size_t>(n));
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        write_ready_ = false;
      } else if (n < 0 && errno != EINTR) {
        finish();
        return;
      }
    }
    if (out_.empty() && (!keep_open_ || peer_done_)) finish();
  }

  void rearm() {
    uint32_t ms = session_.idle_timeout_ms(idle_ms_);
    if (ms) w_.loop().timers().arm(timer_, w_.loop().now_ms() + ms);
  }

  void finish() {
    if (closed_) return;
    closed_ = true;
    w_.loop().timers().cancel(timer_);
    close(fd_);
    fd_ = -1;
    w_.special_closed(l_, this);
  }

  proxy::Worker& w_;
  proxy::Process::SpecialListener& l_;
  int fd_;
  cli::CliSession session_;
  uint32_t idle_ms_;
  core::Timer timer_;
  std::string out_;
  bool read_ready_ = false;
  bool write_ready_ = true;
  bool peer_done_ = false;
  bool keep_open_ = true;
  bool closed_ = false;
};

}  // namespace

base::Result<void> open_stats_sockets(const config::GlobalConfig& global, proxy::Process& process,
                                      const stats::StatsSource& stats,
                                      stats::ServerControl* control) {
  for (const auto& s : global.stats_sockets) {
    net::ListenOptions opts;
    opts.backlog = 10;
    opts.unix_mode = s.unix_mode;
    opts.reuseport = false;   // a special listener: never sharded
    auto fd = net::open_listener(s.addr, opts);
    if (!fd.ok()) {
      base::Error e = fd.error();
      e.message = fmt::format("Binding [{}:{}] for stats socket: {} [{}]", s.loc.file, s.loc.line,
                              e.message, s.text);
      return e;
    }
    config::CliLevel level = s.level;
    uint32_t idle = global.stats_timeout_ms;
    const stats::StatsSource* src = &stats;
    process.add_special_listener(
        *fd, global.stats_maxconn,
        [level, idle, src, control](proxy::Worker& w, proxy::Process::SpecialListener& l, int cfd) {
          auto* c = new CliConnection(w, l, cfd, level, *src, control, idle);
          w.special_opened(c);
          c->start();
        });
  }
  return {};
}

}  // namespace sluice::app

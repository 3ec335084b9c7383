#include "app/cli_endpoint.h"

#include <linux/sockios.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "cli/cli.h"
#include "net/fd_passing.h"
#include "net/socket.h"
#include "proxy/worker.h"

namespace sluice::app {

namespace {

// Output a connection may hold unsent before its session stops running commands (spec 1.3:
// HAProxy parses the next command only when its output buffer has room). One answer can go
// past it; a client that sends commands and never reads then costs this much, not more.
constexpr std::size_t kOutputBound = 64 * 1024;

// One CLI client. Worker-local (the first worker).
class CliConnection : public core::IoHandler, public proxy::SpecialConn, public core::TimerHandler {
 public:
  CliConnection(proxy::Worker& w, proxy::Process::SpecialListener& l, int fd, config::CliLevel level,
                const stats::StatsSource& stats, stats::ServerControl* control, uint32_t idle_ms,
                std::size_t max_line, bool expose_listeners)
      : w_(w), l_(l), fd_(fd), session_(level, &stats, w.id() + 1, control, max_line),
        idle_ms_(idle_ms), timer_(this), accept_ms_(w.loop().now_ms()),
        expose_listeners_(expose_listeners) {
    // A command that answers later (`show sess`) resumes the connection when its answer
    // arrives, on this worker.
    session_.set_on_reply([this] {
      if (!closed_) run();
    });
    const auto& all = w.process().special_listeners();
    for (std::size_t i = 0; i < all.size(); ++i)
      if (all[i].get() == &l) listener_id = static_cast<int>(i) + 1;
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0)
      peer_ = net::SocketAddress::from_sockaddr(reinterpret_cast<sockaddr*>(&ss), len);
  }

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

  void describe(proxy::SessionInfo* info) const override {
    info->client = peer_;
    info->accept_ms = accept_ms_;
    info->expire_ms = timer_.armed() ? timer_.expiry() : 0;
    info->bytes_in = bytes_in_;
    info->bytes_out = bytes_out_;
    info->state = session_.waiting() ? "WAIT" : "EST";
    info->client_fd = fd_;
  }

  // `shutdown session` of a CLI connection (possibly the one asking: its answer is then lost
  // with it, as in HAProxy).
  void kill() override { finish(); }

  void on_timer(core::Timer&) override {
    if (closed_) return;
    // The client may be reading what the kernel holds for it while sluice has nothing it can
    // send (a unix socket reports writable again only once most of its queue has drained):
    // that is progress too, seen as a shorter kernel send queue.
    if (kernel_queue() < queue_at_arm_) {
      rearm();
      return;
    }
    // `stats timeout` (or `set timeout cli`): an idle CLI connection is closed silently.
    finish();
  }

 private:
  std::size_t unsent() const { return out_.size() - out_off_; }

  void run() {
    for (;;) {
      if (!parse_and_read()) return;
      bool sent = false;
      while (unsent() > 0 && write_ready_) {
        ssize_t n = send(fd_, out_.data() + out_off_, unsent(), MSG_NOSIGNAL);
        if (n > 0) {
          // Sent bytes are skipped, not erased: erasing the head of a large answer after each
          // send would copy the rest every time (quadratic).
          out_off_ += static_cast<std::size_t>(n);
          bytes_out_ += static_cast<uint64_t>(n);
          sent = true;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
          write_ready_ = false;
        } else if (n < 0 && errno != EINTR) {
          finish();
          return;
        }
      }
      if (out_off_ == out_.size()) {
        out_.clear();
        out_off_ = 0;
      } else if (out_off_ >= kOutputBound && out_off_ * 2 >= out_.size()) {
        // Reclaim the sent head once it is most of the buffer: each byte moves at most once.
        out_.erase(0, out_off_);
        out_off_ = 0;
      }
      // `stats timeout` is an idle timeout (spec 1.1): a client that reads a large answer
      // slowly is making progress and must get all of it.
      if (sent) rearm();
      // Sending made room: commands waiting for it, or unread input, can go on.
      if (!sent || unsent() >= kOutputBound || !keep_open_ ||
          !(session_.blocked() || (read_ready_ && !peer_done_)))
        break;
    }
    // Commands still waiting for output room are answered even after the client half-closed.
    if (unsent() == 0 && (!keep_open_ || (peer_done_ && !session_.blocked()))) finish();
  }

  // Runs waiting commands and reads input while the unsent output is under kOutputBound.
  // False if the connection was closed.
  bool parse_and_read() {
    char buf[4096];
    while (keep_open_ && unsent() < kOutputBound) {
      // A command waits for other threads (`show sess`): its reply calls run() again.
      if (session_.waiting()) break;
      if (session_.blocked()) {
        keep_open_ = session_.feed({}, &out_, out_off_ + kOutputBound);
        continue;
      }
      if (!read_ready_ || peer_done_) break;
      ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n > 0 && expose_listeners_ && bytes_in_ == 0 &&
          std::string_view(buf, static_cast<std::size_t>(n)).starts_with(net::kGetSocksCommand)) {
        give_listeners();
        return false;
      }
      if (n > 0) {
        bytes_in_ += static_cast<uint64_t>(n);
        keep_open_ = session_.feed(std::string_view(buf, static_cast<std::size_t>(n)), &out_,
                                   out_off_ + kOutputBound);
        rearm();
      } else if (n == 0) {
        // The client half-closed: a command without LF is never run (HAProxy does the same).
        peer_done_ = true;
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        read_ready_ = false;
      } else if (errno != EINTR) {
        finish();
        return false;
      }
    }
    return true;
  }

  // `expose-fd listeners`: a new process started with -x asks for the listening sockets
  // (net/fd_passing.h). Once they are sent, this process leaves them to it when it stops.
  void give_listeners() {
    proxy::Process& p = w_.process();
    // Marked before they are sent: the new process signals -sf as soon as it has them, and a
    // soft stop that still saw them as ours would shut them down under it (the kernel object
    // is shared), resetting its queues and refusing its clients.
    p.mark_listeners_exported();
    (void)net::send_fds(fd_, p.listener_fds());
    finish();
  }

  // Bytes sent but not yet read (unix) or acknowledged (TCP) by the client.
  std::size_t kernel_queue() const {
    int q = 0;
    if (ioctl(fd_, SIOCOUTQ, &q) != 0 || q < 0) return 0;
    return static_cast<std::size_t>(q);
  }

  void rearm() {
    queue_at_arm_ = kernel_queue();
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
  std::size_t out_off_ = 0;    // bytes of out_ already sent
  std::size_t queue_at_arm_ = 0;   // kernel_queue() when the idle timer was last armed
  bool read_ready_ = false;
  bool write_ready_ = true;
  bool peer_done_ = false;
  bool keep_open_ = true;
  bool closed_ = false;
  uint64_t accept_ms_;
  uint64_t bytes_in_ = 0, bytes_out_ = 0;
  net::SocketAddress peer_;
  bool expose_listeners_ = false;
};

}  // namespace

void open_master_channel(int fd, const config::GlobalConfig& global, proxy::Process& process,
                         const stats::StatsSource& stats, stats::ServerControl* control) {
  const uint32_t idle = global.stats_timeout_ms;
  const std::size_t max_line = static_cast<std::size_t>(global.tune_bufsize);
  const stats::StatsSource* src = &stats;
  process.add_special_listener(
      fd, 100,
      [idle, src, control, max_line](proxy::Worker& w, proxy::Process::SpecialListener& l, int cfd) {
        auto* c = new CliConnection(w, l, cfd, config::CliLevel::kAdmin, *src, control, idle,
                                    max_line, false);
        w.special_opened(c);
        c->start();
      },
      /*channel=*/true);
}

base::Result<void> open_stats_sockets(const config::GlobalConfig& global, proxy::Process& process,
                                      const stats::StatsSource& stats,
                                      stats::ServerControl* control) {
  std::vector<std::pair<std::string, config::CliLevel>> listed;
  for (const auto& s : global.stats_sockets) {
    const net::ListenAddress& a = s.addr;
    std::string shown = a.kind == net::ListenAddress::Kind::kUnix ? "unix@" + a.addr.host_string()
                        : a.kind == net::ListenAddress::Kind::kInheritedFd
                            ? fmt::format("fd@{}", a.fd)
                            : (a.addr.family() == AF_INET6 ? "ipv6@" : "ipv4@") + a.addr.to_string();
    listed.emplace_back(std::move(shown), s.level);
  }
  cli::set_cli_sockets(std::move(listed));
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
    const bool expose = s.expose_listeners;
    uint32_t idle = global.stats_timeout_ms;
    std::size_t max_line = static_cast<std::size_t>(global.tune_bufsize);
    const stats::StatsSource* src = &stats;
    process.add_special_listener(
        *fd, global.stats_maxconn,
        [level, idle, src, control, max_line, expose](proxy::Worker& w,
                                                       proxy::Process::SpecialListener& l, int cfd) {
          auto* c = new CliConnection(w, l, cfd, level, *src, control, idle, max_line, expose);
          w.special_opened(c);
          c->start();
        });
  }
  return {};
}

}  // namespace sluice::app

#include "proxy/log.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

#include <fmt/format.h>

namespace sluice::proxy {

std::atomic<uint64_t> LogWriter::dropped{0};

std::string format_log_line(const LogTarget& target, int level, std::string_view tag, int pid,
                            std::string_view host, uint64_t wall_us, std::string_view msg) {
  if (level > target.max_level) return {};
  if (level < target.min_level) level = target.min_level;
  int pri = target.facility * 8 + level;
  std::string out;
  time_t secs = static_cast<time_t>(wall_us / 1000000);
  struct tm tm;
  switch (target.format) {
    case LogFormat::kRaw:
      out.assign(msg);
      break;
    case LogFormat::kShort:
      out = fmt::format("<{}>{}", pri, msg);
      break;
    case LogFormat::kRfc3164: {
      localtime_r(&secs, &tm);
      char date[32];
      strftime(date, sizeof date, "%b %e %H:%M:%S", &tm);
      out = fmt::format("<{}>{} {}[{}]: {}", pri, date, tag, pid, msg);
      break;
    }
    case LogFormat::kRfc5424: {
      gmtime_r(&secs, &tm);
      char date[32];
      strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
      out = fmt::format("<{}>1 {}.{:06}+00:00 {} {} {} - - {}", pri, date, wall_us % 1000000,
                        host.empty() ? "-" : host, tag, pid, msg);
      break;
    }
  }
  // Every message ends with LF, on every transport (HAProxy's UDP datagrams do too), and the
  // length limit counts it (1024 bytes by default, LF included; longer lines are cut).
  if (target.max_len > 0 && out.size() + 1 > static_cast<std::size_t>(target.max_len))
    out.resize(static_cast<std::size_t>(target.max_len - 1));
  out.push_back('\n');
  return out;
}

LogWriter::LogWriter(std::string tag, std::string host)
    : tag_(std::move(tag)), host_(std::move(host)), pid_(getpid()) {}

LogWriter::~LogWriter() = default;

void LogWriter::send_traffic(const ProxySettings& s, const log::Format& fmt,
                             const log::Record& r, const sample::Ctx* ctx, int level) {
  line_.clear();
  fmt.render(r, ctx, line_);
  send(s.logs, level, line_, s.log_tag);
}

void LogWriter::send(const std::vector<LogTarget>& targets, int level, std::string_view msg,
                     std::string_view tag) {
  if (targets.empty()) return;
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t wall_us = static_cast<uint64_t>(ts.tv_sec) * 1000000u +
                     static_cast<uint64_t>(ts.tv_nsec) / 1000u;
  for (const LogTarget& t : targets) {
    std::string line = format_log_line(t, level, tag.empty() ? std::string_view(tag_) : tag, pid_, host_, wall_us, msg);
    if (line.empty() && level > t.max_level) continue;
    switch (t.kind) {
      case LogTarget::Kind::kStdout:
      case LogTarget::Kind::kStderr: {
        int fd = t.kind == LogTarget::Kind::kStdout ? 1 : 2;
        // One write per line: lines from several threads never interleave mid-line.
        if (write(fd, line.data(), line.size()) < 0) dropped.fetch_add(1, std::memory_order_relaxed);
        break;
      }
      case LogTarget::Kind::kUdp:
      case LogTarget::Kind::kUnixDgram: {
        if (!dgram_.send_to(t.addr, line.data(), line.size()))
          dropped.fetch_add(1, std::memory_order_relaxed);
        break;
      }
    }
  }
}

}  // namespace sluice::proxy

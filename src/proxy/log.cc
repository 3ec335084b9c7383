#include "proxy/log.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <iterator>

#include <fmt/format.h>

#include "net/tls.h"

namespace sluice::proxy {

void note_tls(log::Record& r, ssl_st* tls) {
  r.tls = tls != nullptr;
  if (!tls) return;
  r.ssl_version = net::tls::protocol(tls);
  r.ssl_cipher = net::tls::cipher(tls);
}

std::atomic<uint64_t> LogWriter::dropped{0};

namespace {

// "2026-12-05T07:22:12.413457+00:00": local time with its offset (rfc5424, timed, iso).
struct tm local_tm(uint64_t wall_us) {
  time_t secs = static_cast<time_t>(wall_us / 1000000);
  struct tm tm;
  localtime_r(&secs, &tm);
  return tm;
}

void append_iso_date(std::string& out, uint64_t wall_us) {
  const struct tm tm = local_tm(wall_us);
  char date[32];
  std::size_t n = strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
  long off = tm.tm_gmtoff / 60;
  char sign = off < 0 ? '-' : '+';
  if (off < 0) off = -off;
  fmt::format_to(std::back_inserter(out), "{}.{:06}{}{:02}:{:02}", std::string_view(date, n),
                 wall_us % 1000000, sign, off / 60, off % 60);
}

// "Dec  5 07:22:06 " (rfc3164, local).
void append_bsd_date(std::string& out, uint64_t wall_us) {
  const struct tm tm = local_tm(wall_us);
  char date[32];
  std::size_t n = strftime(date, sizeof date, "%b %e %H:%M:%S ", &tm);
  out.append(date, n);
}

}  // namespace

std::string format_log_line(const LogTarget& target, int level, std::string_view tag, int pid,
                            std::string_view host, uint64_t wall_us, std::string_view msg,
                            std::string_view sd) {
  if (level > target.max_level) return {};
  if (level < target.min_level) level = target.min_level;
  int pri = target.facility * 8 + level;
  std::string out;
  auto it = std::back_inserter(out);
  switch (target.format) {
    case LogFormat::kRaw:
      break;
    case LogFormat::kShort:
      fmt::format_to(it, "<{}>", level);
      break;
    case LogFormat::kPriority:
      fmt::format_to(it, "<{}>", pri);
      break;
    case LogFormat::kTimed:
      fmt::format_to(it, "<{}>", level);
      append_iso_date(out, wall_us);
      out += ' ';
      break;
    case LogFormat::kIso:
      append_iso_date(out, wall_us);
      out += ' ';
      break;
    case LogFormat::kDefault:
    case LogFormat::kRfc3164:
    case LogFormat::kLocal:
      fmt::format_to(it, "<{}>", pri);
      append_bsd_date(out, wall_us);
      // An explicit rfc3164 always names a host ("localhost" without log-send-hostname), the
      // default one only a given host, local never.
      if (target.format == LogFormat::kRfc3164)
        fmt::format_to(it, "{} ", host.empty() ? std::string_view("localhost") : host);
      else if (target.format == LogFormat::kDefault && !host.empty())
        fmt::format_to(it, "{} ", host);
      fmt::format_to(it, "{}[{}]: ", tag, pid);
      break;
    case LogFormat::kRfc5424:
      fmt::format_to(it, "<{}>1 ", pri);
      append_iso_date(out, wall_us);
      fmt::format_to(it, " {} {} {} - {} ", host.empty() ? std::string_view("-") : host, tag, pid,
                     sd.empty() ? std::string_view("-") : sd);
      break;
  }
  out += msg;
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
                             const log::Record& r, const sample::Ctx* ctx, int level, bool session_error) {
  // option dontlog-normal: what HAProxy calls normal (not an error for log-separate-errors)
  // is not logged.
  if (s.dontlog_normal && !session_error && !log::is_error(r)) return;
  if (r.request_line.size() > uri_limit) {
    log::Record cut = r;
    cut.request_line = r.request_line.substr(0, uri_limit);
    cut.request_line_cut = true;
    return send_traffic(s, fmt, cut, ctx, level, session_error);
  }
  line_.clear();
  fmt.render(r, ctx, line_);
  sd_.clear();
  if (s.log_format_sd) {
    for (const LogTarget& t : s.logs)
      if (t.format == LogFormat::kRfc5424) {
        s.log_format_sd->render(r, ctx, sd_);
        break;
      }
  }
  const bool err = s.log_separate_errors && (session_error || log::is_error(r));
  send(s.logs, level >= 0 ? level : err ? kErr : kInfo, line_, s.log_tag, sd_);
}

void LogWriter::send(const std::vector<LogTarget>& targets, int level, std::string_view msg,
                     std::string_view tag, std::string_view sd) {
  if (targets.empty()) return;
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t wall_us = static_cast<uint64_t>(ts.tv_sec) * 1000000u +
                     static_cast<uint64_t>(ts.tv_nsec) / 1000u;
  for (const LogTarget& t : targets) {
    // The syslog header names no host: sluice has no log-send-hostname.
    std::string line = format_log_line(t, level, tag.empty() ? std::string_view(tag_) : tag,
                                       pid_, {}, wall_us, msg, sd);
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

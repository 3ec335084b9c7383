#pragma once
// Log lines to syslog targets (UDP, UNIX datagram) and to stdout/stderr, in the formats
// HAProxy emits. Sending never blocks a worker: a datagram that does not fit is dropped and
// counted (DroppedLogs), as with HAProxy.
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "log/format.h"
#include "net/socket.h"
#include "proxy/settings.h"
#include "sample/context.h"

struct ssl_st;

namespace sluice::proxy {

enum LogLevel { kEmerg = 0, kAlert, kCrit, kErr, kWarning, kNotice, kInfo, kDebug };

// Formats one complete message for `target`, ending with LF (within `len`, which counts it);
// empty when the level is filtered out. Pure; any thread.
// `host`: the syslog host name, empty for none; `sd`: rfc5424's structured data (log-format-sd),
// empty for none. PRI is facility * 8 + level; the dates are local time.
//   rfc3164:  "<PRI>Mmm dd hh:mm:ss host tag[pid]: msg" (host "localhost" when none)
//   default:  the same, the host only when there is one (no `format` word)
//   local:    "<PRI>Mmm dd hh:mm:ss tag[pid]: msg"
//   rfc5424:  "<PRI>1 2026-11-30T05:50:00.123456+00:00 host tag pid - sd msg" ("-" for none)
//   priority: "<PRI>msg"
//   short:    "<level>msg"
//   timed:    "<level>2026-11-30T05:50:00.123456+00:00 msg"
//   iso:      "2026-11-30T05:50:00.123456+00:00 msg"
//   raw:      "msg"
// The client connection's TLS in a log record (null `tls`: a plain one): %ft's '~', %sslv,
// %sslc.
void note_tls(log::Record& r, ssl_st* tls);

std::string format_log_line(const LogTarget& target, int level, std::string_view tag, int pid,
                            std::string_view host, uint64_t wall_us, std::string_view msg,
                            std::string_view sd = {});

// One per worker thread (worker-local); the main thread has its own for process events.
class LogWriter {
 public:
  LogWriter(std::string tag, std::string host);
  ~LogWriter();
  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;

  // `tag`: the proxy's log-tag; empty: the writer's. `sd`: rfc5424's structured data.
  void send(const std::vector<LogTarget>& targets, int level, std::string_view msg,
            std::string_view tag = {}, std::string_view sd = {});

  // A traffic line: `fmt` rendered for `r` (and `ctx` for its %[...] nodes) into this
  // writer's buffer, reused from line to line, then sent to the proxy's targets, with the
  // proxy's log-format-sd when a target is rfc5424. `level`: a set-log-level rule's level, or
  // -1 for the default (info; err for an error line with option log-separate-errors, as
  // HAProxy decides before a set-log-level overrides it). `session_error`: an error logged
  // without a stream (error-log-format's lines), an error line as log::is_error() ones are.
  void send_traffic(const ProxySettings& s, const log::Format& fmt, const log::Record& r,
                    const sample::Ctx* ctx, int level = -1, bool session_error = false);
  const std::string& host() const { return host_; }
  // tune.http.logurilen: the request line of a traffic line is cut to this many bytes, as
  // HAProxy stores it for its logs (%r and the parts taken from it). Set before traffic.
  std::size_t uri_limit = 1024;
  int pid() const { return pid_; }

  // Process-wide count of dropped lines. Any thread.
  static std::atomic<uint64_t> dropped;

 private:
  std::string tag_;
  std::string host_;
  int pid_;
  net::DatagramSender dgram_;   // UDP and UNIX datagram targets
  std::string line_;            // the traffic line being rendered
  std::string sd_;              // its structured data (log-format-sd)
};

}  // namespace sluice::proxy

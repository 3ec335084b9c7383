#include "config/log_keyword.h"

#include <fmt/format.h>

#include "config/units.h"
#include "net/address.h"

namespace sluice::config {

namespace {

// syslog facilities in HAProxy's order: the index is the facility number.
constexpr std::string_view kFacilities[] = {
    "kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news",
    "uucp", "cron", "auth2", "ftp", "ntp", "audit", "alert", "cron2",
    "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7",
};
constexpr std::string_view kLevels[] = {"emerg", "alert", "crit", "err",
                                        "warning", "notice", "info", "debug"};

int index_of(std::string_view w, const std::string_view* list, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (list[i] == w) return static_cast<int>(i);
  return -1;
}

}  // namespace

void parse_log(Parser& p, Line& l, std::vector<LogTarget>* logs, bool in_global) {
  if (l.prefix == Prefix::kNo) {
    if (l.args.size() > 1)
      throw ConfigError{fmt::format("{}'no log' does not expect arguments.", l.where)};
    logs->clear();
    return;
  }
  if (l.prefix == Prefix::kDefault)
    throw ConfigError{fmt::format("{}negation/default is not supported for 'log'.", l.where)};
  if (l.args.size() < 2)
    throw ConfigError{l.where + "log : expects <address> and <facility> or global as arguments"};
  if (l.args[1] == "global") {
    if (in_global)
      throw ConfigError{l.where + "'log global' is only valid in proxies (it copies these targets)."};
    if (l.args.size() > 2)
      throw ConfigError{fmt::format("{}'log global' cannot handle unexpected argument '{}'.",
                                    l.where, l.args[2])};
    for (const auto& t : p.global.logs) logs->push_back(t);
    return;
  }
  LogTarget t;
  t.loc = l.loc;
  std::string target = l.args[1];
  if (target == "stdout" || target == "fd@1") {
    t.kind = LogTarget::Kind::kStdout;
  } else if (target == "stderr" || target == "fd@2") {
    t.kind = LogTarget::Kind::kStderr;
  } else if (target.starts_with("ring@") || target.starts_with("backend@")) {
    throw ConfigError{fmt::format("{}log target '{}' is not supported by sluice yet.", l.where, target)};
  } else {
    target = p.address_word(l, 1, "log");
    auto a = net::parse_log_address(target);
    if (!a.ok()) throw ConfigError{fmt::format("{}log : {}", l.where, a.error().message)};
    t.addr = a.value();
    t.kind = t.addr.family() == AF_UNIX ? LogTarget::Kind::kUnixDgram : LogTarget::Kind::kUdp;
  }
  t.text = l.args[1];
  std::size_t i = 2;
  while (i < l.args.size()) {
    const std::string& w = l.args[i];
    if (w == "len") {
      auto v = i + 1 < l.args.size() ? parse_strict_int(l.args[i + 1], 80, 65535) : std::nullopt;
      if (!v)
        throw ConfigError{fmt::format("{}log : invalid log length '{}', must be between 80 and 65535",
                                      l.where, i + 1 < l.args.size() ? l.args[i + 1] : "")};
      t.max_len = static_cast<int>(*v);
      i += 2;
    } else if (w == "format") {
      std::string f = i + 1 < l.args.size() ? l.args[i + 1] : "";
      if (f == "rfc3164") {
        t.format = LogFormat::kRfc3164;
      } else if (f == "rfc5424") {
        t.format = LogFormat::kRfc5424;
      } else if (f == "short") {
        t.format = LogFormat::kShort;
      } else if (f == "raw") {
        t.format = LogFormat::kRaw;
      } else if (f == "local") {
        t.format = LogFormat::kLocal;
      } else if (f == "priority") {
        t.format = LogFormat::kPriority;
      } else if (f == "timed") {
        t.format = LogFormat::kTimed;
      } else if (f == "iso") {
        t.format = LogFormat::kIso;
      } else {
        throw ConfigError{fmt::format("{}log : unknown log format '{}'", l.where, f)};
      }
      i += 2;
    } else if (w == "sample" || w == "profile") {
      throw ConfigError{fmt::format("{}log : '{}' is not supported by sluice yet.", l.where, w)};
    } else {
      break;
    }
  }
  if (i >= l.args.size())
    throw ConfigError{l.where + "log : expects <address> and <facility> or global as arguments"};
  int fac = index_of(l.args[i], kFacilities, std::size(kFacilities));
  if (fac < 0) throw ConfigError{fmt::format("{}unknown log facility '{}'", l.where, l.args[i])};
  t.facility = fac;
  ++i;
  if (i < l.args.size()) {
    int lv = index_of(l.args[i], kLevels, std::size(kLevels));
    if (lv < 0)
      throw ConfigError{fmt::format("{}unknown optional log level '{}'", l.where, l.args[i])};
    t.max_level = lv;
    ++i;
  }
  if (i < l.args.size()) {
    int lv = index_of(l.args[i], kLevels, std::size(kLevels));
    if (lv < 0)
      throw ConfigError{fmt::format("{}unknown optional minimum log level '{}'", l.where, l.args[i])};
    t.min_level = lv;
    ++i;
  }
  if (i < l.args.size())
    throw ConfigError{fmt::format("{}log : cannot handle unexpected argument '{}'.", l.where, l.args[i])};
  logs->push_back(std::move(t));
}

}  // namespace sluice::config

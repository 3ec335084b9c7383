// Global tunables and `log-steps`: see tunable_keywords.h. Messages are HAProxy 3.5's where it
// has one; sluice wants integers where HAProxy reads them with atol() (a word is then 0).
#include "config/tunable_keywords.h"

#include <climits>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "config/units.h"

namespace sluice::config {

namespace {

std::string arg(const Line& l, std::size_t i) { return i < l.args.size() ? l.args[i] : ""; }

void no_more(const Line& l, std::size_t n) {
  if (l.args.size() > n)
    throw ConfigError{fmt::format("{}'{}' cannot handle unexpected argument '{}'.", l.where,
                                  l.args[0], l.args[n])};
}

// A non-negative integer argument: HAProxy's message for a missing one, sluice's for a word.
int count_arg(const Line& l, long long lo, long long hi) {
  const std::string v = arg(l, 1);
  if (v.empty()) throw ConfigError{fmt::format("{}'{}' expects an integer argument.", l.where, l.args[0])};
  auto n = parse_strict_int(v, LLONG_MIN, LLONG_MAX);
  if (!n)
    throw ConfigError{fmt::format("{}'{}' expects an integer argument, got '{}'.", l.where, l.args[0], v)};
  if (*n < lo || *n > hi)
    throw ConfigError{fmt::format("{}'{}' expects a value between {} and {}, got '{}'.", l.where,
                                  l.args[0], lo, hi, v)};
  no_more(l, 2);
  return static_cast<int>(*n);
}

}  // namespace

// on|full share idle server connections between threads in HAProxy. sluice's idle pool is one
// per worker thread and never lends a connection to another thread, which is `off`: the
// values are checked and change nothing.
void kw_idle_pool_shared(Parser&, Line& l) {
  const std::string v = arg(l, 1);
  if (v != "on" && v != "off" && v != "full")
    throw ConfigError{fmt::format("{}'{}' expects 'full', 'on' or 'off' but got '{}'.", l.where,
                                  l.args[0], v)};
  no_more(l, 2);
}

// `nosplice`, `maxpipes <n>`, `tune.pipesize <n>`: HAProxy's kernel splicing (data moved from
// socket to socket through a pipe) and its pipes. sluice never splices: what it forwards goes
// through its own buffers, so there is no splicing to turn off and no pipe to count or size.
// The arguments are checked, as HAProxy checks them.
void kw_splice_tunables(Parser&, Line& l) {
  if (l.args[0] == "nosplice") {
    no_more(l, 1);
    return;
  }
  (void)count_arg(l, 0, INT_MAX);
}

// tune.rcvbuf.client|server, tune.sndbuf.client|server <bytes>: the kernel's socket buffer
// sizes, set on the listening sockets (accepted ones inherit them) and on each server
// connection's socket before connect().
void kw_socket_buffers(Parser& p, Line& l) {
  const int n = count_arg(l, 0, INT_MAX / 2);
  const std::string& k = l.args[0];
  (k == "tune.rcvbuf.client"   ? p.global.tune_rcvbuf_client
   : k == "tune.sndbuf.client" ? p.global.tune_sndbuf_client
   : k == "tune.rcvbuf.server" ? p.global.tune_rcvbuf_server
                               : p.global.tune_sndbuf_server) = n;
}

// tune.pattern.cache-size <n>: the size of HAProxy's cache of pattern match results. sluice
// keeps no such cache (its lookups are trees and hashes whose cost does not depend on the
// input's history): the number is checked and changes nothing.
void kw_pattern_cache_size(Parser&, Line& l) { (void)count_arg(l, 0, INT_MAX); }

// tune.chksize: gone from HAProxy, which says so (3.5's text).
void kw_chksize(Parser&, Line& l) {
  throw ConfigError{fmt::format("{}option '{}' is not supported any more (tune.bufsize is used "
                                "instead).", l.where, l.args[0])};
}

void kw_maxrewrite(Parser& p, Line& l) {
  const std::string v = arg(l, 1);
  if (v.empty()) throw ConfigError{fmt::format("{}'{}' expects an integer argument.", l.where, l.args[0])};
  auto n = parse_strict_int(v, LLONG_MIN, INT_MAX);
  if (n && *n < 0)
    throw ConfigError{fmt::format("{}'{}' expects a positive integer argument.", l.where, l.args[0])};
  if (!n)
    throw ConfigError{fmt::format("{}'{}' expects an integer argument, got '{}'.", l.where, l.args[0], v)};
  no_more(l, 2);
  p.global.tune_maxrewrite = static_cast<int>(*n);
}

// tune.h1.fe|be.glitches-threshold <n>: see H1Connection::glitch_limit() and
// H1Connection::parse_response(). 0: no limit.
void kw_h1_glitches(Parser& p, Line& l) {
  auto n = parse_strict_int(arg(l, 1), 0, INT_MAX);
  if (!n)
    throw ConfigError{fmt::format("{}'{}' expects a positive numeric value.", l.where, l.args[0])};
  no_more(l, 2);
  (l.args[0] == "tune.h1.fe.glitches-threshold" ? p.global.h1_fe_glitches_threshold
                                                 : p.global.h1_be_glitches_threshold) =
      static_cast<uint32_t>(*n);
}

void kw_http_maxhdr(Parser& p, Line& l) {
  auto n = parse_strict_int(arg(l, 1), 1, 32767);
  if (!n)
    throw ConfigError{fmt::format("{}'{}' expects a numeric value between 1 and 32767", l.where, l.args[0])};
  no_more(l, 2);
  p.global.tune_http_maxhdr = static_cast<int>(*n);
}

void kw_http_cookielen(Parser& p, Line& l) {
  p.global.tune_http_cookielen = count_arg(l, 0, INT_MAX);
}

void kw_http_logurilen(Parser& p, Line& l) {
  p.global.tune_http_logurilen = count_arg(l, 0, INT_MAX);
}

// HAProxy's zero-copy forwarding hands a buffer from one mux to the other (or a pipe, with
// splicing). sluice already forwards a body as the buffer it was read into and has no pipes:
// the switch is checked and changes nothing.
void kw_h1_zero_copy(Parser&, Line& l) {
  const std::string v = arg(l, 1);
  if (v != "on" && v != "off")
    throw ConfigError{fmt::format("{}'{}' expects 'on' or 'off'.", l.where, l.args[0])};
  no_more(l, 2);
}

// Lets what the serving process executes gain privileges (app/main.cc's PR_SET_NO_NEW_PRIVS).
void kw_insecure_setuid_wanted(Parser& p, Line& l) {
  no_more(l, 1);
  p.global.insecure_setuid_wanted = true;
}

// HAProxy forbids fork() unless this is set (external checks, Lua's popen). sluice never forks
// after start-up and installs no such restriction: accepted, it changes nothing.
void kw_insecure_fork_wanted(Parser& p, Line& l) {
  no_more(l, 1);
  p.global.insecure_fork_wanted = true;
}

// `h1-accept-payload-with-any-method`: HTTP/1.0 GET, HEAD and DELETE requests may carry a body
// (refused with a 413 otherwise). `h1-do-not-close-on-insecure-transfer-encoding`: a server
// connection stays reusable after a response with Transfer-Encoding and Content-Length (or
// Transfer-Encoding in HTTP/1.0).
void kw_h1_flag(Parser& p, Line& l) {
  no_more(l, 1);
  if (l.args[0] == "h1-accept-payload-with-any-method") p.global.h1_accept_payload_with_any_method = true;
  else p.global.h1_keep_insecure_transfer_encoding = true;
}

// `external-check [preserve-env]` (global): external checks may run.
void kw_external_check_global(Parser& p, Line& l) {
  if (l.args.size() > 1 && l.args[1] != "preserve-env")
    throw ConfigError{fmt::format("{}'external-check' only supports 'preserve-env' as an argument, "
                                  "found '{}'.", l.where, l.args[1])};
  no_more(l, 2);
  p.global.external_check = true;
  p.global.external_check_preserve_env = l.args.size() > 1;
}

// Run in pass 1 (like setenv), so that $HAPROXY_LOCALPEER holds it for every line of pass 2.
void kw_localpeer(Parser& p, Line& l) {
  if (p.cur_pass != 1) return;
  if (arg(l, 1).empty())
    throw ConfigError{fmt::format("{}'{}' expects a name as an argument.", l.where, l.args[0])};
  no_more(l, 2);
  // QUIRK kept from HAProxy 3.5: a second `localpeer` gets the -L message too.
  if (p.localpeer_locked)
    throw ConfigError{fmt::format("{}'{}' ignored since it is already set by using the '-L' "
                                  "command line argument.", l.where, l.args[0])};
  p.global.localpeer = l.args[1];
  p.localpeer_locked = true;
  p.env.set("HAPROXY_LOCALPEER", p.global.localpeer, true);
}

// HAProxy 3.1+: the steps of a stream that produce a log line (accept, request, connect,
// response, close: proxy::LogStep, bits 0 to 4 here). The rule steps (http-req...) select
// log-profile formats and do-log actions; sluice has neither, so they add no line, as in
// HAProxy without them.
void kw_log_steps(Parser& p, Line& l) {
  static constexpr std::string_view kSteps[] = {
      "accept", "request", "connect", "response", "close", "http-req", "http-res",
      "http-after-res", "tcp-req-conn", "tcp-req-sess", "tcp-req-cont", "tcp-res-cont"};
  ProxyState& ps = p.cur_proxy();
  if (!ps.is_defaults && !(ps.cfg.caps & ProxyConfig::kFrontend)) {
    p.warning(fmt::format("{}log-steps will be ignored because {} '{}' has no frontend capability",
                          l.where, Parser::type_word(ps.cfg), ps.cfg.name));
    return;
  }
  // HAProxy reads the first argument only and ignores the others ("accept, close" passes).
  if (l.args.size() > 2)
    p.warning(fmt::format("{}'log-steps' : '{}' and what follows are ignored, as HAProxy does; "
                          "write the steps as one comma-separated word.", l.where, l.args[2]));
  const std::string v = arg(l, 1);
  if (v.empty()) return;   // HAProxy: no step, nothing changes
  unsigned bits = 0;
  if (v == "all") {
    bits = (1u << std::size(kSteps)) - 1;
  } else {
    std::string_view rest = v;
    while (true) {
      const std::size_t comma = rest.find(',');
      const std::string_view name = rest.substr(0, comma);
      std::size_t i = 0;
      while (i < std::size(kSteps) && kSteps[i] != name) ++i;
      if (i == std::size(kSteps)) {
        std::string all;
        for (auto s : kSteps) all += (all.empty() ? "" : ", ") + std::string(s);
        throw ConfigError{fmt::format("{}invalid log step name ({}). Expected values are: {}",
                                      l.where, name, all)};
      }
      bits |= 1u << i;
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  ps.cfg.log_steps = bits;
}

}  // namespace sluice::config

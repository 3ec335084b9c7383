#include "app/cmdline.h"

#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace sluice::app {

namespace {

bool parse_int(const char* s, int* out) {
  if (!s || !*s) return false;
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (*end || v < 0 || v > 1000000000) return false;
  *out = static_cast<int>(v);
  return true;
}

}  // namespace

std::string usage_text(const char* argv0) {
  return fmt::format(
      "Usage : {} -f <cfgfile|cfgdir>* [ -vdVD ] [ -n <maxconn> ] [ -p <pidfile> ]\n"
      "        [ -sf <pid>* ] [ -st <pid>* ] [ -x <unix_socket> ] [ -C <dir> ] [ -c ] [ -cc <condition> ]\n"
      "        -v displays version ; -vv shows known build options.\n"
      "        -d enters debug mode (foreground, connection traces on stderr) ; -dD config diagnostics\n"
      "        -D goes daemon ; -db stays in the foreground ; -p writes the daemon's pid into <pidfile>\n"
      "        -vq prints the version alone ; -vqs (or -vqb) its branch\n"
      "        -C changes to directory <dir> before loading files.\n"
      "        -L set local peer name (default to hostname)\n"
      "        -c check mode : only check config files and exit\n"
      "        -cc check condition : evaluate a condition and exit (0 true, 1 false, 2 error)\n"
      "        -n sets the maximum total # of connections (uses ulimit -n)\n"
      "        -N sets the default, per-proxy maximum # of connections (a frontend's maxconn)\n"
      "        -q quiet mode : don't display messages\n"
      "        -V enter verbose mode (disables quiet mode)\n"
      "        -dW fails if any warning is emitted ; -dR disables SO_REUSEPORT\n"
      "        --explain prints the thread groups, CPUs and listener shards (with -c: then exits)\n"
      "        -sf/-st [pid ]* finishes/terminates old pids once listening (reload)\n"
      "        -x <unix_socket> takes the listening sockets of the old process on that stats socket\n"
      "        -W master-worker mode (SIGUSR2 reloads) ; -Ws the same with systemd notifications\n"
      "        -S <bind>[,<opts>] the master CLI (show proc, reload, @<n> <command>)\n",
      argv0);
}

std::string parse_command_line(int argc, char** argv, CommandLine* out, bool* show_usage) {
  *show_usage = false;
  for (int i = 0; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--") {
      for (; i < argc; ++i) out->reexec_argv.emplace_back(argv[i]);
      break;
    }
    if (i > 0 && (a == "-sf" || a == "-st")) {
      while (i + 1 < argc && argv[i + 1][0] != '-') ++i;
      continue;
    }
    if (i > 0 && a == "-x") {
      ++i;
      continue;
    }
    out->reexec_argv.emplace_back(a);
  }
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto need_value = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) return nullptr;
      (void)flag;
      return argv[++i];
    };
    if (a == "--") {
      for (++i; i < argc; ++i) out->config_paths.emplace_back(argv[i]);
      break;
    }
    if (a.empty() || a[0] != '-') {
      *show_usage = true;
      return fmt::format("unexpected argument '{}'", a);
    }
    if (a == "-f") {
      const char* v = need_value("-f");
      if (!v) return "'-f' expects a file or directory argument";
      out->config_paths.emplace_back(v);
    } else if (a == "-c") {
      out->check = true;
    } else if (a == "-cc") {
      const char* v = need_value("-cc");
      if (!v) return "'-cc' expects a condition argument";
      out->condition = v;
      out->has_condition = true;
    } else if (a == "-V") {
      out->verbose = true;
    } else if (a == "-q") {
      out->quiet = true;
    } else if (a == "-d") {
      out->debug = true;
    } else if (a == "-D") {
      out->daemon = true;
    } else if (a == "-v") {
      out->version = std::max(out->version, 1);
    } else if (a == "-vv") {
      out->version = 2;
    } else if (a == "-vq" || a == "-vqs" || a == "-vqb") {
      out->version_quiet = a == "-vq" ? 1 : 2;
    } else if (a == "-db") {
      out->no_background = true;
    } else if (a == "-p") {
      const char* v = need_value("-p");
      if (!v) return "'-p' expects a pidfile argument";
      out->pidfile = v;
    } else if (a == "-C") {
      const char* v = need_value("-C");
      if (!v) return "'-C' expects a directory argument";
      out->chdir = v;
    } else if (a == "-n") {
      const char* v = need_value("-n");
      if (!v || !parse_int(v, &out->maxconn) || out->maxconn == 0)
        return "'-n' expects a positive integer (global maxconn)";
    } else if (a == "-sf" || a == "-st") {
      auto& pids = a == "-sf" ? out->soft_stop_pids : out->hard_stop_pids;
      while (i + 1 < argc && argv[i + 1][0] != '-') {
        int pid = 0;
        if (!parse_int(argv[i + 1], &pid) || pid <= 0)
          return fmt::format("'{}' expects process ids, got '{}'", a, argv[i + 1]);
        pids.push_back(pid);
        ++i;
      }
    } else if (a == "--explain") {
      out->explain = true;
    } else if (a == "-dD") {
      out->diag = true;
    } else if (a == "-dW") {
      out->zero_warning = true;
    } else if (a == "-dR") {
      out->no_reuseport = true;
    } else if (a.rfind("-dM", 0) == 0 || a == "-dS" || a == "-dF" || a == "-dZ" || a == "-dI" ||
               a == "-dr" || a == "-dV" || a == "-dG" || a == "-dc" || a == "-dL") {
      // Debug switches of HAProxy that change nothing sluice does (memory poisoning, splicing,
      // fast-forward, zero-copy, fork permission, resolver and SSL-verify relaxations, getaddrinfo).
      out->notes.push_back(fmt::format("'{}' accepted; it has no effect in sluice", a));
    } else if (a == "-de" || a == "-dp" || a == "-dk" || a == "-dv") {
      return fmt::format("'{}' would disable a poller, but epoll is sluice's only poller", a);
    } else if (a == "-W" || a == "-Ws") {
      out->master_worker = true;
      out->systemd = out->systemd || a == "-Ws";
    } else if (a == "-S") {
      const char* v = need_value("-S");
      if (!v || !*v) return "'-S' expects a master CLI address: <bind>[,<option>,<value>]*";
      out->master_cli.emplace_back(v);
    } else if (a == "-x") {
      const char* v = need_value("-x");
      if (!v || !*v) return "'-x' expects the path of the old process's stats socket";
      out->takeover_socket = v;
    } else if (a == "-L") {
      // HAProxy's local peer name: $HAPROXY_LOCALPEER for the configuration, and what a
      // `localpeer` line may no longer change.
      const char* v = need_value("-L");
      if (!v || !*v) return "'-L' expects a local peer name";
      out->localpeer = v;
    } else if (a == "-N") {
      const char* v = need_value("-N");
      if (!v || !parse_int(v, &out->maxpconn) || out->maxpconn == 0)
        return "'-N' expects a positive integer (the default maxconn of each proxy)";
    } else if (a == "-4") {
      // HAProxy: resolvers sections consider IPv4 answers only. sluice refuses resolvers
      // sections, and the libc lookups of server names at start-up are not resolvers'.
      out->notes.push_back("'-4' accepted; it has no effect in sluice, which has no resolvers sections");
    } else if (a == "-m") {
      return "'-m' is not supported by sluice: HAProxy caps its memory pools with it and refuses "
             "connections past the cap, but only sluice's buffers survive a refused allocation, so "
             "a process-wide limit would make it fail instead";
    } else if (a == "-h" || a == "--help") {
      *show_usage = true;
      return "";
    } else {
      *show_usage = true;
      return fmt::format("unknown option '{}'", a);
    }
  }
  return "";
}

}  // namespace sluice::app

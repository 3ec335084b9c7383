#include "app/master_cli.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "app/messages.h"
#include "cli/cli.h"
#include "base/clock.h"
#include "base/version.h"
#include "net/address.h"
#include "net/fd_passing.h"
#include "net/socket.h"

extern char** environ;

namespace sluice::app {

namespace {

// A master CLI connection idle this long is closed (an operator's interactive session too).
constexpr uint64_t kMasterCliIdleMs = 60 * 1000;
// Master CLI connections at once (HAProxy's master CLI takes 10); more wait in the backlog.
constexpr std::size_t kMaxClients = 32;
// Output held for a slow client before the master stops reading its forwarded command.
constexpr std::size_t kMasterOutputBound = 64 * 1024;

struct HelpEntry {
  const char* usage;
  const char* help;
  bool admin;
};

constexpr HelpEntry kHelp[] = {
    {"@!<pid>", "send a command to the <pid> process", false},
    {"@<relative pid>", "send a command to the <relative pid> process", false},
    {"@@<relative pid>|@@!<pid>", "send a command, or the rest of the session, to that process", false},
    {"@master", "send a command to the master process", false},
    {"echo <text>", "print text to the output", false},
    {"hard-reload", "achieve a hard-reload (-st) of sluice", true},
    {"operator", "lower the level of the current CLI session to operator", false},
    {"reload", "achieve a soft-reload (-sf) of sluice", true},
    {"show cli level", "display the level of the current CLI session", false},
    {"show cli sockets", "dump list of cli sockets", false},
    {"show env [var]", "dump environment variables known to the process", false},
    {"show proc", "show processes status", false},
    {"show startup-logs", "report logs emitted during sluice startup", false},
    {"show version", "show version of the current process", false},
    {"user", "lower the level of the current CLI session to user", false},
};

std::vector<std::string> split_words(std::string_view s) {
  std::vector<std::string> w;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    std::size_t b = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > b) w.emplace_back(s.substr(b, i - b));
  }
  return w;
}

// The commands of one line: split on ';' (a "\;" stays in its command).
std::vector<std::string> split_commands(std::string_view line) {
  std::vector<std::string> cmds(1);
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == ';') {
      cmds.back() += ';';
      ++i;
    } else if (line[i] == ';') {
      cmds.emplace_back();
    } else {
      cmds.back() += line[i];
    }
  }
  return cmds;
}

}  // namespace

struct MasterCli::Client {
  int fd = -1;
  config::CliLevel level = config::CliLevel::kAdmin;
  std::string in, out;
  std::size_t out_off = 0;
  bool interactive = false;
  bool prompt = false;
  std::string target;                  // `@1` alone, interactive: where commands go
  int target_pid = 0;                  // its pid, shown by the prompt
  std::vector<std::string> queue;      // commands of the current line not run yet
  bool in_line = false;                // a line is being run (queue, or a forwarded command)
  int upstream = -1;                   // a forwarded command's connection to a worker
  bool tunnel = false;                 // `@@1`: the client talks to the worker's CLI itself
  std::string tunnel_prefix;           // "operator; " before its first bytes
  bool closing = false;                // close once `out` is sent
  bool peer_done = false;
  bool gone = false;                   // handed to the master (reload) or closed
  uint64_t idle_deadline = 0;
  std::size_t unsent() const { return out.size() - out_off; }
};

base::Result<MasterCliBind> bind_master_cli(const std::string& spec) {
  std::vector<std::string> parts;
  std::size_t b = 0;
  for (;;) {
    std::size_t c = spec.find(',', b);
    parts.push_back(spec.substr(b, c == std::string::npos ? std::string::npos : c - b));
    if (c == std::string::npos) break;
    b = c + 1;
  }
  auto addrs = net::parse_bind_address(parts[0]);
  if (!addrs.ok())
    return base::Error::text(fmt::format("-S : {}", addrs.error().message));
  if (addrs.value().size() != 1)
    return base::Error::text(
        fmt::format("-S : '{}' must be a single address (no list, no port range).", parts[0]));
  net::ListenOptions opts;
  opts.backlog = 10;
  opts.reuseport = false;
  config::CliLevel level = config::CliLevel::kAdmin;
  for (std::size_t i = 1; i < parts.size(); i += 2) {
    const std::string& o = parts[i];
    const std::string v = i + 1 < parts.size() ? parts[i + 1] : "";
    if (o == "mode") {
      char* end = nullptr;
      long m = std::strtol(v.c_str(), &end, 8);
      if (v.empty() || *end || m < 0 || m > 07777)
        return base::Error::text(fmt::format("-S : 'mode' expects an octal value, got '{}'.", v));
      opts.unix_mode = static_cast<int>(m);
    } else if (o == "level") {
      if (v == "admin") level = config::CliLevel::kAdmin;
      else if (v == "operator") level = config::CliLevel::kOperator;
      else if (v == "user") level = config::CliLevel::kUser;
      else
        return base::Error::text(fmt::format(
            "-S : 'level' only supports 'user', 'operator', and 'admin' (got '{}').", v));
    } else {
      return base::Error::text(fmt::format(
          "-S : unknown option '{}' (sluice's master CLI takes 'mode <octal>' and 'level <level>', "
          "separated by commas: -S /run/sluice-master.sock,mode,600).", o));
    }
  }
  const net::ListenAddress& a = addrs.value()[0];
  auto fd = net::open_listener(a, opts);
  if (!fd.ok())
    return base::Error::text(fmt::format("Binding the master CLI: {} [{}]", fd.error().message, parts[0]));
  MasterCliBind r;
  r.fd = *fd;
  r.shown = a.kind == net::ListenAddress::Kind::kUnix ? "unix@" + a.addr.host_string()
            : a.kind == net::ListenAddress::Kind::kInheritedFd
                ? fmt::format("fd@{}", a.fd)
                : (a.addr.family() == AF_INET6 ? "ipv6@" : "ipv4@") + a.addr.to_string();
  // The level travels with the listener across a reload, in its shown name.
  r.shown += std::string(" ") + cli::level_name(level);
  return r;
}

MasterCli::MasterCli(MasterCliHost& host) : host_(host) {}

MasterCli::~MasterCli() {
  for (auto& c : clients_) {
    if (c->upstream >= 0) close(c->upstream);
    if (c->fd >= 0) close(c->fd);
  }
}

void MasterCli::add_listener(int fd, std::string shown, config::CliLevel level) {
  listeners_.push_back(Listener{fd, std::move(shown), level});
}

std::vector<int> MasterCli::listener_fds() const {
  std::vector<int> fds;
  for (const auto& l : listeners_) fds.push_back(l.fd);
  return fds;
}

void MasterCli::abandon() {
  for (auto& l : listeners_) close(l.fd);
  listeners_.clear();
  for (auto& c : clients_) {
    if (c->upstream >= 0) close(c->upstream);
    if (c->fd >= 0) close(c->fd);
    c->upstream = c->fd = -1;
  }
  clients_.clear();
}

void MasterCli::collect(std::vector<pollfd>* fds) const {
  // At kMaxClients, or out of descriptors for a moment, new clients wait in the backlog.
  if (clients_.size() < kMaxClients && base::monotonic_ms() >= accept_paused_until_)
    for (const auto& l : listeners_) fds->push_back(pollfd{l.fd, POLLIN, 0});
  for (const auto& c : clients_) {
    short ev = 0;
    if (!c->closing && !c->peer_done && (c->upstream < 0 || c->tunnel) && c->unsent() < kMasterOutputBound)
      ev |= POLLIN;
    if (c->unsent() > 0) ev |= POLLOUT;
    fds->push_back(pollfd{c->fd, ev, 0});
    if (c->upstream >= 0 && c->unsent() < kMasterOutputBound)
      fds->push_back(pollfd{c->upstream, POLLIN, 0});
  }
}

void MasterCli::serve(const std::vector<pollfd>& fds, uint64_t now_ms) {
  auto revents_of = [&](int fd) -> short {
    for (const auto& p : fds)
      if (p.fd == fd) return p.revents;
    return 0;
  };
  for (auto& l : listeners_)
    if (revents_of(l.fd) & POLLIN) accept_on(l, now_ms);
  for (std::size_t i = 0; i < clients_.size();) {
    Client& c = *clients_[i];
    const short ev = revents_of(c.fd);
    bool active = false;
    if (c.upstream >= 0 && (revents_of(c.upstream) & (POLLIN | POLLHUP | POLLERR))) {
      pump_upstream(c);
      active = true;
    }
    if (ev & (POLLIN | POLLHUP | POLLERR)) {
      char buf[4096];
      for (;;) {
        ssize_t n = recv(c.fd, buf, sizeof buf, 0);
        if (n > 0) {
          c.in.append(buf, static_cast<std::size_t>(n));
          if (c.in.size() > 16384 && c.in.find('\n') == std::string::npos) c.closing = true;
          continue;
        }
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
          c.peer_done = true;
        if (n < 0 && errno == EINTR) continue;
        break;
      }
      active = true;
    }
    if (c.tunnel && c.upstream >= 0) {
      // `@@1`: what the client types goes to the worker as it is.
      if (!c.in.empty() && !c.tunnel_prefix.empty()) {
        c.in.insert(0, c.tunnel_prefix);
        c.tunnel_prefix.clear();
      }
      while (!c.in.empty()) {
        ssize_t n = send(c.upstream, c.in.data(), c.in.size(), MSG_NOSIGNAL);
        if (n <= 0) break;
        c.in.erase(0, static_cast<std::size_t>(n));
      }
      if (c.peer_done && c.in.empty()) shutdown(c.upstream, SHUT_WR);
    }
    if (!advance(c) || c.gone) {
      close_client(i);
      continue;
    }
    if (ev & POLLOUT) active = true;
    flush(c);
    if (c.fd < 0 || (c.closing && c.unsent() == 0) ||
        (c.peer_done && !c.in_line && c.unsent() == 0 && c.upstream < 0)) {
      close_client(i);
      continue;
    }
    if (active) c.idle_deadline = now_ms + kMasterCliIdleMs;
    if (now_ms >= c.idle_deadline) {
      close_client(i);
      continue;
    }
    ++i;
  }
}

void MasterCli::accept_on(Listener& l, uint64_t now_ms) {
  for (int k = 0; k < 16 && clients_.size() < kMaxClients; ++k) {
    int fd = accept4(l.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
        accept_paused_until_ = now_ms + 100;
      return;
    }
    auto c = std::make_unique<Client>();
    c->fd = fd;
    c->level = l.level;
    c->idle_deadline = now_ms + kMasterCliIdleMs;
    clients_.push_back(std::move(c));
  }
}

void MasterCli::close_client(std::size_t i) {
  Client& c = *clients_[i];
  if (c.upstream >= 0) close(c.upstream);
  if (c.fd >= 0 && !c.gone) close(c.fd);
  clients_.erase(clients_.begin() + static_cast<std::ptrdiff_t>(i));
}

void MasterCli::flush(Client& c) {
  while (c.unsent() > 0) {
    ssize_t n = send(c.fd, c.out.data() + c.out_off, c.unsent(), MSG_NOSIGNAL);
    if (n > 0) {
      c.out_off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    // The client went away: nothing more can reach it.
    c.out.clear();
    c.out_off = 0;
    c.closing = true;
    return;
  }
  if (c.out_off == c.out.size()) {
    c.out.clear();
    c.out_off = 0;
  }
}

void MasterCli::pump_upstream(Client& c) {
  char buf[16384];
  while (c.unsent() < kMasterOutputBound) {
    ssize_t n = recv(c.upstream, buf, sizeof buf, 0);
    if (n > 0) {
      c.out.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    // The worker answered (it closes after one line) or went away.
    close(c.upstream);
    c.upstream = -1;
    if (c.tunnel) {
      c.tunnel = false;
      c.in.clear();
    }
    return;
  }
}

bool MasterCli::advance(Client& c) {
  for (;;) {
    if (c.upstream >= 0 || c.gone || c.closing) return true;
    if (!c.queue.empty()) {
      std::string cmd = std::move(c.queue.front());
      c.queue.erase(c.queue.begin());
      auto words = split_words(cmd);
      if (!words.empty() || c.queue.empty()) run_command(c, std::move(words), cmd);
      continue;
    }
    if (c.in_line) {
      // The line is over.
      c.in_line = false;
      if (!c.interactive) {
        c.closing = true;
        return true;
      }
      if (c.prompt) c.out += c.target.empty() ? std::string("master> ") : fmt::format("{}> ", c.target_pid);
    }
    std::size_t nl = c.in.find('\n');
    if (nl == std::string::npos) return true;
    std::string line = c.in.substr(0, nl);
    c.in.erase(0, nl + 1);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!run_line(c, line)) return false;
  }
}

bool MasterCli::run_line(Client& c, std::string_view line) {
  c.in_line = true;
  c.queue = split_commands(line);
  return true;
}

bool MasterCli::forward(Client& c, std::string_view target, std::string_view command, bool tunnel) {
  int pid = 0;
  const int channel = host_.worker_channel(target, &pid);
  if (channel < 0) {
    c.out += fmt::format("Can't find the target PID matching the prefix '@{}'\n", target);
    return false;
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) {
    c.out += fmt::format("Cannot reach the worker {}: {}\n", pid, std::strerror(errno));
    return false;
  }
  // Never waits: a worker that does not take its channel's messages gets no more.
  const bool sent = net::send_mark(channel, 'C', sv[1], 0);
  close(sv[1]);
  if (!sent) {
    close(sv[0]);
    c.out += fmt::format("Cannot reach the worker {}: its channel is closed or full\n", pid);
    return false;
  }
  // The worker's CLI starts at level admin; this session's own level goes first.
  std::string text;
  if (c.level == config::CliLevel::kOperator) text = "operator; ";
  else if (c.level == config::CliLevel::kUser) text = "user; ";
  if (tunnel) {
    // The session's own level goes before the first line the client sends.
    c.tunnel_prefix = std::move(text);
    text.clear();
  } else {
    text += command;
    text += '\n';
  }
  // A fresh socket pair's buffer takes a command line whole.
  if (!text.empty() &&
      send(sv[0], text.data(), text.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(text.size())) {
    close(sv[0]);
    c.out += fmt::format("Cannot send the command to the worker {}\n", pid);
    return false;
  }
  c.upstream = sv[0];
  c.tunnel = tunnel;
  return true;
}

void MasterCli::run_command(Client& c, std::vector<std::string> words, std::string_view raw) {
  auto answer = [&c](std::string_view text) {
    c.out += text;
    if (!text.empty() && text.back() != '\n') c.out += '\n';
    c.out += '\n';
  };
  std::string target = c.target;
  if (!words.empty() && words[0].size() > 2 && words[0].starts_with("@@")) {
    // `@@<n> [<command>]`: the command, or (alone) the rest of the session, to the worker.
    target = words[0].substr(2);
    if (words.size() == 1) {
      if (!forward(c, target, "", /*tunnel=*/true)) c.out += '\n';
      return;
    }
    words[0] = "@" + target;
  }
  if (!words.empty() && words[0].size() > 1 && words[0][0] == '@') {
    target = words[0].substr(1);
    if (target == "master") target.clear();
    words.erase(words.begin());
    if (words.empty()) {
      // `@1` alone: where the next commands go (interactive), or nothing.
      if (c.interactive) {
        int pid = 0;
        if (!target.empty() && host_.worker_channel(target, &pid) < 0) {
          answer(fmt::format("Can't find the target PID matching the prefix '@{}'", target));
        } else {
          c.target = target;
          c.target_pid = pid;
        }
      }
      return;
    }
  }
  if (!target.empty()) {
    // What follows the prefix goes as it was typed.
    std::string_view rest = raw;
    std::size_t start = rest.find_first_not_of(" \t");
    rest = start == std::string_view::npos ? std::string_view() : rest.substr(start);
    if (!rest.empty() && rest[0] == '@') {
      std::size_t sp = rest.find_first_of(" \t");
      rest = sp == std::string_view::npos ? std::string_view() : rest.substr(sp + 1);
    }
    if (!forward(c, target, rest)) c.out += '\n';
    return;
  }
  if (words.empty()) return;
  const bool admin = c.level == config::CliLevel::kAdmin;
  const std::string& w0 = words[0];
  auto is = [&](std::initializer_list<const char*> ws) {
    if (words.size() < ws.size()) return false;
    std::size_t i = 0;
    for (const char* w : ws)
      if (words[i++] != w) return false;
    return true;
  };
  if (w0 == "help") {
    answer(help_text(c.level, words.size() > 1 ? std::string_view(words[1]) : ""));
  } else if (w0 == "quit") {
    c.queue.clear();
    c.closing = true;
  } else if (w0 == "prompt") {
    std::string arg = words.size() > 1 ? words[1] : "";
    if (arg.empty()) {
      c.interactive = !c.interactive;
      c.prompt = c.interactive;
    } else if (arg == "n") {
      c.interactive = c.prompt = false;
    } else if (arg == "i") {
      c.interactive = true;
      c.prompt = false;
    } else if (arg == "p") {
      c.interactive = c.prompt = true;
    } else {
      answer("Usage: prompt [n | i | p]: non-interactive, interactive, interactive with a prompt.");
    }
  } else if (is({"show", "proc"}) && words.size() == 2) {
    c.out += host_.show_proc();
  } else if ((w0 == "reload" || w0 == "hard-reload") && words.size() == 1) {
    if (!admin) {
      answer("Permission denied");
      return;
    }
    // The answer comes from the master once the new worker serves, or the load failed.
    c.gone = true;
    flush(c);
    host_.reload(c.fd, w0 == "hard-reload");
    c.fd = -1;
  } else if (w0 == "echo") {
    std::string_view r = raw;
    std::size_t p = r.find("echo");
    r = r.substr(p + 4);
    std::size_t s = r.find_first_not_of(" \t");
    answer(s == std::string_view::npos ? std::string_view() : r.substr(s));
  } else if (is({"show", "version"})) {
    answer(base::kVersion);
  } else if (is({"show", "cli", "level"})) {
    answer(cli::level_name(c.level));
  } else if (is({"show", "cli", "sockets"})) {
    std::string s = "# socket lvl processes\n";
    for (const auto& l : listeners_) {
      std::string shown = l.shown.substr(0, l.shown.rfind(' '));
      s += fmt::format("{} {} master\n", shown, cli::level_name(l.level));
    }
    answer(s);
  } else if (w0 == "operator" && words.size() == 1) {
    if (c.level == config::CliLevel::kAdmin) c.level = config::CliLevel::kOperator;
  } else if (w0 == "user" && words.size() == 1) {
    c.level = config::CliLevel::kUser;
  } else if (is({"show", "env"})) {
    if (!admin) {
      answer("Permission denied");
      return;
    }
    std::string s;
    for (char** e = environ; e && *e; ++e) {
      std::string_view kv = *e;
      if (words.size() > 2 && kv.substr(0, kv.find('=')) != words[2]) continue;
      s += kv;
      s += '\n';
    }
    if (words.size() > 2 && s.empty()) s = fmt::format("Variable not found: '{}'", words[2]);
    answer(s);
  } else if (is({"show", "startup-logs"})) {
    c.out += captured_messages();
    c.out += '\n';
  } else {
    answer(fmt::format("Unknown command: '{}', but maybe one of the following ones is a better "
                       "match:\n{}",
                       raw.substr(raw.find_first_not_of(" \t")), help_text(c.level, "").substr(48)));
  }
}

std::string MasterCli::help_text(config::CliLevel level, std::string_view filter) const {
  std::string s = "The following commands are valid at this level:\n";
  auto line = [&](std::string_view usage, std::string_view help) {
    if (!filter.empty() && usage.find(filter) == std::string_view::npos) return;
    s += fmt::format("  {:<40}: {}\n", usage, help);
  };
  for (const auto& h : kHelp)
    if (!h.admin || level == config::CliLevel::kAdmin) line(h.usage, h.help);
  line("help [<command>]", "list matching or all commands");
  line("prompt [n | i | p]", "toggle interactive mode with prompt");
  line("quit", "disconnect");
  return s;
}

}  // namespace sluice::app

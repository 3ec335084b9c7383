// sluice-loadgen: raw TCP load for the benchmarks (see docs/performance.md).
//
//   sluice-loadgen connrate --target 127.0.0.1:8000 [--conc 32] [--threads 1]
//                           (--duration 10 | --count 2000) [--request STR] [--timeout-ms 5000]
//       Each slot loops: connect, send the request, read until the peer closes, close. Prints one
//       JSON line: completed connections, errors, rate and latency percentiles (connect to EOF).
//   sluice-loadgen hold --target 127.0.0.1:8000 --conns 9000 [--hello STR] [--hold-seconds 0]
//       Opens the connections (at most 256 connecting at once), sends the hello on each, prints
//       "ready <established> <failed>" and holds them until SIGTERM/SIGINT (or the hold time).
//   sluice-loadgen sink --listen 127.0.0.1:9000 [--status-file F]
//       Accepts and holds connections, reads and discards; writes "<accepted> <open>" to the
//       status file whenever it changes (at most every 50 ms). Stops on SIGTERM/SIGINT.
//
// std + libc only; single epoll loop per thread; level-triggered.
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop.store(true); }

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "sluice-loadgen: %s: %s\n", what, std::strerror(errno));
  std::exit(2);
}

sockaddr_in parse_addr(const std::string& s) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  auto colon = s.rfind(':');
  if (colon == std::string::npos) {
    std::fprintf(stderr, "sluice-loadgen: bad address '%s' (want host:port)\n", s.c_str());
    std::exit(2);
  }
  std::string host = s.substr(0, colon);
  a.sin_port = htons(static_cast<uint16_t>(std::atoi(s.c_str() + colon + 1)));
  if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) {
    std::fprintf(stderr, "sluice-loadgen: bad IPv4 host '%s'\n", host.c_str());
    std::exit(2);
  }
  return a;
}

std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      char c = s[++i];
      out += c == 'r' ? '\r' : c == 'n' ? '\n' : c == 't' ? '\t' : c;
    } else {
      out += s[i];
    }
  }
  return out;
}

void raise_nofile() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

struct Opts {
  std::string mode;
  std::string target = "127.0.0.1:8000";
  std::string listen = "127.0.0.1:9000";
  std::string request = "GET / HTTP/1.0\r\nHost: bench\r\n\r\n";
  std::string hello = "hello sluice\r\n";
  std::string status_file;
  int conc = 32;
  int threads = 1;
  double duration = 0;
  long count = 0;
  long conns = 1000;
  double hold_seconds = 0;
  int timeout_ms = 5000;
};

// ---------------------------------------------------------------- connrate

struct Slot {
  int fd = -1;
  bool connected = false;
  bool got_bytes = false;
  Clock::time_point start;
};

struct ThreadResult {
  long done = 0;
  long errors = 0;
  std::vector<uint32_t> lat_us;
};

void connrate_thread(const Opts& o, const sockaddr_in& dst, int slots, std::atomic<long>* budget,
                     Clock::time_point deadline, ThreadResult* res) {
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) die("epoll_create1");
  std::vector<Slot> s(static_cast<size_t>(slots));
  res->lat_us.reserve(1 << 16);
  char buf[16384];
  const bool counted = o.count > 0;

  auto take_budget = [&]() -> bool {
    if (g_stop.load(std::memory_order_relaxed)) return false;
    if (counted) return budget->fetch_sub(1) > 0;
    return Clock::now() < deadline;
  };
  int active = 0;
  auto start_conn = [&](size_t i) {
    for (;;) {
      if (!take_budget()) return;
      Slot& sl = s[i];
      sl = Slot{};
      sl.start = Clock::now();
      int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0) { res->errors++; continue; }
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      int r = connect(fd, reinterpret_cast<const sockaddr*>(&dst), sizeof dst);
      if (r < 0 && errno != EINPROGRESS) { close(fd); res->errors++; continue; }
      sl.fd = fd;
      epoll_event ev{};
      ev.events = EPOLLOUT;
      ev.data.u64 = i;
      epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
      active++;
      return;
    }
  };
  auto finish = [&](size_t i, bool ok) {
    Slot& sl = s[i];
    close(sl.fd);  // also removes it from the epoll set
    sl.fd = -1;
    active--;
    if (ok) {
      res->done++;
      auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - sl.start).count();
      res->lat_us.push_back(static_cast<uint32_t>(std::min<long>(us, UINT32_MAX)));
    } else {
      res->errors++;
    }
    start_conn(i);
  };

  for (size_t i = 0; i < s.size(); ++i) start_conn(i);
  epoll_event evs[256];
  auto last_sweep = Clock::now();
  while (active > 0) {
    int n = epoll_wait(ep, evs, 256, 50);
    for (int k = 0; k < n; ++k) {
      size_t i = evs[k].data.u64;
      Slot& sl = s[i];
      if (sl.fd < 0) continue;
      if (!sl.connected) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(sl.fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) { finish(i, false); continue; }
        sl.connected = true;
        ssize_t w = send(sl.fd, o.request.data(), o.request.size(), MSG_NOSIGNAL);
        if (w != static_cast<ssize_t>(o.request.size())) { finish(i, false); continue; }
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = i;
        epoll_ctl(ep, EPOLL_CTL_MOD, sl.fd, &ev);
        continue;
      }
      for (;;) {
        ssize_t r = recv(sl.fd, buf, sizeof buf, 0);
        if (r > 0) { sl.got_bytes = true; continue; }
        if (r == 0) { finish(i, sl.got_bytes); break; }
        if (errno == EAGAIN || errno == EINTR) break;
        finish(i, false);
        break;
      }
    }
    auto now = Clock::now();
    if (now - last_sweep > std::chrono::milliseconds(100)) {
      last_sweep = now;
      for (size_t i = 0; i < s.size(); ++i)
        if (s[i].fd >= 0 && now - s[i].start > std::chrono::milliseconds(o.timeout_ms)) finish(i, false);
    }
    if (g_stop.load()) break;
  }
  close(ep);
}

int run_connrate(const Opts& o) {
  sockaddr_in dst = parse_addr(o.target);
  std::atomic<long> budget{o.count};
  auto t0 = Clock::now();
  auto deadline = t0 + std::chrono::milliseconds(static_cast<long>(o.duration * 1000));
  std::vector<ThreadResult> res(static_cast<size_t>(o.threads));
  std::vector<std::thread> th;
  for (int t = 0; t < o.threads; ++t) {
    int slots = o.conc / o.threads + (t < o.conc % o.threads ? 1 : 0);
    th.emplace_back(connrate_thread, std::cref(o), dst, std::max(slots, 1), &budget, deadline, &res[t]);
  }
  for (auto& t : th) t.join();
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  long done = 0, errors = 0;
  std::vector<uint32_t> lat;
  for (auto& r : res) {
    done += r.done;
    errors += r.errors;
    lat.insert(lat.end(), r.lat_us.begin(), r.lat_us.end());
  }
  std::sort(lat.begin(), lat.end());
  auto pct = [&](double p) -> double {
    if (lat.empty()) return 0;
    size_t idx = std::min(lat.size() - 1, static_cast<size_t>(p * static_cast<double>(lat.size())));
    return lat[idx];
  };
  std::printf("{\"mode\":\"connrate\",\"conns\":%ld,\"errors\":%ld,\"seconds\":%.3f,\"rate\":%.1f,"
              "\"p50_us\":%.0f,\"p90_us\":%.0f,\"p99_us\":%.0f,\"max_us\":%.0f}\n",
              done, errors, secs, secs > 0 ? static_cast<double>(done) / secs : 0.0, pct(0.50), pct(0.90),
              pct(0.99), lat.empty() ? 0.0 : static_cast<double>(lat.back()));
  std::fflush(stdout);
  return done > 0 ? 0 : 1;
}

// ---------------------------------------------------------------- hold

int run_hold(const Opts& o) {
  sockaddr_in dst = parse_addr(o.target);
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) die("epoll_create1");
  struct C { int fd; bool up; };
  std::vector<C> cs;
  cs.reserve(static_cast<size_t>(o.conns));
  long established = 0, failed = 0, inflight = 0, next = 0, closed_by_peer = 0;
  epoll_event evs[512];
  auto t_start = Clock::now();
  while ((next < o.conns || inflight > 0) && !g_stop.load()) {
    while (next < o.conns && inflight < 256) {
      int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0) { failed++; next++; continue; }
      int r = connect(fd, reinterpret_cast<const sockaddr*>(&dst), sizeof dst);
      if (r < 0 && errno != EINPROGRESS) { close(fd); failed++; next++; continue; }
      cs.push_back({fd, false});
      epoll_event ev{};
      ev.events = EPOLLOUT;
      ev.data.u64 = cs.size() - 1;
      epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
      inflight++;
      next++;
    }
    int n = epoll_wait(ep, evs, 512, 100);
    for (int k = 0; k < n; ++k) {
      C& c = cs[evs[k].data.u64];
      if (c.fd < 0 || c.up) continue;
      inflight--;
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0 || (!o.hello.empty() &&
                       send(c.fd, o.hello.data(), o.hello.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(o.hello.size()))) {
        epoll_ctl(ep, EPOLL_CTL_DEL, c.fd, nullptr);
        close(c.fd);
        c.fd = -1;
        failed++;
        continue;
      }
      c.up = true;
      established++;
      epoll_event ev{};
      ev.events = EPOLLRDHUP;  // only to notice a peer that gives up on us
      ev.data.u64 = evs[k].data.u64;
      epoll_ctl(ep, EPOLL_CTL_MOD, c.fd, &ev);
    }
    if (Clock::now() - t_start > std::chrono::seconds(60)) break;
  }
  std::printf("ready %ld %ld\n", established, failed);
  std::fflush(stdout);
  auto until = Clock::now() + std::chrono::milliseconds(static_cast<long>(o.hold_seconds * 1000));
  while (!g_stop.load() && (o.hold_seconds <= 0 || Clock::now() < until)) {
    int n = epoll_wait(ep, evs, 512, 100);
    for (int k = 0; k < n; ++k) {
      C& c = cs[evs[k].data.u64];
      if (c.fd < 0) continue;
      epoll_ctl(ep, EPOLL_CTL_DEL, c.fd, nullptr);
      close(c.fd);
      c.fd = -1;
      closed_by_peer++;
    }
  }
  std::printf("closed_by_peer %ld\n", closed_by_peer);
  std::fflush(stdout);
  return 0;
}

// ---------------------------------------------------------------- sink

int run_sink(const Opts& o) {
  sockaddr_in addr = parse_addr(o.listen);
  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (lfd < 0) die("socket");
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0) die("bind");
  if (listen(lfd, 4096) < 0) die("listen");
  int ep = epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = lfd;
  epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
  long accepted = 0, open = 0, reported_a = -1, reported_o = -1;
  auto write_status = [&]() {
    if (o.status_file.empty() || (accepted == reported_a && open == reported_o)) return;
    std::string tmp = o.status_file + ".tmp";
    if (FILE* f = std::fopen(tmp.c_str(), "w")) {
      std::fprintf(f, "%ld %ld\n", accepted, open);
      std::fclose(f);
      std::rename(tmp.c_str(), o.status_file.c_str());
    }
    reported_a = accepted;
    reported_o = open;
  };
  std::printf("listening %s\n", o.listen.c_str());
  std::fflush(stdout);
  write_status();
  reported_a = -1;
  write_status();
  epoll_event evs[512];
  char buf[16384];
  auto last = Clock::now();
  while (!g_stop.load()) {
    int n = epoll_wait(ep, evs, 512, 50);
    for (int k = 0; k < n; ++k) {
      int fd = evs[k].data.fd;
      if (fd == lfd) {
        for (;;) {
          int c = accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
          if (c < 0) break;
          accepted++;
          open++;
          epoll_event e{};
          e.events = EPOLLIN;
          e.data.fd = c;
          epoll_ctl(ep, EPOLL_CTL_ADD, c, &e);
        }
        continue;
      }
      for (;;) {
        ssize_t r = recv(fd, buf, sizeof buf, 0);
        if (r > 0) continue;
        if (r < 0 && (errno == EAGAIN || errno == EINTR)) break;
        close(fd);
        open--;
        break;
      }
    }
    if (Clock::now() - last > std::chrono::milliseconds(50)) {
      last = Clock::now();
      write_status();
    }
  }
  write_status();
  return 0;
}

void usage() {
  std::fprintf(stderr,
               "usage: sluice-loadgen connrate --target H:P [--conc N] [--threads N] (--duration S | --count N)\n"
               "                              [--request STR] [--timeout-ms MS]\n"
               "       sluice-loadgen hold --target H:P --conns N [--hello STR] [--hold-seconds S]\n"
               "       sluice-loadgen sink --listen H:P [--status-file F]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) usage();
  Opts o;
  o.mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "--target") o.target = val();
    else if (a == "--listen") o.listen = val();
    else if (a == "--request") o.request = unescape(val());
    else if (a == "--hello") o.hello = unescape(val());
    else if (a == "--status-file") o.status_file = val();
    else if (a == "--conc") o.conc = std::atoi(val().c_str());
    else if (a == "--threads") o.threads = std::max(1, std::atoi(val().c_str()));
    else if (a == "--duration") o.duration = std::atof(val().c_str());
    else if (a == "--count") o.count = std::atol(val().c_str());
    else if (a == "--conns") o.conns = std::atol(val().c_str());
    else if (a == "--hold-seconds") o.hold_seconds = std::atof(val().c_str());
    else if (a == "--timeout-ms") o.timeout_ms = std::atoi(val().c_str());
    else usage();
  }
  raise_nofile();
  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  if (o.mode == "connrate") {
    if (o.duration <= 0 && o.count <= 0) o.duration = 10;
    if (o.count > 0) o.conc = static_cast<int>(std::min<long>(o.conc, o.count));
    o.threads = std::min(o.threads, std::max(1, o.conc));
    return run_connrate(o);
  }
  if (o.mode == "hold") return run_hold(o);
  if (o.mode == "sink") return run_sink(o);
  usage();
}

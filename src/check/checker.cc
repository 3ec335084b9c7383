#include "check/checker.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "net/socket.h"

namespace sluice::check {

namespace {
// Enough for a status line, headers and the start of a body; a response that fills it is
// judged on what arrived (like HAProxy's check buffer, one tune.bufsize).
constexpr std::size_t kMaxResponse = 16384;
}  // namespace

std::string errno_text(int err) {
  char buf[128];
  // GNU strerror_r returns the message (possibly not in buf).
  return strerror_r(err, buf, sizeof buf);
}

Checker::Checker(core::EventLoop& loop, lb::Backend& backend, lb::Server& server,
                 CheckSettings settings, CheckHooks hooks)
    : loop_(loop), be_(backend), srv_(server), s_(std::move(settings)), hooks_(std::move(hooks)),
      health_(s_.rise, s_.fall), timer_(this) {
  if (s_.timeout_ms == 0) s_.timeout_ms = s_.intervals.inter_ms;
  if (s_.type == CheckSettings::Type::kHttp) request_ = build_request(s_.request);
  // CheckState's plain fields (enabled, rise, fall) are app's, set before the workers start.
  auto& cs = srv_.check_state();
  cs.health.store(health_.health(), std::memory_order_relaxed);
  cs.status.store(lb::CheckStatus::kIni, std::memory_order_relaxed);
}

Checker::~Checker() { stop(); }

void Checker::start(uint64_t first_delay_ms) {
  loop_.timers().arm(timer_, loop_.now_ms() + first_delay_ms);
}

void Checker::stop() {
  loop_.timers().cancel(timer_);
  close_socket();
  phase_ = Phase::kIdle;
}

void Checker::close_socket() {
  if (fd_ < 0) return;
  loop_.remove(fd_);
  close(fd_);
  fd_ = -1;
}

void Checker::on_timer(core::Timer&) {
  uint64_t now = loop_.now_ms();
  if (phase_ == Phase::kIdle) {
    // Maintenance pauses the check (HAProxy), resolution maintenance too (init-addr none:
    // there is no address to check); look again after one interval.
    if (srv_.admin_state() == lb::AdminState::kMaint || srv_.settings().unresolved) {
      loop_.timers().arm(timer_, now + s_.intervals.inter_ms);
      return;
    }
    begin();
    return;
  }
  if (phase_ == Phase::kConnecting) {
    complete(lb::CheckStatus::kL4Tout, 0, "");
  } else {
    complete(lb::CheckStatus::kL7Tout, 0, "");
  }
}

net::SocketAddress Checker::target() const {
  if (s_.own_addr && s_.own_port) return s_.addr;
  // The published endpoint, as the traffic path reads it (the checker's loop holds no other
  // snapshot Guard here), so checks and connections never disagree on where the server is.
  const net::SocketAddress cur = srv_.endpoint().addr;
  net::SocketAddress a = s_.own_addr ? s_.addr : cur;
  a.set_port(s_.own_port ? s_.addr.port() : cur.port());
  return a;
}

void Checker::begin() {
  started_ms_ = loop_.now_ms();
  response_.clear();
  sent_ = 0;
  bool in_progress = false;
  auto r = net::connect_nonblocking(target(), &in_progress);
  if (!r.ok()) {
    int err = r.error().sys_errno;
    bool local = err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
    complete(local ? lb::CheckStatus::kSockErr : lb::CheckStatus::kL4Con, 0, errno_text(err));
    return;
  }
  fd_ = r.value();
  phase_ = Phase::kConnecting;
  // Level-triggered: a check has one socket and a handful of events, so edge-triggered
  // bookkeeping buys nothing here.
  if (!loop_.add(fd_, EPOLLOUT | EPOLLIN | EPOLLRDHUP, this)) {
    int err = errno;
    complete(lb::CheckStatus::kSockErr, 0, errno_text(err));
    return;
  }
  loop_.timers().arm(timer_, started_ms_ + s_.timeout_ms);
  if (!in_progress) on_connected();
}

void Checker::on_io(uint32_t events) {
  if (fd_ < 0) return;
  if (phase_ == Phase::kConnecting) {
    if (events & (EPOLLERR | EPOLLHUP | EPOLLOUT)) {
      int err = net::pending_socket_error(fd_);
      if (err != 0) {
        complete(lb::CheckStatus::kL4Con, 0, errno_text(err));
        return;
      }
      if (events & EPOLLOUT) on_connected();
      else if (events & (EPOLLERR | EPOLLHUP)) complete(lb::CheckStatus::kL4Con, 0, "Connection error");
    }
    return;
  }
  if (phase_ == Phase::kSending && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) send_more();
  if (fd_ >= 0 && phase_ == Phase::kReading && (events & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP)))
    read_more();
}

void Checker::on_connected() {
  if (s_.type == CheckSettings::Type::kTcp) {
    if (s_.send_proxy) {
      // A fresh socket takes a header of a few hundred bytes whole; the check is a layer-4
      // one and passes on the connection alone, as in HAProxy.
      const std::string h = proxy_header();
      [[maybe_unused]] ssize_t n = ::send(fd_, h.data(), h.size(), MSG_NOSIGNAL);
    }
    complete(lb::CheckStatus::kL4Ok, 0, "");
    return;
  }
  if (s_.send_proxy) request_ = proxy_header() + build_request(s_.request);
  phase_ = Phase::kSending;
  send_more();
}

std::string Checker::proxy_header() const {
  if (s_.send_proxy == 1) {
    net::SocketAddress src;
    net::local_address(fd_, &src);
    return net::pp::build_v1(src, target());
  }
  std::vector<net::pp::Tlv> tlvs;
  if (hooks_.pp2_tlvs) hooks_.pp2_tlvs(&tlvs);
  return net::pp::build_v2_local(tlvs, s_.pp2_crc32c);
}

void Checker::send_more() {
  while (sent_ < request_.size()) {
    ssize_t n = ::send(fd_, request_.data() + sent_, request_.size() - sent_, MSG_NOSIGNAL);
    if (n > 0) {
      sent_ += static_cast<std::size_t>(n);
      continue;
    }
    int err = errno;
    if (n < 0 && (err == EAGAIN || err == EINTR)) return;   // EPOLLOUT brings us back
    complete(lb::CheckStatus::kL7Rsp, 0, errno_text(err));
    return;
  }
  phase_ = Phase::kReading;
  loop_.modify(fd_, EPOLLIN | EPOLLRDHUP, this);
}

void Checker::read_more() {
  bool eof = false;
  char buf[4096];
  for (;;) {
    std::size_t room = kMaxResponse - response_.size();
    if (room == 0) {
      eof = true;   // judge what we have
      break;
    }
    ssize_t n = ::recv(fd_, buf, std::min(room, sizeof buf), 0);
    if (n > 0) {
      response_.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) {
      eof = true;
      break;
    }
    int err = errno;
    if (err == EAGAIN || err == EINTR) break;
    if (response_.empty()) {
      complete(lb::CheckStatus::kL7Rsp, 0, errno_text(err));
      return;
    }
    eof = true;
    break;
  }
  HttpVerdict v = evaluate_response(response_, eof, s_.expect);
  if (v.done) complete(v.status, v.code, std::move(v.text));
}

void Checker::complete(lb::CheckStatus status, int code, std::string text) {
  close_socket();
  phase_ = Phase::kIdle;
  uint64_t now = loop_.now_ms();
  auto& cs = srv_.check_state();
  bool ok = status == lb::CheckStatus::kL4Ok || status == lb::CheckStatus::kL7Ok;
  Health::Change change = health_.report(ok);
  if (!ok && health_.last_failure_counted()) cs.chkfail.fetch_add(1, std::memory_order_relaxed);
  cs.status.store(status, std::memory_order_relaxed);
  cs.code.store(code, std::memory_order_relaxed);
  cs.duration_ms.store(static_cast<int64_t>(now - started_ms_), std::memory_order_relaxed);
  cs.health.store(health_.health(), std::memory_order_relaxed);
  cs.set_text(std::move(text));
  // A soft-stopped server runs again after a passing check, and a DOWN one is no longer
  // stopping (HAProxy's srv_set_running / srv_set_stopped).
  if (srv_.stopping() && (ok || !health_.up())) be_.set_stopping(srv_, false, now);
  if (change != Health::Change::kNone) report_change(change, now);
  loop_.timers().arm(timer_, now + next_interval(health_, s_.intervals));
}

void Checker::force(bool up, bool stopping) {
  uint64_t now = loop_.now_ms();
  Health::Change change = health_.force(up || stopping);
  srv_.check_state().health.store(health_.health(), std::memory_order_relaxed);
  // Stopping first: a DOWN server that is forced to stopping must not take traffic between
  // the two changes.
  be_.set_stopping(srv_, stopping, now);
  if (change != Health::Change::kNone) report_change(change, now);
}

void Checker::restart() {
  uint64_t now = loop_.now_ms();
  Health::Change change = health_.restart();
  srv_.check_state().health.store(health_.health(), std::memory_order_relaxed);
  be_.set_stopping(srv_, false, now);
  if (change != Health::Change::kNone) report_change(change, now);
}

void Checker::report_change(Health::Change change, uint64_t now) {
  auto& cs = srv_.check_state();
  bool up = change == Health::Change::kUp;
  if (up) {
    uint64_t since = cs.down_since_ms.exchange(0, std::memory_order_relaxed);
    if (since && now > since) cs.downtime_ms.fetch_add(now - since, std::memory_order_relaxed);
  } else {
    cs.chkdown.fetch_add(1, std::memory_order_relaxed);
    cs.down_since_ms.store(std::max<uint64_t>(now, 1), std::memory_order_relaxed);
  }
  be_.set_check_up(srv_, up, now);
  if (hooks_.log) {
    // HAProxy: DOWN at alert, UP at notice; a backend left without servers at emerg.
    hooks_.log(up ? kLogNotice : kLogAlert, state_message(up, now));
    if (!up && be_.usable_active() + be_.usable_backup() == 0)
      hooks_.log(kLogEmerg, fmt::format("backend '{}' has no server available!", be_.name()));
  }
  if (!up && s_.shutdown_sessions && hooks_.shutdown_sessions) hooks_.shutdown_sessions(srv_);
}

std::string Checker::state_message(bool up, uint64_t now) {
  const auto& cs = srv_.check_state();
  lb::CheckStatus st = cs.status.load(std::memory_order_relaxed);
  std::string m = fmt::format("{}Server {}/{} is {}, reason: {}", srv_.settings().backup ? "Backup " : "",
                              be_.name(), srv_.name(), up ? "UP" : "DOWN", lb::check_status_desc(st));
  if (st == lb::CheckStatus::kL7Ok || st == lb::CheckStatus::kL7Sts ||
      (st == lb::CheckStatus::kL7Rsp && cs.code.load(std::memory_order_relaxed) > 0))
    m += fmt::format(", code: {}", cs.code.load(std::memory_order_relaxed));
  std::string text = cs.text();
  if (!text.empty()) m += fmt::format(", info: \"{}\"", text);
  m += fmt::format(", check duration: {}ms", cs.duration_ms.load(std::memory_order_relaxed));
  m += be_.state_tail(srv_, !up);
  (void)now;
  return m;
}

}  // namespace sluice::check

#include "check/checker.h"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "base/strings.h"
#include "net/socket.h"

namespace sluice::check {

namespace {
// Enough for a status line, headers and the start of a body; a response that fills it is
// judged on what arrived (like HAProxy's check buffer, one tune.bufsize).
constexpr std::size_t kMaxResponse = 16384;
}  // namespace

Checker::Checker(core::EventLoop& loop, lb::Backend& backend, lb::Server& server,
                 CheckSettings settings, CheckHooks hooks)
    : loop_(loop), be_(backend), srv_(server), s_(std::move(settings)), hooks_(std::move(hooks)),
      health_(s_.rise, s_.fall, s_.init_state), timer_(this),
      rng_(reinterpret_cast<uintptr_t>(this) ^ 0x9e3779b97f4a7c15ULL) {
  if (s_.timeout_ms == 0) s_.timeout_ms = s_.intervals.inter_ms;
  if (s_.restored_health >= 0) health_.restore(s_.restored_health, s_.restored_up);
  // CheckState's plain fields (enabled, rise, fall) are app's, set before the workers start.
  // An agent's counter is app's (1/1: its word counts at once); a check's starts here.
  auto& cs = s_.type == CheckSettings::Type::kAgent ? srv_.agent_state() : srv_.check_state();
  if (s_.type != CheckSettings::Type::kAgent)
    cs.health.store(health_.health(), std::memory_order_relaxed);
  cs.status.store(lb::CheckStatus::kIni, std::memory_order_relaxed);
}

Checker::~Checker() { stop(); }

void Checker::start(uint64_t first_delay_ms) {
  loop_.timers().arm(timer_, loop_.now_ms() + first_delay_ms);
}

void Checker::stop() {
  loop_.timers().cancel(timer_);
  if (pid_ > 0) {   // an external check still running: it goes with the check
    kill(-pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  close_socket();
  socks_.reset();
  phase_ = Phase::kIdle;
}

void Checker::close_socket() {
  if (ssl_) {
    net::tls::free(ssl_);   // no close_notify: the connection is reset below
    ssl_ = nullptr;
  }
  tls_done_ = false;
  if (fd_ < 0) return;
  loop_.remove(fd_);
  // A check's connection ends with a reset, as HAProxy's do, unless its connect step says
  // `linger` (a FIN). An external check's fd is its pidfd.
  if (linger_ || s_.type == CheckSettings::Type::kExternal) close(fd_);
  else net::close_with_reset(fd_);
  fd_ = -1;
}

void Checker::on_timer(core::Timer& t) {
  uint64_t now = loop_.now_ms();
  if (phase_ == Phase::kIdle) {
    due_ms_ = t.expiry();
    // Maintenance pauses the check (HAProxy), resolution maintenance too (init-addr none:
    // there is no address to check); look again after one interval.
    // An agent keeps being asked: it is what may bring the server back ("ready").
    if ((srv_.admin_state() == lb::AdminState::kMaint && s_.type != CheckSettings::Type::kAgent) ||
        srv_.settings().unresolved) {
      loop_.timers().arm(timer_, next_due(now, s_.intervals.inter_ms));
      return;
    }
    begin();
    return;
  }
  if (s_.type == CheckSettings::Type::kAgent) {
    complete(phase_ == Phase::kConnecting || phase_ == Phase::kSocks ? lb::CheckStatus::kL4Tout : lb::CheckStatus::kL7Tout, 0, "");
    return;
  }
  if (s_.type == CheckSettings::Type::kExternal) {
    external_timeout();
    return;
  }
  if (s_.type == CheckSettings::Type::kRules) {
    // HAProxy: an empty errno text, then where it stopped (" at step 2 of tcp-check (expect
    // string '+OK')"); an expect's tout-status says how it is reported.
    lb::CheckStatus st = lb::CheckStatus::kL7Tout;
    if (phase_ == Phase::kConnecting || phase_ == Phase::kSocks) st = lb::CheckStatus::kL4Tout;
    else if (phase_ == Phase::kTls) st = lb::CheckStatus::kL6Tout;
    else if (waiting_ && waiting_->kind == CheckRule::Kind::kExpect) st = waiting_->tout_status;
    complete(st, 0, at_step());
    return;
  }
  if (phase_ == Phase::kConnecting || phase_ == Phase::kSocks) {
    complete(lb::CheckStatus::kL4Tout, 0, "");
  } else if (phase_ == Phase::kTls) {
    complete(lb::CheckStatus::kL6Tout, 0, "");
  } else {
    complete(lb::CheckStatus::kL7Tout, 0, "");
  }
}

std::string Checker::server_state() const {
  int total_weight = 0, total_conns = 0;
  for (const auto& s : be_.servers()) {
    total_weight += s->eweight();
    total_conns += s->current_conns();
  }
  const int h = health_.health();
  const bool up = health_.up();
  const char* state = srv_.admin_state() == lb::AdminState::kMaint ? "MAINT"
                      : srv_.stopping()                          ? "NOLB"
                      : up                                       ? "UP"
                                                                 : "DOWN";
  const net::SocketAddress a = srv_.endpoint().addr;
  return fmt::format("{} {}/{}; address={}; port={}; name={}/{}; node={}; weight={}/{}; scur={}/{}; "
                     "qcur=0",
                     state, up ? h - health_.rise() + 1 : h, up ? health_.fall() : health_.rise(),
                     a.host_string(), a.port(), be_.name(), srv_.name(), s_.node, srv_.eweight(),
                     total_weight, srv_.current_conns(), total_conns);
}

std::string Checker::at_step() const {
  if (!waiting_) return " at initial connection step of tcp-check";
  const auto& rules = s_.rules->rules;
  const int step = static_cast<int>(waiting_ - rules.data()) + 1;
  std::string t = fmt::format(" at step {} of tcp-check ({})", step, step_text(*waiting_));
  if (!waiting_->comment.empty()) t += fmt::format(" comment: '{}'", waiting_->comment);
  return t;
}

void Checker::retarget(const net::SocketAddress* addr, int port) {
  auto& cs = s_.type == CheckSettings::Type::kAgent ? srv_.agent_state() : srv_.check_state();
  if (addr) {
    const uint16_t keep = s_.addr.port();
    s_.addr = *addr;
    s_.addr.set_port(keep);
    s_.own_addr = true;
    cs.set_addr(addr->host_string());
  }
  if (port) {
    s_.addr.set_port(static_cast<uint16_t>(port));
    s_.own_port = true;
    cs.port.store(port, std::memory_order_relaxed);
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
  if (hooks_.begin) hooks_.begin();
  response_.clear();
  sent_ = 0;
  loop_.timers().arm(timer_, started_ms_ + s_.timeout_ms);
  if (s_.type == CheckSettings::Type::kExternal) {
    begin_external();
    return;
  }
  if (s_.type == CheckSettings::Type::kRules) {
    step_ = 0;
    passed_ = nullptr;
    l7_ = false;
    code_ = 0;
    custom_info_.clear();
    waiting_ = nullptr;
    if (!s_.rules->starts_with_connect()) {
      open_connection(nullptr);
      return;
    }
    run_rules();
    return;
  }
  open_connection(nullptr);
}

void Checker::open_connection(const CheckRule* rule) {
  close_socket();
  net::SocketAddress to = target();
  if (rule && rule->has_addr) {
    const uint16_t port = to.port();
    to = rule->addr;
    to.set_port(port);
  }
  if (rule && rule->port) to.set_port(static_cast<uint16_t>(rule->port));
  // `port <expr>`: its value when it is a port, else the port above (HAProxy's order).
  int64_t port = 0;
  if (rule && rule->port_expr >= 0 && hooks_.eval_int &&
      hooks_.eval_int(rule->port_expr, response_, &port) && port > 0 && port <= 65535)
    to.set_port(static_cast<uint16_t>(port));
  waiting_ = rule;
  linger_ = rule && rule->linger;
  response_.clear();
  in_eof_ = false;
  // socks4: the check's own connection with check-via-socks4, a rule's with via-socks4, goes
  // to the server's SOCKS4 proxy, which is asked for `to` (without socks4 on the server,
  // neither does anything, as in HAProxy).
  socks_.reset();
  const bool socks = s_.has_socks4 && (rule && !rule->is_default ? rule->via_socks4 : s_.via_socks4);
  // TLS on the check's own connection (the first, or `connect default`), never an agent's,
  // and on a `connect ssl` step's.
  tls_rule_ = nullptr;
  if (rule && !rule->is_default) {
    use_tls_ = rule->ssl && s_.rule_tls;
    tls_ctx_ = s_.rule_tls.get();
    tls_rule_ = rule;
  } else {
    use_tls_ = s_.tls && s_.type != CheckSettings::Type::kAgent;
    tls_ctx_ = s_.tls.get();
  }
  pp_sent_ = false;
  if (socks) socks_ = std::make_unique<net::socks4::Handshake>(to);
  bool in_progress = false;
  auto r = net::connect_nonblocking(socks ? s_.socks4 : to, &in_progress);
  const std::string where = s_.type == CheckSettings::Type::kRules ? at_step() : std::string();
  if (!r.ok()) {
    int err = r.error().sys_errno;
    bool local = err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
    complete(local ? lb::CheckStatus::kSockErr : lb::CheckStatus::kL4Con, 0, errno_text(err) + where);
    return;
  }
  fd_ = r.value();
  phase_ = Phase::kConnecting;
  // Level-triggered: a check has one socket and a handful of events, so edge-triggered
  // bookkeeping buys nothing here.
  if (!loop_.add(fd_, EPOLLOUT | EPOLLIN | EPOLLRDHUP, this)) {
    int err = errno;
    complete(lb::CheckStatus::kSockErr, 0, errno_text(err) + where);
    return;
  }
  if (!in_progress) on_connected();
}

void Checker::on_io(uint32_t events) {
  if (fd_ < 0) return;
  if (s_.type == CheckSettings::Type::kExternal) {   // the pidfd: the command ended
    external_done();
    return;
  }
  if (phase_ == Phase::kConnecting) {
    if (events & (EPOLLERR | EPOLLHUP | EPOLLOUT)) {
      const std::string where = s_.type == CheckSettings::Type::kRules ? at_step() : std::string();
      int err = net::pending_socket_error(fd_);
      if (err != 0) {
        complete(lb::CheckStatus::kL4Con, 0, errno_text(err) + where);
        return;
      }
      if (events & EPOLLOUT) on_connected();
      else if (events & (EPOLLERR | EPOLLHUP)) complete(lb::CheckStatus::kL4Con, 0, "Connection error" + where);
    }
    return;
  }
  if (phase_ == Phase::kSocks) {
    socks_more();
    return;
  }
  if (phase_ == Phase::kTls) {
    tls_more();
    return;
  }
  if (phase_ == Phase::kSending && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) send_more();
  if (fd_ >= 0 && phase_ == Phase::kReading && (events & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP)))
    read_more();
}

void Checker::socks_more() {
  switch (socks_->advance(fd_)) {
    case net::socks4::Handshake::Step::kDone:
      socks_.reset();
      loop_.modify(fd_, EPOLLOUT | EPOLLIN | EPOLLRDHUP, this);
      phase_ = Phase::kConnecting;
      on_connected();
      return;
    case net::socks4::Handshake::Step::kFailed:
      // HAProxy: a socket error, named by the connection's error code.
      complete(lb::CheckStatus::kSockErr, 0,
               net::socks4::failure_text(socks_->failure()) +
                   (s_.type == CheckSettings::Type::kRules ? at_step() : std::string()));
      return;
    case net::socks4::Handshake::Step::kReceive:
      if (phase_ != Phase::kSocks) {   // the request left: wait for the answer alone
        phase_ = Phase::kSocks;
        loop_.modify(fd_, EPOLLIN | EPOLLRDHUP, this);
      }
      return;
    case net::socks4::Handshake::Step::kSend:
      return;   // the next EPOLLOUT
  }
}

void Checker::tls_more() {
  switch (net::tls::handshake(ssl_)) {
    case net::tls::Step::kDone:
      tls_done_ = true;
      phase_ = Phase::kConnecting;
      loop_.modify(fd_, EPOLLOUT | EPOLLIN | EPOLLRDHUP, this);
      on_connected();
      return;
    case net::tls::Step::kWantRead:
      loop_.modify(fd_, EPOLLIN | EPOLLRDHUP, this);
      return;
    case net::tls::Step::kWantWrite:
      loop_.modify(fd_, EPOLLOUT, this);
      return;
    case net::tls::Step::kClosed:
    case net::tls::Step::kFailed:
      complete(lb::CheckStatus::kL6Rsp, 0,
               s_.type == CheckSettings::Type::kRules ? at_step() : std::string());
      return;
  }
}

ssize_t Checker::io_send(const char* p, std::size_t n) {
  if (!ssl_) return ::send(fd_, p, n, MSG_NOSIGNAL);
  const net::IoResult r = net::tls::send(ssl_, p, n);
  if (r.status == net::IoStatus::kOk) return static_cast<ssize_t>(r.n);
  errno = r.status == net::IoStatus::kAgain ? EAGAIN : (r.err ? r.err : EPIPE);
  return -1;
}

ssize_t Checker::io_recv(char* p, std::size_t n) {
  if (!ssl_) return ::recv(fd_, p, n, 0);
  const net::IoResult r = net::tls::recv(ssl_, p, n);
  if (r.status == net::IoStatus::kOk) return static_cast<ssize_t>(r.n);
  if (r.status == net::IoStatus::kEof) return 0;
  errno = r.status == net::IoStatus::kAgain ? EAGAIN : (r.err ? r.err : ECONNRESET);
  return -1;
}

void Checker::on_connected() {
  if (socks_) {   // connected to the proxy: the handshake comes first
    socks_more();
    return;
  }
  if (use_tls_ && !tls_done_) {
    send_proxy_header_once();   // in clear, before the handshake
    if (!ssl_) {
      const bool own_sni = tls_rule_ && !tls_rule_->sni.empty();
      ssl_ = tls_ctx_->new_conn(fd_, own_sni ? std::string_view(tls_rule_->sni) : s_.tls_sni, nullptr);
      if (ssl_ && tls_rule_ && !tls_rule_->alpn.empty()) net::tls::offer_alpn(ssl_, tls_rule_->alpn);
    }
    if (!ssl_) {
      complete(lb::CheckStatus::kSockErr, 0, "out of memory");
      return;
    }
    phase_ = Phase::kTls;
    tls_more();
    return;
  }
  if (s_.type == CheckSettings::Type::kRules) {
    send_proxy_header_once();
    if (waiting_) step_ = static_cast<std::size_t>(waiting_ - s_.rules->rules.data()) + 1;
    waiting_ = nullptr;
    run_rules();
    return;
  }
  if (s_.type == CheckSettings::Type::kAgent) {
    response_.clear();
    if (!s_.agent_send.empty()) {
      request_ = s_.agent_send;
      sent_ = 0;
      phase_ = Phase::kSending;
      send_more();   // then reads
      return;
    }
    phase_ = Phase::kReading;
    loop_.modify(fd_, EPOLLIN | EPOLLRDHUP, this);
    return;
  }
  // A plain connect check (over TLS: a layer-6 one).
  if (ssl_) {
    complete(lb::CheckStatus::kL6Ok, 0, "");
    return;
  }
  // The check is a layer-4 one and passes on the connection alone, as in HAProxy.
  send_proxy_header_once();
  complete(lb::CheckStatus::kL4Ok, 0, "");
}

int Checker::proxy_version() const {
  if (s_.type == CheckSettings::Type::kRules) {
    const bool pp = waiting_ ? waiting_->send_proxy || (waiting_->is_default && s_.send_proxy)
                             : s_.send_proxy != 0;
    return pp ? (s_.send_proxy ? s_.send_proxy : 1) : 0;
  }
  return s_.type == CheckSettings::Type::kTcp ? s_.send_proxy : 0;
}

void Checker::send_proxy_header_once() {
  if (pp_sent_) return;
  pp_sent_ = true;
  const int version = proxy_version();
  if (!version) return;
  // A fresh socket takes a header of a few hundred bytes whole.
  const std::string h = proxy_header(version);
  [[maybe_unused]] ssize_t n = ::send(fd_, h.data(), h.size(), MSG_NOSIGNAL);
}

std::string Checker::proxy_header(int version) const {
  if (version == 1) {
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
    ssize_t n = io_send(request_.data() + sent_, request_.size() - sent_);
    if (n > 0) {
      sent_ += static_cast<std::size_t>(n);
      continue;
    }
    int err = errno;
    if (n < 0 && (err == EAGAIN || err == EINTR)) return;   // EPOLLOUT brings us back
    const bool rules = s_.type == CheckSettings::Type::kRules;
    complete(lb::CheckStatus::kL7Rsp, 0, errno_text(err) + (rules ? at_step() : std::string()));
    return;
  }
  phase_ = Phase::kReading;
  loop_.modify(fd_, EPOLLIN | EPOLLRDHUP, this);
  if (s_.type == CheckSettings::Type::kRules) {
    ++step_;
    waiting_ = nullptr;
    run_rules();
  }
}

void Checker::run_rules() {
  const auto& rules = s_.rules->rules;
  while (step_ < rules.size()) {
    const CheckRule& r = rules[step_];
    switch (r.kind) {
      case CheckRule::Kind::kComment:
        ++step_;
        continue;
      case CheckRule::Kind::kSetVar:
      case CheckRule::Kind::kUnsetVar:
        if (hooks_.set_var) hooks_.set_var(r, response_);
        ++step_;
        continue;
      case CheckRule::Kind::kConnect:
        open_connection(&r);
        return;
      case CheckRule::Kind::kSend: {
        // What was received so far is forgotten: the next expect judges the answer to this.
        l7_ = true;
        response_.clear();
        in_eof_ = false;
        if (r.http) {
          method_ = r.method;
          request_ = http_request(r, [this](int i) { return render(i); },
                                  s_.send_state ? server_state() : std::string());
        } else {
          request_ = r.fmt >= 0 ? render(r.fmt) : r.data;
        }
        if (!r.http && r.fmt >= 0 && r.binary) {
          std::string bytes;
          if (!base::hex_decode(request_, &bytes)) bytes.clear();
          request_ = std::move(bytes);
        }
        sent_ = 0;
        waiting_ = &r;
        phase_ = Phase::kSending;
        loop_.modify(fd_, EPOLLOUT | EPOLLIN | EPOLLRDHUP, this);
        send_more();   // comes back here (step_ + 1) once all is sent
        return;
      }
      case CheckRule::Kind::kExpect: {
        l7_ = true;
        if (is_custom(r)) {
          const bool done = in_eof_ || response_.size() >= kMaxResponse;
          CustomOutcome o = evaluate_custom(r, response_, done);
          if (o.verdict == ExpectVerdict::kWait) {
            waiting_ = &r;
            phase_ = Phase::kReading;
            loop_.modify(fd_, EPOLLIN | EPOLLRDHUP, this);
            return;
          }
          if (o.verdict == ExpectVerdict::kFail) {
            complete(o.status, std::max(o.code, 0), r.on_error >= 0 ? render(r.on_error) : o.info);
            return;
          }
          if (!o.info.empty()) custom_info_ = std::move(o.info);
          if (o.code >= 0) code_ = o.code;
          passed_ = &r;
          ++step_;
          continue;
        }
        const bool lf = r.match == CheckRule::Match::kStringLf ||
                        r.match == CheckRule::Match::kBinaryLf ||
                        r.match == CheckRule::Match::kBodyLf;
        if (r.match >= CheckRule::Match::kStatus) {   // http-check's
          const std::string rendered = lf ? render(r.fmt) : std::string();
          const bool done = in_eof_ || response_.size() >= kMaxResponse;
          HttpOutcome o;
          const ExpectVerdict v = evaluate_http_expect(r, response_, done, method_, rendered, &o);
          if (v == ExpectVerdict::kWait) {
            waiting_ = &r;
            phase_ = Phase::kReading;
            loop_.modify(fd_, EPOLLIN | EPOLLRDHUP, this);
            return;
          }
          // disable-on-404: a 404 from a server that is UP passes, conditionally.
          if (s_.disable_on_404 && o.code == 404 && health_.up()) {
            complete(lb::CheckStatus::kL7OkC, 404, "");
            return;
          }
          if (v == ExpectVerdict::kFail) {
            std::string info = r.on_error >= 0 ? render(r.on_error) : o.info;
            if (!r.comment.empty()) info += " comment: " + r.comment;
            complete(o.status, o.code, std::move(info));
            return;
          }
          code_ = r.status_code >= 0 ? std::atoi(render(r.status_code).c_str()) : o.code;
          passed_ = &r;
          ++step_;
          continue;
        }
        const std::string rendered = lf ? render(r.fmt) : std::string();
        const bool last = in_eof_ || response_.size() >= kMaxResponse;
        switch (evaluate_expect(r, response_, last, rendered)) {
          case ExpectVerdict::kPass:
            if (r.status_code >= 0) code_ = std::atoi(render(r.status_code).c_str());
            passed_ = &r;
            ++step_;
            continue;
          case ExpectVerdict::kFail: {
            const int step = static_cast<int>(step_) + 1;
            const int code = r.status_code >= 0 ? std::atoi(render(r.status_code).c_str()) : 0;
            complete(r.error_status, code,
                     r.on_error >= 0 ? render(r.on_error) : expect_failure_text(r, step, rendered));
            return;
          }
          case ExpectVerdict::kWait:
            waiting_ = &r;
            phase_ = Phase::kReading;
            loop_.modify(fd_, EPOLLIN | EPOLLRDHUP, this);
            return;
        }
        return;
      }
    }
  }
  // Every step passed: the last expect's ok-status and on-success say how.
  lb::CheckStatus st = l7_ ? lb::CheckStatus::kL7Ok : lb::CheckStatus::kL4Ok;
  std::string info = custom_info_.empty() ? s_.rules->ok_info : custom_info_;
  if (passed_) {
    st = passed_->ok_status;
    if (passed_->on_success >= 0) info = render(passed_->on_success);
  }
  complete(st, code_, std::move(info));
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
    ssize_t n = io_recv(buf, std::min(room, sizeof buf));
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
    eof = true;   // a reset: what came is all there is
    break;
  }
  if (s_.type == CheckSettings::Type::kAgent) {
    agent_read(eof);
    return;
  }
  in_eof_ = in_eof_ || eof;
  run_rules();
}

void Checker::complete(lb::CheckStatus status, int code, std::string text) {
  // A text read from the server ends at its first NUL, as HAProxy's C strings do.
  if (const std::size_t nul = text.find('\0'); nul != std::string::npos) text.resize(nul);
  if (s_.type == CheckSettings::Type::kAgent) {
    agent_done(status, std::move(text), nullptr);
    return;
  }
  close_socket();
  phase_ = Phase::kIdle;
  uint64_t now = loop_.now_ms();
  auto& cs = srv_.check_state();
  bool ok = lb::check_passed(status);
  const int before = health_.health();
  const lb::CheckStatus was = cs.status.load(std::memory_order_relaxed);
  Health::Change change = health_.report(ok);
  if (!ok && health_.last_failure_counted()) cs.chkfail.fetch_add(1, std::memory_order_relaxed);
  cs.status.store(status, std::memory_order_relaxed);
  cs.code.store(code, std::memory_order_relaxed);
  cs.duration_ms.store(static_cast<int64_t>(now - started_ms_), std::memory_order_relaxed);
  cs.health.store(health_.health(), std::memory_order_relaxed);
  cs.set_text(std::move(text));
  if (s_.log_checks) log_check(status, was, before);
  // A soft-stopped server runs again after a plainly passing check, and a DOWN one is no
  // longer stopping (HAProxy's srv_set_running / srv_set_stopped); a conditional pass
  // (disable-on-404) stops it.
  const bool conditional = status == lb::CheckStatus::kL7OkC;
  if (srv_.stopping() && ((ok && !conditional) || !health_.up())) be_.set_stopping(srv_, false, now);
  else if (conditional && health_.up() && !srv_.stopping()) be_.set_stopping(srv_, true, now);
  if (change != Health::Change::kNone) report_change(change, now);
  uint64_t delay = next_interval(health_, s_.intervals);
  if (s_.spread_pct > 0 && delay > 0) {
    // spread-checks: a random share of the interval added or taken, up to spread_pct percent.
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    const uint64_t span = delay * static_cast<uint64_t>(s_.spread_pct) / 100;
    const uint64_t r = span ? rng_ % (2 * span + 1) : span;
    delay = delay + r - span;
  }
  loop_.timers().arm(timer_, next_due(now, delay));
}

void Checker::force(bool up, bool stopping) {
  uint64_t now = loop_.now_ms();
  Health::Change change = health_.force(up || stopping);
  srv_.check_state().health.store(health_.health(), std::memory_order_relaxed);
  // Stopping first: a DOWN server that is forced to stopping must not take traffic between
  // the two changes.
  be_.set_stopping(srv_, stopping, now);
  if (change != Health::Change::kNone) report_change(change, now, true);
}

void Checker::restart() {
  uint64_t now = loop_.now_ms();
  Health::Change change = health_.restart();
  srv_.check_state().health.store(health_.health(), std::memory_order_relaxed);
  be_.set_stopping(srv_, false, now);
  if (change != Health::Change::kNone) report_change(change, now);
}

void Checker::report_change(Health::Change change, uint64_t now, bool from_cli) {
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
    hooks_.log(up ? kLogNotice : kLogAlert, state_message(up, now, from_cli));
    if (!up && be_.usable_active() + be_.usable_backup() == 0)
      hooks_.log(kLogEmerg, fmt::format("backend {} has no server available!", be_.name()));
  }
  if (!up && s_.shutdown_sessions && hooks_.shutdown_sessions) hooks_.shutdown_sessions(srv_);
  if (up && s_.shutdown_backup_sessions && !srv_.settings().backup && hooks_.shutdown_sessions)
    for (const auto& other : be_.servers())
      if (other->settings().backup) hooks_.shutdown_sessions(*other);
  // Trackers follow the server's state, its agent's verdict included (as agent.cc tells them).
  if (hooks_.state_changed) hooks_.state_changed(srv_, srv_.check_up() && srv_.agent_up());
}

namespace {
// ", code: 200" where HAProxy shows one: the layer-7 results that carry a status (and an
// invalid response that had one), the external checks.
bool shows_code(lb::CheckStatus st, int code) {
  using S = lb::CheckStatus;
  return st == S::kL7Ok || st == S::kL7OkC || st == S::kL7Sts || st == S::kProcErr ||
         st == S::kProcTout || st == S::kProcOk || (st == S::kL7Rsp && code > 0);
}
}  // namespace

// HAProxy logs a check when its result moves the counter or changes the status: a failure
// while not already at 0, a success while not already at the top, any new status.
void Checker::log_check(lb::CheckStatus status, lb::CheckStatus was, int before) {
  if (!hooks_.log) return;
  const bool ok = lb::check_passed(status);
  if (status == was && (ok ? before == health_.top() : before == 0)) return;
  const auto& cs = srv_.check_state();
  const int code = cs.code.load(std::memory_order_relaxed);
  std::string m = fmt::format("Health check for {}server {}/{} {}, reason: {}",
                              srv_.settings().backup ? "backup " : "", be_.name(), srv_.name(),
                              status == lb::CheckStatus::kL7OkC ? "conditionally succeeded"
                              : ok                              ? "succeeded"
                                                                : "failed",
                              lb::check_status_desc(status));
  if (shows_code(status, code)) m += fmt::format(", code: {}", code);
  if (std::string text = cs.text(); !text.empty()) m += fmt::format(", info: \"{}\"", text);
  const int h = health_.health();
  const bool up = h >= health_.rise();
  // A verdict of the traffic (HANA) has no duration, and HAProxy then writes none.
  if (const int64_t d = cs.duration_ms.load(std::memory_order_relaxed); d >= 0)
    m += fmt::format(", check duration: {}ms", d);
  m += fmt::format(", status: {}/{} {}.", up ? h - health_.rise() + 1 : h,
                   up ? health_.fall() : health_.rise(), up ? "UP" : "DOWN");
  hooks_.log(kLogNotice, m);
}

std::string Checker::state_message(bool up, uint64_t now, bool from_cli) {
  const auto& cs = srv_.check_state();
  lb::CheckStatus st = cs.status.load(std::memory_order_relaxed);
  if (from_cli)   // `set server ... health`: HAProxy names the CLI, not the last check
    return fmt::format("{}Server {}/{} is {}, changed from CLI{}",
                       srv_.settings().backup ? "Backup " : "", be_.name(), srv_.name(),
                       up ? "UP" : "DOWN", be_.state_tail(srv_, !up));
  // With log-health-checks the check's own line gave the reason: the state line does not.
  if (s_.log_checks)
    return fmt::format("{}Server {}/{} is {}{}", srv_.settings().backup ? "Backup " : "",
                       be_.name(), srv_.name(), up ? "UP" : "DOWN", be_.state_tail(srv_, !up));
  std::string m = fmt::format("{}Server {}/{} is {}, reason: {}", srv_.settings().backup ? "Backup " : "",
                              be_.name(), srv_.name(), up ? "UP" : "DOWN", lb::check_status_desc(st));
  if (shows_code(st, cs.code.load(std::memory_order_relaxed)))
    m += fmt::format(", code: {}", cs.code.load(std::memory_order_relaxed));
  std::string text = cs.text();
  if (!text.empty()) m += fmt::format(", info: \"{}\"", text);
  if (const int64_t d = cs.duration_ms.load(std::memory_order_relaxed); d >= 0)
    m += fmt::format(", check duration: {}ms", d);
  m += be_.state_tail(srv_, !up);
  (void)now;
  return m;
}

}  // namespace sluice::check

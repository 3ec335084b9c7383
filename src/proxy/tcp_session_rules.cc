// The rule sets of a TCP session: tcp-request session and content (frontend and backend) and
// tcp-response content, with their actions on the session (variables, addresses, closes).
#include "log/line.h"
#include "net/socket.h"
#include "proxy/sample_env.h"
#include "proxy/tcp_session.h"
#include "proxy/worker.h"

namespace sluice::proxy {

using log::Cause;
using log::FinalState;

const net::SocketAddress* TcpSession::local_address() const {
  if (rd_ && rd_->local_set) return &rd_->local;
  return l_.addr.kind == net::ListenAddress::Kind::kInet ? &l_.addr.addr : nullptr;
}

rules::TcpVerdict TcpSession::run_rules(const std::vector<rules::TcpRule>& list, const Proxy& px,
                                        rules::RequestView& v) {
  net::SocketAddress local;
  const rules::RequestView l4 = tcp_rule_view(l_, cio_.fd(), client_, local);
  if (px.settings.tcp_rule_data && !rd_) rd_ = std::make_unique<RuleData>();
  v.src = &client_;
  v.cli_fd = cio_.fd();
  v.dst = l4.dst;
  v.dst_port = l4.dst_port;
  if (rd_) {
    if (rd_->local_set) {
      v.dst = &rd_->local;
      v.dst_port = rd_->local.port();
    }
    v.sess_vars = &rd_->sess;
    v.txn_vars = &rd_->txn;
    v.req_vars = &rd_->req;
    v.res_vars = &rd_->res;
    const HttpSettings& fh = fe_.settings.h;
    if (rd_->caps.empty() && (!fh.capture_request.empty() || !fh.capture_response.empty()))
      rd_->caps.reset(fh.capture_request, fh.capture_response);
    if (!rd_->caps.empty()) v.captures = &rd_->caps;
  }
  ProxyEnv env(w_.process(), w_.id(), &l_, fe_);
  env.be = be_;
  env.srv = leg_.server();
  env.stream = this;
  v.env = &env;
  const rules::TcpVerdict verdict =
      rules::run_tcp_rules(list, v, {&client_, rd_ ? &rd_->local : nullptr, nullptr, &rst_ttl_},
                           &last_rule_);
  if (rd_ && v.dst == &rd_->local) rd_->local_set = true;
  return verdict;
}

bool TcpSession::stream_query(sample::Env::Query q, bool, int64_t* out) const {
  using Q = sample::Env::Query;
  if (q == Q::kAcceptDateUs) {
    *out = static_cast<int64_t>(t_accept_wall_us_);
    return true;
  }
  switch (q) {
    case Q::kFcErr: *out = fc_err_; return true;
    case Q::kCpuCalls: *out = calls_; return true;
    case Q::kLastRuleLine:
      if (!last_rule_) return false;
      *out = last_rule_->line;
      return true;
    case Q::kCurClientTimeout:
    case Q::kCurServerTimeout:
    case Q::kCurTunnelTimeout:
      // The log line of a finished session reads the timeouts its sides ended with: HAProxy
      // 3.5 gives the client's own timeout and 0 for the server side and the tunnel once the
      // streams are shut, whichever side closed first, as after a failed connect. While the
      // session runs, the proxies' settings answer (ProxyEnv).
      if (state_ != State::kClosed) return false;
      *out = q == Q::kCurClientTimeout ? fe_.settings.timeouts.client : 0;
      return true;
    default: break;
  }
  if (leg_query(leg_, false, false, q, out)) return true;
  log::Record r;
  r.date_wall_us = t_accept_wall_us_;
  if (be_) r.tw = static_cast<long>(t_routed_ms_ - t_accept_ms_);
  if (leg_.connected_ms()) r.tc = static_cast<long>(leg_.connected_ms() - t_routed_ms_);
  return log::stream_query(r, q, false, out);
}

bool TcpSession::stream_text(sample::Env::TextQuery q, std::string_view* out) const {
  using TQ = sample::Env::TextQuery;
  switch (q) {
    case TQ::kTermState:   // "--" while the session runs
      term_text_[0] = log::cause_letter(last_term_.cause);
      term_text_[1] = log::state_letter(last_term_.state);
      *out = std::string_view(term_text_, 2);
      return true;
    case TQ::kLastRuleFile:
    case TQ::kLastEntity:
      if (!last_rule_) return false;
      *out = q == TQ::kLastRuleFile ? last_rule_->file() : std::string_view(last_rule_->where);
      return true;
    default:
      return false;
  }
}

bool TcpSession::request_verdict(rules::TcpVerdict v, bool backend) {
  switch (v) {
    case rules::TcpVerdict::kReject:
      w_.fe_counters(fe_.index).dreq.add();
      if (backend) w_.be_counters(be_->index).dreq.add();
      denied_ = true;
      reject(backend);
      return false;
    case rules::TcpVerdict::kSilentDrop:
      // HAProxy: the stream ends as a proxy condition during the request (PR), logged, and
      // counted as a denied request as a reject is.
      w_.fe_counters(fe_.index).dreq.add();
      if (backend) w_.be_counters(be_->index).dreq.add();
      denied_ = true;
      ended_in_frontend_ = !backend;
      silent_drop(true);
      finish({Cause::kProxy, FinalState::kRequest});
      return false;
    default:
      return true;
  }
}

bool TcpSession::session_rules() {
  rules::RequestView v;
  v.avail = sample::kAtTcpSession;
  const rules::TcpVerdict verdict = run_rules(fe_.settings.tcp_session_rules, fe_, v);
  if (verdict != rules::TcpVerdict::kReject && verdict != rules::TcpVerdict::kSilentDrop) {
    w_.count_session(fe_);
    return true;
  }
  // HAProxy: no stream was created, so no log line and no session in stot; a reject is
  // counted in dses and closes with a FIN, a silent-drop is counted in dreq and closes with
  // a reset.
  no_log_ = true;
  if (verdict == rules::TcpVerdict::kReject) w_.fe_counters(fe_.index).dses.add();
  else w_.fe_counters(fe_.index).dreq.add();
  ended_in_frontend_ = true;
  if (verdict == rules::TcpVerdict::kSilentDrop) {
    silent_drop(false);
  } else {
    drain_client();   // a close over unread bytes would be a reset
  }
  finish({Cause::kProxy, FinalState::kRequest});
  return false;
}

bool TcpSession::backend_rules() {
  // What has arrived, final: a backend's rules do not wait for more bytes.
  rules::RequestView v;
  v.avail = sample::kAtTcpContent | sample::kUseBackend;
  v.payload = payload();
  return request_verdict(run_rules(be_->settings.tcp_content_rules, *be_, v), true);
}

void TcpSession::silent_drop(bool stream) {
  // Without a stream yet (session rules) a plain reset, as HAProxy; rst-ttl sets its TTL.
  if (stream || rst_ttl_) net::silence_close(cio_.fd(), rst_ttl_);
  client_reset_ = true;
}

bool TcpSession::inspect_response() {
  const uint32_t delay = be_->settings.tcp_response_inspect_delay_ms;
  const uint64_t now = w_.loop().now_ms();
  if (delay && !res_inspect_until_ms_) res_inspect_until_ms_ = now + delay;
  rules::RequestView v;
  v.avail = sample::kAtTcpResponse;
  v.payload = payload();
  v.res_payload = res_ ? std::string_view(res_->data + res_->head, res_->size()) : std::string_view();
  v.res_payload_final = s_eof_ || s_err_ || delay == 0 || now >= res_inspect_until_ms_ ||
                        (res_ && res_->room() == 0);
  switch (run_rules(be_->settings.tcp_response_rules, *be_, v)) {
    case rules::TcpVerdict::kWait:
      return false;   // the timer (deadline()) brings the last judgement
    case rules::TcpVerdict::kAccept:
      res_inspect_ = false;
      return true;
    case rules::TcpVerdict::kReject:
      // HAProxy: a denied response, the session aborted (PD), the client closed with a FIN.
      w_.fe_counters(fe_.index).dresp.add();
      w_.be_counters(be_->index).dresp.add();
      if (leg_.server()) leg_.server_counters().dresp.add();
      finish({Cause::kProxy, FinalState::kData});
      return false;
    case rules::TcpVerdict::kClose:
      // The server connection is closed at once (a reset) and the session ends with it; what
      // it sent is not forwarded, as in HAProxy.
      finish({Cause::kNone, FinalState::kNone});
      return false;
    case rules::TcpVerdict::kSilentDrop:
      silent_drop(true);
      finish({Cause::kProxy, FinalState::kRequest});
      return false;
  }
  return false;
}

}  // namespace sluice::proxy

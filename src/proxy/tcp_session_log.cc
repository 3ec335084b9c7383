// What a TCP session shows of itself: its log line (option tcplog, log-format, logasap)
// and its `show sess` entry.
#include "proxy/tcp_session.h"

#include <fmt/format.h>

#include "log/line.h"
#include "proxy/proxy_header.h"
#include "proxy/sample_env.h"
#include "proxy/worker.h"

namespace sluice::proxy {

using log::Cause;
using log::FinalState;

void TcpSession::describe(SessionInfo* info) const {
  info->listener = &l_;
  info->backend = be_;
  info->server = leg_.server();
  info->client = client_;
  info->accept_ms = t_accept_ms_;
  info->expire_ms = timer_.armed() ? deadline() : 0;
  info->bytes_in = bytes_in_;
  info->bytes_out = bytes_out_;
  switch (state_) {
    case State::kInspecting: info->state = "INSPECT"; break;
    case State::kQueued: info->state = "QUEUED"; break;
    case State::kConnecting: info->state = "CON"; break;
    case State::kEstablished: info->state = "EST"; break;
    case State::kClosed: info->state = "CLO"; break;
  }
  info->client_fd = cio_.fd();
  info->server_fd = sio_.fd();
}

bool TcpSession::log_session(bool early, LogStep step) {
  const auto& s = fe_.settings;
  const bool final = step == kLogClose;
  if (final && !early && !s.log_close) return false;   // log-steps without close
  // The response analysis is over by then: res.* is gone too (req.* also, when the session
  // ended before a server connection), as HAProxy 3.5 logs a TCP session.
  if (rd_ && final) {
    if (rd_->req.count()) rd_->req.clear();
    if (rd_->res.count()) rd_->res.clear();
  }
  // dontlognull: nothing moved yet (a logasap line waits for the end then).
  if (s.dontlognull && bytes_in_ == 0 && bytes_out_ == 0) return false;
  uint64_t now = w_.loop().now_ms();
  // Tw: the wait for the content rules (0 without inspection), as HAProxy counts it; Tc from
  // there. -1 when the session never went to a server.
  const bool no_server = ended_in_frontend_ || client_end_.has_value() || denied_;
  long tw = no_server ? -1 : static_cast<long>(t_routed_ms_ - t_accept_ms_);
  long tc = leg_.connected_ms() ? static_cast<long>(leg_.connected_ms() - t_routed_ms_) : -1;
  long tt = static_cast<long>(now - t_accept_ms_);
  // %ci:%cp [%t] %ft %b/%s %Tw/%Tc/%Tt %B %ts %ac/%fc/%bc/%sc/%rc %sq/%bq; %bc and %sc as
  // HAProxy logs them, once this session left the backend and the server (HAProxy's tcplog
  // format: Tw queue, Tc connect, Tt total, in ms; %rc is the retries).
  // A session that tcp-request content rules rejected never reached a backend: HAProxy logs
  // the frontend in its place and -1 for the queue and connect times (ended_in_frontend_).
  const lb::Server* srv = leg_.server();
  log::Record r;
  r.client = &client_;
  r.date_wall_us = t_accept_wall_us_;
  r.frontend = s.name;
  note_tls(r, cio_.tls());
  r.backend = ended_in_frontend_ ? std::string_view(s.name)
              : be_              ? std::string_view(be_->settings.name)
                                 : std::string_view("<NOSRV>");
  r.server = srv ? std::string_view(srv->name()) : std::string_view("<NOSRV>");
  r.tw = tw;
  r.tc = tc;
  r.total = tt;
  r.bytes_out = bytes_out_;
  r.term = last_term_;
  r.actconn = w_.process().actconn().current();
  r.feconn = fe_.feconn.current();
  const int self = early ? 0 : 1;   // a logasap line: this session is still counted
  r.beconn = be_ && last_term_.cause != Cause::kProxy
                 ? std::max(0, be_->be_conns.load(std::memory_order_relaxed) - self)
                 : 0;
  r.srvconn = srv ? std::max(0, srv->current_conns() - self) : 0;
  r.logasap = final && s.logasap;
  if (step == kLogAccept) {
    // log-steps accept: the session has reached no backend yet.
    r.backend = s.name;
    r.server = "<NOSRV>";
    r.tw = r.tc = -1;
    r.beconn = r.srvconn = 0;
  }
  r.retries = leg_.retries();
  r.redispatched = leg_.redispatched();
  // What only log-format aliases and %[...] read.
  r.local = local_address();
  r.server_addr = leg_.connected_ms() ? leg_.target() : nullptr;
  r.backend_src = leg_.connected_ms() ? leg_.source() : nullptr;
  r.bytes_in = bytes_in_;
  r.bytes_to_client = bytes_out_;
  r.request_counter = stream_number();
  r.log_counter = fe_.log_count.fetch_add(1, std::memory_order_relaxed);
  r.hostname = w_.logs().host();
  r.pid = w_.logs().pid();
  r.req_capture_slots = s.h.capture_request.size();
  r.res_capture_slots = s.h.capture_response.size();
  if (rd_) {
    r.req_captures = rd_->caps.req();
    r.res_captures = rd_->caps.res();
  }
  ProxyEnv env(w_.process(), w_.id(), &l_, fe_);
  env.rec = &r;
  sample::Ctx ctx;
  fill_sample_ctx(ctx, env);
  ctx.avail = log::kLogAvail & ~(sample::kUseHttpReq | sample::kUseHttpReqLine | sample::kUseHttpRes |
                                 sample::kUseHttpResLine);
  w_.logs().send_traffic(s, *s.log_format, r, &ctx);
  return true;
}

void TcpSession::fill_sample_ctx(sample::Ctx& ctx, ProxyEnv& env) const {
  env.be = be_;
  env.srv = leg_.server();
  env.stream = this;
  ctx.src = &client_;
  ctx.dst = local_address();
  ctx.dst_port = rd_ && rd_->local_set ? rd_->local.port() : l_.port;
  if (rd_) {
    ctx.sess_vars = &rd_->sess;
    ctx.txn_vars = &rd_->txn;
    ctx.req_vars = &rd_->req;
    ctx.res_vars = &rd_->res;
    if (!rd_->caps.empty()) ctx.captures = &rd_->caps;
  }
  ctx.env = &env;
  ctx.now_us = base::wall_us();
}

// Rendered as the connection to the server opens: the backend and the server are known, the
// request's bytes are not (HAProxy's `tcp-request content` data is gone from a TCP stream's
// buffer once forwarded, and sluice forwards as it reads).
void TcpSession::render_pp2_tlvs(const std::vector<ProxySettings::Pp2TlvFormat>& formats,
                                 std::vector<net::pp::Tlv>* out) const {
  const lb::Server* srv = leg_.server();
  log::Record r;
  r.client = &client_;
  r.date_wall_us = t_accept_wall_us_;
  r.frontend = fe_.settings.name;
  note_tls(r, cio_.tls());
  r.backend = be_ ? std::string_view(be_->settings.name) : std::string_view("<NOSRV>");
  r.server = srv ? std::string_view(srv->name()) : std::string_view("<NOSRV>");
  r.local = local_address();
  r.request_counter = stream_number();
  r.hostname = w_.logs().host();
  r.pid = w_.logs().pid();
  r.actconn = w_.process().actconn().current();
  r.feconn = fe_.feconn.current();
  ProxyEnv env(w_.process(), w_.id(), &l_, fe_);
  env.rec = &r;
  sample::Ctx ctx;
  fill_sample_ctx(ctx, env);
  ctx.avail = sample::kAtTcpContent | sample::kUseBackend | sample::kUseServer;
  proxy::render_pp2_tlvs(formats, r, &ctx, out);
}

}  // namespace sluice::proxy

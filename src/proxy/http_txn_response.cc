// HttpTxn, the response: its rules, the counters of statuses, errors and aborts, `show errors`
// and the log record.
#include <algorithm>

#include <fmt/format.h>

#include "base/clock.h"
#include "base/strings.h"
#include "http/forward.h"
#include "log/line.h"
#include "proxy/sample_env.h"
#include "proxy/http_txn.h"

namespace sluice::proxy {

using log::Cause;
using log::FinalState;

namespace {

int status_class(int status) { return status >= 100 && status < 600 ? status / 100 - 1 : 5; }

}  // namespace

HttpTxn::Next HttpTxn::on_response(const http::ResponseHead& rh, rules::HeadEdit& edit,
                                   HttpCodecs& codecs) {
  ForgetBody forget{*this};
  reply_ = &codecs.reply;
  t_response_ms = w_.loop().now_ms();
  // HAProxy keeps req.* and res.* in one store that it empties when the response analysis
  // begins: what the request side set there is gone for the response rules and the log.
  if (codecs.req_vars.count()) codecs.req_vars.clear();
  if (codecs.res_vars.count()) codecs.res_vars.clear();
  if (caps_) caps_->capture_headers(true, rh.headers);
  // The server's own status, whatever the client ends up getting (a response rule's answer, a
  // 502 for a bad first chunk): the server row counts what servers sent.
  count_server_status(rh.status);
  if (!be_->settings.tcp_response_rules.empty() &&
      response_content(rh.status, edit, codecs) == Next::kReply)
    return Next::kReply;
  // option checkcache, after the response rules and before the persistence cookie, as in
  // HAProxy.
  const bool checkcache = be_http().checkcache;
  if (!has_response_rules()) {
    if (checkcache && block_cacheable_cookie(rh.status, edit)) return Next::kReply;
    if (ck_ && ck_->active) cookie_response(rh.status, edit);
    return Next::kForward;
  }
  if (fe_.settings.h.response_rules.empty() && be_http().response_rules.empty()) {
    if (checkcache && block_cacheable_cookie(rh.status, edit)) return Next::kReply;
    if (ck_ && ck_->active) cookie_response(rh.status, edit);
    after_response(rh.status, edit, &codecs);
    return Next::kForward;
  }
  res_px_ = 0;
  res_rule_ = 0;
  return response_rules(rh.status, edit, codecs);
}

HttpTxn::Next HttpTxn::response_rules(int code, rules::HeadEdit& edit, HttpCodecs& codecs) {
  // http-response rules: the backend's, then the frontend's.
  ProxyEnv env(w_.process(), w_.id(), &l_, fe_);
  rules::RequestView view = view_of_response(code, edit, &codecs, env);
  // The body the rules saw lives in the mux's buffer, which moves on once they are done (the
  // mux sets it again before it resumes them).
  ForgetBody forget{*this};
  for (; res_px_ < 2; ++res_px_, res_rule_ = 0) {
    Proxy* px = res_px_ == 0 ? be_ : be_ == &fe_ ? nullptr : &fe_;
    if (!px || px->settings.h.response_rules.empty()) continue;
    rules::Verdict v = run_rules(px->settings.h.response_rules, rules::RuleSide::kResponse, edit,
                                 view, res_rule_);
    if (v.kind == rules::Verdict::Kind::kContinue) continue;
    if (v.kind == rules::Verdict::Kind::kWaitBody) {
      res_rule_ = v.resume;
      res_body_wait_ = {v.wait_ms, v.wait_at_least};
      return Next::kWait;
    }
    // deny / return / redirect: the server's response is dropped (the mux closes its connection,
    // as its body was not read) and the rule's answer goes to the client instead, as in HAProxy.
    int st = 0;
    log::Termination t{Cause::kLocal, FinalState::kHeaders};
    std::string bytes;
    switch (v.kind) {
      case rules::Verdict::Kind::kDeny:
        w_.be_counters(be_->index).dresp.add();
        if (px == &fe_) w_.fe_counters(fe_.index).dresp.add();
        leg_.server_counters().dresp.add();
        st = v.status ? v.status : 502;
        t = {Cause::kProxy, FinalState::kHeaders};
        break;
      case rules::Verdict::Kind::kReturn:
        st = v.status ? v.status : 200;
        break;
      case rules::Verdict::Kind::kRedirect:
        st = v.status ? v.status : 302;
        bytes = redirect_bytes(st, v.location, v.set_cookie);
        break;
      case rules::Verdict::Kind::kSilentDrop:
        // Nothing reaches the client, not even a reset. Counted as a denied request on the
        // frontend and the backend and logged with the server's status and `PR--`, as
        // HAProxy 3.5 does (measured).
        w_.be_counters(be_->index).dreq.add();
        w_.fe_counters(fe_.index).dreq.add();
        *reply_ = LocalReply{code, {Cause::kProxy, FinalState::kRequest}, {}, true, false, false};
        reply_->silent = true;
        reply_->rst_ttl = v.rst_ttl;
        return Next::kReply;
      case rules::Verdict::Kind::kContinue:
      case rules::Verdict::Kind::kService:   // request rules only
      case rules::Verdict::Kind::kAuth:
      case rules::Verdict::Kind::kTarpit:
      case rules::Verdict::Kind::kReject:
      case rules::Verdict::Kind::kWaitBody:
        break;
    }
    if (!bytes.empty()) {
      *reply_ = LocalReply{st, t, std::move(bytes), false, true, false};
    } else if (v.raw) {
      *reply_ = LocalReply{st, t, *v.raw, false, true, false};
    } else if (v.errorpage && http::has_error_page(st)) {
      *reply_ = error_reply(st, t, false);
    } else {
      *reply_ = LocalReply{st, t, rules::reply_bytes(st, v), false, true, false};
    }
    return Next::kReply;
  }
  if (be_http().checkcache && block_cacheable_cookie(code, edit)) return Next::kReply;
  if (ck_ && ck_->active) cookie_response(code, edit);
  after_response(code, edit, &codecs);
  return Next::kForward;
}

namespace {

// Whether a response would be stored by a shared cache with the server's Set-Cookie in it, by
// HAProxy's reading: a safe method, a status cacheable by default, no Pragma: no-cache, no
// Cache-Control value that forbids storing it or its cookie (a later `public` allows it again),
// and freshness (max-age, s-maxage, Expires) or a validator (ETag, Last-Modified).
bool cacheable_with_cookie(http::Method m, int status, const std::vector<http::Header>& hs) {
  using M = http::Method;
  if (m != M::kGet && m != M::kHead && m != M::kOptions && m != M::kTrace) return false;
  switch (status) {
    case 200: case 203: case 204: case 206: case 300: case 301: case 404: case 405: case 410:
    case 414: case 501:
      break;
    default:
      return false;
  }
  auto is = [](std::string_view a, std::string_view b) { return base::iequals(a, b); };
  auto starts = [](std::string_view a, std::string_view b) {
    return a.size() >= b.size() && base::iequals(a.substr(0, b.size()), b);
  };
  bool cookie = false, cacheable = true, with_cookie = true, fresh = false, validator = false;
  for (const auto& h : hs) {
    if (is(h.name, "set-cookie")) cookie = true;
    else if (is(h.name, "expires")) fresh = true;
    else if (is(h.name, "etag") || is(h.name, "last-modified")) validator = true;
  }
  if (!cookie) return false;
  // Pragma: only the first field, whole.
  for (const auto& h : hs) {
    if (!is(h.name, "pragma")) continue;
    if (is(base::trim(h.value, " \t"), "no-cache")) return false;
    break;
  }
  bool cc_fresh = false;
  for (const auto& h : hs) {
    if (!is(h.name, "cache-control")) continue;
    std::string_view rest = h.value;
    while (!rest.empty()) {
      const std::size_t comma = std::min(rest.find(','), rest.size());
      std::string_view v = base::trim(rest.substr(0, comma), " \t");
      rest.remove_prefix(std::min(comma + 1, rest.size()));
      if (is(v, "public")) {
        cacheable = with_cookie = true;
      } else if (is(v, "private") || is(v, "no-cache") || is(v, "no-store") || is(v, "max-age=0") ||
                 is(v, "s-maxage=0")) {
        cacheable = with_cookie = false;
      } else if (starts(v, "no-cache=\"set-cookie")) {
        with_cookie = false;
      } else if (starts(v, "s-maxage") || starts(v, "max-age")) {
        cc_fresh = true;
      }
    }
  }
  return cacheable && with_cookie && (cc_fresh || fresh || validator);
}

}  // namespace

bool HttpTxn::block_cacheable_cookie(int code, const rules::HeadEdit& edit) {
  if (!cacheable_with_cookie(method_, code, edit.headers)) return false;
  w_.be_counters(be_->index).dresp.add();
  w_.fe_counters(fe_.index).dresp.add();
  leg_.server_counters().dresp.add();
  const lb::Server* srv = leg_.server();
  w_.logs().send(be_->settings.logs, kAlert,
                 fmt::format("Blocking cacheable cookie in response from instance {}, server {}.",
                             be_->settings.name, srv ? srv->name() : "<dispatch>"));
  // HAProxy 3.5 answers with its page for the server's status (500's when it has none) and
  // logs the server's status, PH.
  *reply_ = error_reply(code, {Cause::kProxy, FinalState::kHeaders}, false);
  return true;
}

// The server's Set-Cookie fields and insert mode's own (proxy/cookie.h), after the
// http-response rules and before http-after-response, as in HAProxy.
void HttpTxn::cookie_response(int code, rules::HeadEdit& edit) {
  CookieTxn& t = *ck_;
  const lb::Server* srv = leg_.server();
  CookieResponse in;
  in.ck = be_->settings.cookie.get();
  in.capture = fe_.settings.h.capture_cookie;
  in.capture_len = fe_.settings.h.capture_cookie_len;
  in.server = srv ? static_cast<int>(srv->index()) : -1;
  in.direct = srv && t.server == in.server && !leg_.redispatched();
  in.post = method_ == http::Method::kPost;
  in.status = code;
  in.now_s = static_cast<uint32_t>(base::wall_us() / 1000000);
  if (response_cookies(in, edit.headers, edit.storage, t)) edit.changed = true;
}

HttpTxn::Next HttpTxn::response_content(int code, rules::HeadEdit& edit, HttpCodecs& codecs) {
  // HAProxy runs them in HTTP mode once the response head is there, before the http-response
  // rules; the configuration refused the fetches of the raw response and the actions other
  // than accept, reject, close and the variables.
  ProxyEnv env(w_.process(), w_.id(), &l_, fe_);
  rules::RequestView view = view_of_response(code, edit, &codecs, env);
  const rules::TcpVerdict v =
      rules::run_tcp_rules(be_->settings.tcp_response_rules, view, {}, &stream_.last_rule);
  if (v == rules::TcpVerdict::kReject) {
    // The response is denied: the client gets nothing and the stream ends as HAProxy's (PD).
    w_.be_counters(be_->index).dresp.add();
    w_.fe_counters(fe_.index).dresp.add();
    leg_.server_counters().dresp.add();
    *reply_ = LocalReply{-1, {Cause::kProxy, FinalState::kData}, {}, true, false, false};
    return Next::kReply;
  }
  if (v == rules::TcpVerdict::kClose) {
    // The server connection is closed before its response went anywhere: a 502 (SH).
    const log::Termination t{Cause::kServerClose, FinalState::kHeaders};
    count_server_error(502, t);
    *reply_ = error_reply(502, t, false);
    return Next::kReply;
  }
  return Next::kForward;
}

void HttpTxn::uncount_out(uint64_t n) {
  uint64_t lost = std::min<uint64_t>(n, bytes_out);
  if (lost == 0) return;
  bytes_out -= lost;
  w_.fe_counters(fe_.index).bout.take_back(lost);
  if (be_) w_.be_counters(be_->index).bout.take_back(lost);
  if (be_ && leg_.server()) leg_.server_counters().bout.take_back(lost);
}

void HttpTxn::count_server_error(int st, log::Termination t) {
  if (!be_) return;
  if ((t.server_side() || t.cause == Cause::kProxy) && (st == 502 || st == 504)) {
    w_.be_counters(be_->index).eresp.add();
    if (lb::Server* s = leg_.server()) {
      leg_.server_counters().eresp.add();
      // `observe layer7`: no usable response, named as HAProxy 3.5 names it. Its HTTP/1
      // layer reports a close before the response as a read error, as it does a reset.
      s->analyze(t.cause == Cause::kServerTimeout ? lb::Hana::kReadTimeout
                 : t.cause == Cause::kProxy       ? lb::Hana::kHttpHdrRsp
                                                  : lb::Hana::kReadError);
    }
  }
}

void HttpTxn::count_server_abort(bool response_error) {
  auto& bc = w_.be_counters(be_->index);
  bc.srv_abrt.add();
  if (response_error) bc.eresp.add();
  if (leg_.server()) {
    auto& sc = leg_.server_counters();
    sc.srv_abrt.add();
    if (response_error) sc.eresp.add();
  }
}

void HttpTxn::count_abort(log::Termination t) {
  if (t.client_side()) {
    w_.be_counters(be_->index).cli_abrt.add();
    if (leg_.server()) leg_.server_counters().cli_abrt.add();
  }
  // A server that closed or reset in the data phase is also a response error (eresp includes
  // those aborts); a server timeout (sD) is an abort only, as in HAProxy.
  if (t.server_side())
    count_server_abort(t == log::Termination{Cause::kServerClose, FinalState::kData});
}

// The status the client got, on the frontend and the backend. Pages sluice generates (502, 503,
// 504, rule answers) count there only, not on the server, which sent none of them.
void HttpTxn::count_status(int st) {
  int cls = status_class(st);
  w_.fe_counters(fe_.index).hrsp[cls].add();
  if (be_) w_.be_counters(be_->index).hrsp[cls].add();
}

void HttpTxn::count_server_status(int st) {
  if (be_ && leg_.server()) leg_.server_counters().hrsp[status_class(st)].add();
}

void HttpTxn::capture_error(bool response, std::string_view bytes, http::ParseError why) const {
  stats::ErrorSnapshot e;
  e.response = response;
  const Proxy& owner = response && be_ ? *be_ : fe_;
  const Proxy* other = response ? &fe_ : be_;
  e.proxy = owner.index;
  e.proxy_name = owner.settings.name;
  e.proxy_id = owner.settings.id;
  e.other_name = other ? other->settings.name : "<NONE>";
  e.other_id = other ? other->settings.id : -1;
  const lb::Server* srv = leg_.server();
  e.server_name = response && srv ? srv->name() : "<NONE>";
  e.server_id = response && srv ? srv->settings().id : -1;
  e.wall_us = base::wall_us();
  e.source = client_.to_string();
  e.reason = http::to_string(why);
  e.len = bytes.size();
  e.bytes.assign(bytes);
  w_.capture_error(std::move(e));
}

void HttpTxn::fill_times(log::Record& r) const {
  uint64_t start = t_first_byte_ms ? t_first_byte_ms : t_idle_ms;
  auto span = [](uint64_t from, uint64_t to) -> long {
    return from && to && to >= from ? static_cast<long>(to - from) : -1;
  };
  const uint64_t t_queued = leg_.queued_ms(), t_connect = leg_.connect_ms();
  const uint64_t t_connected = leg_.connected_ms();
  r.http = true;
  r.date_wall_us = t_first_byte_wall_us ? t_first_byte_wall_us : base::wall_us();
  r.tr = t_head_ms ? span(start, t_head_ms) : -1;
  // Tw: from the end of the head to the first connection attempt; -1 when never routed.
  if (t_head_ms && (t_connect || t_queued || leg_.server()))
    r.tw = t_queued && t_connect ? span(t_queued, t_connect) : 0;
  if (killed_request) r.tr = -1;
  if (tarpit_ms >= 0) r.tw = tarpit_ms;
  if (t_connected) r.tc = span(t_connect, t_connected);
  if (t_response_ms) r.tresp = span(t_connected, t_response_ms);
  r.ti = t_first_byte_ms && t_first_byte_ms >= t_idle_ms
             ? static_cast<long>(t_first_byte_ms - t_idle_ms)
             : 0;
  r.accept_wall_us = r.date_wall_us - static_cast<uint64_t>(r.ti) * 1000;
}

bool HttpTxn::received_line(sample::HttpMsg& m) const {
  std::string_view rl = req_line;
  std::size_t a = rl.find(' '), b = rl.rfind(' ');
  if (rl.empty() || a == std::string_view::npos || b <= a) return false;
  m.line_method = rl.substr(0, a);
  m.line_target = rl.substr(a + 1, b - a - 1);
  m.version = rl.substr(b + 1);
  return true;
}

bool HttpTxn::stream_query(sample::Env::Query q, bool response_side, int64_t* out) const {
  using Q = sample::Env::Query;
  switch (q) {
    case Q::kAcceptDateUs: {
      log::Record r;
      fill_times(r);
      *out = static_cast<int64_t>(r.accept_wall_us ? r.accept_wall_us : r.date_wall_us);
      return true;
    }
    // set-timeout's values; the proxies' settings otherwise (ProxyEnv).
    case Q::kCurClientTimeout:
    case Q::kCurServerTimeout:
    case Q::kCurTunnelTimeout: {
      using T = rules::StreamEdit;
      const T::Timeout t = q == Q::kCurClientTimeout ? T::kClient
                           : q == Q::kCurServerTimeout ? T::kServer : T::kTunnel;
      if (!stream_.has_timeout(t)) return false;
      *out = stream_.timeout_ms[t];
      return true;
    }
    case Q::kFcErr: *out = fc_err; return true;
    case Q::kFcGlitches: *out = fc_glitches; return true;
    case Q::kBcGlitches:
      if (!leg_.connected_ms()) return false;   // no server connection yet
      *out = bc_glitches;
      return true;
    case Q::kCpuCalls:
      // Every evaluation runs inside a call. A keep-alive request read in the same call that
      // finished the one before it (next_request() zeroed the count) is in its first call.
      *out = std::max<uint32_t>(calls, 1);
      return true;
    case Q::kLastRuleLine:
      if (!stream_.last_rule) return false;
      *out = stream_.last_rule->line;
      return true;
    default:
      break;
  }
  if (leg_query(leg_, true, reused_server_conn, q, out)) return true;
  log::Record r;
  fill_times(r);
  if (!response_side) r.tr = -1;   // HAProxy notes the request's time once its rules ran
  return log::stream_query(r, q, false, out);
}

bool HttpTxn::stream_text(sample::Env::TextQuery q, std::string_view* out) const {
  using TQ = sample::Env::TextQuery;
  switch (q) {
    case TQ::kTermState:   // "--" while the stream runs, as HAProxy's
      term_text_[0] = log::cause_letter(term.cause);
      term_text_[1] = log::state_letter(term.state);
      *out = std::string_view(term_text_, 2);
      return true;
    case TQ::kLastRuleFile:
    case TQ::kLastEntity:
      if (!stream_.last_rule) return false;
      *out = q == TQ::kLastRuleFile ? stream_.last_rule->file()
                                    : std::string_view(stream_.last_rule->where);
      return true;
    default:
      return false;
  }
}

void HttpTxn::log(uint64_t now, bool early) {
  if (logged) return;
  logged = true;
  if (fe_.settings.log_close) emit_line(now, early, kLogClose);
}

void HttpTxn::emit_step(LogStep step) { emit_line(w_.loop().now_ms(), true, step); }

void HttpTxn::emit_line(uint64_t now, bool early, LogStep step) {
  const auto& s = fe_.settings;
  if (!s.log_format || s.logs.empty() || quiet || stream_.log_level < 0) return;
  if (s.dontlognull && t_first_byte_ms == 0) return;
  uint64_t start = t_first_byte_ms ? t_first_byte_ms : t_idle_ms;
  const lb::Server* srv = leg_.server();
  const uint64_t t_connect = leg_.connect_ms();
  const uint64_t t_connected = leg_.connected_ms();
  log::Record r;
  fill_times(r);
  r.client = &client_;
  r.frontend = s.name;
  note_tls(r, client_tls_);
  r.backend = be_ ? be_->settings.name : s.name;
  r.server = srv && t_connect ? std::string_view(srv->name()) : std::string_view("<NOSRV>");
  r.total = static_cast<long>(now - start);
  r.status = status;
  r.bytes_out = bytes_out;
  r.bytes_to_client = res_sent;
  r.term = term;
  // Counts as HAProxy logs them, once this stream left the backend and the server.
  r.actconn = w_.process().actconn().current();
  r.feconn = fe_.feconn.current();
  const int self = early ? 0 : 1;
  r.beconn = be_ ? std::max(0, be_->be_conns.load(std::memory_order_relaxed) - self) : 0;
  r.srvconn = srv ? std::max(0, srv->current_conns() - self) : 0;
  r.retries = leg_.retries();
  r.redispatched = leg_.redispatched();
  r.req_capture_slots = s.h.capture_request.size();
  r.res_capture_slots = s.h.capture_response.size();
  if (caps_) {
    r.req_captures = caps_->req();
    r.res_captures = caps_->res();
  }
  r.request_line = req_line;
  const bool final = step == kLogClose;
  if (!final) {
    // A step before the end, as HAProxy 3.5 logs it: no status yet (0 at accept, where it
    // has no transaction), the request's time only once its rules ran, no request line
    // before the head.
    r.status = step == kLogAccept ? 0 : status > 0 ? status : -1;
    if (step == kLogRequest) r.tr = -1;
    if (step == kLogAccept) r.request_line = "<BADREQ>";
  }
  if (ck_ && ck_->active) {
    r.has_cli_cookie = ck_->has_cli;
    r.cli_cookie = ck_->cli;
    r.has_srv_cookie = ck_->has_srv;
    r.srv_cookie = ck_->srv;
  }
  if (be_ && be_->settings.cookie && be_->settings.cookie->log_flags()) {
    const bool a = ck_ && ck_->active;
    r.cookie_flags[0] = a ? ck_->ck : 'N';
    r.cookie_flags[1] = a ? ck_->sck : 'N';
  }
  // What only log-format aliases and %[...] read.
  r.logasap = final && s.logasap;
  r.local = local_addr();
  r.server_addr = t_connected ? leg_.target() : nullptr;
  r.backend_src = t_connected ? leg_.source() : nullptr;
  r.bytes_in = req_sent;
  r.request_counter = stream_number();
  r.log_counter = fe_.log_count.fetch_add(1, std::memory_order_relaxed);
  r.unique_id = unique_id;
  r.hostname = w_.logs().host();
  r.pid = w_.logs().pid();
  ProxyEnv env(w_.process(), w_.id(), &l_, fe_);
  env.rec = &r;
  env.be = be_;
  env.srv = srv && t_connect ? srv : nullptr;
  env.stream = this;
  env.response_side = true;
  sample::Ctx ctx;
  ctx.avail = log::kLogAvail;
  ctx.src = &client_;
  ctx.dst = r.local;
  ctx.dst_port = local_port();
  ctx.env = &env;
  ctx.now_us = base::wall_us();
  ctx.captures = captures();
  ctx.unique_id = unique_id;
  ctx.sess_vars = sess_vars_.get();
  if (vars_codecs_) {
    ctx.txn_vars = &vars_codecs_->txn_vars;
    ctx.req_vars = &vars_codecs_->req_vars;
    ctx.res_vars = &vars_codecs_->res_vars;
  }
  if (received_line(ctx.req)) {
    ctx.req.method = ctx.req.line_method;
    ctx.req.target = ctx.req.line_target;
  }
  ctx.res.status = status > 0 ? status : 0;
  // A request that never parsed ("<BADREQ>": a bad or cut head, a timeout, a fresh connection
  // closed) is HAProxy's error without a stream: error-log-format's line. set-log-level:
  // that level (-1: the default, info or err).
  const bool session_error = final && req_line == "<BADREQ>";
  const log::Format& f =
      session_error && s.error_log_format ? *s.error_log_format : *s.log_format;
  int level = stream_.log_level > 0 ? stream_.log_level - 1 : -1;
  w_.logs().send_traffic(s, f, r, &ctx, level, session_error);

}

}  // namespace sluice::proxy

// HttpTxn, the request: rules, the backend choice, forwardfor, the services, and the answers
// sluice gives itself.
#include "proxy/http_txn.h"

#include <cctype>
#include <optional>

#include <fmt/format.h>

#include "base/assert.h"
#include "base/clock.h"
#include "base/strings.h"
#include "http/forward.h"
#include "proxy/balance_key.h"
#include "proxy/server_pick.h"
#include "proxy/stats_view.h"

namespace sluice::proxy {

using log::Cause;
using log::FinalState;

// The response of `redirect`. Only the temporary codes say `cache-control: no-cache`: a
// permanent redirect (301, 308) stays cacheable, as HAProxy writes them.
std::string HttpTxn::redirect_bytes(int status, std::string_view location, std::string_view set_cookie) {
  bool temporary = status == 302 || status == 303 || status == 307;
  std::string out = fmt::format("HTTP/1.1 {} {}\r\ncontent-length: 0\r\nlocation: {}\r\n{}", status,
                                http::default_reason(status), location,
                                temporary ? "cache-control: no-cache\r\n" : "");
  if (!set_cookie.empty()) out += fmt::format("set-cookie: {}\r\n", set_cookie);
  out += "\r\n";
  return out;
}

namespace {

// What the stats services read of a request: its method, its target as the rules left it and
// its first Authorization field.
stats::ServiceRequest service_request(http::Method method, const rules::HeadEdit& edit) {
  stats::ServiceRequest r;
  using M = stats::ServiceRequest::Method;
  r.method = method == http::Method::kGet    ? M::kGet
             : method == http::Method::kHead ? M::kHead
             : method == http::Method::kPost ? M::kPost
                                             : M::kOther;
  r.target = edit.target;
  for (const auto& h : edit.headers) {
    if (!http::iequals(h.name, "authorization")) continue;
    r.authorization = h.value;
    break;
  }
  return r;
}

}  // namespace

HttpTxn::HttpTxn(Worker& w, Listener& l, Session& owner, const net::SocketAddress& client)
    : t_idle_ms(w.loop().now_ms()),
      w_(w),
      l_(l),
      fe_(*l.proxy),
      t_accept_ms_(t_idle_ms),
      client_(client),
      leg_(w, owner, client_, l.port) {
  leg_.keep_source(fe_.settings.log_backend_src);
}

void HttpTxn::first_byte(uint64_t now) {
  t_first_byte_ms = now;
  t_first_byte_wall_us = base::wall_us();
  log_step(kLogAccept);   // HAProxy's stream begins with the request's first byte
}

rules::TcpVerdict HttpTxn::session_verdict(int client_fd) {
  rules::RequestView view;
  attach_vars(view, nullptr);
  net::SocketAddress dst;
  const rules::TcpVerdict v =
      w_.session_verdict(l_, client_fd, view, {&client_, &dst, nullptr, &rst_ttl});
  // set-src wrote client_ itself: the connection's source from now on. set-dst wrote `dst`.
  if (view.dst == &dst) {
    conn_dst_ = std::make_unique<net::SocketAddress>(dst);
    leg_.set_local_port(dst.port());
  }
  return v;
}

rules::TcpVerdict HttpTxn::content_verdict(int client_fd, const http::RequestHead& head,
                                           HttpCodecs& codecs) {
  // The rules may set variables and fill capture slots for the request that follows, and
  // change the stream's addresses (set-src, set-dst...) as http-request rules do. They read
  // the request as received (HAProxy runs them once it is parsed).
  rules::RequestView view;
  view.req.method = head.method;
  view.req.target = head.target;
  view.req.version = head.version;
  view.req.headers = &head.headers;
  attach_vars(view, &codecs);
  const auto& fcap = fe_.settings.h;
  if (!fcap.capture_request.empty() || !fcap.capture_response.empty()) make_captures();
  view.captures = captures();
  view.src = &client_;
  net::SocketAddress local;
  view.dst = conn_dst_ ? conn_dst_.get() : tcp_rule_view(l_, client_fd, client_, local).dst;
  view.dst_port = local_port();
  rules::TcpAddrs addrs;
  if (fe_.settings.tcp_content_rewrites) {
    if (!stream_.addrs) stream_.addrs = std::make_unique<rules::StreamAddrs>();
    addrs = {&stream_.addrs->src, &stream_.addrs->dst};
  }
  addrs.rst_ttl = &rst_ttl;
  const rules::TcpVerdict v =
      w_.content_verdict(l_, client_fd, view, this, addrs, &stream_.last_rule);
  if (addrs.src) {
    if (view.src == addrs.src) stream_.addrs->src_set = true;
    if (view.dst == addrs.dst) stream_.addrs->dst_set = true;
    adopt_addresses(view);
  }
  if (v != rules::TcpVerdict::kReject && v != rules::TcpVerdict::kSilentDrop)
    return rules::TcpVerdict::kAccept;
  // As HAProxy: a denied request on the frontend (not a request in req_tot, no status), closed
  // without a response and logged `PR` with "<BADREQ>" and no request timer.
  req_line.clear();
  t_head_ms = 0;
  status = -1;
  return v;
}

bool HttpTxn::backend_content_allowed(rules::RequestView& view) {
  // The backend's `tcp-request content` rules, when the request enters it (before its
  // http-request rules), on the parsed request as HAProxy runs them in HTTP mode.
  rules::TcpAddrs addrs;
  if (be_->settings.tcp_content_rewrites) {
    if (!stream_.addrs) stream_.addrs = std::make_unique<rules::StreamAddrs>();
    addrs = {&stream_.addrs->src, &stream_.addrs->dst};
  }
  const rules::TcpVerdict v =
      rules::run_tcp_rules(be_->settings.tcp_content_rules, view, addrs, &stream_.last_rule);
  if (addrs.src) {
    if (view.src == addrs.src) stream_.addrs->src_set = true;
    if (view.dst == addrs.dst) stream_.addrs->dst_set = true;
    adopt_addresses(view);
  }
  return v != rules::TcpVerdict::kReject;   // silent-drop is refused here (configuration)
}

rules::RequestView HttpTxn::view_of_request(rules::HeadEdit& edit) {
  rules::RequestView view;
  view.req.method = edit.method;
  view.req.target = edit.target;
  view.req.headers = &edit.headers;
  view.src = &client_;
  view.dst_port = local_port();
  view.dst = local_addr();
  view.captures = captures();
  return view;
}

rules::Verdict HttpTxn::run_rules(const std::vector<rules::HttpRule>& list, rules::RuleSide side,
                                  rules::HeadEdit& edit, rules::RequestView& view,
                                  std::size_t first) {
  rules::Verdict v = rules::apply_rules(list, side, edit, view, &stream_, first);
  if (stream_.addrs) adopt_addresses(view);
  return v;
}

// set-src / set-dst and their ports changed the stream's addresses: the client address the
// rest of the request sees (fetches, forwardfor, balance source, the log) becomes the new
// one until the next request, as HAProxy's stream addresses; the connection's own is kept.
void HttpTxn::adopt_addresses(rules::RequestView& view) {
  rules::StreamAddrs& a = *stream_.addrs;
  if (a.src_set) {
    if (!conn_src_) conn_src_ = std::make_unique<net::SocketAddress>(client_);
    client_ = a.src;
    view.src = &client_;
  }
  if (a.dst_set) {
    view.dst = &a.dst;
    view.dst_port = a.dst.port();
    leg_.set_local_port(a.dst.port());
  }
}

class HttpTxn::RequestScope {
 public:
  RequestScope(HttpTxn& t, const http::RequestHead& head, rules::HeadEdit& edit,
               HttpCodecs& codecs)
      : t_(t), head_(head), edit_(edit), codecs_(codecs) {}
  rules::RequestView& view() {
    if (!view_) build();
    return *view_;
  }
  bool built() const { return view_.has_value(); }
  // The backend chosen: what be_name and the backend's fetches answer from now on.
  void set_backend(const Proxy* be) {
    if (env_) env_->be = be;
  }

 private:
  void build() {
    env_.emplace(t_.w_.process(), t_.w_.id(), &t_.l_, t_.fe_);
    env_->stream = &t_;
    env_->be = t_.be_;
    view_.emplace(t_.view_of_request(edit_));
    rules::RequestView& v = *view_;
    v.req.version = head_.version;
    v.req.line_method = head_.method;
    v.req.line_target = head_.target;
    if (t_.body_state_ != stats::ServiceRequest::Body::kNotRead) {
      v.req.body = t_.body_;
      v.req.body_final = t_.body_state_ == stats::ServiceRequest::Body::kComplete;
    } else if (t_.pending_chunked_) {
      codecs_.req_body.clear();
      v.req.body_final = http::decode_chunks(t_.pending_body_, codecs_.req_chunks,
                                             &codecs_.req_body) == http::ChunkEvent::Kind::kDone;
      v.req.body = codecs_.req_body;
    } else {
      v.req.body = t_.pending_body_;
      v.req.body_final = t_.pending_whole_;
    }
    v.env = &*env_;
    v.avail = sample::kAtHttpRequest;
    t_.attach_vars(v, &codecs_);
  }

  HttpTxn& t_;
  const http::RequestHead& head_;
  rules::HeadEdit& edit_;
  HttpCodecs& codecs_;
  std::optional<ProxyEnv> env_;
  std::optional<rules::RequestView> view_;
};

HttpTxn::Next HttpTxn::on_request(const http::RequestHead& head, rules::HeadEdit& edit,
                                  HttpCodecs& codecs) {
  reply_ = &codecs.reply;
  lb_key_ = &codecs.lb_key;
  lb_key_set_ = false;
  const uint64_t now = w_.loop().now_ms();
  if (t_first_byte_ms == 0) first_byte(now);
  t_head_ms = now;
  req_sent = 0;
  res_sent = 0;
  // Before any rule changes the head, as HAProxy captures.
  const auto& fcap = fe_.settings.h;
  if (!fcap.capture_request.empty() || !fcap.capture_response.empty()) {
    // Sized on the connection's first request; next_request() clears the values.
    make_captures();
    caps_->capture_headers(false, head.headers);
  }
  auto& fc = w_.fe_counters(fe_.index);
  fc.req_tot.add();
  fc.req_rate.add(now);
  // The request line is kept only for the log line that will quote it.
  const auto& fs = fe_.settings;
  // The process-wide stream number (%rt, unique ids) is a shared counter: taken only when a
  // log line or a unique id may show it.
  const bool logs = fs.log_format && !fs.logs.empty();
  const bool keep_line = logs || fs.unique_id_format;
  if (keep_line) {
    stream_number();
    keep_request_line(head);
  }
  log_step(kLogRequest);
  method_ = head.method_id;
  http11_ = head.http11();
  RequestScope rs(*this, head, edit, codecs);
  if (fs.unique_id_format) make_unique_id(edit, rs.view());
  live_request_ = &rs;
  const bool forward = route(edit, rs);
  live_request_ = nullptr;
  // Response rules read the request line as received too (capture.req.uri, .method, .ver).
  if (!keep_line && has_response_rules()) keep_request_line(head);
  if (!forward) return Next::kReply;
  const HttpSettings& fh = fe_.settings.h;
  const HttpSettings& bh = be_->settings.h;
  using HN = HttpSettings::HdrNames;
  const HN names = bh.restrict_hdr_names != HN::kUnset ? bh.restrict_hdr_names : fh.restrict_hdr_names;
  if ((names == HN::kDelete || names == HN::kReject) && restrict_header_names(edit))
    return Next::kReply;
  if (bh.forwarded.enabled) add_forwarded(edit, rs.view());
  add_forwardfor(edit);
  if (fh.originalto.enabled || bh.originalto.enabled) add_originalto(edit);
  return Next::kForward;
}

void HttpTxn::keep_request_line(const http::RequestHead& head) {
  req_line.assign(head.method);
  req_line += ' ';
  req_line += head.target;
  req_line += ' ';
  req_line += head.version;
}

// Frontend rules, backend choice, backend rules. False when the request is answered locally
// (reply_).
void HttpTxn::attach_vars(rules::RequestView& view, HttpCodecs* codecs) {
  sess_room_.set_max(sample::var_limits().sess);
  if (codecs) {
    vars_codecs_ = codecs;
    codecs->txn_room.set_up(&sess_room_);
    view.txn_vars = &codecs->txn_vars;
    view.req_vars = &codecs->req_vars;
    view.res_vars = &codecs->res_vars;
  }
  if (!sess_vars_ && fe_.settings.sess_vars)
    sess_vars_ = std::make_unique<sample::VarStore>(sample::Scope::kSess, 0, &sess_room_);
  view.sess_vars = sess_vars_.get();
}

bool HttpTxn::route(rules::HeadEdit& edit, RequestScope& rs) {
  // deny / return: the proxy's page for the status, or the rule's own response. A body that
  // already arrived whole is passed over (skip_body) so that the connection stays usable.
  auto reply = [&](const rules::Verdict& v, int st, log::Termination t) {
    if (v.raw) *reply_ = LocalReply{st, t, *v.raw, false, true, true};
    else if (v.errorpage && http::has_error_page(st)) *reply_ = error_reply(st, t, false, true, true);
    else *reply_ = LocalReply{st, t, rules::reply_bytes(st, v), false, true, true};
  };
  auto answer = [&](const rules::Verdict& v, Proxy& px) {
    auto& pc = (&px == &fe_) ? w_.fe_counters(fe_.index) : w_.be_counters(px.index);
    switch (v.kind) {
      case rules::Verdict::Kind::kContinue:
      case rules::Verdict::Kind::kWaitBody:   // response rules only
        return false;
      case rules::Verdict::Kind::kDeny: {
        pc.dreq.add();
        if (&px != &fe_) w_.fe_counters(fe_.index).dreq.add();
        reply(v, v.status ? v.status : 403, {Cause::kProxy, FinalState::kRequest});
        return true;
      }
      case rules::Verdict::Kind::kReturn:
        w_.fe_counters(fe_.index).intercepted.add();
        reply(v, v.status ? v.status : 200, {Cause::kLocal, FinalState::kRequest});
        return true;
      case rules::Verdict::Kind::kRedirect: {
        w_.fe_counters(fe_.index).intercepted.add();
        int st = v.status ? v.status : 302;
        *reply_ = LocalReply{st, {Cause::kLocal, FinalState::kRequest},
                            redirect_bytes(st, v.location, v.set_cookie), false, true, true};
        return true;
      }
      case rules::Verdict::Kind::kService:
        w_.fe_counters(fe_.index).intercepted.add();
        serve_metrics(edit);
        return true;
      case rules::Verdict::Kind::kTarpit: {
        // A deny held for `timeout tarpit` of the proxy in charge (the backend once chosen),
        // logged `PT--`, as in HAProxy.
        pc.dreq.add();
        if (&px != &fe_) w_.fe_counters(fe_.index).dreq.add();
        reply(v, v.status ? v.status : 500, {Cause::kProxy, FinalState::kTarpit});
        reply_->delay_ms = (be_ ? be_ : &fe_)->settings.timeouts.tarpit;
        killed_request = true;
        tarpit_ms = reply_->delay_ms;
        return true;
      }
      case rules::Verdict::Kind::kReject:
      case rules::Verdict::Kind::kSilentDrop:
        // Closed without an answer, `PR--` and status -1, counted as denied and among the
        // "other" responses, as HAProxy 3.5 counts them.
        pc.dreq.add();
        if (&px != &fe_) w_.fe_counters(fe_.index).dreq.add();
        count_status(-1);
        *reply_ = LocalReply{-1, {Cause::kProxy, FinalState::kRequest}, {}, true, false, true};
        reply_->silent = v.kind == rules::Verdict::Kind::kSilentDrop;
        reply_->rst_ttl = v.rst_ttl;
        killed_request = true;
        return true;
      case rules::Verdict::Kind::kAuth:
        // Counted and logged as HAProxy does: an intercepted request, `LR--`.
        w_.fe_counters(fe_.index).intercepted.add();
        *reply_ = unauthorized_reply(v.realm.empty() ? px.settings.name : v.realm,
                                     {Cause::kLocal, FinalState::kRequest});
        return true;
    }
    SLUICE_BUG("HttpTxn::route: a verdict without a case");
    return false;
  };

  const auto& fh = fe_.settings.h;
  // `monitor-uri`: before any rule, as in HAProxy; the answer is not logged.
  if (!fh.monitor_uri.empty() && edit.target == fh.monitor_uri) {
    w_.fe_counters(fe_.index).intercepted.add();
    bool fail = false;
    for (const auto& c : fh.monitor_fail) fail = fail || c.eval(rs.view());
    *reply_ = error_reply(fail ? 503 : 200, {Cause::kLocal, FinalState::kRequest}, false, true,
                         true);
    logged = true;
    return false;
  }
  if (!fh.request_rules.empty()) {
    if (answer(run_rules(fh.request_rules, rules::RuleSide::kRequest, edit, rs.view()), fe_))
      return false;
  }
  if (fh.stats.enabled && serve_stats(fe_, edit, rs, answer)) return false;
  if (!fh.redirect_rules.empty() &&
      answer(run_rules(fh.redirect_rules, rules::RuleSide::kRequest, edit, rs.view()), fe_))
    return false;
  // use_backend sees the request as the frontend's rules left it (set-path...), as in HAProxy:
  // apply_rules worked on its own copy of the view.
  if (rs.built()) {
    rules::RequestView& v = rs.view();
    v.req.method = edit.method;
    v.req.target = edit.target;
    v.req.headers = &edit.headers;
  }
  Proxy* be = fe_.target;
  for (const auto& u : fe_.settings.use_backends) {
    if (!u.cond.eval(rs.view())) continue;
    if (!u.dynamic) {
      be = w_.process().proxies()[static_cast<std::size_t>(u.backend)].get();
      break;
    }
    // HAProxy: a name that is no backend ends the rules with the default backend; a backend
    // of the other mode aborts the stream without an answer.
    if (Proxy* named = w_.backend_named(*u.dynamic, rs.view())) {
      if (!named->settings.http) {
        *reply_ = LocalReply{-1, {Cause::kInternal, FinalState::kRequest}, {}, true, false, true};
        return false;
      }
      be = named;
    }
    break;
  }
  if (!be || !be->backend) {
    *reply_ = error_reply(503, {Cause::kServerClose, FinalState::kConnect}, false);
    return false;
  }
  be_ = be;
  rs.set_backend(be_);
  leg_.attach(*be_);   // be_conns, stot, smax, session rate
  auto& bc = w_.be_counters(be_->index);
  bc.req_tot.add();
  bc.req_rate.add(w_.loop().now_ms());
  if (be_ != &fe_ && !be_->settings.tcp_content_rules.empty() &&
      !backend_content_allowed(rs.view())) {
    // A reject: the request is denied, closed without an answer (logged -1 PR, no server).
    bc.dreq.add();
    w_.fe_counters(fe_.index).dreq.add();
    *reply_ = LocalReply{-1, {Cause::kProxy, FinalState::kRequest}, {}, true, false, true};
    return false;
  }
  if (be_ != &fe_ && !be_->settings.h.request_rules.empty()) {
    if (answer(run_rules(be_->settings.h.request_rules, rules::RuleSide::kRequest, edit,
                         rs.view()),
               *be_))
      return false;
  }
  if (be_ != &fe_ && be_->settings.h.stats.enabled && serve_stats(*be_, edit, rs, answer))
    return false;
  if (be_ != &fe_ && !be_->settings.h.redirect_rules.empty() &&
      answer(run_rules(be_->settings.h.redirect_rules, rules::RuleSide::kRequest, edit, rs.view()),
             *be_))
    return false;
  if (be_->settings.cookie_step || !fe_.settings.h.capture_cookie.empty()) {
    cookie_request(edit, rs);
    if (ck_->server >= 0) {
      leg_.force(be_->backend->servers()[static_cast<std::size_t>(ck_->server)].get());
    } else if (!be_->settings.use_servers.empty()) {
      leg_.force(use_server(*be_, rs.view()));
    }
  } else if (!be_->settings.use_servers.empty()) {
    leg_.force(use_server(*be_, rs.view()));
  }
  // The value a hashing algorithm (uri, hdr, url_param, rdp-cookie, hash) hashes.
  const auto& bal = be_->settings.balance;
  lb_key_set_ = bal.kind != lb::BalanceKind::kSource && lb::hashes(bal.kind) &&
                http_key(bal, be_->settings.balance_expr.get(), edit.target, edit.headers,
                         rs.view(), *lb_key_);
  return true;
}

// force-persist / ignore-persist (the first match), then the Cookie fields: `capture cookie`
// and the server the persistence cookie names, which takes the request before use-server and
// load balancing (HAProxy's order).
void HttpTxn::cookie_request(rules::HeadEdit& edit, RequestScope& rs) {
  if (!ck_) ck_ = std::make_unique<CookieTxn>();
  else ck_->reset();
  CookieTxn& t = *ck_;
  t.active = true;
  const ProxySettings& bs = be_->settings;
  for (const auto& r : bs.persist_rules) {
    if (!r.cond.eval(rs.view())) continue;
    (r.force ? t.force : t.ignore) = true;
    break;
  }
  t.cacheable = method_ == http::Method::kGet || method_ == http::Method::kHead;
  struct States final : ServerStates {
    explicit States(const lb::Backend& b) : b_(b) {}
    bool running(int i) const override {
      const lb::Server& s = *b_.servers()[static_cast<std::size_t>(i)];
      return s.check_up() && s.admin_state() != lb::AdminState::kMaint;
    }
    const lb::Backend& b_;
  } states(*be_->backend);
  CookieRequest in;
  in.ck = bs.cookie.get();
  in.capture = fe_.settings.h.capture_cookie;
  in.capture_len = fe_.settings.h.capture_cookie_len;
  in.persist = bs.persist;
  in.now_s = static_cast<uint32_t>(base::wall_us() / 1000000);
  if (request_cookies(in, states, edit.headers, edit.storage, t)) edit.changed = true;
}

// option forwardfor: added if either side asks, unless the client is in an `except` network
// of a side that has the option; the backend's header name wins; if-none only when every side
// with the option says so and the field is present. The field is appended after the rules
// ran, never merged with an existing one, as HAProxy does.
// unique-id-format, rendered when the head arrives (before the rules, which may read it), and
// unique-id-header added to the request for the server.
void HttpTxn::make_unique_id(rules::HeadEdit& edit, rules::RequestView& view) {
  const auto& fs = fe_.settings;
  log::Record r;
  r.client = &client_;
  r.local = local_addr();
  r.date_wall_us = t_first_byte_wall_us ? t_first_byte_wall_us : base::wall_us();
  r.http = true;
  r.ti = t_first_byte_ms >= t_idle_ms ? static_cast<long>(t_first_byte_ms - t_idle_ms) : 0;
  r.accept_wall_us = r.date_wall_us - static_cast<uint64_t>(r.ti) * 1000;
  r.frontend = fs.name;
  note_tls(r, client_tls_);
  r.backend = fs.name;
  r.server = "<NOSRV>";
  r.request_line = req_line;
  r.request_counter = stream_id;
  r.log_counter = fe_.log_count.load(std::memory_order_relaxed);
  r.hostname = w_.logs().host();
  r.pid = w_.logs().pid();
  r.actconn = w_.process().actconn().current();
  r.feconn = fe_.feconn.current();
  r.req_capture_slots = fs.h.capture_request.size();
  if (caps_) r.req_captures = caps_->req();
  unique_id.clear();
  fs.unique_id_format->render(r, &view, unique_id);
  view.unique_id = unique_id;
  if (!fs.unique_id_header.empty()) {
    edit.headers.push_back({edit.keep(fs.unique_id_header), edit.keep(unique_id)});
    edit.changed = true;
  }
}

void HttpTxn::add_forwardfor(rules::HeadEdit& edit) const {
  const auto& fh = fe_.settings.h;
  const auto& bh = be_->settings.h;
  const bool fe_ff = fh.forwardfor.enabled, be_ff = be_ != &fe_ && bh.forwardfor.enabled;
  if (!fe_ff && !be_ff) return;
  bool except = (fe_ff && fh.forwardfor.has_except && fh.forwardfor.except.contains(client_)) ||
                (be_ff && bh.forwardfor.has_except && bh.forwardfor.except.contains(client_));
  const std::string& name = be_ff ? bh.forwardfor.header : fh.forwardfor.header;
  bool if_none = (!fe_ff || fh.forwardfor.if_none) && (!be_ff || bh.forwardfor.if_none);
  bool present = false;
  if (if_none) {
    for (const auto& h : edit.headers)
      if (http::iequals(h.name, name)) present = true;
  }
  bool unix_client = client_.family() == AF_UNIX;
  if (!except && !(if_none && present) && !unix_client)
    edit.headers.push_back({edit.keep(name), edit.keep(client_.host_string())});
}

void HttpTxn::keep_request(const rules::HeadEdit& edit, HttpCodecs& codecs) {
  // Response rules may look at the request: an owned copy past the buffer.
  rules::HeadEdit& copy = codecs.req_copy;
  copy = rules::HeadEdit{};
  copy.method = copy.keep(std::string(edit.method));
  copy.target = copy.keep(std::string(edit.target));
  for (const auto& h : edit.headers)
    copy.headers.push_back({copy.keep(std::string(h.name)), copy.keep(std::string(h.value))});
  have_req_copy_ = true;
}

// `stats uri` (the page of `px`, the frontend or the backend): when the service claims the
// request, the proxy's `stats http-request` rules run on it (HAProxy's order: after the
// proxy's own http-request rules), its `stats admin` conditions say whether the admin actions
// are open, and the service answers. True when the request was answered.
bool HttpTxn::serve_stats(Proxy& px, rules::HeadEdit& edit, RequestScope& rs,
                          const AnswerFn& answer) {
  const HttpSettings& h = px.settings.h;
  if (!stats::HttpService::claims(service_request(method_, edit), h.stats)) return false;
  if (!h.stats_rules.empty()) {
    rules::Verdict v = run_rules(h.stats_rules, rules::RuleSide::kRequest, edit, rs.view());
    if (v.kind == rules::Verdict::Kind::kAuth) {
      // The stats rules' realm defaults to the page's, not to the proxy's name.
      w_.fe_counters(fe_.index).intercepted.add();
      *reply_ = unauthorized_reply(v.realm.empty() ? std::string_view("HAProxy Statistics")
                                                   : std::string_view(v.realm),
                                   {Cause::kLocal, FinalState::kRequest});
      return true;
    }
    if (answer(v, px)) return true;
    // A rule may have rewritten the target out of the page's prefix.
    if (!stats::HttpService::claims(service_request(method_, edit), h.stats)) return false;
  }
  stats::ServiceRequest req = service_request(method_, edit);
  for (const auto& c : h.stats_admin) {
    if (!c.eval(rs.view())) continue;
    req.admin = true;
    break;
  }
  req.body_state = body_state_;
  req.body = body_;
  StatsView view(w_.process());
  stats::HttpService service(view, w_.process().server_control());
  stats::Reply r = service.stats_page(req, h.stats);
  if (r.kind == stats::Reply::Kind::kNeedBody) {
    // The mux did not wait for the body (wants_body_first() said no): as if it did not fit.
    req.body_state = stats::ServiceRequest::Body::kTooLarge;
    r = service.stats_page(req, h.stats);
  }
  if (r.kind == stats::Reply::Kind::kNotMine) return false;
  w_.fe_counters(fe_.index).intercepted.add();
  service_reply(std::move(r));
  return true;
}

bool HttpTxn::stats_admin_post(const http::RequestHead& head) const {
  // A POST without a body too: the page then reads an empty form.
  // The target as received: a rule that rewrites it into the page's prefix is not foreseen
  // (the page then answers the POST as one whose body did not fit).
  stats::ServiceRequest req;
  req.method = stats::ServiceRequest::Method::kPost;
  req.target = head.target;
  for (const Proxy* px : w_.process().stats_admin_proxies())
    if (stats::HttpService::claims(req, px->settings.h.stats)) return true;
  return false;
}

// `use-service prometheus-exporter`.
void HttpTxn::serve_metrics(const rules::HeadEdit& edit) {
  StatsView view(w_.process());
  service_reply(stats::HttpService(view).prometheus(service_request(method_, edit)));
}

// A stats service's answer as a message. A page is a 200 generated by sluice: chunked for
// HTTP/1.1 requests, with a length for HTTP/1.0 ones, the head alone for HEAD.
void HttpTxn::service_reply(stats::Reply r) {
  using K = stats::Reply::Kind;
  switch (r.kind) {
    case K::kNotMine:
    case K::kNeedBody:   // serve_stats() asked again
      break;
    case K::kUnauthorized:
      *reply_ = unauthorized_reply(r.realm, {Cause::kProxy, FinalState::kRequest});
      return;
    case K::kRedirect:
      *reply_ = LocalReply{
          303, {Cause::kLocal, FinalState::kRequest},
          fmt::format("HTTP/1.1 303 See Other\r\ncache-control: no-cache\r\ncontent-type: "
                      "text/plain\r\ncontent-length: 0\r\nlocation: {}\r\n\r\n",
                      r.location),
          false, true, true};
      return;
    case K::kNotFound:
      *reply_ = error_reply(404, {Cause::kLocal, FinalState::kRequest}, false, true, true);
      return;
    case K::kPage:
      break;
  }
  std::string bytes =
      fmt::format("HTTP/1.1 200 OK\r\ncache-control: no-cache\r\ncontent-type: {}\r\n{}",
                  r.content_type, r.headers);
  if (method_ == http::Method::kHead) {
    bytes += "\r\n";
  } else if (http11_) {
    bytes += "transfer-encoding: chunked\r\n\r\n";
    if (!r.body.empty()) bytes += fmt::format("{:x}\r\n{}\r\n", r.body.size(), r.body);
    bytes += "0\r\n\r\n";
  } else {
    bytes += fmt::format("content-length: {}\r\n\r\n", r.body.size());
    bytes += r.body;
  }
  *reply_ = LocalReply{200, {Cause::kLocal, FinalState::kRequest}, std::move(bytes), false, true,
                      true};
}

// A 401 asking for Basic credentials in `realm` (`http-request auth`, the stats page): the
// built-in page, whatever errorfile the proxy has for 401, as in HAProxy.
LocalReply HttpTxn::unauthorized_reply(std::string_view realm, log::Termination t) const {
  std::string page = http::error_page(401);
  std::size_t end = page.find("\r\n\r\n");
  page.insert(end, fmt::format("\r\nwww-authenticate: Basic realm=\"{}\"", realm));
  return LocalReply{401, t, std::move(page), false, true, true};
}

LocalReply HttpTxn::error_reply(int st, log::Termination t, bool close_after,
                                bool announce_close, bool skip_body) {
  const HttpSettings::ErrorPage* custom = nullptr;
  if (be_) custom = be_->settings.h.errorfile(st);
  if (!custom) custom = fe_.settings.h.errorfile(st);
  if (custom && custom->lf)
    return LocalReply{st, t, render_error_page(st, *custom->lf), close_after, announce_close, skip_body};
  if (custom) return LocalReply{st, t, custom->bytes, close_after, announce_close, skip_body};
  return LocalReply{st, t, http::error_page(st), close_after || st == 400 || st == 408,
                    announce_close, skip_body};
}

// HAProxy renders an http-error reply with the stream: the request (as the rules left it,
// while they run; the copy kept once it left), its variables, the addresses and the status
// being answered (%ST). A page answering before any request (a 408, a bad request) sees none.
std::string HttpTxn::render_error_page(int st, const rules::HttpRule& rule) {
  status = st;
  rules::Verdict v;
  if (live_request_) {
    // %ST and `status` read the status being answered, as the response's.
    rules::RequestView view = live_request_->view();
    view.avail |= sample::kUseHttpRes;
    view.res.status = st;
    rules::fill_reply(rule, view, v);
  } else {
    ProxyEnv env(w_.process(), w_.id(), &l_, fe_);
    env.be = be_;
    env.stream = this;
    rules::RequestView view;
    view.env = &env;
    view.avail = sample::kAtHttpRequest | sample::kUseHttpRes;
    view.res.status = st;
    attach_vars(view, vars_codecs_);
    view.src = &client_;
    view.dst_port = local_port();
    view.dst = local_addr();
    view.captures = captures();
    view.unique_id = unique_id;
    if (have_req_copy_ && vars_codecs_) {
      view.req.method = vars_codecs_->req_copy.method;
      view.req.target = vars_codecs_->req_copy.target;
      view.req.headers = &vars_codecs_->req_copy.headers;
    }
    received_line(view.req);
    rules::fill_reply(rule, view, v);
  }
  return rules::reply_bytes(st, v);
}

void HttpTxn::replied(int st, log::Termination t) {
  status = st;
  term = t;
  if (st > 0) count_status(st);   // -1: closed without an answer, no response to count
  bytes_out = 0;   // %B counts server bytes only; sluice's pages count 0
}

void HttpTxn::next_request(uint64_t now) {
  t_idle_ms = now;
  t_first_byte_ms = t_first_byte_wall_us = 0;
  t_head_ms = t_response_ms = 0;
  killed_request = false;
  tarpit_ms = -1;
  leg_.reset();   // its timings, retries and redispatch
  status = -1;
  term = {};
  calls = 0;
  bytes_out = 0;
  method_ = http::Method::kGet;   // until the next head says otherwise (a 408 has no method)
  logged = false;
  reused_server_conn = false;
  server_fd = -1;
  server_ssl = nullptr;
  vars_codecs_ = nullptr;
  if (caps_) caps_->reset(fe_.settings.h.capture_request, fe_.settings.h.capture_response);
  if (ck_) ck_->reset();
  // What rules changed of the previous stream.
  stream_.last_rule = nullptr;
  stream_.log_level = 0;
  stream_.timeouts_set = 0;
  if (stream_.addrs) {
    if (stream_.addrs->src_set && conn_src_) client_ = *conn_src_;
    stream_.addrs->src_set = stream_.addrs->dst_set = false;
    leg_.set_local_port(conn_dst_ ? conn_dst_->port() : l_.port);
  }
  unique_id.clear();
  has_stream_id = false;
  have_req_copy_ = false;
  body_state_ = stats::ServiceRequest::Body::kNotRead;
  body_ = {};
  pending_body_ = {};
  pending_chunked_ = pending_whole_ = false;
  // An idle keep-alive connection keeps no request line.
  std::string().swap(req_line);
}

}  // namespace sluice::proxy

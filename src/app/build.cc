#include "app/build.h"

#include "base/host.h"
#include "http/http.h"
#include "sample/vars.h"

#include <netinet/in.h>

#include <algorithm>
#include <sched.h>
#include <unistd.h>

#include <fmt/format.h>

#include "net/cert_store.h"

namespace sluice::app {

namespace {

// An errorfile is re-emitted through the H1 encoder, as HAProxy does: names come out
// lower-case and the status line normalised. The configuration parser validated it.
std::string normalise_errorfile(const std::string& raw) {
  if (raw.empty()) return raw;
  http::ResponseParser parser;
  if (parser.parse(raw) != http::ParseStatus::kComplete) return raw;
  std::string out;
  http::append_response_head(parser.head(), out);
  out.append(raw, parser.consumed(), std::string::npos);
  return out;
}

void http_settings(const config::ProxyConfig& p, proxy::HttpSettings& h) {
  using CM = proxy::HttpSettings::ConnMode;
  switch (p.http_conn_mode) {
    case config::HttpConnMode::kKeepAlive: h.conn_mode = CM::kKeepAlive; break;
    case config::HttpConnMode::kServerClose: h.conn_mode = CM::kServerClose; break;
    case config::HttpConnMode::kClose: h.conn_mode = CM::kClose; break;
  }
  using R = proxy::HttpSettings::Reuse;
  switch (p.http_reuse) {
    case config::HttpReuse::kNever: h.reuse = R::kNever; break;
    case config::HttpReuse::kSafe: h.reuse = R::kSafe; break;
    case config::HttpReuse::kAggressive: h.reuse = R::kAggressive; break;
    case config::HttpReuse::kAlways: h.reuse = R::kAlways; break;
  }
  h.case_adjust_client = p.option_h1_case_adjust_client;
  h.case_adjust_server = p.option_h1_case_adjust_server;
  h.pretend_keepalive = p.option_pretend_keepalive;
  h.drop_request_trailers = p.option_drop_request_trailers;
  h.drop_response_trailers = p.option_drop_response_trailers;
  h.checkcache = p.option_checkcache;
  h.idle_close_on_response = p.option_idle_close_on_response;
  h.accept_unsafe_responses = p.option_accept_unsafe_responses;
  h.disable_h2_upgrade = p.option_disable_h2_upgrade;
  h.forwardfor.enabled = p.forwardfor.enabled;
  h.forwardfor.header = p.forwardfor.header;
  h.forwardfor.has_except = p.forwardfor.has_except;
  h.forwardfor.except = p.forwardfor.except;
  h.forwardfor.if_none = p.forwardfor.if_none;
  h.forwarded.enabled = p.forwarded.enabled;
  h.forwarded.proto = p.forwarded.proto;
  using FwItem = proxy::HttpSettings::Forwarded::Item;
  using FwPart = proxy::HttpSettings::Forwarded::Part;
  auto fw_item = [](const config::ForwardedConfig::Item& c) {
    return FwItem{static_cast<FwPart>(c.part), c.expr};
  };
  h.forwarded.host = fw_item(p.forwarded.host);
  h.forwarded.by = fw_item(p.forwarded.by);
  h.forwarded.by_port = fw_item(p.forwarded.by_port);
  h.forwarded.for_ = fw_item(p.forwarded.for_);
  h.forwarded.for_port = fw_item(p.forwarded.for_port);
  h.originalto.enabled = p.originalto.enabled;
  h.originalto.header = p.originalto.header;
  h.originalto.has_except = p.originalto.has_except;
  h.originalto.except = p.originalto.except;
  h.httplog = p.option_httplog;
  h.accept_unsafe_requests = p.accept_unsafe_requests;
  h.buffer_request = p.option_http_buffer_request;
  h.ignore_probes = p.option_http_ignore_probes;
  h.abortonclose = p.option_abortonclose;
  h.restrict_hdr_names = static_cast<proxy::HttpSettings::HdrNames>(p.restrict_req_hdr_names);
  h.request_rules = p.http_request_rules;
  h.response_rules = p.http_response_rules;
  h.after_response_rules = p.http_after_response_rules;
  h.redirect_rules = p.redirect_rules;
  for (const auto& e : p.errorfiles) {
    h.errorfiles.push_back({e.status, e.lf ? std::string() : normalise_errorfile(e.response), e.lf});
    h.dynamic_errors = h.dynamic_errors || e.lf;
  }
  h.monitor_uri = p.monitor_uri;
  h.monitor_fail = p.monitor_fail;
}

// `stats ...` lines: `.` in `stats scope` is the proxy itself; show-node and show-desc
// without their argument show the global node name and description.
void stats_page(const config::ProxyConfig& p, const std::string& node, const std::string& desc,
                stats::PageSettings& st) {
  const config::StatsPageConfig& c = p.stats;
  st.enabled = c.enabled;
  st.uri = c.uri;
  st.refresh_s = c.refresh_s;
  st.realm = c.realm.empty() ? "HAProxy Statistics" : c.realm;
  st.auth = c.auth;
  for (const auto& name : c.scope) st.scope.push_back(name == "." ? p.name : name);
  st.hide_version = c.hide_version;
  st.show_legends = c.show_legends;
  if (c.show_node) st.node = c.node.empty() ? node : c.node;
  if (c.show_desc) st.desc = c.desc.empty() ? desc : c.desc;
}

}  // namespace

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

proxy::LogTarget to_runtime(const config::LogTarget& t) {
  proxy::LogTarget r;
  switch (t.kind) {
    case config::LogTarget::Kind::kStdout: r.kind = proxy::LogTarget::Kind::kStdout; break;
    case config::LogTarget::Kind::kStderr: r.kind = proxy::LogTarget::Kind::kStderr; break;
    case config::LogTarget::Kind::kUdp: r.kind = proxy::LogTarget::Kind::kUdp; break;
    case config::LogTarget::Kind::kUnixDgram: r.kind = proxy::LogTarget::Kind::kUnixDgram; break;
  }
  r.addr = t.addr;
  r.max_len = t.max_len;
  switch (t.format) {
    case config::LogFormat::kDefault: r.format = proxy::LogFormat::kDefault; break;
    case config::LogFormat::kRfc3164: r.format = proxy::LogFormat::kRfc3164; break;
    case config::LogFormat::kRfc5424: r.format = proxy::LogFormat::kRfc5424; break;
    case config::LogFormat::kShort: r.format = proxy::LogFormat::kShort; break;
    case config::LogFormat::kRaw: r.format = proxy::LogFormat::kRaw; break;
    case config::LogFormat::kLocal: r.format = proxy::LogFormat::kLocal; break;
    case config::LogFormat::kPriority: r.format = proxy::LogFormat::kPriority; break;
    case config::LogFormat::kTimed: r.format = proxy::LogFormat::kTimed; break;
    case config::LogFormat::kIso: r.format = proxy::LogFormat::kIso; break;
  }
  r.facility = t.facility;
  r.max_level = t.max_level;
  r.min_level = t.min_level;
  return r;
}

namespace {

lb::BalanceSettings balance_settings(const config::ProxyConfig& p) {
  lb::BalanceSettings b;
  switch (p.balance) {
    case config::Balance::kRoundRobin: b.kind = lb::BalanceKind::kRoundRobin; break;
    case config::Balance::kStaticRr: b.kind = lb::BalanceKind::kStaticRr; break;
    case config::Balance::kLeastConn: b.kind = lb::BalanceKind::kLeastConn; break;
    case config::Balance::kFirst: b.kind = lb::BalanceKind::kFirst; break;
    case config::Balance::kSource: b.kind = lb::BalanceKind::kSource; break;
    case config::Balance::kUri: b.kind = lb::BalanceKind::kUri; break;
    case config::Balance::kHdr: b.kind = lb::BalanceKind::kHdr; break;
    case config::Balance::kRandom: b.kind = lb::BalanceKind::kRandom; break;
    case config::Balance::kUrlParam: b.kind = lb::BalanceKind::kUrlParam; break;
    case config::Balance::kRdpCookie: b.kind = lb::BalanceKind::kRdpCookie; break;
    case config::Balance::kHash: b.kind = lb::BalanceKind::kHash; break;
  }
  b.draws = p.balance_draws;
  b.hdr_name = p.balance_hdr;
  b.hdr_domain_only = p.balance_hdr_domain_only;
  b.uri_len = p.balance_uri_len;
  b.uri_depth = p.balance_uri_depth;
  b.uri_whole = p.balance_uri_whole;
  b.uri_path_only = p.balance_uri_path_only;
  b.hash.consistent = p.hash_consistent;
  switch (p.hash_function) {
    case config::HashFunction::kSdbm: b.hash.function = lb::HashFunction::kSdbm; break;
    case config::HashFunction::kDjb2: b.hash.function = lb::HashFunction::kDjb2; break;
    case config::HashFunction::kWt6: b.hash.function = lb::HashFunction::kWt6; break;
    case config::HashFunction::kCrc32: b.hash.function = lb::HashFunction::kCrc32; break;
    case config::HashFunction::kNone: b.hash.function = lb::HashFunction::kNone; break;
  }
  b.hash.avalanche = p.hash_avalanche;
  b.allbackups = p.option_allbackups;
  return b;
}

}  // namespace

RuntimePlan build_plan(const config::ConfigModel& model, long fd_limit, int cmdline_maxconn,
                       int cmdline_maxpconn) {
  RuntimePlan plan;
  const auto& g = model.global;
  net::tls::CertStore::global().clear();   // the certificates this configuration uses
  net::tls::CertStore::global().set_ca_base(g.ca_base);
  for (const auto& [lower, spelled] : g.h1_case_adjust) http::case_adjust_map().add(lower, spelled);
  auto& ps = plan.process;
  ps.nbthread = g.nbthread > 0 ? g.nbthread : usable_cpus();   // refined by the thread plan
  ps.cli_rcvbuf = g.tune_rcvbuf_client;
  ps.cli_sndbuf = g.tune_sndbuf_client;
  // Each proxied connection needs two descriptors (client and server); keep some for
  // listeners, logs and the CLI, as HAProxy does when it derives maxconn from ulimit -n.
  constexpr long kReservedFds = 100;
  long fits = (fd_limit - kReservedFds) / 2;
  // HAProxy's floor for a derived maxconn; below it the limit, not maxconn, is what is wrong
  // (the check below says so).
  long derived = fits < 100 ? 100 : fits;
  ps.hard_maxconn = static_cast<int>(derived);
  ps.maxconn = cmdline_maxconn > 0 ? cmdline_maxconn : g.maxconn > 0 ? g.maxconn : ps.hard_maxconn;
  // Compared with what the descriptors allow, not with the floored ceiling: with a small
  // `ulimit -n` even the floor does not fit, and accept() or the server connect would fail
  // with EMFILE under load without any word at start-up (HAProxy refuses to start then).
  if (ps.maxconn > fits) {
    plan.warnings.push_back(fmt::format(
        "maxconn {} needs about {} file descriptors but the limit is {}; connections beyond "
        "{} may fail to be accepted (raise 'ulimit -n').",
        ps.maxconn, 2L * ps.maxconn + kReservedFds, fd_limit, fits < 0 ? 0 : fits));
    if (ps.maxconn > ps.hard_maxconn) ps.hard_maxconn = ps.maxconn;
  }
  ps.maxaccept = g.tune_maxaccept;
  ps.max_conn_rate = g.max_conn_rate;
  ps.max_ssl_conn = g.max_ssl_conn;
  ps.max_ssl_rate = g.max_ssl_rate;
  net::tls::set_max_record(g.tune_ssl_maxrecord);
  if (g.max_sess_rate > 0 && (ps.max_conn_rate == 0 || g.max_sess_rate < ps.max_conn_rate))
    ps.max_conn_rate = g.max_sess_rate;
  ps.bufsize = static_cast<uint32_t>(g.tune_bufsize);
  // HAProxy: tune.maxrewrite defaults to 1024 and is at most half a buffer.
  ps.maxrewrite = std::min(g.tune_maxrewrite < 0 ? 1024 : g.tune_maxrewrite, g.tune_bufsize / 2);
  ps.http_maxhdr = g.tune_http_maxhdr;
  ps.h1_any_method_payload = g.h1_accept_payload_with_any_method;
  ps.h1_keep_insecure_te = g.h1_keep_insecure_transfer_encoding;
  ps.h1_be_glitches_threshold = g.h1_be_glitches_threshold;
  ps.http_logurilen = g.tune_http_logurilen;
  ps.hard_stop_after_ms = g.hard_stop_after_ms;
  ps.grace_ms = g.grace_ms;
  ps.log_tag = g.log_tag.empty() ? "sluice" : g.log_tag;
  if (!g.node.empty()) {
    ps.node = g.node;
  } else {
    ps.node = base::host_name();
  }
  ps.description = g.description;
  for (const auto& t : g.logs) ps.global_logs.push_back(to_runtime(t));

  for (const auto& p : model.proxies) {
    // A disabled proxy keeps its slot, so that indexes into `proxies` (default_backend) stay
    // valid, but listens on nothing and its servers are in maintenance.
    proxy::ProxySettings s;
    s.name = p.name;
    s.id = p.id;
    s.id_forced = p.id_custom;
    s.type = p.type;
    s.disabled = p.disabled;
    s.frontend = (p.caps & config::ProxyConfig::kFrontend) && !p.disabled;
    s.backend = (p.caps & config::ProxyConfig::kBackend) != 0;
    s.maxconn = p.maxconn > 0 ? p.maxconn : cmdline_maxpconn > 0 ? cmdline_maxpconn : ps.maxconn;
    s.default_backend = p.default_backend_index;
    for (const auto& b : p.binds) {
      proxy::BindSettings bs;
      bs.text = b.text;
      bs.file = b.loc.file;
      bs.line = b.loc.line;
      bs.addrs = b.addrs;
      bs.name = b.name;
      bs.maxconn = b.maxconn;
      bs.id = b.id;
      bs.unix_mode = b.unix_mode;
      bs.accept_proxy = b.accept_proxy;
      if (b.tls.context) {
        // Published through a slot that `commit ssl cert` can swap (net/cert_store.h).
        bs.tls = std::make_shared<net::tls::ContextSlot>(b.tls.context);
        net::tls::CertStore::global().add_bind(b.tls.built_options, bs.tls,
                                               {p.name, b.text, b.loc.file, b.loc.line});
        for (const auto& [path, lines] : b.tls.crt_lists)
          net::tls::CertStore::global().add_crt_list(path, lines);
      }
      bs.tfo = b.tfo;
      // HAProxy's order: bind backlog, frontend backlog, bind maxconn, frontend maxconn, 1024.
      bs.backlog = b.backlog > 0   ? b.backlog
                   : p.backlog > 0 ? p.backlog
                   : b.maxconn > 0 ? b.maxconn
                   : p.maxconn > 0 ? p.maxconn
                                   : 1024;
      s.binds.push_back(std::move(bs));
    }
    for (const auto& sv : p.servers) {
      lb::ServerSettings ss;
      ss.name = sv.name;
      ss.id = sv.id;
      ss.id_forced = sv.id_custom;
      ss.addr = sv.addr.addr;
      ss.port_mapped = sv.addr.port_mapped;
      ss.port_offset = sv.addr.port_offset;
      ss.weight = sv.weight;
      ss.maxconn = sv.maxconn;
      ss.backup = sv.backup;
      ss.disabled = sv.disabled || p.disabled;
      ss.unresolved = sv.unresolved;
      ss.fqdn = sv.fqdn;
      ss.slowstart_ms = sv.slowstart_ms;
      ss.send_proxy = sv.send_proxy;
      ss.pp2_options = sv.pp2_options;
      ss.cookie = sv.cookie;
      ss.pool_max_conn = sv.pool_max_conn;
      ss.pool_purge_delay_ms = sv.pool_purge_delay_ms;
      ss.max_reuse = sv.max_reuse;
      // Observed only with a check to act on it (HAProxy ignores `observe` otherwise).
      ss.observe = sv.check ? static_cast<lb::Observe>(sv.observe) : lb::Observe::kNone;
      ss.error_limit = sv.error_limit;
      ss.on_error = static_cast<lb::OnError>(sv.on_error);
      ss.has_socks4 = sv.has_socks4;
      ss.socks4 = sv.socks4;
      if (sv.tls.ssl) ss.tls = sv.tls.context;
      if (sv.track_proxy >= 0) {
        const auto& tp = model.proxies[static_cast<std::size_t>(sv.track_proxy)];
        ss.tracked = tp.name + "/" + tp.servers[static_cast<std::size_t>(sv.track_server)].name;
      }
      s.servers.push_back(std::move(ss));
      if (sv.tls.ssl && sv.tls.sni) {
        s.server_sni.resize(s.servers.size());
        s.server_sni.back() = {sv.tls.sni, sv.tls.sni_from_host};
        (sv.tls.sni_from_host ? s.sni_from_host : s.sni_reads_request) = true;
      }
      if (!sv.pp2_tlvs.empty() && sv.send_proxy == 2) {
        s.pp2_tlv_formats.resize(s.servers.size());
        for (const auto& t : sv.pp2_tlvs) s.pp2_tlv_formats.back().push_back({t.type, t.fmt});
      }
    }
    // HAProxy: a server without its own cookie gets the dynamic one (key, address, port),
    // which the CLI may change later (proxy/cookie_table.h).
    if (s.backend) {
      std::vector<proxy::CookieTable::Server> cs;
      for (const auto& ss : s.servers) cs.push_back({ss.cookie, ss.addr});
      s.cookie_table = std::make_shared<proxy::CookieTable>(
          std::move(cs), p.dynamic_cookie_key, p.cookie.dynamic && !p.cookie.name.empty());
      for (std::size_t i = 0; i < s.servers.size(); ++i)
        s.servers[i].cookie = s.cookie_table->value(i);
    }
    s.balance = balance_settings(p);
    s.balance_expr = p.balance_expr;
    for (const auto& u : p.use_servers) s.use_servers.push_back({u.cond, u.server_index, u.dynamic});
    if (!p.cookie.name.empty()) {
      auto c = std::make_shared<proxy::CookieSettings>();
      c->name = p.cookie.name;
      c->mode = static_cast<proxy::CookieSettings::Mode>(p.cookie.mode);
      c->indirect = p.cookie.indirect;
      c->nocache = p.cookie.nocache;
      c->postonly = p.cookie.postonly;
      c->preserve = p.cookie.preserve;
      c->httponly = p.cookie.httponly;
      c->secure = p.cookie.secure;
      c->domain = p.cookie.domain;
      c->attrs = p.cookie.attrs;
      c->maxidle_s = p.cookie.maxidle_s;
      c->maxlife_s = p.cookie.maxlife_s;
      for (const auto& ss : s.servers) c->server_cookies.push_back(ss.cookie);
      c->table = s.cookie_table;
      s.cookie = std::move(c);
    }
    s.persist = p.option_persist;
    for (const auto& r : p.persist_rules) s.persist_rules.push_back({r.cond, r.force});
    s.cookie_step = s.cookie || !s.persist_rules.empty();
    s.retries = p.retries;
    s.redispatch = p.redispatch;
    s.timeouts.connect = p.timeouts.connect;
    s.timeouts.client = p.timeouts.client;
    s.timeouts.server = p.timeouts.server;
    s.timeouts.tunnel = p.timeouts.tunnel;
    s.timeouts.client_fin = p.timeouts.client_fin;
    s.timeouts.server_fin = p.timeouts.server_fin;
    // HAProxy: `timeout queue` defaults to `timeout connect`.
    s.timeouts.queue = p.timeouts.queue ? p.timeouts.queue : p.timeouts.connect;
    for (const auto& t : p.logs) s.logs.push_back(to_runtime(t));
    s.tcplog = p.option_tcplog;
    s.log_format = p.log_fmt;
    s.log_backend_src = p.log_fmt && (p.log_fmt->uses(log::Alias::kbi) || p.log_fmt->uses(log::Alias::kbp));
    s.unique_id_format = p.unique_id_fmt;
    s.unique_id_header = p.unique_id_header;
    s.log_tag = p.log_tag;
    s.log_format_sd = p.log_fmt_sd;
    s.error_log_format = p.error_log_fmt;
    s.log_separate_errors = p.option_log_separate_errors;
    s.logasap = p.option_logasap;
    // log-steps: accept, request, connect, response and close are bits 0 to 4 of the model's,
    // the values of proxy::LogStep; the rule steps (http-req...) log only through do-log
    // actions or log-profile steps, which sluice does not have, so they add no line, as in
    // HAProxy 3.5 without them.
    if (p.log_steps && p.log_fmt && !p.logs.empty()) {
      s.log_steps = p.option_logasap ? 0 : static_cast<uint8_t>(p.log_steps & 0x0f);
      s.log_close = p.option_logasap || (p.log_steps & proxy::kLogClose) != 0;
    }
    s.dontlognull = p.option_dontlognull;
    s.cli_keepalive = {p.option_clitcpka, p.clitcpka_cnt, p.clitcpka_idle, p.clitcpka_intvl};
    s.srv_keepalive = {p.option_srvtcpka, p.srvtcpka_cnt, p.srvtcpka_idle, p.srvtcpka_intvl};
    s.nolinger = p.option_nolinger;
    s.prefer_last_server = p.option_prefer_last_server;
    s.independent_streams = p.option_independent_streams;
    s.smart_connect = p.option_tcp_smart_connect;
    s.srv_rcvbuf = model.global.tune_rcvbuf_server;
    s.srv_sndbuf = model.global.tune_sndbuf_server;
    // HAProxy: on in HTTP mode unless `no option tcp-smart-accept`.
    s.smart_accept = p.option_tcp_smart_accept > 0 ||
                     (p.option_tcp_smart_accept == 0 && p.mode == config::Mode::kHttp);
    s.socket_stats = p.option_socket_stats;
    s.dontlog_normal = p.option_dontlog_normal;
    s.timeouts.http_request = p.timeouts.http_request;
    s.timeouts.http_keep_alive = p.timeouts.http_keep_alive;
    s.timeouts.tarpit = p.timeouts.tarpit;
    // Inherited rules come first in each list (parser: the defaults section's), as HAProxy
    // runs a defaults section's rules before the proxy's own.
    for (const auto& r : p.tcp_request_connection) s.tcp_connection_rules.push_back(r.rule);
    for (const auto& r : p.tcp_request_session) s.tcp_session_rules.push_back(r.rule);
    for (const auto& r : p.tcp_request_content) s.tcp_content_rules.push_back(r.rule);
    for (const auto& r : p.tcp_response_content) s.tcp_response_rules.push_back(r.rule);
    s.tcp_response_inspect_delay_ms = p.tcp_response_inspect_delay_ms;
    for (const auto& u : p.use_backends) s.use_backends.push_back({u.cond, u.backend_index, u.dynamic});
    for (const auto* list : {&s.tcp_connection_rules, &s.tcp_session_rules, &s.tcp_content_rules,
                             &s.tcp_response_rules}) {
      s.tcp_rules_need_dst = s.tcp_rules_need_dst || rules::uses_dst(*list);
      for (const auto& r : *list)
        s.tcp_rule_data = s.tcp_rule_data || r.action == rules::TcpRule::Action::kVar ||
                          r.action == rules::TcpRule::Action::kCapture ||
                          r.action == rules::TcpRule::Action::kSetDst ||
                          r.action == rules::TcpRule::Action::kSetDstPort;
    }
    s.sess_vars = sample::VarNames::global().any_in(sample::Scope::kSess);
    for (const auto& r : s.tcp_content_rules)
      s.tcp_content_rewrites = s.tcp_content_rewrites || r.action == rules::TcpRule::Action::kSetSrc ||
                               r.action == rules::TcpRule::Action::kSetDst ||
                               r.action == rules::TcpRule::Action::kSetSrcPort ||
                               r.action == rules::TcpRule::Action::kSetDstPort;
    // A name format may read dst as well: asked of the kernel whenever one exists.
    for (const auto& u : s.use_backends)
      s.tcp_rules_need_dst = s.tcp_rules_need_dst || rules::uses_dst(u.cond) || u.dynamic;
    s.tcp_inspect_delay_ms = p.tcp_inspect_delay_ms;
    if (p.mode == config::Mode::kTcp)   // HTTP mode refuses payload fetches (validate.cc)
      s.tcp_inspect = rules::waits_for_content(s.tcp_content_rules);
    s.http = p.mode == config::Mode::kHttp;
    // Capture slots exist in both modes (a TCP session's tcp-request content capture).
    for (const auto& c : p.capture_request) s.h.capture_request.emplace_back(c.name, c.len);
    for (const auto& c : p.capture_response) s.h.capture_response.emplace_back(c.name, c.len);
    if (p.mode == config::Mode::kHttp) {
      s.h.capture_cookie = p.capture_cookie;
      s.h.capture_cookie_len = p.capture_cookie_len;
    }
    if (s.http) {
      http_settings(p, s.h);
      s.h.glitches_threshold = model.global.h1_fe_glitches_threshold;
      stats_page(p, ps.node, ps.description, s.h.stats);
      s.h.stats_rules = p.stats.http_request;
      s.h.stats_admin = p.stats.admin;
    }
    plan.proxies.push_back(std::move(s));
  }
  return plan;
}

}  // namespace sluice::app

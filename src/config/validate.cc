// Post-parse checks and resolution: the "check phase".
#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "auth/userlist.h"
#include "config/parser.h"
#include "config/server_ssl.h"

namespace sluice::config {

// The log format and the unique-id format of a frontend, compiled with HAProxy's messages.
void Parser::compile_log_formats(ProxyConfig& p) {
  using K = ProxyConfig::LogFormatKind;
  if (!(p.caps & ProxyConfig::kFrontend)) return;
  switch (p.log_format_kind) {
    case K::kNone: break;
    case K::kTcpLog: p.log_fmt = log::predefined(log::Predefined::kTcpLog); break;
    case K::kClfTcpLog: p.log_fmt = log::predefined(log::Predefined::kClfTcpLog); break;
    case K::kHttpLog: p.log_fmt = log::predefined(log::Predefined::kHttpLog); break;
    case K::kClfHttpLog: p.log_fmt = log::predefined(log::Predefined::kClfHttpLog); break;
    case K::kHttpsLog: p.log_fmt = log::predefined(log::Predefined::kHttpsLog); break;
    case K::kCustom: {
      auto f = log::Format::parse(p.log_format);
      if (!f.ok()) {
        fatal(fmt::format("Parsing [{}:{}]: failed to parse log-format : {}.",
                          p.log_format_loc.file, p.log_format_loc.line, f.error().message),
              false);
        return;
      }
      // A format without any node (empty, or only `%{+json}o`-like options) is no format:
      // HAProxy then logs "Connect from" lines as without one.
      if (!f.value().empty()) p.log_fmt = std::make_shared<const log::Format>(std::move(f.value()));
      break;
    }
  }
  // log-format-sd and error-log-format, with HAProxy's messages (read only with a log format).
  auto compile = [&](const std::string& text, const SourceLoc& loc, std::string_view kw,
                     std::shared_ptr<const log::Format>* out) {
    if (text.empty()) return true;
    auto f = log::Format::parse(text);
    if (!f.ok()) {
      fatal(fmt::format("Parsing [{}:{}]: failed to parse {} : {}.", loc.file, loc.line, kw,
                        f.error().message),
            false);
      return false;
    }
    *out = std::make_shared<const log::Format>(std::move(f.value()));
    return true;
  };
  bool sd_ok = compile(p.log_format_sd, p.log_format_sd_loc, "log-format-sd", &p.log_fmt_sd);
  bool err_ok = compile(p.error_log_format, p.error_log_format_loc, "error-log-format",
                        &p.error_log_fmt);
  if (!sd_ok || !err_ok) return;
  if (p.log_fmt && p.logs.empty()) {
    warning(fmt::format("log format ignored for {} '{}' since it has no log address.",
                        type_word(p), p.name),
            false);
    p.log_fmt.reset();
  }
  if (!p.log_fmt) {
    p.log_fmt_sd.reset();
    p.error_log_fmt.reset();
  }
  if (!p.unique_id_format.empty()) {
    auto f = log::Format::parse(p.unique_id_format, sample::kAtHttpRequest | sample::kUseBackend);
    if (!f.ok()) {
      fatal(fmt::format("Parsing [{}:{}]: failed to parse unique-id : {}.", p.unique_id_loc.file,
                        p.unique_id_loc.line, f.error().message),
            false);
      return;
    }
    p.unique_id_fmt = std::make_shared<const log::Format>(std::move(f.value()));
  }
}

// `set-proxy-v2-tlv-fmt` of each server: evaluated when the connection to the server opens,
// where the request (after the rules), the backend and the server are known. HAProxy's
// messages, at the server's line.
void Parser::compile_server_formats(ProxyConfig& p) {
  // `connect ssl` steps in the checks: each server needs a TLS context for them.
  bool ssl_steps = false;
  for (const TcpCheckConfig* rs : {&p.tcp_check, &p.http_check_rules})
    for (const check::CheckRule& r : rs->rules)
      if (r.kind == check::CheckRule::Kind::kConnect && r.ssl) ssl_steps = true;
  for (ServerConfig& sv : p.servers) {
    if (ssl_steps) {
      ServerTlsConfig& t = sv.tls;
      t.rule_context = t.check_context ? t.check_context : t.context;
      if (!t.rule_context) {
        try {
          t.rule_context = make_client_context(t);
        } catch (const ConfigError& e) {
          fatal(e.text, false);
          return;
        }
      }
    }
    // `sni <expr>`: evaluated when a connection to the server opens, as the pp2 TLVs are.
    // Without one, sni-auto sends the Host header in HTTP mode.
    if (sv.tls.ssl && sv.tls.sni_text.empty() && sv.tls.sni_auto && p.mode == Mode::kHttp) {
      sample::ParseCtx pc;
      pc.avail = sample::kAtAny;
      std::size_t end = 0;
      auto e = sample::Expr::parse("req.hdr(host)", pc, &end);
      if (e.ok()) {
        sv.tls.sni = std::make_shared<const sample::Expr>(std::move(e.value()));
        sv.tls.sni_from_host = true;
      }
    }
    if (sv.tls.ssl && !sv.tls.sni_text.empty()) {
      sample::ParseCtx pc;
      pc.avail = sample::kAtAny;
      sample::AclResolverScope acl_scope(&p.acls);
      std::size_t end = 0;
      auto e = sample::Expr::parse(sv.tls.sni_text, pc, &end);
      std::string why;
      if (!e.ok()) why = e.error().message;
      else if (end != sv.tls.sni_text.size())
        why = fmt::format("unexpected character '{}'", sv.tls.sni_text[end]);
      else if (uint32_t missing = e.value().use() & ~(sample::kAtHttpRequest | sample::kUseBackend |
                                                       sample::kUseServer))
        why = fmt::format("it requires information from {}, which is not available here",
                          sample::use_name(missing));
      if (!why.empty()) {
        fatal(fmt::format("[{}:{}] : 'server {}/{}' : error detected while parsing sni or "
                          "pool-conn-name expressions : {}.", sv.loc.file, sv.loc.line, p.name,
                          sv.name, why),
              false);
        return;
      }
      sv.tls.sni = std::make_shared<const sample::Expr>(std::move(e.value()));
    }
    for (ServerConfig::Pp2Tlv& t : sv.pp2_tlvs) {
      auto f = log::Format::parse(t.text, sample::kAtHttpRequest | sample::kUseBackend |
                                              sample::kUseServer, false);
      if (!f.ok()) {
        fatal(fmt::format("[{}:{}] : 'server {}/{}' : {}", sv.loc.file, sv.loc.line, p.name,
                          sv.name, f.error().message),
              false);
        return;
      }
      t.fmt = std::make_shared<const log::Format>(std::move(f.value()));
    }
  }
}

// The balance algorithm once the mode is known: layer-7 hashes need HTTP mode, and the
// expression of url_param, rdp-cookie and hash is compiled for the backend's place (request
// content, with the backend known). HAProxy's messages, at the proxy's line.
std::shared_ptr<const sample::Expr> Parser::compile_expr(ProxyConfig& p, const std::string& text,
                                                         std::string_view what,
                                                         const std::string& where,
                                                         uint32_t avail) {
  sample::ParseCtx pc;
  pc.avail = sample::kAtAny;   // first the syntax, then what this place offers
  sample::AclResolverScope acl_scope(&p.acls);
  std::size_t end = 0;
  auto e = sample::Expr::parse(text, pc, &end);
  if (!e.ok() || end != text.size()) {
    fatal(fmt::format("{}failed to parse {} '{}' in : {}.", where, what, text,
                      e.ok() ? fmt::format("unexpected character '{}'", text[end])
                             : e.error().message),
          false);
    return nullptr;
  }
  if (uint32_t missing = e.value().use() & ~avail) {
    fatal(fmt::format("{}error detected while parsing {} '{}' which requires information from "
                      "{}, which is not available here.",
                      where, what, text, sample::use_name(missing)),
          false);
    return nullptr;
  }
  return std::make_shared<const sample::Expr>(std::move(e.value()));
}

void Parser::compile_balance(ProxyConfig& p) {
  if (!(p.caps & ProxyConfig::kBackend)) return;
  if (p.mode == Mode::kTcp &&
      (p.balance == Balance::kUri || p.balance == Balance::kHdr || p.balance == Balance::kUrlParam)) {
    warning(fmt::format("Layer 7 hash not possible for {} '{}' (needs 'mode http'). Falling back to "
                        "round robin.", type_word(p), p.name),
            false);
    p.balance = Balance::kRoundRobin;
    p.balance_expr_text.clear();
    return;
  }
  if (p.balance_expr_text.empty()) return;
  const std::string where = fmt::format("{} '{}' [{}:{}]: ", type_word(p), p.name, p.loc.file, p.loc.line);
  // HAProxy offers the request in either mode (a TCP backend's HTTP fetches find nothing in
  // sluice, which does not parse HTTP on TCP sessions: the pick falls back to round robin).
  auto e = compile_expr(p, p.balance_expr_text, "'balance hash' expression", where,
                        sample::kAtHttpRequest | sample::kUseBackend);
  if (!e) return;
  // An HTTP proxy parses the request and keeps no raw buffer: what reads it never answers.
  if (p.mode == Mode::kHttp && (e->use() & sample::kUseReqBuf))
    warning(fmt::format("{}L6 sample fetch <{}> will be ignored in 'balance hash' expression in "
                        "HTTP mode.", where, p.balance_expr_text),
            false);
  p.balance_expr = std::move(e);
}

bool Parser::finish(ConfigModel* model) {
  model->global = global;
  for (auto& ps : proxies) model->proxies.push_back(ps.cfg);
  auto& px = model->proxies;

  // Proxy ids: explicit ones must be unique; the others are numbered from 2 upward (HAProxy's
  // historical start), skipping ids in use.
  std::set<int> used;
  for (std::size_t i = 0; i < px.size(); ++i) {
    if (px[i].id == 0) continue;
    if (!used.insert(px[i].id).second) {
      for (std::size_t j = 0; j < i; ++j)
        if (px[j].id == px[i].id) {
          // HAProxy's text, at the second `id` line.
          fatal(fmt::format("parsing [{}:{}]: {} {} reuses same custom id as {} {} (declared at {}:{}).",
                            px[i].id_loc.file, px[i].id_loc.line, type_word(px[i]), px[i].name,
                            type_word(px[j]), px[j].name, px[j].loc.file, px[j].loc.line));
          return false;
        }
    }
  }
  // h1-case-adjust-file: more name spellings, read once the whole configuration is.
  if (!model->global.h1_case_adjust_file.empty()) {
    if (std::string err = read_h1_case_adjust_file(model->global); !err.empty()) {
      fatal(std::move(err), false);
      return false;
    }
  }
  // Userlists: the names expressions gave, the users and groups the sections link.
  std::vector<std::string> auth_errors = auth::Registry::global().finish();
  for (auto& e : auth_errors) fatal(std::move(e), false);
  if (!auth_errors.empty()) return false;
  bool errorfiles_ok = true;
  for (auto& p : px) errorfiles_ok = resolve_errorfiles(p) && errorfiles_ok;
  if (!errorfiles_ok) return false;
  int next_id = 2;
  for (auto& p : px) {
    if (p.id != 0) continue;
    while (used.count(next_id)) ++next_id;
    p.id = next_id;
    used.insert(next_id);
  }

  // Proxies are checked in declaration order and the check stops after the first proxy that
  // has errors (all of that proxy's errors are reported), as HAProxy does.
  bool bufsize_reported = false;
  for (std::size_t i = 0; i < px.size(); ++i) {
    ProxyConfig& p = px[i];
    int errors_before = fatals_;
    // Server ids: `id <n>` ones kept (duplicates were refused while parsing); the others take
    // the first free id from a counter that moves past every server, as HAProxy numbers them.
    std::set<int> custom_ids;
    for (const auto& s : p.servers)
      if (s.id_custom) custom_ids.insert(s.id);
    int sid = 1;
    std::map<std::string, int> seen;
    for (auto& s : p.servers) {
      if (!s.id_custom) {
        while (custom_ids.count(sid)) ++sid;
        s.id = sid;
      }
      ++sid;
      auto [it, fresh] = seen.emplace(s.name, s.loc.line);
      if (!fresh)
        fatal(fmt::format("[{}:{}] : 'server {}/{}' : another server named '{}' was already defined "
                          "at line {}, please use a distinct name.",
                          s.loc.file, s.loc.line, p.name, s.name, s.name, it->second),
              false);
    }
    if (p.disabled) continue;   // disabled proxies are not validated (HAProxy)
    // An `acl` line written after a tcp-request rule still joins the ACL the rule uses: its
    // fetch is checked again here, where every line is known.
    const char* section = (p.caps & ProxyConfig::kFrontend) ? "frontend" : "backend";
    for (auto [list, stage] : {std::pair{&p.tcp_request_connection, rules::TcpRuleStage::kConnection},
                               std::pair{&p.tcp_request_session, rules::TcpRuleStage::kSession},
                               std::pair{&p.tcp_request_content, rules::TcpRuleStage::kContent},
                               std::pair{&p.tcp_response_content, rules::TcpRuleStage::kResponse}})
      for (const auto& r : *list)
        for (const auto& w : rules::check_stage(r.rule.cond, stage,
                                                stage == rules::TcpRuleStage::kResponse ? "backend" : section))
          warning(fmt::format("parsing [{}:{}] : {}", r.loc.file, r.loc.line, w));
    check_tcp_rules(p);
    // req.len, req.ssl_sni and req.ssl_hello_type read a TCP session's raw bytes. HTTP mode
    // parses the request itself and keeps no such buffer (HAProxy warns "L6 sample fetches
    // ignored on HTTP proxies" and they never match); HTTP rules run on a parsed request.
    auto refuse_payload = [&](const rules::Condition& c, const std::string& at, const char* what) {
      std::string msg = payload_fetch_refusal(c, what, p);
      if (!msg.empty()) fatal(at + msg, false);
    };
    auto line_of = [](const SourceLoc& loc) { return fmt::format("parsing [{}:{}] : ", loc.file, loc.line); };
    if (p.mode == Mode::kHttp) {
      for (const auto& r : p.tcp_request_content) {
        // The condition and the action's expression (a capture or set-var of req.len).
        std::string msg = payload_fetch_refusal(rules::payload_fetch(std::vector<rules::TcpRule>{r.rule}),
                                                "'tcp-request content' in HTTP mode", p);
        if (!msg.empty()) fatal(line_of(r.loc) + msg, false);
      }
      for (const auto& ub : p.use_backends)
        refuse_payload(ub.cond, line_of(ub.loc), "'use_backend' in HTTP mode");
      for (const auto& us : p.use_servers)
        refuse_payload(us.cond, line_of(us.loc), "'use-server' in HTTP mode");
    }
    // HTTP rules are checked where they are parsed (kw_http_rule), with their own line; here
    // only for a named ACL that an `acl` line written after the rule extended: the section's
    // line then.
    for (const auto& r : p.http_request_rules) refuse_payload(r.cond, line_of(p.loc), "an 'http-request' rule");
    for (const auto& r : p.http_response_rules) refuse_payload(r.cond, line_of(p.loc), "an 'http-response' rule");
    for (const auto& r : p.http_after_response_rules)
      refuse_payload(r.cond, line_of(p.loc), "an 'http-after-response' rule");
    for (const auto& c : p.monitor_fail) refuse_payload(c, line_of(p.monitor_fail_loc), "'monitor fail'");
    // HTTP message offsets are kept below 2^28, so tune.bufsize must stay below 256 MB once a
    // proxy is in HTTP mode; reported once, at the first HTTP proxy, in HAProxy's words.
    if (p.mode == Mode::kHttp && global.tune_bufsize >= (256 << 20) && !bufsize_reported) {
      bufsize_reported = true;
      fatal(fmt::format("global.tune.bufsize must be below 256 MB when HTTP is in use (current "
                        "value = {}).", global.tune_bufsize),
            false);
    }
    // A check connects to the server's port or to `port`; a port-mapped server has neither.
    for (const auto& s : p.servers)
      if (s.check && s.check_port == 0 && s.addr.port_mapped)
        fatal(fmt::format("proxy '{}': server '{}' has neither service port nor check port.",
                          p.name, s.name));
    // A frontend may only use a backend of the same mode, except that a tcp frontend may use
    // an http backend (an upgrade), as in HAProxy.
    auto check_mode = [&](const ProxyConfig& be, const char* how) {
      if (p.mode == Mode::kHttp && be.mode == Mode::kTcp)
        fatal(fmt::format("http {} '{}' ({}:{}) tries to use incompatible tcp {} '{}' ({}:{}) {} (see 'mode').",
                          type_word(p), p.name, p.loc.file, p.loc.line, type_word(be), be.name, be.loc.file,
                          be.loc.line, how),
              false);
    };
    // use-server: a static name must be a server of this proxy.
    for (auto& us : p.use_servers) {
      if (us.dynamic) continue;
      for (std::size_t j = 0; j < p.servers.size(); ++j)
        if (p.servers[j].name == us.name) us.server_index = static_cast<int>(j);
      if (us.server_index < 0)
        fatal(fmt::format("{} '{}' : unable to find server '{}' referenced in a 'use-server' rule.",
                          type_word(p), p.name, us.name),
              false);
    }
    auto find_backend = [&](const std::string& name) {
      int found = -1;
      for (std::size_t j = 0; j < px.size(); ++j)
        if (px[j].name == name && (px[j].caps & ProxyConfig::kBackend)) found = static_cast<int>(j);
      return found;
    };
    if (p.caps & ProxyConfig::kFrontend) {
      for (auto& ub : p.use_backends) {
        if (ub.dynamic) continue;   // looked up per request
        if (ub.name == p.name) {
          fatal(fmt::format("Proxy '{}': loop detected for use_backend: '{}'.", p.name, ub.name), false);
          continue;
        }
        ub.backend_index = find_backend(ub.name);
        if (ub.backend_index < 0) {
          fatal(fmt::format("Proxy '{}': unable to find required use_backend: '{}'.", p.name, ub.name), false);
          continue;
        }
        check_mode(px[static_cast<std::size_t>(ub.backend_index)], "in a 'use_backend' rule");
      }
    }
    // `capture ... id <n>`: a frontend must have the slot; a backend's rule names a slot of
    // each stream's frontend, looked up when it runs.
    if (p.caps & ProxyConfig::kFrontend) {
      auto check_ids = [&](const std::vector<rules::HttpRule>& list, std::size_t slots,
                           std::string_view kw) {
        for (const auto& r : list)
          if (r.action == rules::HttpRule::Action::kCapture && r.capture_len == 0 &&
              r.capture_id >= static_cast<int>(slots))
            fatal(fmt::format("Proxy '{}': unable to find capture id '{}' referenced by {} capture rule.",
                              p.name, r.capture_id, kw),
                  false);
      };
      check_ids(p.http_request_rules, p.capture_request.size(), "http-request");
      check_ids(p.http_response_rules, p.capture_response.size(), "http-response");
      check_ids(p.http_after_response_rules, p.capture_response.size(), "http-response");
    }
    if (!p.default_backend.empty() && (p.caps & ProxyConfig::kFrontend)) {
      if (p.default_backend == p.name) {
        fatal(fmt::format("Proxy '{}': loop detected for default_backend: '{}'.", p.name, p.default_backend), false);
      } else {
        int found = -1;
        for (std::size_t j = 0; j < px.size(); ++j)
          if (px[j].name == p.default_backend && (px[j].caps & ProxyConfig::kBackend))
            found = static_cast<int>(j);
        if (found < 0) {
          fatal(fmt::format("Proxy '{}': unable to find required default_backend: '{}'.", p.name,
                            p.default_backend),
                false);
        } else {
          p.default_backend_index = found;
          check_mode(px[static_cast<std::size_t>(found)], "as its default backend");
          if (!p.servers.empty())
            warning(fmt::format("{} '{}' has both servers and a 'default_backend': its servers "
                                "will never be used.",
                                type_word(p), p.name),
                    false);
        }
      }
    }
    if (fatals_ > errors_before) return false;
    // Keep-alive tunings only act with keep-alive on (as in HAProxy); one written in a proxy
    // whose side never turns it on would be silently without effect.
    for (auto [at, on, side] : {std::tuple{&p.clitcpka_tuned_at, p.option_clitcpka, "clitcpka"},
                                std::tuple{&p.srvtcpka_tuned_at, p.option_srvtcpka, "srvtcpka"}}) {
      if (at->line > 0 && !on)
        warning(fmt::format("parsing [{}:{}] : '{}-*' tunings have no effect in {} '{}' without "
                            "'option {}' or 'option tcpka'.",
                            at->file, at->line, side, type_word(p), p.name, side),
                false);
    }
    // `stats auth` is itself a last `stats http-request auth` rule in HAProxy, which refuses
    // to mix it with explicit rules.
    if (p.stats.enabled && !p.stats.http_request.empty() &&
        (!p.stats.auth.empty() || !p.stats.realm.empty()))
      fatal(fmt::format("proxy '{}': stats 'auth'/'realm' and 'http-request' can't be used at the "
                        "same time.", p.name),
            false);
    if (p.mode == Mode::kTcp) {
      // HTTP-only settings in a TCP proxy: HAProxy's warnings, and they are dropped.
      std::string who = fmt::format("{} '{}'", type_word(p), p.name);
      if (!p.http_request_rules.empty()) {
        warning(fmt::format("'http-request' rules ignored for {} as they require HTTP mode.", who), false);
        p.http_request_rules.clear();
      }
      if (!p.http_response_rules.empty()) {
        warning(fmt::format("'http-response' rules ignored for {} as they require HTTP mode.", who), false);
        p.http_response_rules.clear();
      }
      if (!p.http_after_response_rules.empty()) {
        warning(fmt::format("'http-after-response' rules ignored for {} as they require HTTP mode.", who), false);
        p.http_after_response_rules.clear();
      }
      if (p.forwardfor.enabled) {
        warning(fmt::format("'option forwardfor' ignored for {} as it requires HTTP mode.", who), false);
        p.forwardfor.enabled = false;
      }
      if (p.forwarded.enabled) {
        warning(fmt::format("'option forwarded' ignored for {} as it requires HTTP mode.", who), false);
        p.forwarded = ForwardedConfig{};
      }
      if (p.originalto.enabled) {
        warning(fmt::format("'option originalto' ignored for {} as it requires HTTP mode.", who), false);
        p.originalto = OriginalToConfig{};
      }
      if (p.stats.enabled) {
        warning(fmt::format("'stats' statement ignored for proxy '{}' as it requires HTTP mode.",
                            p.name),
                false);
        p.stats.enabled = false;
      }
      if (!p.capture_cookie.empty() && (p.caps & ProxyConfig::kFrontend)) {
        warning(fmt::format("'capture' statement ignored for proxy '{}' as it requires HTTP mode.",
                            p.name),
                false);
        p.capture_cookie.clear();
      }
      if (!p.cookie.name.empty() && (p.caps & ProxyConfig::kBackend)) {
        warning(fmt::format("cookie will be ignored for {} '{}' (needs 'mode http').",
                            type_word(p), p.name),
                false);
        p.cookie = CookieConfig{};
      }
      if (p.caps & ProxyConfig::kBackend)
        for (auto& srv : p.servers)
          if (!srv.cookie.empty()) {
            warning(fmt::format("{} '{}' : ignoring cookie for server '{}' as HTTP mode is disabled.",
                                type_word(p), p.name, srv.name),
                    false);
            srv.cookie.clear();
          }
      if (!p.monitor_uri.empty() && (p.caps & ProxyConfig::kFrontend)) {
        warning(fmt::format("monitor-uri will be ignored for proxy '{}' (needs 'mode http').",
                            p.name),
                false);
        p.monitor_uri.clear();
      }
      bool fe = (p.caps & ProxyConfig::kFrontend) != 0;
      if (fe && p.accept_unsafe_requests) {
        warning(fmt::format("'option accept-unsafe-violations-in-http-request' ignored for {} as it "
                            "requires HTTP mode.", who),
                false);
        p.accept_unsafe_requests = false;
      }
      if (fe && p.option_httplog) {
        warning(fmt::format("parsing [{}:{}] : 'option {}' not usable with {} (needs 'mode "
                            "http'). Falling back to 'option tcplog'.",
                            p.httplog_loc.file, p.httplog_loc.line,
                            p.log_format_kind == ProxyConfig::LogFormatKind::kHttpsLog ? "httpslog"
                                                                                       : "httplog",
                            who),
                false);
        p.option_httplog = false;
        p.option_tcplog = true;
        p.log_format_kind = ProxyConfig::LogFormatKind::kTcpLog;
      }
    }
    compile_log_formats(p);
    if ((p.caps & ProxyConfig::kBackend) && p.state_from == ProxyConfig::StateFrom::kGlobal &&
        global.server_state_file.empty())
      warning(fmt::format("backend '{}' configured to load server state file from global section "
                          "'server-state-file' directive. Unfortunately, 'server-state-file' is "
                          "not set!", p.name),
              false);
    if ((p.caps & ProxyConfig::kBackend) && !p.state_file_name.empty() &&
        p.state_from != ProxyConfig::StateFrom::kLocal)
      warning(fmt::format("backend '{}' : 'server-state-file-name' has no effect without "
                          "'load-server-state-from-file local'.", p.name),
              false);
    compile_balance(p);
    compile_forwarded(p);
    compile_server_formats(p);
    if ((p.caps & ProxyConfig::kBackend) && p.check_type == ProxyConfig::CheckType::kExternal) {
      if (!global.external_check)
        fatal(fmt::format("Proxy '{}' : 'option external-check' unable to find required "
                          "'global.external-check'.", p.name),
              false);
      else if (p.external_check_command.empty())
        fatal(fmt::format("Proxy '{}' : 'option external-check' unable to find required "
                          "'external-check command'.", p.name),
              false);
      if (!global.insecure_fork_wanted)
        warning(fmt::format("Proxy '{}' : 'insecure-fork-wanted' not enabled in the global "
                            "section, 'option external-check' will likely fail.", p.name),
                false);
    }
    // A connect through the server's SOCKS4 proxy (`via-socks4`) connects directly to a server
    // that has none, as in HAProxy, which says nothing: sluice says so, for each such server.
    if (p.caps & ProxyConfig::kBackend) {
      const TcpCheckConfig& rules = p.check_type == ProxyConfig::CheckType::kHttp
                                        ? p.http_check_rules : p.tcp_check;
      const bool via = std::any_of(rules.rules.begin(), rules.rules.end(),
                                   [](const check::CheckRule& r) { return r.via_socks4; });
      for (const ServerConfig& s : p.servers)
        if (via && s.check && !s.has_socks4)
          warning(fmt::format("[{}:{}] : 'server {}/{}' : 'connect via-socks4' of the check rules "
                              "has no effect: the server has no 'socks4'.",
                              s.loc.file, s.loc.line, p.name, s.name),
                  false);
    }
    // HAProxy: rules without the option that runs them are dropped, said once.
    if ((p.caps & ProxyConfig::kBackend) && !p.tcp_check.rules.empty() && !p.option_tcp_check &&
        !p.tcp_check.inherited)
      warning(fmt::format("{} '{}' uses tcp-check rules without 'option tcp-check', so the rules "
                          "are ignored.", type_word(p), p.name),
              false);
    if ((!p.capture_request.empty() || !p.capture_response.empty()) &&
        !(p.caps & ProxyConfig::kFrontend)) {
      warning(fmt::format("parsing [{}:{}] : 'capture' ignored because {} '{}' has no frontend "
                          "capability.",
                          p.capture_loc.file, p.capture_loc.line, type_word(p), p.name),
              false);
      p.capture_request.clear();
      p.capture_response.clear();
    }
    if (!p.capture_cookie.empty() && !(p.caps & ProxyConfig::kFrontend)) {
      warning(fmt::format("parsing [{}:{}] : 'capture' ignored because {} '{}' has no frontend "
                          "capability.",
                          p.capture_cookie_loc.file, p.capture_cookie_loc.line, type_word(p), p.name),
              false);
      p.capture_cookie.clear();
    }
    if (!p.monitor_uri.empty() && !(p.caps & ProxyConfig::kFrontend)) {
      warning(fmt::format("parsing [{}:{}] : 'monitor-uri' ignored because {} '{}' has no "
                          "frontend capability.",
                          p.monitor_uri_loc.file, p.monitor_uri_loc.line, type_word(p), p.name),
              false);
      p.monitor_uri.clear();
    }
    // `monitor fail` only changes what `monitor-uri` answers: alone it would do nothing.
    if (!p.monitor_fail.empty() && p.monitor_uri.empty())
      warning(fmt::format("parsing [{}:{}] : 'monitor fail' has no effect in {} '{}' without "
                          "'monitor-uri'.",
                          p.monitor_fail_loc.file, p.monitor_fail_loc.line, type_word(p), p.name),
              false);
    if ((p.caps & ProxyConfig::kFrontend) && p.binds.empty())
      warning(fmt::format("{} '{}' has no 'bind' directive. Please declare it as a backend if "
                          "this was intended.",
                          type_word(p), p.name),
              false);
    bool fe_missing = (p.caps & ProxyConfig::kFrontend) && p.timeouts.client == 0;
    bool be_missing = (p.caps & ProxyConfig::kBackend) && !p.servers.empty() &&
                      (p.timeouts.connect == 0 ||
                       (p.timeouts.server == 0 && p.timeouts.tunnel == 0));
    if (fe_missing || be_missing)
      warning(fmt::format(
                  "missing timeouts for {} '{}'.\n"
                  "   | While not properly invalid, you will certainly encounter various problems\n"
                  "   | with such a configuration. To fix this, please ensure that all following\n"
                  "   | timeouts are set to a non-zero value: 'client', 'connect', 'server'.",
                  type_word(p), p.name),
              false);
  }
  resolve_tracks(px);
  return fatals_ == 0;
}

// `track [<backend>/]<server>`: the tracked server exists, has a check or tracks one itself,
// and no chain comes back to where it started. HAProxy's messages, at the server's line.
void Parser::resolve_tracks(std::vector<ProxyConfig>& px) {
  for (std::size_t pi = 0; pi < px.size(); ++pi) {
    ProxyConfig& p = px[pi];
    for (ServerConfig& sv : p.servers) {
      if (sv.track.empty()) continue;
      const std::string head = fmt::format("[{}:{}] : 'server {}/{}'", sv.loc.file, sv.loc.line,
                                           p.name, sv.name);
      const std::size_t slash = sv.track.find('/');
      const std::string pname = slash == std::string::npos ? p.name : sv.track.substr(0, slash);
      const std::string sname = slash == std::string::npos ? sv.track : sv.track.substr(slash + 1);
      int tp = -1;
      for (std::size_t j = 0; j < px.size(); ++j)
        if ((px[j].caps & ProxyConfig::kBackend) && px[j].name == pname)
          tp = static_cast<int>(j);
      if (tp < 0) {
        fatal(fmt::format("{} : unable to find required proxy '{}' for tracking.", head, pname), false);
        continue;
      }
      const auto& targets = px[static_cast<std::size_t>(tp)].servers;
      int ts = -1;
      for (std::size_t k = 0; k < targets.size(); ++k)
        if (targets[k].name == sname) ts = static_cast<int>(k);
      if (ts < 0) {
        fatal(fmt::format("{} : unable to find required server '{}' for tracking.", head, sname), false);
        continue;
      }
      const ServerConfig& t = targets[static_cast<std::size_t>(ts)];
      if (!t.check && !t.agent_check && t.track.empty()) {
        fatal(fmt::format("{} : unable to use {}/{} for tracking as it does not have any check "
                          "nor agent enabled.", head, pname, sname),
              false);
        continue;
      }
      sv.track_proxy = tp;
      sv.track_server = ts;
    }
  }
  // A chain that loops never reaches a check.
  for (const ProxyConfig& pc : px) {
    for (const ServerConfig& sv : pc.servers) {
      if (sv.track_proxy < 0) continue;
      const ServerConfig* at = &sv;
      std::size_t hops = 0;
      while (at && at->track_proxy >= 0 && hops <= 1024) {
        at = &px[static_cast<std::size_t>(at->track_proxy)]
                  .servers[static_cast<std::size_t>(at->track_server)];
        ++hops;
      }
      if (hops > 1024 || (at && !at->check && !at->agent_check)) {
        fatal(fmt::format("[{}:{}] : 'server {}/{}' : unable to track {}: the chain of tracked "
                          "servers loops and reaches no check.",
                          sv.loc.file, sv.loc.line, pc.name, sv.name, sv.track),
              false);
        return;
      }
    }
  }
}

}  // namespace sluice::config

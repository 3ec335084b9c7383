// `tcp-check comment|connect|send|send-lf|send-binary|send-binary-lf|expect`: the rule set of
// `option tcp-check` (check/rules.h), with HAProxy 3.5's messages. The log-formats the rules
// use are compiled once the proxy is parsed (Parser::compile_tcp_check).
#include <sys/socket.h>

#include <algorithm>
#include <climits>
#include <span>

#include <fmt/format.h>

#include "base/strings.h"
#include "config/proxy_keywords.h"
#include "config/units.h"
#include "config/tls_words.h"
#include "sample/expr.h"

namespace sluice::config::proxy_kw {

using check::CheckRule;

int add_check_format(TcpCheckConfig& tc, const Line& l, std::string_view what,
                     const std::string& text) {
  auto f = log::Format::parse(text, check_sample_avail(), false);
  if (!f.ok())
    throw ConfigError{fmt::format("{}'{}' : '{}' invalid log-format string ({}).", l.where, what,
                                  text, f.error().message)};
  tc.formats.push_back(text);
  tc.compiled.push_back(std::make_shared<const log::Format>(std::move(f.value())));
  return static_cast<int>(tc.formats.size() - 1);
}

namespace {

int add_format(TcpCheckConfig& tc, const Line& l, std::string_view what, const std::string& text) {
  return add_check_format(tc, l, what, text);
}

lb::CheckStatus parse_status(const Line& l, std::string_view kw, std::string_view opt,
                             const std::string& v) {
  using S = lb::CheckStatus;
  struct Allowed {
    std::string_view opt;
    std::string_view names;
    std::vector<std::pair<std::string_view, S>> list;
  };
  static const Allowed kAllowed[] = {
      {"ok-status", "'L4OK', 'L6OK', 'L7OK' or 'L7OKC'",
       {{"L4OK", S::kL4Ok}, {"L6OK", S::kL6Ok}, {"L7OK", S::kL7Ok}, {"L7OKC", S::kL7OkC}}},
      {"error-status", "'L4CON', 'L6RSP', 'L7RSP' or 'L7STS'",
       {{"L4CON", S::kL4Con}, {"L6RSP", S::kL6Rsp}, {"L7RSP", S::kL7Rsp}, {"L7STS", S::kL7Sts}}},
      {"tout-status", "'L4TOUT', 'L6TOUT' or 'L7TOUT'",
       {{"L4TOUT", S::kL4Tout}, {"L6TOUT", S::kL6Tout}, {"L7TOUT", S::kL7Tout}}},
  };
  for (const Allowed& a : kAllowed) {
    if (a.opt != opt) continue;
    for (const auto& [name, st] : a.list)
      if (name == v) return st;
    throw ConfigError{fmt::format("{}'{}' : '{}' only supports {} status (got '{}')..", l.where,
                                  kw, opt, a.names, v)};
  }
  return S::kL7Ok;
}

// HAProxy's words for a hex string that is not one.
void hex_or_throw(const Line& l, std::string_view what, const std::string& hex, std::string* out,
                  bool name_arg) {
  std::string why;
  if (hex.size() % 2 != 0) {
    why = "an even number of hex digit is expected";
  } else {
    for (char c : hex)
      if (base::hex_value(c) < 0) {
        why = fmt::format("an hex digit is expected (found '{}')", c);
        break;
      }
  }
  if (why.empty() && base::hex_decode(hex, out)) return;
  if (name_arg)
    throw ConfigError{fmt::format("{}'{}' : '{}' invalid binary string ({}).", l.where, what, hex, why)};
  throw ConfigError{fmt::format("{}'{}' : invalid binary string ({}).", l.where, what, why)};
}

std::shared_ptr<const base::Regex> compile_re(const Line& l, std::string_view kw,
                                              const std::string& pattern) {
  auto re = std::make_shared<base::Regex>();
  std::string error;
  if (!re->compile(pattern, &error))
    throw ConfigError{fmt::format("{}'{}' : {}.", l.where, kw, error)};
  return re;
}

// http-check expect [!] hdr|fhdr name [-m <meth>] <name> [value [-m <meth>] <pattern>], from
// args[i] (after the kind); returns the index of its last word.
std::size_t parse_hdr_expect(const Line& l, std::string_view kw, std::string_view kind,
                             std::size_t i, CheckRule* r) {
  using C = CheckRule::Cmp;
  auto method = [&](std::size_t* at, C* out) {
    if (*at < l.args.size() && l.args[*at] == "-m") {
      static constexpr std::pair<std::string_view, C> kCmps[] = {
          {"str", C::kStr}, {"beg", C::kBeg}, {"end", C::kEnd}, {"sub", C::kSub}, {"reg", C::kReg}};
      const std::string m = *at + 1 < l.args.size() ? l.args[*at + 1] : "";
      const auto* c = std::find_if(std::begin(kCmps), std::end(kCmps),
                                   [&](const auto& e) { return e.first == m; });
      if (c == std::end(kCmps))
        throw ConfigError{fmt::format("{}'{}' : '{}' : '-m' only supports 'str', 'beg', 'end', "
                                      "'sub' or 'reg' (got '{}').", l.where, kw, kind, m)};
      *out = c->second;
      *at += 2;
    }
  };
  if (i >= l.args.size() || l.args[i] != "name")
    throw ConfigError{fmt::format("{}'{}' : '{}' expects at the name keyword as first argument "
                                  "followed by a pattern.", l.where, kw, kind)};
  ++i;
  method(&i, &r->name_cmp);
  if (i >= l.args.size() || l.args[i].empty())
    throw ConfigError{fmt::format("{}'{}' : '{}' expects at the name keyword as first argument "
                                  "followed by a pattern.", l.where, kw, kind)};
  r->hdr_name = l.args[i];
  r->pattern = r->hdr_name;
  if (r->name_cmp == C::kReg) r->name_re = compile_re(l, kw, r->hdr_name);
  if (i + 1 < l.args.size() && l.args[i + 1] == "value") {
    i += 2;
    method(&i, &r->value_cmp);
    if (i >= l.args.size() || l.args[i].empty())
      throw ConfigError{fmt::format("{}'{}' : '{}' expect a pattern with the value keyword.",
                                    l.where, kw, kind)};
    r->has_value = true;
    r->bytes = l.args[i];
    if (r->value_cmp == C::kReg) r->re = compile_re(l, kw, r->bytes);
  }
  return i;
}

}  // namespace

CheckRule parse_check_connect(Parser& p, TcpCheckConfig& tc, const Line& l, std::string_view kw) {
  CheckRule r;
  r.kind = CheckRule::Kind::kConnect;
  for (std::size_t i = 2; i < l.args.size(); ++i) {
    const std::string& o = l.args[i];
    const bool has_v = i + 1 < l.args.size();
    if (o == "default") {
      r.is_default = true;   // the server's own parameters: its check-send-proxy
    } else if (o == "port") {
      if (!has_v)
        throw ConfigError{fmt::format("{}'{} connect' : 'port' expects a port number or a "
                                      "sample expression as argument..", l.where, kw)};
      const std::string& v = l.args[++i];
      // A number is a port; anything else a sample expression, evaluated at each check.
      if (!v.empty() && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        auto n = parse_strict_int(v, 1, 65535);
        if (!n)
          throw ConfigError{fmt::format("{}'{} connect' : expects a valid TCP port (from range 1 "
                                        "to 65535) or a sample expression, got {}..", l.where, kw, v)};
        r.port = static_cast<int>(*n);
      } else {
        sample::ParseCtx pc;
        pc.avail = check_sample_avail();
        std::size_t end = 0;
        auto e = sample::Expr::parse(v, pc, &end);
        if (!e.ok() || end != v.size())
          throw ConfigError{fmt::format(
              "{}'{} connect' : error detected while parsing port expression : {}.", l.where, kw,
              e.ok() ? fmt::format("unexpected character '{}'", v[end]) : e.error().message)};
        tc.exprs.push_back(std::make_shared<const sample::Expr>(std::move(e.value())));
        r.port_expr = static_cast<int>(tc.exprs.size() - 1);
      }
    } else if (o == "addr") {
      if (!has_v)
        throw ConfigError{fmt::format("{}'{} connect' : 'addr' expects an address as "
                                      "argument.", l.where, kw)};
      const std::string& v = l.args[++i];
      auto a = net::parse_server_address(v);
      if (!a.ok() || a.value().addr.family() == AF_UNIX)
        throw ConfigError{fmt::format("{}'{} connect' : 'addr' : invalid address: '{}' in "
                                      "'{}'..", l.where, kw, v, v)};
      r.has_addr = true;
      r.addr = a.value().addr;
    } else if (o == "send-proxy") {
      r.send_proxy = true;
    } else if (o == "linger") {
      r.linger = true;
    } else if (o == "comment") {
      if (!has_v)
        throw ConfigError{fmt::format("{}'{} connect' : 'comment' expects a string as "
                                      "argument.", l.where, kw)};
      r.comment = l.args[++i];
    } else if (o == "ssl") {
      r.ssl = true;
    } else if (o == "sni") {
      if (!has_v)
        throw ConfigError{fmt::format("{}'{} connect' : 'sni' expects a string as argument..",
                                      l.where, kw)};
      r.sni = l.args[++i];
    } else if (o == "alpn") {
      if (!has_v)
        throw ConfigError{fmt::format("{}'{} connect' : 'alpn' : missing the comma-delimited "
                                      "ALPN protocol suite.", l.where, kw)};
      r.alpn.clear();
      for (const auto& a : split_commas(l.args[++i])) {
        if (a.empty() || a.size() > 255)
          throw ConfigError{fmt::format("{}'{} connect' : 'alpn' : invalid protocol name '{}'.",
                                        l.where, kw, a)};
        r.alpn.push_back(a);
      }
    } else if (o == "proto" && has_v && l.args[i + 1] == "h1") {
      ++i;   // HTTP/1, the only protocol sluice's checks speak
    } else if (o == "via-socks4") {
      r.via_socks4 = true;
    } else if (o == "proto") {
      throw ConfigError{fmt::format("{}'{} connect' : '{}' is not supported by sluice yet.",
                                    l.where, kw, o)};
    } else {
      throw ConfigError{fmt::format("{}'{} connect' : expects 'comment', 'port', 'addr', "
                                    "'send-proxy', 'ssl', 'sni', 'alpn' or 'via-socks4', "
                                    "'linger', 'default' but got '{}' as argument..", l.where, kw, o)};
    }
  }
  // HAProxy 3.5 takes them silently and sends nothing: say that they do nothing here.
  if (!r.ssl && (!r.sni.empty() || !r.alpn.empty()))
    p.warning(fmt::format("{}'{} connect' : '{}' has no effect without 'ssl'.", l.where, kw,
                          r.sni.empty() ? "alpn" : "sni"));
  return r;
}

namespace {

CheckRule parse_send(TcpCheckConfig& tc, const Line& l, const std::string& sub) {
  CheckRule r;
  r.kind = CheckRule::Kind::kSend;
  const std::string what = "tcp-check " + sub;
  if (l.args.size() < 3 || l.args[2].empty())
    throw ConfigError{fmt::format("{}'{}' : '{}' expects a {} as argument.", l.where, what,
                                  sub == "send" ? "string" : sub, sub == "send" ? "send" : "string")};
  const std::string& v = l.args[2];
  if (sub == "send") {
    r.data = v;
  } else if (sub == "send-binary") {
    hex_or_throw(l, what, v, &r.data, true);
  } else {
    r.fmt = add_format(tc, l, what, v);
    r.binary = sub == "send-binary-lf";
  }
  for (std::size_t i = 3; i < l.args.size(); ++i) {
    if (l.args[i] != "comment")
      throw ConfigError{fmt::format("{}'{}' : expects 'comment' but got '{}' as argument..",
                                    l.where, what, l.args[i])};
    if (i + 1 >= l.args.size())
      throw ConfigError{fmt::format("{}'{}' : 'comment' expects a string as argument.", l.where, what)};
    r.comment = l.args[++i];
  }
  return r;
}

}  // namespace

CheckRule parse_check_expect(TcpCheckConfig& tc, const Line& l, bool http) {
  using M = CheckRule::Match;
  const std::string kw = http ? "http-check expect" : "tcp-check expect";
  const std::string only =
      http ? "'only supports min-recv, [!]string', '[!]rstring', '[!]string-lf', '[!]status', "
             "'[!]rstatus', [!]hdr, [!]fhdr or comment"
           : "'only supports min-recv, '[!]binary', '[!]string', '[!]rstring', '[!]string-lf'"
             "'[!]rbinary', '[!]binary-lf' or comment";
  CheckRule r;
  r.kind = CheckRule::Kind::kExpect;
  if (l.args.size() < 3)
    throw ConfigError{fmt::format("{}'{}' : expects at least a matching pattern as arguments.",
                                  l.where, kw)};
  bool have_match = false;
  for (std::size_t i = 2; i < l.args.size(); ++i) {
    const std::string& o = l.args[i];
    const bool has_v = i + 1 < l.args.size();
    auto value = [&](std::string_view what) -> const std::string& {
      if (!has_v || l.args[i + 1].empty())
        throw ConfigError{fmt::format("{}'{}' : '{}' expects a {} as argument.", l.where, kw, o,
                                      what)};
      return l.args[++i];
    };
    if (o == "min-recv") {
      const std::string& v = value("integer");
      auto n = parse_strict_int(v, 0, INT_MAX);
      if (!n)
        throw ConfigError{fmt::format("{}'{}' : 'min-recv' expects an integer argument, got '{}'.",
                                      l.where, kw, v)};
      r.min_recv = static_cast<int>(*n);
    } else if (o == "comment") {
      r.comment = value("string");
    } else if (o == "ok-status" || o == "error-status" || o == "tout-status") {
      const lb::CheckStatus st = parse_status(l, kw, o, value("string"));
      (o == "ok-status" ? r.ok_status : o == "error-status" ? r.error_status : r.tout_status) = st;
      if (o == "error-status") r.error_status_set = true;
    } else if (o == "on-success" || o == "on-error") {
      const std::string& v = value("log-format string");
      (o == "on-success" ? r.on_success : r.on_error) = add_format(tc, l, kw, v);
    } else if (o == "status-code") {
      const std::string& v = value("expression");
      r.status_code = add_format(tc, l, kw, "%[" + v + "]");
    } else if (!have_match) {
      std::string kind = o;
      if (o == "!") {
        r.negate = true;
        if (!has_v) break;
        kind = l.args[++i];
      }
      static constexpr std::pair<std::string_view, M> kTcpKinds[] = {
          {"string", M::kString}, {"rstring", M::kRstring}, {"binary", M::kBinary},
          {"rbinary", M::kRbinary}, {"string-lf", M::kStringLf}, {"binary-lf", M::kBinaryLf}};
      static constexpr std::pair<std::string_view, M> kHttpKinds[] = {
          {"string", M::kBody}, {"rstring", M::kRbody}, {"string-lf", M::kBodyLf},
          {"status", M::kStatus}, {"rstatus", M::kRstatus}, {"hdr", M::kHdr}, {"fhdr", M::kFhdr}};
      const M* found = nullptr;
      for (const auto& [name, m] : http ? std::span<const std::pair<std::string_view, M>>(kHttpKinds)
                                        : std::span<const std::pair<std::string_view, M>>(kTcpKinds))
        if (name == kind) found = &m;
      if (!found)
        throw ConfigError{fmt::format("{}'{}' : {} but got '{}' as argument..", l.where, kw, only, kind)};
      r.match = *found;
      have_match = true;
      if (r.match == M::kHdr || r.match == M::kFhdr) {
        i = parse_hdr_expect(l, kw, kind, i + 1, &r);
        continue;
      }
      if (i + 1 >= l.args.size() || l.args[i + 1].empty())
        throw ConfigError{fmt::format("{}'{}' : '{}' expects a <pattern> as argument.", l.where, kw,
                                      kind)};
      r.pattern = l.args[++i];
      switch (r.match) {
        case M::kString:
        case M::kBody: r.bytes = r.pattern; break;
        case M::kBinary: hex_or_throw(l, kw, r.pattern, &r.bytes, false); break;
        case M::kStatus:
          for (char c : r.pattern)
            if (!(c >= '0' && c <= '9') && c != ',' && c != '-')
              throw ConfigError{fmt::format("{}'{}' : invalid character '{}' in the list of status "
                                            "codes.", l.where, kw, c)};
          break;
        case M::kRstring:
        case M::kRbinary:
        case M::kRstatus:
        case M::kRbody: r.re = compile_re(l, kw, r.pattern); break;
        case M::kStringLf:
        case M::kBinaryLf:
        case M::kBodyLf: r.fmt = add_format(tc, l, kw, r.pattern); break;
        default: break;   // the protocol options' own, not written in rules
      }
    } else {
      throw ConfigError{fmt::format("{}'{}' : {} but got '{}' as argument..", l.where, kw, only, o)};
    }
  }
  if (!have_match)
    throw ConfigError{fmt::format("{}'{}' : expects at least a matching pattern as arguments.",
                                  l.where, kw)};
  return r;
}

void kw_external_check(Parser& p, Line& l) {
  ProxyConfig& px = p.cur_proxy().cfg;
  const std::string sub = l.args.size() > 1 ? l.args[1] : "";
  if (sub != "command" && sub != "path")
    throw ConfigError{fmt::format("{}'external-check' only supports 'command' and 'path'. but got "
                                  "'{}'.", l.where, sub)};
  if (l.args.size() < 3 || l.args[2].empty())
    throw ConfigError{fmt::format("{}missing argument after '{}'.", l.where, sub)};
  no_extra(l, 3);
  (sub == "command" ? px.external_check_command : px.external_check_path) = l.args[2];
  if (sub == "command") px.external_check_loc = l.loc;
}

void begin_check_rule(TcpCheckConfig& tc, const Line& l) {
  if (tc.inherited || !tc.protocol.empty()) tc = TcpCheckConfig{};
  if (tc.rules.empty()) tc.loc = l.loc;
}

CheckRule parse_check_var(TcpCheckConfig& tc, const Line& l, std::string_view kw) {
  const std::string& word = l.args[1];
  const std::string name = word.substr(0, word.find('('));
  const std::vector<std::string> words(l.args.begin() + 1, l.args.end());
  auto action = std::make_shared<rules::VarAction>();
  auto taken = rules::parse_var_action(words, check_sample_avail(), action.get());
  if (!taken.ok())
    throw ConfigError{fmt::format("{}'{} {}' : '{}' : {}.", l.where, kw, word, name,
                                  taken.error().message)};
  if (taken.value() < words.size())
    throw ConfigError{fmt::format("{}'{} {}' : unexpected argument '{}' (a check step takes no "
                                  "condition).", l.where, kw, word, words[taken.value()])};
  // A check has no session nor transaction whose variables it could keep.
  using sample::Scope;
  const Scope scope = action->var.scope;
  if (scope != Scope::kCheck && scope != Scope::kProc)
    throw ConfigError{fmt::format("{}'{} {}' : a health check keeps only 'check.' and 'proc.' "
                                  "variables (got '{}').", l.where, kw, word,
                                  sample::scope_name(scope))};
  CheckRule r;
  r.kind = action->kind == rules::VarAction::Kind::kUnset ? CheckRule::Kind::kUnsetVar
                                                          : CheckRule::Kind::kSetVar;
  tc.actions.push_back(std::move(action));
  r.action = static_cast<int>(tc.actions.size() - 1);
  return r;
}

CheckRule parse_check_comment(const Line& l, std::string_view kw) {
  if (l.args.size() < 3 || l.args[2].empty())
    throw ConfigError{fmt::format("{}'{} comment' : expects a string as argument.", l.where, kw)};
  CheckRule r;
  r.kind = CheckRule::Kind::kComment;
  r.comment = l.args[2];
  return r;
}

void push_check_rule(TcpCheckConfig& tc, CheckRule r) {
  if (r.kind != CheckRule::Kind::kComment && r.comment.empty() && !tc.rules.empty() &&
      tc.rules.back().kind == CheckRule::Kind::kComment)
    r.comment = tc.rules.back().comment;
  tc.rules.push_back(std::move(r));
}

void kw_tcp_check(Parser& p, Line& l) {
  ProxyConfig& px = p.cur_proxy().cfg;
  TcpCheckConfig& tc = px.tcp_check;
  const std::string sub = l.args.size() > 1 ? l.args[1] : "";
  auto begin_own = [&] { begin_check_rule(tc, l); };
  CheckRule r;
  if (sub == "comment") {
    r = parse_check_comment(l, "tcp-check");
    begin_own();
  } else if (sub == "connect") {
    begin_own();   // first: the port expression goes into the section's own set
    r = parse_check_connect(p, tc, l, "tcp-check");
  } else if (sub == "send" || sub == "send-binary" || sub == "send-lf" || sub == "send-binary-lf") {
    begin_own();
    r = parse_send(tc, l, sub);
  } else if (sub == "expect") {
    begin_own();
    r = parse_check_expect(tc, l, false);
  } else if (rules::is_var_action(sub)) {
    begin_own();
    r = parse_check_var(tc, l, "tcp-check");
  } else {
    throw ConfigError{fmt::format("{}'tcp-check' only supports 'comment', 'connect', 'send', "
                                  "'send-binary', 'expect', 'set-var-fmt(*)', 'set-var(*)', "
                                  "'unset-var(*)'. but got '{}'", l.where, sub)};
  }
  push_check_rule(tc, std::move(r));
}

}  // namespace sluice::config::proxy_kw

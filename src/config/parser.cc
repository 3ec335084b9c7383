#include "config/parser.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/strings.h"
#include "config/preprocessor_condition.h"
#include "config/proxy_keywords.h"
#include "pattern/pattern.h"

namespace sluice::config {

namespace {

constexpr int kMaxFatal = 50;
constexpr std::size_t kMaxNestedIf = 100;

// Section keywords of HAProxy that sluice does not support: refused by name.
constexpr std::string_view kOtherSections[] = {
    "peers", "resolvers", "mailers", "ring", "cache",
    "log-forward", "log-profile", "crt-store", "acme", "traces", "fcgi-app", "healthcheck",
    "namespace_list", "program",
};

constexpr std::string_view kNegatable[] = {
    "option", "log", "busy-polling", "set-dumpable", "strict-limits", "insecure-fork-wanted",
    "numa-cpu-mapping",
};

bool valid_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '.' || c == ':' || c == '-';
}

ProxyConfig builtin_defaults() {
  ProxyConfig p;
  p.type = "defaults";
  p.caps = ProxyConfig::kFrontend | ProxyConfig::kBackend;
  return p;
}

}  // namespace

Parser::Parser(const LoadOptions& options, const DiagnosticSink& sink)
    : options_(options), sink_(sink) {}

void Parser::alert(std::string text, bool config_phase) {
  ++alerts_;
  if (sink_) sink_(Diagnostic{Severity::kAlert, config_phase, std::move(text)});
}

void Parser::warning(std::string text, bool config_phase) {
  ++warnings_;
  if (sink_) sink_(Diagnostic{Severity::kWarning, config_phase, std::move(text)});
}

void Parser::notice(std::string text) {
  if (sink_) sink_(Diagnostic{Severity::kNotice, true, std::move(text)});
}

void Parser::diag(std::string text) {
  if (!options_.diag) return;
  ++warnings_;
  if (sink_) sink_(Diagnostic{Severity::kDiag, true, std::move(text)});
}

void Parser::fatal(std::string text, bool config_phase) {
  alert(std::move(text), config_phase);
  ++fatals_;
  file_had_error_ = true;
  if (fatals_ >= kMaxFatal && config_phase) {
    alert(fmt::format("too many fatal errors ({}), stopping now.", kMaxFatal));
    aborted_ = true;
    throw AbortLoad{};
  }
}

ProxyState& Parser::cur_proxy() {
  return section_ == Section::kDefaults ? defaults.back() : proxies.back();
}

std::string payload_fetch_refusal(const rules::Condition& cond, std::string_view what,
                                  const ProxyConfig& p) {
  return payload_fetch_refusal(rules::payload_fetch(cond), what, p);
}

std::string payload_fetch_refusal(const rules::PayloadUse& u, std::string_view what,
                                  const ProxyConfig& p) {
  if (u.fetch.empty()) return {};
  std::string fetch = u.acl.empty() || u.acl == "anonymous" ? fmt::format("fetch '{}'", u.fetch)
                                           : fmt::format("acl '{}' uses fetch '{}', which", u.acl, u.fetch);
  return fmt::format("{} is only available in 'tcp-request content' rules and 'use_backend' of TCP "
                     "mode frontends in sluice (here in {} of {} '{}').",
                     fetch, what, Parser::type_word(p), p.name);
}

std::string Parser::type_word(const ProxyConfig& p) {
  if (p.type == "listen") return "proxy";
  return p.type;
}

std::string Parser::section_name() const {
  switch (section_) {
    case Section::kGlobal: return "global";
    case Section::kDefaults:
      return defaults.back().defaults_name.empty() ? "defaults" : defaults.back().defaults_name;
    case Section::kProxy: return proxies.back().cfg.name;
    default: return "";
  }
}

std::string Parser::address_word(const Line& l, std::size_t idx, std::string_view what) {
  std::string raw = l.args[idx];
  std::string v = expand_address_env(raw, env);
  if (v.empty())
    throw ConfigError{fmt::format(
        "{}'{}' : '{}' resolves to an empty address (environment variable missing?)", l.where,
        what, raw)};
  return v;
}

void Parser::parse_file(std::string_view text, const std::string& name, int pass) {
  cur_file = name;
  cur_line = 0;
  cur_pass = pass;
  conds_.clear();
  stop_file_ = false;
  file_had_error_ = false;
  section_ = Section::kNone;
  std::size_t pos = 0;
  int line_no = 0;
  try {
    while (pos < text.size() && !stop_file_) {
      ++line_no;
      cur_line = line_no;
      pattern::set_config_line(cur_file, cur_line);
      auto lf = text.find('\n', pos);
      std::size_t end = lf == std::string_view::npos ? text.size() : lf;
      std::string_view raw = text.substr(pos, end - pos);
      std::size_t next = lf == std::string_view::npos ? text.size() : lf + 1;
      auto nul = raw.find('\0');
      if (nul != std::string_view::npos) {
        // What follows a NUL is lost (HAProxy reads lines as C strings).
        if (next < text.size()) {
          fatal(fmt::format("parsing [{}:{}]: Stray NUL character at position {}.", name, line_no,
                            nul + 1));
        } else {
          fatal(fmt::format(
              "parsing [{}:{}]: Missing LF on last line, file might have been truncated at "
              "position {}.",
              name, line_no, nul + 1));
        }
        break;
      }
      if (lf == std::string_view::npos) {
        fatal(fmt::format(
            "parsing [{}:{}]: Missing LF on last line, file might have been truncated at "
            "position {}.",
            name, line_no, raw.size() + 1));
        break;
      }
      // A CR anywhere ends the line, which is what makes CRLF files work.
      auto cr = raw.find('\r');
      if (cr != std::string_view::npos) raw = raw.substr(0, cr);
      process_line(raw, pass);
      pos = next;
    }
    if (!conds_.empty() && !stop_file_) {
      alert(fmt::format("parsing [{}:{}]: non-terminated '.if' block.", name, line_no));
      ++fatals_;
      aborted_ = true;
      throw AbortLoad{};
    }
  } catch (const AbortLoad&) {
    aborted_ = true;
    file_had_error_ = true;
  }
  if (file_had_error_) alert(fmt::format("Error(s) found in configuration file : {}", name));
}

void Parser::process_line(std::string_view raw, int pass) {
  std::size_t lead = 0;
  while (lead < raw.size() && (raw[lead] == ' ' || raw[lead] == '\t' || raw[lead] == '\v' ||
                               raw[lead] == '\f'))
    ++lead;
  std::string where = fmt::format("parsing [{}:{}]", cur_file, cur_line);
  if (lead < raw.size() && raw[lead] == '[') {
    // A scope declaration (SPOE files). sluice has no use for scopes, but checks them as
    // HAProxy does so that such files fail the same way. HAProxy handles them before
    // tokenizing and before `.if`, so a false block does not hide a bad one.
    auto close = raw.find(']', lead);
    std::string_view name =
        close == std::string_view::npos ? raw.substr(lead + 1) : raw.substr(lead + 1, close - lead - 1);
    if (name.empty()) {
      if (pass == 1) fatal(where + ": empty scope name is forbidden.");
      return;
    }
    bool bad = close == std::string_view::npos;
    for (char c : name) bad = bad || !valid_name_char(c);
    if (!bad) {
      std::string_view after = raw.substr(close + 1);
      auto nb = after.find_first_not_of(" \t");
      bad = nb != std::string_view::npos && after[nb] != '#';
    }
    if (bad) {
      alert(where + fmt::format(": invalid scope declaration '{}'.", raw.substr(lead)));
      ++fatals_;
      throw AbortLoad{};
    }
    return;
  }
  std::string sect = section_name();
  TokenizeContext ctx{&env, cur_file, cur_line, sect, true};
  TokenizedLine tl = tokenize_line(raw, ctx);
  if (tl.error) {
    if (tl.error_pos > 0) {
      fatal(fmt::format("{}: {} at position {}:\n{}", where, *tl.error, tl.error_pos,
                        caret_display(raw, tl.error_pos)));
    } else {
      fatal(fmt::format("{}: {}", where, *tl.error));
    }
    return;
  }
  auto& words = tl.words;
  if (words.empty()) return;
  if (!words[0].text.empty() && words[0].text[0] == '.') {
    if (handle_directive(raw, words, pass)) return;
  }
  if (!active()) return;
  // Pass 1 only checks the lines it runs: others may use variables that a later setenv
  // defines, or HAPROXY_CFGFILES, which only exists in pass 2.
  bool env_kw = words[0].text == "setenv" || words[0].text == "presetenv" ||
                words[0].text == "unsetenv" || words[0].text == "resetenv" ||
                words[0].text == "localpeer";
  for (std::size_t i = 0; i < words.size() && (pass == 2 || env_kw); ++i) {
    if (!words[i].text.empty()) continue;
    std::string msg = fmt::format(
        "{}: argument number {} at position {} is empty and marks the end of the argument "
        "list:\n{}",
        where, i, words[i].caret, caret_display(raw, words[i].caret));
    if (!empty_arg_hint_shown_) {
      empty_arg_hint_shown_ = true;
      msg +=
          "\nAborting to prevent all subsequent arguments from being silently ignored. If this "
          "is caused by an environment variable expansion, please have a look at section 2.3 "
          "of the configuration manual to find solutions to address this.";
    }
    fatal(std::move(msg));
    return;
  }
  Line l;
  l.loc = SourceLoc{cur_file, cur_line};
  l.where = where + " : ";
  for (auto& w : words) l.args.push_back(std::move(w.text));
  if (l.args[0] == "no" || l.args[0] == "default") {
    l.prefix = l.args[0] == "no" ? Prefix::kNo : Prefix::kDefault;
    l.args.erase(l.args.begin());
    bool ok = !l.args.empty() &&
              std::find(std::begin(kNegatable), std::end(kNegatable), l.args[0]) !=
                  std::end(kNegatable);
    if (!ok) {
      fatal(where +
            ": negation/default currently supported only for options, log, busy-polling, "
            "set-dumpable, strict-limits, insecure-fork-wanted and numa-cpu-mapping.");
      return;
    }
  }
  try {
    handle_section(l, pass);
  } catch (const ConfigError& e) {
    fatal(e.text);
  }
}

bool Parser::handle_directive(std::string_view raw, const std::vector<Word>& words, int pass) {
  const std::string& d = words[0].text;
  std::string where = fmt::format("parsing [{}:{}]", cur_file, cur_line);
  auto abort_with = [&](std::string text) {
    alert(std::move(text));
    ++fatals_;
    throw AbortLoad{};
  };
  auto joined = [&]() {
    std::string s;
    for (std::size_t i = 1; i < words.size(); ++i) {
      if (i > 1) s += ' ';
      s += words[i].text;
    }
    return s;
  };
  auto evaluate = [&](const std::string& expr) {
    ConditionError err;
    int r = eval_condition(expr, env, &err);
    if (r >= 0) return r == 1;
    if (err.pos > 0) {
      abort_with(fmt::format("{}: {} in '{}' at position {}:\n  {} {}\n  {}^", where, err.message,
                             d, err.pos, d, expr,
                             std::string(d.size() + 1 + static_cast<std::size_t>(err.pos) - 1, ' ')));
    }
    abort_with(fmt::format("{}: failed to evaluate condition: {}", where, err.message));
    return false;
  };
  (void)raw;
  if (d == ".if") {
    if (conds_.size() + 1 >= kMaxNestedIf)
      abort_with(fmt::format("{}: too many nested '.if', max is {}.", where, kMaxNestedIf));
    bool parent = active();
    // A condition inside a false block is never evaluated, so its errors do not count.
    bool v = parent ? evaluate(joined()) : false;
    conds_.push_back(Cond{parent && v, parent && v, false, parent});
    return true;
  }
  if (d == ".elif") {
    if (conds_.empty()) abort_with(where + ": lone '.elif' with no matching '.if'.");
    Cond& c = conds_.back();
    if (c.in_else) abort_with(where + ": '.elif' after '.else' is not permitted.");
    if (!c.parent_active || c.was_taken) {
      c.taking = false;
    } else {
      bool v = evaluate(joined());
      c.taking = v;
      c.was_taken = v;
    }
    return true;
  }
  if (d == ".else" || d == ".endif") {
    if (conds_.empty()) abort_with(fmt::format("{}: lone '{}' with no matching '.if'.", where, d));
    if (words.size() > 1)
      abort_with(fmt::format("{}: Unexpected argument '{}' for '{}'.", where, words[1].text, d));
    if (d == ".endif") {
      conds_.pop_back();
      return true;
    }
    Cond& c = conds_.back();
    if (c.in_else) abort_with(where + ": '.else' after '.else' is not permitted.");
    c.in_else = true;
    c.taking = c.parent_active && !c.was_taken;
    c.was_taken = true;
    return true;
  }
  if (!active()) return true;
  if (d == ".notice" || d == ".warning" || d == ".alert" || d == ".diag") {
    if (pass != 2) return true;
    if (words.size() > 2) {
      fatal(fmt::format(
          "{}: Unexpected argument '{}' for '{}'. Use quotes if the message should contain "
          "spaces.",
          where, words[2].text, d));
      return true;
    }
    std::string msg = fmt::format("{}: '{}'.", where, words.size() > 1 ? words[1].text : "");
    if (d == ".notice") {
      notice(std::move(msg));
    } else if (d == ".warning") {
      warning(std::move(msg));
    } else if (d == ".diag") {
      diag(std::move(msg));
    } else {
      abort_with(std::move(msg));
    }
    return true;
  }
  fatal(fmt::format("{}: unknown directive '{}'.", where, d));
  stop_file_ = true;
  return true;
}

void Parser::handle_section(Line& l, int pass) {
  const std::string& kw = l.args[0];
  bool is_other =
      std::find(std::begin(kOtherSections), std::end(kOtherSections), kw) != std::end(kOtherSections);
  if (kw == "global") {
    if (pass == 2) {
      if (l.args.size() > 1) {
        section_ = Section::kGlobal;
        throw ConfigError{fmt::format("{}'global' cannot handle unexpected argument '{}'.",
                                      l.where, l.args[1])};
      }
      if (seen_non_global)
        diag(l.where +
             "global section detected after a non-global one, the prevalence of their "
             "statements is unspecified");
    }
    section_ = Section::kGlobal;
    return;
  }
  if (kw == "defaults" || kw == "frontend" || kw == "backend" || kw == "listen") {
    seen_non_global = true;
    if (pass == 1) {
      section_ = Section::kSkip;
      return;
    }
    section_ = Section::kSkip;   // in case the header fails
    if (kw == "defaults") {
      start_defaults(l);
    } else {
      start_proxy(l, kw == "frontend"  ? ProxyConfig::kFrontend
                     : kw == "backend" ? ProxyConfig::kBackend
                                       : ProxyConfig::kFrontend | ProxyConfig::kBackend);
    }
    return;
  }
  if (kw == "http-errors") {
    seen_non_global = true;
    section_ = Section::kSkip;
    if (pass == 1) return;
    if (l.args.size() < 2 || l.args[1].empty())
      throw ConfigError{fmt::format("{}missing name for http-errors section.", l.where)};
    for (const auto& s : http_errors)
      if (s.name == l.args[1])
        throw ConfigError{fmt::format("parsing [{}:{}]: http-errors section '{}' already exists "
                                      "(declared at {}:{}).", l.loc.file, l.loc.line, l.args[1],
                                      s.loc.file, s.loc.line)};
    http_errors.push_back(HttpErrors{l.args[1], l.loc, {}});
    section_ = Section::kHttpErrors;
    return;
  }
  if (kw == "userlist") {
    seen_non_global = true;
    section_ = Section::kSkip;
    if (pass == 1) return;
    section_ = Section::kUserlist;
    proxy_kw::userlist_section(*this, l);
    return;
  }
  if (is_other) {
    seen_non_global = true;
    section_ = Section::kUnsupported;
    if (pass == 2)
      throw ConfigError{fmt::format("{}section '{}' is not supported by sluice.", l.where, kw)};
    return;
  }
  dispatch(l, pass);
}

void Parser::dispatch(Line& l, int pass) {
  const std::string& kw = l.args[0];
  if (section_ == Section::kNone) {
    if (pass == 2)
      throw ConfigError{fmt::format("parsing [{}:{}]: unknown keyword '{}' out of section.",
                                    l.loc.file, l.loc.line, kw)};
    return;
  }
  if (section_ == Section::kUnsupported || section_ == Section::kSkip) return;
  if (section_ == Section::kHttpErrors) {
    if (pass == 2) proxy_kw::http_errors_line(*this, l);
    return;
  }
  if (section_ == Section::kUserlist) {
    if (pass == 2) proxy_kw::userlist_line(*this, l);
    return;
  }
  if (section_ == Section::kGlobal) {
    if (pass == 1 && kw != "setenv" && kw != "presetenv" && kw != "unsetenv" && kw != "resetenv" &&
        kw != "localpeer")
      return;
    std::vector<std::string_view> names;
    for (const auto& k : global_keyword_table()) {
      if (k.name == kw) {
        k.parse(*this, l);
        return;
      }
      names.push_back(k.name);
    }
    if (is_known_haproxy_global_keyword(kw)) {
      const std::string_view why = haproxy_global_keyword_reason(kw);
      throw ConfigError{why.empty()
                            ? fmt::format("{}'{}' is not supported by sluice yet.", l.where, kw)
                            : fmt::format("{}'{}' is not supported by sluice yet ({}).", l.where,
                                          kw, why)};
    }
    std::string best = base::closest_match(kw, names);
    throw ConfigError{fmt::format("{}unknown keyword '{}' in 'global' section{}", l.where, kw,
                                  best.empty() ? "" : fmt::format("; did you mean '{}' maybe ?", best))};
  }
  if (pass == 1) return;
  ProxyState& ps = cur_proxy();
  ProxyConfig& px = ps.cfg;
  unsigned bit = ps.is_defaults                                  ? kInDefaults
                 : px.type == "frontend"                        ? kInFrontend
                 : px.type == "backend"                          ? kInBackend
                                                                 : kInListen;
  std::string sect = ps.is_defaults ? "defaults" : px.type;
  std::vector<std::string_view> names;
  for (const auto& k : proxy_keyword_table()) {
    if (k.name != kw) {
      names.push_back(k.name);
      continue;
    }
    if (ps.is_defaults && !(k.sections & kInDefaults))
      throw ConfigError{fmt::format("{}'{}' not allowed in 'defaults' section.", l.where, kw)};
    if (!ps.is_defaults && k.caps && !(px.caps & k.caps)) {
      bool want_be = k.caps & ProxyConfig::kBackend;
      if (kw == "server")
        throw ConfigError{fmt::format("[{}:{}] : {}'server' not allowed because {} '{}' has no "
                                      "backend capability.",
                                      l.loc.file, l.loc.line, l.where, type_word(px), px.name)};
      warning(fmt::format("{}'{}' ignored because {} '{}' has no {} capability.{}", l.where, kw,
                          type_word(px), px.name, want_be ? "backend" : "frontend",
                          kw == "maxconn" ? " Maybe you want 'fullconn' instead ?" : ""));
      // HAProxy parses the line all the same: a use-server without a condition is an error
      // even where it is ignored.
      if (kw == "use-server" && (l.args.size() < 3 || (l.args[2] != "if" && l.args[2] != "unless")))
        throw ConfigError{fmt::format("{}'{}' requires either 'if' or 'unless' followed by a "
                                      "condition.", l.where, kw)};
      return;
    }
    (void)bit;
    // acl(<name>) in this line's expressions finds the ACLs the proxy declared so far.
    sample::AclResolverScope acl_scope(ps.is_defaults ? nullptr : &px.acls);
    k.parse(*this, l);
    return;
  }
  if (is_known_haproxy_proxy_keyword(kw))
    throw ConfigError{fmt::format("{}'{}' is not supported by sluice yet.", l.where, kw)};
  std::string best = base::closest_match(kw, names);
  throw ConfigError{fmt::format("{}unknown keyword '{}' in '{}' section{}", l.where, kw, sect,
                                best.empty() ? "" : fmt::format("; did you mean '{}' maybe ?", best))};
}

void Parser::check_name_clash(const std::string& name, const std::string& type, unsigned caps,
                              const Line& l) {
  auto clash = [&](const ProxyConfig& other, bool other_is_defaults) {
    std::string other_type = other_is_defaults ? "defaults" : type_word(other);
    std::string head = fmt::format("Parsing [{}:{}]: {} '{}' has the same name as {} '{}' declared at {}:{}.",
                                   l.loc.file, l.loc.line, type, name, other_type, name,
                                   other.loc.file, other.loc.line);
    // HAProxy (< 3.3) already refused names shared by proxies with a common capability; it
    // still prints that older message first.
    if (!other_is_defaults && type != "defaults" && (other.caps & caps)) alert(head);
    alert(head + " This is no longer supported as of 3.3. Please rename one or the other.");
    ++fatals_;
    throw AbortLoad{};
  };
  for (const auto& p : proxies)
    if (p.cfg.name == name) clash(p.cfg, false);
  if (type != "defaults")
    for (const auto& d : defaults)
      if (!d.defaults_name.empty() && d.defaults_name == name) clash(d.cfg, true);
}

const ProxyState* Parser::find_defaults(const std::string& name, const std::string& user_type,
                                        const std::string& user_name, const Line& l) {
  const ProxyState* found = nullptr;
  for (auto& d : defaults) {
    if (d.defaults_name != name) continue;
    if (found) {
      alert(fmt::format("{}ambiguous defaults section name '{}' referenced by {} '{}' exists at "
                        "least at {}:{} and {}:{}.",
                        l.where, name, user_type, user_name, found->cfg.loc.file,
                        found->cfg.loc.line, d.cfg.loc.file, d.cfg.loc.line));
      ++fatals_;
      throw AbortLoad{};
    }
    found = &d;
  }
  if (!found) {
    alert(fmt::format("{}defaults section '{}' not found for {} '{}'.", l.where, name, user_type,
                      user_name));
    ++fatals_;
    throw AbortLoad{};
  }
  const_cast<ProxyState*>(found)->referenced = true;
  return found;
}

void Parser::start_proxy(Line& l, unsigned caps) {
  const std::string& kw = l.args[0];
  if (l.args.size() < 2) {
    alert(fmt::format("{}'{}' expects an <id> argument", l.where, kw));
    ++fatals_;
    throw AbortLoad{};
  }
  const std::string& name = l.args[1];
  std::string type = kw == "listen" ? "proxy" : kw;
  std::string from;
  std::size_t i = 2;
  if (i < l.args.size() && l.args[i] == "from") {
    if (i + 1 >= l.args.size())
      throw ConfigError{fmt::format("{}'from' expects a defaults section name.", l.where)};
    from = l.args[i + 1];
    i += 2;
  }
  check_name_clash(name, type, caps, l);
  ProxyState ps;
  const ProxyState* base = nullptr;
  if (!from.empty()) {
    base = find_defaults(from, type, name, l);
  } else if (last_defaults_ >= 0) {
    base = &defaults[static_cast<std::size_t>(last_defaults_)];
  }
  ps.cfg = base ? base->cfg : builtin_defaults();
  if (base) inherit_tcp_rules(*base, caps, l, ps.cfg);
  if (!ps.cfg.tcp_check.rules.empty()) ps.cfg.tcp_check.inherited = true;
  if (!ps.cfg.http_check_rules.rules.empty()) ps.cfg.http_check_rules.inherited = true;
  ps.cfg.loc = l.loc;
  ps.cfg.name = name;
  ps.cfg.type = kw;
  ps.cfg.caps = caps;
  ps.cfg.binds.clear();
  ps.cfg.servers.clear();
  ps.cfg.id = 0;
  ps.cfg.description.clear();
  proxies.push_back(std::move(ps));
  section_ = Section::kProxy;
  for (char c : name)
    if (!valid_name_char(c))
      throw ConfigError{fmt::format("{}character '{}' is not permitted in '{}' name '{}'.", l.where,
                                    c, kw, name)};
  if (i < l.args.size()) {
    if (kw == "backend")
      throw ConfigError{fmt::format("{}'{}' cannot handle unexpected argument '{}'.", l.where, kw,
                                    l.args[i])};
    throw ConfigError{l.where + "please use the 'bind' keyword for listening addresses."};
  }
}

// HAProxy's rules for a proxy whose defaults section has TCP rules: a listen cannot use it,
// a backend not with connection or session rules, a frontend not with response rules, and
// frontends and backends cannot share it. The proxy runs the section's rules before its own.
void Parser::inherit_tcp_rules(const ProxyState& base, unsigned caps, const Line& l,
                               ProxyConfig& cfg) {
  const ProxyConfig& d = base.cfg;
  const std::string at = fmt::format("parsing [{}:{}]: ", l.loc.file, l.loc.line);
  const std::string def_at = fmt::format("(defaults section at {}:{}).", d.loc.file, d.loc.line);
  // Capture slots (tcp-request content capture) belong to frontends.
  if (!(caps & ProxyConfig::kFrontend) && (!d.capture_request.empty() || !d.capture_response.empty())) {
    fatal(fmt::format("{}backend or defaults sections cannot inherit from a defaults section "
                      "defining captures {}", at, def_at));
    return;
  }
  if (!d.has_tcp_rules()) return;
  const unsigned both = ProxyConfig::kFrontend | ProxyConfig::kBackend;
  if ((caps & both) == both) {
    fatal(at + "a listen section cannot inherit from a defaults section defining TCP/HTTP rules.");
    return;
  }
  unsigned& used = base.rules_used_by;
  if (used && used != caps)
    fatal(fmt::format("{}frontends and backends cannot inherit from the same defaults section if "
                      "it defines TCP/HTTP rules {}", at, def_at));
  used = caps;
  if (caps == ProxyConfig::kBackend &&
      (!d.tcp_request_connection.empty() || !d.tcp_request_session.empty()))
    fatal(fmt::format("{}a backend section cannot inherit from a defaults section defining "
                      "'tcp-request connection' or 'tcp-request session' rules {}", at, def_at));
  else if (caps == ProxyConfig::kFrontend && !d.tcp_response_content.empty())
    fatal(fmt::format("{}a frontend section cannot inherit from a defaults section defining "
                      "'tcp-response content' rules {}", at, def_at));
  for (auto* list : {&cfg.tcp_request_connection, &cfg.tcp_request_session,
                     &cfg.tcp_request_content, &cfg.tcp_response_content})
    for (auto& r : *list) r.inherited = true;
}

void Parser::start_defaults(Line& l) {
  std::string name;
  std::string from;
  std::size_t i = 1;
  if (i < l.args.size() && l.args[i] != "from") name = l.args[i++];
  if (i < l.args.size() && l.args[i] == "from") {
    if (i + 1 >= l.args.size())
      throw ConfigError{fmt::format("{}'from' expects a defaults section name.", l.where)};
    from = l.args[i + 1];
    i += 2;
  }
  if (!name.empty()) {
    check_name_clash(name, "defaults", ProxyConfig::kFrontend | ProxyConfig::kBackend, l);
    for (const auto& d : defaults)
      if (d.defaults_name == name && d.referenced) {
        alert(fmt::format("{}defaults section '{}' (declared at {}:{}) is already referenced by "
                          "a proxy and cannot be redefined.",
                          l.where, name, d.cfg.loc.file, d.cfg.loc.line));
        ++fatals_;
        throw AbortLoad{};
      }
  }
  ProxyState ps;
  ps.is_defaults = true;
  ps.defaults_name = name;
  // Each defaults section starts afresh (or from its parent); it never adds to the previous one.
  const ProxyState* parent = from.empty() ? nullptr : find_defaults(from, "defaults", name, l);
  ps.cfg = parent ? parent->cfg : builtin_defaults();
  if (parent && parent->cfg.has_tcp_rules())
    fatal(fmt::format("parsing [{}:{}]: a defaults section cannot inherit from a defaults section "
                      "defining TCP/HTTP rules (defaults section at {}:{}).",
                      l.loc.file, l.loc.line, parent->cfg.loc.file, parent->cfg.loc.line));
  ps.cfg.loc = l.loc;
  ps.cfg.name = name;
  ps.cfg.type = "defaults";
  ps.cfg.caps = ProxyConfig::kFrontend | ProxyConfig::kBackend;
  defaults.push_back(std::move(ps));
  last_defaults_ = static_cast<int>(defaults.size()) - 1;
  section_ = Section::kDefaults;
  for (char c : name)
    if (!valid_name_char(c))
      throw ConfigError{fmt::format("{}character '{}' is not permitted in 'defaults' name '{}'.",
                                    l.where, c, name)};
  if (i < l.args.size())
    throw ConfigError{fmt::format("{}'defaults' cannot handle unexpected argument '{}'.", l.where,
                                  l.args[i])};
}

}  // namespace sluice::config

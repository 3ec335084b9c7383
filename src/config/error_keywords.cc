// The replies a proxy sends for its error statuses: errorfile, errorfiles (from http-errors
// sections), errorloc / errorloc302 / errorloc303 and http-error, in declaration order (a later
// line overrides an earlier one for its status, as in HAProxy), and the http-errors sections
// themselves. `errorfiles` lines and http replies naming a section are resolved once the whole
// configuration is read, since a section may come after the proxies that use it.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "config/proxy_keywords.h"
#include "http/http.h"
#include "rules/rules.h"

namespace sluice::config {

namespace {

constexpr int kErrorCodes[] = {200, 400, 401, 403, 404, 405, 407, 408, 410, 413, 414,
                               421, 422, 425, 429, 431, 500, 501, 502, 503, 504};
constexpr std::size_t kMaxErrorFile = 15360;   // tune.bufsize - tune.maxrewrite

bool handled(long long code) {
  return std::find(std::begin(kErrorCodes), std::end(kErrorCodes), code) != std::end(kErrorCodes);
}

// The file of an errorfile line, read and checked (a complete head, a body matching its
// content-length, at most kMaxErrorFile bytes); HAProxy's messages.
std::string load_errorfile(const Line& l, const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError{fmt::format("{}error opening file '{}'.", l.where, file)};
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec) && std::filesystem::is_directory(file, ec))
    throw ConfigError{fmt::format("{}error reading file '{}'.", l.where, file)};
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw ConfigError{fmt::format("{}error reading file '{}'.", l.where, file)};
  std::string data = ss.str();
  if (data.size() > kMaxErrorFile)
    throw ConfigError{fmt::format("{}error file '{}' is too large ({} bytes, at most {}).", l.where, file,
                                  data.size(), kMaxErrorFile)};
  std::string bad = http::check_raw_response(data);
  if (!bad.empty()) throw ConfigError{fmt::format("{}'{}': {}.", l.where, file, bad)};
  return data;
}

// `errorfile <code> <file>` (a proxy or an http-errors section): the entry, or an error.
ErrorFileConfig errorfile_entry(const Line& l) {
  if (l.args.size() != 3 || l.args[1].empty() || l.args[2].empty())
    throw ConfigError{fmt::format("{}'{}' expects <status_code> and <file> as arguments.", l.where, l.args[0])};
  auto code = parse_strict_int(l.args[1], 0, 999);
  if (!code || !handled(*code))
    throw ConfigError{fmt::format("{}status code '{}' not handled.", l.where, l.args[1])};
  ErrorFileConfig e;
  e.status = static_cast<int>(*code);
  e.response = load_errorfile(l, l.args[2]);
  e.loc = l.loc;
  return e;
}

// Appends `e`, dropping the entries it overrides (the same status; a section reference keeps
// its place: it is expanded in order later).
void add_entry(std::vector<ErrorFileConfig>& list, ErrorFileConfig e) {
  if (e.section.empty())
    list.erase(std::remove_if(list.begin(), list.end(),
                              [&](const ErrorFileConfig& x) { return x.section.empty() && x.status == e.status; }),
               list.end());
  list.push_back(std::move(e));
}

}  // namespace

namespace proxy_kw {

void kw_errorfile(Parser& p, Line& l) { add_entry(p.cur_proxy().cfg.errorfiles, errorfile_entry(l)); }

void http_errors_line(Parser& p, Line& l) {
  if (l.args[0] != "errorfile")
    throw ConfigError{fmt::format("{}unknown keyword '{}' in 'http-errors' section", l.where, l.args[0])};
  add_entry(p.http_errors.back().files, errorfile_entry(l));
}

// `errorfiles <name> [<code> ...]`.
void kw_errorfiles(Parser& p, Line& l) {
  if (l.args.size() < 2 || l.args[1].empty())
    throw ConfigError{fmt::format("{}{} : expects <name> as argument.", l.where, l.args[0])};
  ErrorFileConfig e;
  e.section = l.args[1];
  e.loc = l.loc;
  for (std::size_t i = 2; i < l.args.size(); ++i) {
    auto code = parse_strict_int(l.args[i], 0, 999);
    if (!code || !handled(*code))
      throw ConfigError{fmt::format("{}{} : status code '{}' not handled.", l.where, l.args[0], l.args[i])};
    e.codes.push_back(static_cast<int>(*code));
  }
  add_entry(p.cur_proxy().cfg.errorfiles, std::move(e));
}

// `errorloc|errorloc302|errorloc303 <code> <url>`: a redirect instead of the page.
void kw_errorloc(Parser& p, Line& l) {
  const std::string& kw = l.args[0];
  if (l.args.size() != 3 || l.args[1].empty() || l.args[2].empty())
    throw ConfigError{fmt::format("{}{} : expects <status_code> and <url> as arguments.", l.where, kw)};
  auto code = parse_strict_int(l.args[1], 0, 999);
  if (!code || !handled(*code))
    throw ConfigError{fmt::format("{}{} : status code '{}' not handled.", l.where, kw, l.args[1])};
  const int to = kw == "errorloc303" ? 303 : 302;
  ErrorFileConfig e;
  e.status = static_cast<int>(*code);
  e.response = fmt::format("HTTP/1.1 {} {}\r\ncache-control: no-cache\r\ncontent-length: 0\r\nlocation: {}\r\n\r\n",
                           to, http::default_reason(to), l.args[2]);
  e.loc = l.loc;
  add_entry(p.cur_proxy().cfg.errorfiles, std::move(e));
}

// `http-error status <code> [content-type <t>] [string|file|lf-string|lf-file|errorfile|
// errorfiles|default-errorfiles ...] [hdr <name> <fmt>]*`: the reply of an http-request return,
// built once, or rendered for each answer when a payload or a field is a log-format string.
void kw_http_error(Parser& p, Line& l) {
  if (l.args.size() < 3 || l.args[1] != "status")
    throw ConfigError{fmt::format("{}http-error : expects 'status <code>' as first arguments.", l.where)};
  auto code = parse_strict_int(l.args[2], 0, 999);
  if (!code || !handled(*code))
    throw ConfigError{fmt::format("{}http-error : Unexpected status code '{}'", l.where, l.args[2])};
  std::vector<std::string> words{"return"};
  for (std::size_t i = 1; i < l.args.size(); ++i) words.push_back(l.args[i]);
  rules::RuleOwner owner;
  owner.avail = sample::kAtAny;
  auto r = rules::parse_http_rule(words, rules::RuleSide::kRequest, p.cur_proxy().cfg.acls, "",
                                  "frontend", owner);
  if (!r.ok()) {
    std::string msg = r.error().message;
    const std::string head = "error detected while parsing 'http-request return' rule : ";
    if (msg.rfind(head, 0) == 0) msg = "http-error : " + msg.substr(head.size());
    throw ConfigError{l.where + msg};
  }
  rules::HttpRule& rule = r.value();
  if (!rule.cond.empty())
    throw ConfigError{fmt::format("{}http-error : a condition is not allowed.", l.where)};
  for (const auto& w : rule.warnings) p.warning(l.where + w);
  bool dynamic = rule.reply_lf;
  rules::Verdict v = rule.reply;
  for (const auto& [name, fmtv] : rule.reply_headers) {
    if (!fmtv.is_literal()) dynamic = true;
    v.extra_headers.emplace_back(name, fmtv.parts_.empty() ? std::string() : fmtv.parts_[0].text);
  }
  ErrorFileConfig e;
  e.status = static_cast<int>(*code);
  e.loc = l.loc;
  if (dynamic) {
    // Rendered for each answer, with what the stream knows then (the request, its variables,
    // the addresses, the status), as HAProxy renders its http replies.
    rule.reply.status = e.status;
    e.lf = std::make_shared<const rules::HttpRule>(std::move(rule));
  } else if (!rule.reply_errorfiles.empty()) {
    e.section = rule.reply_errorfiles;
    e.codes = {e.status};
  } else if (v.raw) {
    e.response = *v.raw;
  } else if (v.errorpage) {
    e.builtin = true;
  } else {
    e.response = rules::reply_bytes(e.status, v);
  }
  add_entry(p.cur_proxy().cfg.errorfiles, std::move(e));
}

}  // namespace proxy_kw

bool Parser::resolve_errorfiles(ProxyConfig& p) {
  auto section = [&](const std::string& name) -> const HttpErrors* {
    for (const auto& s : http_errors)
      if (s.name == name) return &s;
    return nullptr;
  };
  bool ok = true;
  std::vector<ErrorFileConfig> out;
  auto put = [&](ErrorFileConfig e) {
    out.erase(std::remove_if(out.begin(), out.end(), [&](const ErrorFileConfig& x) { return x.status == e.status; }),
              out.end());
    if (!e.builtin) out.push_back(std::move(e));
  };
  for (auto& e : p.errorfiles) {
    if (e.section.empty()) {
      put(std::move(e));
      continue;
    }
    const HttpErrors* s = section(e.section);
    if (!s) {
      fatal(fmt::format("proxy '{}': unknown http-errors section '{}' (at {}:{}).", p.name, e.section,
                        e.loc.file, e.loc.line), false);
      ok = false;
      continue;
    }
    for (const auto& f : s->files)
      if (e.codes.empty() || std::find(e.codes.begin(), e.codes.end(), f.status) != e.codes.end())
        put(f);
  }
  p.errorfiles = std::move(out);
  // http replies (deny, return, tarpit) with `errorfiles <name>`: the section's page for the
  // reply's status, else the proxy's page.
  auto replies = [&](std::vector<rules::HttpRule>& list, int deny_default) {
    for (auto& r : list) {
      if (r.reply_errorfiles.empty()) continue;
      const HttpErrors* s = section(r.reply_errorfiles);
      if (!s) {
        fatal(fmt::format("Proxy '{}': unknown http-errors section '{}' referenced by an http reply .",
                          p.name, r.reply_errorfiles), false);
        ok = false;
        continue;
      }
      const int st = r.reply.status ? r.reply.status
                     : r.action == rules::HttpRule::Action::kDeny ? deny_default
                                                                   : 200;
      r.reply.errorpage = true;
      bool found = false;
      for (const auto& f : s->files)
        if (f.status == st) {
          r.reply.raw = std::make_shared<const std::string>(http::normalise_raw_response(f.response));
          found = true;
        }
      // HAProxy 3.5's warning; the proxy's own page for that status answers instead.
      if (!found)
        warning(fmt::format("Proxy '{}': status '{}' referenced by an http reply not declared in "
                            "http-errors section '{}'.", p.name, st, r.reply_errorfiles), false);
    }
  };
  replies(p.http_request_rules, 403);
  replies(p.http_response_rules, 502);
  return ok;
}

}  // namespace sluice::config

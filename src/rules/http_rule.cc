// `http-request` / `http-response` rule parsing.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "base/strings.h"
#include "base/time_units.h"
#include "rules/internal.h"
#include "rules/normalize_uri.h"

namespace sluice::rules {

namespace {

using Action = HttpRule::Action;

struct ActionName {
  std::string_view name;
  Action action;
  bool request_only;
};

constexpr ActionName kActions[] = {
    {"add-header", Action::kAddHeader, false},      {"allow", Action::kAllow, false},
    {"del-header", Action::kDelHeader, false},      {"deny", Action::kDeny, false},
    {"redirect", Action::kRedirect, false},         {"replace-header", Action::kReplaceHeader, false},
    {"replace-value", Action::kReplaceValue, false}, {"return", Action::kReturn, false},
    {"set-header", Action::kSetHeader, false},      {"set-path", Action::kSetPath, true},
    {"use-service", Action::kUseService, true},
    {"set-method", Action::kSetMethod, true},       {"set-uri", Action::kSetUri, true},
    {"set-query", Action::kSetQuery, true},         {"set-pathq", Action::kSetPathq, true},
    {"replace-path", Action::kReplacePath, true},   {"replace-pathq", Action::kReplacePathq, true},
    {"replace-uri", Action::kReplaceUri, true},
    {"auth", Action::kAuth, true},
    {"tarpit", Action::kTarpit, true},              {"reject", Action::kReject, true},
    {"silent-drop", Action::kSilentDrop, false},      {"wait-for-body", Action::kWaitForBody, false},
    {"normalize-uri", Action::kNormalizeUri, true},
};

// HAProxy actions sluice does not implement yet.
constexpr std::string_view kHaproxyRequestActions[] = {
    "add-acl", "attach-srv", "cache-use", "del-acl", "del-map",
    "disable-l7-retry", "do-log", "do-resolve", "early-hint", "pause",
    "sc-add-gpc", "sc-inc-gpc", "sc-inc-gpc0",
    "sc-inc-gpc1", "sc-set-gpt", "sc-set-gpt0", "send-spoe-group", "set-bandwidth-limit",
    "set-bc-mark", "set-bc-tos", "set-fc-mark", "set-fc-tos",
    "set-map", "set-mark", "set-nice",
    "set-priority-class", "set-priority-offset", "set-retries",
    "set-tos",
    "strict-mode", "track-sc0", "track-sc1", "track-sc2",
    "wait-for-handshake",
};
// What `http-after-response` takes besides them (HAProxy 3.5's list).
constexpr std::string_view kAfterResponseActions[] = {
    "add-header", "allow", "del-header", "replace-header", "replace-value", "set-header",
};
constexpr std::string_view kHaproxyAfterResponseActions[] = {
    "sc-add-gpc", "sc-inc-gpc", "sc-inc-gpc0", "sc-inc-gpc1", "sc-set-gpt",
    "sc-set-gpt0", "add-headers-bin", "del-acl", "del-headers-bin", "del-map",
    "do-log", "set-headers-bin", "set-map", "strict-mode",
};
constexpr std::string_view kHaproxyResponseActions[] = {
    "add-acl", "cache-store", "del-acl", "del-map", "do-log", "pause",
    "sc-add-gpc", "sc-inc-gpc", "sc-inc-gpc0", "sc-inc-gpc1", "sc-set-gpt", "sc-set-gpt0",
    "send-spoe-group", "set-bandwidth-limit", "set-fc-mark", "set-fc-tos",
    "set-map", "set-mark", "set-nice", "set-tos",
    "strict-mode", "track-sc0", "track-sc1", "track-sc2",
};

bool known_haproxy_action(std::string_view a, RuleSide side) {
  for (std::string_view p : {"lua.", "track-sc", "sc-"})
    if (a.substr(0, p.size()) == p) return true;
  if (side == RuleSide::kRequest)
    return std::find(std::begin(kHaproxyRequestActions), std::end(kHaproxyRequestActions), a) !=
           std::end(kHaproxyRequestActions);
  if (side == RuleSide::kAfterResponse) {
    for (std::string_view p : {"sc-add-gpc(", "sc-inc-gpc(", "sc-set-gpt(", "del-acl(", "del-map(", "set-map("})
      if (a.starts_with(p)) return true;
    return std::find(std::begin(kHaproxyAfterResponseActions), std::end(kHaproxyAfterResponseActions), a) !=
           std::end(kHaproxyAfterResponseActions);
  }
  return std::find(std::begin(kHaproxyResponseActions), std::end(kHaproxyResponseActions), a) !=
         std::end(kHaproxyResponseActions);
}

constexpr std::size_t kMaxReplyFile = 16384;   // tune.bufsize

// What a rule's formats and conditions may read on its side.
// Whether action `a` (of kActions) may stand on `side`.
bool action_on_side(std::string_view a, bool request_only, RuleSide side) {
  if (request_only && side != RuleSide::kRequest) return false;
  if (side != RuleSide::kAfterResponse) return true;
  return std::find(std::begin(kAfterResponseActions), std::end(kAfterResponseActions), a) !=
         std::end(kAfterResponseActions);
}

uint32_t side_avail(RuleSide side) {
  return side == RuleSide::kRequest ? sample::kAtHttpRequest : sample::kAtHttpResponse;
}

struct Ctx {
  const std::vector<std::string>& words;
  RuleSide side;
  std::string kw;     // "http-request"
  std::string full;   // "http-request set-header"
  const std::string& base_dir;
  bool keyword = false;   // the `redirect` keyword, not an action
  uint32_t avail_override = 0;

  uint32_t avail() const { return avail_override ? avail_override : side_avail(side); }
  base::Error action_error(const std::string& why) const {
    if (keyword) return base::Error::text(fmt::format("error detected while parsing {} rule : {}.", full, why));
    return base::Error::text(fmt::format("error detected while parsing '{}' rule : {}.", full, why));
  }
};

base::Result<std::string> read_file(const std::string& path, const std::string& base_dir) {
  std::string p = path;
  if (!p.empty() && p[0] != '/' && !base_dir.empty()) p = base_dir + "/" + p;
  std::ifstream in(p, std::ios::binary);
  if (!in) return base::Error::text(fmt::format("failed to open file '{}' ({})", p, std::strerror(errno)));
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string data = ss.str();
  if (data.size() > kMaxReplyFile)
    return base::Error::text(fmt::format("file '{}' is too large ({} bytes, at most {})", p, data.size(), kMaxReplyFile));
  return data;
}

// HAProxy's size syntax: digits with an optional k, m or g (powers of 1024).
std::optional<uint64_t> parse_bytes(std::string_view w) {
  uint64_t v = 0;
  std::size_t i = 0;
  for (; i < w.size() && w[i] >= '0' && w[i] <= '9'; ++i) {
    if (v > (UINT64_MAX - 9) / 10) return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(w[i] - '0');
  }
  if (i == 0) return std::nullopt;
  if (i == w.size()) return v;
  if (i + 1 != w.size()) return std::nullopt;
  switch (w[i] | 0x20) {
    case 'k': return v << 10;
    case 'm': return v << 20;
    case 'g': return v << 30;
    default: return std::nullopt;
  }
}

// deny / return options: [status|deny_status <code>] [content-type <t>]
// [string <s> | file <f> | default-errorfiles] [hdr <name> <fmt>]... ; stops at if/unless.
// As in HAProxy, a reply without payload is empty, except a deny with nothing but a
// deny_status, which sends the proxy's error page for its status (default-errorfiles).
base::Result<std::size_t> parse_reply(const Ctx& c, std::size_t i, HttpRule& r) {
  const auto& w = c.words;
  bool is_deny = r.action == Action::kDeny || r.action == Action::kTarpit;
  int payloads = 0;
  while (i < w.size() && !detail::is_cond_word(w[i])) {
    const std::string& o = w[i];
    bool has_v = i + 1 < w.size();
    if (o == "status" || (is_deny && o == "deny_status")) {
      int code = 0;
      bool ok = has_v && !w[i + 1].empty() && w[i + 1].size() <= 3 &&
                std::all_of(w[i + 1].begin(), w[i + 1].end(), [](char ch) { return ch >= '0' && ch <= '9'; });
      if (ok) code = std::stoi(w[i + 1]);
      if (!ok || code < 200 || code > 599)
        return c.action_error(fmt::format("'{}' expects a status code between 200 and 599{}", o,
                                          has_v ? fmt::format(" (got '{}')", w[i + 1]) : ""));
      r.reply.status = code;
      i += 2;
    } else if (o == "content-type") {
      if (!has_v) return c.action_error("'content-type' expects <ctype> as argument");
      r.reply.content_type = w[i + 1];
      i += 2;
    } else if (o == "string" || o == "file" || o == "lf-string" || o == "lf-file") {
      if (!has_v)
        return c.action_error(fmt::format("'{}' expects {} as argument", o,
                                          o == "string" ? "<str>" : o == "lf-string" ? "<fmt>" : "<file>"));
      if (o == "string" || o == "lf-string") {
        r.reply.body = w[i + 1];
      } else {
        auto data = read_file(w[i + 1], c.base_dir);
        if (!data.ok()) return c.action_error(fmt::format("error opening file '{}'", w[i + 1]));
        r.reply.body = std::move(data.value());
      }
      r.reply_lf = o[0] == 'l';
      if (r.reply_lf) {
        auto f = ValueFormat::parse(r.reply.body, c.avail());
        if (!f.ok()) return c.action_error(f.error().message);
        r.value = std::move(f.value());
        r.reply.body.clear();
      }
      r.reply.has_body = true;
      ++payloads;
      i += 2;
    } else if (o == "default-errorfiles") {
      r.reply.errorpage = true;
      ++payloads;
      ++i;
    } else if (o == "errorfile") {
      // HAProxy 3.5 says <fmt> here too.
      if (!has_v) return c.action_error("'errorfile' expects <fmt> as argument");
      std::ifstream in(w[i + 1], std::ios::binary);
      if (!in) return c.action_error(fmt::format("error opening file '{}'.", w[i + 1]));
      std::ostringstream ss;
      ss << in.rdbuf();
      std::string data = ss.str();
      std::string bad = http::check_raw_response(data);
      if (!bad.empty()) return c.action_error(fmt::format("'{}': {}.", w[i + 1], bad));
      r.reply.raw = std::make_shared<const std::string>(http::normalise_raw_response(data));
      ++payloads;
      i += 2;
    } else if (o == "errorfiles") {
      if (!has_v) return c.action_error("'errorfiles' expects <name> as argument");
      r.reply_errorfiles = w[i + 1];
      ++payloads;
      i += 2;
    } else if (o == "hdr") {
      if (i + 2 >= w.size()) return c.action_error("'hdr' expects <name> and <fmt> as arguments");
      const std::string& name = w[i + 1];
      if (detail::iequals(name, "content-length") || detail::iequals(name, "transfer-encoding") ||
          detail::iequals(name, "content-type")) {
        r.warnings.push_back(fmt::format("header '{}' ignored by the http reply.", name));
      } else {
        auto f = ValueFormat::parse(w[i + 2], c.avail());
        if (!f.ok()) return c.action_error(f.error().message);
        r.reply_headers.emplace_back(name, std::move(f.value()));
      }
      i += 3;
    } else {
      return c.action_error(fmt::format(
          "'{}' expects {}'content-type', 'string', 'file', 'default-errorfiles' or 'hdr' (got '{}')",
          c.full, is_deny ? "'deny_status', 'status', " : "'status', ", o));
    }
  }
  if (is_deny && payloads == 0 && r.reply.content_type.empty() && r.reply_headers.empty())
    r.reply.errorpage = true;
  if (payloads > 1)
    return c.action_error("only one payload ('string', 'file' or 'default-errorfiles') is allowed");
  if (!r.reply.has_body && !r.reply.content_type.empty()) {
    r.warnings.push_back(fmt::format("content-type '{}' ignored by the http reply when used with an empty payload.",
                                     r.reply.content_type));
    r.reply.content_type.clear();
  }
  if (r.reply_lf && r.reply.content_type.empty())
    return c.action_error("a content type must be defined with a log-format payload");
  if (r.reply.has_body && r.reply.content_type.empty() && !r.reply.body.empty())
    return c.action_error("a content type must be defined when non-empty payload is configured");
  return i;
}

// `literal`: the `redirect` keyword, whose location, prefix and scheme are plain text.
base::Result<std::size_t> parse_redirect(const Ctx& c, std::size_t i, HttpRule& r, bool literal = false) {
  const auto& w = c.words;
  bool have_type = false;
  r.reply.status = 302;
  auto text = [&](const std::string& v) -> base::Result<ValueFormat> {
    if (!literal) return ValueFormat::parse(v, c.avail());
    ValueFormat f;
    f.parts_.push_back(ValueFormat::Part{v, nullptr});
    return f;
  };
  while (i < w.size() && !detail::is_cond_word(w[i])) {
    const std::string& o = w[i];
    const bool has_v = i + 1 < w.size();
    const bool takes_v = o == "location" || o == "prefix" || o == "scheme" || o == "code" ||
                         o == "set-cookie" || o == "set-cookie-fmt" || o == "clear-cookie";
    if (takes_v && !has_v) return c.action_error(fmt::format("missing argument for '{}'", o));
    if (o == "location" || o == "prefix" || o == "scheme") {
      if (c.side == RuleSide::kResponse && o != "location")
        return c.action_error(fmt::format("'redirect {}' is not possible on the response path, only 'location' is", o));
      auto f = text(w[i + 1]);
      if (!f.ok()) return c.action_error(f.error().message);
      r.value = std::move(f.value());
      r.redirect_kind = o == "location" ? 0 : o == "prefix" ? 1 : 2;
      have_type = true;
      i += 2;
    } else if (o == "code") {
      const std::string& v = w[i + 1];
      if (v != "301" && v != "302" && v != "303" && v != "307" && v != "308")
        return c.action_error(fmt::format("'code': unsupported HTTP code '{}' (must be one of 301, 302, 303, 307 or 308)", v));
      r.reply.status = std::stoi(v);
      i += 2;
    } else if (o == "set-cookie" || o == "clear-cookie") {
      r.cookie = o == "set-cookie" ? HttpRule::Cookie::kSet : HttpRule::Cookie::kClear;
      r.cookie_text = w[i + 1];
      i += 2;
    } else if (o == "set-cookie-fmt") {
      auto f = ValueFormat::parse(w[i + 1], c.avail());
      if (!f.ok()) return c.action_error(f.error().message);
      r.cookie = HttpRule::Cookie::kSetFmt;
      r.cookie_fmt = std::move(f.value());
      i += 2;
    } else if (o == "drop-query" || o == "keep-query" || o == "append-slash" || o == "ignore-empty") {
      (o == "drop-query" ? r.drop_query : o == "keep-query" ? r.keep_query
                                        : o == "append-slash" ? r.append_slash : r.ignore_empty) = true;
      ++i;
    } else {
      return c.action_error(fmt::format(
          "expects 'code', 'prefix', 'location', 'scheme', 'set-cookie', 'set-cookie-fmt', "
          "'clear-cookie', 'drop-query', 'keep-query', 'ignore-empty' or 'append-slash' (was '{}')", o));
    }
  }
  if (!have_type)
    return c.action_error("redirection type expected ('prefix', 'location', or 'scheme')");
  r.reply.kind = Verdict::Kind::kRedirect;
  return i;
}

// An HTTP status for set-status: 100 to 999.
bool parse_status(std::string_view s, int* out) {
  if (s.size() != 3) return false;
  int v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
    v = v * 10 + (ch - '0');
  }
  if (v < 100) return false;
  *out = v;
  return true;
}

}  // namespace

base::Result<HttpRule> parse_http_rule(const std::vector<std::string>& words, RuleSide side,
                                       const AclRegistry& acls, const std::string& base_dir,
                                       std::string_view section, const RuleOwner& owner) {
  std::string kw = side == RuleSide::kRequest    ? "http-request"
                   : side == RuleSide::kResponse ? "http-response"
                                                 : "http-after-response";
  std::string name = words.empty() ? "" : words[0];
  const ActionName* an = nullptr;
  for (const auto& a : kActions)
    if (a.name == name && action_on_side(a.name, a.request_only, side)) an = &a;
  static constexpr ActionName kVarAction{"set-var", Action::kSetVar, false};
  static constexpr ActionName kStatusAction{"set-status", Action::kSetStatus, false};
  const bool var_action = name.starts_with("set-var(") || name.starts_with("set-var-fmt(") ||
                          name.starts_with("unset-var(");
  if (var_action) an = &kVarAction;
  if (name == "set-status" && side != RuleSide::kRequest) an = &kStatusAction;
  const bool stream_action = detail::is_stream_action(name, side);
  // do-resolve(<var>,<resolvers>[,ipv4|ipv6]) <expr>: there are no resolvers sections yet.
  if (side == RuleSide::kRequest && (name == "do-resolve" || name.starts_with("do-resolve(")))
    return base::Error::text(fmt::format(
        "'{} do-resolve' is not supported by sluice yet (it needs DNS resolvers).", kw));
  if (!an && !stream_action) {
    if (!name.empty() && (known_haproxy_action(name, side) ||
                          (name == "set-path" && side == RuleSide::kResponse)))
      return base::Error::text(fmt::format("'{} {}' is not supported by sluice yet.", kw, name));
    std::vector<std::string_view> names;
    std::string list;
    for (const auto& a : kActions) {
      if (!action_on_side(a.name, a.request_only, side)) continue;
      names.push_back(a.name);
      list += fmt::format("{}'{}'", list.empty() ? "" : ", ", a.name);
    }
    for (std::string_view a : {"capture", "set-dst", "set-dst-port", "set-log-level", "set-src",
                               "set-src-port", "set-timeout"}) {
      if (!detail::is_stream_action(a, side)) continue;
      names.push_back(a);
      list += fmt::format("{}'{}'", list.empty() ? "" : ", ", a);
    }
    std::string best = name.empty() ? "" : base::closest_match(name, names);
    return base::Error::text(fmt::format("'{}' expects {}, but got '{}'{}.{}", kw, list, name,
                                         name.empty() ? " (missing argument)" : "",
                                         best.empty() ? "" : fmt::format(" Did you mean '{}' maybe ?", best)));
  }
  HttpRule r;
  r.action = an ? an->action : Action::kAllow;
  r.side = side;
  Ctx c{words, side, kw, kw + " " + name, base_dir, false, owner.avail};
  std::size_t i = 1;
  if (var_action) {
    // Shared with the tcp rule sets (var_action.cc).
    VarAction va;
    auto n = parse_var_action(words, side_avail(side), &va);
    if (!n.ok()) return c.action_error(n.error().message);
    r.action = va.kind == VarAction::Kind::kSet      ? Action::kSetVar
               : va.kind == VarAction::Kind::kSetFmt ? Action::kSetVarFmt
                                                     : Action::kUnsetVar;
    r.var = va.var;
    r.var_conds = va.conds;
    r.expr = std::move(va.expr);
    r.value = std::move(va.fmt);
    i = n.value();
  }
  if (stream_action) {
    auto n = detail::parse_stream_action({words, side, c.avail(), owner}, r);
    if (!n.ok()) return c.action_error(n.error().message);
    i = n.value();
  }
  auto arg_count_error = [&](int n) {
    return c.action_error(fmt::format("expects exactly {} arguments", n));
  };
  // Positional arguments as HAProxy takes them: the words right after the action, whatever
  // they are, then only `if`/`unless` may follow.
  auto positional = [&](std::size_t n) {
    if (words.size() < 1 + n) return false;
    for (std::size_t k = 1; k <= n; ++k)
      if (words[k].empty()) return false;
    return words.size() == 1 + n || detail::is_cond_word(words[1 + n]);
  };
  switch (r.action) {
    case Action::kSetHeader:
    case Action::kAddHeader: {
      if (!positional(2)) return arg_count_error(2);
      r.name = words[1];
      auto f = ValueFormat::parse(words[2], side_avail(side));
      if (!f.ok()) return c.action_error(f.error().message);
      r.value = std::move(f.value());
      i = 3;
      break;
    }
    case Action::kDelHeader: {
      if (words.size() < 2 || detail::is_cond_word(words[1]))
        return c.action_error("expects at least 1 argument");
      r.name = words[1];
      i = 2;
      if (i < words.size() && words[i] == "-m") {
        static constexpr std::string_view kMeth[] = {"str", "beg", "end", "sub", "reg"};
        std::string m = i + 1 < words.size() ? words[i + 1] : "";
        auto it = std::find(std::begin(kMeth), std::end(kMeth), m);
        if (it == std::end(kMeth))
          return c.action_error(fmt::format("'-m' expects 'str', 'beg', 'end', 'sub' or 'reg' (got '{}')", m));
        r.name_match = static_cast<int>(it - std::begin(kMeth));
        if (r.name_match == 4) {
          auto re = std::make_shared<base::Regex>();
          std::string why;
          // Case-sensitive, against the lower-cased name (apply.cc), as HAProxy matches it.
          if (!re->compile(r.name, &why, false, false)) return c.action_error(why);
          r.regex_text = r.name;
          r.regex = re;
        }
        i += 2;
      }
      break;
    }
    case Action::kReplaceHeader:
    case Action::kReplaceValue: {
      if (!positional(3)) return arg_count_error(3);
      r.name = words[1];
      r.regex_text = words[2];
      auto re = std::make_shared<base::Regex>();
      std::string why;
      if (!re->compile(r.regex_text, &why, false, true)) return c.action_error(why);
      r.regex = re;
      auto f = ValueFormat::parse(words[3], side_avail(side));
      if (!f.ok()) return c.action_error(f.error().message);
      r.value = std::move(f.value());
      i = 4;
      break;
    }
    case Action::kSetPath: {
      if (!positional(1)) return c.action_error("expects exactly 1 argument");
      auto f = ValueFormat::parse(words[1], side_avail(side));
      if (!f.ok()) return c.action_error(f.error().message);
      r.value = std::move(f.value());
      i = 2;
      break;
    }
    case Action::kDeny:
    case Action::kTarpit:
    case Action::kReturn: {
      r.reply.kind = r.action == Action::kDeny     ? Verdict::Kind::kDeny
                     : r.action == Action::kTarpit ? Verdict::Kind::kTarpit
                                                   : Verdict::Kind::kReturn;
      // HAProxy's default statuses: 200 for return, 403 for deny (502 in responses), 500
      // for tarpit.
      r.reply.status = r.action == Action::kReturn   ? 200
                       : r.action == Action::kTarpit ? 500
                       : side == RuleSide::kRequest  ? 403
                                                     : 502;
      auto n = parse_reply(c, 1, r);
      if (!n.ok()) return n.error();
      i = n.value();
      break;
    }
    case Action::kRedirect: {
      auto n = parse_redirect(c, 1, r);
      if (!n.ok()) return n.error();
      i = n.value();
      break;
    }
    case Action::kSetVar:
    case Action::kSetVarFmt:
    case Action::kUnsetVar: break;
    case Action::kSetMethod:
    case Action::kSetUri:
    case Action::kSetQuery:
    case Action::kSetPathq: {
      if (!positional(1)) return c.action_error("expects exactly 1 argument <format>");
      auto f = ValueFormat::parse(words[1], side_avail(side));
      if (!f.ok()) return c.action_error(f.error().message);
      r.value = std::move(f.value());
      i = 2;
      break;
    }
    case Action::kReplacePath:
    case Action::kReplacePathq:
    case Action::kReplaceUri: {
      if (!positional(2))
        return c.action_error("expects exactly 2 arguments <match-regex> and <replace-format>");
      r.regex_text = words[1];
      auto re = std::make_shared<base::Regex>();
      std::string why;
      if (!re->compile(r.regex_text, &why, false, true))
        return c.action_error("failed to parse the regex : " + why);
      r.regex = re;
      auto f = ValueFormat::parse(words[2], side_avail(side));
      if (!f.ok()) return c.action_error(f.error().message);
      r.value = std::move(f.value());
      i = 3;
      break;
    }
    case Action::kSetStatus: {
      if (words.size() < 2 || !parse_status(words[1], &r.status))
        return c.action_error("expects an integer status code between 100 and 999");
      i = 2;
      if (i < words.size() && words[i] == "reason" && i + 1 < words.size()) {
        r.reason = words[i + 1];
        i += 2;
      }
      break;
    }
    case Action::kReject:
    case Action::kSilentDrop:
      r.reply.kind = r.action == Action::kReject ? Verdict::Kind::kReject : Verdict::Kind::kSilentDrop;
      i = 1;
      if (r.action == Action::kSilentDrop && i < words.size() && words[i] == "rst-ttl") {
        auto ttl = detail::parse_rst_ttl(words, &i);
        if (!ttl.ok())   // HAProxy's sentence, without the period action_error() adds
          return base::Error::text(fmt::format("error detected while parsing '{}' rule : {}",
                                               c.full, ttl.error().message));
        r.reply.rst_ttl = ttl.value();
      }
      break;
    case Action::kAuth: {
      // `auth [realm <realm>]`: the realm is plain text; without it, the proxy's name.
      r.reply.kind = Verdict::Kind::kAuth;
      r.reply.status = 401;
      i = 1;
      if (i < words.size() && words[i] == "realm") {
        if (i + 1 >= words.size() || words[i + 1].empty()) return c.action_error("missing realm value.\n");
        r.reply.realm = words[i + 1];
        i += 2;
      }
      break;
    }
    case Action::kNormalizeUri: {
      if (words.size() < 2 || words[1].empty()) return c.action_error("missing argument <normalizer>");
      const Normalizer* n = find_normalizer(words[1]);
      if (!n) return c.action_error(fmt::format("unknown normalizer '{}'", words[1]));
      r.normalizer = static_cast<uint8_t>(n->kind);
      i = 2;
      if (i < words.size() && !detail::is_cond_word(words[i]) && !n->option.empty()) {
        if (words[i] != n->option)
          return c.action_error(fmt::format("unknown argument '{}' for '{}' normalizer", words[i],
                                            n->name));
        r.normalizer_option = true;
        ++i;
      }
      break;
    }
    case Action::kWaitForBody: {
      // wait-for-body time <time> [at-least <bytes>]
      if (words.size() < 2 || words[1] != "time")
        return c.action_error("expects time <time> [ at-least <bytes> ]");
      if (words.size() < 3) return c.action_error("missing argument for 'time'");
      base::TimeValue t = base::parse_time(words[2], base::TimeUnit::kMs);
      if (t.status == base::TimeValue::Status::kBadChar)
        return c.action_error(fmt::format("unexpected character '{}'", t.bad));
      if (t.status != base::TimeValue::Status::kOk)
        return c.action_error(fmt::format("invalid time '{}'", words[2]));
      r.wait_ms = t.value;
      i = 3;
      if (i < words.size() && words[i] == "at-least") {
        if (i + 1 >= words.size()) return c.action_error("missing argument for 'at-least'");
        auto n = parse_bytes(words[i + 1]);
        if (!n) return c.action_error(fmt::format("invalid size '{}'", words[i + 1]));
        r.wait_at_least = *n;
        i += 2;
      }
      break;
    }
    case Action::kUseService: {
      // HAProxy's only built-in service; the others are Lua ones (`lua.<name>`).
      if (words.size() < 2)
        return base::Error::text(fmt::format(
            "'{}' expects a service name ('prometheus-exporter').", c.full));
      if (words[1] != "prometheus-exporter")
        return base::Error::text(fmt::format(
            "'{}' : unknown service '{}'; sluice supports 'prometheus-exporter' only.", c.full,
            words[1]));
      r.reply.kind = Verdict::Kind::kService;
      r.reply.status = 200;
      i = 2;
      break;
    }
    default:
      break;   // allow; the actions on the stream were parsed by parse_stream_action()
  }
  if (i < words.size()) {
    if (!detail::is_cond_word(words[i]))
      return base::Error::text(fmt::format(
          "'{}' expects either 'if' or 'unless' followed by a condition but found '{}'.", c.full, words[i]));
    std::vector<std::string> cw(words.begin() + static_cast<std::ptrdiff_t>(i), words.end());
    auto cond = parse_condition(cw, acls);
    if (!cond.ok())
      return base::Error::text(fmt::format("error detected while parsing an '{}' condition : {}.", c.full,
                                           cond.error().message));
    r.cond = std::move(cond.value());
    if (side == RuleSide::kRequest) {
      std::string w = r.cond.never_match_warning(fmt::format("{} http-request header rule", section));
      if (!w.empty()) r.warnings.push_back(std::move(w));
    } else {
      // http-after-response rules are named as http-response ones, as HAProxy names them.
      std::string w = r.cond.mark_request_only(fmt::format("{} http-response header rule", section));
      if (!w.empty()) r.warnings.push_back(std::move(w));
    }
  }
  return r;
}

base::Result<HttpRule> parse_redirect_rule(const std::vector<std::string>& words,
                                           const AclRegistry& acls) {
  static const std::string kNoDir;
  Ctx c{words, RuleSide::kRequest, "redirect", "redirect", kNoDir, true};
  HttpRule r;
  r.action = Action::kRedirect;
  auto n = parse_redirect(c, 0, r, true);
  if (!n.ok()) return n.error();
  std::size_t i = n.value();
  if (i < words.size()) {
    std::vector<std::string> cw(words.begin() + static_cast<std::ptrdiff_t>(i), words.end());
    auto cond = parse_condition(cw, acls);
    if (!cond.ok())
      return base::Error::text(fmt::format("error detected while parsing redirect rule : error in "
                                           "condition: {}.", cond.error().message));
    r.cond = std::move(cond.value());
  }
  return r;
}

}  // namespace sluice::rules

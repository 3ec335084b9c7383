// Running compiled rules on a message head.
#include <cctype>

#include <fmt/format.h>

#include "rules/internal.h"
#include "rules/normalize_uri.h"
#include "sample/var_read.h"

namespace sluice::rules {

namespace {

using Action = HttpRule::Action;

const base::Regex* regex_of(const HttpRule& r) {
  return static_cast<const base::Regex*>(r.regex.get());
}

bool name_matches(const HttpRule& r, std::string_view have) {
  const std::string& want = r.name;
  switch (r.name_match) {
    case 1:
      return have.size() >= want.size() && detail::iequals(have.substr(0, want.size()), want);
    case 2:
      return have.size() >= want.size() && detail::iequals(have.substr(have.size() - want.size()), want);
    case 3:
      for (std::size_t i = 0; i + want.size() <= have.size(); ++i)
        if (detail::iequals(have.substr(i, want.size()), want)) return true;
      return false;
    case 4: {
      // HAProxy matches the regex, case-sensitively, against the name as its H1 layer stores
      // it: lower-cased. `^X-Secret` thus matches nothing, `^x-secret` any spelling.
      const base::Regex* re = regex_of(r);
      if (!re) return false;
      std::string lower(have);
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return re->search(lower);
    }
    default: return detail::iequals(have, want);
  }
}

bool remove_headers(HeadEdit& edit, const HttpRule& r) {
  auto& hs = edit.headers;
  auto old = hs.size();
  hs.erase(std::remove_if(hs.begin(), hs.end(), [&](const http::Header& h) { return name_matches(r, h.name); }),
           hs.end());
  return hs.size() != old;
}

// Replaces the comma-separated values of `value` that `re` matches. A replaced element takes
// the blanks around it with it, as HAProxy's replace-value does ("192.168.10.1, 192.168.13.24,
// 10.0.0.37" -> "172.16.10.1,172.16.13.24, 10.0.0.37"); the others stay as they were.
bool replace_values(std::string_view value, const base::Regex& re, std::string_view repl, std::string& out) {
  bool changed = false;
  base::Regex::Groups g;
  std::vector<std::string_view> elements;
  detail::split_raw(value, elements);
  for (std::size_t i = 0; i < elements.size(); ++i) {
    if (i > 0) out += ',';
    std::string_view v = detail::trim_blanks(elements[i]);
    if (re.search_groups(v, &g)) {
      out += base::Regex::expand(repl, v, g);
      changed = true;
    } else {
      out.append(elements[i]);
    }
  }
  return changed;
}

// The target with its path replaced by `path`, keeping scheme://authority and the query.
std::string replace_path(std::string_view target, std::string_view path) {
  std::string_view cur = path_of(target);
  std::size_t begin, end;
  if (!cur.empty() && cur != "*") {
    begin = static_cast<std::size_t>(cur.data() - target.data());
    end = begin + cur.size();
  } else if (auto s = target.find("://"); s != std::string_view::npos) {
    begin = target.find_first_of("/?#", s + 3);
    if (begin == std::string_view::npos) begin = target.size();
    end = target.find_first_of("?#", begin);
    if (end == std::string_view::npos) end = target.size();
  } else {
    begin = 0;
    end = target.find('?');
    if (end == std::string_view::npos) end = target.size();
  }
  std::string out(target.substr(0, begin));
  out += path;
  out += target.substr(end);
  return out;
}

// The Location of a redirect rule, as HAProxy builds it: `location` as given (with the
// request's query after it for keep-query); `prefix` and `scheme` followed by the request's
// path and query (no query with drop-query), a `/` at the very end with append-slash (after
// the query, when one is kept, as HAProxy does). False: ignore-empty and the location is
// empty, the rule does not apply.
bool redirect_location(const HttpRule& r, const RequestView& view, std::string& loc) {
  std::string dest;
  r.value.render(view, dest);
  std::string_view target = view.req.target;
  if (r.redirect_kind == 0) {
    if (dest.empty() && r.ignore_empty) return false;
    loc = std::move(dest);
    if (r.keep_query) {
      auto q = target.find('?');
      if (q != std::string_view::npos) loc.append(target.substr(q));
    }
    return true;
  }
  std::string_view path = path_of(target);
  std::string_view rest;   // path and query
  if (!path.empty()) {
    rest = target.substr(static_cast<std::size_t>(path.data() - target.data()));
    if (r.drop_query) rest = rest.substr(0, rest.find('?'));
  }
  loc.clear();
  if (r.redirect_kind == 1) {
    if (dest != "/") loc = dest;
  } else {
    loc = dest + "://";
    if (view.req.headers)
      for (const auto& h : *view.req.headers)
        if (detail::iequals(h.name, "host")) {
          loc.append(h.value);
          break;
        }
  }
  if (rest.empty()) {
    loc += '/';
  } else {
    loc.append(rest);
  }
  if (r.append_slash && loc.back() != '/') loc += '/';
  return true;
}

// The Set-Cookie value of a redirect rule, empty when it sets none.
std::string redirect_cookie(const HttpRule& r, const RequestView& view) {
  switch (r.cookie) {
    case HttpRule::Cookie::kNone: return {};
    case HttpRule::Cookie::kSet: return r.cookie_text + "; path=/;";
    case HttpRule::Cookie::kClear: return r.cookie_text + "; path=/; Max-Age=0;";
    case HttpRule::Cookie::kSetFmt: {
      std::string c;
      r.cookie_fmt.render(view, c);
      return c + "; path=/;";
    }
  }
  return {};
}

// The target with its path and query (origin-form: all of it; absolute-form: after the
// authority) replaced by `pathq`.
std::string replace_pathq(std::string_view target, std::string_view pathq) {
  std::string_view path = path_of(target);
  std::size_t begin = path.empty() ? target.size() : static_cast<std::size_t>(path.data() - target.data());
  if (target.empty() || target[0] == '/') begin = 0;
  std::string out(target.substr(0, begin));
  out += pathq;
  return out;
}

// set-query: the query after '?' becomes `q`; an empty one keeps a '?' only where there was
// one (HAProxy 3.5: "/a?x" -> "/a?", "/a" stays "/a").
std::string replace_query(std::string_view target, std::string_view q) {
  auto qm = target.find('?');
  std::string out(target.substr(0, qm));
  if (qm != std::string_view::npos || !q.empty()) {
    out += '?';
    out += q;
  }
  return out;
}

// replace-path / -pathq / -uri: when `re` matches `part`, the whole part becomes `fmt` with
// its \N references expanded (as replace-header does to a whole value).
bool regex_replace_whole(const base::Regex& re, std::string_view part, const std::string& fmt,
                         std::string& out) {
  base::Regex::Groups g;
  if (!re.search_groups(part, &g)) return false;
  out = base::Regex::expand(fmt, part, g);
  return true;
}

}  // namespace

void fill_reply(const HttpRule& r, const RequestView& view, Verdict& v) {
  v = r.reply;
  if (r.reply_lf) r.value.render(view, v.body);
  for (const auto& [name, fmtv] : r.reply_headers) {
    std::string val;
    fmtv.render(view, val);
    v.extra_headers.emplace_back(name, std::move(val));
  }
}

std::string reply_bytes(int status, const Verdict& v) {
  std::string out = fmt::format("HTTP/1.1 {} {}\r\n", status, http::default_reason(status));
  for (const auto& [n, val] : v.extra_headers) {
    for (char c : n) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out += fmt::format(": {}\r\n", val);
  }
  out += fmt::format("content-length: {}\r\n", v.body.size());
  if (!v.content_type.empty()) out += fmt::format("content-type: {}\r\n", v.content_type);
  out += "\r\n";
  out += v.body;
  return out;
}

Verdict apply_rules(const std::vector<HttpRule>& rules, RuleSide side, HeadEdit& edit, RequestView view,
                    StreamEdit* stream, std::size_t first) {
  auto refresh = [&] {
    if (side == RuleSide::kRequest) {
      view.req.method = edit.method;
      view.req.target = edit.target;
      view.req.headers = &edit.headers;
    } else {
      view.res.headers = &edit.headers;
    }
  };
  refresh();
  Verdict out;
  for (std::size_t i = first; i < rules.size(); ++i) {
    const HttpRule& r = rules[i];
    if (!r.cond.empty() && !r.cond.eval(view)) continue;
    if (stream && r.is_final()) stream->last_rule = &r.loc;
    switch (r.action) {
      case Action::kSetHeader:
      case Action::kAddHeader: {
        std::string val;
        r.value.render(view, val);   // before deleting: the value may read the old field
        if (r.action == Action::kSetHeader) remove_headers(edit, r);
        edit.headers.push_back({edit.keep(r.name), edit.keep(std::move(val))});
        edit.changed = true;
        break;
      }
      case Action::kDelHeader:
        if (remove_headers(edit, r)) edit.changed = true;
        break;
      case Action::kReplaceHeader:
      case Action::kReplaceValue: {
        const base::Regex* re = regex_of(r);
        if (!re) break;
        std::string repl;
        r.value.render(view, repl);
        base::Regex::Groups g;
        for (auto& h : edit.headers) {
          if (!detail::iequals(h.name, r.name)) continue;
          if (r.action == Action::kReplaceHeader) {
            if (!re->search_groups(h.value, &g)) continue;
            h.value = edit.keep(base::Regex::expand(repl, h.value, g));
            edit.changed = true;
          } else {
            std::string nv;
            if (replace_values(h.value, *re, repl, nv)) {
              h.value = edit.keep(std::move(nv));
              edit.changed = true;
            }
          }
        }
        break;
      }
      case Action::kNormalizeUri: {
        if (side != RuleSide::kRequest) break;
        std::string& norm = view.sc().next();
        if (!normalize_uri(static_cast<Normalizer::Kind>(r.normalizer), r.normalizer_option,
                           edit.target, &norm)) {
          // strict, and a malformed %-sequence: HAProxy's 400.
          out.kind = Verdict::Kind::kDeny;
          out.status = 400;
          out.errorpage = true;
          return out;
        }
        if (norm != edit.target) {
          edit.target = edit.keep(std::string(norm));
          edit.changed = true;
        }
        break;
      }
      case Action::kSetPath: {
        if (side != RuleSide::kRequest) break;
        std::string p;
        r.value.render(view, p);
        edit.target = edit.keep(replace_path(edit.target, p));
        edit.changed = true;
        break;
      }
      case Action::kDeny:
      case Action::kTarpit:
      case Action::kReturn:
        fill_reply(r, view, out);
        return out;
      case Action::kReject:
      case Action::kSilentDrop:
        out = r.reply;
        return out;
      case Action::kRedirect:
        if (!redirect_location(r, view, out.location)) break;   // ignore-empty
        out.kind = Verdict::Kind::kRedirect;
        out.status = r.reply.status ? r.reply.status : 302;
        out.set_cookie = redirect_cookie(r, view);
        return out;
      case Action::kAllow:
        return out;
      case Action::kWaitForBody:
        // Requests: the mux waited before the rules (proxy::HttpTxn::wants_body_first()).
        // Responses: the caller waits here and resumes at the next rule.
        if (side != RuleSide::kResponse) break;
        out.kind = Verdict::Kind::kWaitBody;
        out.wait_ms = r.wait_ms;
        out.wait_at_least = r.wait_at_least;
        out.resume = static_cast<uint32_t>(i + 1);
        return out;
      case Action::kUseService:
      case Action::kAuth:
        out = r.reply;
        return out;
      case Action::kSetVar: {
        sample::Sample smp;
        if (r.expr->eval(view, smp)) sample::write_var(r.var, view, smp, r.var_conds);
        break;
      }
      case Action::kSetVarFmt: {
        std::string& val = view.sc().next();
        r.value.render(view, val);
        sample::write_var(r.var, view, sample::Sample::string(val), r.var_conds);
        break;
      }
      case Action::kUnsetVar:
        sample::unset_var(r.var, view);
        break;
      case Action::kSetMethod:
      case Action::kSetUri:
      case Action::kSetQuery:
      case Action::kSetPathq: {
        if (side != RuleSide::kRequest) break;
        std::string val;
        r.value.render(view, val);
        if (r.action == Action::kSetMethod) {
          edit.method = edit.keep(std::move(val));
        } else if (r.action == Action::kSetUri) {
          edit.target = edit.keep(std::move(val));
        } else if (r.action == Action::kSetQuery) {
          edit.target = edit.keep(replace_query(edit.target, val));
        } else {
          edit.target = edit.keep(replace_pathq(edit.target, val));
        }
        edit.changed = true;
        break;
      }
      case Action::kReplacePath:
      case Action::kReplacePathq:
      case Action::kReplaceUri: {
        const base::Regex* re = regex_of(r);
        if (!re || side != RuleSide::kRequest) break;
        std::string fmtv, repl;
        r.value.render(view, fmtv);
        std::string_view target = edit.target;
        if (r.action == Action::kReplaceUri) {
          if (!regex_replace_whole(*re, target, fmtv, repl)) break;
          edit.target = edit.keep(std::move(repl));
        } else {
          std::string_view path = path_of(target);
          std::string_view part = path;
          if (r.action == Action::kReplacePathq && !path.empty())
            part = target.substr(static_cast<std::size_t>(path.data() - target.data()));
          if (!regex_replace_whole(*re, part, fmtv, repl)) break;
          edit.target = edit.keep(r.action == Action::kReplacePath ? replace_path(target, repl)
                                                                  : replace_pathq(target, repl));
        }
        edit.changed = true;
        break;
      }
      case Action::kSetStatus:
        if (side == RuleSide::kRequest) break;
        edit.status = r.status;
        edit.reason = r.reason.empty() ? std::string_view() : edit.keep(r.reason);
        edit.changed = true;
        break;
      case Action::kCapture:
      case Action::kSetLogLevel:
      case Action::kSetTimeout:
      case Action::kSetSrc:
      case Action::kSetSrcPort:
      case Action::kSetDst:
      case Action::kSetDstPort:
        detail::apply_stream_action(r, side, view, stream);
        break;
    }
    refresh();
  }
  return out;
}

}  // namespace sluice::rules

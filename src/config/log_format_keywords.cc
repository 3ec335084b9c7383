// The log format of a proxy: `log-format`, `option httplog [clf]` / `option tcplog [clf]`
// (their choice, in proxy_option_keywords.cc, lands here), `log-format-sd`, `error-log-format`,
// `unique-id-format`, `unique-id-header` and `log-tag`. The formats are compiled once every section is read
// (validate.cc), as HAProxy checks them.
#include <fmt/format.h>

#include "config/proxy_keywords.h"

namespace sluice::config::proxy_kw {

namespace {

using Kind = ProxyConfig::LogFormatKind;

std::string_view origin(Kind k) {
  switch (k) {
    case Kind::kTcpLog: return "option tcplog";
    case Kind::kClfTcpLog: return "option tcplog clf";
    case Kind::kHttpLog: return "option httplog";
    case Kind::kClfHttpLog: return "option httplog clf";
    case Kind::kHttpsLog: return "option httpslog";
    case Kind::kCustom: return "log-format";
    case Kind::kNone: break;
  }
  return "";
}

// HAProxy's check of a one-argument format keyword.
void one_argument(const Line& l) {
  if (l.args.size() < 2)
    throw ConfigError{fmt::format("{}{} expects an argument.", l.where, l.args[0])};
  if (l.args.size() > 2)
    throw ConfigError{fmt::format("{}{} expects only one argument, don't forget to escape spaces!",
                                  l.where, l.args[0])};
}

// The formats of a frontend's lines take one argument; a backend warns that it ignores them
// (false), as HAProxy does.
bool frontend_format(Parser& p, const Line& l) {
  ProxyState& ps = p.cur_proxy();
  const ProxyConfig& px = ps.cfg;
  one_argument(l);
  if (ps.is_defaults || (px.caps & ProxyConfig::kFrontend)) return true;
  p.warning(fmt::format("{}{} '{}' : '{}' directive is ignored in backends.", l.where,
                        Parser::type_word(px), px.name, l.args[0]));
  return false;
}

}  // namespace

void choose_log_format(Parser& p, Line& l, Kind kind, std::string_view kw) {
  ProxyState& ps = p.cur_proxy();
  ProxyConfig& px = ps.cfg;
  if (ps.is_defaults && px.log_format_kind != Kind::kNone)
    p.warning(fmt::format("parsing [{}:{}]: '{}' overrides previous '{}' in 'defaults' section.",
                          l.loc.file, l.loc.line, kw, origin(px.log_format_kind)));
  px.log_format_kind = kind;
  px.log_format_loc = l.loc;
  px.option_httplog = kind == Kind::kHttpLog || kind == Kind::kClfHttpLog || kind == Kind::kHttpsLog;
  px.option_tcplog = kind == Kind::kTcpLog || kind == Kind::kClfTcpLog;
  px.httplog_loc = l.loc;
}

void kw_log_format(Parser& p, Line& l) {
  if (!frontend_format(p, l)) return;
  choose_log_format(p, l, Kind::kCustom, "log-format");
  p.cur_proxy().cfg.log_format = l.args[1];
}

// `log-format-sd` and `error-log-format`: compiled with the log format.
void kw_log_format_sd(Parser& p, Line& l) {
  if (!frontend_format(p, l)) return;
  ProxyConfig& px = p.cur_proxy().cfg;
  px.log_format_sd = l.args[1];
  px.log_format_sd_loc = l.loc;
}

void kw_error_log_format(Parser& p, Line& l) {
  if (!frontend_format(p, l)) return;
  ProxyConfig& px = p.cur_proxy().cfg;
  px.error_log_format = l.args[1];
  px.error_log_format_loc = l.loc;
}

void kw_unique_id_format(Parser& p, Line& l) {
  ProxyConfig& px = p.cur_proxy().cfg;
  one_argument(l);
  px.unique_id_format = l.args[1];
  px.unique_id_loc = l.loc;
}

void kw_unique_id_header(Parser& p, Line& l) {
  ProxyConfig& px = p.cur_proxy().cfg;
  one_argument(l);
  px.unique_id_header = l.args[1];
}

void kw_log_tag(Parser& p, Line& l) {
  ProxyConfig& px = p.cur_proxy().cfg;
  if (l.args.size() < 2)
    throw ConfigError{fmt::format("{}'log-tag' expects a tag for use in syslog.", l.where)};
  px.log_tag = l.args[1];
}

}  // namespace sluice::config::proxy_kw

// The statistics page (`stats uri`) in HTML, CSV, typed or JSON form, and the dispatch to the
// Prometheus exporter.
#include "stats/page.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "base/strings.h"
#include "stats/fields.h"
#include "stats/stat_table.h"

namespace sluice::stats {
namespace {

std::string html_escape(std::string_view t) {
  std::string out;
  for (char c : t) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

bool icontains(std::string_view hay, std::string_view needle) {
  if (needle.empty()) return true;
  for (std::size_t i = 0; i + needle.size() <= hay.size(); ++i) {
    std::size_t k = 0;
    while (k < needle.size() &&
           std::tolower(static_cast<unsigned char>(hay[i + k])) ==
               std::tolower(static_cast<unsigned char>(needle[k])))
      ++k;
    if (k == needle.size()) return true;
  }
  return false;
}

std::size_t column(std::string_view name) { return stat_column(name); }

// `lastchg` as the page shows it: "1h2m" (the field is in seconds; "" stays "").
std::string human_age(const std::string& seconds) {
  if (seconds.empty() || seconds.find_first_not_of("0123456789") != std::string::npos)
    return seconds;
  return base::human_duration(std::stoull(seconds));
}

// sluice's own HTML report: one table per proxy with the columns operators read most, the
// same values as the CSV (which the page links to).
void html_page(const ProcessSnapshot& proc, const std::vector<ProxySnapshot>& proxies,
               const StatFilter& o, const StatsPageQuery& q, std::string* out) {
  static constexpr std::string_view kShown[] = {
      "qcur", "qmax", "scur", "smax", "slim", "stot", "bin", "bout", "dreq", "dresp", "ereq",
      "econ", "eresp", "wretr", "wredis", "status", "lastchg", "weight", "act", "bck",
      "chkfail", "chkdown", "check_status", "lbtot"};
  *out += "<!DOCTYPE html>\n<html><head><title>Statistics Report for sluice";
  if (!q.node.empty()) *out += " on " + html_escape(q.node);
  *out += "</title>\n<meta http-equiv=\"content-type\" content=\"text/html; charset=utf-8\">\n";
  *out += "<style>body{font-family:sans-serif;font-size:13px}table{border-collapse:collapse;"
          "margin-bottom:1em}td,th{border:1px solid #999;padding:1px 4px;text-align:right}"
          "td.n,th.n{text-align:left}tr.fe{background:#ddf}tr.be{background:#ccf}"
          "tr.down{background:#f99}tr.maint{background:#ccc}</style></head><body>\n";
  *out += "<h1>Statistics Report for sluice";
  if (!q.node.empty()) *out += " on " + html_escape(q.node);
  *out += "</h1>\n";
  if (!q.desc.empty()) *out += "<h2>" + html_escape(q.desc) + "</h2>\n";
  if (!q.status.empty()) {
    std::string_view what = q.status == "DENY" ? "Action denied." : "Action processed.";
    *out += fmt::format("<p class=\"status\">{} ({})</p>\n", what, html_escape(q.status));
  }
  *out += "<p>";
  if (!q.hide_version) *out += "sluice " + html_escape(proc.version) + ", ";
  *out += fmt::format("pid = {}, nbthread = {}, uptime = {}, current connections = {}, "
                      "maxconn = {}", proc.pid, proc.nbthread, format_uptime(proc.uptime_s),
                      proc.curr_conns, proc.maxconn);
  if (q.refresh_s) *out += fmt::format(", refresh every {} s", q.refresh_s);
  *out += "</p>\n";
  *out += fmt::format("<p><a href=\"{0};csv\">CSV export</a> | <a href=\"{0};json\">JSON "
                      "export</a></p>\n", html_escape(q.uri));
  for (const auto& px : proxies) {
    std::vector<StatRow> rows;
    stat_rows(px, o, &rows);
    if (rows.empty()) continue;
    *out += fmt::format("<h3>{} ({}, mode {})</h3>\n<table>\n<tr><th class=\"n\">name</th>",
                        html_escape(px.name), px.id, html_escape(px.mode));
    for (auto c : kShown) *out += fmt::format("<th>{}</th>", c);
    *out += "</tr>\n";
    for (const auto& r : rows) {
      if (r.kind == StatRow::kListener) continue;   // the FRONTEND row sums them
      const std::string& status = r.v[column("status")];
      const char* cls = r.kind == StatRow::kFrontend  ? "fe"
                        : r.kind == StatRow::kBackend ? "be"
                        : status.starts_with("MAINT") ? "maint"
                        : status.starts_with("DOWN")  ? "down"
                                                      : "srv";
      *out += fmt::format("<tr class=\"{}\"><td class=\"n\">{}</td>", cls,
                          html_escape(r.v[column("svname")]));
      for (auto c : kShown) {
        std::string v = r.v[column(c)];
        if (c == "lastchg") v = human_age(v);
        *out += "<td>" + html_escape(v) + "</td>";
      }
      *out += "</tr>\n";
    }
    *out += "</table>\n";
  }
  *out += "</body></html>\n";
}

}  // namespace

std::string render_stats_page(const StatsSource& source, const StatsPageQuery& q) {
  std::vector<ProxySnapshot> all = source.proxies();
  std::vector<ProxySnapshot> shown;
  for (auto& px : all) {
    if (!q.scope_names.empty() &&
        std::find(q.scope_names.begin(), q.scope_names.end(), px.name) == q.scope_names.end())
      continue;
    if (!icontains(px.name, q.scope_text)) continue;
    shown.push_back(std::move(px));
  }
  StatFilter o;
  o.hide_down = q.hide_down;
  o.hide_maint = q.hide_maint;
  o.show_legends = q.show_legends;
  std::string out;
  if (q.format == StatsPageQuery::Format::kHtml) {
    html_page(source.process(), shown, o, q, &out);
    return out;
  }
  std::vector<StatRow> rows;
  for (const auto& px : shown) stat_rows(px, o, &rows);
  if (q.format == StatsPageQuery::Format::kPrometheus) {
    prometheus_text(source.process(), rows, q, &out);
    return out;
  }
  format_stat_rows(rows,
                   q.format == StatsPageQuery::Format::kCsv     ? StatFormat::kCsv
                   : q.format == StatsPageQuery::Format::kTyped ? StatFormat::kTyped
                                                                : StatFormat::kJson,
                   &out);
  return out;
}

}  // namespace sluice::stats

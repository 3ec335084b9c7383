// The statistics page (`stats uri`) in HTML, CSV, typed or JSON form, and the dispatch to the
// Prometheus exporter.
#include "stats/page.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "base/strings.h"
#include "stats/admin.h"
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
      case '\'': out += "&#39;"; break;   // the admin checkboxes' class is single-quoted
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

// The result banners of `;st=<CODE>`: HAProxy 3.5's classes and texts (its page's own).
struct Banner {
  std::string_view code, cls, text;
};
constexpr Banner kBanners[] = {
    {"DONE", "active_up", "Action processed successfully."},
    {"NONE", "active_going_down", "Nothing has changed."},
    {"PART", "active_going_down",
     "Action partially processed.<br>Some server names are probably unknown or ambiguous "
     "(duplicated names in the backend)."},
    {"ERRP", "active_down",
     "Action not processed because of invalid parameters.<ul><li>The action is maybe "
     "unknown.</li><li>Invalid key parameter (empty or too long).</li><li>The backend name is "
     "probably unknown or ambiguous (duplicated names).</li><li>Some server names are probably "
     "unknown or ambiguous (duplicated names in the backend).</li></ul>"},
    {"EXCD", "active_down",
     "<b>Action not processed : the buffer couldn't store all the data.<br>You should retry "
     "with less servers at a time.</b>"},
    {"DENY", "active_down", "<b>Action denied.</b>"},
    {"IVAL", "active_down",
     "<b>Invalid requests (unsupported method or chunked encoded request).</b>"},
};

// The banner after the header. Its [X] link reloads the page without the code, keeping `;up`
// and the scope (HAProxy drops `;norefresh` there).
void status_banner(const StatsPageQuery& q, std::string* out) {
  if (q.status.empty()) return;
  Banner b{"", "active_no_check", "Unexpected result."};
  for (const auto& k : kBanners)
    if (k.code == q.status) b = k;
  std::string href = q.uri;
  if (q.hide_down) href += ";up";
  if (!q.scope_text.empty()) href += "?scope=" + q.scope_text;
  *out += fmt::format("<p><div class={}><a class=lfsb href=\"{}\" title=\"Remove this "
                      "message\">[X]</a> {}</div>\n", b.cls, html_escape(href), b.text);
}

// The end of a backend's admin form: HAProxy's action select, in its order and words, and
// the backend by id (names may be ambiguous, ids are not).
void admin_form_end(const ProxySnapshot& px, std::string* out) {
  *out += "Choose the action to perform on the checked servers : <select name=action>"
          "<option value=\"\"></option>";
  for (const auto& a : admin_actions())
    *out += fmt::format("<option value=\"{}\">{}</option>", a.value, a.label);
  *out += fmt::format("</select><input type=\"hidden\" name=\"b\" value=\"#{}\">&nbsp;"
                      "<input type=\"submit\" value=\"Apply\"></form>\n", px.id);
}

// sluice's own HTML report: one table per proxy with the columns operators read most, the
// same values as the CSV (which the page links to). With `stats admin`, each backend that has
// servers is a form as on HAProxy's page: a first column of checkboxes named `s`, then the
// action select and the hidden backend id. The page is at most 1280 px wide; wider tables
// scroll inside it.
void html_page(const ProcessSnapshot& proc, const std::vector<ProxySnapshot>& proxies,
               const StatFilter& o, const StatsPageQuery& q, std::string* out) {
  static constexpr std::string_view kShown[] = {
      "qcur", "qmax", "scur", "smax", "slim", "stot", "bin", "bout", "dreq", "dresp", "ereq",
      "econ", "eresp", "wretr", "wredis", "status", "lastchg", "weight", "act", "bck",
      "chkfail", "chkdown", "check_status", "lbtot"};
  *out += "<!DOCTYPE html>\n<html><head><title>Statistics Report for sluice";
  if (!q.node.empty()) *out += " on " + html_escape(q.node);
  *out += "</title>\n<meta http-equiv=\"content-type\" content=\"text/html; charset=utf-8\">\n";
  *out += "<style>body{font-family:sans-serif;font-size:13px;margin:0}"
          ".page{max-width:1280px;padding:8px;box-sizing:border-box}.scroll{overflow-x:auto}"
          "table{border-collapse:collapse;margin-bottom:1em}"
          "td,th{border:1px solid #999;padding:1px 4px;text-align:right}"
          "td.n,th.n{text-align:left}tr.fe{background:#ddf}tr.be{background:#ccf}"
          "tr.down{background:#f99}tr.maint{background:#ccc}"
          ".active_up{background:#c0ffc0}.active_going_down{background:#ffffa0}"
          ".active_down{background:#ff9090}.active_no_check{background:#e0e0e0}"
          "a.lfsb{text-decoration:none}</style></head><body><div class=\"page\">\n";
  *out += "<h1>Statistics Report for sluice";
  if (!q.node.empty()) *out += " on " + html_escape(q.node);
  *out += "</h1>\n";
  if (!q.desc.empty()) *out += "<h2>" + html_escape(q.desc) + "</h2>\n";
  *out += "<p>";
  if (!q.hide_version) *out += "sluice " + html_escape(proc.version) + ", ";
  *out += fmt::format("pid = {}, nbthread = {}, uptime = {}, current connections = {}, "
                      "maxconn = {}", proc.pid, proc.nbthread, format_uptime(proc.uptime_s),
                      proc.curr_conns, proc.maxconn);
  if (q.refresh_s) *out += fmt::format(", refresh every {} s", q.refresh_s);
  *out += "</p>\n";
  *out += fmt::format("<p><a href=\"{0};csv\">CSV export</a> | <a href=\"{0};json\">JSON "
                      "export</a></p>\n", html_escape(q.uri));
  status_banner(q, out);
  for (const auto& px : proxies) {
    std::vector<StatRow> rows;
    stat_rows(px, o, &rows);
    if (rows.empty()) continue;
    // HAProxy's condition: a backend with servers, shown or not by `;up` / `;no-maint`.
    const bool form = q.admin && px.is_backend && !px.servers.empty();
    if (form) *out += "<form method=\"post\">";
    *out += fmt::format("<h3>{} ({}, mode {})</h3>\n<div class=\"scroll\"><table>\n<tr>",
                        html_escape(px.name), px.id, html_escape(px.mode));
    // The header's box ticks every server of this form (it has no name: it is not posted).
    if (form)
      *out += "<th><input type=\"checkbox\" title=\"Select all\" onclick=\"for(const c of "
              "this.form.querySelectorAll('input[name=s]'))c.checked=this.checked\"></th>";
    *out += "<th class=\"n\">name</th>";
    for (auto c : kShown) *out += fmt::format("<th>{}</th>", c);
    *out += "</tr>\n";
    const std::string cbox = html_escape(px.name) + "-checkbox";
    for (const auto& r : rows) {
      if (r.kind == StatRow::kListener) continue;   // the FRONTEND row sums them
      const std::string& status = r.v[column("status")];
      const std::string name = html_escape(r.v[column("svname")]);
      const char* cls = r.kind == StatRow::kFrontend  ? "fe"
                        : r.kind == StatRow::kBackend ? "be"
                        : status.starts_with("MAINT") ? "maint"
                        : status.starts_with("DOWN")  ? "down"
                                                      : "srv";
      *out += fmt::format("<tr class=\"{}\">", cls);
      if (form && r.kind == StatRow::kServer)
        *out += fmt::format("<td><input class='{}' type=\"checkbox\" name=\"s\" "
                            "value=\"{}\"></td>", cbox, name);
      else if (form)
        *out += "<td></td>";
      *out += fmt::format("<td class=\"n\">{}</td>", name);
      for (auto c : kShown) {
        std::string v = r.v[column(c)];
        if (c == "lastchg") v = human_age(v);
        *out += "<td>" + html_escape(v) + "</td>";
      }
      *out += "</tr>\n";
    }
    *out += "</table></div>\n";
    if (form) admin_form_end(px, out);
  }
  *out += "</div></body></html>\n";
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

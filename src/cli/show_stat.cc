// `show stat`: its words (domain, the `<iid> <type> <sid>` filter, `typed`, `json`, `up`,
// `no-maint`) parsed as HAProxy does; the table itself is stats::stat_rows().
#include "cli/builtin.h"
#include "stats/stat_table.h"

namespace sluice::cli {

void cmd_show_stat(const CommandContext& ctx, const std::vector<std::string>& words,
                   std::string* out) {
  // Positional parsing as HAProxy does it: [domain proxy|resolvers], then three words make a
  // filter whatever they are (so `show stat up typed json` is "No such proxy."), then options.
  std::size_t arg = 2;
  auto word = [&](std::size_t i) -> std::string_view {
    return i < words.size() ? std::string_view(words[i]) : std::string_view();
  };
  bool resolvers = false;
  if (word(arg) == "domain") {
    ++arg;
    if (word(arg) == "proxy") {
      ++arg;
    } else if (word(arg) == "resolvers") {
      ++arg;
      resolvers = true;
    } else {
      *out += "Invalid statistics domain.\n";
      return;
    }
  }
  std::vector<stats::ProxySnapshot> proxies;
  if (ctx.stats) proxies = ctx.stats->proxies();

  stats::StatFilter o;
  o.show_legends = ctx.level >= Level::kOperator;
  if (!resolvers && !word(arg).empty() && !word(arg + 1).empty() && !word(arg + 2).empty()) {
    int64_t iid = 0;
    bool found = false;
    for (const auto& px : proxies) {
      if (px.name == word(arg)) {
        iid = px.id;
        found = true;
        break;
      }
    }
    if (!found) iid = parse_atoi(word(arg));
    if (iid == 0) {
      *out += "No such proxy.\n";
      return;
    }
    o.bound = true;
    o.iid = iid;
    o.type = parse_atoi(word(arg + 1));
    o.sid = parse_atoi(word(arg + 2));
    arg += 3;
  }
  stats::StatFormat format = stats::StatFormat::kCsv;
  for (; arg < words.size(); ++arg) {
    if (words[arg] == "typed") format = stats::StatFormat::kTyped;
    else if (words[arg] == "json") format = stats::StatFormat::kJson;
    else if (words[arg] == "up") o.hide_down = true;
    else if (words[arg] == "no-maint") o.hide_maint = true;
    // `desc` and unknown words are ignored (no descriptions are printed by sluice).
  }

  std::vector<stats::StatRow> rows;
  if (!resolvers) {
    for (const auto& px : proxies) {
      if (o.bound && o.iid != -1 && px.id != o.iid) continue;
      stats::stat_rows(px, o, &rows);
    }
  }

  stats::format_stat_rows(rows, format, out);
}

}  // namespace sluice::cli

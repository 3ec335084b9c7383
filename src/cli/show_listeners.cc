// `show listeners` (sluice's own command): every listening socket, one line per shard, so an
// operator can see how each bind line was sharded and which threads serve each socket.
//
//   # proxy bind shard addr inode groups threads cur cum name state
//   fe :8080 1/2 0.0.0.0:8080 123456 1 1-2 0 17 sock-1 OPEN
#include <fmt/format.h>

#include "cli/builtin.h"

namespace sluice::cli {

void cmd_show_listeners(const CommandContext& ctx, const std::vector<std::string>& words,
                        std::string* out) {
  std::string only = words.size() > 2 ? words[2] : "";
  std::vector<stats::ListenerSnapshot> ls;
  if (ctx.stats) ls = ctx.stats->listeners();
  if (!only.empty()) {
    bool found = false;
    for (const auto& l : ls) found |= l.proxy == only;
    if (!found) {
      *out += "No such frontend.\n";
      return;
    }
  }
  *out += "# proxy bind shard addr inode groups threads cur cum name state\n";
  for (const auto& l : ls) {
    if (!only.empty() && l.proxy != only) continue;
    // Fields never contain blanks: a bind text with spaces is not possible (one address word).
    *out += fmt::format("{} {} {}/{} {} {} {} {} {} {} {} {}{}{}\n", l.proxy, l.bind, l.shard + 1,
                        l.shard_count, l.addr, l.inode, l.groups, l.threads, l.cur_conns,
                        l.cum_conns, l.name, l.status, l.fell_back ? " fallback" : "",
                        l.steered ? " steered" : "");
  }
}

}  // namespace sluice::cli

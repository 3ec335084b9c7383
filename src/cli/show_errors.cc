// `show errors [<px>|<iid>|-1] [request|response]` (spec 5): the last invalid HTTP message of
// each proxy and direction, with a printable dump of the bytes that were in the buffer.
#include <fmt/format.h>

#include "base/clock.h"
#include "base/strings.h"
#include "cli/builtin.h"

namespace sluice::cli {
namespace {

// How many escaped characters a dump line holds before it continues on the next one.
constexpr std::size_t kDumpWidth = 72;

void append_escaped(char c, std::string* line) {
  auto u = static_cast<unsigned char>(c);
  switch (c) {
    case '\\': *line += "\\\\"; return;
    case '\t': *line += "\\t"; return;
    case '\r': *line += "\\r"; return;
    case '\n': *line += "\\n"; return;
    default: break;
  }
  if (u >= 0x20 && u < 0x7f) *line += c;
  else *line += fmt::format("\\x{:02x}", u);
}

}  // namespace

// `  00000  GET / HTTP/1.1\r\n`: one line per line of the message (cut after each LF), with
// the offset of its first byte; a line longer than kDumpWidth continues on lines marked `+`.
std::string dump_message(std::string_view bytes) {
  std::string out;
  std::size_t i = 0;
  bool continued = false;
  while (i < bytes.size()) {
    std::string line;
    std::size_t start = i;
    while (i < bytes.size() && line.size() < kDumpWidth) {
      char c = bytes[i++];
      append_escaped(c, &line);
      if (c == '\n') break;
    }
    out += fmt::format("  {:05}{} {}\n", start, continued ? '+' : ' ', line);
    continued = i < bytes.size() && bytes[i - 1] != '\n';
  }
  return out;
}

void cmd_show_errors(const CommandContext& ctx, const std::vector<std::string>& w, Reply reply) {
  int only = -1;   // proxy index, -1 all
  std::string px = w.size() > 2 ? w[2] : "";
  if (!px.empty() && px != "-1") {
    if (!ctx.control || !ctx.control->find_proxy(px, &only)) return reply("No such proxy.\n");
  }
  std::string dir = w.size() > 3 ? w[3] : "";
  bool want_req = dir != "response", want_res = dir != "request";
  if (!ctx.control) return reply("");
  ctx.control->collect_errors(ctx.thread, [=](std::vector<stats::ErrorSnapshot> all,
                                              uint64_t total) {
    std::string out = fmt::format("Total events captured on [{}] : {}\n",
                                  base::log_date(base::wall_us()), total);
    for (const stats::ErrorSnapshot& e : all) {
      if (only >= 0 && e.proxy != only) continue;
      if (e.response ? !want_res : !want_req) continue;
      // The empty line before each block holds one space (spec 5).
      out += " \n";
      if (e.response) {
        out += fmt::format("[{}] backend {} (#{}): invalid response\n", base::log_date(e.wall_us),
                           e.proxy_name, e.proxy_id);
        out += fmt::format("  frontend {} (#{}), server {} (#{}), event #{}, src {}\n",
                           e.other_name, e.other_id, e.server_name, e.server_id, e.event,
                           e.source);
      } else {
        out += fmt::format("[{}] frontend {} (#{}): invalid request\n", base::log_date(e.wall_us),
                           e.proxy_name, e.proxy_id);
        out += fmt::format("  backend {} (#{}), server {} (#{}), event #{}, src {}\n",
                           e.other_name, e.other_id, e.server_name, e.server_id, e.event,
                           e.source);
      }
      out += fmt::format("  len {}, {} :\n  \n", e.len, e.reason);
      out += dump_message(e.bytes);
    }
    reply(std::move(out));
  });
}

}  // namespace sluice::cli

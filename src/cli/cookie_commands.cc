// Dynamic cookie commands: `set dynamic-cookie-key backend <bk> <k>`,
// `enable dynamic-cookie backend <bk>`, `disable dynamic-cookie backend <bk>` (admin). The
// answers are HAProxy 3.5's (cli_find_backend() then the command's own): nothing when it
// worked, also for a backend without `cookie ... dynamic` (the values then change for
// `show stat` and, once the backend has a `cookie`, for the clients). The change itself goes
// through stats::ServerControl (proxy/cookie_table.h publishes it to the workers).
#include <string>
#include <vector>

#include "cli/server_commands.h"

namespace sluice::cli {
namespace {

using Words = std::vector<std::string>;
using Change = stats::ServerControl::DynCookieChange;

void cmd_dyncookie(const CommandContext& ctx, const Words& w, std::string* out, Change change) {
  const std::string empty;
  const std::string& be = w.size() > 3 ? w[3] : empty;
  if (be.empty()) {
    *out += "A backend name is expected.\n";
    return;
  }
  // HAProxy 3.5 also takes a `disabled` backend here (measured).
  if (!ctx.control || !ctx.control->has_backend(be)) {
    *out += "No such backend.\n";
    return;
  }
  const std::string& key = w.size() > 4 ? w[4] : empty;
  if (change == Change::kSetKey && key.empty()) {
    *out += "String value expected.\n";
    return;
  }
  ctx.control->change_dynamic_cookie(be, change, key);
}

}  // namespace

std::vector<Command> cookie_commands() {
  return {
      {{"set", "dynamic-cookie-key", "backend"}, "set dynamic-cookie-key backend <bk> <k>",
       "change a backend secret key for dynamic cookies", Level::kAdmin,
       [](const CommandContext& c, const Words& w, std::string* o) {
         cmd_dyncookie(c, w, o, Change::kSetKey);
       }},
      {{"enable", "dynamic-cookie", "backend"}, "enable dynamic-cookie backend <bk>",
       "enable dynamic cookies on a specific backend", Level::kAdmin,
       [](const CommandContext& c, const Words& w, std::string* o) {
         cmd_dyncookie(c, w, o, Change::kEnable);
       }},
      {{"disable", "dynamic-cookie", "backend"}, "disable dynamic-cookie backend <bk>",
       "disable dynamic cookies on a specific backend", Level::kAdmin,
       [](const CommandContext& c, const Words& w, std::string* o) {
         cmd_dyncookie(c, w, o, Change::kDisable);
       }},
  };
}

}  // namespace sluice::cli

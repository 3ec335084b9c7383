// The command table: registry, built-in commands, `help` and unknown-command suggestions.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "base/strings.h"
#include "base/version.h"
#include "cli/builtin.h"

namespace sluice::cli {
namespace {

std::vector<std::pair<std::string, Level>>& cli_sockets() {
  static std::vector<std::pair<std::string, Level>> sockets;
  return sockets;
}

// `show cli sockets` (any level): HAProxy's header, then one line per stats socket; sluice has
// one process, so `processes` is always `all`.
void cmd_show_cli_sockets(const CommandContext&, const std::vector<std::string>&, std::string* out) {
  *out += "# socket lvl processes\n";
  for (const auto& [addr, level] : cli_sockets()) *out += fmt::format("{} {} all\n", addr, level_name(level));
}

std::vector<Command>& registry() {
  // Built lazily so that register_command() from another module's static setup code cannot
  // run before the built-ins exist.
  static std::vector<Command> table = builtin_commands();
  return table;
}

constexpr std::string_view kFixedHelp =
    "  help [<command>]                        : list matching or all commands\n"
    "  prompt [help | n | i | p | timed ]*     : toggle interactive mode with prompt\n"
    "  quit                                    : disconnect\n";

constexpr std::string_view kPromptUsage =
    "Usage: prompt [help | n | i | p | timed]*\n"
    "Changes how this connection answers. Without argument, toggles between the\n"
    "default (non-interactive) mode and the prompt mode. Arguments:\n"
    "  help  : show this help\n"
    "  n     : non-interactive mode (answer one input line, then close)\n"
    "  i     : interactive mode (many commands, no prompt)\n"
    "  p     : prompt mode (many commands, '> ' after each line)\n"
    "  timed : toggle the process uptime in the prompt (enters prompt mode)\n";

std::string help_line(const Command& c) {
  return fmt::format("  {:<40}: {}\n", c.usage, c.help);
}

// Whether a typed word is close to a command keyword: at most half of the keyword's letters
// differ.
bool keyword_close(std::string_view typed, std::string_view keyword, std::size_t* dist) {
  *dist = base::edit_distance(typed, keyword);
  return *dist * 2 <= keyword.size();
}

// How an unknown command compares with a command's fixed words, keyword by keyword (spec 1.6:
// `show foo` is compared with the `show ...` commands, not with their whole usage text). Only
// the positions both have are compared; `dist` is the sum of their edit distances.
struct KeywordMatch {
  bool first_close = false;   // the first keyword is close
  bool all_close = false;     // every compared keyword is close
  std::size_t first_dist = 0;
  std::size_t dist = 0;
};

KeywordMatch match_keywords(const std::vector<std::string>& typed, const Command& c) {
  KeywordMatch m;
  std::size_t n = std::min(typed.size(), c.words.size());
  if (n == 0) return m;
  m.all_close = true;
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t d = 0;
    bool close = keyword_close(typed[i], c.words[i], &d);
    if (i == 0) {
      m.first_close = close;
      m.first_dist = d;
    }
    m.all_close = m.all_close && close;
    m.dist += d;
  }
  return m;
}

void cmd_help(const CommandContext& ctx, const std::vector<std::string>& words, std::string* out) {
  *out += help_text(words, false, ctx.session && ctx.session->experimental);
}

// `expert-mode [on|off]`, `experimental-mode [on|off]` (admin, not listed by help, as in
// HAProxy): without argument, the mode's state; another word changes nothing.
void mode_switch(const std::vector<std::string>& words, bool* flag, std::string* out) {
  if (words.size() < 2) {
    *out += fmt::format("{} is {}\n", words[0], *flag ? "ON" : "OFF");
    return;
  }
  if (words[1] == "on") *flag = true;
  else if (words[1] == "off") *flag = false;
}

void cmd_expert_mode(const CommandContext& ctx, const std::vector<std::string>& words, std::string* out) {
  if (ctx.session) mode_switch(words, &ctx.session->expert, out);
}

void cmd_experimental_mode(const CommandContext& ctx, const std::vector<std::string>& words,
                           std::string* out) {
  if (ctx.session) mode_switch(words, &ctx.session->experimental, out);
}

void cmd_prompt(const CommandContext& ctx, const std::vector<std::string>& words,
                std::string* out) {
  SessionState* s = ctx.session;
  if (!s) return;
  if (words.size() == 1) {
    s->mode = s->mode == Mode::kPrompt ? Mode::kNonInteractive : Mode::kPrompt;
    return;
  }
  for (std::size_t i = 1; i < words.size(); ++i) {
    if (words[i] == "n") {
      s->mode = Mode::kNonInteractive;
    } else if (words[i] == "i") {
      s->mode = Mode::kInteractive;
    } else if (words[i] == "p") {
      s->mode = Mode::kPrompt;
    } else if (words[i] == "timed") {
      s->timed = !s->timed;
      s->mode = Mode::kPrompt;
    } else {
      *out += kPromptUsage;
      return;
    }
  }
}

void cmd_quit(const CommandContext& ctx, const std::vector<std::string>&, std::string*) {
  if (ctx.session) ctx.session->quit = true;
}

void cmd_echo(const CommandContext&, const std::vector<std::string>& words, std::string* out) {
  for (std::size_t i = 1; i < words.size(); ++i) {
    if (i > 1) *out += ' ';
    *out += words[i];
  }
}

void cmd_show_version(const CommandContext&, const std::vector<std::string>&, std::string* out) {
  *out += base::kVersion;
}

void cmd_show_cli_level(const CommandContext& ctx, const std::vector<std::string>&,
                        std::string* out) {
  *out += level_name(ctx.level);
}

void cmd_user(const CommandContext& ctx, const std::vector<std::string>&, std::string*) {
  if (ctx.session) ctx.session->level = Level::kUser;
}

void cmd_operator(const CommandContext& ctx, const std::vector<std::string>&, std::string*) {
  // The table's level check already refused this from a user-level session.
  if (ctx.session) ctx.session->level = Level::kOperator;
}

// HAProxy's parse_time_err() with seconds as the default unit: "<n>[us|ms|s|m|h|d]".
// Returns the value in milliseconds, or -1 if the text is not a valid delay.
int64_t parse_delay_ms(std::string_view text) {
  std::size_t i = 0;
  uint64_t n = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    n = n * 10 + static_cast<uint64_t>(text[i] - '0');
    if (n > (1ULL << 40)) return -1;
    ++i;
  }
  if (i == 0) return -1;
  std::string_view unit = text.substr(i);
  uint64_t ms;
  if (unit.empty() || unit == "s") ms = n * 1000;
  else if (unit == "us") ms = n / 1000;
  else if (unit == "ms") ms = n;
  else if (unit == "m") ms = n * 60 * 1000;
  else if (unit == "h") ms = n * 3600 * 1000;
  else if (unit == "d") ms = n * 86400 * 1000;
  else return -1;
  return static_cast<int64_t>(ms);
}

void cmd_set_timeout(const CommandContext& ctx, const std::vector<std::string>& words,
                     std::string* out) {
  if (words.size() < 3 || words[2] != "cli") {
    *out += "'set timeout' only supports 'cli'.\n";
    return;
  }
  if (words.size() < 4 || words[3].empty()) {
    *out += "Expects an integer value.\n";
    return;
  }
  int64_t ms = parse_delay_ms(words[3]);
  // HAProxy works in whole seconds here: anything under one second is refused.
  if (ms < 1000 || ms / 1000 > std::numeric_limits<int32_t>::max() / 1000) {
    *out += "Invalid timeout value.\n";
    return;
  }
  if (ctx.session) ctx.session->timeout_override_ms = static_cast<uint32_t>(ms / 1000 * 1000);
}

}  // namespace

const char* level_name(Level level) {
  switch (level) {
    case Level::kAdmin: return "admin";
    case Level::kOperator: return "operator";
    case Level::kUser: return "user";
  }
  return "user";
}

std::vector<Command> builtin_commands() {
  // Usage and help texts are HAProxy's, so that `help` output reads the same.
  std::vector<Command> table = {
      {{"help"}, "", "", Level::kUser, cmd_help},
      {{"prompt"}, "", "", Level::kUser, cmd_prompt},
      {{"quit"}, "", "", Level::kUser, cmd_quit},
      {{"echo"}, "echo <text>", "print text to the output", Level::kUser, cmd_echo},
      {{"show", "version"}, "show version", "show version of the current process", Level::kUser,
       cmd_show_version},
      {{"show", "cli", "level"}, "show cli level", "display the level of the current CLI session",
       Level::kUser, cmd_show_cli_level},
      {{"show", "cli", "sockets"}, "show cli sockets", "dump list of cli sockets", Level::kUser,
       cmd_show_cli_sockets},
      {{"user"}, "user", "lower the level of the current CLI session to user", Level::kUser,
       cmd_user},
      {{"operator"}, "operator", "lower the level of the current CLI session to operator",
       Level::kOperator, cmd_operator},
      {{"set", "timeout"}, "set timeout [cli] <delay>", "change a timeout setting", Level::kUser,
       cmd_set_timeout},
      {{"show", "info"}, "show info [desc|json|typed|float]*",
       "report information about the running process", Level::kUser, cmd_show_info},
      {{"show", "stat"}, "show stat [desc|json|no-maint|typed|up]*",
       "report counters for each proxy and server", Level::kUser, cmd_show_stat},
      {{"show", "servers", "state"}, "show servers state [<backend>]",
       "dump volatile server information (all or for a single backend)", Level::kUser,
       cmd_show_servers_state},
      {{"show", "backend"}, "show backend", "list backends in the current running config",
       Level::kUser, cmd_show_backend},
      {{"show", "listeners"}, "show listeners [<frontend>]",
       "list listening sockets: shards, kernel socket, groups and threads", Level::kUser,
       cmd_show_listeners},
      {{"show", "activity"}, "show activity [-1|0|thread_num]",
       "show per-thread activity stats (for support/developers)", Level::kOperator,
       cmd_show_activity},
      {{"expert-mode"}, "", "", Level::kAdmin, cmd_expert_mode},
      {{"experimental-mode"}, "", "", Level::kAdmin, cmd_experimental_mode},
      {{"get", "var"}, "get var <name>", "retrieve contents of a process-wide variable",
       Level::kOperator, cmd_get_var},
      // Hidden: the new worker of a master-worker reload takes the proc variables over.
      {{"_getvars"}, "", "", Level::kAdmin, cmd_getvars},
      {{"set", "var"}, "set var <name> [fmt|expr] {<fmt>|<expr>}",
       "set variable from an expression or a format", Level::kOperator, cmd_set_var, nullptr, true},
  };
  for (auto& c : map_commands()) table.push_back(std::move(c));
  for (auto& c : ssl_commands()) table.push_back(std::move(c));
  return table;
}

void register_command(Command command) {
  auto& table = registry();
  for (auto& c : table) {
    if (c.words == command.words) {
      c = std::move(command);
      return;
    }
  }
  table.push_back(std::move(command));
}

const std::vector<Command>& commands() { return registry(); }

std::string help_text(const std::vector<std::string>& words, bool unknown, bool experimental) {
  std::vector<const Command*> listed;
  for (const auto& c : commands())
    if (!c.usage.empty() && (!c.experimental || experimental)) listed.push_back(&c);

  std::string out;
  if (unknown) {
    out = fmt::format(
        "Unknown command: '{}', but maybe one of the following ones is a better match:\n",
        words.empty() ? std::string() : words[0]);
    // Candidates: the commands whose first keyword is the closest one to what was typed
    // (`get foo` is about `get`, not `set`), if it is close at all; among them, those whose
    // every keyword is close if there are some (`show inf` -> `show info`), else all of them
    // (`set foo` -> the `set ...` commands). Nothing close: the whole list. At most 5, the
    // closest first.
    struct Scored {
      std::size_t first_dist;
      std::size_t dist;
      bool all_close;
      const Command* c;
    };
    std::vector<Scored> close;
    for (const Command* c : listed) {
      KeywordMatch m = match_keywords(words, *c);
      if (m.first_close) close.push_back({m.first_dist, m.dist, m.all_close, c});
    }
    if (!close.empty()) {
      std::size_t best = std::min_element(close.begin(), close.end(),
                                          [](const Scored& a, const Scored& b) {
                                            return a.first_dist < b.first_dist;
                                          })->first_dist;
      std::erase_if(close, [best](const Scored& sc) { return sc.first_dist != best; });
      if (std::any_of(close.begin(), close.end(), [](const Scored& sc) { return sc.all_close; }))
        std::erase_if(close, [](const Scored& sc) { return !sc.all_close; });
    }
    std::stable_sort(close.begin(), close.end(),
                     [](const Scored& a, const Scored& b) { return a.dist < b.dist; });
    if (close.size() > 5) close.resize(5);
    if (!close.empty()) {
      listed.clear();
      for (const auto& sc : close) listed.push_back(sc.c);
    }
  } else {
    out = "The following commands are valid at this level:\n";
    // `help show servers` keeps the commands whose leading words are the given ones.
    std::vector<std::string> want(words.size() > 1 ? words.begin() + 1 : words.end(), words.end());
    if (!want.empty()) {
      std::vector<const Command*> match;
      for (const Command* c : listed) {
        bool ok = true;
        for (std::size_t i = 0; i < want.size() && ok; ++i)
          ok = i < c->words.size() && c->words[i] == want[i];
        if (ok) match.push_back(c);
      }
      if (match.empty()) {
        // `help map`: no command starts with the words; the (at most 5) shortest commands
        // that have every one of them among their keywords, as HAProxy 3.5 lists them
        // (`add map`, `del map`, `get map`, `set map`, `show map`).
        for (const Command* c : listed) {
          bool all = true;
          for (const auto& w : want)
            all = all && std::find(c->words.begin(), c->words.end(), w) != c->words.end();
          if (all) match.push_back(c);
        }
        auto length = [](const Command* c) {
          std::size_t n = 0;
          for (const auto& w : c->words) n += w.size() + 1;
          return n;
        };
        std::stable_sort(match.begin(), match.end(),
                         [&](const Command* a, const Command* b) { return length(a) < length(b); });
        if (match.size() > 5) match.resize(5);
      }
      if (!match.empty()) listed = std::move(match);
    }
  }
  std::stable_sort(listed.begin(), listed.end(),
                   [](const Command* a, const Command* b) { return a->usage < b->usage; });
  for (const Command* c : listed) out += help_line(*c);
  out += kFixedHelp;
  return out;
}

void set_cli_sockets(std::vector<std::pair<std::string, Level>> sockets) {
  cli_sockets() = std::move(sockets);
}

}  // namespace sluice::cli

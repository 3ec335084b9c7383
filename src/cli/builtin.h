#pragma once
// Internal to the cli module: the built-in command handlers and the formatting helpers they
// share, declared here so that the unit tests can reach them. Any thread (pure functions of
// their arguments and of the StatsSource they read).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli.h"
#include "stats/snapshot.h"

namespace sluice::cli {

// Parses an integer the way HAProxy's atoi() does: optional sign, leading digits, the rest
// ignored, 0 when there are none. Saturates instead of overflowing.
int64_t parse_atoi(std::string_view s);

// The built-in command table (commands.cc).
std::vector<Command> builtin_commands();

void cmd_show_info(const CommandContext& ctx, const std::vector<std::string>& words,
                   std::string* out);
void cmd_show_stat(const CommandContext& ctx, const std::vector<std::string>& words,
                   std::string* out);
void cmd_show_servers_state(const CommandContext& ctx, const std::vector<std::string>& words,
                            std::string* out);
void cmd_show_listeners(const CommandContext& ctx, const std::vector<std::string>& words,
                        std::string* out);
void cmd_show_backend(const CommandContext& ctx, const std::vector<std::string>& words,
                      std::string* out);
void cmd_show_activity(const CommandContext& ctx, const std::vector<std::string>& words,
                       std::string* out);

// `show errors` (show_errors.cc); dump_message() is its printable dump of a message's bytes.
void cmd_show_errors(const CommandContext& ctx, const std::vector<std::string>& words,
                     Reply reply);
std::string dump_message(std::string_view bytes);

// The answer to `help [words]` (with_help_header) or to an unknown command.
// Experimental commands are listed only when `experimental` (the session's mode) is on.
std::string help_text(const std::vector<std::string>& words, bool unknown, bool experimental = false);

// `get var` and `set var` (var_commands.cc).
void cmd_get_var(const CommandContext& ctx, const std::vector<std::string>& words, std::string* out);
void cmd_getvars(const CommandContext& ctx, const std::vector<std::string>& words, std::string* out);
void cmd_set_var(const CommandContext& ctx, const std::vector<std::string>& words, std::string* out);

// The maps' and ACLs' commands (map_commands.cc).
std::vector<Command> map_commands();
// The certificates' commands (ssl_commands.cc).
std::vector<Command> ssl_commands();

}  // namespace sluice::cli

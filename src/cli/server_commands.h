#pragma once
// Server and limit management commands (spec cli-and-stats.md section 5): `set server`,
// `set weight`, `get weight`, `enable/disable server|health|agent`, `set maxconn ...`.
// They parse and answer with HAProxy's exact messages; the change itself goes through the
// session's stats::ServerControl (CommandContext::control).
#include <vector>

#include "cli/cli.h"

namespace sluice::cli {

// The command table of this file, in help order.
std::vector<Command> server_commands();
// `set dynamic-cookie-key backend`, `enable|disable dynamic-cookie backend`
// (cookie_commands.cc); register_server_commands() adds them too.
std::vector<Command> cookie_commands();
// Adds server_commands() to the command table. Main thread, at start-up (register_command's
// rule); calling it twice is harmless (same words replace).
void register_server_commands();

}  // namespace sluice::cli

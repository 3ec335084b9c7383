#pragma once
// Internal to the cli module: the built-in command handlers and the formatting helpers they
// share, declared here so that the unit tests can reach them. Any thread (pure functions of
// their arguments and of the StatsSource they read).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli.h"
#include "stats/page.h"
#include "stats/snapshot.h"

namespace sluice::cli {

// CSV rules of spec 3.2: quoted only if the value holds `,` `"` CR or LF; `"` doubled, CR
// dropped, LF turned into a space, trailing spaces trimmed.
std::string csv_escape(std::string_view s);
// A JSON string body (without the quotes).
std::string json_escape(std::string_view s);
// `show info` Uptime: "<d>d <h>h<mm>m<ss>s".
std::string format_uptime(uint64_t seconds);

// One value of a typed dump (show info typed/json, show stat typed/json).
enum class FieldType { kS32, kU32, kS64, kU64, kStr };
const char* field_type_name(FieldType type);
// `{"origin":"Metric","nature":"Counter","scope":"Process"}` for tags such as "MCPP".
std::string json_tags(std::string_view tags);
// `{"type":"u32","value":12}`.
std::string json_value(FieldType type, std::string_view value);

// Names of `show stat` columns 0-118 followed by "-" (column 119).
const std::vector<std::string_view>& stat_column_names();
inline constexpr std::size_t kStatColumns = 120;
// The position of a column by name (119, the "-" column, when unknown).
std::size_t stat_column(std::string_view name);

// One `show stat` row for other renderers: kind 0 frontend, 1 backend, 2 server, 3 listener;
// "" = an empty field.
struct StatRow {
  int kind = 0;
  std::array<std::string, kStatColumns> v;
};
// The Prometheus text of the exporter (prometheus.cc) from the process fields and the rows.
void prometheus_text(const stats::ProcessSnapshot& proc, const std::vector<StatRow>& rows,
                     const stats::StatsPageQuery& q, std::string* out);

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
std::string help_text(const std::vector<std::string>& words, bool unknown);

}  // namespace sluice::cli

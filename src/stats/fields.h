#pragma once
// Value formats shared by `show info`, `show stat`, the statistics page and the Prometheus
// exporter: CSV and JSON escaping, the typed-field names and tags. Pure functions of their
// arguments; any thread.
#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::stats {

// A CSV field as HAProxy writes it: quoted only if the value holds `,` `"` CR or LF; `"`
// doubled, CR dropped, LF turned into a space, trailing spaces trimmed.
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

}  // namespace sluice::stats

// The value formats shared by `show info`, `show stat` and the statistics page.
#include <fmt/format.h>

#include "stats/fields.h"

namespace sluice::stats {

std::string csv_escape(std::string_view s) {
  bool quote = s.find_first_of(",\"\r\n") != std::string_view::npos;
  std::string v;
  v.reserve(s.size() + 2);
  for (char c : s) {
    if (c == '\r') continue;
    if (c == '\n') {
      v += ' ';
    } else if (c == '"') {
      v += "\"\"";
    } else {
      v += c;
    }
  }
  while (!v.empty() && v.back() == ' ') v.pop_back();
  if (!quote) return v;
  return "\"" + v + "\"";
}

std::string json_escape(std::string_view s) {
  std::string v;
  v.reserve(s.size());
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': v += "\\\""; break;
      case '\\': v += "\\\\"; break;
      case '\n': v += "\\n"; break;
      case '\r': v += "\\r"; break;
      case '\t': v += "\\t"; break;
      default:
        if (u < 0x20) {
          v += fmt::format("\\u{:04x}", u);
        } else {
          v += c;
        }
    }
  }
  return v;
}

std::string format_uptime(uint64_t seconds) {
  return fmt::format("{}d {}h{:02}m{:02}s", seconds / 86400, (seconds / 3600) % 24,
                     (seconds / 60) % 60, seconds % 60);
}

const char* field_type_name(FieldType type) {
  switch (type) {
    case FieldType::kS32: return "s32";
    case FieldType::kU32: return "u32";
    case FieldType::kS64: return "s64";
    case FieldType::kU64: return "u64";
    case FieldType::kStr: return "str";
  }
  return "str";
}

std::string json_tags(std::string_view tags) {
  auto origin = [](char c) -> const char* {
    switch (c) {
      case 'M': return "Metric";
      case 'S': return "Status";
      case 'K': return "Key";
      case 'C': return "Config";
      case 'P': return "Product";
      default: return "Unknown";
    }
  };
  auto nature = [](char c) -> const char* {
    switch (c) {
      case 'G': return "Gauge";
      case 'L': return "Limit";
      case 'm': return "Min";
      case 'M': return "Max";
      case 'R': return "Rate";
      case 'C': return "Counter";
      case 'D': return "Duration";
      case 'A': return "Age";
      case 'T': return "Time";
      case 'N': return "Name";
      case 'O': return "Output";
      case 'a': return "Avg";
      default: return "Unknown";
    }
  };
  auto scope = [](char c) -> const char* {
    switch (c) {
      case 'P': return "Process";
      case 'S': return "Service";
      case 's': return "System";
      case 'C': return "Cluster";
      default: return "Unknown";
    }
  };
  char o = tags.size() > 0 ? tags[0] : '?';
  char n = tags.size() > 1 ? tags[1] : '?';
  char sc = tags.size() > 2 ? tags[2] : '?';
  return fmt::format(R"({{"origin":"{}","nature":"{}","scope":"{}"}})", origin(o), nature(n),
                     scope(sc));
}

std::string json_value(FieldType type, std::string_view value) {
  if (type == FieldType::kStr)
    return fmt::format(R"({{"type":"str","value":"{}"}})", json_escape(value));
  return fmt::format(R"({{"type":"{}","value":{}}})", field_type_name(type), value);
}

}  // namespace sluice::stats

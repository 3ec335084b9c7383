#pragma once
// Thread, thread-group, CPU and listener-sharding keywords: the global keyword parsers, the
// bind options `thread`, `shards` and `id`, and the set syntaxes they share. Internal to
// config/; main thread only.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/model.h"
#include "config/parser.h"

namespace sluice::config {

// Global keywords (rows of the global keyword table).
void kw_thread_groups(Parser& p, Line& l);
void kw_thread_group(Parser& p, Line& l);
void kw_max_threads_per_group(Parser& p, Line& l);
void kw_thread_hard_limit(Parser& p, Line& l);
void kw_cpu_map(Parser& p, Line& l);
void kw_cpu_policy(Parser& p, Line& l);
void kw_default_shards(Parser& p, Line& l);
void kw_multi_queue(Parser& p, Line& l);
void kw_reuseport_steering(Parser& p, Line& l);
void kw_noreuseport(Parser& p, Line& l);

// Throws the HAProxy error when `keyword` comes after a non-global section (nbthread,
// thread-groups and thread-group must be in the first global sections).
void require_first_global(const Parser& p, const Line& l);

// Bind options. `head` is "parsing [f:N] : 'bind :80'", the prefix of every message; `value`
// is the option's argument, `has_value` false when the line ends after the option name.
void parse_bind_thread(const std::string& head, const std::string& value, bool has_value,
                       BindConfig* b);
void parse_bind_shards(const std::string& head, const std::string& value, bool has_value,
                       BindConfig* b);
void parse_bind_id(const std::string& head, const std::string& value, bool has_value,
                   BindConfig* b);

// `all|odd|even|N|N-M|N-|-M|-` within 1..max. Returns the selected numbers ascending, or
// nullopt with *err set to a reason (no location). *is_range tells whether the set was written
// as something that may select several numbers (all/odd/even or a range).
std::optional<std::vector<int>> parse_number_set(std::string_view text, int max, bool* is_range,
                                                 std::string* err);

// CPU list: `N`, `N-M` and comma lists of them; CPU numbers 0..kMaxCpuId. Appends to *cpus.
inline constexpr int kMaxCpuId = 4095;
bool parse_cpu_list(std::string_view text, std::vector<int>* cpus, std::string* err);

// A bind `thread` argument: `[g/]set[,[g/]set...]`. Appends one ThreadSetConfig per element.
bool parse_thread_arg(std::string_view text, std::vector<ThreadSetConfig>* out, std::string* err);

}  // namespace sluice::config

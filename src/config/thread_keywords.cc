// Thread, thread-group, CPU and listener-sharding keywords.
#include "config/thread_keywords.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <set>

#include <fmt/format.h>

#include "config/units.h"

namespace sluice::config {

namespace {

constexpr int kMaxThreads = 1024;
constexpr int kMaxGroups = 32;
constexpr int kMaxThreadsPerGroup = 64;
constexpr int kMaxShards = 1024;

void no_extra(const Line& l, std::size_t n) {
  if (l.args.size() > n)
    throw ConfigError{fmt::format("{}'{}' cannot handle unexpected argument '{}'.", l.where,
                                  l.args[0], l.args[n])};
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Digits only, no sign; values too large for an int are reported as out of range by callers
// through the returned LLONG_MAX clamp.
long long to_number(std::string_view s) {
  long long v = 0;
  for (char c : s) {
    v = v * 10 + (c - '0');
    if (v > INT_MAX) return LLONG_MAX;
  }
  return v;
}

// A strict integer within [lo, hi] or a ConfigError naming the keyword and the range.
int int_arg(const Line& l, long long lo, long long hi) {
  std::string v = l.args.size() > 1 ? l.args[1] : "";
  auto n = parse_strict_int(v, LLONG_MIN, LLONG_MAX);
  if (!n)
    throw ConfigError{fmt::format("{}passed a missing or unparsable integer value in '{}'", l.where, v)};
  if (*n < lo || *n > hi)
    throw ConfigError{fmt::format("{}'{}' must be between {} and {} (got {}).", l.where, l.args[0],
                                  lo, hi, *n)};
  no_extra(l, 2);
  return static_cast<int>(*n);
}

}  // namespace

std::optional<std::vector<int>> parse_number_set(std::string_view text, int max, bool* is_range,
                                                 std::string* err) {
  std::vector<int> out;
  *is_range = false;
  for (std::string_view word : {"all", "odd", "even"}) {
    if (!text.starts_with(word)) continue;
    if (text.size() > word.size()) {
      *err = text[word.size()] == '-'
                 ? fmt::format("'{}' cannot be followed by a range in '{}'", word, text)
                 : fmt::format("invalid character '{}' in '{}'", text[word.size()], text);
      return std::nullopt;
    }
    *is_range = true;
    int start = word == "even" ? 2 : 1;
    int step = word == "all" ? 1 : 2;
    for (int i = start; i <= max; i += step) out.push_back(i);
    return out;
  }
  if (text.empty()) {
    *err = "missing value";
    return std::nullopt;
  }
  auto dash = text.find('-');
  std::string_view lo_s = text.substr(0, dash);
  std::string_view hi_s = dash == std::string_view::npos ? lo_s : text.substr(dash + 1);
  for (std::string_view part : {lo_s, hi_s}) {
    for (char c : part) {
      if (c < '0' || c > '9') {
        *err = fmt::format("invalid character '{}' in '{}'", c, text);
        return std::nullopt;
      }
    }
  }
  long long lo = lo_s.empty() ? 1 : to_number(lo_s);
  long long hi = hi_s.empty() ? max : to_number(hi_s);
  for (long long v : {lo, hi}) {
    if (v < 1 || v > max) {
      *err = v == LLONG_MAX ? fmt::format("value in '{}' is out of range (1..{})", text, max)
                            : fmt::format("value {} is out of range (1..{}) in '{}'", v, max, text);
      return std::nullopt;
    }
  }
  if (lo > hi) {
    *err = fmt::format("invalid range '{}' (the first value is above the second one)", text);
    return std::nullopt;
  }
  *is_range = dash != std::string_view::npos;
  for (long long i = lo; i <= hi; ++i) out.push_back(static_cast<int>(i));
  return out;
}

bool parse_cpu_list(std::string_view text, std::vector<int>* cpus, std::string* err) {
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t comma = text.find(',', pos);
    std::string_view item = text.substr(pos, comma == std::string_view::npos ? text.npos : comma - pos);
    auto dash = item.find('-');
    std::string_view lo_s = item.substr(0, dash);
    std::string_view hi_s = dash == std::string_view::npos ? lo_s : item.substr(dash + 1);
    if (!all_digits(lo_s) || !all_digits(hi_s)) {
      *err = fmt::format("invalid CPU set '{}' (expected N, N-M or a comma list of them)", text);
      return false;
    }
    long long lo = to_number(lo_s);
    long long hi = to_number(hi_s);
    if (hi > kMaxCpuId || lo > kMaxCpuId) {
      *err = fmt::format("CPU number in '{}' is out of range (0..{})", text, kMaxCpuId);
      return false;
    }
    if (lo > hi) {
      *err = fmt::format("invalid CPU range '{}' (the first CPU is above the second one)", item);
      return false;
    }
    for (long long c = lo; c <= hi; ++c) cpus->push_back(static_cast<int>(c));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return true;
}

bool parse_thread_arg(std::string_view text, std::vector<ThreadSetConfig>* out, std::string* err) {
  if (text.empty()) {
    *err = "expects a thread set such as 'all', '1-4' or '1/odd'";
    return false;
  }
  int kind = 0;  // 1 absolute, 2 relative
  std::vector<ThreadSetConfig> items;
  std::size_t pos = 0;
  while (true) {
    std::size_t comma = text.find(',', pos);
    std::string_view item = text.substr(pos, comma == std::string_view::npos ? text.npos : comma - pos);
    ThreadSetConfig ts;
    std::string_view set = item;
    auto slash = item.find('/');
    if (slash != std::string_view::npos) {
      std::string_view g = item.substr(0, slash);
      if (g.empty()) {
        *err = fmt::format("missing thread group number before '/' in '{}'", text);
        return false;
      }
      if (!all_digits(g)) {
        *err = fmt::format("invalid thread group number '{}' in '{}'", g, text);
        return false;
      }
      long long gv = to_number(g);
      if (gv < 1 || gv > kMaxGroups) {
        *err = fmt::format("thread group number in '{}' is out of range (1..{})", text, kMaxGroups);
        return false;
      }
      ts.relative = true;
      ts.group = static_cast<int>(gv);
      set = item.substr(slash + 1);
    }
    int this_kind = ts.relative ? 2 : 1;
    if (kind != 0 && kind != this_kind) {
      *err = fmt::format("cannot mix absolute and relative thread numbers in '{}' (every "
                         "element of a relative set must repeat its group, e.g. '1/1-4,1/8-10')",
                         text);
      return false;
    }
    kind = this_kind;
    bool range = false;
    std::string why;
    auto ids = parse_number_set(set, ts.relative ? kMaxThreadsPerGroup : kMaxThreads, &range, &why);
    if (!ids) {
      *err = why == "missing value" ? fmt::format("empty thread set in '{}'", text) : why;
      return false;
    }
    ts.ids = std::move(*ids);
    items.push_back(std::move(ts));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  // Sets accumulate over several `thread` options, but one bind line cannot mix both forms.
  if (!out->empty() && out->front().relative != items.front().relative) {
    *err = fmt::format("cannot mix absolute and relative thread numbers on the same line ('{}' "
                       "after a {} set)", text, out->front().relative ? "relative" : "absolute");
    return false;
  }
  for (auto& i : items) out->push_back(std::move(i));
  return true;
}

void require_first_global(const Parser& p, const Line& l) {
  if (p.seen_non_global)
    throw ConfigError{fmt::format("{}'{}' not allowed if a non-global section was previously "
                                  "defined. This parameter must be declared in the first global "
                                  "section", l.where, l.args[0])};
}

void kw_thread_groups(Parser& p, Line& l) {
  require_first_global(p, l);
  p.global.thread_groups = int_arg(l, 1, kMaxGroups);   // the last one wins, as nbthread
}

void kw_thread_group(Parser& p, Line& l) {
  require_first_global(p, l);
  if (l.args.size() < 3)
    throw ConfigError{fmt::format("{}'thread-group' expects a thread group number and one or more "
                                  "thread ranges (N or N-M).", l.where)};
  auto g = parse_strict_int(l.args[1], LLONG_MIN, LLONG_MAX);
  if (!g || *g < 1 || *g > kMaxGroups)
    throw ConfigError{fmt::format("{}'thread-group' : invalid thread group number '{}', expected "
                                  "1..{}.", l.where, l.args[1], kMaxGroups)};
  int group = static_cast<int>(*g);
  std::vector<int> threads;
  std::set<int> seen;
  for (std::size_t i = 2; i < l.args.size(); ++i) {
    std::string_view w = l.args[i];
    std::size_t pos = 0;
    while (true) {
      std::size_t comma = w.find(',', pos);
      std::string_view item = w.substr(pos, comma == std::string_view::npos ? w.npos : comma - pos);
      auto dash = item.find('-');
      std::string_view lo_s = item.substr(0, dash);
      std::string_view hi_s = dash == std::string_view::npos ? lo_s : item.substr(dash + 1);
      if (!all_digits(lo_s) || !all_digits(hi_s))
        throw ConfigError{fmt::format("{}'thread-group {}' : invalid thread range '{}', expected "
                                      "N or N-M.", l.where, group, item)};
      long long lo = to_number(lo_s);
      long long hi = to_number(hi_s);
      if (lo < 1 || hi > kMaxThreads || lo > hi)
        throw ConfigError{fmt::format("{}'thread-group {}' : invalid thread range '{}', thread "
                                      "numbers go from 1 to {}.", l.where, group, item, kMaxThreads)};
      for (long long t = lo; t <= hi; ++t) {
        if (!seen.insert(static_cast<int>(t)).second) {
          p.warning(fmt::format("{}'thread-group {}' : thread {} is assigned twice on the same "
                                "line, ignoring the duplicate.", l.where, group, t));
          continue;
        }
        threads.push_back(static_cast<int>(t));
      }
      if (comma == std::string_view::npos) break;
      pos = comma + 1;
    }
  }
  std::sort(threads.begin(), threads.end());
  for (std::size_t i = 1; i < threads.size(); ++i)
    if (threads[i] != threads[i - 1] + 1)
      throw ConfigError{fmt::format("{}'thread-group {}' assigned sparse threads, only contiguous "
                                    "supported.", l.where, group)};
  auto& lines = p.global.thread_group_lines;
  for (auto it = lines.begin(); it != lines.end();) {
    if (it->group == group) {
      p.warning(fmt::format("{}'thread-group {}' was already defined at [{}:{}], overriding its "
                            "previous definition.", l.where, group, it->loc.file, it->loc.line));
      it = lines.erase(it);
      continue;
    }
    ++it;
  }
  for (auto& other : lines) {
    for (auto it = other.threads.begin(); it != other.threads.end();) {
      if (std::binary_search(threads.begin(), threads.end(), *it)) {
        p.warning(fmt::format("{}'thread-group {}' : thread {} was assigned to thread group {}, "
                              "moving it to group {}.", l.where, group, *it, other.group, group));
        it = other.threads.erase(it);
        continue;
      }
      ++it;
    }
  }
  // A group left without threads by the moves is no longer explicitly placed.
  std::erase_if(lines, [](const ThreadGroupConfig& c) { return c.threads.empty(); });
  ThreadGroupConfig c;
  c.loc = l.loc;
  c.group = group;
  c.threads = std::move(threads);
  lines.push_back(std::move(c));
}

void kw_max_threads_per_group(Parser& p, Line& l) {
  p.global.max_threads_per_group = int_arg(l, 1, kMaxThreadsPerGroup);
}

void kw_thread_hard_limit(Parser& p, Line& l) {
  p.global.thread_hard_limit = int_arg(l, 1, kMaxThreads);
}

void kw_cpu_map(Parser& p, Line& l) {
  if (l.args.size() < 3)
    throw ConfigError{fmt::format("{}'cpu-map' expects [auto:]<thread-group>[/<thread-set>] and a "
                                  "CPU set.", l.where)};
  CpuMapConfig m;
  m.loc = l.loc;
  std::string_view sel = l.args[1];
  if (sel.starts_with("auto:")) {
    m.automatic = true;
    sel.remove_prefix(5);
  }
  std::string_view gpart = sel.substr(0, sel.find('/'));
  std::string err;
  auto groups = parse_number_set(gpart, kMaxThreadsPerGroup, &m.group_range, &err);
  if (!groups)
    throw ConfigError{fmt::format("{}'cpu-map' : invalid thread group set '{}': {}.", l.where,
                                  gpart, err)};
  m.groups = std::move(*groups);
  m.group_range = m.group_range && m.groups.size() > 1;
  if (auto slash = sel.find('/'); slash != std::string_view::npos) {
    std::string_view tpart = sel.substr(slash + 1);
    auto threads = parse_number_set(tpart, kMaxThreadsPerGroup, &m.thread_range, &err);
    if (!threads)
      throw ConfigError{fmt::format("{}'cpu-map' : invalid thread set '{}': {}.", l.where, tpart, err)};
    m.threads = std::move(*threads);
    m.thread_range = m.thread_range && m.threads.size() > 1;
  }
  for (std::size_t i = 2; i < l.args.size(); ++i) {
    if (!parse_cpu_list(l.args[i], &m.cpus, &err))
      throw ConfigError{fmt::format("{}'cpu-map' : {}.", l.where, err)};
  }
  std::sort(m.cpus.begin(), m.cpus.end());
  m.cpus.erase(std::unique(m.cpus.begin(), m.cpus.end()), m.cpus.end());
  if (m.automatic) {
    // sluice supports the unambiguous forms only (HAProxy also takes some that its own
    // documentation calls invalid): one group with a range of threads, or a range of groups
    // (each group one CPU); sizes must match exactly.
    if (m.group_range && !m.threads.empty())
      throw ConfigError{fmt::format("{}'cpu-map' : 'auto:' supports either a single thread group "
                                    "with a thread range, or a range of thread groups without "
                                    "threads, not '{}'.", l.where, l.args[1])};
    std::size_t n = m.threads.empty() ? m.groups.size() : m.threads.size();
    if (n != m.cpus.size())
      throw ConfigError{fmt::format("{}'cpu-map' : the {} set '{}' ({}) and the CPU set ({}) "
                                    "must have the same size to be bound automatically.", l.where,
                                    m.threads.empty() ? "thread group" : "thread", l.args[1], n,
                                    m.cpus.size())};
  }
  p.global.cpu_maps.push_back(std::move(m));
}

void kw_cpu_policy(Parser& p, Line& l) {
  std::string v = l.args.size() > 1 ? l.args[1] : "";
  using P = GlobalConfig::CpuPolicy;
  static constexpr std::string_view kLater[] = {
      "efficiency", "resource", "group-by-cluster", "group-by-2-clusters",
      "group-by-3-clusters", "group-by-4-clusters", "group-by-2-ccx", "group-by-3-ccx",
      "group-by-4-ccx", "first-usable-node"};
  if (v == "none") {
    p.global.cpu_policy = P::kNone;
  } else if (v == "group-by-ccx") {
    p.global.cpu_policy = P::kGroupByCcx;
  } else if (v == "performance") {
    p.global.cpu_policy = P::kPerformance;
  } else if (std::find(std::begin(kLater), std::end(kLater), v) != std::end(kLater)) {
    throw ConfigError{fmt::format("{}'cpu-policy {}' is not supported by sluice yet (supported: "
                                  "'none', 'group-by-ccx' and 'performance').", l.where, v)};
  } else {
    throw ConfigError{fmt::format("{}'cpu-policy' expects 'none', 'group-by-ccx' or 'performance' "
                                  "(got '{}').", l.where, v)};
  }
  if (l.args.size() > 2 && l.args[2] == "threads-per-core")
    throw ConfigError{fmt::format("{}'cpu-policy' : 'threads-per-core' is not supported by sluice "
                                  "yet.", l.where)};
  no_extra(l, 2);
}

void kw_default_shards(Parser& p, Line& l) {
  std::string v = l.args.size() > 1 ? l.args[1] : "";
  ShardsConfig s;
  if (v == "by-process") {
    s.kind = ShardsConfig::Kind::kByProcess;
  } else if (v == "by-group") {
    s.kind = ShardsConfig::Kind::kByGroup;
  } else if (v == "by-thread") {
    s.kind = ShardsConfig::Kind::kByThread;
  } else {
    throw ConfigError{fmt::format("{}'{}' expects either 'by-process', 'by-group', or 'by-thread' "
                                  "but got '{}'.", l.where, l.args[0], v)};
  }
  no_extra(l, 2);
  // Copied into each bind line when that line is created, so this only affects the bind
  // lines that follow.
  p.global.default_shards = s;
}

void kw_multi_queue(Parser& p, Line& l) {
  std::string v = l.args.size() > 1 ? l.args[1] : "";
  using M = GlobalConfig::MultiQueue;
  if (v == "on") {
    p.global.multi_queue = M::kOn;
  } else if (v == "fair") {
    p.global.multi_queue = M::kFair;
  } else if (v == "off") {
    p.global.multi_queue = M::kOff;
  } else {
    throw ConfigError{fmt::format("{}'{}' expects 'on', 'fair' or 'off' but got '{}'.", l.where,
                                  l.args[0], v)};
  }
  no_extra(l, 2);
}

void kw_reuseport_steering(Parser& p, Line& l) {
  std::string v = l.args.size() > 1 ? l.args[1] : "";
  using S = GlobalConfig::Steering;
  if (v == "hash") {
    p.global.reuseport_steering = S::kHash;
  } else if (v == "cpu") {
    p.global.reuseport_steering = S::kCpu;
  } else {
    throw ConfigError{fmt::format("{}'{}' expects 'hash' or 'cpu' but got '{}'.", l.where,
                                  l.args[0], v)};
  }
  no_extra(l, 2);
}

void kw_noreuseport(Parser& p, Line& l) {
  no_extra(l, 1);
  p.global.noreuseport = true;
}

void parse_bind_thread(const std::string& head, const std::string& value, bool has_value,
                       BindConfig* b) {
  if (!has_value)
    throw ConfigError{head + " : 'thread' : missing thread set (e.g. 'all', '1-4', '2/1-8')."};
  std::string err;
  if (!parse_thread_arg(value, &b->threads, &err))
    throw ConfigError{fmt::format("{} : 'thread' : {}.", head, err)};
}

void parse_bind_shards(const std::string& head, const std::string& value, bool has_value,
                       BindConfig* b) {
  if (!has_value) throw ConfigError{head + " : 'shards' : missing value."};
  if (value == "by-thread") {
    b->shards = {ShardsConfig::Kind::kByThread, 1};
    return;
  }
  if (value == "by-group") {
    b->shards = {ShardsConfig::Kind::kByGroup, 1};
    return;
  }
  // Strict integer (HAProxy reads leading digits only: `4x` = 4 there, an error here).
  auto n = parse_strict_int(value, LLONG_MIN, LLONG_MAX);
  if (!n)
    throw ConfigError{fmt::format("{} : 'shards' : invalid value '{}', allowed range is 1..{} or "
                                  "'by-thread' or 'by-group'.", head, value, kMaxShards)};
  if (*n < 1 || *n > kMaxShards)
    throw ConfigError{fmt::format("{} : 'shards' : invalid value {}, allowed range is 1..{} or "
                                  "'by-thread' or 'by-group'.", head, *n, kMaxShards)};
  b->shards = {ShardsConfig::Kind::kNumber, static_cast<int>(*n)};
}

void parse_bind_id(const std::string& head, const std::string& value, bool has_value,
                   BindConfig* b) {
  if (!has_value) throw ConfigError{head + " : 'id' : expects an integer argument."};
  auto n = parse_strict_int(value, LLONG_MIN, LLONG_MAX);
  if (!n)
    throw ConfigError{fmt::format("{} : 'id' : expects an integer argument, got '{}'.", head, value)};
  if (*n <= 0 || *n > INT_MAX) throw ConfigError{head + " : 'id' : custom id has to be > 0."};
  b->id = static_cast<int>(*n);
}

}  // namespace sluice::config

#pragma once
// Threads, thread groups and CPU binding, decided as HAProxy does at boot.
// Pure planning: reads a CPU topology (from a sysfs root that tests replace) and the thread
// settings of the configuration, and decides how many threads and groups run, which thread
// belongs to which group, and which CPUs each thread may run on. Main thread only.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace sluice::core {

inline constexpr int kMaxThreads = 1024;
inline constexpr int kMaxGroups = 32;
inline constexpr int kMaxThreadsPerGroupHard = 64;
inline constexpr int kDefaultMaxThreadsPerGroup = 16;

// One online CPU as read from sysfs.
struct CpuInfo {
  int id = 0;
  int l3_id = -1;        // CCX: CPUs sharing an L3 (shared_cpu_list of the level-3 cache)
  int core_id = -1;      // from thread_siblings_list
  int smt_index = 0;     // position among its siblings
  int package_id = -1;
  int cluster_id = -1;
  int numa_node = -1;
  int capacity = 0;      // cpu_capacity, else scaling_max_freq (MHz, x1.5 if SMT), else 0
};

struct Topology {
  std::vector<CpuInfo> cpus;   // online CPUs the process may use, ascending id
  bool has_cache_info = false;
};

// Reads `<root>/devices/system/cpu/...` and `<root>/devices/system/node/...`. `root` is "/sys"
// normally; tests pass a fake tree. `allowed` restricts to the CPUs of the process's affinity
// mask (empty = no restriction). Missing files are not errors: a machine without cache
// information gives CPUs without l3_id (one group).
Topology read_topology(const std::string& sysfs_root, const std::vector<int>& allowed);

// The kernel's CPU list format ("0-3,8,10-11") to ascending CPU ids, and back. Any thread.
std::vector<int> parse_cpu_list_text(const std::string& text);
std::string format_cpu_list(const std::vector<int>& cpus);

// The CPUs the calling process may run on (sched_getaffinity).
std::vector<int> process_affinity();

enum class CpuPolicy { kDefault, kNone, kGroupByCcx, kPerformance };

// `cpu-map [auto:]<groups>[/<threads>] <cpuset>...` after parsing.
struct CpuMapLine {
  bool automatic = false;
  std::vector<int> groups;       // 1-based group ids selected
  std::vector<int> threads;      // 1-based local thread ids selected (empty = all)
  std::vector<int> cpus;         // CPU set
  // `auto:` supports a set of groups without threads (group k -> k-th CPU) or one group with
  // threads (thread k -> k-th CPU), with exactly as many CPUs (HAProxy accepts more forms).
  bool group_range = false;
  bool thread_range = false;
  std::string where;             // "parsing [f.cfg:3] : " for messages
};

// `thread-group <g> <range>...`
struct ThreadGroupLine {
  int group = 0;                 // 1-based
  std::vector<int> threads;      // global thread ids, 1-based
  std::string where;
};

struct ThreadSettings {
  int nbthread = 0;                  // 0 = not set
  int thread_groups = 0;             // 0 = not set
  int max_threads_per_group = 0;     // 0 = not set (default 16)
  int thread_hard_limit = 0;         // 0 = not set
  std::vector<ThreadGroupLine> thread_group_lines;
  std::vector<CpuMapLine> cpu_maps;
  CpuPolicy cpu_policy = CpuPolicy::kDefault;
  bool cpu_policy_explicit = false;
};

struct GroupPlan {
  int id = 0;            // 1-based
  int first_thread = 0;  // 1-based global id of its first thread
  int count = 0;
  std::vector<int> cpus; // CPUs the group's threads may use (empty = no binding)
};

struct ThreadPlan {
  int nbthread = 1;
  std::vector<GroupPlan> groups;
  // Per thread (index = global id - 1): the group (1-based), the local id (1-based) and the
  // CPUs it is bound to (empty = not bound).
  std::vector<int> thread_group;
  std::vector<int> thread_local_id;
  std::vector<std::vector<int>> thread_cpus;
  // Messages for the operator (HAProxy's texts where they are known).
  std::vector<std::string> notices;
  std::vector<std::string> warnings;
};

// Decides the plan. An error (e.g. "More unassigned thread-groups (3) than threads (2)")
// is a start-up error. The policy (default `performance`) runs only without nbthread,
// thread-groups, thread-group and cpu-map; without cache information all CPUs are one domain
// and threads stay unbound. A CPU set equal to every usable CPU is reported as empty (no
// binding needed).
base::Result<ThreadPlan> plan_threads(const ThreadSettings& settings, const Topology& topology);

// Pins the calling thread to `cpus` (sched_setaffinity). No-op for an empty set.
bool bind_current_thread(const std::vector<int>& cpus);

}  // namespace sluice::core

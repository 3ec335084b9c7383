// CPU topology from sysfs (/sys/devices/system, read as HAProxy reads it) and thread affinity.
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/thread_plan.h"

namespace sluice::core {

namespace {

namespace fs = std::filesystem;

// Large enough for any machine sluice targets; cpu_set_t alone stops at 1024 CPUs.
constexpr int kMaxCpus = 4096;

std::optional<std::string> read_line(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return std::nullopt;
  std::string s;
  std::getline(in, s);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::optional<long long> read_int(const fs::path& p) {
  auto s = read_line(p);
  if (!s || s->empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s->c_str(), &end, 10);
  if (errno != 0 || end == s->c_str()) return std::nullopt;
  return v;
}

}  // namespace

// The kernel's list format ("0-3,8,10-11"); an unparsable item ends the list.
std::vector<int> parse_cpu_list_text(const std::string& text) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    char* end = nullptr;
    long lo = std::strtol(item.c_str(), &end, 10);
    if (end == item.c_str() || lo < 0) break;
    long hi = lo;
    if (*end == '-') {
      const char* s = end + 1;
      hi = std::strtol(s, &end, 10);
      if (end == s) break;
    }
    if (*end != '\0' || hi < lo || hi >= kMaxCpus) break;
    for (long c = lo; c <= hi; ++c) out.push_back(static_cast<int>(c));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Topology read_topology(const std::string& sysfs_root, const std::vector<int>& allowed) {
  Topology topo;
  fs::path cpu_dir = fs::path(sysfs_root) / "devices/system/cpu";
  std::vector<int> online;
  if (auto s = read_line(cpu_dir / "online")) online = parse_cpu_list_text(*s);
  if (online.empty()) {
    // No online list: every cpuN directory, else the affinity mask, else nothing.
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(cpu_dir, ec)) {
      std::string n = e.path().filename().string();
      if (n.size() > 3 && n.starts_with("cpu") &&
          n.find_first_not_of("0123456789", 3) == std::string::npos)
        online.push_back(std::atoi(n.c_str() + 3));
    }
    if (online.empty()) online = allowed;
    std::sort(online.begin(), online.end());
  }
  if (!allowed.empty()) {
    std::vector<int> kept;
    std::set_intersection(online.begin(), online.end(), allowed.begin(), allowed.end(),
                          std::back_inserter(kept));
    online = std::move(kept);
  }

  // Ids are given in order of first appearance of each distinct CPU list, so they are stable
  // and small whatever the kernel numbering.
  std::map<std::vector<int>, int> l3_ids, core_ids, pkg_ids, cluster_ids;
  auto id_of = [](std::map<std::vector<int>, int>& m, const std::vector<int>& key) {
    auto it = m.find(key);
    if (it != m.end()) return it->second;
    int id = static_cast<int>(m.size());
    m.emplace(key, id);
    return id;
  };

  for (int cpu : online) {
    CpuInfo c;
    c.id = cpu;
    fs::path dir = cpu_dir / ("cpu" + std::to_string(cpu));
    // Caches: index0..index9, skipping instruction caches; the L3 shared list is the CCX.
    for (int i = 0; i < 10; ++i) {
      fs::path idx = dir / "cache" / ("index" + std::to_string(i));
      auto type = read_line(idx / "type");
      auto level = read_int(idx / "level");
      if (!type || !level) continue;
      topo.has_cache_info = true;
      if (*type == "Instruction" || *level != 3) continue;
      auto shared = read_line(idx / "shared_cpu_list");
      if (!shared) continue;
      auto list = parse_cpu_list_text(*shared);
      if (!list.empty()) c.l3_id = id_of(l3_ids, list);
    }
    fs::path t = dir / "topology";
    std::vector<int> siblings;
    if (auto s = read_line(t / "thread_siblings_list")) siblings = parse_cpu_list_text(*s);
    if (!siblings.empty()) {
      c.core_id = id_of(core_ids, siblings);
      c.smt_index = static_cast<int>(std::find(siblings.begin(), siblings.end(), cpu) - siblings.begin());
      if (c.smt_index >= static_cast<int>(siblings.size())) c.smt_index = 0;
    }
    std::vector<int> core_sibs;
    if (auto s = read_line(t / "core_siblings_list")) core_sibs = parse_cpu_list_text(*s);
    std::vector<int> pkg;
    if (auto s = read_line(t / "package_cpus_list")) pkg = parse_cpu_list_text(*s);
    if (pkg.empty()) pkg = core_sibs;
    if (!pkg.empty()) {
      c.package_id = id_of(pkg_ids, pkg);
    } else if (auto v = read_int(t / "physical_package_id"); v && *v >= 0) {
      c.package_id = static_cast<int>(*v);
    }
    std::vector<int> cluster;
    if (auto s = read_line(t / "cluster_cpus_list")) cluster = parse_cpu_list_text(*s);
    if (cluster.empty()) cluster = core_sibs;
    // A one-CPU cluster or one equal to the SMT siblings says nothing about clusters.
    if (cluster.size() > 1 && cluster != siblings) c.cluster_id = id_of(cluster_ids, cluster);
    if (auto v = read_int(dir / "cpu_capacity"); v && *v > 0) {
      c.capacity = static_cast<int>(*v);
    } else if (auto f = read_int(dir / "cpufreq/scaling_max_freq"); f && *f > 0) {
      long long mhz = *f / 1000;
      // An SMT-capable core delivers more than its frequency says once both threads run.
      if (siblings.size() > 1) mhz = mhz * 3 / 2;
      c.capacity = static_cast<int>(mhz);
    }
    topo.cpus.push_back(c);
  }

  std::error_code ec;
  fs::path node_dir = fs::path(sysfs_root) / "devices/system/node";
  for (const auto& e : fs::directory_iterator(node_dir, ec)) {
    std::string n = e.path().filename().string();
    if (n.size() <= 4 || !n.starts_with("node") ||
        n.find_first_not_of("0123456789", 4) != std::string::npos)
      continue;
    int node = std::atoi(n.c_str() + 4);
    auto s = read_line(e.path() / "cpulist");
    if (!s) continue;
    for (int cpu : parse_cpu_list_text(*s))
      for (auto& c : topo.cpus)
        if (c.id == cpu) c.numa_node = node;
  }
  return topo;
}

std::vector<int> process_affinity() {
  std::vector<int> out;
  for (int n = 1024; n <= kMaxCpus; n *= 2) {
    cpu_set_t* set = CPU_ALLOC(n);
    if (!set) return out;
    std::size_t size = CPU_ALLOC_SIZE(n);
    CPU_ZERO_S(size, set);
    if (sched_getaffinity(0, size, set) == 0) {
      for (int c = 0; c < n; ++c)
        if (CPU_ISSET_S(c, size, set)) out.push_back(c);
      CPU_FREE(set);
      return out;
    }
    int err = errno;
    CPU_FREE(set);
    if (err != EINVAL) break;   // EINVAL: the kernel's mask is larger, retry bigger
  }
  return out;
}

bool bind_current_thread(const std::vector<int>& cpus) {
  if (cpus.empty()) return true;
  int max = *std::max_element(cpus.begin(), cpus.end()) + 1;
  cpu_set_t* set = CPU_ALLOC(max);
  if (!set) return false;
  std::size_t size = CPU_ALLOC_SIZE(max);
  CPU_ZERO_S(size, set);
  for (int c : cpus)
    if (c >= 0) CPU_SET_S(c, size, set);
  // pthread_setaffinity_np acts on the calling thread only (sched_setaffinity(0) would too on
  // Linux, where 0 is the calling task, not the process).
  int rc = pthread_setaffinity_np(pthread_self(), size, set);
  CPU_FREE(set);
  return rc == 0;
}

}  // namespace sluice::core

#include "net/reuseport_steering.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

namespace sluice::net {

namespace {

// The kernel's BPF_STMT/BPF_JUMP macros narrow in a braced initializer, which C++ rejects for
// the negative ancillary offset; these spell the conversions out.
sock_filter stmt(uint16_t code, uint32_t k) { return sock_filter{code, 0, 0, k}; }
sock_filter jump(uint16_t code, uint32_t k, uint8_t jt, uint8_t jf) {
  return sock_filter{code, jt, jf, k};
}

struct Run {
  int last_cpu;   // inclusive; runs are contiguous from CPU 0
  int shard;      // -1 = fallback
};

}  // namespace

std::vector<sock_filter> build_cpu_steering_program(const std::vector<int>& cpu_to_shard) {
  int max_shard = -1;
  for (int s : cpu_to_shard) max_shard = std::max(max_shard, s);
  const uint32_t nshards = max_shard < 0 ? 1 : static_cast<uint32_t>(max_shard) + 1;

  // Merge CPUs into runs of equal shard. CPUs beyond the vector (hot-plugged later, or a
  // map built from a smaller topology) are one last fallback run.
  std::vector<Run> runs;
  for (size_t cpu = 0; cpu < cpu_to_shard.size(); ++cpu) {
    const int s = cpu_to_shard[cpu] < 0 ? -1 : cpu_to_shard[cpu];
    if (!runs.empty() && runs.back().shard == s) {
      runs.back().last_cpu = static_cast<int>(cpu);
    } else {
      runs.push_back({static_cast<int>(cpu), s});
    }
  }
  if (runs.empty() || runs.back().shard != -1) runs.push_back({-1, -1});   // open-ended

  std::vector<sock_filter> prog;
  // A = the CPU running this program. For a SYN that is the CPU of the softirq that received
  // it, i.e. where RSS/RPS steered the flow (for loopback, the sender's CPU): the CPU whose
  // caches the connection's packets will keep warming, which is what we want to match.
  prog.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, static_cast<uint32_t>(SKF_AD_OFF + SKF_AD_CPU)));
  for (size_t i = 0; i < runs.size(); ++i) {
    const Run& r = runs[i];
    const bool last = i + 1 == runs.size();
    const uint8_t body = r.shard < 0 ? 2 : 1;
    // Runs ascend, so "A > last_cpu" means "a later run": skip this run's return.
    if (!last) {
      prog.push_back(jump(BPF_JMP | BPF_JGT | BPF_K, static_cast<uint32_t>(r.last_cpu), body, 0));
    }
    if (r.shard < 0) {
      // A still holds the CPU: jumps do not touch it. nshards >= 1, so the verifier's
      // division-by-zero check is satisfied.
      prog.push_back(stmt(BPF_ALU | BPF_MOD | BPF_K, nshards));
      prog.push_back(stmt(BPF_RET | BPF_A, 0));
    } else {
      prog.push_back(stmt(BPF_RET | BPF_K, static_cast<uint32_t>(r.shard)));
    }
  }
  return prog;
}

std::vector<int> cpu_to_shard_map(const ShardPlanResult& shards, const core::ThreadPlan& plan) {
  std::vector<int> map;
  auto claim = [&map](int cpu, int shard) {
    if (cpu < 0) return;
    if (static_cast<size_t>(cpu) >= map.size()) map.resize(static_cast<size_t>(cpu) + 1, -2);
    int& slot = map[static_cast<size_t>(cpu)];
    if (slot == -2) {
      slot = shard;
    } else if (slot != shard) {
      slot = -1;   // contested: let the fallback spread it
    }
  };
  for (size_t s = 0; s < shards.shards.size(); ++s) {
    for (int tid : shards.shards[s].threads) {
      const size_t t = static_cast<size_t>(tid - 1);
      if (t < plan.thread_cpus.size() && !plan.thread_cpus[t].empty()) {
        for (int cpu : plan.thread_cpus[t]) claim(cpu, static_cast<int>(s));
        continue;
      }
      for (const core::GroupPlan& g : plan.groups) {
        if (tid >= g.first_thread && tid < g.first_thread + g.count) {
          for (int cpu : g.cpus) claim(cpu, static_cast<int>(s));
        }
      }
    }
  }
  for (int& slot : map) {
    if (slot == -2) slot = -1;   // no thread runs there
  }
  return map;
}

base::Result<void> attach_cpu_steering(int fd, const std::vector<sock_filter>& prog) {
  // Kernel behaviour relied on (net/core/sock_reuseport.c, reuseport_select_sock): the value
  // the program returns indexes reuse->socks[], which holds the group's sockets in the order
  // they joined it; a TCP socket joins at listen() (inet_reuseport_add_sock from __inet_hash),
  // so index i is the i-th shard to listen(). An index >= the number of sockets falls back to
  // the kernel's 4-tuple hash. Two things break the order and are why steering is rebuilt and
  // re-attached after any change of the group: closing a member moves the last socket into its
  // slot, and during a reload without FD transfer the old process's sockets sit in front of
  // the new ones (the last attach, from the newest process, wins for the whole group).
  sock_fprog fprog{};
  fprog.len = static_cast<unsigned short>(prog.size());
  fprog.filter = const_cast<sock_filter*>(prog.data());
  if (prog.empty() || prog.size() > BPF_MAXINSNS) {
    return base::Error::from_errno("cannot attach reuseport CPU steering program", EINVAL);
  }
  if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &fprog, sizeof fprog) != 0) {
    const int err = errno;
    return base::Error::from_errno("cannot attach reuseport CPU steering program", err);
  }
  return {};
}

}  // namespace sluice::net

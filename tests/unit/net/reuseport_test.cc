// `tune.listener.reuseport-steering cpu`: the generated classic BPF program, run here through a
// small interpreter, and once for real on a loopback reuseport group.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <thread>
#include <vector>

#include "net/reuseport_steering.h"
#include "net/shard_plan.h"

namespace sluice::net {
namespace {

constexpr uint32_t kNoResult = 0xdeadbeef;

// Runs `prog` as the kernel would for a packet processed on `cpu`. Only the opcodes the
// generator is meant to emit are known; anything else fails the test, so a change in the
// generator cannot silently rely on an instruction this interpreter gets wrong.
uint32_t run(const std::vector<sock_filter>& prog, uint32_t cpu) {
  uint32_t a = 0;
  size_t pc = 0;
  for (size_t steps = 0; pc < prog.size() && steps <= prog.size(); ++steps) {
    const sock_filter& in = prog[pc];
    switch (in.code) {
      case BPF_LD | BPF_W | BPF_ABS:
        if (in.k != static_cast<uint32_t>(SKF_AD_OFF + SKF_AD_CPU)) {
          ADD_FAILURE() << "load from unexpected offset " << in.k;
          return kNoResult;
        }
        a = cpu;
        ++pc;
        break;
      case BPF_JMP | BPF_JGT | BPF_K:
        pc += 1 + (a > in.k ? in.jt : in.jf);
        break;
      case BPF_JMP | BPF_JGE | BPF_K:
        pc += 1 + (a >= in.k ? in.jt : in.jf);
        break;
      case BPF_JMP | BPF_JA:
        pc += 1 + in.k;
        break;
      case BPF_ALU | BPF_MOD | BPF_K:
        if (in.k == 0) {
          ADD_FAILURE() << "modulo by zero";
          return kNoResult;
        }
        a %= in.k;
        ++pc;
        break;
      case BPF_RET | BPF_K:
        return in.k;
      case BPF_RET | BPF_A:
        return a;
      default:
        ADD_FAILURE() << "unexpected opcode 0x" << std::hex << in.code << " at " << pc;
        return kNoResult;
    }
  }
  ADD_FAILURE() << "program fell off its end (or looped) for cpu " << cpu;
  return kNoResult;
}

TEST(CpuSteeringProgram, TwoGroupsOfOneCpu) {
  auto prog = build_cpu_steering_program({0, 1});
  EXPECT_EQ(run(prog, 0), 0u);
  EXPECT_EQ(run(prog, 1), 1u);
  // CPUs the map does not know (hot-plugged) spread as cpu % 2.
  EXPECT_EQ(run(prog, 2), 0u);
  EXPECT_EQ(run(prog, 5), 1u);
}

TEST(CpuSteeringProgram, EightCcxOfSixCpusIsCompact) {
  std::vector<int> map;
  for (int cpu = 0; cpu < 48; ++cpu) map.push_back(cpu / 6);
  auto prog = build_cpu_steering_program(map);
  for (uint32_t cpu = 0; cpu < 48; ++cpu) EXPECT_EQ(run(prog, cpu), cpu / 6) << cpu;
  for (uint32_t cpu = 48; cpu < 200; ++cpu) EXPECT_EQ(run(prog, cpu), cpu % 8) << cpu;
  // One load, a compare and a return per CCX, and the two-instruction fallback: not 48+.
  EXPECT_LE(prog.size(), 19u);
}

TEST(CpuSteeringProgram, UnownedCpusFallBackToModulo) {
  // CPU 0 and 5-6 belong to no group (isolated, or dropped by cpu-set); 3 shards.
  const std::vector<int> map = {-1, 0, 0, 1, 1, -1, -1, 2, 2};
  auto prog = build_cpu_steering_program(map);
  for (uint32_t cpu = 0; cpu < map.size(); ++cpu) {
    const uint32_t want = map[cpu] < 0 ? cpu % 3 : static_cast<uint32_t>(map[cpu]);
    EXPECT_EQ(run(prog, cpu), want) << cpu;
  }
  EXPECT_EQ(run(prog, 9), 0u);
  EXPECT_EQ(run(prog, 1000), 1000u % 3);
}

TEST(CpuSteeringProgram, InterleavedMapping) {
  // SMT siblings numbered n apart (0/8, 1/9...) with groups per core half: worst case, one run
  // per CPU, still correct.
  std::vector<int> map;
  for (int cpu = 0; cpu < 16; ++cpu) map.push_back(cpu % 2);
  auto prog = build_cpu_steering_program(map);
  for (uint32_t cpu = 0; cpu < 64; ++cpu) EXPECT_EQ(run(prog, cpu), cpu % 2) << cpu;
}

TEST(CpuSteeringProgram, EmptyOrUnownedMapAlwaysGivesShardZero) {
  for (const auto& map : {std::vector<int>{}, std::vector<int>{-1, -1, -1}}) {
    auto prog = build_cpu_steering_program(map);
    for (uint32_t cpu = 0; cpu < 8; ++cpu) EXPECT_EQ(run(prog, cpu), 0u);
  }
}

TEST(CpuSteeringProgram, SingleShardAlwaysGivesZero) {
  auto prog = build_cpu_steering_program(std::vector<int>(12, 0));
  for (uint32_t cpu = 0; cpu < 40; ++cpu) EXPECT_EQ(run(prog, cpu), 0u);
}

// ---- cpu_to_shard_map ------------------------------------------------------------------------

core::ThreadPlan two_ccx_plan(bool bind_each_thread) {
  core::ThreadPlan plan;
  plan.nbthread = 12;
  for (int g = 0; g < 2; ++g) {
    core::GroupPlan gp;
    gp.id = g + 1;
    gp.first_thread = g * 6 + 1;
    gp.count = 6;
    for (int c = 0; c < 6; ++c) gp.cpus.push_back(g * 6 + c);
    plan.groups.push_back(gp);
  }
  for (int t = 0; t < 12; ++t) {
    plan.thread_group.push_back(t / 6 + 1);
    plan.thread_local_id.push_back(t % 6 + 1);
    plan.thread_cpus.push_back(bind_each_thread ? std::vector<int>{t}
                                                : plan.groups[t / 6].cpus);
  }
  return plan;
}

TEST(CpuToShardMap, ByGroupMapsEachCcxToItsShard) {
  auto plan = two_ccx_plan(false);
  ShardsSetting by_group;
  auto shards = plan_shards(by_group, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, plan, true,
                            "frontend 'fe'", "tcpv4");
  ASSERT_EQ(shards.shards.size(), 2u);
  EXPECT_EQ(cpu_to_shard_map(shards, plan),
            (std::vector<int>{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}));
}

TEST(CpuToShardMap, ContestedCpusAreLeftToTheFallback) {
  auto plan = two_ccx_plan(false);
  ShardsSetting by_thread;
  by_thread.kind = ShardsSetting::Kind::kByThread;
  auto shards = plan_shards(by_thread, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, plan, true,
                            "frontend 'fe'", "tcpv4");
  EXPECT_EQ(cpu_to_shard_map(shards, plan), std::vector<int>(12, -1));
}

TEST(CpuToShardMap, ThreadsBoundPerCpuGiveOneShardPerCpu) {
  auto plan = two_ccx_plan(true);
  ShardsSetting by_thread;
  by_thread.kind = ShardsSetting::Kind::kByThread;
  auto shards = plan_shards(by_thread, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, plan, true,
                            "frontend 'fe'", "tcpv4");
  EXPECT_EQ(cpu_to_shard_map(shards, plan),
            (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
}

TEST(CpuToShardMap, CpusOfGroupsOutsideTheThreadSetAreUnowned) {
  auto plan = two_ccx_plan(false);
  ShardsSetting by_group;
  auto shards = plan_shards(by_group, {7, 8, 9, 10, 11, 12}, plan, true, "frontend 'fe'",
                            "tcpv4");
  EXPECT_EQ(cpu_to_shard_map(shards, plan),
            (std::vector<int>{-1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0}));
}

// ---- the kernel ------------------------------------------------------------------------------

int reuseport_listener(sockaddr_in* addr) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0 ||
      bind(fd, reinterpret_cast<sockaddr*>(addr), sizeof *addr) != 0) {
    close(fd);
    return -1;
  }
  socklen_t len = sizeof *addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(addr), &len);
  return fd;
}

sockaddr_in loopback_any_port() {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

// The kernel's verifier accepts what the generator emits (the interpreter above would not
// notice e.g. a jump offset the kernel rejects).
TEST(CpuSteeringKernel, KernelAcceptsGeneratedPrograms) {
  sockaddr_in addr = loopback_any_port();
  int fd = reuseport_listener(&addr);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(listen(fd, 16), 0);
  std::vector<int> ccx;
  for (int cpu = 0; cpu < 48; ++cpu) ccx.push_back(cpu / 6);
  std::vector<int> alternating;
  for (int cpu = 0; cpu < 256; ++cpu) alternating.push_back(cpu % 2);
  for (const auto& map : {ccx, alternating, std::vector<int>{}, std::vector<int>{-1, 0, -1}}) {
    auto r = attach_cpu_steering(fd, build_cpu_steering_program(map));
    if (!r.ok() && r.error().sys_errno == EPERM) {
      close(fd);
      GTEST_SKIP() << r.error().message;
    }
    EXPECT_TRUE(r.ok()) << r.error().message;
  }
  close(fd);
}

TEST(CpuSteeringKernel, AttachFailureCarriesErrno) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  // Not bound with SO_REUSEPORT: no group to attach to.
  auto r = attach_cpu_steering(fd, build_cpu_steering_program({0, 1}));
  close(fd);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().sys_errno, 0);
  EXPECT_NE(r.error().message.find("cannot attach reuseport CPU steering program: "),
            std::string::npos);
}

// Connects from a thread pinned to `cpu`; the SYN is then processed on that CPU (loopback
// delivers in the sender's softirq unless RPS is configured on lo). Returns the client fd.
int connect_from_cpu(int cpu, const sockaddr_in& to) {
  int client = -1;
  std::thread t([&] {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) return;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return;
    if (connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) {
      close(fd);
      return;
    }
    client = fd;
  });
  t.join();
  return client;
}

// Pending connection on `fd` within a deadline (no sleeps: poll is the condition).
bool accept_pending(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, timeout_ms) != 1) return false;
  int c = accept4(fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (c < 0) return false;
  close(c);
  return true;
}

TEST(CpuSteeringKernel, ConnectionGoesToTheShardOfTheSynCpu) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  int even = -1;
  int odd = -1;
  int max_cpu = -1;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &allowed)) continue;
    max_cpu = c;
    if (c % 2 == 0 && even < 0) even = c;
    if (c % 2 == 1 && odd < 0) odd = c;
  }
  if (even < 0 || odd < 0) GTEST_SKIP() << "needs an even and an odd CPU";

  sockaddr_in addr = loopback_any_port();
  int socks[2];
  socks[0] = reuseport_listener(&addr);
  ASSERT_GE(socks[0], 0);
  socks[1] = reuseport_listener(&addr);   // same port, now known
  ASSERT_GE(socks[1], 0);
  // listen() order is group order: socks[0] is index 0, socks[1] index 1.
  ASSERT_EQ(listen(socks[0], 16), 0);
  ASSERT_EQ(listen(socks[1], 16), 0);

  std::vector<int> map;
  for (int c = 0; c <= max_cpu; ++c) map.push_back(c % 2);
  auto r = attach_cpu_steering(socks[0], build_cpu_steering_program(map));
  if (!r.ok() && r.error().sys_errno == EPERM) {
    close(socks[0]);
    close(socks[1]);
    GTEST_SKIP() << r.error().message;
  }
  ASSERT_TRUE(r.ok()) << r.error().message;

  for (int round = 0; round < 4; ++round) {
    for (int cpu : {even, odd}) {
      const int want = cpu % 2;
      int client = connect_from_cpu(cpu, addr);
      ASSERT_GE(client, 0) << "connect from CPU " << cpu;
      EXPECT_TRUE(accept_pending(socks[want], 2000)) << "CPU " << cpu << " -> socket " << want;
      // The connection is accounted for on socks[want], so the other socket's queue is final.
      EXPECT_FALSE(accept_pending(socks[1 - want], 0)) << "CPU " << cpu;
      close(client);
    }
  }
  close(socks[0]);
  close(socks[1]);
}

}  // namespace
}  // namespace sluice::net

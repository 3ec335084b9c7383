#pragma once
// `tune.listener.reuseport-steering cpu`: a classic BPF program attached to a listening
// address's SO_REUSEPORT group that picks, for each new connection, the shard whose thread
// group owns the CPU processing the connection's SYN. With one group per CCX (by-group on
// group-by-ccx) the connection is then accepted and served in the cache domain where the
// kernel already touched it, instead of wherever the 4-tuple hash sends it.
// Main thread only (start-up), like the listeners it configures.
#include <linux/filter.h>

#include <vector>

#include "base/result.h"
#include "core/thread_plan.h"
#include "net/shard_plan.h"

namespace sluice::net {

// Builds the program. `cpu_to_shard[cpu]` is the index of the shard (= the socket's index in
// the reuseport group, see attach_cpu_steering) for that CPU, or -1 for a CPU that no group
// owns. CPUs that are -1 or beyond the vector get `cpu % nshards`, where nshards is the highest
// index in the vector + 1, so unowned CPUs still spread over every shard (all -1 or empty:
// shard 0). Contiguous runs of CPUs with the same shard cost two instructions per run, so
// a CCX layout (8 CCX x 6 CPUs) is 19 instructions, not one per CPU.
std::vector<sock_filter> build_cpu_steering_program(const std::vector<int>& cpu_to_shard);

// cpu_to_shard for a shard plan: each CPU goes to the shard served by the threads that may run
// on it (a thread's own CPUs when bound, else its group's CPUs). A CPU claimed by two shards
// (numeric or by-thread splits of one group, threads not bound per CPU) is left to the -1
// fallback rather than given to the first shard, which would overload it. Sized to the highest
// CPU + 1.
std::vector<int> cpu_to_shard_map(const ShardPlanResult& shards, const core::ThreadPlan& plan);

// setsockopt(SO_ATTACH_REUSEPORT_CBPF) on `fd`, one member of the address's reuseport group.
// The program belongs to the group, not the socket, so one call covers every shard; it must
// come after every shard's listen(), because a TCP socket joins the group at listen() and the
// program's return value indexes the group's sockets in the order they joined (listen() order).
// The error message carries errno (EPERM in some sandboxes, EINVAL for a bad program).
base::Result<void> attach_cpu_steering(int fd, const std::vector<sock_filter>& prog);

}  // namespace sluice::net

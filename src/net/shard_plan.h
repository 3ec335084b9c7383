#pragma once
// Listener sharding, as HAProxy's `shards` and `tune.listener.default-shards` do it except that
// by-group is exactly one shard per group: how many kernel sockets each listening address gets
// and which threads serve each. Pure planning plus the SO_REUSEPORT probe. Main thread only.
#include <string>
#include <vector>

#include "core/thread_plan.h"
#include "net/address.h"

namespace sluice::net {

// `shards` on a bind line, or the global `tune.listener.default-shards` copied in when the bind
// line was created.
struct ShardsSetting {
  enum class Kind { kByProcess, kByGroup, kByThread, kNumber };
  Kind kind = Kind::kByGroup;
  int number = 1;   // kNumber
};

// A bind line's `thread` keyword(s) after parsing, before groups are known.
struct ThreadSetSpec {
  bool relative = false;   // `g/set` form
  int group = 0;           // relative form: 1-based group
  // Selected numbers: absolute form = global thread ids; relative = local ids within `group`.
  // `all` is expanded by the parser to 1..max of its class (1024 or 64); numbers beyond the
  // real threads are dropped at resolution.
  std::vector<int> ids;
};

// Resolves `thread` specs against the plan. Empty `specs` = every thread of every group.
// Returns the selected global thread ids, ascending, or an error text such as
// "'thread' directive references non-existing thread group 2".
base::Result<std::vector<int>> resolve_thread_set(const std::vector<ThreadSetSpec>& specs,
                                                  const core::ThreadPlan& plan);

struct Shard {
  std::vector<int> threads;   // global thread ids (1-based) that watch this socket
  std::vector<int> groups;    // groups present among them, ascending
};

struct ShardPlanResult {
  std::vector<Shard> shards;  // one kernel socket each
  bool fell_back = false;     // wanted more than one shard but SO_REUSEPORT is unavailable
  std::vector<std::string> warnings;     // "Disabling sharding for listener ..." texts
  std::vector<std::string> diagnostics;  // by-thread fallback text (shown with -dD)
};

// The number of shards `setting` asks for on `threads` before any SO_REUSEPORT fallback
// (by-process 1, by-group the groups present, by-thread the thread count, a number as given;
// never more than the thread count; 0 for an empty set). The caller runs probe_reuseport()
// only when this is above 1: HAProxy never probes for a single shard.
int wanted_shards(const ShardsSetting& setting, const std::vector<int>& threads,
                  const core::ThreadPlan& plan);

// Plans the shards of one listening address. `threads` is the resolved thread set;
// `reuseport` says whether this address's protocol supports multi-bind (probe result, or false
// for UNIX sockets, inherited fds and `noreuseport`). `proxy_desc` is e.g. "frontend 'fe'" for
// messages. by-group = exactly one shard per group present, even for unequal groups (HAProxy
// splits by thread count there, so a shard can straddle two groups); numeric = HAProxy's
// split (thread at position i -> shard floor(i*S/n)); S never exceeds the thread count.
ShardPlanResult plan_shards(const ShardsSetting& setting, const std::vector<int>& threads,
                            const core::ThreadPlan& plan, bool reuseport,
                            const std::string& proxy_desc, const std::string& proto_name);

// Live SO_REUSEPORT test for a socket family (AF_INET or AF_INET6): two sockets with
// SO_REUSEPORT bound to the same ephemeral port on the family's loopback address (127.0.0.1,
// ::1; no ::1 means false for AF_INET6). Cached per family; any other family is false.
bool probe_reuseport(int family);
// For tests: forget cached probe results / force a result.
void reset_reuseport_probe();
void force_reuseport_probe(int family, bool supported);

}  // namespace sluice::net

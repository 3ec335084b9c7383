#pragma once
// Connections queued on a listener that closes during a reload are handed to another listener of
// the same address instead of being reset.
//
// Each shard is an SO_REUSEPORT socket with its own accept queue. When a socket leaves the group
// (shutdown or close at a soft stop, after `-sf`), the kernel resets every connection still in
// its queue and every handshake in progress on it, unless migration is enabled for the group
// (Linux 5.14+): either net.ipv4.tcp_migrate_req=1 for the whole network namespace, or an eBPF
// program of type SK_REUSEPORT attached as SELECT_OR_MIGRATE. sluice attaches the smallest such
// program (it returns SK_PASS without choosing, so the kernel keeps selecting by its 4-tuple
// hash, both for new connections and for the migrated ones). The new process of a reload
// attaches it when it binds, before the old one is told to stop, so the old sockets' queues move
// to the new sockets. Without CAP_BPF (or on an older kernel) nothing changes: the queues are
// reset as before, and the attach reports why.
//
// Main thread only (start-up), like the listeners it configures.
#include "base/result.h"

namespace sluice::net {

// Loads the program once for this process and attaches it to `fd`'s reuseport group, after
// the socket's listen() (a TCP socket joins its group at listen()). The program belongs to the
// group: the last attach from any member wins, so one call covers every shard of an address.
// A CPU steering program (reuseport_steering.h) replaces it; steered addresses do without.
base::Result<void> attach_reuseport_migration(int fd);

// Closes the program's descriptor once every listener has it (the groups keep it alive).
void release_reuseport_migration();

}  // namespace sluice::net

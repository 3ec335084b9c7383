#pragma once
// Listening sockets handed from a running process to a new one over a UNIX stream socket, as
// HAProxy's `-x <socket>` and `stats socket ... expose-fd listeners` do: the new process asks
// with the line "_getsocks", the running one answers with its listeners' descriptors
// (SCM_RIGHTS, in batches) and an end mark. The new process then listens on the very sockets
// the old one had, so the kernel's accept queues, and the connections waiting in them,
// survive the reload. sluice's own framing: each message is one byte, 'F' with up to
// kBatch descriptors or 'E' that ends the list.
//
// Thread rule: blocking calls bounded by their timeout, run by the main thread at start-up
// (fetch) or by the worker serving a stats connection (send: a handful of small messages into
// a local socket's buffer).
#include <string>
#include <vector>

#include "base/result.h"

namespace sluice::net {

inline constexpr std::string_view kGetSocksCommand = "_getsocks";

// Sends `fds` then the end mark on the connected UNIX socket `sock` (non-blocking or not:
// waits up to `timeout_ms` for room). False when the peer went away or the time ran out.
bool send_fds(int sock, const std::vector<int>& fds, int timeout_ms = 1000);

// Connects to the UNIX socket `path`, asks for the listeners and receives them, within
// `timeout_ms`. The descriptors are the caller's to close.
base::Result<std::vector<int>> fetch_fds(const std::string& path, int timeout_ms = 5000);

// The master's channel to one of its workers (a socketpair): each message is one byte, with
// or without one descriptor. Sends `mark` and `fd` (-1: none); false when the peer went away
// or no room came within `timeout_ms`.
bool send_mark(int sock, char mark, int fd, int timeout_ms = 1000);

// Receives one message of send_mark() on a non-blocking socket: its mark (0 when nothing is
// waiting, -1 at end of stream or on an error) and, in *fd, its descriptor (-1 when none;
// close-on-exec). A message that came with several descriptors keeps only the first.
int receive_mark(int sock, int* fd);

}  // namespace sluice::net

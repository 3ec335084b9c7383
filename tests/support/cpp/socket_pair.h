#pragma once
// Connected stream sockets for tests: both ends non-blocking and close-on-exec, as sluice's own
// sockets are, so a test sees EAGAIN where the proxy would.
namespace sluice::test {

// Two connected ends, closed by the destructor. On failure both are -1 and `error` holds the
// errno of the step that failed. Move-only. Any thread (one at a time).
struct SocketPair {
  int a = -1;       // TCP: the connecting (client) end
  int b = -1;       // TCP: the accepted (server) end
  int error = 0;

  SocketPair() = default;
  SocketPair(SocketPair&& other) noexcept;
  SocketPair& operator=(SocketPair&& other) noexcept;
  SocketPair(const SocketPair&) = delete;
  SocketPair& operator=(const SocketPair&) = delete;
  ~SocketPair();

  bool ok() const { return a >= 0 && b >= 0; }
  // Closes one end now (the other then reads end of file). Idempotent.
  void close_a();
  void close_b();
};

// AF_UNIX SOCK_STREAM (socketpair(2)). Any thread.
SocketPair unix_stream_pair();

// TCP over 127.0.0.1 on a port the kernel picks; TCP_NODELAY on both ends, so small writes
// are not held back. The listening socket is closed before returning. Any thread.
SocketPair tcp_loopback_pair();

}  // namespace sluice::test

#pragma once
// Socket system calls with the options sluice relies on. Main thread (listeners, at start-up)
// or worker-local (connect, accept): no shared state here.
#include <sys/socket.h>

#include <cerrno>
#include <cstddef>

#include "base/result.h"
#include "net/address.h"

namespace sluice::net {

struct ListenOptions {
  int backlog = 1024;
  int unix_mode = -1;      // chmod for UNIX sockets, -1 = leave to the umask
  bool reuseport = true;   // SO_REUSEPORT on TCP sockets (several shards per address later)
};

// TCP keep-alive probes on a connected socket (`option clitcpka` / `srvtcpka` / `tcpka` and the
// `clitcpka-*` / `srvtcpka-*` tunings). Zero leaves the system's value
// (net.ipv4.tcp_keepalive_time / _intvl / _probes).
struct TcpKeepalive {
  bool on = false;
  int count = 0;        // TCP_KEEPCNT: unanswered probes before the connection is dropped
  int idle_s = 0;       // TCP_KEEPIDLE: idle seconds before the first probe
  int interval_s = 0;   // TCP_KEEPINTVL: seconds between probes
};

// SO_KEEPALIVE and its tunings, when `ka.on`. Not for UNIX sockets. Failures are ignored, as
// HAProxy does: keep-alive probes are a help, not a condition of the connection.
void apply_keepalive(int fd, const TcpKeepalive& ka);

// How an outgoing connection is opened.
struct ConnectOptions {
  // The caller sends as soon as the connection is up (an HTTP request is ready) and `option
  // tcp-smart-connect` is on (sluice's default). The kernel then holds the handshake's final
  // ACK back and lets that first data segment carry it (TCP_DEFER_ACCEPT on a connecting
  // socket): one packet less per connection, and the server sees its new connection and the
  // request in one wake-up. Not for a connection that may stay silent (TCP mode without
  // client bytes yet, a server that speaks first): the ACK would wait for the delayed-ACK timer.
  bool defer_ack = false;
  TcpKeepalive keepalive;  // `option srvtcpka`
  int rcvbuf = 0;          // SO_RCVBUF (tune.rcvbuf.server), 0 = the system's
  int sndbuf = 0;          // SO_SNDBUF (tune.sndbuf.server)
};

// Opens, binds and listens. For an inherited `fd@N` the descriptor is checked and made
// non-blocking. UNIX paths are bound to "<path>.<pid>.tmp" and renamed over <path>, so a
// running process's socket is replaced atomically (as HAProxy does).
base::Result<int> open_listener(const ListenAddress& addr, const ListenOptions& options);

// socket(SOCK_NONBLOCK) + connect(). On success *in_progress says whether the connect is
// still pending (EINPROGRESS): completion is then reported by EPOLLOUT / EPOLLERR.
// A failure is retryable unless it is a local resource problem.
base::Result<int> connect_nonblocking(const SocketAddress& to, bool* in_progress,
                                      const ConnectOptions& options = {});

// Closes a connected socket with a reset (SO_LINGER 0) instead of a FIN. For a connection to a
// server that sluice closes first while nothing is left to deliver: a FIN would leave the local
// ephemeral port in TIME_WAIT for a minute (exhausting ports at high connection rates) and
// costs a FIN/ACK exchange; a reset frees both ends at once. HAProxy does the same for server
// connections it closes before having read the server's FIN.
void close_with_reset(int fd);

// silent-drop: the client must not learn of the close. As HAProxy: the socket enters TCP
// repair mode, in which a close sends nothing at all (it needs CAP_NET_ADMIN); failing that,
// what it sends from now on (the reset of its close) leaves with a hop limit of one, so that
// it dies at the first router (on the local network it still arrives). Best effort.
// `rst_ttl` (silent-drop rst-ttl <ttl>, 1..255): no repair mode, the reset leaves with that
// hop limit, to clear the state of the devices within that many hops. The caller then closes
// with a reset.
void silence_close(int fd, int rst_ttl = 0);

// getsockopt(SO_ERROR).
int pending_socket_error(int fd);

// "tcpv4", "tcpv6" or "unix_stream".
const char* proto_name(const SocketAddress& addr);

// accept4() of one waiting connection, non-blocking and close-on-exec. Returns its descriptor
// (`peer`, when given, receives its address), or -1 with *err set: EAGAIN when nothing waits.
// Inline: every accepted connection passes here, and the body is the system call.
inline int accept_connection(int listen_fd, SocketAddress* peer, int* err) {
  int fd;
  if (peer) {
    peer->len = sizeof peer->storage;
    fd = accept4(listen_fd, peer->sa(), &peer->len, SOCK_NONBLOCK | SOCK_CLOEXEC);
  } else {
    fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  }
  if (fd < 0) *err = errno;
  return fd;
}

// The local address of a socket (getsockname); false when it cannot be had.
bool local_address(int fd, SocketAddress* out);

// Whether `fd` is a UNIX socket.
bool is_unix_socket(int fd);

// Listening sockets. pause_listening(): a TCP listener refuses new connections at once and
// stays bound (shutdown(SHUT_RD)), so that resume_listening() can listen() again, in its
// reuseport group too; a UNIX listener is left as it is (that cannot be undone).
// stop_listening(): refuses new connections for good (shutdown(SHUT_RDWR), UNIX ones too);
// the descriptor stays open until close_socket(). Connections still in the backlog are reset.
void pause_listening(int fd);
void resume_listening(int fd, int backlog);
void stop_listening(int fd);
// Drops this process's reference to a listening socket that another process (the master, or
// a new process that took it with -x) may also hold, without shutting it down: the descriptor
// number stays valid (it now refers to an unbound socket, closed with the process as before).
// The socket lives on while another reference exists; when this was the last one, it leaves
// its reuseport group and its queue is migrated to a socket that stays (or reset).
void release_listener(int fd);

// TCP_NODELAY (accepted sockets inherit it from their listener).
void set_nodelay(int fd);
// SO_RCVBUF / SO_SNDBUF (tune.rcvbuf.* / tune.sndbuf.*), each when above 0.
void set_socket_buffers(int fd, int rcvbuf, int sndbuf);
// TCP_QUICKACK off on a listening socket (option tcp-smart-accept). Best effort.
void set_quickack_off(int fd);
// TCP_FASTOPEN on a listening socket: up to `qlen` connections whose SYN carried data (a
// cookie) wait to be accepted. The system's net.ipv4.tcp_fastopen must allow it (bit 2).
void set_fastopen(int fd, int qlen);

// close(), for descriptors sluice opened (listeners, connections never handed to a transport).
void close_socket(int fd);

// Datagram sockets for log lines (UDP over IPv4 or IPv6, UNIX datagram), opened on first use,
// one per family; a send never blocks. Owned by one thread (the log writer's).
class DatagramSender {
 public:
  DatagramSender() = default;
  ~DatagramSender();
  DatagramSender(const DatagramSender&) = delete;
  DatagramSender& operator=(const DatagramSender&) = delete;
  // False when the datagram could not be sent (no socket, a full buffer, an error).
  bool send_to(const SocketAddress& to, const char* data, std::size_t len);

 private:
  int udp4_ = -1, udp6_ = -1, unix_ = -1;
};

}  // namespace sluice::net

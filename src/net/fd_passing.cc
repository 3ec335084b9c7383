#include "net/fd_passing.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "base/clock.h"

namespace sluice::net {

namespace {
constexpr std::size_t kBatch = 64;

bool wait_for(int fd, short events, uint64_t deadline_ms) {
  const uint64_t now = base::monotonic_ms();
  if (now >= deadline_ms) return false;
  pollfd p{fd, events, 0};
  return poll(&p, 1, static_cast<int>(deadline_ms - now)) > 0;
}

bool send_one(int sock, char mark, const int* fds, std::size_t n, uint64_t deadline_ms) {
  alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int) * kBatch)] = {};
  iovec iov{&mark, 1};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  if (n > 0) {
    m.msg_control = cbuf;
    m.msg_controllen = CMSG_SPACE(sizeof(int) * n);
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * n);
    std::memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
  }
  for (;;) {
    if (sendmsg(sock, &m, MSG_NOSIGNAL) == 1) return true;
    if (errno == EINTR) continue;
    if (errno != EAGAIN || !wait_for(sock, POLLOUT, deadline_ms)) return false;
  }
}
// One message: its one-byte mark and the descriptors it carried (appended to *fds,
// close-on-exec). recvmsg()'s result; *truncated when the kernel dropped descriptors.
ssize_t receive_one(int sock, int flags, char* mark, std::vector<int>* fds, bool* truncated) {
  alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int) * kBatch)] = {};
  iovec iov{mark, 1};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = cbuf;
  m.msg_controllen = sizeof cbuf;
  ssize_t n;
  do {
    n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC | flags);
  } while (n < 0 && errno == EINTR);
  *truncated = n > 0 && (m.msg_flags & MSG_CTRUNC);
  for (cmsghdr* c = n > 0 ? CMSG_FIRSTHDR(&m) : nullptr; c; c = CMSG_NXTHDR(&m, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      fds->push_back(fd);
    }
  }
  return n;
}
}  // namespace

bool send_fds(int sock, const std::vector<int>& fds, int timeout_ms) {
  const uint64_t deadline = base::monotonic_ms() + static_cast<uint64_t>(timeout_ms);
  for (std::size_t i = 0; i < fds.size(); i += kBatch)
    if (!send_one(sock, 'F', fds.data() + i, std::min(kBatch, fds.size() - i), deadline))
      return false;
  return send_one(sock, 'E', nullptr, 0, deadline);
}

bool send_mark(int sock, char mark, int fd, int timeout_ms) {
  const uint64_t deadline = base::monotonic_ms() + static_cast<uint64_t>(timeout_ms);
  return send_one(sock, mark, &fd, fd >= 0 ? 1 : 0, deadline);
}

int receive_mark(int sock, int* fd) {
  *fd = -1;
  char mark = 0;
  std::vector<int> got;
  bool truncated = false;
  const ssize_t n = receive_one(sock, MSG_DONTWAIT, &mark, &got, &truncated);
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (i == 0) *fd = got[0];
    else close(got[i]);
  }
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
  if (n == 0) return -1;
  return static_cast<unsigned char>(mark);
}

base::Result<std::vector<int>> fetch_fds(const std::string& path, int timeout_ms) {
  const uint64_t deadline = base::monotonic_ms() + static_cast<uint64_t>(timeout_ms);
  sockaddr_un sun{};
  sun.sun_family = AF_UNIX;
  if (path.size() >= sizeof sun.sun_path)
    return base::Error::text(fmt::format("socket path '{}' is too long", path));
  std::memcpy(sun.sun_path, path.data(), path.size());
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (s < 0) return base::Error::from_errno("socket", errno);
  auto fail = [&](std::string why) {
    close(s);
    return base::Error::text(std::move(why));
  };
  if (connect(s, reinterpret_cast<sockaddr*>(&sun), sizeof sun) != 0 && errno != EINPROGRESS)
    return fail(fmt::format("cannot connect to '{}': {}", path, std::strerror(errno)));
  const std::string ask = std::string(kGetSocksCommand) + "\n";
  std::size_t sent = 0;
  while (sent < ask.size()) {
    ssize_t n = send(s, ask.data() + sent, ask.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!wait_for(s, POLLOUT, deadline)) return fail("timed out asking for the sockets");
    } else {
      return fail(fmt::format("cannot ask '{}' for its sockets: {}", path, std::strerror(errno)));
    }
  }
  std::vector<int> fds;
  auto close_all = [&] {
    for (int fd : fds) close(fd);
    fds.clear();
  };
  for (;;) {
    char mark = 0;
    bool truncated = false;
    ssize_t n = receive_one(s, 0, &mark, &fds, &truncated);
    if (n < 0 && errno == EAGAIN) {
      if (!wait_for(s, POLLIN, deadline)) {
        close_all();
        return fail("timed out waiting for the sockets");
      }
      continue;
    }
    if (n == 1 && mark == 'E') break;
    if (n != 1 || mark != 'F' || truncated) {
      close_all();
      // A process that does not expose its sockets answers the line as a CLI command.
      return fail(n == 0 ? "the old process closed the connection (is 'expose-fd listeners' set "
                           "on its stats socket?)"
                         : "unexpected answer (is 'expose-fd listeners' set on its stats socket?)");
    }
  }
  close(s);
  return fds;
}

}  // namespace sluice::net

// Reuseport migration: connections waiting in the accept queue of a listener that closes move to
// another listener of the same address (the new process of a reload) instead of being reset.
// Runs on a real loopback reuseport group; skipped where the program cannot be loaded (no
// CAP_BPF, kernel older than 5.14).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "net/reuseport_migration.h"

namespace sluice::net {
namespace {

constexpr int kClients = 6;

int reuseport_listener(uint16_t port, uint16_t* bound) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd, 64) != 0) {
    close(fd);
    return -1;
  }
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  *bound = ntohs(a.sin_port);
  return fd;
}

int connect_to(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Accepts what `fd`'s queue holds, waiting at most 500 ms for the first; closes them.
int accept_all(int fd) {
  int n = 0;
  pollfd p{fd, POLLIN, 0};
  while (poll(&p, 1, n == 0 ? 500 : 50) == 1) {
    int c = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) break;
    close(c);
    ++n;
  }
  return n;
}

// The client's next read, within 500 ms: 0 for EOF, -errno for an error, 1 for data, 2 for
// nothing yet.
int client_state(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, 500) != 1) return 2;
  char c;
  ssize_t r = recv(fd, &c, 1, MSG_DONTWAIT);
  if (r < 0) return -errno;
  return r == 0 ? 0 : 1;
}

bool sysctl_migrates() {
  std::ifstream f("/proc/sys/net/ipv4/tcp_migrate_req");
  int v = 0;
  return f >> v && v != 0;
}

// The old listener `a` is shut down as a soft stop does (shutdown(SHUT_RDWR)); `b` is the new
// process's listener. Returns how many of the clients queued on `a` `b` accepted, and fills
// `resets` with how many clients saw a reset.
int run_handover(bool attach, int* resets) {
  uint16_t port = 0;
  int a = reuseport_listener(0, &port);
  EXPECT_GE(a, 0);
  std::vector<int> clients;
  for (int i = 0; i < kClients; ++i) clients.push_back(connect_to(port));   // all queue on `a`
  uint16_t same = 0;
  int b = reuseport_listener(port, &same);
  EXPECT_GE(b, 0);
  if (attach) {
    EXPECT_TRUE(attach_reuseport_migration(b).ok());
  }
  shutdown(a, SHUT_RDWR);
  close(a);
  int accepted = accept_all(b);
  *resets = 0;
  for (int c : clients) {
    if (c >= 0 && client_state(c) == -ECONNRESET) ++*resets;
    if (c >= 0) close(c);
  }
  close(b);
  return accepted;
}

TEST(ReuseportMigration, QueuedConnectionsMoveToTheNewListener) {
  {
    uint16_t port = 0;
    int probe = reuseport_listener(0, &port);
    ASSERT_GE(probe, 0);
    auto r = attach_reuseport_migration(probe);
    close(probe);
    if (!r.ok()) {
      release_reuseport_migration();
      GTEST_SKIP() << r.error().message;
    }
  }
  int resets = 0;
  EXPECT_EQ(run_handover(true, &resets), kClients);
  EXPECT_EQ(resets, 0);
  release_reuseport_migration();
}

// The control: without the program (and without the sysctl) the same close resets the queue,
// which is what the test above would see if the attach did nothing.
TEST(ReuseportMigration, WithoutTheProgramTheQueueIsReset) {
  if (sysctl_migrates()) GTEST_SKIP() << "net.ipv4.tcp_migrate_req is set in this namespace";
  int resets = 0;
  EXPECT_EQ(run_handover(false, &resets), 0);
  EXPECT_EQ(resets, kClients);
}

}  // namespace
}  // namespace sluice::net

#include "net/reuseport_migration.h"

#include <linux/bpf.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#ifndef SO_ATTACH_REUSEPORT_EBPF
#define SO_ATTACH_REUSEPORT_EBPF 52
#endif

namespace sluice::net {

namespace {

int g_prog_fd = -1;
int g_load_errno = 0;   // the load failed once: do not retry for every address

int load_program() {
  // r0 = SK_PASS; exit. Passing without bpf_sk_select_reuseport() leaves the choice to the
  // kernel's hash, for a new connection as for a migrated one.
  bpf_insn insns[2];
  std::memset(insns, 0, sizeof insns);
  insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;
  insns[0].dst_reg = BPF_REG_0;
  insns[0].imm = SK_PASS;
  insns[1].code = BPF_JMP | BPF_EXIT;
  static const char license[] = "GPL";

  bpf_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.prog_type = BPF_PROG_TYPE_SK_REUSEPORT;
  attr.expected_attach_type = BPF_SK_REUSEPORT_SELECT_OR_MIGRATE;
  attr.insn_cnt = 2;
  attr.insns = reinterpret_cast<uint64_t>(insns);
  attr.license = reinterpret_cast<uint64_t>(license);
  std::memcpy(attr.prog_name, "sluice_migrate", sizeof "sluice_migrate");
  return static_cast<int>(syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof attr));
}

}  // namespace

base::Result<void> attach_reuseport_migration(int fd) {
  if (g_prog_fd < 0 && g_load_errno == 0) {
    g_prog_fd = load_program();
    if (g_prog_fd < 0) g_load_errno = errno;
  }
  if (g_prog_fd < 0) {
    return base::Error::from_errno("cannot load the reuseport migration program", g_load_errno);
  }
  if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_EBPF, &g_prog_fd, sizeof g_prog_fd) != 0) {
    const int err = errno;
    return base::Error::from_errno("cannot attach the reuseport migration program", err);
  }
  return {};
}

void release_reuseport_migration() {
  if (g_prog_fd >= 0) close(g_prog_fd);
  g_prog_fd = -1;
  g_load_errno = 0;
}

}  // namespace sluice::net

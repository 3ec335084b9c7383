"""`-sf` reloads under connection churn: a connection waiting in the old process's accept queue
when that process shuts its listener down moves to the new process's socket instead of being
reset. The window between the old process's last accept() and its shutdown() is microseconds on
an idle machine and a scheduler time slice on a loaded one; a preloaded shim stretches it to
50 ms on every listening socket so that each reload puts connections in it."""
import os
import shutil
import subprocess

import pytest

from sluice_harness import KeepAliveClients, free_port, slow_factor, wait_until

SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/socket.h>
#include <unistd.h>
int shutdown(int fd, int how) {
  static int (*real)(int, int);
  if (!real) real = (int (*)(int, int))dlsym(RTLD_NEXT, "shutdown");
  int listening = 0;
  socklen_t len = sizeof listening;
  if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0 && listening)
    usleep(50000);
  return real(fd, how);
}
"""


@pytest.fixture
def slow_shutdown(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler for the shutdown shim")
    src = tmp_path / "slow_shutdown.c"
    src.write_text(SHIM)
    lib = tmp_path / "slow_shutdown.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(lib), str(src), "-ldl"], check=True,
                   timeout=60)
    return str(lib)


def _config(port: int) -> str:
    return f"""
global
    nbthread 2
defaults
    mode http
    timeout connect 2s
    timeout client 10s
frontend fe
    bind 127.0.0.1:{port}
    http-request return status 200 content-type text/plain string "ok"
"""


def test_reloads_reset_no_queued_connection(cfg, sluice, slow_shutdown):
    if os.geteuid() != 0:
        pytest.skip("attaching the migration program needs CAP_BPF")
    port = free_port()
    path = cfg(_config(port))
    # A sanitizer build wants its runtime first in the link order; the shim only wraps
    # shutdown(), which the sanitizers leave alone.
    asan = os.environ.get("ASAN_OPTIONS", "")
    env = {"LD_PRELOAD": slow_shutdown,
           "ASAN_OPTIONS": (asan + ":" if asan else "") + "verify_asan_link_order=0"}
    old = sluice(path, wait_ports=[port], env=env)
    # Every request says `Connection: close`: each one is a new connection to accept.
    clients = KeepAliveClients(port, 12, reconnect=True,
                               request=b"GET /c HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    try:
        for _ in range(3):
            seen = clients.answered
            wait_until(lambda: clients.answered > seen + 200, 10 * slow_factor(), message="traffic")
            new = sluice(path, wait_ports=[port], extra_args=["-sf", str(old.pid)], env=env)
            assert old.wait_exit(timeout=10) == 0, old.describe()
            old = new
        seen = clients.answered
        wait_until(lambda: clients.answered > seen + 200, 10 * slow_factor(),
                   message="traffic on the last process")
    finally:
        clients.finish()
    assert clients.failures == [], (clients.failures[:5], len(clients.failures), clients.answered)

"""Out of file descriptors: accept() fails with EMFILE while a connection waits in the backlog.

HAProxy logs an emergency line ("reached process FD limit") and stops watching the listener for
100 ms, then resumes; a level-triggered registration kept in place would make the worker spin
on accept() at full CPU until a descriptor frees.
"""
import os
import resource
import subprocess

import pytest

from sluice_harness import (cli, connect, echo_roundtrip, free_port, no_data_for, recv_exact,
                            run_sluice, sluice_bin, wait_until)


def loops(sock):
    for line in cli(str(sock), "show activity").splitlines():
        if line.startswith("loops:"):
            return int(line.split(":", 1)[1].split("[", 1)[0])
    raise AssertionError("no loops line in show activity")


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_accept_out_of_descriptors_logs_pauses_and_recovers(cfg, sluice, echo, short_tmp):
    rc, vv, _ = run_sluice(["-vv"])
    if "SANITIZE= none" not in vv:
        # The sanitizer runtime opens descriptors of its own (a pipe to probe memory while it
        # checks a virtual call) and misreports once the process has none left.
        pytest.skip("sanitizer build: the runtime itself needs file descriptors")
    port, sock = free_port(), short_tmp / "stats.sock"
    s = sluice(cfg(f"""
global
    nbthread 1
    stats socket {sock} level admin
    log stderr local0
defaults
    mode tcp
    log global
    timeout connect 2s
    timeout client 10s
    timeout server 10s
listen app
    bind 127.0.0.1:{port}
    server s1 127.0.0.1:{echo.port}
"""), wait_ports=[port], wait_unix=[sock])
    idle_fds = open_fds(s.pid)
    assert echo_roundtrip(port) == b"ping\n"
    before = loops(sock)
    # The descriptors of the connections above go once sluice has seen them close.
    wait_until(lambda: open_fds(s.pid) == idle_fds, 5, message="the connections to close")
    soft, hard = resource.prlimit(s.pid, resource.RLIMIT_NOFILE)
    # Room for exactly two proxied connections (client and server side each).
    resource.prlimit(s.pid, resource.RLIMIT_NOFILE, (open_fds(s.pid) + 4, hard))
    c1 = c2 = c3 = None
    try:
        c1, c2 = connect(port), connect(port)
        for c in (c1, c2):
            c.sendall(b"held\n")
            assert recv_exact(c, 5) == b"held\n"
        c3 = connect(port)                 # the handshake completes: the kernel queues it
        c3.sendall(b"third\n")
        wait_until(lambda: "Proxy app reached process FD limit" in s.stderr(), 5,
                   message="the emergency log line")
        assert no_data_for(c3, 0.5), "the third connection was served without a descriptor"
        assert s.running(), s.describe()
        c1.close()
        c1 = None
        # A descriptor freed: the waiting connection is accepted and served.
        assert recv_exact(c3, 6, timeout=5) == b"third\n"
    finally:
        for c in (c1, c2, c3):
            if c is not None:
                c.close()
        resource.prlimit(s.pid, resource.RLIMIT_NOFILE, (soft, hard))
    # A spinning worker loops hundreds of thousands of times a second; a paused one a few
    # times per 100 ms pause. The bound is far from both.
    spent = loops(sock) - before
    assert spent < 2000, f"the worker looped {spent} times while out of descriptors"
    assert echo_roundtrip(port) == b"ping\n"


def check_with_fd_limit(cfg_path, limit):
    def lower():
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
    proc = subprocess.run([sluice_bin(), "-c", "-f", str(cfg_path)], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=20, preexec_fn=lower)
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.parametrize("maxconn, needed", [("    maxconn 10", 120), ("", 300)])
def test_a_ulimit_too_small_for_maxconn_is_reported(cfg, maxconn, needed):
    # Even a small maxconn (or the derived floor of 100) needs more descriptors than a limit
    # of 64 allows: without a word at start-up the first busy minute ends in EMFILE.
    path = cfg(f"""
global
{maxconn}
defaults
    mode tcp
    timeout connect 2s
    timeout client 10s
    timeout server 10s
listen app
    bind 127.0.0.1:{free_port()}
    server s1 127.0.0.1:{free_port()}
""")
    rc, out = check_with_fd_limit(path, 64)
    assert rc == 0, out
    assert f"needs about {needed} file descriptors but the limit is 64" in out, out
    rc, out = check_with_fd_limit(path, 4096)
    assert rc == 0, out
    assert "file descriptors" not in out, out

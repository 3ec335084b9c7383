"""Stats socket connection limits: output backpressure (spec 1.3), the idle timeout (1.1) and
the line limit (1.2)."""
import os
import socket
import time

from sluice_harness import cli, recv_all
from cli_util import start_with_admin_socket


def _rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _same_dump(answer, expected):
    """Two `show stat` answers with the same rows and columns (ages may have moved on)."""
    a = [l.split(",")[:2] + [str(l.count(","))] for l in answer.split("\n")]
    b = [l.split(",")[:2] + [str(l.count(","))] for l in expected.split("\n")]
    return a == b


BACKENDS = """
backend be
    server s1 127.0.0.1:9
    server s2 127.0.0.1:9
"""


def test_client_that_never_reads_does_not_grow_memory(cfg, sluice, short_tmp):
    many = "backend be\n" + "".join(f"    server s{i} 127.0.0.1:9\n" for i in range(30))
    # Under ASan freed memory waits in a quarantine (256 MB by default) instead of being
    # reused, so RSS would measure the quarantine, not what sluice holds: turn it off here.
    env = None
    if os.environ.get("ASAN_OPTIONS"):
        env = {"ASAN_OPTIONS": os.environ["ASAN_OPTIONS"] + ":quarantine_size_mb=0"}
    proc, sock = start_with_admin_socket(cfg, sluice, short_tmp, body=many, env=env)
    expected = cli(sock, "show stat")
    # Warm up with the same commands on a client that reads: what the first answers cost once
    # (allocator caches of every thread, code pages, ASan's shadow) is not growth.
    warm = cli(sock, "prompt i\n" + "show stat;show stat\n" * 100, timeout=30)
    assert warm.count("\n\n") >= 200
    rss_before = _rss_kb(proc.pid)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(sock)
    s.setblocking(False)
    n_cmds = 2500
    payload = b"prompt i\n" + b"show stat;show stat\n" * (n_cmds // 2)
    sent, deadline = 0, time.monotonic() + 3
    # Write without reading until the kernel buffers are full (or everything is sent).
    while sent < len(payload) and time.monotonic() < deadline:
        try:
            sent += s.send(payload[sent:sent + 65536])
        except BlockingIOError:
            time.sleep(0.02)
    # Give sluice time to answer everything it has read (it would, without backpressure).
    grown, deadline = 0, time.monotonic() + 3
    while time.monotonic() < deadline:
        time.sleep(0.1)
        grown = max(grown, _rss_kb(proc.pid) - rss_before)
    # Without backpressure every answer would pile up in sluice.
    assert n_cmds * len(expected) > 16 * 1024 * 1024
    assert grown < 8 * 1024, f"RSS grew by {grown} kB"
    # Reading now gets every answer, complete and in order.
    got = bytearray()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if sent < len(payload):
            try:
                sent += s.send(payload[sent:sent + 65536])
            except BlockingIOError:
                pass
        try:
            chunk = s.recv(1 << 20)
        except BlockingIOError:
            time.sleep(0.005)
            continue
        if not chunk:
            break
        got += chunk
        if got.count(b"\n\n") >= n_cmds:
            break
    s.close()
    assert got.startswith(b"\n")   # the answer to `prompt i`
    answers = got[1:].decode().split("\n\n")
    assert answers[-1] == ""
    assert len(answers) - 1 == n_cmds
    for a in answers[:-1]:
        assert _same_dump(a + "\n\n", expected)


def test_slow_reader_of_a_large_answer_gets_it_whole(cfg, sluice, short_tmp):
    proc, sock = start_with_admin_socket(cfg, sluice, short_tmp, extra_global="    stats timeout 1s",
                        body=BACKENDS)
    line = ";".join(["show stat"] * 300) + "\n"
    one = cli(sock, "show stat")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(sock)
    s.sendall(line.encode())
    s.shutdown(socket.SHUT_WR)
    s.settimeout(5)
    got = bytearray()
    start = time.monotonic()
    deadline = start + 60
    while time.monotonic() < deadline:
        b = s.recv(8192)
        if not b:
            break
        got += b
        time.sleep(0.05)   # never idle for 1 s, but the whole answer takes longer than that
    elapsed = time.monotonic() - start
    s.close()
    assert elapsed > 1.5, "the answer must take longer than the timeout to read"
    answers = got.decode().split("\n\n")
    assert answers[-1] == "" and len(answers) - 1 == 300
    assert all(_same_dump(a + "\n\n", one) for a in answers[:-1])


def test_line_limit_follows_tune_bufsize(cfg, sluice, short_tmp):
    _, sock = start_with_admin_socket(cfg, sluice, short_tmp, extra_global="    tune.bufsize 65536")
    word = "a" * 20000
    assert cli(sock, f"echo {word}") == word + "\n\n"
    # Exactly one buffer without its LF: sluice reads it all (no reset for unread input),
    # then refuses it.
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(sock)
    s.sendall(b"echo " + b"b" * (65536 - 5))
    text = recv_all(s, timeout=5).decode()
    s.close()
    assert text.startswith("The command line is too big for the buffer size."), text[:100]



"""What timeouts and aborts count in `show stat` (TCP mode), as HAProxy counts them: a client
timeout or error is a client abort (cli_abrt) in any state, a server timeout once connected a
server abort (srv_abrt), an expired queue wait a failed connection (econ). And a pending
connect is given its whole `timeout connect`, whatever `timeout client` says."""
import socket
import struct
import time

import pytest

from sluice_harness import (SilentServer, cli, connect, free_port, parse_show_stat, stat_int,
                            stat_row, wait_closed, wait_until)


def config(port, server_port, sock, timeouts, server_extra=""):
    lines = "\n".join(f"    timeout {k} {v}" for k, v in timeouts.items())
    return f"""
global
    nbthread 1
    stats socket {sock} level admin
defaults
    mode tcp
{lines}
listen app
    bind 127.0.0.1:{port}
    retries 0
    server s1 127.0.0.1:{server_port} {server_extra}
"""


def counters(sock):
    rows = parse_show_stat(cli(str(sock), "show stat"))[1]
    be, s1 = stat_row(rows, "app", "BACKEND"), stat_row(rows, "app", "s1")
    names = ("cli_abrt", "srv_abrt", "econ", "eresp")
    return {k: stat_int(be, k) for k in names}, {k: stat_int(s1, k) for k in names}


def expect_counters(sock, server=True, **want):
    """The BACKEND row (and the server's, unless `server` is False: a wait in the backend's
    queue concerns no server) has these counts, the others at 0."""
    full = {"cli_abrt": 0, "srv_abrt": 0, "econ": 0, "eresp": 0, **want}
    zero = {k: 0 for k in full}
    want_rows = (full, full if server else zero)
    wait_until(lambda: counters(sock) == want_rows,
               message=lambda: f"backend and server counters {want_rows}, have {counters(sock)}")


@pytest.mark.parametrize("side,counter", [("client", "cli_abrt"), ("server", "srv_abrt")])
def test_idle_timeout_is_an_abort_of_that_side(cfg, sluice, short_tmp, side, counter):
    srv, port, sock = SilentServer(), free_port(), short_tmp / "s.sock"
    timeouts = {"connect": "2s", "client": "10s", "server": "10s", side: "300ms"}
    try:
        sluice(cfg(config(port, srv.port, sock, timeouts)), wait_ports=[port], wait_unix=[sock])
        with connect(port) as c:
            c.sendall(b"x")
            wait_closed(c)
        expect_counters(sock, **{counter: 1})
    finally:
        srv.stop()


@pytest.fixture
def stalled_port():
    """The port of a listener whose accept queue is full: connects to it stay pending (SYNs
    dropped) until the test ends."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(0)
    port = ls.getsockname()[1]
    fillers = []
    for _ in range(2):
        f = socket.socket()
        f.setblocking(False)
        f.connect_ex(("127.0.0.1", port))
        fillers.append(f)
    time.sleep(0.1)
    yield port
    for f in fillers:
        f.close()
    ls.close()


def test_pending_connect_outlives_a_shorter_client_timeout(cfg, sluice, short_tmp, stalled_port):
    port, sock = free_port(), short_tmp / "s.sock"
    sluice(cfg(config(port, stalled_port, sock, {"connect": "1500ms", "client": "300ms", "server": "10s"})),
           wait_ports=[port], wait_unix=[sock])
    with connect(port) as c:
        c.sendall(b"hello")
        t0 = time.monotonic()
        elapsed = wait_closed(c) - t0
    assert elapsed >= 1.3, f"closed after {elapsed:.2f}s, before timeout connect"
    expect_counters(sock, econ=1)


def test_client_reset_while_connecting_is_a_client_abort(cfg, sluice, short_tmp, stalled_port):
    port, sock = free_port(), short_tmp / "s.sock"
    sluice(cfg(config(port, stalled_port, sock, {"connect": "3s", "client": "10s", "server": "10s"})),
           wait_ports=[port], wait_unix=[sock])
    c = connect(port)
    c.sendall(b"hello")
    time.sleep(0.2)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.close()
    expect_counters(sock, cli_abrt=1)


def test_expired_queue_wait_is_a_failed_connection(cfg, sluice, short_tmp):
    srv, port, sock = SilentServer(), free_port(), short_tmp / "s.sock"
    try:
        sluice(cfg(config(port, srv.port, sock,
                          {"connect": "2s", "client": "10s", "server": "10s", "queue": "300ms"},
                          server_extra="maxconn 1")),
               wait_ports=[port], wait_unix=[sock])
        with connect(port) as holder:
            holder.sendall(b"x")
            wait_until(lambda: srv.connections >= 1, message="the first client to reach the server")
            with connect(port) as waiting:
                waiting.sendall(b"y")
                wait_closed(waiting)
            expect_counters(sock, server=False, econ=1)
    finally:
        srv.stop()

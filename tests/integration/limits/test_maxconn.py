"""`maxconn`: extra connections wait in the kernel backlog; none is accepted and dropped."""
import threading

import pytest

from sluice_harness import (DEFAULTS, connect, free_port, no_data_for, recv_exact, show_info,
                            wait_until)


@pytest.mark.parametrize("where", ["global", "frontend"])
def test_maxconn_2_queues_the_third_connection(cfg, sluice, echo, short_tmp, where):
    port, sock = free_port(), short_tmp / "stats.sock"
    g = "    maxconn 2" if where == "global" else ""
    f = "    maxconn 2" if where == "frontend" else ""
    sluice(cfg(f"""
global
    nbthread 2
    stats socket {sock} level admin
{g}
{DEFAULTS}
frontend fe
    bind 127.0.0.1:{port}
{f}
    default_backend be
backend be
    server s1 127.0.0.1:{echo.port}
"""), wait_ports=[port], wait_unix=[sock])

    # Watch CurrConns for the whole test.
    peak = {"v": 0}
    stop = threading.Event()

    def watch():
        while not stop.wait(0.02):
            try:
                peak["v"] = max(peak["v"], int(show_info(str(sock), 2).get("CurrConns", "0")))
            except (OSError, AssertionError, ValueError):
                pass
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    c1 = c2 = c3 = None
    try:
        c1, c2 = connect(port), connect(port)
        for c, msg in ((c1, b"one\n"), (c2, b"two\n")):
            c.sendall(msg)
            assert recv_exact(c, len(msg)) == msg
        wait_until(lambda: echo.active == 2, 5, message="two server connections")

        c3 = connect(port)      # the handshake completes: the kernel queues it
        c3.sendall(b"three\n")
        assert no_data_for(c3, 0.5), "a third connection was served while maxconn 2 is reached"
        assert echo.connections == 2

        c1.close()
        c1 = None
        assert recv_exact(c3, 6, timeout=5) == b"three\n"
        c2.sendall(b"still\n")
        assert recv_exact(c2, 6) == b"still\n"
        assert echo.connections == 3
    finally:
        stop.set()
        watcher.join(timeout=3)
        for c in (c1, c2, c3):
            if c is not None:
                c.close()
    assert peak["v"] <= 2, f"CurrConns reached {peak['v']}"

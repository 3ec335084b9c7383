"""Reloads under load lose nothing: clients open connection after connection while the process
is replaced five times, with `-x <stats socket> -sf <old pid>` (the sockets themselves are
handed over) and with `-sf` alone (new sockets beside the old ones, whose queues the kernel
moves to them when they close); every connection is answered, none refused or reset."""
from __future__ import annotations

import os
import socket
import threading

import pytest

from sluice_harness import free_port, listen_config, recv_exact


@pytest.mark.parametrize("takeover", [True, False], ids=["x", "sf"])
def test_reloads_under_load_lose_no_connection(cfg, sluice, echo, short_tmp, takeover):
    if not takeover and os.geteuid() != 0:
        pytest.skip("-sf alone keeps the queues only with the migration program (CAP_BPF)")
    port, sock = free_port(), short_tmp / "stats.sock"
    path = cfg(listen_config(port, echo.port, f"    stats socket {sock} level admin expose-fd listeners"))
    proc = sluice(path, wait_ports=[port], wait_unix=[sock])
    ok, failures = [0], []
    count = threading.Lock()
    stop = threading.Event()

    def client() -> None:
        while not stop.is_set():
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
                    c.sendall(b"x\n")
                    assert recv_exact(c, 2) == b"x\n"
                with count:
                    ok[0] += 1
            except (OSError, AssertionError) as e:   # refused, reset, EOF or timeout
                failures.append(repr(e))

    threads = [threading.Thread(target=client, daemon=True) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        for _ in range(5):
            before = ok[0]
            args = (["-x", str(sock)] if takeover else []) + ["-sf", str(proc.pid)]
            new = sluice(path, wait_ports=[port], extra_args=args)
            assert proc.wait_exit(timeout=10) == 0, proc.describe()
            proc = new
            assert ok[0] > before, "no connection went through during the reload"
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=10)
    assert not failures, failures[:5]
    assert ok[0] > 50, ok[0]

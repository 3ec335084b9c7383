"""Reloads under load lose nothing: clients open connection after connection while the process
is replaced five times, with `-x <stats socket> -sf <old pid>` (the sockets themselves are
handed over) and with `-sf` alone (new sockets beside the old ones, whose queues the kernel
moves to them when they close); every connection is answered, none refused or reset."""
from __future__ import annotations

import os

import pytest

from sluice_harness import EchoLoad, free_port, listen_config


@pytest.mark.parametrize("takeover", [True, False], ids=["x", "sf"])
def test_reloads_under_load_lose_no_connection(cfg, sluice, echo, short_tmp, takeover):
    if not takeover and os.geteuid() != 0:
        pytest.skip("-sf alone keeps the queues only with the migration program (CAP_BPF)")
    port, sock = free_port(), short_tmp / "stats.sock"
    path = cfg(listen_config(port, echo.port, f"    stats socket {sock} level admin expose-fd listeners"))
    proc = sluice(path, wait_ports=[port], wait_unix=[sock])
    with EchoLoad(port) as load:
        for _ in range(5):
            before = load.ok
            args = (["-x", str(sock)] if takeover else []) + ["-sf", str(proc.pid)]
            new = sluice(path, wait_ports=[port], extra_args=args)
            assert proc.wait_exit(timeout=10) == 0, proc.describe()
            proc = new
            assert load.ok > before, "no connection went through during the reload"
    assert not load.failures, load.failures[:5]
    assert load.ok > 50, load.ok

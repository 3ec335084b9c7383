"""tune.listener.reuseport-steering cpu: the connection goes to the shard whose group owns the
CPU that processed its SYN. On loopback that is the client's CPU, so pinning the client picks
the shard."""
import os

import pytest

from sluice_harness import (DEFAULTS, EchoServer, accepted_per_thread, cli, free_port,
                            roundtrip_from_cpu)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2 or not {0, 1} <= os.sched_getaffinity(0),
                    reason="needs CPUs 0 and 1")
def test_cpu_steering_picks_the_shard_of_the_client_cpu(cfg, sluice, short_tmp):
    with EchoServer() as echo:
        port, sock = free_port(), short_tmp / "s.sock"
        text = f"""
global
    nbthread 2
    thread-groups 2
    cpu-map 1/1 0
    cpu-map 2/1 1
    tune.listener.reuseport-steering cpu
    tune.listener.multi-queue off
    stats socket {sock} level admin
{DEFAULTS}
listen px
    bind 127.0.0.1:{port}
    server s1 127.0.0.1:{echo.port}
"""
        s = sluice(cfg(text), wait_ports=[port], wait_unix=[sock])
        assert "steered" in cli(str(sock), "show listeners"), s.stderr()
        for _ in range(8):
            assert roundtrip_from_cpu(port, 0) == b"ping\n"
        assert accepted_per_thread(sock) == [8, 0]
        for _ in range(8):
            assert roundtrip_from_cpu(port, 1) == b"ping\n"
        assert accepted_per_thread(sock) == [8, 8]

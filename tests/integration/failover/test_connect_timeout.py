"""`timeout connect` against a server whose SYNs are never answered."""
import time

from sluice_harness import DEFAULTS, SynBlackhole, connect, free_port, wait_closed


def test_connect_timeout_closes_client(cfg, sluice, servers):
    hole = servers.add(SynBlackhole())
    port = free_port()
    sluice(cfg(f"""
global
    nbthread 2
defaults
    mode tcp
    timeout connect 500ms
    timeout client 10s
    timeout server 10s
listen app
    bind 127.0.0.1:{port}
    retries 0
    server s1 127.0.0.1:{hole.port}
"""), wait_ports=[port])
    with connect(port) as c:
        c.sendall(b"hello?\n")
        t0 = time.monotonic()
        closed_at = wait_closed(c, timeout=6)
    elapsed = closed_at - t0
    assert 0.3 < elapsed < 3.0, f"closed after {elapsed:.2f}s"

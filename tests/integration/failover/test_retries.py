"""Connection failures: retries, redispatch, and what the client sees when all fail."""
import time

from sluice_harness import (DEFAULTS, connect, echo_roundtrip, free_port, refused_port,
                            show_stat, stat_int, stat_row, wait_closed, wait_until)


def config(port, sock, servers, backend_extra):
    return f"""
global
    nbthread 2
    stats socket {sock} level admin
{DEFAULTS}
frontend fe
    bind 127.0.0.1:{port}
    default_backend be
backend be
    balance roundrobin
{backend_extra}
{servers}
"""


def test_retries_and_redispatch_hide_a_dead_server(cfg, sluice, echo, short_tmp):
    port, sock, dead = free_port(), short_tmp / "stats.sock", refused_port()
    sluice(cfg(config(port, sock,
                      f"    server s1 127.0.0.1:{dead}\n    server s2 127.0.0.1:{echo.port}",
                      "    retries 2\n    option redispatch")),
           wait_ports=[port], wait_unix=[sock])
    for i in range(10):
        assert echo_roundtrip(port, f"{i}\n".encode()) == f"{i}\n".encode()
    assert echo.connections == 10

    def counters():
        rows = show_stat(str(sock))
        return stat_row(rows, "be", "BACKEND"), stat_row(rows, "be", "s1"), stat_row(rows, "be", "s2")
    be, s1, s2 = counters()
    # How many attempts were retries before the redispatch is the implementation's choice
    # (haproxy 2.6 redispatches a refused connection at once: wretr 0); the redispatches
    # must be counted on the backend and on the server that failed.
    assert stat_int(be, "wredis") > 0, be
    assert stat_int(s1, "wredis") > 0 or stat_int(s1, "wretr") > 0, s1
    assert stat_int(be, "stot") == 10, be
    assert stat_int(s2, "stot") == 10, s2
    # Every session got through in the end, so none counts as a failed connection (econ counts
    # sessions whose attempts were all exhausted, as in haproxy).
    assert stat_int(be, "econ") == 0, be


def test_all_servers_refuse_client_is_closed_and_failure_counted(cfg, sluice, short_tmp):
    port, sock, dead = free_port(), short_tmp / "stats.sock", refused_port()
    sluice(cfg(config(port, sock, f"    server s1 127.0.0.1:{dead}", "    retries 1")),
           wait_ports=[port], wait_unix=[sock])
    with connect(port) as c:
        c.sendall(b"anyone there?\n")
        t0 = time.monotonic()
        closed_at = wait_closed(c, timeout=5)
        assert closed_at - t0 < 3.0
    rows = wait_until(lambda: (lambda r: r if stat_int(stat_row(r, "be", "BACKEND"), "econ") >= 1 else None)(show_stat(str(sock))),
                      5, message="econ on the backend")
    assert stat_int(stat_row(rows, "be", "BACKEND"), "econ") == 1
    assert stat_int(stat_row(rows, "be", "s1"), "econ") == 1
    assert stat_int(stat_row(rows, "be", "s1"), "wretr") == 1

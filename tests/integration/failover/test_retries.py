"""Connection failures: retries, redispatch, and what the client sees when all fail."""
import socket
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
    # Two usable servers and roundrobin: a refused connection is redispatched at once and
    # counted as a redispatch only (haproxy 2.6: wretr 0), on the backend and the server left.
    assert stat_int(be, "wredis") > 0, be
    assert stat_int(s1, "wredis") == stat_int(be, "wredis"), s1
    assert stat_int(be, "wretr") == 0 and stat_int(s1, "wretr") == 0, (be, s1)
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


def test_non_hash_redispatch_goes_at_once(cfg, sluice, servers, short_tmp):
    # HAProxy's stream_choose_redispatch: roundrobin with more than one usable server leaves a
    # refused server at once, without retrying it after the 1 s turn-around first.
    port, sock, dead = free_port(), short_tmp / "stats.sock", refused_port()
    live1, live2 = servers.echo(), servers.echo()
    sluice(cfg(config(port, sock,
                      f"    server dead 127.0.0.1:{dead}\n"
                      f"    server live1 127.0.0.1:{live1.port}\n"
                      f"    server live2 127.0.0.1:{live2.port}",
                      "    retries 3\n    option redispatch")),
           wait_ports=[port], wait_unix=[sock])
    for i in range(6):
        t0 = time.monotonic()
        assert echo_roundtrip(port, f"{i}\n".encode()) == f"{i}\n".encode()
        took = time.monotonic() - t0
        assert took < 0.5, f"connection {i} took {took:.2f}s"
    assert live1.connections + live2.connections == 6
    rows = show_stat(str(sock))
    be, d = stat_row(rows, "be", "BACKEND"), stat_row(rows, "be", "dead")
    assert stat_int(be, "wredis") >= 1, be
    assert stat_int(d, "wredis") == stat_int(be, "wredis"), d
    assert stat_int(be, "wretr") == 0, be
    for sv in ("dead", "live1", "live2"):
        assert stat_int(stat_row(rows, "be", sv), "wretr") == 0, sv
    assert stat_int(be, "econ") == 0, be


def test_hash_retries_the_same_server_before_redispatch(cfg, sluice, servers, short_tmp):
    # balance source ties a client to its server: the refused one is retried (wretr, after the
    # turn-around) until the redispatch interval (-1: the last retry) moves the client.
    port, sock, dead = free_port(), short_tmp / "stats.sock", refused_port()
    live = servers.echo()
    text = config(port, sock, f"    server dead 127.0.0.1:{dead}\n    server live 127.0.0.1:{live.port}",
                  "    retries 2\n    option redispatch\n    timeout connect 200ms")
    sluice(cfg(text.replace("balance roundrobin", "balance source")),
           wait_ports=[port], wait_unix=[sock])
    slow = 0
    for i in range(2, 22):
        # The source address is what is hashed: each client comes from another loopback IP.
        with socket.socket() as c:
            c.settimeout(5)
            c.bind((f"127.0.0.{i}", 0))
            c.connect(("127.0.0.1", port))
            t0 = time.monotonic()
            c.sendall(b"x\n")
            assert c.recv(16) == b"x\n"
            if time.monotonic() - t0 >= 0.15:
                slow += 1
    be = stat_row(show_stat(str(sock)), "be", "BACKEND")
    hits = stat_int(be, "wredis")
    assert hits >= 1, be
    # Per client that hashed to the dead server: one retry of it after the turn-around
    # (bounded by timeout connect), then the redispatch on the last retry.
    assert stat_int(be, "wretr") == hits, be
    assert slow == hits, (slow, be)


def test_leastconn_redispatch_waits_the_turn_around(cfg, sluice, servers, short_tmp):
    # HAProxy 2.6 (back_handle_st_cer) skips the turn-around after a refusal only for a
    # round-robin kind with more than one active server: leastconn moves to another server at
    # once (a redispatch, no retry of the refused one) but after the turn-around, here bounded
    # by timeout connect.
    port, sock, dead = free_port(), short_tmp / "stats.sock", refused_port()
    live1, live2 = servers.echo(), servers.echo()
    text = config(port, sock,
                  f"    server dead 127.0.0.1:{dead}\n"
                  f"    server live1 127.0.0.1:{live1.port}\n"
                  f"    server live2 127.0.0.1:{live2.port}",
                  "    retries 3\n    option redispatch\n    timeout connect 300ms")
    sluice(cfg(text.replace("balance roundrobin", "balance leastconn")),
           wait_ports=[port], wait_unix=[sock])
    slow = 0
    for i in range(6):
        t0 = time.monotonic()
        assert echo_roundtrip(port, f"{i}\n".encode()) == f"{i}\n".encode()
        took = time.monotonic() - t0
        assert took < 0.9, f"connection {i} took {took:.2f}s: more than one turn-around"
        if took >= 0.25:
            slow += 1
    rows = show_stat(str(sock))
    be = stat_row(rows, "be", "BACKEND")
    assert stat_int(be, "wredis") >= 1, be
    assert stat_int(be, "wretr") == 0, be
    assert slow == stat_int(be, "wredis"), (slow, be)

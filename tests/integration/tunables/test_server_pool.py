"""The idle server-connection pool's server options, seen from the server: `max-reuse` (a
connection carries at most 1 + N requests), `pool-purge-delay` (an idle connection older
than it is not reused) and `pool-max-conn 0` (nothing is kept). The origin numbers its
connections (X-Conn), so the sequence of numbers says which requests shared one.

Against HAProxy 3.5 all pass but test_max_reuse: its documentation says that the lower layers
may not respect max-reuse ("at least HTTP/2 connections to servers will"), and its HTTP/1
server connections do not; sluice does what the option asks."""
from __future__ import annotations

import socket
import time


from clients import exchange, recv_exact, recv_head
from sluice_harness import free_port


def read_response(c: socket.socket) -> bytes:
    """One response with a Content-Length, read whole from a kept-alive connection."""
    got = recv_head(c)
    head, _, body = got.partition(b"\r\n\r\n")
    length = next(int(l.split(b":")[1]) for l in head.lower().split(b"\r\n")
                  if l.startswith(b"content-length:"))
    return got + recv_exact(c, length - len(body))


def conn_numbers(port: int, count: int, pause: float = 0.0) -> list[int]:
    """The origin's connection number for each of `count` requests, each on its own client
    connection (so that only the server side may be shared)."""
    out = []
    for i in range(count):
        if i and pause:
            time.sleep(pause)
        got = exchange(port, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        head = got.partition(b"\r\n\r\n")[0].lower()
        line = next(l for l in head.split(b"\r\n") if l.startswith(b"x-conn:"))
        out.append(int(line.split(b":")[1]))
    return out


def start(cfg, sluice, origin, server_opts: str, reuse: str = "always") -> int:
    port = free_port()
    text = f"""
global
    nbthread 1
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend f
    bind 127.0.0.1:{port}
    default_backend b
backend b
    http-reuse {reuse}
    server o 127.0.0.1:{origin.port} {server_opts}
"""
    sluice(cfg(text), wait_ports=[port])
    return port


def test_max_reuse(cfg, sluice, origin):
    port = start(cfg, sluice, origin, "max-reuse 1")
    assert conn_numbers(port, 4) == [1, 1, 2, 2]


def test_max_reuse_private_connections(cfg, sluice, origin):
    """http-reuse never: a client's connection to the server serves that client alone, and
    max-reuse still bounds the requests it carries."""
    port = start(cfg, sluice, origin, "max-reuse 1", reuse="never")
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        got = []
        for _ in range(4):
            c.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            head = read_response(c).partition(b"\r\n\r\n")[0].lower()
            line = next(l for l in head.split(b"\r\n") if l.startswith(b"x-conn:"))
            got.append(int(line.split(b":")[1]))
    assert got == [1, 1, 2, 2]


def test_unlimited_reuse_by_default(cfg, sluice, origin):
    port = start(cfg, sluice, origin, "")
    assert conn_numbers(port, 4) == [1, 1, 1, 1]


def test_pool_purge_delay(cfg, sluice, origin):
    port = start(cfg, sluice, origin, "pool-purge-delay 300ms")
    assert conn_numbers(port, 2, pause=0.1) == [1, 1]
    # Idle longer than the delay: purged, a new connection.
    time.sleep(0.9)
    assert conn_numbers(port, 1) == [2]


def test_pool_max_conn_zero(cfg, sluice, origin):
    port = start(cfg, sluice, origin, "pool-max-conn 0")
    assert conn_numbers(port, 3) == [1, 2, 3]

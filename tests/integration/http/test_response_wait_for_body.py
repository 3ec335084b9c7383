"""`http-response wait-for-body time <t> [at-least <n>]`: the response rules after it see the
body (res.body, res.body_len, res.body_size) once it is whole, `at-least` bytes of it came, the
buffer is full or the server closed; its time over first is a 504 (`sH--`) and the client
connection stays. The expected behaviour is HAProxy 3.5-dev5's: this file passes with
SLUICE_BIN pointing at a wrapper that runs it with -db."""
from __future__ import annotations

import socket
import time

import pytest

import sluice_harness as h
from fake_servers import request_heads
from hutil import Conn
from sluice_harness import free_port, slow_factor, wait_until

BODY = b"0123456789abcdefghij"
BIG = 100000


def big_body() -> bytes:
    return bytes((i * 7) % 251 for i in range(BIG))


def slow_origin(c: socket.socket, srv: h.TcpServer) -> None:
    """Answers each request of a keep-alive connection by its path; the pauses let the proxy
    see the body come in pieces. Every wait here is bounded."""
    for head in request_heads(c):
        path = head.split(b" ")[1].decode()
        srv.add_result(path)
        cl = b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n"
        if path == "/pieces":        # the head and 5 bytes, the rest 0.1s later
            c.sendall(cl % len(BODY) + BODY[:5])
            time.sleep(0.1)
            c.sendall(BODY[5:])
        elif path == "/least":       # 12 bytes, the rest 1s later
            c.sendall(cl % len(BODY) + BODY[:12])
            time.sleep(1.0)
            c.sendall(BODY[12:])
        elif path == "/slow":        # 5 bytes, the rest 1.5s later
            c.sendall(cl % len(BODY) + BODY[:5])
            time.sleep(1.5)
            c.sendall(BODY[5:])
        elif path == "/cut":         # 5 bytes, then the close
            c.sendall(cl % len(BODY) + BODY[:5])
            time.sleep(0.2)
            return
        elif path == "/chunked":
            c.sendall(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\n01234\r\n")
            time.sleep(0.1)
            c.sendall(b"f\r\n56789abcdefghij\r\n0\r\n\r\n")
        elif path in ("/big", "/bigchunked"):
            data = big_body()
            if path == "/big":
                c.sendall(cl % BIG)
                pieces = [data[:50000], data[50000:]]
            else:
                c.sendall(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
                pieces = [b"%x\r\n%s\r\n" % (len(p), p) for p in (data[:50000], data[50000:])]
                pieces[-1] += b"0\r\n\r\n"
            c.sendall(pieces[0])
            time.sleep(0.2)
            c.sendall(pieces[1])
        elif path == "/untilclose":
            c.sendall(b"HTTP/1.1 200 OK\r\n\r\n" + BODY[:5])
            time.sleep(0.1)
            c.sendall(BODY[5:])
            return
        elif path == "/head":
            c.sendall(cl % len(BODY))
        else:
            c.sendall(cl % len(BODY) + BODY)


def get(c: Conn, path: str, timeout: float = 5.0):
    c.send(f"GET {path} HTTP/1.1\r\nHost: t\r\n\r\n".encode())
    start = time.monotonic()
    r = c.response(timeout=timeout)
    return r, time.monotonic() - start


@pytest.fixture
def proxy(cfg, sluice, servers):
    """Starts the proxy in front of slow_origin; returns (sluice, port of `wait` (no
    at-least), port of `least` (at-least 10), port of `cond` (a condition that does not
    match))."""
    origin = servers.add(h.TcpServer(slow_origin))
    ports = [free_port() for _ in range(3)]
    text = f"""
global
    tune.bufsize 16384
{h.HTTP_DEFAULTS}
    log stdout format raw local0
    option httplog
frontend fwait
    bind 127.0.0.1:{ports[0]}
    default_backend wait
frontend fleast
    bind 127.0.0.1:{ports[1]}
    http-response set-header X-Fe %[res.body_len]
    default_backend least
frontend fcond
    bind 127.0.0.1:{ports[2]}
    default_backend cond
backend wait
    http-response wait-for-body time 500ms
    http-response set-header X-Len %[res.body_len]
    http-response set-header X-Body %[res.body] if {{ res.body_len lt 100 }}
    http-response set-header X-Size %[res.body_size]
    server o 127.0.0.1:{origin.port}
backend least
    http-response wait-for-body time 3s at-least 10
    http-response set-header X-Len %[res.body_len]
    server o 127.0.0.1:{origin.port}
backend cond
    http-response wait-for-body time 300ms if {{ status 404 }}
    http-response set-header X-Len %[res.body_len]
    server o 127.0.0.1:{origin.port}
"""
    s = sluice(cfg(text), wait_ports=ports)
    return s, ports


def log_line(s, path: str) -> str:
    wait_until(lambda: f"GET {path} " in s.stdout(), 5, message=s.describe)
    return next(l for l in s.stdout().splitlines() if f"GET {path} " in l)


def test_later_rules_see_the_body(proxy):
    """The rules after the wait see the whole body; it reaches the client intact, on a
    connection that stays usable."""
    s, ports = proxy
    with Conn(ports[0]) as c:
        for _ in range(2):
            r, took = get(c, "/pieces")
            assert r.status == 200 and r.body == BODY, r
            assert r.header("x-len") == "20" and r.header("x-body") == BODY.decode(), r
            assert r.header("x-size") == "20", r
            assert took < 0.45 * slow_factor(), took
        # A body that runs until the close is awaited until then.
        r, _ = get(c, "/untilclose")
        assert r.status == 200 and r.body == BODY and r.header("x-len") == "20", r
    with Conn(ports[0]) as c:
        # No body: nothing to wait for.
        c.send(b"HEAD /head HTTP/1.1\r\nHost: t\r\n\r\n")
        r = c.response(method="HEAD")
        assert r.status == 200 and r.header("x-len") == "0", r
    assert " ---- " in log_line(s, "/pieces")


def test_at_least(proxy):
    """`at-least 10`: the rules run once 10 bytes came (the head leaves then), the rest
    follows."""
    s, ports = proxy
    with Conn(ports[1]) as c:
        c.send(b"GET /least HTTP/1.1\r\nHost: t\r\n\r\n")
        start = time.monotonic()
        head = c._line(start + 5)
        took = time.monotonic() - start
        assert head.startswith(b"HTTP/1.1 200 "), head
        assert took < 0.8 * slow_factor(), took
        c.buf[:0] = head
        r = c.response()
        assert r.header("x-len") == "12" and r.header("x-fe") == "12", r
        assert r.body == BODY, r
        # The whole body before the time: the rules see all of it.
        r, _ = get(c, "/pieces")
        assert r.header("x-len") == "20" and r.body == BODY, r


def test_time_over(proxy):
    """The time over before the body: a 504 logged sH--, the server's response dropped and
    the client connection kept."""
    s, ports = proxy
    with Conn(ports[0]) as c:
        r, took = get(c, "/slow")
        assert r.status == 504, r
        assert 0.45 < took < 1.4 * slow_factor(), took
        r, _ = get(c, "/pieces")
        assert r.status == 200 and r.body == BODY and r.header("x-len") == "20", r
    line = log_line(s, "/slow")
    assert " 504 " in line and " sH-- " in line, line
    # A wait-for-body whose condition does not match does not wait: the rules see what came
    # with the head.
    with Conn(ports[2]) as c:
        r, took = get(c, "/slow")
        assert r.status == 200 and r.body == BODY, r
        assert int(r.header("x-len")) < 20, r


def test_server_closes_mid_body(proxy):
    """The server closing before the end stops the wait: the rules see what came, the client
    gets it and the close (SD--)."""
    s, ports = proxy
    with Conn(ports[0]) as c:
        c.send(b"GET /cut HTTP/1.1\r\nHost: t\r\n\r\n")
        deadline = time.monotonic() + 5
        got = bytearray()
        with pytest.raises(EOFError):
            while True:
                c._fill(deadline)
                got += c.buf
                c.buf.clear()
        head, _, body = bytes(got).partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 "), got
        assert b"\r\nx-len: 5\r\n" in head and body == BODY[:5], got
    assert " SD-- " in log_line(s, "/cut")


def test_chunked(proxy):
    """A chunked body is decoded for the rules and still goes out whole."""
    s, ports = proxy
    with Conn(ports[0]) as c:
        r, _ = get(c, "/chunked")
        assert r.status == 200 and r.chunked and r.body == BODY, r
        assert r.header("x-len") == "20" and r.header("x-body") == BODY.decode(), r


@pytest.mark.parametrize("path", ["/big", "/bigchunked"])
def test_body_larger_than_the_buffer(proxy, path):
    """A body larger than the buffer: the wait ends when the buffer is full (the rules see
    part of it), the whole body reaches the client, the connection goes on."""
    s, ports = proxy
    with Conn(ports[0]) as c:
        r, took = get(c, path)
        assert r.status == 200 and r.body == big_body(), (r.status, len(r.body))
        assert 8000 < int(r.header("x-len")) < 16384, r
        assert took < 0.45 * slow_factor(), took
        r, _ = get(c, "/pieces")
        assert r.status == 200 and r.header("x-len") == "20", r

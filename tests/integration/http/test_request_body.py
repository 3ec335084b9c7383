"""The request body read before the rules (`option http-buffer-request`): req.body and its
length in rules, a body that arrives in pieces (Content-Length and chunked), `Expect:
100-continue` answered by the proxy (the server is not asked again), a body larger than a
buffer (the rules see its beginning, the server gets all of it), and a body that never comes
(408 after `timeout http-request`). The answers are HAProxy 3.5-dev5's (this file passes with
SLUICE_BIN pointing at a wrapper that runs it with -db)."""
from __future__ import annotations

import socket
import time


from http_origin import pattern_bytes, pattern_sha256
from sluice_harness import HTTP_DEFAULTS, free_port

RETURN = ('http-request return status 200 content-type text/plain lf-string '
          '"len=%[req.body_len] body=%[req.body] p=%[req.body_param(p)]\\n" if { path /show }')


def config(port: int, port_plain: int, origin_port: int) -> str:
    return f"""
{HTTP_DEFAULTS}
    timeout http-request 1500ms
frontend buffered
    bind 127.0.0.1:{port}
    option http-buffer-request
    {RETURN}
    http-request set-header x-body-len %[req.body_len]
    default_backend be
frontend plain
    bind 127.0.0.1:{port_plain}
    {RETURN}
    default_backend be
backend be
    server o 127.0.0.1:{origin_port}
"""


def send_pieces(port: int, pieces: list[bytes], gap: float = 0.15,
                timeout: float = 5) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as c:
        for i, p in enumerate(pieces):
            if i:
                time.sleep(gap)
            c.sendall(p)
        return read_response(c)


def read_response(c: socket.socket) -> bytes:
    """One response, read up to the end of its body (Content-Length), or to the close."""
    got = b""
    while True:
        head, sep, body = got.partition(b"\r\n\r\n")
        if sep and b"\r\n" in head and not head.startswith(b"HTTP/1.1 1"):
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length" and len(body) >= int(value):
                    return got
        elif sep and head.startswith(b"HTTP/1.1 1"):
            got = body
            continue
        d = c.recv(65536)
        if not d:
            return got
        got += d


def body_of(raw: bytes) -> bytes:
    return raw.partition(b"\r\n\r\n")[2]


HEAD = b"POST /show HTTP/1.1\r\nHost: t\r\nConnection: close\r\n"


def test_rules_see_the_whole_body(cfg, sluice, origin):
    port, plain = free_port(), free_port()
    sluice(cfg(config(port, plain, origin.port)), wait_ports=[port, plain])
    pieces = [HEAD + b"Content-Length: 20\r\n\r\np=0123", b"456789abcd", b"efgh"]
    assert body_of(send_pieces(port, pieces)) == b"len=20 body=p=0123456789abcdefgh p=0123456789abcdefgh\n"
    # Without the option the rules see what came with the head (answered at once: the rest
    # of the body is not sent).
    assert body_of(send_pieces(plain, pieces[:1])) == b"len=6 body=p=0123 p=0123\n"
    chunked = [HEAD + b"Transfer-Encoding: chunked\r\n\r\n5\r\np=abc\r\n", b"3\r\ndef\r\n0\r\n\r\n"]
    assert body_of(send_pieces(port, chunked)) == b"len=8 body=p=abcdef p=abcdef\n"


def test_expect_continue_answered_by_the_proxy(cfg, sluice, origin):
    port, plain = free_port(), free_port()
    sluice(cfg(config(port, plain, origin.port)), wait_ports=[port, plain])
    body = b"x" * 100
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(b"POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\n"
                  b"Content-Length: 100\r\nConnection: close\r\n\r\n")
        assert c.recv(4096) == b"HTTP/1.1 100 Continue\r\n\r\n"
        c.sendall(body)
        got = b""
        while d := c.recv(65536):
            got += d
    assert got.startswith(b"HTTP/1.1 200 "), got
    assert b"HTTP/1.1 100" not in got, got   # one 100 only: the server was not asked
    echoed = body_of(got).lower()
    assert b"expect:" not in echoed, echoed
    assert b"x-body-len: 100\r\n" in echoed and echoed.endswith(body), echoed


def test_body_larger_than_a_buffer(cfg, sluice, origin):
    port, plain = free_port(), free_port()
    sluice(cfg(config(port, plain, origin.port)), wait_ports=[port, plain])
    n = 200_000
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        c.sendall(b"POST /sink HTTP/1.1\r\nHost: t\r\nConnection: close\r\n"
                  + f"Content-Length: {n}\r\n\r\n".encode())
        c.sendall(b"".join(pattern_bytes(n)))
        got = b""
        while d := c.recv(65536):
            got += d
    assert body_of(got) == f"{n} {pattern_sha256(n)}\n".encode(), got[:300]
    # The rules saw the beginning: what a buffer held.
    seen = int(origin.requests()[-1].header("x-body-len"))
    assert 1000 < seen < n, seen


def test_body_that_never_comes(cfg, sluice, origin):
    port, plain = free_port(), free_port()
    sluice(cfg(config(port, plain, origin.port)), wait_ports=[port, plain])
    start = time.monotonic()
    got = send_pieces(port, [HEAD + b"Content-Length: 20\r\n\r\n0123"], timeout=10)
    took = time.monotonic() - start
    assert got.startswith(b"HTTP/1.1 408 Request Time-out\r\n"), got
    # sluice bounds the wait by `timeout http-request`; HAProxy 3.5 waits longer (about
    # `timeout client` more).
    assert 1.0 < took < 15, took
    assert origin.requests() == []

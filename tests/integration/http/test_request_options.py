"""Request options of real configurations: `http-request wait-for-body time <t> [at-least <n>]`,
`option http-ignore-probes`, `option http-restrict-req-hdr-names preserve|delete|reject` and
`option abortonclose`. The expected behaviour is HAProxy 3.5-dev5's (this file passes with
SLUICE_BIN pointing at a wrapper that runs it with -db)."""
from __future__ import annotations

import socket
import time


import sluice_harness as h
from sluice_harness import free_port, wait_until

SHOW = ('http-request return status 200 content-type text/plain lf-string '
        '"len=%[req.body_len]\\n"')


def complete(got: bytes) -> bool:
    """A whole response with a Content-Length body is in `got`."""
    head, sep, body = got.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n")[1:] if sep else []:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value)
    return False


def talk(port: int, pieces: list[bytes], gap: float = 0.0, timeout: float = 8) -> tuple[bytes, float]:
    """Sends the pieces `gap` apart, reads until a whole response or the close; (bytes,
    seconds from the first piece). The proxy may keep the connection open afterwards to read
    the rest of an unfinished body."""
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as c:
        for i, p in enumerate(pieces):
            if i and gap:
                time.sleep(gap)
            c.sendall(p)
        got = b""
        try:
            while not complete(got) and (d := c.recv(65536)):
                got += d
        except (ConnectionResetError, socket.timeout):
            pass
    return got, time.monotonic() - start


HEAD = b"POST / HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: 20\r\n\r\n"


def test_wait_for_body(cfg, sluice):
    """Until the whole body, a full buffer, or `at-least` bytes; the time over first is a
    408."""
    port, port2 = free_port(), free_port()
    text = f"""
{h.HTTP_DEFAULTS}
    timeout http-request 3s
frontend least
    bind 127.0.0.1:{port}
    http-request wait-for-body time 500ms at-least 10
    {SHOW}
frontend plain
    bind 127.0.0.1:{port2}
    http-request wait-for-body time 500ms
    {SHOW}
"""
    sluice(cfg(text), wait_ports=[port, port2])
    # The whole body before the time: at once.
    got, took = talk(port, [HEAD + b"01234", b"56789abcdefghij"], gap=0.1)
    assert got.endswith(b"len=20\n") and took < 0.45, (got, took)
    # at-least met: the rules see what came, at once.
    got, took = talk(port, [HEAD + b"0123456789ab"])
    assert got.endswith(b"len=12\n") and took < 0.45, (got, took)
    # at-least not met when the time is over: a 408.
    got, took = talk(port, [HEAD + b"01234"])
    assert got.startswith(b"HTTP/1.1 408 ") and 0.45 < took < 2.5, (got, took)
    # No at-least: the whole body in time, or a 408.
    got, took = talk(port2, [HEAD + b"01234"])
    assert got.startswith(b"HTTP/1.1 408 ") and 0.45 < took < 2.5, (got, took)
    got, took = talk(port2, [HEAD + b"01234", b"56789abcdefghij"], gap=0.1)
    assert got.endswith(b"len=20\n") and took < 0.45, (got, took)


def test_ignore_probes(cfg, sluice, short_tmp):
    port, port2 = free_port(), free_port()
    sock = f"{short_tmp}/s.sock"
    text = f"""
global
    stats socket {sock} level admin
{h.HTTP_DEFAULTS}
    log stdout format raw local0
    option httplog
    timeout http-request 700ms
frontend probes
    bind 127.0.0.1:{port}
    option http-ignore-probes
    {SHOW}
frontend noprobes
    bind 127.0.0.1:{port2}
    {SHOW}
"""
    s = sluice(cfg(text), wait_ports=[port, port2])
    got, took = talk(port, [])
    assert got == b"" and 0.6 < took < 3, (got, took)
    got, _ = talk(port2, [])
    assert got.startswith(b"HTTP/1.1 408 "), got
    # A request that started is no probe: 408 as usual.
    got, _ = talk(port, [b"GET / HT"])
    assert got.startswith(b"HTTP/1.1 408 "), got
    wait_until(lambda: s.stdout().count("<BADREQ>") >= 2, 5, message=s.describe)
    time.sleep(0.2)
    lines = [l for l in s.stdout().splitlines() if "<BADREQ>" in l]
    assert len(lines) == 2 and sum(" probes " in l for l in lines) == 1, lines
    rows = h.show_stat(sock)
    assert h.stat_row(rows, "probes", "FRONTEND")["ereq"] == "1"
    assert h.stat_row(rows, "noprobes", "FRONTEND")["ereq"] == "1"


def test_restrict_request_header_names(cfg, sluice, origin):
    ports = [free_port() for _ in range(4)]
    text = f"""
{h.HTTP_DEFAULTS}
frontend del
    bind 127.0.0.1:{ports[0]}
    option http-restrict-req-hdr-names delete
    http-request return status 200 content-type text/plain lf-string "rules=%[req.hdr(x_a)]\\n" if {{ path /rules }}
    default_backend be
frontend rej
    bind 127.0.0.1:{ports[1]}
    option http-restrict-req-hdr-names reject
    default_backend be
frontend bdel
    bind 127.0.0.1:{ports[2]}
    default_backend bedel
frontend pres
    bind 127.0.0.1:{ports[3]}
    option http-restrict-req-hdr-names preserve
    default_backend be
backend be
    server o 127.0.0.1:{origin.port}
backend bedel
    option http-restrict-req-hdr-names delete
    server o 127.0.0.1:{origin.port}
"""
    sluice(cfg(text), wait_ports=ports)
    req = b"GET /echo HTTP/1.1\r\nHost: x\r\nx_a: 1\r\nx.b: 2\r\nx-c: 3\r\nAb9: 4\r\nConnection: close\r\n\r\n"

    def names(port: int) -> list[bytes]:
        got, _ = talk(port, [req])
        assert got.startswith(b"HTTP/1.1 200 "), got
        echoed = got.partition(b"\r\n\r\n")[2].partition(b"\r\n\r\n")[0].split(b"\r\n")[1:]
        return [l.split(b":")[0].lower() for l in echoed]

    assert b"x_a" not in names(ports[0]) and b"x.b" not in names(ports[0])
    assert {b"x-c", b"ab9"} <= set(names(ports[0]))
    assert b"x_a" not in names(ports[2]) and b"x-c" in names(ports[2])
    assert {b"x_a", b"x.b"} <= set(names(ports[3]))
    got, _ = talk(ports[1], [req])
    assert got.startswith(b"HTTP/1.1 403 Forbidden\r\n"), got
    got, _ = talk(ports[1], [req.replace(b"x_a: 1\r\nx.b: 2\r\n", b"")])
    assert got.startswith(b"HTTP/1.1 200 "), got
    # The rules still see the fields: the restriction applies to what leaves.
    got, _ = talk(ports[0], [req.replace(b"/echo", b"/rules")])
    assert got.endswith(b"rules=1\n"), got


def test_abortonclose(cfg, sluice, origin, short_tmp):
    port = free_port()
    text = f"""
{h.HTTP_DEFAULTS}
    log stdout format raw local0
    option httplog
    timeout queue 5s
frontend f
    bind 127.0.0.1:{port}
    default_backend be
backend be
    option abortonclose
    server o 127.0.0.1:{origin.port} maxconn 1
"""
    s = sluice(cfg(text), wait_ports=[port])
    # The only slot is taken by a slow request; the second waits in the queue and its client
    # closes: it is dropped, never sent.
    slow = socket.create_connection(("127.0.0.1", port), timeout=5)
    slow.sendall(b"GET /slow?ms=1500 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    wait_until(lambda: len(origin.requests()) == 1, 5)
    c = socket.create_connection(("127.0.0.1", port), timeout=5)
    c.sendall(b"GET /second HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    time.sleep(0.3)
    c.shutdown(socket.SHUT_WR)
    time.sleep(0.3)
    c.close()
    got = b""
    while d := slow.recv(65536):
        got += d
    slow.close()
    assert got.startswith(b"HTTP/1.1 200 "), got
    wait_until(lambda: "/second" in s.stdout(), 5, message=s.describe)
    time.sleep(0.3)
    assert [r.path for r in origin.requests()] == ["/slow"]
    line = next(l for l in s.stdout().splitlines() if "/second" in l)
    assert " CQ-- " in line, line

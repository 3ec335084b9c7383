"""option checkcache, prefer-last-server, idle-close-on-response,
accept-unsafe-violations-in-http-response and disable-h2-upgrade, as HAProxy 3.5 behaves with
them (each case was measured on it). Passes with SLUICE_BIN pointing at HAProxy 3.5 -db, except
where a comment says why not."""
from __future__ import annotations

import signal
import socket
import threading
import time

from fake_servers import request_heads
from sluice_harness import HTTP_DEFAULTS, free_port, sluice_bin, wait_until


class ScriptedOrigin:
    """Answers each request with the raw response `responses[path]` (a default 200 that names
    the origin otherwise) and keeps the connection open (keep-alive)."""

    def __init__(self, name: str, responses: dict[str, bytes] | None = None):
        self.name = name
        self.responses = responses or {}
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.conns = 0
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stopped:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns += 1
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c: socket.socket):
        try:
            for head in request_heads(c):
                path = head.split(b" ")[1].decode()
                body = self.name.encode()
                c.sendall(self.responses.get(path, b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s"
                                             % (len(body), body)))
        except OSError:
            pass
        finally:
            c.close()

    def stop(self):
        self.stopped = True
        self.sock.close()


def on_off(p_on: int, p_off: int, lines: str, origin_port: int) -> str:
    """Two frontends to one backend: `on` with `lines`, `off` without them."""
    return f"""
frontend on
    bind 127.0.0.1:{p_on}
    {lines}
    default_backend b
frontend off
    bind 127.0.0.1:{p_off}
    default_backend b
backend b
    server s1 127.0.0.1:{origin_port}
"""


def read_response(c: socket.socket, method: str = "GET") -> tuple[bytes, bytes]:
    """One response with a Content-Length body: (head, body)."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = c.recv(65536)
        assert d, f"closed before a response: {buf!r}"
        buf += d
    head, body = buf.split(b"\r\n\r\n", 1)
    n = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            n = int(v)
    if method == "HEAD":
        n = 0
    while len(body) < n:
        d = c.recv(65536)
        assert d
        body += d
    return head, body


def ask(port: int, path: str, method: str = "GET") -> tuple[bytes, bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(f"{method} {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        return read_response(c, method)


def resp(status: str, *fields: str) -> bytes:
    return ("HTTP/1.1 " + status + "\r\nContent-Length: 2\r\n" + "".join(f + "\r\n" for f in fields)
            + "\r\nok").encode()


CACHE_CASES = {
    # path: (response, blocked for a GET)
    "/maxage": (resp("200 OK", "Set-Cookie: a=b", "Cache-Control: max-age=60"), True),
    "/expires": (resp("200 OK", "Set-Cookie: a=b", "Expires: Thu, 01 Dec 2039 16:00:00 GMT"), True),
    "/etag": (resp("200 OK", "Set-Cookie: a=b", 'ETag: "x"'), True),
    "/lastmod": (resp("200 OK", "Set-Cookie: a=b", "Last-Modified: Thu, 01 Dec 2020 16:00:00 GMT"), True),
    "/404": (resp("404 Not Found", "Set-Cookie: a=b", "Cache-Control: max-age=60"), True),
    "/301": (resp("301 Moved", "Set-Cookie: a=b", "Cache-Control: max-age=60", "Location: /x"), True),
    "/pubnc": (resp("200 OK", "Set-Cookie: a=b", "Cache-Control: no-store, public, max-age=5"), True),
    "/plain": (resp("200 OK", "Set-Cookie: a=b"), False),            # no freshness, no validator
    "/public": (resp("200 OK", "Set-Cookie: a=b", "Cache-Control: public"), False),
    "/nocookie": (resp("200 OK", "Cache-Control: max-age=60"), False),
    "/private": (resp("200 OK", "Set-Cookie: a=b", "Cache-Control: private, max-age=60"), False),
    "/nocache": (resp("200 OK", "Set-Cookie: a=b", "Cache-Control: max-age=60", "Cache-Control: no-cache"), False),
    "/nostore": (resp("200 OK", "Set-Cookie: a=b", "Cache-Control: no-store, max-age=60"), False),
    "/maxage0": (resp("200 OK", "Set-Cookie: a=b", "Cache-Control: max-age=0"), False),
    "/smaxage0": (resp("200 OK", "Set-Cookie: a=b", "Cache-Control: s-maxage=0"), False),
    "/nocachesc": (resp("200 OK", "Set-Cookie: a=b", 'Cache-Control: max-age=60, no-cache="set-cookie"'), False),
    "/pragma": (resp("200 OK", "Set-Cookie: a=b", "Pragma: no-cache", "Cache-Control: max-age=60"), False),
    "/302": (resp("302 Found", "Set-Cookie: a=b", "Cache-Control: max-age=60", "Location: /x"), False),
    "/500": (resp("500 Oops", "Set-Cookie: a=b", "Cache-Control: max-age=60"), False),
}


def test_checkcache_blocks_cacheable_cookies(cfg, sluice):
    origin = ScriptedOrigin("s1", {p: r for p, (r, _) in CACHE_CASES.items()})
    port, port2 = free_port(), free_port()
    s = sluice(cfg(f"""
global
    log stderr format raw local0
{HTTP_DEFAULTS}
    log global
    option httplog
frontend f
    bind 127.0.0.1:{port}
    default_backend b
frontend f2
    bind 127.0.0.1:{port2}
    default_backend plainb
backend b
    option checkcache
    server s1 127.0.0.1:{origin.port}
backend plainb
    server s1 127.0.0.1:{origin.port}
"""), wait_ports=[port, port2])
    try:
        blocked = 0
        for path, (_, should_block) in CACHE_CASES.items():
            head, body = ask(port, path)
            if should_block:
                blocked += 1
                # sluice's page for the server's status; 500's when it has none (301).
                assert b"cache-control: no-cache" in head.lower(), (path, head)
                assert body.startswith(b"<html>"), (path, body)
                expect = b"404 Not Found" if path == "/404" else (
                    b"500 Internal Server Error" if path == "/301" else b"200 OK")
                assert head.startswith(b"HTTP/1.1 " + expect), (path, head)
            else:
                assert body == b"ok", (path, head, body)
            # Without the option, nothing is blocked.
            assert ask(port2, path)[1] == b"ok"
        # POST responses are never cacheable; HEAD and OPTIONS ones are.
        assert ask(port, "/maxage", "POST")[1] == b"ok"
        assert ask(port, "/maxage", "HEAD")[0].startswith(b"HTTP/1.1 200 OK\r\ncontent-length: 58")
        assert ask(port, "/maxage", "OPTIONS")[1].startswith(b"<html>")
        blocked += 2
        wait_until(lambda: s.stderr().count("Blocking cacheable cookie in response from instance b, "
                                            "server s1.") >= blocked, timeout=5)
        wait_until(lambda: s.stderr().count(" PH-- ") >= blocked, timeout=5)
        lines = [l for l in s.stderr().splitlines() if '"GET /404 ' in l and " f b/s1 " in l]
        assert lines and " 404 " in lines[0] and " PH-- " in lines[0], lines
    finally:
        origin.stop()


def test_prefer_last_server(cfg, sluice):
    o1, o2 = ScriptedOrigin("s1"), ScriptedOrigin("s2")
    p_on, p_off = free_port(), free_port()
    servers = f"""
    server s1 127.0.0.1:{o1.port}
    server s2 127.0.0.1:{o2.port}"""
    sluice(cfg(f"""
global
    nbthread 1
{HTTP_DEFAULTS}
frontend on
    bind 127.0.0.1:{p_on}
    default_backend b_on
frontend off
    bind 127.0.0.1:{p_off}
    default_backend b_off
backend b_on
    balance roundrobin
    http-reuse never
    option prefer-last-server
{servers}
backend b_off
    balance roundrobin
    http-reuse never
{servers}
"""), wait_ports=[p_on, p_off])
    try:
        def names(port: int) -> list[bytes]:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
                out = []
                for _ in range(6):
                    c.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                    out.append(read_response(c)[1])
                return out
        sticky = names(p_on)
        assert len(set(sticky)) == 1, sticky
        assert len(set(names(p_on))) == 1
        spread = names(p_off)
        assert set(spread) == {b"s1", b"s2"}, spread
    finally:
        o1.stop()
        o2.stop()


def test_idle_close_on_response(cfg, sluice):
    origin = ScriptedOrigin("s1")
    p_on, p_off = free_port(), free_port()
    s = sluice(cfg("global\n    nbthread 1\n" + HTTP_DEFAULTS + "    timeout http-keep-alive 10s\n" +
                   on_off(p_on, p_off, "option idle-close-on-response", origin.port)),
               wait_ports=[p_on, p_off])
    try:
        c_on = socket.create_connection(("127.0.0.1", p_on), timeout=5)
        c_off = socket.create_connection(("127.0.0.1", p_off), timeout=5)
        for c in (c_on, c_off):
            c.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert read_response(c)[1] == b"s1"
        s.signal(signal.SIGUSR1)   # soft stop
        time.sleep(2.5)            # past the idle connection's grace of one second
        # Without the option the idle connection was closed.
        c_off.settimeout(2)
        assert c_off.recv(100) == b""
        # With it, the next request is served, with connection: close, and the connection ends.
        c_on.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        head, body = read_response(c_on)
        assert body == b"s1"
        assert b"\r\nconnection: close" in head.lower(), head
        c_on.settimeout(2)
        assert c_on.recv(100) == b""
        c_on.close()
        c_off.close()
        assert s.wait_exit(timeout=5) == 0
    finally:
        origin.stop()


def test_accept_unsafe_violations_in_http_response(cfg, sluice):
    bad = {
        "/name": b"HTTP/1.1 200 OK\r\nX(a): 1\r\nX-b: 2\r\nContent-Length: 2\r\n\r\nok",
        "/space": b"HTTP/1.1 200 OK\r\nX-a : 1\r\nContent-Length: 2\r\n\r\nok",
        "/nul": b"HTTP/1.1 200 OK\r\nX-a: a\x00b\r\nContent-Length: 2\r\n\r\nok",
    }
    origin = ScriptedOrigin("s1", bad)
    p_on, p_off = free_port(), free_port()
    sluice(cfg(f"""
{HTTP_DEFAULTS}
frontend on
    bind 127.0.0.1:{p_on}
    default_backend relaxed
frontend off
    bind 127.0.0.1:{p_off}
    default_backend strict
backend relaxed
    option accept-unsafe-violations-in-http-response
    server s1 127.0.0.1:{origin.port}
backend strict
    server s1 127.0.0.1:{origin.port}
"""), wait_ports=[p_on, p_off])
    try:
        for path in bad:
            assert ask(p_off, path)[0].startswith(b"HTTP/1.1 502 "), path
            head, body = ask(p_on, path)
            assert head.startswith(b"HTTP/1.1 200 OK"), (path, head)
            assert body == b"ok"
        head, _ = ask(p_on, "/name")
        assert b"x(a)" not in head.lower() and b"x-b: 2" in head.lower(), head
        assert b"x-a" not in ask(p_on, "/space")[0].lower()
        assert b"x-a: a\x00b" in ask(p_on, "/nul")[0].lower()
    finally:
        origin.stop()


def test_disable_h2_upgrade_refuses_the_preface(cfg, sluice):
    origin = ScriptedOrigin("s1")
    p_on, p_off = free_port(), free_port()
    sluice(cfg(HTTP_DEFAULTS + on_off(p_on, p_off, "option disable-h2-upgrade\n    "
                                               "option http-use-proxy-header", origin.port)),
           wait_ports=[p_on, p_off])

    def preface(port: int) -> bytes:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
            c.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
            got = b""
            while d := c.recv(65536):
                got += d
            return got
    try:
        assert preface(p_on).startswith(b"HTTP/1.1 405 Method Not Allowed\r\n")
        # Without the option HAProxy switches to HTTP/2; sluice, which has none, refuses it.
        if "haproxy" not in sluice_bin():
            assert preface(p_off).startswith(b"HTTP/1.1 400 Bad request\r\n")
        assert origin.conns == 0
    finally:
        origin.stop()


TECL = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 99\r\n\r\n2\r\nok\r\n0\r\n\r\n"


def chunked_body(c: socket.socket) -> bytes:
    buf = b""
    while not buf.endswith(b"\r\n0\r\n\r\n"):
        d = c.recv(65536)
        assert d, buf
        buf += d
    return buf


def test_h1_globals(cfg, sluice):
    """h1-accept-payload-with-any-method admits HTTP/1.0 GET/HEAD/DELETE bodies (413 without);
    h1-do-not-close-on-insecure-transfer-encoding keeps the server connection of a response with
    both Transfer-Encoding and Content-Length (a new one per response without)."""
    for flags in (False, True):
        origin = ScriptedOrigin("s1", {"/tecl": TECL})
        port = free_port()
        glob = ("    h1-accept-payload-with-any-method\n"
                "    h1-do-not-close-on-insecure-transfer-encoding\n") if flags else ""
        s = sluice(cfg(f"""
global
    nbthread 1
{glob}
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{port}
    default_backend b
backend b
    server s1 127.0.0.1:{origin.port}
"""), wait_ports=[port])
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
                c.sendall(b"GET / HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc")
                got = b""
                while d := c.recv(65536):
                    got += d
            assert got.startswith(b"HTTP/1.1 200 OK" if flags else b"HTTP/1.1 413 "), got
            before = origin.conns
            with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
                for _ in range(3):
                    c.sendall(b"GET /tecl HTTP/1.1\r\nHost: x\r\n\r\n")
                    assert chunked_body(c).endswith(b"2\r\nok\r\n0\r\n\r\n")
            assert origin.conns - before == (1 if flags else 3)
        finally:
            s.kill()
            origin.stop()

"""`tcp-request content capture <expr> len <n>`: each rule declares the frontend's next request
capture slot and stores its sample there, cut to <n> bytes; %hr / %hrl and capture.req.hdr(<n>)
read the slots. Checked against HAProxy 3.5 by hand (the expected lines below are its output
for the same configurations) and, where Debian's haproxy (2.6) is installed, side by side in the
test: in TCP mode on the client's first bytes, and in HTTP mode, where the rule runs again for
each request of a keep-alive connection and the variable actions of content rules work too
(the transaction's variables, whichever rule set wrote them, reach the log line).
"""
from __future__ import annotations

import socket
import tempfile

import pytest

from http_origin import HttpOrigin
from side_by_side import debian_haproxy, run_proxy
from sluice_harness import TcpServer, free_port


class OkServer(TcpServer):
    """Reads the client's bytes until EOF, answers "ok" and closes."""

    def __init__(self):
        super().__init__(self._serve)

    def _serve(self, conn: socket.socket, _srv) -> None:
        conn.settimeout(5)
        try:
            while conn.recv(65536):
                pass
            conn.sendall(b"ok")
        except OSError:
            pass


TCP_CONFIG = """
global
    log stdout format raw local0
defaults
    mode tcp
    log global
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend fe
    bind 127.0.0.1:{port}
    tcp-request inspect-delay 3s
    tcp-request content capture req.payload(0,4) len 3
    tcp-request content capture src len 20
    tcp-request content accept if WAIT_END
    tcp-request content accept if { req.len ge 18 }
    log-format "hr=%hr hrl=%hrl cap0=%[capture.req.hdr(0)] cap1=%[capture.req.hdr(1)]"
    default_backend be
backend be
    server s 127.0.0.1:{server}
"""

HTTP_CONFIG = """
global
    log stdout format raw local0
defaults
    mode http
    log global
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend fe
    bind 127.0.0.1:{port}
    capture request header Host len 10
    tcp-request content capture src len 20
    tcp-request content set-var(txn.t) str(seen)
    tcp-request content set-var(sess.n) int(1)
    http-request set-var(req.h) str(hh)
    http-response set-var(res.s) status
    log-format "%hr %[var(txn.t)] %[var(sess.n)] %[var(req.h)] %[var(res.s)] %[capture.req.hdr(1)] %{+Q}r"
    default_backend be
backend be
    server s 127.0.0.1:{server}
"""


def _run(proxy: str, text: str, tmp: str, port: int, drive) -> list[str]:
    """The log lines `proxy` writes for `drive(port)` on `text`."""
    out, _ = run_proxy(proxy, text, tmp, port, drive)
    return [l for l in out.splitlines() if l.startswith(("hr=", "{"))]


def _tcp_client(port: int) -> None:
    c = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        c.sendall(b"GET / HTTP/1.0\r\n\r\n")
        c.shutdown(socket.SHUT_WR)
        got = b""
        while True:
            d = c.recv(100)
            if not d:
                break
            got += d
        assert got == b"ok"
    finally:
        c.close()


def _http_client(port: int) -> None:
    c = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        for _ in range(2):
            c.sendall(b"GET /a HTTP/1.1\r\nHost: abc\r\n\r\n")
            got = b""
            while b"\r\n\r\n" not in got or not got.endswith(b"hello\n"):
                d = c.recv(4096)
                if not d:
                    break
                got += d
            assert got.startswith(b"HTTP/1.1 200"), got
    finally:
        c.close()


def _compare(text: str, drive, want: list[str]) -> None:
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        got = _run("sluice", text.replace("{port}", str(port)), tmp, port, drive)
        assert got == want, got
        hap = debian_haproxy()
        if hap:
            assert _run(hap, text.replace("{port}", str(port)), tmp, port, drive) == want


@pytest.fixture
def ok_server(servers):
    return servers.add(OkServer())


def test_tcp_mode_capture_slots_in_the_log(ok_server):
    text = TCP_CONFIG.replace("{server}", str(ok_server.port))
    _compare(text, _tcp_client, ["hr={GET|127.0.0.1} hrl=GET 127.0.0.1 cap0=GET cap1=127.0.0.1"])


def test_http_mode_capture_and_variables_for_each_request():
    origin = HttpOrigin()
    try:
        text = HTTP_CONFIG.replace("{server}", str(origin.port))
        # req.* is gone once the response analysis begins, as in HAProxy; res.* set then stays.
        line = '{abc|127.0.0.1} seen 1 - 200 127.0.0.1 "GET /a HTTP/1.1"'
        _compare(text, _http_client, [line, line])
    finally:
        origin.stop()


SCOPE_CONFIG = """
global
    log stdout format raw local0
defaults
    mode http
    log global
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend fe
    bind 127.0.0.1:{port}
    http-request set-var(req.h) str(hh)
    http-request set-var(res.early) str(ee)
    http-response set-header X-R "%[var(req.h)]/%[var(res.early)]"
    http-response set-var(res.s) status
    http-after-response set-header X-A "%[var(req.h)]/%[var(res.s)]"
    log-format "{ %[var(req.h)] %[var(res.s)] %[var(res.early)]"
    default_backend be
backend be
    server s 127.0.0.1:{server}
"""


def test_request_and_response_scopes_end_where_haproxy_ends_them():
    """HAProxy 3.5 answers `x-r: /` and `x-a: /200` and logs `{ - 200 -`: the req.* and res.*
    variables set while the request was processed are gone once the response is."""
    origin = HttpOrigin()
    seen = []

    def drive(port: int) -> None:
        c = socket.create_connection(("127.0.0.1", port), timeout=5)
        try:
            c.sendall(b"GET /a HTTP/1.1\r\nHost: abc\r\n\r\n")
            got = b""
            while not got.endswith(b"hello\n"):
                d = c.recv(4096)
                if not d:
                    break
                got += d
            head = got.split(b"\r\n\r\n")[0].lower().split(b"\r\n")
            seen.append(sorted(h for h in head if h.startswith((b"x-r:", b"x-a:"))))
        finally:
            c.close()

    try:
        text = SCOPE_CONFIG.replace("{server}", str(origin.port))
        _compare(text, drive, ["{ - 200 -"])
        assert all(s == [b"x-a: /200", b"x-r: /"] for s in seen), seen
    finally:
        origin.stop()

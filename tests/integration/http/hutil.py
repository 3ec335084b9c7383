"""Helpers for the HTTP-mode tests: configs, a raw HTTP/1.1 client that reads responses
byte-exactly, the built-in error pages of http1.md 5.1/5.2, and "nothing reached the origin"."""
from __future__ import annotations

import socket
import time

from http_origin import HeaderFields
from sluice_harness import connect, slow_factor, wait_until

# ----------------------------------------------------------------------------------------------
# Built-in error pages (http1.md 5.1 and 5.2)
# ----------------------------------------------------------------------------------------------

_PAGES = {
    # code: (reason as sent, content-length from the spec table, text, connection: close)
    200: ("OK", 58, "Service ready.", False),
    400: ("Bad request", 90, "Your browser sent an invalid request.", True),
    401: ("Unauthorized", 112, "You need a valid user and password to access this content.", False),
    403: ("Forbidden", 93, "Request forbidden by administrative rules.", False),
    404: ("Not Found", 83, "The resource could not be found.", False),
    405: ("Method Not Allowed", 147,
          "A request was made of a resource using a request method not supported by that "
          "resource.", False),
    408: ("Request Time-out", 110, "Your browser didn't send a complete request in time.", True),
    410: ("Gone", 114, "The resource is no longer available and will not be available again.",
          False),
    413: ("Payload Too Large", 106, "The request entity exceeds the maximum allowed.", False),
    414: ("URI Too Long", 110, "The URI provided was too long for the server to process.", False),
    421: ("Misdirected Request", 104, "Request sent to a non-authoritative server.", False),
    422: ("Unprocessable Content", 116, "The server cannot process the contained instructions.",
          False),
    425: ("Too Early", 80, "Your browser sent early data.", False),
    429: ("Too Many Requests", 117, "You have sent too many requests in a given amount of time.",
          False),
    431: ("Request Header Fields Too Large", 105, "Request Header Fields Too Large.", False),
    500: ("Internal Server Error", 97, "An internal server error occurred.", False),
    501: ("Not Implemented", 135,
          "The server does not support the functionality required to fulfill the request.", False),
    502: ("Bad Gateway", 107, "The server returned an invalid or incomplete response.", False),
    503: ("Service Unavailable", 107, "No server is available to handle this request.", False),
    504: ("Gateway Time-out", 92, "The server didn't respond in time.", False),
}


def page_body(code: int) -> bytes:
    reason, _, text, _ = _PAGES[code]
    return f"<html><body><h1>{code} {reason}</h1>\n{text}\n</body></html>\n".encode()


def error_page(code: int) -> bytes:
    """The exact bytes sluice sends for a built-in page (http1.md 5.2 field order)."""
    reason, cl, _, close = _PAGES[code]
    body = page_body(code)
    assert len(body) == cl, (code, len(body), cl)   # the transcription of the table is right
    head = f"HTTP/1.1 {code} {reason}\r\ncontent-length: {cl}\r\ncache-control: no-cache\r\n"
    if close:
        head += "connection: close\r\n"
    head += "content-type: text/html\r\n\r\n"
    return head.encode() + body


for _code in _PAGES:
    error_page(_code)


# ----------------------------------------------------------------------------------------------
# Configs
# ----------------------------------------------------------------------------------------------

def preamble(*, nbthread: int = 1, glob: str = "", defaults: str = "", timeouts: str = "") -> str:
    """The global and defaults sections every HTTP test config starts with (mode http, short
    timeouts); the keyword arguments add lines to them."""
    timeouts = timeouts or "timeout connect 2s\n    timeout client 5s\n    timeout server 5s"
    return f"""
global
    nbthread {nbthread}
{_indent(glob)}
defaults
    mode http
    {timeouts}
{_indent(defaults)}
"""


def config(port: int, origin_port: int, *, glob: str = "", defaults: str = "", fe: str = "",
           be: str = "", server: str = "", extra: str = "", timeouts: str = "") -> str:
    """A minimal HTTP config: frontend fe on `port`, backend be with server s1 on the origin.
    Each keyword argument is a block of lines added to that section."""
    return preamble(glob=glob, defaults=defaults, timeouts=timeouts) + f"""frontend fe
    bind 127.0.0.1:{port}
{_indent(fe)}
    default_backend be

backend be
{_indent(be)}
    server s1 127.0.0.1:{origin_port} {server}
{extra}
"""


def _indent(block: str) -> str:
    lines = [l.strip() for l in block.strip("\n").splitlines() if l.strip()]
    return "\n".join("    " + l for l in lines)


# ----------------------------------------------------------------------------------------------
# A raw HTTP/1.1 client
# ----------------------------------------------------------------------------------------------

class Resp(HeaderFields):
    def __init__(self):
        self.version = ""
        self.status = 0
        self.reason = ""
        self.head = b""            # status line + fields + empty line, as received
        self.headers: list[tuple[str, str]] = []
        self.body = b""            # decoded body
        self.raw = b""             # head + body as received
        self.chunked = False
        self.raw_body = b""
        self.trailers: list[tuple[str, str]] = []

    def __repr__(self) -> str:
        return f"<Resp {self.status} {self.raw[:300]!r}>"


class Conn:
    """One client connection with a receive buffer, for keep-alive and pipelining."""

    def __init__(self, port: int, timeout: float = 5.0):
        self.port = port
        self.timeout = timeout
        self.sock = connect(port, timeout=timeout)
        self.buf = bytearray()
        self.eof = False

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _fill(self, deadline: float) -> None:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no data within the deadline; buffered {bytes(self.buf)[:300]!r}")
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(1 << 16)
            except socket.timeout:
                continue
            except (ConnectionResetError, BrokenPipeError):
                data = b""
            if not data:
                self.eof = True
                raise EOFError(f"EOF; buffered {bytes(self.buf)[:300]!r}")
            self.buf += data
            return

    def _line(self, deadline: float) -> bytes:
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                line = bytes(self.buf[:i + 1])
                del self.buf[:i + 1]
                return line
            self._fill(deadline)

    def _exact(self, n: int, deadline: float) -> bytes:
        while len(self.buf) < n:
            self._fill(deadline)
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def response(self, method: str = "GET", timeout: float | None = None) -> Resp:
        """Reads one response (a 1xx interim response is returned on its own)."""
        deadline = time.monotonic() + (timeout or self.timeout) * slow_factor()
        r = Resp()
        head = bytearray()
        first = self._line(deadline)
        head += first
        parts = first.rstrip(b"\r\n").decode("latin-1").split(" ", 2)
        r.version = parts[0]
        r.status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else -1
        r.reason = parts[2] if len(parts) > 2 else ""
        while True:
            line = self._line(deadline)
            head += line
            if line in (b"\r\n", b"\n"):
                break
            n, _, v = line.rstrip(b"\r\n").partition(b":")
            r.headers.append((n.decode("latin-1"), v.strip(b" \t").decode("latin-1")))
        r.head = bytes(head)
        raw_body = bytearray()
        if (method == "HEAD" or r.status < 200 or r.status in (204, 304)
                or (method == "CONNECT" and r.status < 300)):
            pass
        elif "chunked" in (r.header("transfer-encoding") or "").lower():
            r.chunked = True
            body = bytearray()
            while True:
                line = self._line(deadline)
                raw_body += line
                size = int(line.split(b";")[0].strip(), 16)
                if size == 0:
                    while True:
                        tl = self._line(deadline)
                        raw_body += tl
                        if tl in (b"\r\n", b"\n"):
                            break
                        n, _, v = tl.rstrip(b"\r\n").partition(b":")
                        r.trailers.append((n.decode("latin-1"), v.strip().decode("latin-1")))
                    break
                data = self._exact(size, deadline)
                body += data
                raw_body += data
                raw_body += self._line(deadline)
            r.body = bytes(body)
        elif r.header("content-length") is not None:
            r.body = self._exact(int(r.header("content-length")), deadline)
            raw_body += r.body
        else:
            r.body = self.read_to_eof(timeout or self.timeout)
            raw_body += r.body
        r.raw_body = bytes(raw_body)
        r.raw = r.head + r.raw_body
        return r

    def final_response(self, method: str = "GET", timeout: float | None = None) -> Resp:
        while True:
            r = self.response(method, timeout)
            if r.status >= 200 or r.status == 101:
                return r

    def read_exact(self, n: int, timeout: float | None = None) -> bytes:
        deadline = time.monotonic() + (timeout or self.timeout) * slow_factor()
        return self._exact(n, deadline)

    def read_to_eof(self, timeout: float | None = None) -> bytes:
        deadline = time.monotonic() + (timeout or self.timeout) * slow_factor()
        try:
            while True:
                self._fill(deadline)
        except EOFError:
            pass
        out = bytes(self.buf)
        self.buf.clear()
        return out

    def closed_within(self, timeout: float = 2.0) -> bool:
        """True if the server closes (EOF or reset) within timeout with no further data;
        False if still open at the deadline. Unread data is an AssertionError."""
        deadline = time.monotonic() + timeout * slow_factor()
        if self.buf:
            raise AssertionError(f"unexpected data: {bytes(self.buf)[:300]!r}")
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                return False
            except (ConnectionResetError, BrokenPipeError):
                return True
            if not data:
                return True
            raise AssertionError(f"unexpected data: {data[:300]!r}")

    def still_open(self, seconds: float = 0.2) -> bool:
        """True if nothing (no data, no EOF) arrives within a short observation window."""
        if self.buf:
            return False
        self.sock.settimeout(seconds)
        try:
            self.sock.recv(65536, socket.MSG_PEEK)
        except socket.timeout:
            return True
        except OSError:
            return False
        return False

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self) -> "Conn":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def exchange(port: int, data: bytes, timeout: float = 5.0) -> bytes:
    """Sends data, then reads until the server closes. For requests that end the connection."""
    with Conn(port, timeout) as c:
        c.send(data)
        return c.read_to_eof(timeout)


def get(port: int, path: str = "/", headers: str = "Host: a\r\n", timeout: float = 5.0) -> Resp:
    """One HTTP/1.1 request on a fresh connection; returns the response."""
    with Conn(port, timeout) as c:
        c.send(f"GET {path} HTTP/1.1\r\n{headers}\r\n".encode())
        return c.final_response()


def request(port: int, data: bytes, method: str = "GET", timeout: float = 5.0) -> Resp:
    with Conn(port, timeout) as c:
        c.send(data)
        return c.final_response(method)


# ----------------------------------------------------------------------------------------------
# What reached the origin
# ----------------------------------------------------------------------------------------------

BARRIER = b"GET /barrier HTTP/1.1\r\nHost: barrier\r\n\r\n"


def assert_nothing_reached(origin, port: int) -> None:
    """Asserts that no byte other than a barrier request reached the origin since its last
    reset(). The barrier goes through the same single-threaded sluice after the request under
    test, so anything sluice had written for that request was written before it."""
    with Conn(port) as c:
        c.send(BARRIER)
        r = c.final_response()
        assert r.status == 200, r
    origin.wait_requests(1)
    # A short observation window for bytes still in flight on another origin connection.
    time.sleep(0.05)
    reqs = origin.requests()
    got = origin.raw()
    assert [q.path for q in reqs] == ["/barrier"], f"the origin received {got[:600]!r}"
    assert origin.bytes_received() == len(reqs[0].raw), f"the origin received {got[:600]!r}"


def wait_origin_closed(origin, timeout: float = 3.0) -> None:
    """Waits until every connection the origin accepted is closed."""
    wait_until(lambda: not origin.open_connections(), timeout,
               message=lambda: f"origin connections to close: "
                               f"{[(c.id, c.closed.is_set()) for c in origin.connections()]}")


def wait_conn_closed(origin, conn_id: int, timeout: float = 3.0) -> None:
    """Waits until the origin connection number conn_id is closed."""
    def closed():
        for c in origin.connections():
            if c.id == conn_id:
                return c.closed.is_set()
        return True   # forgotten by reset(): it was closed
    wait_until(closed, timeout, message=f"origin connection {conn_id} to close")


def conn_is_open(origin, conn_id: int) -> bool:
    return any(c.id == conn_id and not c.closed.is_set() for c in origin.connections())



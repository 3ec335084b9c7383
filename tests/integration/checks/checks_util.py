"""Helpers shared by the health-check tests: configurations and small fake servers."""
from __future__ import annotations

import http.client
import re
import socket
import threading
import time

from sluice_harness import TcpServer, free_port, show_stat, stat_row, wait_until


def config(port, sock, servers, backend_extra="", log_port=None, nbthread=2, defaults_extra=""):
    log = f"    log 127.0.0.1:{log_port} local0\n" if log_port else ""
    return f"""
global
    nbthread {nbthread}
    stats socket {sock} level admin
defaults
    mode tcp
    timeout connect 2s
    timeout client 10s
    timeout server 10s
{log}{defaults_extra}
frontend fe
    bind 127.0.0.1:{port}
    default_backend be
backend be
    balance roundrobin
{backend_extra}
{servers}
"""


def row(sock, sv):
    return stat_row(show_stat(str(sock)), "be", sv)


class HttpServer(TcpServer):
    """Answers every request with `status` and `body`, then closes (HTTP/1.0 style)."""

    def __init__(self, status="200 OK", body="ok\n", port=0):
        self.status = status
        self.body = body
        self.requests: list[bytes] = []
        super().__init__(self._serve, port=port)

    def _serve(self, conn: socket.socket, _srv) -> None:
        conn.settimeout(5)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(4096)
            if not chunk:
                return
            data += chunk
        self.add_result(data)
        body = self.body.encode()
        conn.sendall(f"HTTP/1.0 {self.status}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)


class AcceptRecorder(TcpServer):
    """Records the monotonic time of every accepted connection and closes it."""

    def __init__(self):
        self.times: list[float] = []
        self._tlock = threading.Lock()
        super().__init__(self._record)

    def _record(self, conn: socket.socket, _srv) -> None:
        with self._tlock:
            self.times.append(time.monotonic())


def logged_head(sock, log_port: int, port: int, backend: str, defaults_extra: str = "",
                global_extra: str = "") -> str:
    """The global and defaults sections of the check tests that read syslog lines (a stats
    socket at `sock`, raw lines to 127.0.0.1:`log_port`) and a frontend on `port` sending to
    `backend`."""
    return f"""
global
    stats socket {sock} level admin
    log 127.0.0.1:{log_port} format raw local0
{global_extra}defaults
    mode tcp
    log global
{defaults_extra}    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend fe
    bind 127.0.0.1:{port}
    default_backend {backend}
"""


def health_lines(cfg, sluice, udp_log, short_tmp, backends: dict[str, tuple[str, int]],
                 option: str = "option tcp-check", global_extra: str = "") -> dict[str, str]:
    """Starts sluice with one backend per entry (name -> (its lines after `option`, the port of
    its server s1), all with option log-health-checks, and returns the first `Health check`
    line of each backend's server, durations written Nms."""
    sock = short_tmp / "stats.sock"
    port = free_port()
    text = logged_head(sock, udp_log.port, port, next(iter(backends)),
                       "    option log-health-checks\n    timeout check 500ms\n", global_extra)
    for name, (rules, sport) in backends.items():
        text += f"backend {name}\n    {option}\n{rules}\n" if option else f"backend {name}\n{rules}\n"
        text += f"    server s1 127.0.0.1:{sport} check inter 300 rise 1 fall 1\n"
    sluice(cfg(text), wait_ports=[port], wait_unix=[sock])
    got: dict[str, str] = {}

    def collect():
        for m in udp_log.texts():
            mm = re.match(r"Health check for server (\w+)/s1 ", m)
            if mm and mm.group(1) not in got:
                got[mm.group(1)] = re.sub(r"check duration: \d+ms", "check duration: Nms", m.strip())
        return len(got) == len(backends)

    wait_until(collect, 5, message=lambda: f"lines for {sorted(backends)}: {udp_log.texts()}")
    return got


def request(port: int, backend: str, path: str) -> int:
    """One HTTP request routed to `backend` (by the x-be field, `use_backend %[req.hdr(x-be)]`);
    the status the client got."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        c.request("GET", path, headers={"x-be": backend, "connection": "close"})
        r = c.getresponse()
        r.read()
        return r.status
    finally:
        c.close()


def lines(udp_log, needle: str) -> list[str]:
    """The syslog lines received so far that contain `needle`, stripped."""
    return [m.strip() for m in udp_log.texts() if needle in m]

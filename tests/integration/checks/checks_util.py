"""Helpers shared by the health-check tests: configurations and small fake servers."""
from __future__ import annotations

import socket
import threading
import time

from sluice_harness import TcpServer, show_stat, stat_row


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

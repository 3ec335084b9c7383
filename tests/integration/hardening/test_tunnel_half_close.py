"""HTTP-mode tunnels (101 Switching Protocols, 2xx to CONNECT) under a client half-close: the
client sends its bytes and shuts its write side, the server echoes all it received and closes
when it reads the FIN. Every echoed byte must reach the client before sluice closes it, each
FIN after its side's data, and the log line must count what was delivered and end `----`.

The server's echo and its FIN arrive together, in one readiness event: the case that lost data
when the hang-up (EPOLLHUP, both directions shut) was taken for an error."""
import re
import socket

import pytest

from sluice_harness import TcpServer, free_port, pattern, recv_all, wait_until

UPGRADE = (b"GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
           b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
SWITCH = (b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
          b"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
CONNECT = b"CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n"
ESTABLISHED = b"HTTP/1.1 200 Connection established\r\n\r\n"


def _read_head(conn: socket.socket) -> bytes:
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = conn.recv(4096)
        if not chunk:
            return buf
        buf += chunk
    return buf


def _echo_until_fin(answer: bytes):
    """A server that answers the head with `answer`, then echoes everything until the client's
    FIN, sends the rest in one write and closes: the last bytes travel with its FIN."""
    def handler(conn: socket.socket, _srv) -> None:
        head = _read_head(conn)
        extra = head.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in head else b""
        conn.sendall(answer)
        pending = bytearray(extra)
        while True:
            data = conn.recv(65536)
            if not data:
                break
            pending += data
            if len(pending) > 256 * 1024:   # keep the window open for large transfers
                conn.sendall(pending)
                pending.clear()
        conn.sendall(pending)
        conn.close()
    return handler


def _config(port: int, server_port: int) -> str:
    return f"""
global
    nbthread 1
defaults
    mode http
    timeout connect 2s
    timeout client 10s
    timeout server 10s
    timeout tunnel 10s
frontend fe
    bind 127.0.0.1:{port}
    option httplog
    log stdout format raw local0
    default_backend be
backend be
    server s1 127.0.0.1:{server_port}
"""


@pytest.mark.parametrize("kind", ["upgrade", "connect"])
@pytest.mark.parametrize("size", [5, 1000, 300_000])
def test_tunnel_delivers_the_echo_after_a_client_half_close(cfg, sluice, kind, size):
    request, answer = (UPGRADE, SWITCH) if kind == "upgrade" else (CONNECT, ESTABLISHED)
    server = TcpServer(_echo_until_fin(answer))
    try:
        port = free_port()
        s = sluice(cfg(_config(port, server.port)), wait_ports=[port])
        runs = 12 if size < 100_000 else 4
        for run in range(runs):
            payload = pattern(size, seed=run)
            c = socket.create_connection(("127.0.0.1", port), timeout=10)
            try:
                c.sendall(request)
                head = _read_head(c)
                assert head.startswith(answer.split(b"\r\n", 1)[0]), head
                rest = head.split(b"\r\n\r\n", 1)[1]
                c.sendall(payload)
                c.shutdown(socket.SHUT_WR)
                got = rest + recv_all(c, timeout=10)
            finally:
                c.close()
            assert len(got) == size and got == payload, \
                f"run {run}: {len(got)} of {size} echoed bytes reached the client"
        # One log line per tunnel: a clean end (----) and the bytes that reached the client.
        def lines():
            return [l for l in s.stdout().splitlines() if " fe be/s1 " in l]
        wait_until(lambda: len(lines()) == runs, 5, message=lambda: s.stdout())
        for line in lines():
            m = re.search(r" (101|200) (\d+) - - (\S{4}) ", line)
            assert m, line
            assert m.group(3) == "----", line
            assert int(m.group(2)) == len(answer) + size, line
    finally:
        server.stop()


def test_tunnel_server_reset_delivers_what_came_before_and_logs_sd(cfg, sluice):
    # A server that sends its last bytes and resets (SO_LINGER 0): what it sent before the reset
    # still reaches the client, and the log says the server ended it (SD).
    import struct

    def handler(conn: socket.socket, _srv) -> None:
        _read_head(conn)
        conn.sendall(SWITCH)
        conn.recv(16)
        conn.sendall(b"last words")
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.close()

    server = TcpServer(handler)
    try:
        port = free_port()
        s = sluice(cfg(_config(port, server.port)), wait_ports=[port])
        c = socket.create_connection(("127.0.0.1", port), timeout=10)
        try:
            c.sendall(UPGRADE)
            rest = _read_head(c).split(b"\r\n\r\n", 1)[1]
            c.sendall(b"hi")
            got = rest + recv_all(c, timeout=10)
        finally:
            c.close()
        assert got == b"last words", got
        wait_until(lambda: " fe be/s1 " in s.stdout(), 5, message=lambda: s.stdout())
        line = next(l for l in s.stdout().splitlines() if " fe be/s1 " in l)
        assert " SD-- " in line, line
    finally:
        server.stop()

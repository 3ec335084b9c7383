"""Idle timeouts on established connections: client, server, tunnel, client-fin, server-fin."""
import socket
import time

from sluice_harness import (SilentServer, TcpServer, connect, free_port, recv_exact,
                            wait_closed, wait_until)


def config(port, server_port, timeouts):
    lines = "\n".join(f"    timeout {k} {v}" for k, v in timeouts.items())
    return f"""
global
    nbthread 2
defaults
    mode tcp
    timeout connect 2s
{lines}
listen app
    bind 127.0.0.1:{port}
    server s1 127.0.0.1:{server_port}
"""


def idle_close_time(port, payload=b"", timeout=6):
    with connect(port) as c:
        if payload:
            c.sendall(payload)
        t0 = time.monotonic()
        return wait_closed(c, timeout=timeout) - t0


def test_timeout_client_closes_idle_client(cfg, sluice, echo):
    port = free_port()
    sluice(cfg(config(port, echo.port, {"client": "300ms", "server": "10s"})), wait_ports=[port])
    with connect(port) as c:
        c.sendall(b"hi\n")
        assert recv_exact(c, 3) == b"hi\n"
        t0 = time.monotonic()
        elapsed = wait_closed(c, timeout=6) - t0
    assert 0.2 < elapsed < 3.0, f"closed after {elapsed:.2f}s"


def test_timeout_server_closes_when_server_never_answers(cfg, sluice, servers):
    silent = servers.add(SilentServer())
    port = free_port()
    sluice(cfg(config(port, silent.port, {"client": "10s", "server": "300ms"})), wait_ports=[port])
    elapsed = idle_close_time(port, b"request\n")
    assert 0.2 < elapsed < 3.0, f"closed after {elapsed:.2f}s"


def test_timeout_tunnel_overrides_client_and_server(cfg, sluice, echo):
    port = free_port()
    sluice(cfg(config(port, echo.port, {"client": "300ms", "server": "300ms", "tunnel": "2s"})),
           wait_ports=[port])
    with connect(port) as c:
        c.sendall(b"a\n")
        assert recv_exact(c, 2) == b"a\n"
        # Idle twice as long as client/server: the tunnel timeout keeps it open.
        c.settimeout(0.6)
        try:
            data = c.recv(10)
            raise AssertionError(f"connection closed or got data during 0.6s of idling: {data!r}")
        except socket.timeout:
            pass
        c.sendall(b"b\n")
        assert recv_exact(c, 2) == b"b\n"
        t0 = time.monotonic()
        elapsed = wait_closed(c, timeout=8) - t0
    assert 1.5 < elapsed < 4.5, f"closed after {elapsed:.2f}s of idling, expected about 2s"


def test_timeout_client_fin(cfg, sluice, servers):
    """client-fin is the client-side timeout once sluice has shut its write side towards the
    client (as in haproxy: the server half-closed, its FIN was forwarded). The client neither
    sends nor closes; after client-fin (300ms, not client 10s) sluice ends the session, which
    the server sees as EOF on its still-open read side."""
    observed = {}

    def half_closing(conn, srv):
        conn.recv(100)
        conn.shutdown(socket.SHUT_WR)
        t0 = time.monotonic()
        conn.settimeout(10)
        try:
            while conn.recv(100):
                pass
        except OSError:
            pass
        observed["closed_after"] = time.monotonic() - t0

    server = servers.add(TcpServer(half_closing))
    port = free_port()
    sluice(cfg(config(port, server.port,
                      {"client": "10s", "server": "10s", "client-fin": "300ms"})),
           wait_ports=[port])
    with connect(port) as c:
        c.sendall(b"request\n")
        # The server's FIN is forwarded to the client at once.
        wait_closed(c, timeout=5)
        wait_until(lambda: "closed_after" in observed, 8, message="sluice to end the session")
    assert 0.2 < observed["closed_after"] < 3.0, observed


def test_timeout_server_fin(cfg, sluice, servers):
    """server-fin is the server-side timeout once sluice has shut its write side towards the
    server (as in haproxy: the client half-closed, its FIN was forwarded). The server neither
    answers nor closes; server-fin (300ms, not server 10s) ends the session."""
    silent = servers.add(SilentServer())
    port = free_port()
    sluice(cfg(config(port, silent.port,
                      {"client": "10s", "server": "10s", "server-fin": "300ms"})),
           wait_ports=[port])
    with connect(port) as c:
        c.sendall(b"last words\n")
        c.shutdown(socket.SHUT_WR)
        t0 = time.monotonic()
        elapsed = wait_closed(c, timeout=8) - t0
    assert 0.2 < elapsed < 3.0, f"closed after {elapsed:.2f}s"
    # The server saw the FIN (forwarded half-close) and later the close.
    wait_until(lambda: silent.results, 3, message="the server to see EOF")
    assert silent.results[0][0] == len(b"last words\n")



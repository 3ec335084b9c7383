"""8 MiB each way, verified by sha256, and half-close handling."""
import socket
import threading

from sluice_harness import (DEFAULTS, SinkServer, SourceServer, connect, free_port, pattern,
                            recv_all, sha256)

SIZE = 8 * 1024 * 1024


def listen_to(port, server_port):
    return f"""
global
    nbthread 2
{DEFAULTS}
listen relay
    bind 127.0.0.1:{port}
    server s1 127.0.0.1:{server_port}
"""


def test_client_to_server_8mib(cfg, sluice, servers):
    sink = servers.add(SinkServer())
    port = free_port()
    sluice(cfg(listen_to(port, sink.port)), wait_ports=[port])
    data = pattern(SIZE, seed=7)
    with connect(port, timeout=30) as s:
        sender = threading.Thread(target=lambda: (s.sendall(data), s.shutdown(socket.SHUT_WR)))
        sender.start()
        answer = recv_all(s, timeout=30)
        sender.join(timeout=30)
    assert answer.decode().split() == [sha256(data), str(SIZE)]


def test_server_to_client_8mib(cfg, sluice, servers):
    src = servers.add(SourceServer(SIZE, seed=3))
    port = free_port()
    sluice(cfg(listen_to(port, src.port)), wait_ports=[port])
    with connect(port, timeout=30) as s:
        got = recv_all(s, timeout=30)
    assert len(got) == SIZE
    assert sha256(got) == sha256(src.payload)


def test_half_closed_client_still_gets_full_response(cfg, sluice, servers):
    """The client sends its request and shuts down its write side; the FIN must reach the
    server, and the multi-MB response must still come back in full."""
    src = servers.add(SourceServer(4 * 1024 * 1024, seed=5, wait_for_eof=True))
    port = free_port()
    sluice(cfg(listen_to(port, src.port)), wait_ports=[port])
    with connect(port, timeout=30) as s:
        s.sendall(b"GET everything\n")
        s.shutdown(socket.SHUT_WR)
        got = recv_all(s, timeout=30)
    assert sha256(got) == sha256(src.payload)
    assert src.results == [b"GET everything\n"]

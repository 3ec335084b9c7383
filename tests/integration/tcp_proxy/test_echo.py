"""Basic TCP relaying through a frontend/backend pair."""
import concurrent.futures
import os

from sluice_harness import DEFAULTS, connect, echo_roundtrip, free_port, recv_exact


def fe_be(port, *servers, extra_backend=""):
    lines = "\n".join(f"    server {name} 127.0.0.1:{p}" for name, p in servers)
    return f"""
global
    nbthread 2
{DEFAULTS}
frontend fe
    bind 127.0.0.1:{port}
    default_backend be

backend be
    balance roundrobin
{extra_backend}
{lines}
"""


def test_echo_roundtrip(cfg, sluice, echo):
    port = free_port()
    sluice(cfg(fe_be(port, ("s1", echo.port))), wait_ports=[port])
    assert echo_roundtrip(port, b"hello sluice\n") == b"hello sluice\n"
    assert echo.connections == 1


def test_several_exchanges_on_one_connection(cfg, sluice, echo):
    port = free_port()
    sluice(cfg(fe_be(port, ("s1", echo.port))), wait_ports=[port])
    with connect(port) as s:
        for i in range(20):
            msg = f"message {i}\n".encode() * (i + 1)
            s.sendall(msg)
            assert recv_exact(s, len(msg)) == msg


def test_200_concurrent_connections(cfg, sluice, echo):
    port = free_port()
    sluice(cfg(fe_be(port, ("s1", echo.port))), wait_ports=[port])
    socks = [connect(port, timeout=10) for _ in range(200)]
    try:
        payloads = [os.urandom(64) + f"#{i}".encode() for i in range(len(socks))]

        def exchange(i):
            socks[i].sendall(payloads[i])
            return recv_exact(socks[i], len(payloads[i]), timeout=15) == payloads[i]

        with concurrent.futures.ThreadPoolExecutor(max_workers=32) as pool:
            results = list(pool.map(exchange, range(len(socks))))
        assert all(results)
        assert echo.connections == 200
    finally:
        for s in socks:
            s.close()

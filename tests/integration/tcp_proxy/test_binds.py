"""The forms of `bind`: port ranges, comma lists, IPv6, unix sockets, inherited fds."""
import os
import socket

import pytest

from sluice_harness import (DEFAULTS, echo_roundtrip, free_port, free_port_range,
                            has_ipv6_loopback, recv_exact)


def config(bind_line, backend_port, global_extra=""):
    return f"""
global
    nbthread 2
{global_extra}
{DEFAULTS}
listen app
    {bind_line}
    server s1 127.0.0.1:{backend_port}
"""


def test_port_range(cfg, sluice, echo):
    p = free_port_range(2)
    sluice(cfg(config(f"bind 127.0.0.1:{p}-{p + 1}", echo.port)), wait_ports=[p, p + 1])
    assert echo_roundtrip(p, b"first\n") == b"first\n"
    assert echo_roundtrip(p + 1, b"second\n") == b"second\n"


def test_comma_list(cfg, sluice, echo):
    p1, p2 = free_port(), free_port()
    sluice(cfg(config(f"bind 127.0.0.1:{p1},127.0.0.1:{p2}", echo.port)), wait_ports=[p1, p2])
    assert echo_roundtrip(p1) == b"ping\n"
    assert echo_roundtrip(p2) == b"ping\n"


def test_ipv6_loopback(cfg, sluice, echo):
    if not has_ipv6_loopback():
        pytest.skip("::1 cannot be bound on this machine")
    p = free_port()
    sluice(cfg(config(f"bind [::1]:{p}", echo.port)), wait_ports=[p])
    assert echo_roundtrip(p, host="::1") == b"ping\n"


def unix_roundtrip(path, payload=b"over unix\n"):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        s.connect(str(path))
        s.sendall(payload)
        return recv_exact(s, len(payload))


def test_unix_socket_binds(cfg, sluice, echo, short_tmp):
    a, b = short_tmp / "a.sock", short_tmp / "b.sock"
    text = config(f"bind unix@{a}\n    bind {b}", echo.port)
    sluice(cfg(text), wait_unix=[a, b])
    assert unix_roundtrip(a) == b"over unix\n"
    assert unix_roundtrip(b) == b"over unix\n"


def test_inherited_listening_fd(cfg, sluice, echo):
    lsock = socket.socket()
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("127.0.0.1", free_port()))
    lsock.listen(128)
    port = lsock.getsockname()[1]
    fd = lsock.fileno()
    os.set_inheritable(fd, True)
    try:
        s = sluice(cfg(config(f"bind fd@{fd}", echo.port)), pass_fds=[fd])
        # The socket is shared with this process, so "listening" is true from the start;
        # wait until sluice actually answers instead.
        assert s.running()
        lsock.close()   # sluice holds the only copy now
        assert echo_roundtrip(port, timeout=10) == b"ping\n"
    finally:
        lsock.close()

"""TLS limits: `maxsslconn` (TLS connections open at once: a TLS listener stops accepting at
the limit and goes on when one closes), `maxsslrate` (TLS connections accepted per second),
their `show info` fields, and `tune.ssl.maxrecord` (no TLS record carries more than that many
bytes). Passes with SLUICE_BIN pointing at HAProxy 3.5 -db, which leaves a connection that
waited for `maxsslconn` hanging where sluice goes on with it."""
from __future__ import annotations

import socket
import ssl
import time

import pytest

from sluice_harness import HTTP_DEFAULTS, cli, free_port, sluice_bin
from tls_certs import Pki


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    p = Pki(tmp_path_factory.mktemp("pki"))
    p.a = p.issue("a", "a.test", key="ecdsa")
    return p


def context(pki) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(pki.ca))
    ctx.check_hostname = False
    return ctx


def info(sock) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in cli(sock, "show info").splitlines() if ": " in line)


def test_maxsslconn_waits_for_a_tls_connection_to_close(cfg, sluice, pki, short_tmp):
    port, plain, sock = free_port(), free_port(), short_tmp / "a.sock"
    sluice(cfg(f"""
global
    maxsslconn 1
    stats socket {sock} level admin
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{port} ssl crt {pki.a}
    bind 127.0.0.1:{plain}
    http-request return status 200 content-type text/plain string ok
"""), wait_ports=[port, plain], wait_unix=[sock])
    ctx = context(pki)
    first = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10),
                            server_hostname="a.test")
    assert info(sock)["MaxSslConns"] == "1"
    assert info(sock)["CurrSslConns"] == "1"
    # The second one waits in the backlog: its handshake does not begin.
    second = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10),
                             server_hostname="a.test", do_handshake_on_connect=False)
    second.settimeout(1.0)
    with pytest.raises((socket.timeout, TimeoutError)):
        second.do_handshake()
    # Plain connections are not limited.
    with socket.create_connection(("127.0.0.1", plain), timeout=5) as c:
        c.sendall(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        assert c.recv(100).startswith(b"HTTP/1.1 200")
    first.close()
    if "haproxy" not in sluice_bin():
        # The waiting one goes on. (HAProxy 3.5 leaves it hanging: only new ones go on.)
        second.settimeout(10)
        second.do_handshake()
        second.sendall(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        assert second.recv(100).startswith(b"HTTP/1.1 200")
    second.close()
    with ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10),
                         server_hostname="a.test") as third:
        third.sendall(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        assert third.recv(100).startswith(b"HTTP/1.1 200")


def test_maxsslrate_spreads_handshakes_over_seconds(cfg, sluice, pki, short_tmp):
    port, sock = free_port(), short_tmp / "a.sock"
    sluice(cfg(f"""
global
    maxsslrate 1
    stats socket {sock} level admin
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{port} ssl crt {pki.a}
    http-request return status 200 content-type text/plain string ok
"""), wait_ports=[port], wait_unix=[sock])
    assert info(sock)["SslRateLimit"] == "1"
    ctx = context(pki)
    t0 = time.monotonic()
    done = []
    for _ in range(3):
        c = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=15),
                            server_hostname="a.test")
        done.append(time.monotonic() - t0)
        c.close()
    # One handshake per second: the third cannot complete within the first second.
    assert done[2] >= 0.9, done


def test_maxrecord_caps_the_records(cfg, sluice, pki, tmp_path):
    body = tmp_path / "body.txt"
    body.write_bytes(b"x" * 6000)
    port = free_port()
    sluice(cfg(f"""
global
    tune.ssl.maxrecord 1000
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{port} ssl crt {pki.a} ssl-min-ver TLSv1.3
    http-request return status 200 content-type text/plain file {body}
"""), wait_ports=[port])
    # The handshake and the request through memory BIOs, so that every byte of the server's
    # records is seen here.
    ctx = context(pki)
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(incoming, outgoing, server_hostname="a.test")
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    wire = b""

    def pump() -> None:
        nonlocal wire
        if outgoing.pending:
            raw.sendall(outgoing.read())
        d = raw.recv(65536)
        if not d:
            raise EOFError
        wire += d
        incoming.write(d)

    while True:
        try:
            tls.do_handshake()
            break
        except ssl.SSLWantReadError:
            pump()
    tls.write(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    got = b""
    while b"x" * 6000 not in got:
        try:
            got += tls.read(65536)
        except ssl.SSLWantReadError:
            pump()
        except ssl.SSLZeroReturnError:
            break
    raw.close()
    assert got.split(b"\r\n\r\n", 1)[1] == b"x" * 6000, got[:200]
    # The record lengths, from their headers (type, version, length).
    sizes, i = [], 0
    while i + 5 <= len(wire):
        n = int.from_bytes(wire[i + 3:i + 5], "big")
        if wire[i] == 23:   # application data: the plaintext, its type byte and a 16-byte tag
            sizes.append(n)
        i += 5 + n
    assert sizes and max(sizes) <= 1000 + 17, sizes
    assert sum(1 for n in sizes if n > 900) >= 5, sizes

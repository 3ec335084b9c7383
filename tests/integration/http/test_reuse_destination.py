"""Server connection reuse and the request's destination (http1.md section 3, http-reuse): an
idle or private server connection serves only a request that goes to the same address and port
(a server without a port takes the stream's destination port, which `set-dst-port` changes per
request), and, with send-proxy, with the same PROXY header. HAProxy keys its idle connections
by a hash of these (2.6 and 3.5 answer as below)."""
import re
import socket
import threading

import pytest

from fake_servers import TcpServer
from sluice_harness import free_port, wait_until
from hutil import Conn, preamble


def _cfg(port: int, server: str, be: str = "", fe: str = "") -> str:
    return preamble() + f"""frontend fe
    bind 127.0.0.1:{port}
    {fe}
    default_backend be

backend be
    {be}
    server s1 {server}
"""


def _get(c: Conn, path: str, extra: str = ""):
    c.send(f"GET {path} HTTP/1.1\r\nHost: a\r\n{extra}\r\n".encode())
    return c.response()


@pytest.mark.parametrize("reuse", ["safe", "aggressive", "always"])
def test_set_dst_port_picks_a_connection_to_that_port(cfg, sluice, origin, origin2, reuse):
    # A server without a port connects to the stream's destination port: each request goes
    # where its own port says, never down an idle connection to the other origin.
    port = free_port()
    sluice(cfg(_cfg(port, "127.0.0.1", be=f"http-reuse {reuse}\n    "
                    "http-request set-dst-port req.hdr(x-p)")), wait_ports=[port])
    p1, p2 = origin.port, origin2.port
    with Conn(port) as c:
        rs = [_get(c, f"/r{i}", f"x-p: {p}\r\n") for i, p in enumerate([p1, p1, p2, p1, p2])]
    assert all(r.status == 200 for r in rs), rs
    assert origin.paths() == ["/r0", "/r1", "/r3"]
    assert origin2.paths() == ["/r2", "/r4"]
    # Reuse still works for the same destination. (Whether the later requests find their
    # destination's idle connection differs: HAProxy 3.5 opens new ones, sluice reuses them.)
    assert rs[0].header("x-conn") == rs[1].header("x-conn") == "1", rs[:2]


def test_set_dst_port_other_client_takes_only_its_destination(cfg, sluice, origin, origin2):
    # http-reuse always: another client's first request takes an idle connection, but only one
    # that goes to its own destination.
    port = free_port()
    sluice(cfg(_cfg(port, "127.0.0.1", be="http-reuse always\n    "
                    "http-request set-dst-port req.hdr(x-p)")), wait_ports=[port])
    with Conn(port) as a:
        assert _get(a, "/a", f"x-p: {origin.port}\r\n").status == 200
        with Conn(port) as b:
            assert _get(b, "/b", f"x-p: {origin2.port}\r\n").status == 200
            assert _get(b, "/b2", f"x-p: {origin.port}\r\n").status == 200
    assert origin.paths() == ["/a", "/b2"]
    assert origin2.paths() == ["/b"]
    assert origin.connection_count() == 1, "the idle connection to that port was shared"


def test_port_offset_server_follows_the_destination(cfg, sluice, origin, origin2):
    # `server s 127.0.0.1:+N` maps the destination port too.
    port = free_port()
    off = origin2.port - origin.port
    sign = "+" if off >= 0 else "-"
    sluice(cfg(_cfg(port, f"127.0.0.1:{sign}{abs(off)}", be="http-reuse always\n    "
                    f"http-request set-dst-port req.hdr(x-p)")), wait_ports=[port])
    with Conn(port) as c:
        for i, p in enumerate([origin.port, origin.port - off]):
            assert _get(c, f"/o{i}", f"x-p: {p}\r\n").status == 200
    assert origin2.paths() == ["/o0"]
    assert origin.paths() == ["/o1"]


def test_reuse_never_private_connection_follows_the_destination(cfg, sluice, origin, origin2):
    # http-reuse never: the client's own connection serves its next request only when that goes
    # to the same destination.
    port = free_port()
    sluice(cfg(_cfg(port, "127.0.0.1", be="http-reuse never\n    "
                    "http-request set-dst-port req.hdr(x-p)")), wait_ports=[port])
    with Conn(port) as c:
        for i, p in enumerate([origin.port, origin.port, origin2.port, origin2.port]):
            assert _get(c, f"/n{i}", f"x-p: {p}\r\n").status == 200
    assert origin.paths() == ["/n0", "/n1"]
    assert origin2.paths() == ["/n2", "/n3"]
    assert origin.connection_count() == 1 and origin2.connection_count() == 1


def _proxy_line_server(c: socket.socket, srv: TcpServer) -> None:
    """Reads a PROXY v1 line, then answers each request on the connection with 200, recording
    (connection number, PROXY line, request path)."""
    with srv._lock:
        cid = srv.connections
    c.settimeout(5)
    buf = b""
    line = None
    while True:
        while (b"\r\n" not in buf) if line is None else (b"\r\n\r\n" not in buf):
            d = c.recv(4096)
            if not d:
                return
            buf += d
        if line is None:
            line, buf = buf.split(b"\r\n", 1)
            continue
        head, buf = buf.split(b"\r\n\r\n", 1)
        path = head.split(b" ", 2)[1].decode()
        srv.add_result((cid, line.decode(), path))
        c.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")


@pytest.mark.parametrize("reuse", ["safe", "always", "never"])
def test_send_proxy_connection_serves_only_its_proxy_header(cfg, sluice, servers, reuse):
    # send-proxy: the header opened the connection; a request whose stream addresses differ
    # (set-src here) needs another connection with its own header.
    rec = servers.add(TcpServer(_proxy_line_server))
    port = free_port()
    sluice(cfg(_cfg(port, f"127.0.0.1:{rec.port} send-proxy", be=f"http-reuse {reuse}",
                    fe="http-request set-src req.hdr(x-src)")), wait_ports=[port])
    srcs = ["10.0.0.1", "10.0.0.1", "10.0.0.2", "10.0.0.2", "10.0.0.1"]
    with Conn(port) as c:
        for i, s in enumerate(srcs):
            assert _get(c, f"/p{i}", f"x-src: {s}\r\n").status == 200
    wait_until(lambda: len(rec.results) >= len(srcs), 5)
    by_conn = {}
    for cid, line, path in rec.results:
        m = re.match(r"^PROXY TCP4 (\S+) 127\.0\.0\.1 \d+ \d+$", line)
        assert m, line
        i = int(path[2:])
        assert m.group(1) == srcs[i], (line, path)
        by_conn.setdefault(cid, set()).add(line)
    assert all(len(lines) == 1 for lines in by_conn.values()), by_conn
    # The first two requests share their connection; the third needs another.
    cids = [cid for cid, _, _ in rec.results]
    assert cids[0] == cids[1] != cids[2], rec.results


def _proxy_v2_server(c: socket.socket, srv: TcpServer) -> None:
    """Reads a PROXY v2 header (IPv4), then answers each request with 200, recording
    (connection number, the header's TLV types, request path)."""
    with srv._lock:
        cid = srv.connections
    c.settimeout(5)
    buf = b""

    def fill(enough) -> bool:
        nonlocal buf
        while not enough():
            d = c.recv(4096)
            if not d:
                return False
            buf += d
        return True

    if not fill(lambda: len(buf) >= 16):
        return
    end = 16 + int.from_bytes(buf[14:16], "big")
    if not fill(lambda: len(buf) >= end):
        return
    body, buf = buf[16:end], buf[end:]
    tlvs, at = [], 12   # after the IPv4 addresses and ports
    while at + 3 <= len(body):
        tlvs.append(body[at])
        at += 3 + int.from_bytes(body[at + 1:at + 3], "big")
    while fill(lambda: b"\r\n\r\n" in buf):
        head, buf = buf.split(b"\r\n\r\n", 1)
        srv.add_result((cid, tuple(tlvs), head.split(b" ", 2)[1].decode()))
        c.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")


def test_send_proxy_v2_unique_id_takes_a_connection_per_header(cfg, sluice, servers):
    # Each request's header carries its own unique id (a TLV): the whole header keys the
    # connection, so each request opens its own with its own header, as HAProxy 3.5 does
    # (measured: three requests, three connections).
    rec = servers.add(TcpServer(_proxy_v2_server))
    port = free_port()
    sluice(cfg(_cfg(port, f"127.0.0.1:{rec.port} send-proxy-v2 proxy-v2-options unique-id",
                    be="http-reuse safe",
                    fe='unique-id-format "%{+X}o%ci:%cp_%rt"')), wait_ports=[port])
    with Conn(port) as c:
        for i in range(3):
            assert _get(c, f"/u{i}").status == 200
    wait_until(lambda: len(rec.results) >= 3, 5)
    assert sorted({cid for cid, _, _ in rec.results}) == [1, 2, 3], rec.results
    assert all(0x05 in tlvs for _, tlvs, _ in rec.results), rec.results   # PP2_TYPE_UNIQUE_ID

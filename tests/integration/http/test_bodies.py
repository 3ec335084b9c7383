"""Bodies and tunnels: large bodies streamed both ways with bounded memory, chunked bodies,
Expect: 100-continue (2.7), WebSocket (2.8) and CONNECT (vector 26)."""
import hashlib
import socket
import time

import pytest

from sluice_harness import free_port, recv_head, slow_factor, wait_until
from http_origin import pattern_bytes, pattern_sha256
from hutil import Conn, config

BIG = 50 * 1000 * 1000


def _start(sluice, cfg, origin, **kw):
    port = free_port()
    s = sluice(cfg(config(port, origin.port, **kw)), wait_ports=[port])
    return port, s


def _status_kb(pid, field):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def _read_head(sock, deadline):
    buf = recv_head(sock, max(0.01, deadline - time.monotonic()))
    head, rest = buf.split(b"\r\n\r\n", 1)
    return head + b"\r\n\r\n", rest


def _big_proxy(sluice, cfg, origin):
    port, s = _start(sluice, cfg, origin, timeouts="timeout connect 2s\n    timeout client 30s\n"
                                                   "    timeout server 30s")
    return port, s, _status_kb(s.pid, "VmRSS")


def _assert_peak_memory(s, base_kb):
    # 50 MB went through; the proxy's peak resident memory grew by far less than the body.
    peak_kb = _status_kb(s.pid, "VmHWM")
    assert peak_kb - base_kb < 16 * 1024, f"VmRSS at start {base_kb} kB, peak {peak_kb} kB"


def test_large_download_streamed_with_bounded_memory(cfg, sluice, origin):
    port, s, base_kb = _big_proxy(sluice, cfg, origin)
    deadline = time.monotonic() + 60 * slow_factor()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        c.sendall(f"GET /big?n={BIG} HTTP/1.1\r\nHost: a\r\n\r\n".encode())
        head, rest = _read_head(c, deadline)
        assert head.startswith(b"HTTP/1.1 200 OK\r\n"), head
        assert f"content-length: {BIG}\r\n".encode() in head, head
        h = hashlib.sha256(rest)
        n = len(rest)
        while n < BIG:
            c.settimeout(max(0.01, deadline - time.monotonic()))
            data = c.recv(1 << 18)
            assert data, f"EOF after {n} bytes"
            h.update(data)
            n += len(data)
        assert n == BIG and h.hexdigest() == pattern_sha256(BIG)
    _assert_peak_memory(s, base_kb)


def test_large_chunked_upload_streamed_with_bounded_memory(cfg, sluice, origin):
    port, s, base_kb = _big_proxy(sluice, cfg, origin)
    with Conn(port, timeout=30) as c:
        c.send(b"POST /sink HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n")
        for piece in pattern_bytes(BIG):
            c.send(b"%X\r\n" % len(piece) + piece + b"\r\n")
        c.send(b"0\r\n\r\n")
        r = c.response()
        assert r.status == 200 and r.body == f"{BIG} {pattern_sha256(BIG)}\n".encode(), r
    req = origin.requests()[0]
    assert req.chunked and req.body_len == BIG
    _assert_peak_memory(s, base_kb)


def test_large_upload_with_length_streamed_with_bounded_memory(cfg, sluice, origin):
    port, s, base_kb = _big_proxy(sluice, cfg, origin)
    with Conn(port, timeout=30) as c:
        c.send(f"POST /sink HTTP/1.1\r\nHost: a\r\nContent-Length: {BIG}\r\n\r\n".encode())
        for piece in pattern_bytes(BIG):
            c.send(piece)
        r = c.response()
        assert r.status == 200 and r.body == f"{BIG} {pattern_sha256(BIG)}\n".encode(), r
    req = origin.requests()[0]
    assert not req.chunked and req.body_len == BIG
    _assert_peak_memory(s, base_kb)


@pytest.mark.parametrize("parts", [
    [b"5\r\nhello\r\n", b"0\r\n\r\n"],
    [b"5\r\nhello\r\n", b"3\r\nabc\r\n0\r\n\r\n"],
    [b"5\r\nhel", b"lo\r\n", b"0\r\n\r\n"],
    [b"5\r\nhello\r", b"\n0\r\n\r\n"],
    [b"5\r", b"\nhello\r\n0\r\n\r\n"],
    [b"5\r\nhello\r\n0\r\n", b"\r\n"],
    [b"5;e=1", b"\r\nhello\r\n0", b"\r\nX-T: 1\r", b"\n\r\n"],
], ids=["after-chunk", "after-chunk-more", "mid-data", "mid-crlf", "mid-size-crlf",
        "before-final-crlf", "ext-and-trailer"])
def test_chunked_body_split_points(cfg, sluice, origin, parts):
    # 1.1: the result must not depend on how the bytes are split across reads.
    port, _ = _start(sluice, cfg, origin)
    head = b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
    with Conn(port) as c:
        for part in [head] + parts:
            c.send(part)
            time.sleep(0.05)
        r = c.response()
        assert r.status == 200, r
        assert c.still_open(0.2), "nothing else is sent"
    req = origin.requests()[0]
    assert req.body == (b"helloabc" if b"abc" in b"".join(parts) else b"hello"), req.raw


def test_request_trailer_names_lower_cased(cfg, sluice, origin):
    # 1.3, 4.3: trailer names are forwarded lower-cased like head names
    port, _ = _start(sluice, cfg, origin)
    with Conn(port) as c:
        c.send(b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"3\r\nabc\r\n0\r\nX-Req-Trailer: 1\r\n\r\n")
        assert c.response().status == 200
    req = origin.wait_requests(1)[0]
    assert req.trailers == [("x-req-trailer", "1")], req.raw


def test_chunked_request_split_across_writes(cfg, sluice, origin):
    port, _ = _start(sluice, cfg, origin)
    with Conn(port) as c:
        c.send(b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n")
        for part in (b"5\r\nhel", b"lo\r\n", b"6;x=1\r\n wor", b"ld\r\n", b"0\r\n", b"\r\n"):
            time.sleep(0.02)
            c.send(part)
        r = c.response()
    assert r.status == 200
    req = origin.requests()[0]
    assert req.body == b"hello world" and req.chunked
    assert b";" not in req.raw_body


def test_v81_chunk_error_after_forwarding_aborts_both_sides(cfg, sluice, origin):
    # 2.5: an error in a later packet, after the head and a chunk were forwarded, aborts both
    # connections without a response.
    port, _ = _start(sluice, cfg, origin)
    with Conn(port) as c:
        c.send(b"POST /sink HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n")
        wait_until(lambda: b"abc" in origin.raw(), 5, message="the first chunk at the origin")
        c.send(b"zz\r\n")
        assert c.read_to_eof() == b"", "no response at all"
    conn = origin.connections()[0]
    assert conn.closed.wait(3), "the server connection is aborted too"


def test_expect_100_continue_forwarded_not_answered(cfg, sluice, origin):
    # vector 64: sluice does not answer 100 itself; the Expect field reaches the server.
    port, _ = _start(sluice, cfg, origin)
    with Conn(port) as c:
        c.send(b"POST /sink HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n")
        wait_until(lambda: origin.requests(), 5, message="the head at the origin")
        assert c.still_open(0.5), f"unexpected bytes: {c.sock.recv(200, socket.MSG_PEEK)!r}"
        c.send(b"abc")
        r = c.response()
        assert r.status == 200, r
    req = origin.requests()[0]
    assert req.header("expect") == "100-continue" and req.body == b"abc"


def test_expect_100_continue_from_server_forwarded(cfg, sluice, origin):
    port, _ = _start(sluice, cfg, origin)
    with Conn(port) as c:
        c.send(b"POST /continue HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n")
        r = c.response()
        assert r.raw == b"HTTP/1.1 100 Continue\r\n\r\n", r
        c.send(b"abc")
        r = c.response()
        assert r.status == 200 and r.body.startswith(b"3 "), r


def test_websocket_upgrade_then_bidirectional_bytes(cfg, sluice, origin):
    port, _ = _start(sluice, cfg, origin)
    with Conn(port) as c:
        c.send(b"GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
               b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        r = c.response()
        assert r.status == 101, r
        assert r.header("sec-websocket-accept") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", r
        assert (r.header("upgrade") or "").lower() == "websocket", r
        assert (r.header("connection") or "").lower() == "upgrade", r
        for msg in (b"\x81\x05hello", b"binary\x00\xff" * 1000, b"last"):
            c.send(msg)
            assert c.read_exact(len(msg)) == msg
    req = origin.requests()[0]
    assert req.header("upgrade") == "websocket"
    assert (req.header("connection") or "").lower() == "upgrade"
    assert req.header("sec-websocket-key") == "dGhlIHNhbXBsZSBub25jZQ=="


def test_connect_tunnel(cfg, sluice, origin):
    # vector 26: CONNECT, the server's 2xx, then a tunnel.
    port, _ = _start(sluice, cfg, origin)
    with Conn(port) as c:
        c.send(b"CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n")
        r = c.response("CONNECT")
        assert r.status == 200, r
        payload = b"\x16\x03\x01 not http at all\r\n\r\n"
        c.send(payload)
        assert c.read_exact(len(payload)) == payload
    req = origin.requests()[0]
    assert req.request_line == b"CONNECT a:443 HTTP/1.1"
    # 1.2: a CONNECT Host with the default port is normalised
    assert req.header("host") == "a", req.head

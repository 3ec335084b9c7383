"""The PROXY protocol: `bind ... accept-proxy` (v1 and v2, the addresses it carries become the
connection's everywhere), its refusals and their log lines, and `server ... send-proxy` /
`send-proxy-v2` in both modes. The log lines of refused headers are HAProxy's (2.6 and 3.5
write "<ci>:<cp> [<date>] <frontend>/<bind>: <fc_err_str>", the bind named by its `name` or
its number). Side by side with Debian's HAProxy 2.6 where it is installed: sluice behind it
(haproxy sends the header) and in front of it (sluice sends it). set-proxy-v2-tlv-fmt and the
header of health checks at the end."""
from __future__ import annotations

import re
import socket
import struct
import time

import pytest

from fake_servers import TcpServer, record_head_and_answer as record_and_answer
from sluice_harness import free_port, wait_until
from side_by_side import debian_haproxy

V2_SIG = b"\r\n\r\n\x00\r\nQUIT\n"

HEAD = """global
  log stdout format raw local0
defaults
  mode http
  log global
  timeout client 1s
  timeout server 5s
  timeout connect 1s
"""


def exchange(port: int, first: bytes, request: bytes = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
             split: float = 0.0) -> bytes:
    """Sends `first` (a PROXY header, or part of one), then after `split` seconds the
    request; returns what came back (b"" when closed without an answer)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(first)
        if split:
            time.sleep(split)
        if request:
            try:
                c.sendall(request)
            except OSError:
                return b""
        got = b""
        while True:
            try:
                d = c.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not d:
                break
            got += d
            if b"\r\n\r\n" in got and got.endswith(b"]"):
                break
        return got


def read_until(c: socket.socket, end: bytes) -> bytes:
    """What the peer sends until it ends with `end` (or closes)."""
    got = b""
    while not got.endswith(end):
        d = c.recv(4096)
        if not d:
            break
        got += d
    return got


def closed(c: socket.socket) -> bool:
    """The peer closed without an answer (a FIN or, as HAProxy does, a reset)."""
    try:
        return c.recv(100) == b""
    except ConnectionResetError:
        return True


def body(resp: bytes) -> str:
    return resp.split(b"\r\n\r\n", 1)[1].decode() if b"\r\n\r\n" in resp else ""


def crc32c(data: bytes) -> int:
    c = 0xFFFFFFFF
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    return c ^ 0xFFFFFFFF


def v2_header(src: tuple[str, int], dst: tuple[str, int], tlvs: bytes = b"") -> bytes:
    addrs = socket.inet_aton(src[0]) + socket.inet_aton(dst[0]) + struct.pack("!HH", src[1], dst[1])
    payload = addrs + tlvs
    return V2_SIG + bytes([0x21, 0x11]) + struct.pack("!H", len(payload)) + payload


def accept_config(port: int, name: str = "") -> str:
    return HEAD + f"""frontend f
  bind 127.0.0.1:{port} accept-proxy{' name ' + name if name else ''}
  log-format "L %ci:%cp %fi:%fp %ST fe=%[fc_err] pp=%[fc_rcvd_proxy] a=%[fc_pp_authority] u=%[fc_pp_unique_id] t=%[fc_pp_tlv(0xe0)]"
  http-request return status 200 content-type text/plain lf-string "[src=%[src]:%[src_port] dst=%[dst]:%[dst_port]]"
"""


def log_lines(s, prefix: str = "") -> list[str]:
    return [ln for ln in s.stdout().splitlines() if ln.startswith(prefix)]


def test_accept_proxy_v1_v2_and_unknown(sluice):
    """The header's addresses are the connection's for rules and logs; UNKNOWN and a v2 LOCAL
    keep the socket's own; a header cut in two pieces is waited for."""
    port = free_port()
    s = sluice(accept_config(port), wait_ports=[port])
    r1 = exchange(port, b"PROXY TCP4 1.2.3.4 5.6.7.8 1111 2222\r\n")
    assert body(r1) == "[src=1.2.3.4:1111 dst=5.6.7.8:2222]"
    tlvs = (b"\x02" + struct.pack("!H", 11) + b"example.com" + b"\x05" + struct.pack("!H", 3) +
            b"uid" + b"\xe0" + struct.pack("!H", 2) + b"zz")
    r2 = exchange(port, v2_header(("10.0.0.1", 40000), ("10.0.0.2", 443), tlvs))
    assert body(r2) == "[src=10.0.0.1:40000 dst=10.0.0.2:443]"
    r3 = exchange(port, b"PROXY UNKNOWN\r\n")
    assert body(r3).startswith("[src=127.0.0.1:") and body(r3).endswith(f"dst=127.0.0.1:{port}]")
    r4 = exchange(port, V2_SIG + b"\x20\x00\x00\x00")   # LOCAL: a health check of the sender
    assert body(r4).startswith("[src=127.0.0.1:")
    r5 = exchange(port, b"PROXY TCP6 2001:db8::1 ", request=b"::2 7 8\r\nGET / HTTP/1.1\r\n\r\n",
                  split=0.2)
    assert body(r5) == "[src=2001:db8::1:7 dst=::2:8]"
    wait_until(lambda: len(log_lines(s, "L ")) >= 5, 5)
    lines = log_lines(s, "L ")   # in any order: each worker thread logs its own
    assert "L 1.2.3.4:1111 5.6.7.8:2222 200 fe=0 pp=1 a=- u=- t=-" in lines
    assert "L 10.0.0.1:40000 10.0.0.2:443 200 fe=0 pp=1 a=example.com u=uid t=zz" in lines
    assert "L 2001:db8::1:7 ::2:8 200 fe=0 pp=1 a=- u=- t=-" in lines


def test_refused_headers_are_logged_and_closed(sluice):
    """Not a header, an invalid one, an unhandled protocol, a connection closed before any
    byte, one closed in the middle, and one that stalls past `timeout client`: each closed
    without an answer and logged as HAProxy logs it."""
    port = free_port()
    s = sluice(accept_config(port, "edge"), wait_ports=[port])
    assert exchange(port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", request=b"") == b""
    assert exchange(port, b"PROXY TCP4 1.2.3.4 5.6.7.8 1111\r\n") == b""
    assert exchange(port, b"PROXY UDP4 1.2.3.4 5.6.7.8 1 2\r\n") == b""
    socket.create_connection(("127.0.0.1", port), timeout=5).close()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(b"PROXY TCP4 1.2")
        c.shutdown(socket.SHUT_WR)
        assert closed(c)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(b"PROXY TCP4 1.2")
        c.settimeout(5)
        t0 = time.monotonic()
        assert closed(c)
        assert time.monotonic() - t0 >= 0.8   # timeout client 1s
    want = [
        "Received something which does not look like a PROXY protocol header",
        "Received an invalid PROXY protocol header",
        "Received an unhandled protocol in the PROXY protocol header",
        "Connection closed while waiting for PROXY protocol header",
        "Truncated PROXY protocol header received",
        "Timeout while waiting for PROXY protocol header",
    ]
    wait_until(lambda: len([l for l in s.stdout().splitlines() if " f/edge: " in l]) >= 6, 5)
    got = [l for l in s.stdout().splitlines() if " f/edge: " in l]
    pat = re.compile(r"^127\.0\.0\.1:\d+ \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d\.\d{3}\] f/edge: (.*)$")
    # Each worker thread logs its own connections: the order may differ from the clients'.
    assert sorted(pat.match(l).group(1) for l in got) == sorted(want), got
    assert not log_lines(s, "L ")


@pytest.mark.parametrize("mode", ["http", "tcp"])
def test_send_proxy_v1_and_v2(sluice, mode):
    """Each new server connection opens with the client's addresses, v1 text or v2 binary;
    the request follows untouched."""
    rec = TcpServer(record_and_answer)
    p1, p2 = free_port(), free_port()
    cfg = HEAD.replace("mode http", f"mode {mode}") + f"""frontend a
  bind 127.0.0.1:{p1}
  default_backend b1
frontend c
  bind 127.0.0.1:{p2}
  default_backend b2
backend b1
  server s 127.0.0.1:{rec.port} send-proxy
backend b2
  server s 127.0.0.1:{rec.port} send-proxy-v2
"""
    if mode == "http":
        # The TLVs proxy-v2-options adds: the unique id, and a CRC32C of the header.
        p3 = free_port()
        cfg += f"""frontend d
  bind 127.0.0.1:{p3}
  unique-id-format id-%[req.hdr(x-id)]
  default_backend b3
backend b3
  server s 127.0.0.1:{rec.port} send-proxy-v2 proxy-v2-options unique-id,crc32c
"""
    try:
        ports = (p1, p2, p3) if mode == "http" else (p1, p2)
        sluice(cfg, wait_ports=list(ports))
        for port in ports:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
                c.sendall(b"GET /x HTTP/1.1\r\nHost: x\r\nX-Id: 42\r\n\r\n")
                got = read_until(c, b"ok")
                assert got.startswith(b"HTTP/1.1 200"), got
                if port == p2:
                    cport = c.getsockname()[1]
        wait_until(lambda: len(rec.results) >= len(ports), 5)
    finally:
        rec.stop()
    v1, v2 = rec.results[:2]
    line, rest = v1.split(b"\r\n", 1)
    m = re.match(rb"^PROXY TCP4 127\.0\.0\.1 127\.0\.0\.1 (\d+) (\d+)$", line)
    assert m and int(m.group(2)) == p1, v1
    assert rest.startswith(b"GET /x HTTP/1.1\r\n")
    assert v2.startswith(V2_SIG + b"\x21\x11\x00\x0c")
    src_port, dst_port = struct.unpack("!HH", v2[24:28])
    assert v2[16:24] == socket.inet_aton("127.0.0.1") * 2
    assert (src_port, dst_port) == (cport, p2)
    assert v2[28:].startswith(b"GET /x HTTP/1.1\r\n")
    if mode == "http":
        v3 = rec.results[2]
        assert v3.startswith(V2_SIG + b"\x21\x11")
        length = struct.unpack("!H", v3[14:16])[0]
        tlvs, off = {}, 28
        while off < 16 + length:
            t, n = v3[off], struct.unpack("!H", v3[off + 1:off + 3])[0]
            tlvs[t] = (off + 3, v3[off + 3:off + 3 + n])
            off += 3 + n
        assert tlvs[0x05][1] == b"id-42"
        crc_at, crc = tlvs[0x03]
        zeroed = v3[:crc_at] + b"\0\0\0\0" + v3[crc_at + 4:16 + length]
        assert struct.unpack("!I", crc)[0] == crc32c(zeroed)
        assert v3[16 + length:].startswith(b"GET /x HTTP/1.1\r\n")


def test_with_debian_haproxy_both_ways(sluice, tmp_path):
    """HAProxy 2.6 sends the header to sluice (accept-proxy), and sluice sends it to HAProxy
    2.6 (send-proxy-v2): the client's address arrives at the end of each chain."""
    haproxy = debian_haproxy()
    if not haproxy:
        pytest.skip("Debian's haproxy is not installed")
    import subprocess
    hp_front, hp_back, s_in, s_out = free_port(), free_port(), free_port(), free_port()
    hcfg = tmp_path / "h.cfg"
    hcfg.write_text(HEAD + f"""frontend hf
  bind 127.0.0.1:{hp_front}
  default_backend to_sluice
backend to_sluice
  server s 127.0.0.1:{s_in} send-proxy-v2
frontend hb
  bind 127.0.0.1:{hp_back} accept-proxy
  http-request return status 200 content-type text/plain lf-string "[hsrc=%[src] hdst=%[dst]:%[dst_port]]"
""")
    scfg = accept_config(s_in) + f"""frontend out
  bind 127.0.0.1:{s_out}
  default_backend to_haproxy
backend to_haproxy
  server h 127.0.0.1:{hp_back} send-proxy-v2
"""
    p = subprocess.Popen([haproxy, "-f", str(hcfg), "-db"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        sluice(scfg, wait_ports=[s_in, s_out])
        from sluice_harness import is_listening
        wait_until(lambda: is_listening(hp_front) and is_listening(hp_back), 5)
        via_haproxy = exchange(hp_front, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", request=b"")
        assert body(via_haproxy).startswith("[src=127.0.0.1:") and f"dst=127.0.0.1:{hp_front}]" in body(via_haproxy)
        via_sluice = exchange(s_out, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", request=b"")
        assert body(via_sluice) == f"[hsrc=127.0.0.1 hdst=127.0.0.1:{s_out}]"
    finally:
        p.kill()
        p.wait()


def test_expect_proxy_from_trusted_sources_only(sluice):
    """tcp-request connection expect-proxy layer4 if <cond>: a PROXY header is awaited from the
    sources the condition names (the connection rules see the socket's own address), the
    others are served as they come."""
    port = free_port()
    cfg = HEAD + f"""frontend f
  bind 127.0.0.1:{port}
  tcp-request connection expect-proxy layer4 if {{ src 127.0.0.1 }}
  http-request return status 200 content-type text/plain lf-string "[src=%[src]:%[src_port] dst=%[dst]:%[dst_port]]"
frontend g
  bind 127.0.0.2:{port}
  tcp-request connection expect-proxy layer4 if {{ src 127.0.0.1 }}
  http-request return status 200 content-type text/plain lf-string "[src=%[src]]"
"""
    sluice(cfg, wait_ports=[port])
    r = exchange(port, b"PROXY TCP4 1.2.3.4 5.6.7.8 1111 2222\r\n")
    assert body(r) == "[src=1.2.3.4:1111 dst=5.6.7.8:2222]"
    assert exchange(port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", request=b"") == b""
    with socket.create_connection(("127.0.0.2", port), timeout=5, source_address=("127.0.0.2", 0)) as c:
        c.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        got = read_until(c, b"]")
    assert body(got) == "[src=127.0.0.2]"


def test_refused_header_counts_a_connection_not_a_session(sluice):
    """As HAProxy 3.5 counts them: a connection whose header is refused is in the frontend's
    conn_tot, but is no session and no request; one whose header is read is both."""
    from sluice_harness import cli, parse_show_stat, short_tmpdir, stat_row
    port = free_port()
    sock = f"{short_tmpdir()}/s.sock"
    cfg = accept_config(port).replace("global\n", f"global\n  stats socket {sock} level admin\n", 1)
    sluice(cfg, wait_ports=[port], wait_unix=[sock])
    assert exchange(port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", request=b"") == b""
    assert body(exchange(port, b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n")).startswith("[src=1.2.3.4")

    def row():
        return stat_row(parse_show_stat(cli(sock, "show stat"))[1], "f", "FRONTEND")

    wait_until(lambda: row()["req_tot"] == "1", 5)
    r = row()
    assert (r["conn_tot"], r["stot"], r["req_tot"]) == ("2", "1", "1"), r


# set-proxy-v2-tlv-fmt and the PROXY header of health checks (check-send-proxy, or the
# server's send-proxy without a check port or address): the TLV order, the LOCAL header of
# checks and the v1 line of checks are the bytes HAProxy 3.5 sends for the same configurations.

def tlvs_of(header: bytes) -> tuple[list[tuple[int, bytes]], bytes]:
    """The TLVs of a v2 header at the start of `header`, in order, and what follows it."""
    assert header.startswith(V2_SIG), header
    length = struct.unpack("!H", header[14:16])[0]
    fam = header[13]
    off = 16 + {0x11: 12, 0x21: 36}.get(fam, 0)
    out = []
    while off < 16 + length:
        t, n = header[off], struct.unpack("!H", header[off + 1:off + 3])[0]
        out.append((t, header[off + 3:off + 3 + n]))
        off += 3 + n
    assert off == 16 + length, header
    return out, header[16 + length:]


def crc_ok(header: bytes) -> bool:
    length = struct.unpack("!H", header[14:16])[0]
    whole = header[:16 + length]
    at = whole.index(b"\x03\x00\x04") + 3
    zeroed = whole[:at] + b"\0\0\0\0" + whole[at + 4:]
    return struct.unpack("!I", whole[at:at + 4])[0] == crc32c(zeroed)


def test_http_tlvs_in_order_with_the_request_after_the_rules(sluice):
    """The formats see the request as it left (a header the rules added, a variable), the
    backend and the server; an absent value is an empty TLV; a type may repeat; they come
    before the CRC32C and the unique id, as HAProxy 3.5 orders them."""
    rec = TcpServer(record_and_answer)
    port = free_port()
    cfg = HEAD + f"""frontend f
  bind 127.0.0.1:{port}
  unique-id-format uid-%[req.hdr(x-id)]
  http-request set-var(txn.h) req.hdr(host)
  http-request set-header x-added added
  default_backend b
backend b
  server s1 127.0.0.1:{rec.port} send-proxy-v2 proxy-v2-options crc32c,unique-id set-proxy-v2-tlv-fmt(0xE1) %[req.hdr(host)] set-proxy-v2-tlv-fmt(0xE2) lit set-proxy-v2-tlv-fmt(0xE1) %[var(txn.h)]-%[srv_name]-%b-%s-%[req.hdr(x-added)]-%[method]%[path] set-proxy-v2-tlv-fmt(0xE3) %[req.hdr(nosuch)]
"""
    try:
        sluice(cfg, wait_ports=[port])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
            c.sendall(b"GET /x HTTP/1.1\r\nHost: example.org\r\nX-Id: 7\r\n\r\n")
            assert read_until(c, b"ok").startswith(b"HTTP/1.1 200")
        wait_until(lambda: rec.results, 5)
    finally:
        rec.stop()
    got = rec.results[0]
    assert got[12:14] == b"\x21\x11", got
    tlvs, rest = tlvs_of(got)
    assert [(t, v) for t, v in tlvs if t != 0x03] == [
        (0xE1, b"example.org"),
        (0xE2, b"lit"),
        (0xE1, b"example.org-s1-b-s1-added-GET/x"),
        (0xE3, b""),
        (0x05, b"uid-7"),
    ]
    assert [t for t, _ in tlvs] == [0xE1, 0xE2, 0xE1, 0xE3, 0x03, 0x05]
    assert crc_ok(got)
    assert rest.startswith(b"GET /x HTTP/1.1\r\n")


def test_tcp_tlvs_forward_a_received_tlv(sluice):
    """In TCP mode: the client's addresses, the names, and a TLV the client's own PROXY header
    carried (fc_pp_tlv), passed on; the unique id TLV goes empty without a unique-id-format,
    as HAProxy 3.5 sends it."""
    rec = TcpServer(record_and_answer)
    port = free_port()
    cfg = HEAD.replace("mode http", "mode tcp") + f"""frontend f
  bind 127.0.0.1:{port} accept-proxy
  default_backend b
backend b
  server s1 127.0.0.1:{rec.port} send-proxy-v2 proxy-v2-options unique-id set-proxy-v2-tlv-fmt(0xE0) %[fc_pp_tlv(0xE0)] set-proxy-v2-tlv-fmt(0xE1) %[src]:%[src_port]-%[srv_name]-%b-%s
"""
    try:
        sluice(cfg, wait_ports=[port])
        addrs = socket.inet_aton("10.1.2.3") + socket.inet_aton("10.9.9.9") + struct.pack("!HH", 1234, 80)
        body = addrs + b"\xe0" + struct.pack("!H", 5) + b"hello"
        pp = V2_SIG + b"\x21\x11" + struct.pack("!H", len(body)) + body
        with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
            c.sendall(pp + b"GET /t HTTP/1.1\r\nHost: x\r\n\r\n")
            assert read_until(c, b"ok").startswith(b"HTTP/1.1 200")
        wait_until(lambda: rec.results, 5)
    finally:
        rec.stop()
    got = rec.results[0]
    assert got[16:20] == socket.inet_aton("10.1.2.3")
    tlvs, rest = tlvs_of(got)
    assert tlvs == [(0xE0, b"hello"), (0xE1, b"10.1.2.3:1234-s1-b-s1"), (0x05, b"")]
    assert rest.startswith(b"GET /t HTTP/1.1\r\n")


def first_bytes(c: socket.socket, srv) -> None:
    """Records what a connection sends before it goes quiet or closes."""
    c.settimeout(0.5)
    data = b""
    try:
        while True:
            d = c.recv(4096)
            if not d:
                break
            data += d
            if data.endswith(b"\r\n\r\n"):
                break
    except OSError:
        pass
    srv.add_result(data)
    try:
        c.sendall(b"HTTP/1.0 200 OK\r\n\r\n")
    except OSError:
        pass


def test_checks_send_the_proxy_header(sluice):
    """check-send-proxy: a v1 line with the check connection's own addresses (the server's
    send-proxy-v2: the LOCAL v2 header, with the TLV formats and the CRC32C); a server's
    send-proxy alone applies to its checks unless they have a port of their own; an HTTP
    check sends its request after the header."""
    servers = {name: TcpServer(first_bytes) for name in ("v1", "v2", "own_port", "httpchk")}
    plain = TcpServer(first_bytes)
    port = free_port()
    cfg = HEAD.replace("mode http", "mode tcp") + f"""frontend f
  bind 127.0.0.1:{port}
  default_backend b
backend b
  default-server check inter 200
  server v1 127.0.0.1:{servers['v1'].port} check-send-proxy
  server v2 127.0.0.1:{servers['v2'].port} send-proxy-v2 check-send-proxy proxy-v2-options crc32c set-proxy-v2-tlv-fmt(0xE1) %[srv_name]
  server p 127.0.0.1:{plain.port} send-proxy port {servers['own_port'].port}
backend h
  mode http
  option httpchk GET /health
  server hc 127.0.0.1:{servers['httpchk'].port} send-proxy check inter 200
"""
    try:
        sluice(cfg, wait_ports=[port])
        wait_until(lambda: all(len(s.results) >= 2 for s in servers.values()), 5)
    finally:
        for s in [*servers.values(), plain]:
            s.stop()
    v1 = servers["v1"].results[0]
    m = re.match(rb"^PROXY TCP4 127\.0\.0\.1 127\.0\.0\.1 (\d+) (\d+)\r\n$", v1)
    assert m and int(m.group(2)) == servers["v1"].port, v1
    v2 = servers["v2"].results[0]
    assert v2.startswith(V2_SIG + b"\x20\x00\x00\x0c\xe1\x00\x02v2\x03\x00\x04"), v2
    assert len(v2) == 28 and crc_ok(v2)
    # A check port of its own: a plain connect, no header.
    assert servers["own_port"].results[0] == b""
    hc = servers["httpchk"].results[0]
    assert re.match(rb"^PROXY TCP4 127\.0\.0\.1 127\.0\.0\.1 \d+ \d+\r\nGET /health HTTP/1\.0\r\n", hc), hc

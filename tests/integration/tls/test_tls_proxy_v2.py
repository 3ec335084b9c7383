"""The TLS facts of the client connection in the PROXY v2 header sent to a server:
`send-proxy-v2-ssl`, `send-proxy-v2-ssl-cn` and `proxy-v2-options ssl,cert-cn,ssl-cipher,
cert-sig,cert-key` (PP2_TYPE_SSL: the client flags, the certificate's verify result, then the
version, the client certificate's CN, the key and signature algorithms of the frontend's
certificate and the cipher). The bytes are HAProxy 3.5's for the same connections (the test
passes with SLUICE_BIN pointing at HAProxy 3.5 -db)."""
from __future__ import annotations

import socket
import ssl
import struct

import pytest

from fake_servers import TcpServer, record_head_and_answer
from sluice_harness import HTTP_DEFAULTS, free_port, wait_until
from tls_certs import Pki

V2_SIG = b"\r\n\r\n\x00\r\nQUIT\n"


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    p = Pki(tmp_path_factory.mktemp("pki"))
    p.a = p.issue("a", "a.test", key="ecdsa")
    p.client = p.issue("cl", "client.test", client=True)
    return p


def tlvs_of(header: bytes) -> list[tuple[int, bytes]]:
    assert header.startswith(V2_SIG), header
    length = struct.unpack("!H", header[14:16])[0]
    off = 16 + {0x11: 12, 0x21: 36}.get(header[13], 0)
    out = []
    while off < 16 + length:
        t, n = header[off], struct.unpack("!H", header[off + 1:off + 3])[0]
        out.append((t, header[off + 3:off + 3 + n]))
        off += 3 + n
    return out


def sub(t: int, v: bytes) -> bytes:
    return bytes([t]) + struct.pack("!H", len(v)) + v


def test_ssl_tlv(cfg, sluice, pki):
    rec = TcpServer(record_head_and_answer)
    tls1, tls2, plain1, plain2 = (free_port() for _ in range(4))
    try:
        sluice(cfg(f"""
{HTTP_DEFAULTS}
frontend t1
    bind 127.0.0.1:{tls1} ssl crt {pki.a} ca-file {pki.ca} verify optional ssl-min-ver TLSv1.3 ciphersuites TLS_AES_128_GCM_SHA256
    default_backend cn
frontend t2
    bind 127.0.0.1:{tls2} ssl crt {pki.a} ca-file {pki.ca} verify optional ssl-min-ver TLSv1.3 ciphersuites TLS_AES_128_GCM_SHA256
    default_backend all
frontend p1
    bind 127.0.0.1:{plain1}
    default_backend cn
frontend p2
    bind 127.0.0.1:{plain2}
    default_backend all
backend cn
    server s 127.0.0.1:{rec.port} send-proxy-v2-ssl-cn
backend all
    server s 127.0.0.1:{rec.port} send-proxy-v2 proxy-v2-options unique-id,ssl,cert-cn,ssl-cipher,cert-sig,cert-key
"""), wait_ports=[tls1, tls2, plain1, plain2])
        with_cert = ssl.create_default_context(cafile=str(pki.ca))
        with_cert.check_hostname = False
        with_cert.load_cert_chain(str(pki.client))
        without = ssl.create_default_context(cafile=str(pki.ca))
        without.check_hostname = False
        n = 0
        for port, ctx in ((tls1, with_cert), (tls1, without), (tls2, with_cert), (tls2, without),
                          (plain1, None), (plain2, None)):
            raw = socket.create_connection(("127.0.0.1", port), timeout=10)
            c = ctx.wrap_socket(raw, server_hostname="a.test") if ctx else raw
            with c:
                c.sendall(f"GET /{n} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
                got = b""
                while b"ok" not in got:
                    d = c.recv(4096)
                    if not d:
                        break
                    got += d
            n += 1
            wait_until(lambda: len(rec.results) == n, 5)
    finally:
        rec.stop()
    by_path = {r.split(b"GET /")[1][:1]: r for r in rec.results}
    v13 = sub(0x21, b"TLSv1.3")
    cn = sub(0x22, b"client.test")
    key, sig = sub(0x25, b"EC256"), sub(0x24, b"ecdsa-with-SHA256")
    cipher = sub(0x23, b"TLS_AES_128_GCM_SHA256")
    # client flags: 0x01 TLS, 0x02 a certificate on this connection, 0x04 one in its session;
    # then the verify result (0: verified, or no certificate).
    assert tlvs_of(by_path[b"0"]) == [(0x20, b"\x07\0\0\0\0" + v13 + cn)]
    assert tlvs_of(by_path[b"1"]) == [(0x20, b"\x01\0\0\0\0" + v13)]
    assert tlvs_of(by_path[b"2"]) == [(0x05, b""), (0x20, b"\x07\0\0\0\0" + v13 + cn + key + sig + cipher)]
    assert tlvs_of(by_path[b"3"]) == [(0x05, b""), (0x20, b"\x01\0\0\0\0" + v13 + key + sig + cipher)]
    assert tlvs_of(by_path[b"4"]) == [(0x20, b"\0\0\0\0\0")]
    assert tlvs_of(by_path[b"5"]) == [(0x05, b""), (0x20, b"\0\0\0\0\0")]

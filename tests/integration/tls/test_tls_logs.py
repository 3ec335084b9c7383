"""The log lines of TLS connections: `option httpslog` (httplog's fields, then fc_err,
ssl_fc_err, ssl_c_err, ssl_c_ca_err, ssl_fc_is_resumed, the SNI, %sslv and %sslc), and the
%sslv / %sslc aliases and ssl_fc_err fetches in a log-format. Passes with SLUICE_BIN pointing
at HAProxy 3.5 -db."""
from __future__ import annotations

import socket
import ssl
import subprocess

import pytest

from sluice_harness import HTTP_DEFAULTS, free_port, sluice_bin
from tls_certs import Pki


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    p = Pki(tmp_path_factory.mktemp("pki"))
    p.a = p.issue("a", "a.test", key="ecdsa")
    return p


def get(port: int, ctx: ssl.SSLContext, path: str, session=None) -> ssl.SSLSession:
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    with ctx.wrap_socket(raw, server_hostname="a.test", session=session) as c:
        c.sendall(f"GET {path} HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n".encode())
        got = b""
        while True:
            d = c.recv(4096)
            if not d:
                break
            got += d
        assert b" 200 " in got, got
        return c.session


def test_httpslog_and_tls_aliases(cfg, sluice, pki, udp_log):
    port, custom = free_port(), free_port()
    sluice(cfg(f"""
global
    log 127.0.0.1:{udp_log.port} format raw local0
{HTTP_DEFAULTS}
frontend f
    log global
    option httpslog
    bind 127.0.0.1:{port} ssl crt {pki.a} ssl-min-ver TLSv1.3 ciphersuites TLS_AES_128_GCM_SHA256
    http-request return status 200 content-type text/plain string ok
frontend g
    log global
    log-format "custom %sslv %sslc %[ssl_fc_err] [%[ssl_fc_err_str]] %{{+Q}}sslv %[ssl_fc_curve]"
    bind 127.0.0.1:{custom} ssl crt {pki.a} ssl-min-ver TLSv1.3 ciphersuites TLS_AES_128_GCM_SHA256
    http-request return status 200 content-type text/plain string ok
"""), wait_ports=[port, custom])
    ctx = ssl.create_default_context(cafile=str(pki.ca))
    session = get(port, ctx, "/first")
    line = udp_log.wait_for(lambda m: "/first" in m)
    assert line.rstrip("\n").endswith(
        '"GET /first HTTP/1.1" 0/0000000000000000/0/0/0 a.test/TLSv1.3/TLS_AES_128_GCM_SHA256'), line
    assert " f~ f/<NOSRV> " in line, line
    get(port, ctx, "/second", session)
    line = udp_log.wait_for(lambda m: "/second" in m)
    assert line.rstrip("\n").endswith(
        '"GET /second HTTP/1.1" 0/0000000000000000/0/0/1 a.test/TLSv1.3/TLS_AES_128_GCM_SHA256'), line
    get(custom, ctx, "/third")
    line = udp_log.wait_for(lambda m: m.startswith("custom"))
    assert line.rstrip("\n") == 'custom TLSv1.3 TLS_AES_128_GCM_SHA256 0 [-] "TLSv1.3" X25519', line


def test_httpslog_needs_http_mode(cfg, tmp_path):
    conf = cfg(f"""
defaults
    mode tcp
    timeout client 5s
    timeout server 5s
    timeout connect 5s
frontend f
    log 127.0.0.1:514 local0
    option httpslog
    bind 127.0.0.1:{free_port()}
    default_backend b
backend b
    server s 127.0.0.1:1
""")
    r = subprocess.run([sluice_bin(), "-c", "-f", str(conf)], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0, r.stderr
    assert (f"parsing [{conf}:8] : 'option httpslog' not usable with frontend 'f' (needs 'mode "
            "http'). Falling back to 'option tcplog'.") in r.stderr, r.stderr

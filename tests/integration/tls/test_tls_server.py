"""TLS towards servers (`server ... ssl`): verification against a CA and a name (verifyhost,
else the SNI), `sni <expr>`, session resumption per server (and `no-ssl-reuse`), keep-alive
reuse of TLS server connections, a client certificate (`crt`), ALPN, the PROXY header sent in
clear before the handshake, TCP mode, `default-server` and the globals, the ssl_bc* fetches in
responses and logs, and what a server whose certificate does not verify gets. The servers are
Python TLS servers (tests/support/tls_origin.py); the certificates are made with `openssl`.
Passes with SLUICE_BIN pointing at HAProxy 3.5 -db."""
from __future__ import annotations

import datetime
import socket
import subprocess

import pytest

from sluice_harness import HTTP_DEFAULTS, free_port, recv_exact, sluice_bin, wait_until
from tls_certs import Pki
from tls_origin import TlsOrigin


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    p = Pki(d)
    p.srv = p.issue("srv", "backend.test", ["backend.test", "alt.test"], key="ecdsa")
    p.client = p.issue("client", "sluice client", client=True)
    p.other = Pki(d / "other", "Other CA")
    p.stranger = p.other.issue("stranger", "backend.test", ["backend.test"])
    return p


@pytest.fixture
def origins():
    started = []

    def start(*args, **kw):
        o = TlsOrigin(*args, **kw)
        started.append(o)
        return o
    yield start
    for o in started:
        o.stop()


def get(port: int, host: str = "backend.test", n: int = 1) -> list[bytes]:
    """n requests on one keep-alive connection; the bodies (and the x-bc header's value)."""
    out = []
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        f = c.makefile("rb")
        for i in range(n):
            last = i == n - 1
            c.sendall(f"GET /{i} HTTP/1.1\r\nHost: {host}\r\n"
                      f"{'Connection: close' if last else ''}\r\n\r\n".encode())
            status = f.readline()
            headers = {}
            while (line := f.readline()) not in (b"\r\n", b""):
                k, v = line.decode().split(":", 1)
                headers[k.strip().lower()] = v.strip()
            body = f.read(int(headers.get("content-length", "0")))
            out.append(status.split(b" ")[1] + b" " + body +
                       (b" | " + headers["x-bc"].encode() if "x-bc" in headers else b""))
    return out


def http_config(port: int, server_line: str, extra_global: str = "", extra: str = "",
                frontend: str = "") -> str:
    return f"""
global
    log stderr format raw local0
    nbthread 1
{extra_global}
{HTTP_DEFAULTS}
    log global
    option httplog
    retries 0
frontend fe
    bind 127.0.0.1:{port}
    http-response set-header x-bc "%[ssl_bc] %[ssl_bc_protocol] %[ssl_bc_is_resumed] %[ssl_bc_curve]"
{frontend}
    default_backend be
backend be
    {server_line}
{extra}
"""


def test_verified_server_sni_resumption_and_keepalive(cfg, sluice, pki, origins):
    o = origins(pki.srv)
    port = free_port()
    s = sluice(cfg(http_config(
        port, f"server s1 127.0.0.1:{o.port} ssl verify required ca-file {pki.ca} sni req.hdr(host)")),
        wait_ports=[port])
    # The name comes from the request and the certificate is checked against it.
    first = get(port, "backend.test", n=2)
    assert first[0].startswith(b"200 conn=1 sni=backend.test alpn=None resumed=0 host=backend.test"), first
    assert first[0].endswith(b"| 1 TLSv1.3 0 X25519"), first
    # The second request of the client rides the same TLS connection.
    assert first[1].startswith(b"200 conn=1 "), first
    # A new connection resumes the session made for that name.
    again = get(port, "backend.test")
    assert again[0].startswith(b"200 conn=2 sni=backend.test alpn=None resumed=1 "), again
    assert again[0].endswith(b"| 1 TLSv1.3 1 X25519"), again
    # Another name the certificate carries: a full handshake (a session is only resumed
    # towards the name it was made for).
    alt = get(port, "alt.test")
    assert alt[0].startswith(b"200 conn=3 sni=alt.test alpn=None resumed=0 "), alt
    # A name the certificate does not carry: the handshake fails, 503 and SC--.
    bad = get(port, "nothere.test")
    assert bad[0].startswith(b"503 "), bad
    assert len(o.conns) == 3
    wait_until(lambda: " 503 " in s.stderr(), 5, message=s.describe)
    line = next(l for l in s.stderr().splitlines() if " 503 " in l)
    assert " be/s1 " in line and " SC-- " in line, line


def test_verify_failures_and_verify_none(cfg, sluice, pki, origins):
    stranger = origins(pki.stranger)
    good = origins(pki.srv)
    port = free_port()
    sluice(cfg(http_config(
        port, f"server s1 127.0.0.1:{stranger.port} ssl verify required ca-file {pki.ca} sni str(backend.test)",
        frontend="""    use_backend other if { path_beg /1 }
    use_backend lax if { hdr(host) -m beg none }""", extra=f"""
backend other
    server s2 127.0.0.1:{good.port} ssl ca-file {pki.ca} verifyhost other.test no-sni-auto
backend lax
    server s3 127.0.0.1:{stranger.port} ssl verify none
""")), wait_ports=[port])
    # A certificate from another CA, then a name that does not match verifyhost.
    assert get(port)[0].startswith(b"503 "), "untrusted CA"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        c.sendall(b"GET /1 HTTP/1.1\r\nHost: backend.test\r\nConnection: close\r\n\r\n")
        assert recv_exact(c, 12) == b"HTTP/1.1 503", "verifyhost mismatch"
    assert stranger.failures >= 1 and not good.conns and not stranger.conns
    # verify none: the same untrusted server is used (its name is the Host's: sni-auto).
    r = get(port, "none.test")
    assert r[0].startswith(b"200 conn=1 sni=none.test "), r


def test_sni_auto_is_the_host_and_idle_connections_match_it(cfg, sluice, pki, origins):
    o = origins(pki.srv)
    port, port2 = free_port(), free_port()
    sluice(cfg(http_config(port, f"server s1 127.0.0.1:{o.port} ssl verify none",
                           extra=f"""    http-reuse always
listen plain
    bind 127.0.0.1:{port2}
    server s1 127.0.0.1:{o.port} ssl verify none no-sni-auto
""")), wait_ports=[port, port2])
    # The Host's name without its port; an idle connection serves the next client with the
    # same name only.
    assert get(port, "a.test:8443")[0].startswith(b"200 conn=1 sni=a.test "), o.conns
    assert get(port, "b.test")[0].startswith(b"200 conn=2 sni=b.test "), o.conns
    assert get(port, "a.test")[0].startswith(b"200 conn=1 sni=a.test "), o.conns
    # No SNI for an IP address (RFC 6066; HAProxy 3.5 sends "127.0.0.1"), nor with no-sni-auto.
    ip = b"127.0.0.1" if "haproxy" in sluice_bin() else b"None"
    assert get(port, "127.0.0.1:80")[0].startswith(b"200 conn=3 sni=" + ip + b" "), o.conns
    assert get(port2, "c.test")[0].startswith(b"200 conn=4 sni=None "), o.conns


def test_client_certificate_alpn_default_server_and_no_reuse(cfg, sluice, pki, origins):
    o = origins(pki.srv, ca=pki.ca, alpn=["http/1.1"])
    port = free_port()
    sluice(cfg(http_config(port, f"""default-server ssl verify required ca-file {pki.ca} crt {pki.client} alpn h2,http/1.1 no-ssl-reuse
    server s1 127.0.0.1:{o.port} verifyhost backend.test""",
                           extra_global="    ssl-default-server-options ssl-min-ver TLSv1.2 ssl-max-ver TLSv1.2")),
           wait_ports=[port])
    r = get(port)
    assert r[0].startswith(b"200 conn=1 sni=backend.test alpn=http/1.1 resumed=0 "), r
    assert r[0].split(b" | ")[0].endswith(b"peer=commonName=sluice client"), r
    assert r[0].endswith(b"| 1 TLSv1.2 0 X25519"), r
    # no-ssl-reuse: the next connection makes a full handshake again.
    r = get(port)
    assert r[0].startswith(b"200 conn=2 sni=backend.test alpn=http/1.1 resumed=0 "), r


def test_tcp_mode_with_send_proxy(cfg, sluice, pki, origins):
    o = origins(pki.srv, proxy_header=True, echo=True)
    port = free_port()
    sluice(cfg(f"""
global
    ssl-server-verify none
defaults
    mode tcp
    timeout connect 2s
    timeout client 5s
    timeout server 5s
listen l
    bind 127.0.0.1:{port}
    server s1 127.0.0.1:{o.port} ssl send-proxy sni str(tcp.test)
"""), wait_ports=[port])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        c.sendall(b"ping over tls\n")
        assert recv_exact(c, 14) == b"ping over tls\n"
        local = c.getsockname()
    wait_until(lambda: o.conns, 5, message="the origin's connection")
    info = o.conns[0]
    assert info["sni"] == "tcp.test", info
    assert info["proxy"] == f"PROXY TCP4 127.0.0.1 127.0.0.1 {local[1]} {port}", info


CHECKS = [
    ("server s1 127.0.0.1:4 ssl",
     "'server be/s1' : verify is enabled by default but no CA file specified. If you're running "
     "on a LAN where you're certain to trust the server's certificate, please set an explicit "
     "'verify none' statement on the 'server' line, or use 'ssl-server-verify none' in the global "
     "section to disable server-side verifications by default."),
    ("server s1 127.0.0.1:4 ssl verify bogus",
     "'server be/s1' : 'verify' : unknown verify method 'bogus', only 'none' and 'required' are "
     "supported."),
    ("server s1 127.0.0.1:4 ssl verify none ssl-min-ver TLSv9",
     "'server be/s1' : 'TLSv9' : unknown ssl/tls version."),
    ("server s1 127.0.0.1:4 ssl verify none sni",
     "'server be/s1' : 'sni' : missing sni expression."),
    ("server s1 127.0.0.1:4 ssl verify none sni foo(",
     "'server be/s1' : error detected while parsing sni or pool-conn-name expressions : "),
    ("server s1 127.0.0.1:4 ssl verify none verifyhost",
     "'server be/s1' : 'verifyhost' : missing hostname to verify against."),
    ("server s1 127.0.0.1:4 ssl ca-file /nonexistent/ca.pem",
     "'server be/s1' : Couldn't open the ca-file '/nonexistent/ca.pem' (No such file or "
     "directory)."),
    ("server s1 127.0.0.1:4 ssl verify none crt /nonexistent/c.pem",
     "'server be/s1' : unable to stat SSL certificate from file '/nonexistent/c.pem' : No such "
     "file or directory."),
    ("server s1 127.0.0.1:4 ssl verify none ciphers NOPE",
     "'server be/s1' : unable to set SSL cipher list to 'NOPE'."),
    ("server s1 127.0.0.1:4 ssl verify none check-sni",
     "'server be/s1' : 'check-sni' : missing SNI."),
]


@pytest.mark.parametrize("line,message", CHECKS, ids=[c[0].split(" ", 3)[3] for c in CHECKS])
def test_configuration_errors(tmp_path, line, message):
    path = tmp_path / "t.cfg"
    path.write_text(http_config(free_port(), line))
    binary = sluice_bin()
    cmd = [binary, "-c", "-f", str(path)]
    if "haproxy" in binary:
        cmd = [binary, "-c", "-f", str(path)]
    r = subprocess.run(cmd, capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
    out = (r.stdout + r.stderr).decode()
    assert r.returncode != 0, out
    assert f"[{path}:" in out and message in out, out


def test_health_checks_over_tls(cfg, sluice, pki, origins, short_tmp):
    from sluice_harness import cli
    o = origins(pki.srv)
    stranger = origins(pki.stranger)
    port, sock = free_port(), short_tmp / "s.sock"
    sluice(cfg(http_config(port, f"""option httpchk GET /health
    http-check send hdr host backend.test
    server tls 127.0.0.1:{o.port} ssl verify required ca-file {pki.ca} check inter 200 check-sni backend.test
    server untrusted 127.0.0.1:{stranger.port} ssl verify required ca-file {pki.ca} check inter 200 check-sni backend.test
    server plainport 127.0.0.1:{o.port} ssl verify none check inter 200 port {o.port} no-check-ssl""",
                           extra_global=f"    stats socket {sock} level admin", extra=f"""
backend l4
    server forced 127.0.0.1:{o.port} check inter 200 check-ssl verify none
""")), wait_ports=[port], wait_unix=[sock])

    def statuses():
        rows = [l.split(",") for l in cli(sock, "show stat").splitlines() if l and not l.startswith("#")]
        # ("* " marks a check under way.)
        return {(r[0], r[1]): r[36].removeprefix("* ") for r in rows
                if r[1] not in ("FRONTEND", "BACKEND")}
    want = {("be", "tls"): "L7OK", ("be", "untrusted"): "L6RSP", ("be", "plainport"): "SOCKERR",
            ("l4", "forced"): "L6OK"}
    wait_until(lambda: statuses() == want, 10, message=lambda: f"check statuses {statuses()}")
    # The checks over TLS sent the check-sni name; the one on the plain port spoke HTTP in clear
    # to a TLS server, which closed at once (SOCKERR, as in HAProxy 3.5).
    assert any(c["sni"] == "backend.test" and c["requests"] >= 1 for c in o.conns), o.conns
    # `show servers state`: srv_use_ssl is 1 for `ssl` servers only (check-ssl is not), as in
    # HAProxy 3.5.
    use_ssl = {l.split()[3]: l.split()[20] for l in cli(sock, "show servers state").splitlines()
               if len(l.split()) > 20 and not l.startswith("#")}
    assert use_ssl == {"tls": "1", "untrusted": "1", "plainport": "1", "forced": "0"}, use_ssl


def test_connect_ssl_steps_in_tcp_check_and_http_check(cfg, sluice, pki, origins, short_tmp):
    """`tcp-check connect ssl` / `http-check connect ssl` on a plain server: the step's own TLS
    handshake with its `sni` and `alpn`; a handshake that fails fails the check at that step."""
    from sluice_harness import cli
    o = origins(pki.srv, alpn=["h2", "http/1.1"])
    stranger = origins(pki.stranger)
    port, sock = free_port(), short_tmp / "s.sock"
    sluice(cfg(http_config(port, f"""option httpchk
    http-check connect ssl sni backend.test alpn http/1.1
    http-check send meth GET uri /health hdr host backend.test
    http-check expect status 200
    server s1 127.0.0.1:{o.port} check inter 200 verify required ca-file {pki.ca}""",
                           extra_global=f"    stats socket {sock} level admin", extra=f"""
backend tcp
    mode tcp
    option tcp-check
    tcp-check connect ssl sni alt.test
    tcp-check send "GET /tcp HTTP/1.1\\r\\nhost: x\\r\\n\\r\\n"
    tcp-check expect rstring ^HTTP/1.1\\ 200
    server s2 127.0.0.1:{o.port} check inter 200 verify none
    server s3 127.0.0.1:{stranger.port} check inter 200 verify required ca-file {pki.ca}
""")), wait_ports=[port], wait_unix=[sock])

    def statuses():
        rows = [l.split(",") for l in cli(sock, "show stat").splitlines() if l and not l.startswith("#")]
        return {r[1]: r[36].removeprefix("* ") for r in rows if r[1] not in ("FRONTEND", "BACKEND")}
    want = {"s1": "L7OK", "s2": "L7OK", "s3": "L6RSP"}
    wait_until(lambda: statuses() == want, 10, message=lambda: f"check statuses {statuses()}")
    assert any(c["sni"] == "backend.test" and c["alpn"] == "http/1.1" and c["requests"] >= 1
               for c in o.conns), o.conns
    assert any(c["sni"] == "alt.test" and c["alpn"] is None and c["requests"] >= 1
               for c in o.conns), o.conns


def test_connect_ssl_step_needs_a_ca_or_verify_none(tmp_path):
    path = tmp_path / "t.cfg"
    path.write_text(http_config(free_port(), "option tcp-check\n    tcp-check connect ssl\n"
                                             "    server s1 127.0.0.1:4 check"))
    r = subprocess.run([sluice_bin(), "-c", "-f", str(path)], capture_output=True, text=True,
                       timeout=30, stdin=subprocess.DEVNULL)
    assert r.returncode != 0, r.stderr
    assert "'server be/s1' : verify is enabled by default but no CA file specified." in r.stderr, r.stderr


def test_ssl_figures_in_show_info_and_prometheus(cfg, sluice, pki, origins, short_tmp):
    """CurrSslConns, CumSslConns (both sides), the frontend and backend key rates (full
    handshakes), the frontend reuse percentage, and their Prometheus metrics."""
    import ssl
    from sluice_harness import cli
    o = origins(pki.srv)
    port, port12, prom, sock = free_port(), free_port(), free_port(), short_tmp / "s.sock"
    haproxy = "haproxy" in sluice_bin()   # the HAProxy 3.5 here has no Prometheus exporter
    sluice(cfg(f"""
global
    nbthread 1
    stats socket {sock} level admin
{HTTP_DEFAULTS}
frontend fe
    bind 127.0.0.1:{port} ssl crt {pki.srv}
    default_backend be
frontend fe12
    bind 127.0.0.1:{port12} ssl crt {pki.srv} no-tls-tickets
    http-request return status 200 content-type text/plain string ok
frontend metrics
    bind 127.0.0.1:{prom}
    {"" if haproxy else "http-request use-service prometheus-exporter"}
backend be
    server s1 127.0.0.1:{o.port} ssl verify required ca-file {pki.ca} sni str(backend.test)
"""), wait_ports=[port, port12, prom], wait_unix=[sock])
    ctx = ssl.create_default_context(cafile=str(pki.ca))
    session = None
    # Both connections within one second of the monotonic clock (the rates' seconds): they
    # take about 0.1s, so they start just after a second begins.
    import time
    time.sleep(1.01 - time.monotonic() % 1.0)
    for _ in range(2):   # a full handshake, then a resumed one, each with one request
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            with ctx.wrap_socket(raw, server_hostname="backend.test", session=session) as c:
                c.sendall(b"GET / HTTP/1.1\r\nHost: backend.test\r\nConnection: close\r\n\r\n")
                got = b""
                while d := c.recv(4096):
                    got += d
                assert got.startswith(b"HTTP/1.1 200"), got
                session = c.session
    assert len(o.conns) == 2 and o.conns[1]["resumed"], o.conns

    def info() -> dict:
        return dict(l.split(": ", 1) for l in cli(sock, "show info").splitlines() if ": " in l)
    # The client connections are gone; the server connections may still be pooled.
    wait_until(lambda: int(info()["CurrSslConns"]) <= 2, 5, message=lambda: str(info()))
    i = info()
    assert i["CumSslConns"] == "4" and i["MaxSslConns"] == "0", i
    assert i["MaxSslRate"] == "2" and i["SslFrontendMaxKeyRate"] == "1", i
    assert i["SslBackendMaxKeyRate"] == "1", i
    # A resumption from a ticket (TLS 1.3) does not look the cache up.
    assert i["SslCacheLookups"] == "0" and i["SslCacheMisses"] == "0", i
    # Within the second: 2 connections, 1 key (50% reused); later rates fade to 0.
    assert i["SslFrontendSessionReuse_pct"] in ("50", "0"), i
    # TLS 1.2 without tickets: the session is found in the cache by its id.
    ctx12 = ssl.create_default_context(cafile=str(pki.ca))
    ctx12.maximum_version = ssl.TLSVersion.TLSv1_2
    session = None
    for _ in range(2):
        with socket.create_connection(("127.0.0.1", port12), timeout=10) as raw:
            with ctx12.wrap_socket(raw, server_hostname="backend.test", session=session) as c:
                c.sendall(b"GET / HTTP/1.1\r\nHost: backend.test\r\nConnection: close\r\n\r\n")
                while c.recv(4096):
                    pass
                reused, session = c.session_reused, c.session
    assert reused
    i = info()
    assert i["SslCacheLookups"] == "1" and i["SslCacheMisses"] == "0", i
    if haproxy:
        return
    with socket.create_connection(("127.0.0.1", prom), timeout=10) as c:
        c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        text = b""
        while d := c.recv(65536):
            text += d
    text = text.decode()
    assert "\nhaproxy_process_ssl_connections_total 6\n" in text, text[:2000]
    for metric, field in (("max_frontend_ssl_key_rate", "SslFrontendMaxKeyRate"),
                          ("max_backend_ssl_key_rate", "SslBackendMaxKeyRate"),
                          ("ssl_cache_lookups_total", "SslCacheLookups")):
        assert f"\nhaproxy_process_{metric} {i[field]}\n" in text, (metric, i)


def test_check_sni_without_tls_checks_warns(tmp_path):
    """check-sni / check-alpn on a server whose checks are plain would do nothing: a warning
    says so (a check port of its own keeps an `ssl` server's checks plain)."""
    if "haproxy" in sluice_bin():
        pytest.skip("sluice's own warning")
    path = tmp_path / "t.cfg"
    path.write_text(http_config(free_port(), "server s1 127.0.0.1:4 ssl verify none check port 5 "
                                             "check-sni a.test"))
    r = subprocess.run([sluice_bin(), "-c", "-f", str(path)], capture_output=True, text=True,
                       timeout=30, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert ("'server be/s1' : 'check-sni' has no effect: the checks of this server do not use "
            "TLS (see 'check-ssl').") in r.stderr, r.stderr
    path.write_text(http_config(free_port(), "server s1 127.0.0.1:4 ssl verify none check "
                                             "check-sni a.test"))
    r = subprocess.run([sluice_bin(), "-c", "-f", str(path)], capture_output=True, text=True,
                       timeout=30, stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and "has no effect" not in r.stderr, r.stderr


def test_server_certificate_fetches(cfg, sluice, pki, origins):
    """ssl_s_*: the certificate the server presented on the server connection, compared with
    what `openssl x509` reads from the same file (HAProxy 3.5 gives the same)."""
    o = origins(pki.srv)
    port = free_port()
    fields = ("%[ssl_s_s_dn(CN)]|%[ssl_s_i_dn(CN)]|%[ssl_s_version]|%[ssl_s_key_alg]|"
              "%[ssl_s_sig_alg]|%[ssl_s_serial,hex]|%[ssl_s_der,sha1,hex]|%[ssl_s_notafter]|"
              "%[ssl_s_s_dn]|%[ssl_s_sha1,hex]")
    sluice(cfg(http_config(
        port, f"server s1 127.0.0.1:{o.port} ssl verify required ca-file {pki.ca} sni str(backend.test)",
        frontend=f'    http-response set-header x-s "{fields}"')), wait_ports=[port])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        c.sendall(b"GET / HTTP/1.1\r\nHost: backend.test\r\nConnection: close\r\n\r\n")
        data = b""
        while b"\r\n\r\n" not in data:
            d = c.recv(4096)
            if not d:
                break
            data += d
    head = data.split(b"\r\n\r\n")[0].decode()
    got = next(l.split(":", 1)[1].strip() for l in head.split("\r\n") if l.lower().startswith("x-s:"))

    def x509(*args: str) -> str:
        return subprocess.run(["openssl", "x509", "-in", str(pki.srv), "-noout", *args],
                              capture_output=True, text=True, check=True).stdout.strip()
    serial = x509("-serial").split("=", 1)[1].upper()
    sha1 = x509("-fingerprint", "-sha1").split("=", 1)[1].replace(":", "").upper()
    # notAfter as the certificate writes it (UTCTime, YYMMDDhhmmssZ).
    not_after = datetime.datetime.strptime(x509("-enddate").split("=", 1)[1],
                                           "%b %d %H:%M:%S %Y %Z").strftime("%y%m%d%H%M%SZ")
    subject = x509("-subject", "-nameopt", "compat").split("=", 1)[1].strip()
    cn, issuer_cn, version, key_alg, sig_alg, s_serial, s_sha1, s_not_after, s_dn, sha1_fetch = \
        got.split("|")
    assert sha1_fetch == sha1, got
    assert (cn, issuer_cn, version) == ("backend.test", "Test CA", "3"), got
    text_sig = next(l.split(":", 1)[1].strip() for l in x509("-text").splitlines()
                    if "Signature Algorithm:" in l)
    assert (key_alg, sig_alg) == ("id-ecPublicKey", text_sig), got
    assert s_serial.lstrip("0") == serial.lstrip("0") and s_sha1 == sha1, (got, serial, sha1)
    assert s_not_after == not_after, (got, not_after)
    assert s_dn == subject, (got, subject)


def test_tls_versions_of_a_plain_server_are_checked_only_when_used(cfg):
    """A server without ssl whose TLS versions conflict is accepted (HAProxy 3.5 accepts it);
    with ssl, or a `connect ssl` check step that needs them, it is refused."""
    from sluice_harness import config_refused, run_sluice
    base = f"{HTTP_DEFAULTS}\nbackend b\n"
    versions = "ssl-min-ver TLSv1.3 ssl-max-ver TLSv1.2"
    rc, _, err = run_sluice(["-c", "-f", str(cfg(base + f"    server s 127.0.0.1:80 {versions}\n"))])
    assert rc == 0, err
    # (HAProxy's words differ: "backend 'b': all SSL/TLS versions are disabled for server 's'".)
    config_refused(cfg(base + f"    server s 127.0.0.1:80 ssl verify none {versions}\n", name="s.cfg"),
                   "all SSL/TLS versions are disabled")
    if "haproxy" not in sluice_bin():
        config_refused(cfg(base + "    option tcp-check\n    tcp-check connect ssl\n"
                           f"    server s 127.0.0.1:80 check verify none {versions}\n", name="c.cfg"),
                       "'server b/s' : all SSL/TLS versions are disabled.")

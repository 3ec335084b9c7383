"""TLS termination (`bind ... ssl crt ...`): certificates chosen by SNI (exact, wildcard, the
default), RSA or ECDSA by what the client supports, strict-sni, ALPN, version limits, client
certificates, resumption, the ssl_fc* fetches in rules and logs, `redirect scheme https`,
TCP mode, and what a client that does not speak TLS gets. Certificates are made here with the
`openssl` command. Passes with SLUICE_BIN pointing at HAProxy 3.5 -db."""
from __future__ import annotations

import socket
import subprocess
import time

import pytest

from sluice_harness import HTTP_DEFAULTS, free_port, recv_exact, sluice_bin, wait_until
from tls_certs import Pki, s_client, subject


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    p = Pki(d)
    certs = d / "certs"
    p.default = p.issue("default", "default.test")   # outside certs/: named first
    p.a_rsa = p.issue("a-rsa", "a.test", ["a.test", "www.a.test"], key="rsa", out_dir=certs)
    p.a_ec = p.issue("a-ec", "a.test", ["a.test", "www.a.test"], key="ecdsa", out_dir=certs)
    p.wild = p.issue("wild", "*.wild.test", ["*.wild.test"], out_dir=certs)
    p.certs = certs
    p.client = p.issue("client", "client one", client=True)
    p.other = Pki(d / "other", "Other CA")
    p.stranger = p.other.issue("stranger", "stranger", client=True)
    return p


def curl(port: int, path: str, host: str, pki, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(["curl", "-sS", "--max-time", "10", "--cacert", str(pki.ca),
                           "--resolve", f"{host}:{port}:127.0.0.1", *extra,
                           f"https://{host}:{port}{path}"], capture_output=True, timeout=20)


def frontend_config(port: int, plain: int, tcp: int, echo_port: int, pki, extra: str = "") -> str:
    return f"""
global
    log stderr format raw local0
    ssl-default-bind-options ssl-min-ver TLSv1.2
defaults
    mode http
    log global
    option httplog
    timeout client 2s
    timeout server 5s
    timeout connect 2s
frontend web
    bind 127.0.0.1:{port} ssl crt {pki.default} crt {pki.certs} alpn h2,http/1.1
    bind 127.0.0.1:{plain}
    http-request redirect scheme https unless {{ ssl_fc }}
    http-request return status 200 content-type text/plain lf-string "fc=%[ssl_fc] sni=%[ssl_fc_sni] proto=%[ssl_fc_protocol] alpn=%[ssl_fc_alpn] reused=%[ssl_fc_is_resumed]"
listen tcp
    mode tcp
    bind 127.0.0.1:{tcp} ssl crt {pki.default}
    server echo 127.0.0.1:{echo_port}
{extra}
"""


def test_termination_sni_alpn_and_fetches(cfg, sluice, pki, echo):
    port, plain, tcp = free_port(), free_port(), free_port()
    s = sluice(cfg(frontend_config(port, plain, tcp, echo.port, pki)), wait_ports=[port, plain, tcp])
    # SNI picks the certificate: exact, a second name of it, a wildcard, and the default.
    assert "CN = a.test" in subject(s_client(port, "-servername", "a.test"))
    assert "CN = a.test" in subject(s_client(port, "-servername", "www.a.test"))
    assert "CN = *.wild.test" in subject(s_client(port, "-servername", "x.wild.test"))
    assert "CN = default.test" in subject(s_client(port, "-servername", "nobody.test"))
    assert "CN = default.test" in subject(s_client(port, "-noservername"))
    # The RSA or the ECDSA certificate of a.test, by what the client accepts.
    rsa = s_client(port, "-servername", "a.test", "-tls1_2", "-sigalgs", "RSA-PSS+SHA256:RSA+SHA256")
    ec = s_client(port, "-servername", "a.test", "-tls1_2", "-sigalgs", "ECDSA+SHA256")
    assert "Signature type: RSA" in rsa, rsa
    assert "Signature type: ECDSA" in ec, ec
    # HTTP over it, with the fetches.
    r = curl(port, "/x", "a.test", pki, "--http1.1")
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"fc=1 sni=a.test proto=TLSv1.3 alpn=http/1.1 reused=0", r.stdout
    # A client offering h2 first still gets HTTP/1.1 (HAProxy would speak HTTP/2 here).
    if "haproxy" not in sluice_bin():
        r = curl(port, "/x", "a.test", pki, "--http2")
        assert r.stdout.endswith(b" alpn=http/1.1 reused=0"), (r.stdout, r.stderr)
    r = curl(port, "/x", "a.test", pki, "--http1.1", "--tls-max", "1.2")
    assert r.stdout.startswith(b"fc=1 sni=a.test proto=TLSv1.2 "), r.stdout
    # redirect scheme https unless { ssl_fc }: only on the plain port.
    with socket.create_connection(("127.0.0.1", plain), timeout=5) as c:
        c.sendall(b"GET /p?q=1 HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n")
        got = b""
        while d := c.recv(4096):
            got += d
    assert got.startswith(b"HTTP/1.1 302 Found\r\n") and b"\r\nlocation: https://a.test/p?q=1\r\n" in got.lower(), got
    # option httplog lines of TLS connections.
    wait_until(lambda: '"GET /x HTTP/1.1"' in s.stderr(), 5, message=s.describe)
    line = next(l for l in s.stderr().splitlines() if '"GET /x HTTP/1.1"' in l)
    assert " web~ web/<NOSRV> " in line and " 200 " in line, line
    # TCP mode: the echo server gets the decrypted bytes.
    import ssl
    ctx = ssl.create_default_context(cafile=str(pki.ca))
    with socket.create_connection(("127.0.0.1", tcp), timeout=5) as raw:
        with ctx.wrap_socket(raw, server_hostname="default.test") as c:
            c.sendall(b"hello over tls\n")
            assert recv_exact(c, 15) == b"hello over tls\n"


def test_versions_strict_sni_and_refusals(cfg, sluice, pki, echo):
    port, plain, tcp, strict = free_port(), free_port(), free_port(), free_port()
    s = sluice(cfg(frontend_config(port, plain, tcp, echo.port, pki, f"""
frontend strict
    bind 127.0.0.1:{strict} ssl crt {pki.a_rsa} strict-sni ssl-min-ver TLSv1.3
    http-request return status 200 content-type text/plain string ok
""")), wait_ports=[port, strict])
    assert "CN = a.test" in subject(s_client(strict, "-servername", "a.test"))
    # strict-sni: an unknown name, or none, ends the handshake.
    for args in (("-servername", "nobody.test"), ("-noservername",)):
        out = s_client(strict, *args)
        assert not subject(out), out
    # ssl-min-ver TLSv1.3: a TLS 1.2 client is refused.
    out = s_client(strict, "-servername", "a.test", "-tls1_2")
    assert not subject(out), out
    # Plain HTTP to a TLS port: closed, and logged as a handshake failure.
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        c.settimeout(5)
        try:
            got = c.recv(4096)
        except ConnectionResetError:
            got = b""
        assert not got.startswith(b"HTTP/"), got
    # A client that connects and says nothing is closed after timeout client (2s).
    t0 = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=6) as c:
        try:
            assert c.recv(10) == b""
        except ConnectionResetError:
            pass
    assert 1.5 < time.monotonic() - t0 < 5
    wait_until(lambda: "web/1: SSL handshake failure" in s.stderr() and
               "web/1: Timeout during SSL handshake" in s.stderr(), 5, message=s.describe)


def test_client_certificates(cfg, sluice, pki):
    req, opt = free_port(), free_port()
    sluice(cfg(f"""
{HTTP_DEFAULTS}
frontend required
    bind 127.0.0.1:{req} ssl crt {pki.default} ca-file {pki.ca} verify required
    http-request return status 200 content-type text/plain lf-string "used=%[ssl_c_used] verify=%[ssl_c_verify]"
frontend optional
    bind 127.0.0.1:{opt} ssl crt {pki.default} ca-file {pki.ca} verify optional
    http-request return status 200 content-type text/plain lf-string "used=%[ssl_c_used] verify=%[ssl_c_verify]"
"""), wait_ports=[req, opt])
    ok = curl(req, "/", "default.test", pki, "--cert", str(pki.client))
    assert ok.stdout == b"used=1 verify=0", (ok.stdout, ok.stderr)
    assert curl(req, "/", "default.test", pki).returncode != 0            # no certificate
    assert curl(req, "/", "default.test", pki, "--cert", str(pki.stranger)).returncode != 0
    assert curl(opt, "/", "default.test", pki).stdout == b"used=0 verify=0"
    # optional: no certificate is fine, an untrusted one still ends the handshake (HAProxy's).
    assert curl(opt, "/", "default.test", pki, "--cert", str(pki.stranger)).returncode != 0


def test_certificate_fetches(cfg, sluice, pki):
    """ssl_c_* (the client's certificate) and ssl_f_* (the one served), HAProxy's formats
    (compared with HAProxy 3.5 by hand: the same bytes for the same certificates)."""
    port = free_port()
    fields = ("s_dn=%[ssl_c_s_dn] cn=%[ssl_c_s_dn(CN)] i_dn=%[ssl_c_i_dn] "
              "rfc=%[ssl_c_s_dn(,0,rfc2253)] serial=%[ssl_c_serial,hex] na=%[ssl_c_notafter] "
              "nb=%[ssl_c_notbefore] sig=%[ssl_c_sig_alg] key=%[ssl_c_key_alg] "
              "ver=%[ssl_c_version] sha1=%[ssl_c_sha1,hex] der=%[ssl_c_der,hex] "
              "err=%[ssl_c_err]/%[ssl_c_ca_err]/%[ssl_c_ca_err_depth] f_s_dn=%[ssl_f_s_dn] "
              "f_i_dn=%[ssl_f_i_dn(CN)] f_key=%[ssl_f_key_alg] f_ver=%[ssl_f_version]")
    sluice(cfg(f"""
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{port} ssl crt {pki.default} ca-file {pki.ca} verify optional
    http-request return status 200 content-type text/plain lf-string "{fields}"
"""), wait_ports=[port])
    got = dict(kv.split("=", 1) for kv in
               curl(port, "/", "default.test", pki, "--cert", str(pki.client)).stdout.decode().split(" ")
               if "=" in kv)

    def x509(*args: str) -> str:
        return subprocess.run(["openssl", "x509", "-in", str(pki.client), "-noout", *args],
                              capture_output=True, text=True, check=True).stdout.strip()
    der = subprocess.run(["openssl", "x509", "-in", str(pki.client), "-outform", "DER"],
                         capture_output=True, check=True).stdout
    assert got["s_dn"] == "/CN=client", got   # the value stops at the space (split above)
    assert got["cn"] == "client" and got["i_dn"] == "/CN=Test", got
    assert got["serial"] == x509("-serial").split("=")[1].rjust(2, "0"), got
    assert got["sha1"] == x509("-fingerprint", "-sha1").split("=")[1].replace(":", ""), got
    assert got["der"] == der.hex().upper(), got
    assert got["na"].endswith("Z") and len(got["na"]) == 13 and got["nb"] < got["na"], got
    assert got["sig"] == "ecdsa-with-SHA256" and got["key"] == "rsaEncryption", got
    assert got["ver"] == "3" and got["err"] == "0/0/0" and got["f_ver"] == "3", got
    assert got["f_s_dn"] == "/CN=default.test" and got["f_key"] == "rsaEncryption", got
    # Without a client certificate the ssl_c_* fields are empty, the ssl_f_* ones are not.
    plain = curl(port, "/", "default.test", pki).stdout.decode()
    assert "s_dn= cn= " in plain and "f_s_dn=/CN=default.test" in plain, plain
    # HAProxy's word for a format it does not know.
    r = subprocess.run([sluice_bin(), "-c", "-f", str(cfg(f"""
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{port}
    http-request set-var(txn.x) ssl_c_s_dn(CN,1,ldap)
"""))], capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and ("only rfc2253 or a blank value are currently supported as the "
                                  "format argument") in r.stderr, r.stderr


def test_resumption(cfg, sluice, pki):
    port = free_port()
    sluice(cfg(f"""
global
    nbthread 2
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{port} ssl crt {pki.default}
    http-request return status 200 content-type text/plain lf-string "reused=%[ssl_fc_is_resumed]"
"""), wait_ports=[port])
    import ssl

    contexts = {}
    for tls12 in (True, False):
        contexts[tls12] = ssl.create_default_context(cafile=str(pki.ca))
        if tls12:
            contexts[tls12].maximum_version = ssl.TLSVersion.TLSv1_2

    def get(session=None, tls12=False):
        ctx = contexts[tls12]
        with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
            with ctx.wrap_socket(raw, server_hostname="default.test", session=session) as c:
                c.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                got = b""
                while d := c.recv(4096):
                    got += d
                return got, c.session, c.session_reused

    for tls12 in (True, False):   # by session id, then by ticket (TLS 1.3)
        got, sess, reused = get(tls12=tls12)
        assert got.endswith(b"reused=0") and not reused, got
        for _ in range(4):        # whichever thread accepts it
            got, _, reused = get(sess, tls12)
            assert reused and got.endswith(b"reused=1"), (tls12, got)


def test_configuration_errors(cfg, pki, tmp_path):
    from sluice_harness import config_refused
    base = "defaults\n    mode http\n    timeout client 1s\n    timeout server 1s\n    timeout connect 1s\nfrontend f\n"
    cases = [
        ("    bind 127.0.0.1:1 ssl crt /nonexist.pem\n",
         "'bind 127.0.0.1:1' in section 'frontend' : unable to stat SSL certificate from file "
         "'/nonexist.pem' : No such file or directory."),
        ("    bind 127.0.0.1:1 ssl crt /etc/hostname\n",
         "'bind 127.0.0.1:1' in section 'frontend' : unable to load certificate from file "
         "'/etc/hostname': no start line."),
        (f"    bind 127.0.0.1:1 ssl crt {pki.default} ssl-min-ver TLSv9\n",
         "'bind 127.0.0.1:1' in section 'frontend' : 'TLSv9' : unknown ssl/tls version"),
    ]
    for body, message in cases:
        config_refused(cfg(base + body), message)
    # verify without a CA to verify with, on the line or on a crt-list line.
    lst = tmp_path / "verify.lst"
    lst.write_text(f"{pki.default}\n{pki.a_rsa} [verify optional] a.test\n")
    for body in (f"    bind 127.0.0.1:1 ssl crt {pki.default} verify required\n",
                 f"    bind 127.0.0.1:1 ssl crt-list {lst}\n"):
        conf = cfg(base + body)
        config_refused(conf, "Proxy 'f': verify is enabled but no CA file specified for bind "
                             f"'127.0.0.1:1' at [{conf}:7].")
    config_refused(cfg("global\n    ssl-default-bind-options ssl-max-ver TLSv2\n" + base +
                       f"    bind 127.0.0.1:1 ssl crt {pki.default}\n"),
                   "'TLSv2' : unknown ssl/tls version on global statement "
                   "'ssl-default-bind-options'.")


def test_default_dh_param_sizes_dhe(cfg, sluice, pki):
    # A TLS 1.2 client offering only a DHE cipher gets the RFC 7919 group of
    # tune.ssl.default-dh-param's size, never above the RSA key's size; without the keyword
    # there is no DHE at all (HAProxy 3.5's behaviour).
    big = pki.issue("rsa4096", "big.test", key="rsa", bits=4096)
    ports = {}
    for dh in (0, 3072, 8192):
        port = ports[dh] = free_port()
        glob = f"global\n    tune.ssl.default-dh-param {dh}\n" if dh else ""
        sluice(cfg(f"""{glob}{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{port} ssl crt {big} crt {pki.a_rsa} ciphers DHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256
    http-request return status 200 content-type text/plain string ok
"""), wait_ports=[port])
    # HAProxy's sizes: 4096 from 4096 up, else 2048.
    for dh, name, bits in ((3072, "big.test", 2048), (8192, "big.test", 4096), (3072, "a.test", 2048)):
        out = s_client(ports[dh], "-servername", name, "-tls1_2", "-cipher", "DHE-RSA-AES128-GCM-SHA256")
        assert f"Server Temp Key: DH, {bits} bits" in out, (dh, name, out)
    out = s_client(ports[0], "-servername", "big.test", "-tls1_2", "-cipher", "DHE-RSA-AES128-GCM-SHA256")
    assert "Server Temp Key" not in out and "handshake failure" in out, out


def test_ca_verify_file(cfg, sluice, pki, tmp_path):
    """ca-verify-file: its CAs check client certificates without being named in the request
    (ca-file's are); a missing file is HAProxy's error."""
    port, named = free_port(), free_port()
    sluice(cfg(f"""
{HTTP_DEFAULTS}
frontend quiet
    bind 127.0.0.1:{port} ssl crt {pki.default} ca-verify-file {pki.ca} verify required
    http-request return status 200 content-type text/plain lf-string "verify=%[ssl_c_verify]"
frontend named
    bind 127.0.0.1:{named} ssl crt {pki.default} ca-file {pki.ca} verify required
    http-request return status 200 content-type text/plain string ok
"""), wait_ports=[port, named])
    assert curl(port, "/", "default.test", pki, "--cert", str(pki.client)).stdout == b"verify=0"
    assert curl(port, "/", "default.test", pki, "--cert", str(pki.stranger)).returncode != 0
    def ca_names(p: int) -> str:
        r = subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{p}", "-servername",
                            "default.test", "-tls1_2"], input=b"", capture_output=True, timeout=10)
        return r.stdout.decode(errors="replace")
    assert "No client certificate CA names sent" in ca_names(port)
    assert "Acceptable client certificate CA names\nCN = Test CA\n" in ca_names(named)
    r = subprocess.run([sluice_bin(), "-c", "-f", str(cfg(f"""
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{port} ssl crt {pki.default} ca-verify-file {tmp_path}/none.pem
"""))], capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and f"'ca-verify-file' : unable to load {tmp_path}/none.pem" in r.stderr, r.stderr

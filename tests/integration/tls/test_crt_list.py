"""`bind ... crt-list <file>`: the certificates of a crt-list in order, a line's own options
(here its ALPN and lowest version) over the bind line's, SNI filters with wildcards and
exclusions, and HAProxy's errors with the list's file and line. Passes with SLUICE_BIN pointing
at HAProxy 3.5 -db."""
from __future__ import annotations

import subprocess

import pytest

from sluice_harness import HTTP_DEFAULTS, config_refused, free_port
from tls_certs import Pki, s_client, subject


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    p = Pki(d)
    p.default = p.issue("default", "default.test")
    p.api = p.issue("api", "api.test", ["api.test"])
    p.multi = p.issue("multi", "multi.test", ["multi.test", "x.multi.test", "secret.multi.test"])
    return p


def served(port: int, name: str, *args: str) -> str:
    """The subject of the certificate served for SNI `name`."""
    return subject(s_client(port, "-servername", name, *args))


def test_crt_list(cfg, sluice, pki, tmp_path):
    lst = tmp_path / "certs.list"
    lst.write_text(f"""# the default first
{pki.default}
{pki.api} [alpn http/1.1 ssl-min-ver TLSv1.3] api.test
{pki.multi} *.multi.test !secret.multi.test
""")
    port = free_port()
    sluice(cfg(f"""
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{port} ssl crt-list {lst}
    http-request return status 200 content-type text/plain lf-string "alpn=%[ssl_fc_alpn]"
"""), wait_ports=[port])
    assert "CN = api.test" in served(port, "api.test")
    # The line's own lowest version: TLS 1.2 is refused for api.test, not for the others.
    assert served(port, "api.test", "-tls1_2") == ""
    assert "CN = default.test" in served(port, "other.test", "-tls1_2")
    # Filters: the wildcard serves x.multi.test; the exclusion and the certificate's own
    # names (not in the filters) fall back to the default.
    assert "CN = multi.test" in served(port, "x.multi.test")
    assert "CN = default.test" in served(port, "secret.multi.test")
    assert "CN = default.test" in served(port, "multi.test")
    r = subprocess.run(["curl", "-sk", "--max-time", "10", "--http1.1", "--resolve",
                        f"api.test:{port}:127.0.0.1", f"https://api.test:{port}/"],
                       capture_output=True, timeout=20)
    assert r.stdout == b"alpn=http/1.1", (r.stdout, r.stderr)


def test_crt_list_errors(cfg, pki, tmp_path):
    lst = tmp_path / "bad.list"
    base = ("defaults\n    mode http\n    timeout client 1s\n    timeout server 1s\n"
            f"    timeout connect 1s\nfrontend f\n    bind 127.0.0.1:1 ssl crt-list {lst}\n")
    lst.write_text(f"{pki.api} [alpn http/1.1 foo] api.test\n")
    config_refused(cfg(base), f"'bind 127.0.0.1:1' in section 'frontend' : 'crt-list' : parsing "
                              f"[{lst}:1]: unknown ssl keyword foo")
    lst.write_text("# nothing else\n/nonexist.pem\n")
    config_refused(cfg(base), "'bind 127.0.0.1:1' in section 'frontend' : 'crt-list' : unable to "
                              "stat SSL certificate from file '/nonexist.pem' : No such file or "
                              "directory.")

"""Every shipped example passes `sluice -c`, and the quickstart demo works end to end."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sluice_harness import REPO_ROOT, free_port, parse_show_info, run_sluice, wait_until

EXAMPLES = sorted((REPO_ROOT / "examples").glob("*.cfg"))


def test_there_are_examples():
    names = {p.name for p in EXAMPLES}
    assert {"quickstart.cfg", "tcp-basic.cfg"} <= names, names


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_passes_check(path):
    # Run from the repository's root, as the examples say; https.cfg needs the certificate
    # scripts/setup.sh makes (made here when it is not there yet).
    if "examples/certs/" in path.read_text():
        subprocess.run([str(REPO_ROOT / "scripts/example-cert.sh")], check=True, timeout=60,
                       capture_output=True)
    rc, out, err = run_sluice(["-c", "-f", str(path)], cwd=str(REPO_ROOT))
    assert rc == 0, f"{path}:\n{out}\n{err}"


def test_quickstart_demo_through_the_proxy(tmp_path, sluice):
    """The README's demo, on ports picked by the test: `show info` reaches the stats socket
    through the tcp proxy."""
    text = (REPO_ROOT / "examples/quickstart.cfg").read_text()
    proxy_port, cli_port = free_port(), free_port()
    text = re.sub(r"127\.0\.0\.1:8080\b", f"127.0.0.1:{proxy_port}", text)
    text = re.sub(r"127\.0\.0\.1:8081\b", f"127.0.0.1:{cli_port}", text)
    web_port, app_port = free_port(), free_port()
    text = re.sub(r"127\.0\.0\.1:8082\b", f"127.0.0.1:{web_port}", text)
    text = re.sub(r"127\.0\.0\.1:8083\b", f"127.0.0.1:{app_port}", text)
    assert str(proxy_port) in text and str(cli_port) in text
    path = tmp_path / "quickstart.cfg"
    path.write_text(text)
    s = sluice(path, wait_ports=[proxy_port, cli_port])
    assert shutil.which("socat")
    out = subprocess.run(["socat", "-t5", "-", f"TCP:127.0.0.1:{proxy_port}"],
                         input=b"show info\n", capture_output=True, timeout=15).stdout.decode()
    info = parse_show_info(out)
    assert info.get("Pid") == str(s.pid), out
    # option tcplog + log stdout: the request shows up on stdout.
    wait_until(lambda: "demo" in s.stdout(), 5, message=lambda: s.describe())


def _http_get(port: int, path: str) -> bytes:
    import socket
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(f"GET {path} HTTP/1.1\r\nHost: demo\r\nConnection: close\r\n\r\n".encode())
        out = b""
        while True:
            d = c.recv(65536)
            if not d:
                return out
            out += d


def test_quickstart_http_demo(tmp_path, sluice):
    """The HTTP part of the quickstart: a local answer, a redirect, and a request proxied to the
    stand-in application (which sees the X-Forwarded-For that sluice added)."""
    text = (REPO_ROOT / "examples/quickstart.cfg").read_text()
    ports = {p: free_port() for p in (8080, 8081, 8082, 8083)}
    for old, new in ports.items():
        text = re.sub(rf"127\.0\.0\.1:{old}\b", f"127.0.0.1:{new}", text)
    path = tmp_path / "quickstart.cfg"
    path.write_text(text)
    s = sluice(path, wait_ports=[ports[8082], ports[8083]])
    hello = _http_get(ports[8082], "/hello")
    assert hello.startswith(b"HTTP/1.1 200 OK\r\n"), hello
    assert hello.endswith(b"\r\n\r\nhello from sluice"), hello
    old = _http_get(ports[8082], "/old")
    assert old.startswith(b"HTTP/1.1 301 Moved Permanently\r\n") and b"\r\nlocation: /hello\r\n" in old, old
    app = _http_get(ports[8082], "/anything")
    assert b"\r\nx-app-saw: GET /anything from 127.0.0.1\r\n" in app, app
    assert b"\r\nx-served-by: sluice\r\n" in app, app
    stats = _http_get(ports[8082], "/stats;csv")
    assert stats.startswith(b"HTTP/1.1 200 OK\r\n") and b"\r\n# pxname,svname," in stats, stats
    assert b"\nweb,FRONTEND," in stats, stats
    wait_until(lambda: '"GET /anything HTTP/1.1"' in s.stdout(), 5, message=lambda: s.describe())


def test_https_example(tmp_path, sluice):
    """examples/https.cfg with the certificate scripts/example-cert.sh makes: TLS answers, and
    plain HTTP is redirected to it."""
    subprocess.run([str(REPO_ROOT / "scripts/example-cert.sh")], check=True, timeout=60,
                   capture_output=True)
    text = (REPO_ROOT / "examples/https.cfg").read_text()
    tls_port, plain_port = free_port(), free_port()
    text = text.replace("127.0.0.1:8443", f"127.0.0.1:{tls_port}")
    text = text.replace("127.0.0.1:8480", f"127.0.0.1:{plain_port}")
    text = text.replace("crt examples/certs/", f"crt {REPO_ROOT}/examples/certs/")
    path = tmp_path / "https.cfg"
    path.write_text(text)
    sluice(path, wait_ports=[tls_port, plain_port])
    r = subprocess.run(["curl", "-sk", "--max-time", "10", f"https://127.0.0.1:{tls_port}/hello"],
                       capture_output=True, timeout=20)
    assert r.stdout.startswith(b"hello over TLSv1.3 with TLS_"), (r.stdout, r.stderr)
    assert r.stdout.endswith(b", ALPN http/1.1\n"), r.stdout
    assert _http_get(plain_port, "/hello").startswith(b"HTTP/1.1 301 Moved Permanently\r\n")

"""A real server from Debian behind sluice: HTTP over a tcp-mode proxy."""
import subprocess

from sluice_harness import DEFAULTS, free_port, http_get


def test_http_through_tcp_proxy_to_nginx(cfg, sluice, nginx):
    port = free_port()
    sluice(cfg(f"""
global
    nbthread 2
{DEFAULTS}
listen web
    bind 127.0.0.1:{port}
    server nginx 127.0.0.1:{nginx.port}
"""), wait_ports=[port])
    raw = http_get(port)
    assert raw.startswith(b"HTTP/1.1 200"), raw[:200]
    assert raw.endswith(b"\r\n\r\nhello\n"), raw[-200:]

    curl = subprocess.run(["curl", "-sS", "--max-time", "10", f"http://127.0.0.1:{port}/"],
                          capture_output=True, timeout=20)
    assert curl.returncode == 0, curl.stderr
    assert curl.stdout == b"hello\n"

"""HTTP counters in `show stat`, and a real nginx (Debian's) behind sluice in HTTP mode."""
import subprocess

import pytest

from sluice_harness import (cli, free_port, nginx_bin, parse_show_info, parse_show_stat, stat_int,
                             stat_row)
from hutil import Conn, config


def test_show_stat_http_counters(cfg, sluice, origin, short_tmp):
    sock = short_tmp / "stats.sock"
    port = free_port()
    sluice(cfg(config(port, origin.port, glob=f"stats socket {sock} level admin")),
           wait_ports=[port], wait_unix=[sock])
    with Conn(port) as c:
        for path in ("/", "/a", "/b", "/status/404", "/status/503"):
            c.send(f"GET {path} HTTP/1.1\r\nHost: a\r\n\r\n".encode())
            c.response()
    rows = parse_show_stat(cli(str(sock), "show stat"))[1]
    fe, be, s1 = stat_row(rows, "fe", "FRONTEND"), stat_row(rows, "be", "BACKEND"), \
        stat_row(rows, "be", "s1")
    for name, row in (("fe", fe), ("be", be), ("s1", s1)):
        got = {k: stat_int(row, k) for k in ("req_tot", "hrsp_1xx", "hrsp_2xx", "hrsp_3xx",
                                            "hrsp_4xx", "hrsp_5xx")}
        assert got == {"req_tot": 5, "hrsp_1xx": 0, "hrsp_2xx": 3, "hrsp_3xx": 0,
                       "hrsp_4xx": 1, "hrsp_5xx": 1}, (name, got)
    assert stat_int(fe, "req_rate_max") >= 1, fe
    assert 1 <= stat_int(fe, "req_rate") <= 5, fe
    assert fe["mode"] == "http" and be["mode"] == "http", (fe["mode"], be["mode"])
    # `show info` counts the same requests process-wide.
    info = parse_show_info(cli(str(sock), "show info"))
    assert info["CumReq"] == "5", info


def test_nginx_backend_keep_alive_with_curl(cfg, sluice, tmp_path):
    if nginx_bin() is None:
        pytest.skip("nginx is not installed")
    from sluice_harness import start_nginx
    ngx = start_nginx(tmp_path)
    try:
        port = free_port()
        sluice(cfg(config(port, ngx.port)), wait_ports=[port])
        url = f"http://127.0.0.1:{port}/"
        out = subprocess.run(["curl", "-sS", "--max-time", "10", "-w", "[%{http_code} %{num_connects}]",
                              url, url, url], capture_output=True, timeout=30)
        assert out.returncode == 0, out.stderr
        # three answers over one client connection (curl reuses it: 1 connect, then 0)
        assert out.stdout == b"hello\n[200 1]hello\n[200 0]hello\n[200 0]", out.stdout
        post = subprocess.run(["curl", "-sS", "--max-time", "10", "--data-binary", "x" * 100000,
                               url], capture_output=True, timeout=30)
        assert post.returncode == 0 and post.stdout == b"hello\n", post
    finally:
        ngx.stop()


def test_response_taken_back_for_a_502_counts_once(cfg, sluice, origin, short_tmp):
    # A 200 head and a bad chunk in one segment: the client gets a 502 (nothing was sent yet),
    # and the counters say 502 only, not also the 200 that never reached the client.
    sock = short_tmp / "stats.sock"
    port = free_port()
    sluice(cfg(config(port, origin.port, glob=f"stats socket {sock} level admin")),
           wait_ports=[port], wait_unix=[sock])
    origin.script("/bad", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
    with Conn(port) as c:
        c.send(b"GET /bad HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.response().status == 502
        c.send(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.response().status == 200
    rows = parse_show_stat(cli(str(sock), "show stat"))[1]
    for name, row in (("fe", stat_row(rows, "fe", "FRONTEND")), ("be", stat_row(rows, "be", "BACKEND"))):
        got = {k: stat_int(row, k) for k in ("hrsp_2xx", "hrsp_5xx")}
        assert got == {"hrsp_2xx": 1, "hrsp_5xx": 1}, (name, got)

"""tcp-request connection|content accept|reject with layer-4 conditions, in TCP and HTTP mode.

What a client, the server and the counters see, as HAProxy 2.6 behaves side by side:
  * connection reject: closed at once (a reset), nothing sent, the server never sees it, no
    log line, counted in the frontend's conn_tot and dcon but not as a session;
  * content reject: closed without data, logged `PR` with the frontend as backend, counted in
    dreq (and as a session); in HTTP mode only once a request has arrived.
Clients bind their own loopback source (127.0.0.x) so that `src` rules can tell them apart.
"""
from __future__ import annotations

import socket

import pytest

from http_origin import HttpOrigin
from sluice_harness import (cli, free_port, parse_show_stat, stat_int, stat_row, wait_until)

GET = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n"
CONN_REJECT_2 = "tcp-request connection reject if { src 127.0.0.2 }"
CONTENT_REJECT_2 = "tcp-request content reject if { src 127.0.0.2 }"


def config(stats: str, body: str, mode: str = "tcp", log: str = "option tcplog") -> str:
    return f"""
global
    nbthread 2
    stats socket {stats} level admin
defaults
    mode {mode}
    log stdout format raw local0
    {log}
    timeout connect 2s
    timeout client 10s
    timeout server 10s
{body}
"""


def fe_config(stats: str, ports: list[int], rules: list[str], server_port: int,
              mode: str = "tcp") -> str:
    """Frontend `fe` bound on `ports` with the `rules` lines, forwarding to `server_port`."""
    lines = [f"bind 127.0.0.1:{p}" for p in ports] + rules + ["default_backend be"]
    body = ("frontend fe\n" + "".join(f"    {l}\n" for l in lines) +
            f"backend be\n    server s1 127.0.0.1:{server_port}\n")
    return config(stats, body, mode, "option httplog" if mode == "http" else "option tcplog")


def exchange(port: int, src: str = "127.0.0.1", data: bytes = b"ping\n",
             timeout: float = 5.0) -> tuple[bytes, bool]:
    """Connects from `src`, sends `data`, reads until the proxy closes. Returns (bytes received,
    whether the close was a reset)."""
    s = socket.socket()
    s.settimeout(timeout)
    got = b""
    try:
        s.bind((src, 0))
        s.connect(("127.0.0.1", port))
        if data:
            try:
                s.sendall(data)
            except (BrokenPipeError, ConnectionResetError):
                return got, True    # the reset arrived before our bytes left
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return got, False
            got += chunk
            if data == GET and b"\r\n\r\n" in got:   # one HTTP answer is enough
                return got, False
            if data != GET and got == data:          # the echo came back
                return got, False
    except ConnectionResetError:
        return got, True
    finally:
        s.close()


def frontend_stats(stats: str, name: str) -> dict[str, str]:
    _, rows = parse_show_stat(cli(stats, "show stat"))
    return stat_row(rows, name, "FRONTEND")


def log_line_of(s, client: str) -> str:
    """The first stdout log line of `client` ("ip:"), waited for."""
    return wait_until(lambda: next((l for l in s.stdout().splitlines() if client in l), None), 5,
                      message=lambda: f"a log line of {client}\n{s.describe()}")


@pytest.fixture
def stats(short_tmp):
    return str(short_tmp / "stats.sock")


def test_connection_reject_by_src_tcp(cfg, sluice, echo, stats):
    port = free_port()
    s = sluice(cfg(fe_config(stats, [port], [CONN_REJECT_2], echo.port)), wait_ports=[port])
    got, _ = exchange(port, "127.0.0.2")
    assert got == b""
    assert echo.connections == 0
    assert exchange(port, "127.0.0.1") == (b"ping\n", False)
    wait_until(lambda: echo.connections == 1, 5, message="the accepted connection at the server")
    fe = wait_until(lambda: (r := frontend_stats(stats, "fe")) and stat_int(r, "stot") == 1 and r,
                    5, message="the accepted session counted")
    assert stat_int(fe, "dcon") == 1
    assert stat_int(fe, "conn_tot") == 2
    assert stat_int(fe, "dreq") == 0
    # One log line: the accepted session's. The rejected connection is not logged.
    wait_until(lambda: "be/s1" in s.stdout(), 5, message=lambda: f"the log line\n{s.describe()}")
    assert "127.0.0.2" not in s.stdout()
    assert len([l for l in s.stdout().splitlines() if " fe " in l]) == 1, s.stdout()


def test_connection_reject_by_src_http(cfg, sluice, stats):
    port = free_port()
    with HttpOrigin() as origin:
        s = sluice(cfg(fe_config(stats, [port], [CONN_REJECT_2], origin.port, mode="http")),
                   wait_ports=[port])
        got, _ = exchange(port, "127.0.0.2", GET)
        assert got == b""
        got, _ = exchange(port, "127.0.0.1", GET)
        assert got.startswith(b"HTTP/1.1 200"), got
        assert origin.connection_count() == 1
        fe = frontend_stats(stats, "fe")
        assert stat_int(fe, "dcon") == 1
        assert stat_int(fe, "req_tot") == 1
        wait_until(lambda: '"GET / HTTP/1.1"' in s.stdout(), 5,
                   message=lambda: f"the log line\n{s.describe()}")
        assert "127.0.0.2" not in s.stdout()


def test_first_matching_rule_wins(cfg, sluice, echo, stats):
    """accept before reject: 127.0.0.3 is accepted by the first rule, everyone else is
    rejected by the unconditional second one; a rule after it is never reached."""
    port = free_port()
    sluice(cfg(config(stats, f"""
listen app
    bind 127.0.0.1:{port}
    tcp-request connection accept if {{ src 127.0.0.3 }}
    tcp-request connection reject
    tcp-request connection accept if {{ src 127.0.0.1 }}
    server s1 127.0.0.1:{echo.port}
""")), wait_ports=[port])
    assert exchange(port, "127.0.0.3") == (b"ping\n", False)
    assert exchange(port, "127.0.0.1")[0] == b""
    assert exchange(port, "127.0.0.4")[0] == b""
    assert echo.connections == 1
    assert stat_int(frontend_stats(stats, "app"), "dcon") == 2


def test_unless_and_named_acls(cfg, sluice, echo, stats):
    port = free_port()
    rules = ["acl trusted src 127.0.0.1", "acl trusted src 127.0.0.5",
             "acl blocked src 127.0.0.5/32", "tcp-request connection reject if blocked",
             "tcp-request connection reject unless trusted"]
    sluice(cfg(fe_config(stats, [port], rules, echo.port)), wait_ports=[port])
    assert exchange(port, "127.0.0.1") == (b"ping\n", False)
    assert exchange(port, "127.0.0.5")[0] == b""      # trusted, but blocked comes first
    assert exchange(port, "127.0.0.6")[0] == b""      # not trusted
    assert echo.connections == 1
    assert stat_int(frontend_stats(stats, "fe"), "dcon") == 2


def test_dst_port_with_two_bind_lines(cfg, sluice, echo, stats):
    open_port, closed_port = free_port(), free_port()
    rule = f"tcp-request connection reject if {{ dst_port {closed_port} }}"
    sluice(cfg(fe_config(stats, [open_port, closed_port], [rule], echo.port)),
           wait_ports=[open_port, closed_port])
    assert exchange(open_port) == (b"ping\n", False)
    got, reset = exchange(closed_port)
    assert got == b""
    assert reset    # HAProxy closes a rejected connection with a reset (no linger)
    assert echo.connections == 1
    fe = frontend_stats(stats, "fe")
    assert stat_int(fe, "dcon") == 1
    assert stat_int(fe, "conn_tot") == 2


def test_content_reject_tcp_counted_and_logged(cfg, sluice, echo, stats):
    port = free_port()
    rules = ["tcp-request inspect-delay 10s", CONTENT_REJECT_2]
    s = sluice(cfg(fe_config(stats, [port], rules, echo.port)), wait_ports=[port])
    assert exchange(port, "127.0.0.2") == (b"", False)   # a FIN, nothing sent
    # inspect-delay does not hold back a connection that no rule rejects: the rules only read
    # addresses, final at once (the client would give up after 3 s, well before 10 s).
    assert exchange(port, "127.0.0.1", timeout=3) == (b"ping\n", False)
    assert echo.connections == 1
    line = log_line_of(s, "127.0.0.2:")
    assert " fe fe/<NOSRV> -1/-1/" in line, line
    assert " 0 PR " in line, line
    fe = frontend_stats(stats, "fe")
    assert stat_int(fe, "dreq") == 1
    assert stat_int(fe, "dcon") == 0
    assert stat_int(fe, "stot") == 2


def test_content_reject_http_counted_and_logged(cfg, sluice, stats):
    port = free_port()
    with HttpOrigin() as origin:
        s = sluice(cfg(fe_config(stats, [port], [CONTENT_REJECT_2], origin.port, mode="http")),
                   wait_ports=[port])
        assert exchange(port, "127.0.0.2", GET) == (b"", False)
        got, _ = exchange(port, "127.0.0.1", GET)
        assert got.startswith(b"HTTP/1.1 200"), got
        assert origin.connection_count() == 1
        line = log_line_of(s, "127.0.0.2:")
        assert " fe fe/<NOSRV> -1/-1/-1/-1/" in line, line
        assert " -1 0 - - PR-- " in line, line
        assert line.endswith('"<BADREQ>"'), line
        fe = frontend_stats(stats, "fe")
        assert stat_int(fe, "dreq") == 1
        assert stat_int(fe, "req_tot") == 1      # the rejected request is not counted
        assert stat_int(fe, "hrsp_other") == 0


def test_content_rules_wait_for_the_request_in_http_mode(cfg, sluice, stats):
    """As in HAProxy, an HTTP connection is only judged once a request has arrived: an idle
    connection from a rejected source stays open, and its request is then refused."""
    port = free_port()
    with HttpOrigin() as origin:
        sluice(cfg(fe_config(stats, [port], [CONTENT_REJECT_2], origin.port, mode="http")),
               wait_ports=[port])
        c = socket.socket()
        c.settimeout(0.3)
        try:
            c.bind(("127.0.0.2", 0))
            c.connect(("127.0.0.1", port))
            with pytest.raises(socket.timeout):
                c.recv(1)                          # still open: nothing decided yet
            assert stat_int(frontend_stats(stats, "fe"), "dreq") == 0
            c.settimeout(5)
            c.sendall(GET)
            assert c.recv(1) == b""
        finally:
            c.close()
        assert stat_int(frontend_stats(stats, "fe"), "dreq") == 1
        assert origin.connection_count() == 0


def test_use_backend_in_tcp_mode(cfg, sluice, servers, stats):
    """use_backend chooses the backend of a TCP session too (it used to be applied in HTTP
    mode only, and TCP sessions always went to the default backend)."""
    port = free_port()
    default, other = servers.echo(), servers.echo()
    s = sluice(cfg(config(stats, f"""
frontend fe
    bind 127.0.0.1:{port}
    use_backend be2 if {{ src 127.0.0.2 }}
    default_backend be
backend be
    server s1 127.0.0.1:{default.port}
backend be2
    server s2 127.0.0.1:{other.port}
""")), wait_ports=[port])
    assert exchange(port, "127.0.0.2") == (b"ping\n", False)
    assert exchange(port, "127.0.0.1") == (b"ping\n", False)
    assert (other.connections, default.connections) == (1, 1)
    assert " fe be2/s2 " in log_line_of(s, "127.0.0.2:")
    assert " fe be/s1 " in log_line_of(s, "127.0.0.1:")

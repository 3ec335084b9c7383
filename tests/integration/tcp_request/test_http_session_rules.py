"""`tcp-request session` rules in HTTP mode, the other `tcp-request content` actions there
(set-src, set-dst-port, silent-drop), and the counters every rule set's refusals go to.

What HAProxy 3.5 does, measured by hand on these configurations (and, where Debian's haproxy
(2.6) is installed, compared side by side in the test):
- a session rule runs once per connection, before any request: its sess.* variables last for
  every request of the connection; a reject or a silent-drop there leaves no log line and no
  session (stot); a reject counts in `dses`, a silent-drop in `dreq`;
- a content silent-drop ends the stream as a denied request: logged `PR--` with "<BADREQ>",
  counted in `dreq`, and the client gets nothing at all;
- a content set-src changes the stream's client address: the `src` fetch and `%ci` see it;
- a connection-level silent-drop counts in `dreq` too (a reject there counts in `dcon`).
"""
from __future__ import annotations

import os
import socket
import tempfile

from side_by_side import debian_haproxy, run_proxy
from sluice_harness import cli, free_port, parse_show_stat


HTTP_CONFIG = """
global
    log stdout format raw local0
    stats socket {sock} level admin
defaults
    mode http
    log global
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend fe
    bind 127.0.0.1:{port}
    tcp-request session set-var(sess.who) str(abc)
    tcp-request session reject if {{ src 127.0.0.2 }}
    tcp-request session silent-drop if {{ src 127.0.0.3 }}
    tcp-request content silent-drop if {{ src 127.0.0.4 }}
    tcp-request content set-src str(10.1.2.3) if {{ src 127.0.0.5 }}
    http-request return status 200 content-type text/plain lf-string "who=%[var(sess.who)] src=%[src]"
    log-format "L %ci %ST %tsc %{{+Q}}r who=%[var(sess.who)]"
"""

TCP_CONFIG = """
global
    log stdout format raw local0
    stats socket {sock} level admin
defaults
    mode tcp
    log global
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend ft
    bind 127.0.0.1:{port}
    tcp-request connection silent-drop if {{ src 127.0.0.2 }}
    tcp-request session reject if {{ src 127.0.0.3 }}
    tcp-request content reject
    log-format "L %ci %ts"
    default_backend be
backend be
    server s1 127.0.0.1:{closed}
"""


def _exchange(src: str, port: int, data: bytes, timeout: float = 2.0) -> bytes | str:
    """Sends `data` from `src` and reads until EOF: the bytes, or "reset" / "timeout"."""
    c = socket.socket()
    c.settimeout(timeout)
    try:
        c.bind((src, 0))
        c.connect(("127.0.0.1", port))
        c.sendall(data)
        got = b""
        while True:
            d = c.recv(4096)
            if not d:
                return got
            got += d
    except ConnectionResetError:
        return "reset"
    except socket.timeout:
        return "timeout"
    finally:
        c.close()


def _run(proxy: str, text: str, tmp: str, port: int, drive) -> tuple[list[str], dict]:
    """`proxy`'s log lines for `drive(port)` on `text`, and its frontend's counters then."""
    sock = os.path.join(tmp, f"{os.path.basename(proxy)}.sock")

    def counters() -> dict:
        _, rows = parse_show_stat(cli(sock, "show stat"))
        fe = next(r for r in rows if r["svname"] == "FRONTEND")
        return {k: fe[k] for k in ("stot", "conn_tot", "dreq", "dcon", "dses", "req_tot")}

    out, got = run_proxy(proxy, text.format(sock=sock, port=port, closed=free_port()), tmp,
                         port, drive, counters)
    return [l for l in out.splitlines() if l.startswith("L ")], got


def _compare(text: str, drive, want_lines: list[str], want_counters: dict) -> None:
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        lines, counters = _run("sluice", text, tmp, port, drive)
        assert sorted(lines) == sorted(want_lines), lines
        assert counters == want_counters, counters
        hap = debian_haproxy()
        if hap:
            lines, counters = _run(hap, text, tmp, port, drive)
            assert sorted(lines) == sorted(want_lines), ("haproxy", lines)
            assert counters == want_counters, ("haproxy", counters)


def test_http_mode_session_rules_and_content_actions():
    def drive(port: int) -> None:
        req = b"GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        got = _exchange("127.0.0.1", port, req)
        assert isinstance(got, bytes) and got.endswith(b"who=abc src=127.0.0.1"), got
        # Refused before any stream: nothing comes back (a FIN, or a reset if the request
        # arrived after the close); a silent-drop may also leave the client waiting.
        assert _exchange("127.0.0.2", port, req) in (b"", "reset")
        assert _exchange("127.0.0.3", port, req, timeout=1) in (b"", "reset", "timeout")
        # A content silent-drop: not even a FIN (a reset where the socket cannot be silenced).
        assert _exchange("127.0.0.4", port, req, timeout=1) in ("timeout", "reset")
        got = _exchange("127.0.0.5", port, req)
        assert isinstance(got, bytes) and got.endswith(b"who=abc src=10.1.2.3"), got

    _compare(HTTP_CONFIG, drive,
             ['L 127.0.0.1 200 LR-- "GET /a HTTP/1.1" who=abc',
              'L 127.0.0.4 -1 PR-- "<BADREQ>" who=abc',
              'L 10.1.2.3 200 LR-- "GET /a HTTP/1.1" who=abc'],
             {"stot": "3", "conn_tot": "5", "dreq": "2", "dcon": "0", "dses": "1", "req_tot": "2"})


def test_tcp_mode_refusals_are_counted_where_haproxy_counts_them():
    def drive(port: int) -> None:
        for src in ("127.0.0.1", "127.0.0.2", "127.0.0.3"):
            assert _exchange(src, port, b"x", timeout=1) in (b"", "reset", "timeout"), src

    # 127.0.0.1: a stream, refused by the content rule (logged PR, dreq); 127.0.0.2: dropped at
    # connection time (dreq, no session); 127.0.0.3: refused session (dses, no session).
    _compare(TCP_CONFIG, drive, ["L 127.0.0.1 PR"],
             {"stot": "1", "conn_tot": "3", "dreq": "2", "dcon": "0", "dses": "1", "req_tot": "0"})

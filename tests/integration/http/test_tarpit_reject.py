"""`http-request tarpit` (held for `timeout tarpit`, then the deny status or the rule's own
reply), `http-request reject` (closed at once, nothing sent) and `http-request silent-drop`
(nothing sent, not even a FIN or a reset): their answers, timings, counters (dreq, the
statuses) and log lines (`PT--` with the delay as Tw, `PR--` with status -1, TR -1), as
HAProxy 3.5-dev5 gives them (this file passes with SLUICE_BIN pointing at a wrapper that runs
it with -db)."""
from __future__ import annotations

import socket
import threading
import time

import sluice_harness as h
from sluice_harness import free_port, wait_until


def preamble(sock: str) -> str:
    return f"""
global
    stats socket {sock} level admin
defaults
    mode http
    log stdout format raw local0
    option httplog
    timeout client 3s
    timeout server 3s
    timeout connect 1s
"""


def config(port: int, port2: int, sock: str) -> str:
    return preamble(sock) + f"""
frontend f
    bind 127.0.0.1:{port}
    timeout tarpit 700ms
    http-request tarpit if {{ path /tarpit }}
    http-request tarpit deny_status 403 if {{ path /tarpit403 }}
    http-request tarpit status 429 content-type text/plain string "slow down" if {{ path /tarpit429 }}
    http-request reject if {{ path /reject }}
    http-request silent-drop if {{ path /drop }}
    http-request return status 200 content-type text/plain string ok
frontend g
    bind 127.0.0.1:{port2}
    http-request tarpit
"""


def ask(port: int, path: str, timeout: float = 4) -> tuple[bytes, str, float]:
    """(bytes received, how it ended: eof|reset|timeout, seconds)."""
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as c:
        c.sendall(f"GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".encode())
        got, end = b"", "eof"
        try:
            while d := c.recv(65536):
                got += d
        except ConnectionResetError:
            end = "reset"
        except socket.timeout:
            end = "timeout"
    return got, end, time.monotonic() - start


def log_lines(s, count: int) -> list[str]:
    def get():
        return [l for l in s.stdout().splitlines() if "/<NOSRV> " in l]
    wait_until(lambda: len(get()) >= count, 5, message=s.describe)
    return get()


def fields(line: str) -> tuple[str, str, str]:
    """(timers, status, termination state) of an httplog line."""
    w = line.split()
    return w[4], w[5], w[9]


def test_tarpit_reject_silent_drop(cfg, sluice, short_tmp):
    port, port2 = free_port(), free_port()
    sock = f"{short_tmp}/s.sock"
    s = sluice(cfg(config(port, port2, sock)), wait_ports=[port, port2])

    got, end, took = ask(port, "/tarpit")
    assert got.startswith(b"HTTP/1.1 500 Internal Server Error\r\n") and end == "eof", got
    assert 0.65 < took < 2.5, took
    got, _, took = ask(port, "/tarpit403")
    assert got.startswith(b"HTTP/1.1 403 Forbidden\r\n") and 0.65 < took < 2.5, (got, took)
    got, _, took = ask(port, "/tarpit429")
    assert got.startswith(b"HTTP/1.1 429 Too Many Requests\r\n") and got.endswith(b"slow down")
    assert 0.65 < took < 2.5, took
    # Without `timeout tarpit`, no delay at all.
    got, _, took = ask(port2, "/x")
    assert got.startswith(b"HTTP/1.1 500 ") and took < 0.5, (got, took)

    got, end, took = ask(port, "/reject")
    assert (got, end) == (b"", "eof") and took < 0.5, (got, end, took)
    # silent-drop: no answer, no FIN, no reset: the client only times out.
    got, end, _ = ask(port, "/drop", timeout=1.5)
    assert (got, end) == (b"", "timeout")

    lines = log_lines(s, 6)
    by_path = {l.split('"')[1].split()[1]: l for l in lines}
    timers, status, state = fields(by_path["/tarpit"])
    tr, tw, tc, tresp, ta = (int(x) for x in timers.split("/"))
    assert (tr, tc, tresp, status, state) == (-1, -1, -1, "500", "PT--"), by_path["/tarpit"]
    assert 650 <= tw <= 2500 and 650 <= ta <= 2500, by_path["/tarpit"]
    assert fields(by_path["/tarpit429"])[1:] == ("429", "PT--")
    assert fields(by_path["/reject"]) == ("-1/-1/-1/-1/0", "-1", "PR--"), by_path["/reject"]
    assert fields(by_path["/drop"]) == ("-1/-1/-1/-1/0", "-1", "PR--"), by_path["/drop"]

    rows = h.show_stat(sock)
    f = h.stat_row(rows, "f", "FRONTEND")
    # Five denied (three tarpits, the reject, the drop); reject and drop count as "other".
    assert (f["dreq"], f["hrsp_4xx"], f["hrsp_5xx"], f["hrsp_other"]) == ("5", "2", "1", "2"), f
    assert h.stat_row(rows, "g", "FRONTEND")["dreq"] == "1"


def test_http_response_silent_drop(cfg, sluice, short_tmp):
    # The server's response is dropped and so is the client: nothing reaches it, not even a
    # reset. HAProxy 3.5 counts a denied request (frontend and backend) and logs the server's
    # status with PR--.
    origin = socket.socket()
    origin.bind(("127.0.0.1", 0))
    origin.listen(4)

    def serve():
        c, _ = origin.accept()
        with c:
            c.recv(4096)
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            try:
                c.recv(10)   # sluice drops this connection (a reset)
            except OSError:
                pass
    threading.Thread(target=serve, daemon=True).start()
    port = free_port()
    sock = f"{short_tmp}/s.sock"
    s = sluice(cfg(preamble(sock) + f"""
frontend f
    bind 127.0.0.1:{port}
    default_backend b
backend b
    http-response silent-drop if {{ status 200 }}
    server s1 127.0.0.1:{origin.getsockname()[1]}
"""), wait_ports=[port])
    try:
        got, end, _ = ask(port, "/", timeout=1.5)
        assert (got, end) == (b"", "timeout")
        wait_until(lambda: " b/s1 " in s.stdout(), 5, message=s.describe)
        line = next(l for l in s.stdout().splitlines() if " b/s1 " in l)
        assert fields(line)[1:] == ("200", "PR--"), line
        rows = h.show_stat(sock)
        assert h.stat_row(rows, "f", "FRONTEND")["dreq"] == "1"
        assert h.stat_row(rows, "b", "BACKEND")["dreq"] == "1"
    finally:
        origin.close()

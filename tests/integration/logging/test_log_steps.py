"""`log-steps`: a line at each step of a stream the frontend lists (accept, request, connect,
response, close), with what is known then. The lines are those HAProxy 3.5 writes for the same
configuration (its %B counts its internal message, not the wire bytes, so the response's byte
count is left out of the comparison)."""
import re
import socket
import time

from sluice_harness import free_port, recv_all, wait_until

HEAD = """
global
    log 127.0.0.1:{log} format raw local0
defaults
    mode {mode}
    log global
    option {mode}log
    timeout connect 2s
    timeout client 3s
    timeout server 3s
frontend f
    bind 127.0.0.1:{port}
    log-steps {steps}
{extra}
    default_backend b
backend b
    server s1 127.0.0.1:{origin}
"""

PREFIX = r"127\.0\.0\.1:\d+ \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d\.\d{3}\] "


def _lines(receiver, n, pred):
    wait_until(lambda: len([m for m in receiver.texts() if pred(m)]) >= n, 5,
               message=lambda: f"{n} log lines, got {receiver.texts()}")
    time.sleep(0.2)   # and no more
    return [m.rstrip("\n") for m in receiver.texts() if pred(m)]


def _get(port, path):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        return recv_all(c)


def test_http_every_step(cfg, origin, sluice, udp_log):
    """Five lines per request: the stream's start (no request yet), the parsed head (before the
    rules: no backend, no request time), the server connection (no response time nor status),
    the response head and the end. A connection that sends nothing starts no stream: only its
    end is logged."""
    port = free_port()
    sluice(cfg(HEAD.format(log=udp_log.port, mode="http", port=port, origin=origin.port,
                           steps="accept,request,connect,response,close", extra="")),
           wait_ports=[port])
    assert _get(port, "/x").startswith(b"HTTP/1.1 200")
    got = _lines(udp_log, 5, lambda m: "] f " in m)
    want = [
        r'f f/<NOSRV> -1/-1/-1/-1/0 0 0 - - ---- 1/1/0/0/0 0/0 "<BADREQ>"',
        r'f f/<NOSRV> -1/-1/-1/-1/\d+ -1 0 - - ---- 1/1/0/0/0 0/0 "GET /x HTTP/1\.1"',
        r'f b/s1 \d+/0/\d+/-1/\d+ -1 0 - - ---- 1/1/1/1/0 0/0 "GET /x HTTP/1\.1"',
        r'f b/s1 \d+/0/\d+/\d+/\d+ 200 \d+ - - ---- 1/1/1/\d/0 0/0 "GET /x HTTP/1\.1"',
        r'f b/s1 \d+/0/\d+/\d+/\d+ 200 \d+ - - ---- 1/1/0/0/0 0/0 "GET /x HTTP/1\.1"',
    ]
    assert len(got) == 5, got
    for line, pat in zip(got, want):
        assert re.fullmatch(PREFIX + pat, line), (line, pat)
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        time.sleep(0.1)
    got = _lines(udp_log, 6, lambda m: "] f " in m)
    assert len(got) == 6 and re.fullmatch(PREFIX + r'f f/<NOSRV> -1/-1/-1/-1/\d+ 400 0 - - CR-- '
                                          r'1/1/0/0/0 0/0 "<BADREQ>"', got[5]), got


def test_http_steps_without_close_and_rule_steps(cfg, origin, sluice, udp_log):
    """Only the listed steps log: connect alone is one line per request and no end line; the
    rule steps (http-req...) add none (they serve do-log and log-profile); option logasap
    logs its one line instead of the steps, as HAProxy 3.5 does. HAProxy 3.5 writes
    "<BADREQ>" for %r here (it keeps the request line only when request or close is listed);
    sluice writes the request line."""
    port, port2 = free_port(), free_port()
    conf = HEAD.format(log=udp_log.port, mode="http", port=port, origin=origin.port,
                       steps="connect,http-req", extra="")
    conf += f"""frontend g
    bind 127.0.0.1:{port2}
    log-steps accept,connect,response,close
    option logasap
    default_backend b
"""
    sluice(cfg(conf), wait_ports=[port, port2])
    assert _get(port, "/a").startswith(b"HTTP/1.1 200")
    assert _get(port, "/b").startswith(b"HTTP/1.1 200")
    got = _lines(udp_log, 2, lambda m: "] f " in m)
    # The first connection's end may still be on its way when the second is logged (the client
    # saw the close before the worker freed the stream): its counters may include it.
    got = got[:1] + [re.sub(r" 2/2/1/1/0 ", " 1/1/1/1/0 ", l) for l in got[1:]]
    assert [re.sub(r" \d+/0/\d+/-1/\d+ ", " T ", l.split("] ", 1)[1]) for l in got] == [
        'f b/s1 T -1 0 - - ---- 1/1/1/1/0 0/0 "GET /a HTTP/1.1"',
        'f b/s1 T -1 0 - - ---- 1/1/1/1/0 0/0 "GET /b HTTP/1.1"',
    ], got
    assert _get(port2, "/c").startswith(b"HTTP/1.1 200")
    got = _lines(udp_log, 1, lambda m: "] g " in m)
    assert len(got) == 1 and re.fullmatch(PREFIX + r'g b/s1 \d+/0/\d+/\d+/\+\d+ 200 \+\d+ - - ---- '
                                          r'1/1/1/\d/0 0/0 "GET /c HTTP/1\.1"', got[0]), got


def test_tcp_steps(cfg, sluice, udp_log, echo):
    """TCP: the session's start (no backend yet), its server connection and its end; request
    and response are HTTP steps and add nothing here."""
    port = free_port()
    sluice(cfg(HEAD.format(log=udp_log.port, mode="tcp", port=port, origin=echo.port,
                           steps="all", extra="")), wait_ports=[port])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(b"ping\n")
        assert c.recv(16) == b"ping\n"
    got = _lines(udp_log, 3, lambda m: "] f " in m)
    want = [
        r"f f/<NOSRV> -1/-1/0 0 -- 1/1/0/0/0 0/0",
        r"f b/s1 \d+/\d+/\d+ 0 -- 1/1/1/1/0 0/0",
        r"f b/s1 \d+/\d+/\d+ 5 -- 1/1/0/0/0 0/0",
    ]
    assert len(got) == 3, got
    for line, pat in zip(got, want):
        assert re.fullmatch(PREFIX + pat, line), (line, pat)

"""The transaction's timer and byte-count fetches (txn.timer.*, req.timer.*, res.timer.*,
request_date, bytes_in/out, req./res.bytes_in/out) on real requests: in a log line they are the
numbers of the %-aliases beside them; in rules, what HAProxy 3.5 answers before the end (its
close time counts as 0, the request's timers are -1 in http-request rules, byte counts 0).
The shapes were checked against HAProxy 3.5 with the same configuration."""
import re
import socket
import time

from http_origin import HttpOrigin
from sluice_harness import free_port, recv_all

ALIASES = "%Ta %Tu %Ti %Tq %TR %Tw %Tc %Tr %Td %B %U %Ts %ms"
FETCHES = ("%[txn.timer.total] %[txn.timer.user] %[req.timer.queue] %[res.timer.hdr] "
           "%[res.timer.data] %[request_date(ms)] %[bytes_in] %[bytes_out] %[req.bytes_in] "
           "%[req.bytes_out] %[res.bytes_in] %[res.bytes_out]")


def _http_config(port, origin_port, log_port):
    return f"""
global
    log 127.0.0.1:{log_port} format raw local0
defaults
    mode http
    log global
    timeout connect 2s
    timeout client 10s
    timeout server 10s
frontend fe_t
    bind 127.0.0.1:{port}
    log-format "{ALIASES} | {FETCHES}"
    http-request set-header X-Q "%[req.timer.idle]/%[req.timer.tq]/%[req.timer.hdr]/%[txn.timer.total]/%[txn.timer.user]/%[bytes_in]/%[req.bytes_out]"
    http-response set-header X-R "%[txn.timer.total]/%[req.timer.queue]/%[res.timer.hdr]/%[res.timer.data]/%[bytes_out]/%[res.bytes_out]"
    http-after-response set-header X-A "%[txn.timer.user]/%[res.timer.hdr]/%[res.bytes_in]"
    default_backend be_t
backend be_t
    server s1 127.0.0.1:{origin_port}
"""


def _ints(text):
    return [int(v) for v in text.split("/")]


def test_http_timers_and_bytes_match_the_aliases(cfg, sluice, udp_log):
    origin = HttpOrigin()
    try:
        port = free_port()
        sluice(cfg(_http_config(port, origin.port, udp_log.port)), wait_ports=[port])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
            time.sleep(0.05)   # idle before the first byte: %Ti
            c.sendall(b"GET /slow?ms=30 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            resp = recv_all(c).decode()
        head = resp.split("\r\n\r\n", 1)[0]
        assert head.startswith("HTTP/1.1 200"), resp
        hdr = dict(l.split(": ", 1) for l in head.split("\r\n")[1:])
        msg = udp_log.wait_for(lambda m: " | " in m).rstrip("\n")
        left, right = msg.split(" | ")
        ta, tu, ti, tq, t_r, tw, tc, tr, td, b, u, ts, ms = (int(v) for v in left.split())
        (total, user, queue, res_hdr, res_data, date_ms, bytes_in, bytes_out, req_in, req_out,
         res_in, res_out) = (int(v) for v in right.split())
        # The log line: the aliases' numbers.
        assert (total, user, queue, res_hdr, res_data) == (ta, tu, tw, tr, td), msg
        assert (bytes_in, req_in, req_out) == (u, u, u), msg
        assert (bytes_out, res_in) == (b, b), msg
        assert res_out == len(resp.encode()), (msg, resp)
        assert ti >= 40 and tr >= 25, msg
        # request_date is the first byte; the accept came %Ti before it (%Ts, %ms).
        accept_ms = date_ms - ti
        assert (accept_ms // 1000, accept_ms % 1000) == (ts, ms), msg
        # http-request: the idle time; the request's timers not set yet (-1); the totals count
        # the close time as 0; no bytes counted yet.
        q = _ints(origin.requests()[0].header("X-Q"))
        assert q == [ti, -1, -1, -ti, -ti, 0, 0], (q, msg)
        # http-response and http-after-response: the server's timers are known.
        r = _ints(hdr["x-r"])
        assert r == [-ti, tw, tr, -(tq + tw + tc + tr), 0, 0], (r, msg)
        assert _ints(hdr["x-a"]) == [-ti, tr, 0], (hdr, msg)
    finally:
        origin.stop()


def test_tcp_timers_and_bytes(cfg, sluice, udp_log, echo):
    port = free_port()
    config = f"""
global
    log 127.0.0.1:{udp_log.port} format raw local0
defaults
    mode tcp
    log global
    timeout connect 2s
    timeout client 10s
    timeout server 10s
frontend fe_tcp
    bind 127.0.0.1:{port}
    tcp-request content set-var(txn.t) txn.timer.total
    tcp-request content set-var(txn.b) bytes_in
    tcp-request content set-var(txn.d) request_date(ms)
    log-format "%Tt %Tw %B %U %Ts.%ms | %[txn.timer.total] %[req.timer.queue] %[res.timer.data] %[bytes_in] %[bytes_out] %[res.bytes_out] | %[var(txn.t)] %[var(txn.b)] %[var(txn.d)] %[var(txn.q)] %[var(txn.o)]"
    default_backend be_tcp
backend be_tcp
    tcp-response content set-var(txn.q) req.timer.queue
    tcp-response content set-var(txn.o) bytes_out
    server s1 127.0.0.1:{echo.port}
"""
    sluice(cfg(config), wait_ports=[port])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(b"ping\n")
        got = b""
        deadline = time.monotonic() + 5
        while len(got) < 5 and time.monotonic() < deadline:
            got += c.recv(64)
        assert got == b"ping\n"
    msg = udp_log.wait_for(lambda m: " | " in m).rstrip("\n")
    m = re.fullmatch(r"(\d+) (\d+) (\d+) (\d+) (\d+)\.(\d+) \| (.*) \| (.*)", msg)
    assert m, msg
    tt, tw, b, u, ts, ms = (int(v) for v in m.groups()[:6])
    total, queue, data, bytes_in, bytes_out, res_out = (int(v) for v in m.group(7).split())
    assert (total, queue, data) == (tt, tw, -1), msg   # no response head in TCP
    assert (bytes_in, bytes_out, res_out) == (u, b, b) == (5, 5, 5), msg
    t, bi, date_ms, q, o = (int(v) for v in m.group(8).split())
    # Content rules: the totals count the close time as 0, no bytes yet, the accept date.
    assert (t, bi, o) == (0, 0, 0), msg
    assert q == tw, msg
    assert (date_ms // 1000, date_ms % 1000) == (ts, ms), msg


def test_where_they_stand(cfg, sluice_bin):
    """HAProxy's refusals: a fetch of the response in a request rule, of the request stats
    before the content rules."""
    import subprocess
    cases = [
        ("http-request set-header X %[res.timer.data]",
         "sample fetch <res.timer.data> may not be reliably used here because it needs "
         "'response buffer statistics' which is not available here"),
        ("tcp-request session set-var(sess.x) bytes_in",
         "fetch method 'set-var(sess.x)' extracts information from 'request buffer "
         "statistics', none of which is available here"),
        ("tcp-request session set-var(sess.x) request_date",
         "fetch method 'set-var(sess.x)' extracts information from 'HTTP request', none of "
         "which is available here"),
    ]
    for rule, want in cases:
        path = cfg(f"""
defaults
    mode http
    timeout connect 1s
    timeout client 1s
    timeout server 1s
frontend fe
    bind 127.0.0.1:{free_port()}
    {rule}
    default_backend be
backend be
    server s1 127.0.0.1:1
""")
        r = subprocess.run([sluice_bin, "-c", "-f", str(path)], capture_output=True, text=True,
                           timeout=20)
        assert r.returncode != 0, (rule, r.stderr)
        assert want in r.stderr, (rule, r.stderr)

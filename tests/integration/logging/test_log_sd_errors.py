"""`log-format-sd`, the syslog formats of `log ... format`, `error-log-format`,
`option log-separate-errors` and `option logasap`, on real traffic: the exact lines received on
a UDP syslog port, as HAProxy 3.5 writes them. Where Debian's haproxy (2.6) is installed, the
same configuration runs through it too and its lines must match sluice's (dates, pids and ports
aside)."""
import os
import re
import shutil
import socket
import subprocess
import time

import pytest

from sluice_harness import free_port, is_listening, recv_all, wait_until

ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}[+-]\d\d:\d\d"
BSD = r"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d"


def _haproxy():
    """Debian's haproxy, or None: these comparisons are skipped without it."""
    for p in (shutil.which("haproxy"), "/usr/sbin/haproxy"):
        if p and os.access(p, os.X_OK):
            return p
    return None


def _config(port, origin_port, log_lines, frontend_extra, mode="http"):
    logs = "\n".join(f"    {l}" for l in log_lines)
    return f"""
global
{logs}
defaults
    mode {mode}
    log global
    timeout connect 2s
    timeout client 3s
    timeout server 3s
    timeout http-request 3s
frontend fe_sd
    bind 127.0.0.1:{port}
{frontend_extra}
    default_backend be_sd
backend be_sd
    server s1 127.0.0.1:{origin_port}
backend be_dead
    retries 0
    server s1 127.0.0.1:1
"""


def _send_raw(port, raw):
    """Sends raw bytes and reads the answer until the close (the write side stays open)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(raw)
        return recv_all(c)


def _get(port, path):
    return _send_raw(port, f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())


def _lines(receiver, n, pred=lambda m: True):
    wait_until(lambda: len([m for m in receiver.texts() if pred(m)]) >= n, 5,
               message=lambda: f"{n} log lines, got {receiver.texts()}")
    return [m for m in receiver.texts() if pred(m)]


def test_structured_data_goes_to_rfc5424_targets_only(cfg, origin, sluice, udp_log):
    port = free_port()
    extra = ('    log-format "%ci %ST %{+Q}r"\n'
             '    log-format-sd "[a@1 st=\\"%ST\\" b=\\"%b\\"] %{+Q,+E}o[r@2 r=%r]"\n')
    s = sluice(cfg(_config(port, origin.port,
                           [f"log 127.0.0.1:{udp_log.port} format rfc5424 local0",
                            f"log 127.0.0.1:{udp_log.port} format raw local0"], extra)),
               wait_ports=[port])
    _get(port, '/a"b')
    got = _lines(udp_log, 2, lambda m: "GET" in m)
    five = next(m for m in got if m.startswith("<"))
    raw = next(m for m in got if not m.startswith("<"))
    assert re.fullmatch(
        rf'<134>1 {ISO} - sluice {s.pid} - \[a@1 st="200" b="be_sd"\] '
        r'\[r@2 r="GET /a#22b HTTP/1\.1"\] 127\.0\.0\.1 200 "GET /a#22b HTTP/1\.1"' "\n",
        five), five
    assert raw == '127.0.0.1 200 "GET /a#22b HTTP/1.1"\n', raw


def test_every_syslog_format(cfg, origin, sluice, udp_log):
    port = free_port()
    fmts = ["rfc3164", "local", "priority", "short", "timed", "iso"]
    s = sluice(cfg(_config(port, origin.port,
                           [f"log 127.0.0.1:{udp_log.port} format {f} local0" for f in fmts]
                           + [f"log 127.0.0.1:{udp_log.port} local1"],
                           '    log-format "%ci %ST"\n    log-format-sd "[a@1]"\n')),
               wait_ports=[port])
    _get(port, "/")
    got = _lines(udp_log, len(fmts) + 1, lambda m: "127.0.0.1 200" in m)
    want = [rf"<134>{BSD} localhost sluice\[{s.pid}\]: ",   # rfc3164: always a host
            rf"<142>{BSD} sluice\[{s.pid}\]: ",             # no format word: no host
            rf"<134>{BSD} sluice\[{s.pid}\]: ",             # local: never one
            r"<134>",                                       # priority: facility and level
            r"<6>",                                         # short: the level alone
            rf"<6>{ISO} ",                                  # timed
            rf"{ISO} "]                                     # iso
    for w in want:
        assert any(re.fullmatch(w + r"127\.0\.0\.1 200\n", m) for m in got), (w, got)


def test_length_limit_cuts_header_sd_and_text_together(cfg, origin, sluice, udp_log):
    port = free_port()
    s = sluice(cfg(_config(port, origin.port,
                           [f"log 127.0.0.1:{udp_log.port} len 80 format rfc5424 local0"],
                           '    log-format "%ST ' + "0123456789" * 10 + '"\n'
                           '    log-format-sd "[a@1 x=\\"%ST\\"]"\n')),
               wait_ports=[port])
    _get(port, "/")
    msg = _lines(udp_log, 1, lambda m: "[a@1" in m)[0]
    # 80 bytes with the LF, as HAProxy 3.5 cuts it.
    assert len(msg) == 80, repr(msg)
    head = f'<134>1 X - sluice {s.pid} - [a@1 x="200"] 200 '
    body = re.sub(ISO, "X", msg)
    assert body == head + ("0123456789" * 10)[:80 - 1 - len(head) - 31] + "\n", repr(msg)


def test_error_log_format_and_separate_errors(cfg, origin, sluice, udp_log):
    port = free_port()
    extra = ('    option log-separate-errors\n'
             '    log-format "%ST %ts %b/%s %{+Q}r"\n'
             '    error-log-format "ERR %ST %ts %b/%s %{+Q}r %B %U"\n'
             '    use_backend be_dead if { path /dead }\n')
    sluice(cfg(_config(port, origin.port, [f"log 127.0.0.1:{udp_log.port} format short local0"],
                       extra)), wait_ports=[port])
    _get(port, "/ok")
    _lines(udp_log, 1, lambda m: "/ok" in m)
    _send_raw(port, b"GARBAGE\r\n\r\n")
    _lines(udp_log, 1, lambda m: "BADREQ" in m)
    _get(port, "/dead")
    got = _lines(udp_log, 3, lambda m: "/ok" in m or "BADREQ" in m or "/dead" in m)
    # info for a normal line, err for HAProxy's errors: a request that never parsed (in
    # error-log-format), a 503 after a refused connect (in the log format).
    assert '<6>200 -- be_sd/s1 "GET /ok HTTP/1.1"\n' in got, got
    assert '<3>ERR 400 PR fe_sd/<NOSRV> "<BADREQ>" 0 0\n' in got, got
    assert '<3>503 SC be_dead/s1 "GET /dead HTTP/1.1"\n' in got, got


def test_logasap_http_logs_at_the_response_head(cfg, origin, sluice, udp_log):
    # A head and part of its body, then nothing: the transaction never ends by itself.
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n"
    origin.script("/part", head + b"abc")
    port = free_port()
    extra = ('    option logasap\n'
             '    log-format "%ST %ts %tsc %B %Ta %Tt %Tu %Tr %{+Q}r %bc/%sc"\n')
    sluice(cfg(_config(port, origin.port, [f"log 127.0.0.1:{udp_log.port} format raw local0"],
                       extra)), wait_ports=[port])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(b"GET /part HTTP/1.1\r\nHost: x\r\n\r\n")
        # Logged while the response is still incomplete.
        msg = udp_log.wait_for(lambda m: "/part" in m)
        m = re.fullmatch(r'200 -- ---- \+(\d+) \+(\d+) \+(\d+) \+(\d+) (\d+) '
                         r'"GET /part HTTP/1\.1" 1/1' "\n", msg)
        assert m, msg
        assert int(m.group(1)) in (len(head), len(head) + 3), msg
    # The end writes no second line; a complete one gets its "+" too.
    _get(port, "/")
    msg = udp_log.wait_for(lambda m: "GET / " in m)
    # %bc/%sc: the /part session may not have seen its client's close yet (2/2 then).
    assert re.fullmatch(r'200 -- ---- \+\d+ \+\d+ \+\d+ \+\d+ \d+ "GET / HTTP/1\.1" [12]/[12]' "\n",
                        msg), msg
    time.sleep(0.2)
    assert len([m for m in udp_log.texts() if "/part" in m]) == 1, udp_log.texts()


def test_logasap_tcp_logs_when_established(cfg, sluice, udp_log, echo):
    port = free_port()
    extra = "    option logasap\n    option tcplog\n"
    sluice(cfg(_config(port, echo.port, [f"log 127.0.0.1:{udp_log.port} format raw local0"],
                       extra, mode="tcp")), wait_ports=[port])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        msg = udp_log.wait_for(lambda m: "be_sd/s1" in m)
        assert re.fullmatch(r"127\.0\.0\.1:\d+ \[[^]]+\] fe_sd be_sd/s1 \d+/\d+/\+\d+ \+0 -- "
                            r"1/1/1/1/0 0/0" "\n", msg), msg
        c.sendall(b"ping\n")
        assert c.recv(16) == b"ping\n"
    time.sleep(0.2)
    assert len([m for m in udp_log.texts() if "be_sd/s1" in m]) == 1, udp_log.texts()


def _normalize(line):
    line = re.sub(ISO, "DATE", line)
    line = re.sub(BSD, "DATE", line)
    line = re.sub(r"\+\d+", "+N", line)   # %Ta: a duration
    return re.sub(r"(sluice|haproxy)(\[| )\d+", "TAG PID", line)


def test_same_lines_as_haproxy(cfg, origin, sluice, udp_log):
    """log-format-sd with rfc5424, the short and priority formats, error-log-format,
    log-separate-errors and logasap, side by side with Debian's haproxy."""
    hap = _haproxy()
    if not hap:
        pytest.skip("haproxy is not installed")
    port = free_port()
    extra = ('    option logasap\n    option log-separate-errors\n'
             '    log-format "%ST %ts %b/%s %{+Q}r %Ta"\n'
             '    log-format-sd "[a@1 st=\\"%ST\\"]"\n'
             '    error-log-format "ERR %ST %ts %b/%s %{+Q}r %Ta"\n'
             '    use_backend be_dead if { path /dead }\n')
    logs = [f"log 127.0.0.1:{udp_log.port} format {f} local0"
            for f in ("rfc5424", "short", "priority")]
    text = _config(port, origin.port, logs, extra)
    lines = {}
    for name in ("sluice", "haproxy"):
        udp_log.messages.clear()
        if name == "sluice":
            s = sluice(cfg(text), wait_ports=[port])
        else:
            path = cfg(text, "haproxy.cfg")
            proc = subprocess.Popen([hap, "-f", str(path), "-db"], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
        try:
            wait_until(lambda: is_listening(port), 5, message="the proxy listens")
            _get(port, "/")
            _get(port, "/dead")
            _send_raw(port, b"GARBAGE\r\n\r\n")
            got = _lines(udp_log, 9, lambda m: "GET" in m or "BADREQ" in m)
            lines[name] = sorted(_normalize(m) for m in got)
        finally:
            if name == "sluice":
                s.stop()
            else:
                proc.terminate()
                proc.wait(timeout=5)
        wait_until(lambda: not is_listening(port), 5, message="the proxy stopped")
    assert lines["sluice"] == lines["haproxy"], lines


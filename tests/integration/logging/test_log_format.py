"""Custom `log-format`, `option httplog clf`, `unique-id-format` / `unique-id-header` and
`log-tag` on real requests, the lines received on a UDP syslog port."""
import re
import urllib.request

from http_origin import HttpOrigin
from sluice_harness import free_port


def _config(port, origin_port, log_port, frontend_extra, global_extra=""):
    return f"""
global
    log 127.0.0.1:{log_port} format raw local0
    {global_extra}
defaults
    mode http
    log global
    timeout connect 2s
    timeout client 10s
    timeout server 10s
frontend fe_lf
    bind 127.0.0.1:{port}
    capture request header User-Agent len 20
{frontend_extra}
    default_backend be_lf
backend be_lf
    server s1 127.0.0.1:{origin_port}
"""


def _get(port, path, agent="ua-test"):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"User-Agent": agent})
    with urllib.request.urlopen(req, timeout=5) as r:
        return r.status, r.read()


def test_custom_log_format_and_unique_id(cfg, sluice, udp_log):
    origin = HttpOrigin()
    try:
        port = free_port()
        fmt = ('"%{+Q}o %ci %HM %HU %HV %ST %B %b/%s %ts %[method,lower] %[capture.req.hdr(0)] '
               'id=%ID %{-Q}[unique-id] %{+X}Ts  %bi:%bp %si:%sp end"')
        extra = (f"    log-format {fmt}\n"
                 "    unique-id-format %{+X}o%ci:%cp_%fi:%fp_%Ts_%rt:%pid\n"
                 "    unique-id-header X-Unique-ID\n")
        s = sluice(cfg(_config(port, origin.port, udp_log.port, extra)), wait_ports=[port])
        status, _ = _get(port, "/a%20b?q=1", agent='say "hi"')
        assert status == 200
        msg = udp_log.wait_for(lambda m: '"be_lf"/"s1"' in m).rstrip("\n")
        # The id the server received is the one logged.
        sent = origin.requests()[0].header("X-Unique-ID")
        assert sent, origin.requests()[0].head
        assert re.fullmatch(r"7F000001:[0-9A-F]{4}_7F000001:[0-9A-F]{4}_[0-9A-F]{8}_0000:"
                            r"[0-9A-F]{4}", sent), sent
        assert int(sent.split(":")[-1], 16) == s.pid
        m = re.fullmatch(r'"127\.0\.0\.1" "GET" "/a%20b\?q=1" "HTTP/1\.1" 200 (\d+) "be_lf"/"s1" -- '
                         r'"get" "say "hi"" id="(.*)" (.*) ([0-9A-F]{8}) '
                         r'"127\.0\.0\.1":(\d+) "127\.0\.0\.1":(\d+) end', msg)
        assert m, msg
        assert int(m.group(1)) > 0
        assert m.group(2) == sent and m.group(3) == sent, (msg, sent)
        assert int(m.group(5)) > 0 and int(m.group(6)) == origin.port, msg
        # A second request: the stream counter (%rt) moved on.
        _get(port, "/two")
        msg2 = udp_log.wait_for(lambda m: '"/two"' in m)
        assert "_0001:" in msg2, msg2
        # A frontend with a log format writes no "Connect from" line.
        assert not [m for m in udp_log.texts() if "Connect from" in m]
    finally:
        origin.stop()


def test_httplog_clf_and_log_tag(cfg, sluice, udp_log):
    origin = HttpOrigin()
    try:
        port = free_port()
        s = sluice(cfg(_config(port, origin.port, udp_log.port, "    option httplog clf\n"
                               "    log-tag fe_tag\n").replace("format raw", "format rfc3164")),
                   wait_ports=[port])
        _get(port, "/clf")
        msg = udp_log.wait_for(lambda m: "/clf" in m).rstrip("\n")
        assert f" fe_tag[{s.pid}]: " in msg, msg
        line = msg.split(": ", 1)[1]
        # HAProxy 3.5's CLF: +Q quotes strings, never numbers nor the termination state; the
        # response capture list (none configured) writes nothing after its separator.
        assert re.fullmatch(
            r'127\.0\.0\.1 - - \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d \+0000\] "GET /clf HTTP/1\.1" 200 \d+ '
            r'"" "" \d+ \d{3} "fe_lf" "be_lf" "s1" \d+ \d+ \d+ \d+ \d+ ---- \d+ \d+ \d+ \d+ 0 0 0 '
            r'"" "" "ua-test" ', line), line
    finally:
        origin.stop()


def test_log_format_errors_name_the_line(cfg, sluice_bin):
    import subprocess
    from sluice_harness import line_of
    path = cfg(_config(free_port(), 1, 1, '    log-format "%ci %zz"\n'))
    r = subprocess.run([sluice_bin, "-c", "-f", str(path)], capture_output=True, text=True,
                       timeout=20)
    assert r.returncode != 0
    want = (f"Parsing [{path}:{line_of(path, 'log-format')}]: failed to parse log-format : no such "
            "format alias 'zz'. If you wanted to emit the '%' character verbatim, you need to use "
            "'%%'.")
    assert want in r.stderr, r.stderr

"""option httplog lines (http1.md 6.3), field by field, for success and failure cases."""
import re
import socket

from sluice_harness import UnixDgramLogReceiver, free_port
from hutil import Conn, error_page, preamble

DATE = r"\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d\.\d{3}"
NUM = r"-?\d+"

LINE = re.compile(
    r"^(?P<ci>127\.0\.0\.1):(?P<cp>\d+) \[(?P<tr>" + DATE + r")\] (?P<ft>\S+) "
    r"(?P<b>[^/ ]+)/(?P<s>\S+) "
    r"(?P<TR>-?\d+)/(?P<Tw>-?\d+)/(?P<Tc>-?\d+)/(?P<Tr>-?\d+)/(?P<Ta>\+?\d+) "
    r"(?P<ST>-?\d+) (?P<B>\d+) (?P<CC>\S+) (?P<CS>\S+) (?P<tsc>\S{4}) "
    r"(?P<ac>\d+)/(?P<fc>\d+)/(?P<bc>\d+)/(?P<sc>\d+)/(?P<rc>\+?\d+) (?P<sq>\d+)/(?P<bq>\d+) "
    r"(?P<caps>(?:\{[^ ]*\} )*)(?P<r>\".*)$")


def _config(port, server_port, log_target, fe="", be="", defaults=""):
    return preamble(glob=f"log {log_target}", defaults="log global\noption httplog\n" + defaults) + f"""frontend fe
    bind 127.0.0.1:{port}
{fe}
    default_backend be
backend be
{be}
    server s1 127.0.0.1:{server_port}
"""


def _start(sluice, cfg, udp_log, server_port, **kw):
    port = free_port()
    s = sluice(cfg(_config(port, server_port, f"127.0.0.1:{udp_log.port} format raw local0",
                           **kw)), wait_ports=[port])
    return port, s


def _reset_on_close(conn):
    """The client leaves abruptly: close() sends a RST (SO_LINGER 0), not a FIN."""
    import struct
    conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def _line(udp_log, needle):
    msg = udp_log.wait_for(lambda m: needle in m)
    line = msg.rstrip("\n")
    m = LINE.match(line)
    assert m, f"not an httplog line: {line!r}"
    return m.groupdict(), line


def test_httplog_success_line(cfg, sluice, origin, udp_log):
    port, _ = _start(sluice, cfg, udp_log, origin.port)
    with Conn(port) as c:
        c.send(b"GET /ok?x=1 HTTP/1.1\r\nHost: a\r\n\r\n")
        r = c.response()
        cport = c.sock.getsockname()[1]
    f, line = _line(udp_log, "/ok?x=1")
    assert int(f["cp"]) == cport
    assert (f["ft"], f["b"], f["s"]) == ("fe", "be", "s1"), line
    assert all(int(f[k]) >= 0 for k in ("TR", "Tw", "Tc", "Tr", "Ta")), line
    assert int(f["Ta"]) >= int(f["Tr"]), line
    # %B counts the response from the server, head included (HAProxy measures its internal
    # form, so only bounds are checked)
    assert f["ST"] == "200" and len(r.body) < int(f["B"]) <= len(r.raw), (line, len(r.raw))
    assert (f["CC"], f["CS"], f["tsc"]) == ("-", "-", "----"), line
    assert (f["ac"], f["fc"], f["bc"], f["sc"], f["rc"], f["sq"], f["bq"]) == \
        ("1", "1", "0", "0", "0", "0", "0"), line
    assert f["r"] == '"GET /ok?x=1 HTTP/1.1"', line


def test_httplog_one_line_per_keep_alive_request(cfg, sluice, origin, udp_log):
    port, _ = _start(sluice, cfg, udp_log, origin.port)
    with Conn(port) as c:
        for p in ("/ka1", "/ka2", "/ka3"):
            c.send(f"GET {p} HTTP/1.1\r\nHost: a\r\n\r\n".encode())
            assert c.response().status == 200
        udp_log.wait_for(lambda m: "/ka3" in m)
    lines = [m for m in udp_log.texts() if "/ka" in m]
    assert len(lines) == 3, lines
    ports = {LINE.match(l.rstrip("\n")).group("cp") for l in lines}
    assert len(ports) == 1, lines


def test_httplog_escapes_quote(cfg, sluice, origin, udp_log):
    port, _ = _start(sluice, cfg, udp_log, origin.port)
    with Conn(port) as c:
        c.send(b'GET /a"b HTTP/1.1\r\nHost: a\r\n\r\n')
        assert c.response().status == 200
    f, line = _line(udp_log, "/a#22b")
    assert f["r"] == '"GET /a#22b HTTP/1.1"', line


def test_httplog_400_badreq(cfg, sluice, origin, udp_log):
    port, _ = _start(sluice, cfg, udp_log, origin.port)
    with Conn(port) as c:
        c.send(b"GET / HTTP/1.1 \r\nHost: a\r\n\r\n")
        assert c.read_to_eof() == error_page(400)
    f, line = _line(udp_log, "<BADREQ>")
    assert (f["ft"], f["b"], f["s"]) == ("fe", "fe", "<NOSRV>"), line
    assert (f["TR"], f["Tw"], f["Tc"], f["Tr"]) == ("-1", "-1", "-1", "-1"), line
    assert (f["ST"], f["B"], f["tsc"]) == ("400", "0", "PR--"), line
    assert f["r"] == '"<BADREQ>"', line


def test_httplog_408_timeout_http_request(cfg, sluice, origin, udp_log):
    port, _ = _start(sluice, cfg, udp_log, origin.port, defaults="    timeout http-request 300ms")
    with Conn(port) as c:
        c.send(b"GET / HT")
        assert c.read_to_eof() == error_page(408)
    f, line = _line(udp_log, "<BADREQ>")
    assert (f["b"], f["s"]) == ("fe", "<NOSRV>"), line
    assert (f["TR"], f["Tw"], f["Tc"], f["Tr"]) == ("-1", "-1", "-1", "-1"), line
    # the timer starts at accept, Ta at the first byte: a few ms less than the timeout
    assert int(f["Ta"]) >= 200, line
    assert (f["ST"], f["B"], f["tsc"]) == ("408", "0", "cR--"), line


def test_httplog_deny_403(cfg, sluice, origin, udp_log):
    port, _ = _start(sluice, cfg, udp_log, origin.port, fe="    http-request deny if { path /e403 }")
    with Conn(port) as c:
        c.send(b"GET /e403 HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.response().raw == error_page(403)
    f, line = _line(udp_log, "/e403")
    assert (f["b"], f["s"]) == ("fe", "<NOSRV>"), line
    assert int(f["TR"]) >= 0 and (f["Tw"], f["Tc"], f["Tr"]) == ("-1", "-1", "-1"), line
    assert (f["ST"], f["B"], f["tsc"]) == ("403", "0", "PR--"), line


def test_httplog_502_invalid_response(cfg, sluice, origin, udp_log):
    port, _ = _start(sluice, cfg, udp_log, origin.port)
    with Conn(port) as c:
        c.send(b"GET /garbage HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.response().raw == error_page(502)
    f, line = _line(udp_log, "/garbage")
    assert (f["b"], f["s"]) == ("be", "s1"), line
    assert int(f["Tc"]) >= 0 and f["Tr"] == "-1", line
    assert (f["ST"], f["B"], f["tsc"]) == ("502", "0", "PH--"), line


def test_httplog_502_bad_chunk_before_anything_sent(cfg, sluice, origin, udp_log):
    # 2.5: the head never reached the client, so the line says 502, not the server's 200
    port, _ = _start(sluice, cfg, udp_log, origin.port)
    origin.script("/badsize", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
    with Conn(port) as c:
        c.send(b"GET /badsize HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.response().raw == error_page(502)
    f, line = _line(udp_log, "/badsize")
    assert (f["ST"], f["B"], f["tsc"]) == ("502", "0", "PH--"), line


def test_httplog_502_server_closed(cfg, sluice, origin, udp_log):
    port, _ = _start(sluice, cfg, udp_log, origin.port)
    with Conn(port) as c:
        c.send(b"GET /close HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.response().raw == error_page(502)
    f, line = _line(udp_log, "/close")
    assert (f["b"], f["s"], f["Tr"]) == ("be", "s1", "-1"), line
    assert (f["ST"], f["B"], f["tsc"]) == ("502", "0", "SH--"), line


def test_httplog_504_timeout_server(cfg, sluice, origin, udp_log):
    port, _ = _start(sluice, cfg, udp_log, origin.port, be="    timeout server 300ms")
    with Conn(port) as c:
        c.send(b"GET /slow?ms=3000 HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.response().raw == error_page(504)
    f, line = _line(udp_log, "/slow")
    assert (f["b"], f["s"], f["Tr"]) == ("be", "s1", "-1"), line
    assert int(f["Ta"]) >= 300, line
    assert (f["ST"], f["B"], f["tsc"]) == ("504", "0", "sH--"), line


def test_httplog_503_connection_refused(cfg, sluice, udp_log):
    port, _ = _start(sluice, cfg, udp_log, free_port(), be="    retries 0")
    with Conn(port) as c:
        c.send(b"GET /down HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.response().raw == error_page(503)
    f, line = _line(udp_log, "/down")
    assert (f["b"], f["s"]) == ("be", "s1"), line
    assert (f["Tc"], f["Tr"]) == ("-1", "-1"), line
    assert (f["ST"], f["B"], f["tsc"], f["rc"]) == ("503", "0", "SC--", "0"), line


def test_httplog_dontlognull_silent_connection(cfg, sluice, origin, udp_log):
    port, _ = _start(sluice, cfg, udp_log, origin.port, defaults="    option dontlognull")
    socket.create_connection(("127.0.0.1", port), timeout=5).close()
    with Conn(port) as c:
        c.send(b"GET /after-null HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.response().status == 200
    udp_log.wait_for(lambda m: "/after-null" in m)
    assert [m for m in udp_log.texts() if "BADREQ" in m] == []


def test_httplog_default_syslog_header_unix_socket(cfg, sluice, origin, short_tmp):
    path = short_tmp / "log.sock"
    with UnixDgramLogReceiver(str(path)) as rcv:
        port = free_port()
        s = sluice(cfg(_config(port, origin.port, f"{path} local0")), wait_ports=[port])
        with Conn(port) as c:
            c.send(b"GET /unix HTTP/1.1\r\nHost: a\r\n\r\n")
            assert c.response().status == 200
        msg = rcv.wait_for(lambda m: "/unix" in m)
    m = re.match(r"^<134>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d sluice\[(\d+)\]: (.*)$",
                 msg.rstrip("\n"))
    assert m and int(m.group(1)) == s.pid, msg
    assert LINE.match(m.group(2)), msg


def test_httplog_dontlognull_408_page_sent_not_logged(cfg, sluice, origin, udp_log):
    # 6.5: no log for a silent connection, but the 408 page is still sent
    port, _ = _start(sluice, cfg, udp_log, origin.port,
                     defaults="    option dontlognull\n    timeout http-request 300ms")
    with Conn(port) as c:
        assert c.read_to_eof(4) == error_page(408)
    with Conn(port) as c:
        c.send(b"GET /marker HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.response().status == 200
    udp_log.wait_for(lambda m: "/marker" in m)
    assert [m for m in udp_log.texts() if " 408 " in m] == []


def test_tcplog_on_http_frontend_one_line_per_request(cfg, sluice, origin, udp_log):
    # 6.2: the TCP line with HTTP timers absent, one per request
    port = free_port()
    text = _config(port, origin.port, f"127.0.0.1:{udp_log.port} format raw local0")
    sluice(cfg(text.replace("option httplog", "option tcplog")), wait_ports=[port])
    with Conn(port) as c:
        for _ in range(2):
            c.send(b"GET /t HTTP/1.1\r\nHost: a\r\n\r\n")
            assert c.response().status == 200
    def two():
        lines = [m.rstrip("\n") for m in udp_log.texts() if "be/s1" in m]
        return lines if len(lines) >= 2 else None
    from sluice_harness import wait_until
    lines = wait_until(two, 5, message=lambda: f"two tcplog lines: {udp_log.texts()!r}")
    for line in lines:
        assert re.match(r"^127\.0\.0\.1:\d+ \[" + DATE + r"\] fe be/s1 \d+/\d+/\d+ \d+ -- "
                        r"1/1/0/0/0 0/0$", line), line


def test_httplog_partial_request_then_client_close(cfg, sluice, origin, udp_log):
    # 6.3: a partial request closed by the client logs CR-- with <BADREQ>
    port, _ = _start(sluice, cfg, udp_log, origin.port)
    with Conn(port) as c:
        c.send(b"GET /partial HT")
    f, line = _line(udp_log, "<BADREQ>")
    assert (f["b"], f["s"]) == ("fe", "<NOSRV>"), line
    assert (f["TR"], f["Tw"], f["Tc"], f["Tr"]) == ("-1", "-1", "-1", "-1"), line
    assert (f["ST"], f["B"], f["tsc"]) == ("400", "0", "CR--"), line
    assert origin.connection_count() == 0


def test_httplog_empty_connection_logged_without_dontlognull(cfg, sluice, origin, udp_log):
    port, _ = _start(sluice, cfg, udp_log, origin.port)
    socket.create_connection(("127.0.0.1", port), timeout=5).close()
    f, line = _line(udp_log, "<BADREQ>")
    assert (f["ST"], f["B"], f["tsc"]) == ("400", "0", "CR--"), line


def test_httplog_client_left_while_waiting_for_response(cfg, sluice, origin, udp_log):
    port, _ = _start(sluice, cfg, udp_log, origin.port)
    with Conn(port) as c:
        c.send(b"GET /slow?ms=3000 HTTP/1.1\r\nHost: a\r\n\r\n")
        from sluice_harness import wait_until
        wait_until(lambda: origin.requests(), 5, message="the request at the origin")
        _reset_on_close(c)
    f, line = _line(udp_log, "/slow")
    assert (f["b"], f["s"]) == ("be", "s1"), line
    assert int(f["Tc"]) >= 0 and f["Tr"] == "-1", line
    assert (f["ST"], f["B"], f["tsc"]) == ("400", "0", "CH--"), line


def test_httplog_client_left_while_connecting(cfg, sluice, udp_log):
    from sluice_harness import SynBlackhole
    with SynBlackhole() as hole:
        port = free_port()
        sluice(cfg(_config(port, hole.port, f"127.0.0.1:{udp_log.port} format raw local0")
                   .replace("timeout connect 2s", "timeout connect 5s")), wait_ports=[port])
        with Conn(port) as c:
            c.send(b"GET /connecting HTTP/1.1\r\nHost: a\r\n\r\n")
            import time
            time.sleep(0.3)
            _reset_on_close(c)
        f, line = _line(udp_log, "/connecting")
    assert (f["b"], f["s"]) == ("be", "s1"), line
    assert (f["Tc"], f["Tr"]) == ("-1", "-1"), line
    assert (f["ST"], f["B"], f["tsc"]) == ("-1", "0", "CC--"), line


def test_httplog_bytes_exclude_excess_after_body(cfg, sluice, origin, udp_log):
    # A server sending more than its Content-Length: the excess is discarded with the server
    # connection (http1.md 2.6) and is not part of %B, which counts what went to the client.
    port, _ = _start(sluice, cfg, udp_log, origin.port)
    raw = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"
    origin.script("/excess", raw + b"EXTRA-BYTES")
    with Conn(port) as c:
        c.send(b"GET /excess HTTP/1.1\r\nHost: a\r\n\r\n")
        r = c.response()
    assert r.body == b"abc"
    f, line = _line(udp_log, "/excess")
    assert (f["ST"], f["B"]) == ("200", str(len(raw))), line


def test_httplog_captures(cfg, sluice, origin, udp_log):
    """`capture request|response header`: `{a|b} {c}` between the queues and the request line,
    in declaration order, the last field of a name, cut to its length, `{`, `|`, `}` escaped,
    empty for a field that is absent (6.3)."""
    port, _ = _start(sluice, cfg, udp_log, origin.port,
                     fe="capture request header X-Id len 32\n"
                        "capture request header User-Agent len 5\n"
                        "capture request header X-Missing len 8\n"
                        "capture response header Content-Type len 64")
    for path in ("/cap", "/cap2"):
        origin.script(path, b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                            b"Content-Length: 0\r\n\r\n")
    with Conn(port) as c:
        c.send(b"GET /cap HTTP/1.1\r\nHost: a\r\nX-Id: first\r\nX-Id: example.com\r\n"
               b"User-Agent: curl/8.0.0\r\n\r\n")
        assert c.response().status == 200
        c.send(b"GET /cap2 HTTP/1.1\r\nHost: a\r\nX-Id: a{b|c}\r\n\r\n")
        assert c.response().status == 200
    _, line = _line(udp_log, '"GET /cap ')
    assert line.endswith(' 0/0 {example.com|curl/|} {text/plain} "GET /cap HTTP/1.1"'), line
    # Each request captures afresh; `{`, `|`, `}` inside a value are escaped.
    _, line2 = _line(udp_log, '"GET /cap2 ')
    assert line2.endswith(' 0/0 {a#7Bb#7Cc#7D||} {text/plain} "GET /cap2 HTTP/1.1"'), line2

"""`observe layer4|layer7` with `error-limit` and `on-error`: the traffic's errors in a row act
on the server's check as HAProxy 3.5's do, with its log lines, `HANA` status, `last_chk` and
`hanafail`. This file passes unchanged against HAProxy 3.5 (a -db wrapper as SLUICE_BIN)."""
from __future__ import annotations

import re
import socket

from sluice_harness import free_port, show_stat, stat_row, wait_until

from checks_util import lines, logged_head, request


def http_head(sock, log_port: int, port: int, global_extra: str = "") -> str:
    # Checks every 10s, the first within 100ms (max-spread-checks): nothing but the traffic
    # moves the servers between the first check and the asserts.
    return logged_head(sock, log_port, port, "none", global_extra=global_extra
                       + "    max-spread-checks 100ms\n").replace(
        "    mode tcp\n", "    mode http\n    timeout check 2s\n").replace(
        "    default_backend none\n", "    use_backend %[req.hdr(x-be)]\n")


def test_layer7_on_error_actions(cfg, sluice, origin, udp_log, short_tmp):
    sock = short_tmp / "stats.sock"
    port = free_port()
    o = origin.port
    srv = "check inter 10s observe layer7"
    text = http_head(sock, udp_log.port, port) + f"""backend md
    option httpchk GET /
    server s1 127.0.0.1:{o} {srv} error-limit 3 on-error mark-down
backend fc
    option httpchk GET /
    option log-health-checks
    server s1 127.0.0.1:{o} {srv} init-state fully-up error-limit 2 on-error fail-check
backend sd
    option httpchk GET /
    server s1 127.0.0.1:{o} {srv} init-state fully-up error-limit 2 on-error sudden-death
backend ok
    option httpchk GET /
    server s1 127.0.0.1:{o} {srv} init-state fully-up error-limit 2 on-error mark-down
backend df
    option httpchk GET /
    server s1 127.0.0.1:{o} {srv} init-state fully-up error-limit 2
"""
    sluice(cfg(text), wait_ports=[port], wait_unix=[sock])

    def row(be: str) -> dict[str, str]:
        return stat_row(show_stat(str(sock)), be, "s1")

    wait_until(lambda: all(row(b)["check_status"] == "L7OK" for b in ("md", "fc", "sd", "ok", "df")), 5)

    # Without on-error: fail-check, HAProxy's default (one failed check of three).
    assert [request(port, "df", "/status/503") for _ in range(2)] == [503, 503]
    wait_until(lambda: row("df")["check_status"] == "HANA", 3)
    assert (row("df")["status"], row("df")["hanafail"]) == ("UP 2/3", "1")

    # mark-down: three 503s in a row take the server DOWN at once.
    assert [request(port, "md", "/status/503") for _ in range(3)] == [503, 503, 503]
    wait_until(lambda: lines(udp_log, "md/s1 is DOWN") and lines(udp_log, "backend md"), 3)
    assert lines(udp_log, "md/s1 is DOWN")[0].startswith(
        'Server md/s1 is DOWN, reason: Health analyze, info: "Detected 3 consecutive errors, '
        'last one was: Wrong http response". 0 active and 0 backup servers left. ')
    assert lines(udp_log, "backend md") == ["backend md has no server available!"]
    r = row("md")
    assert (r["status"], r["check_status"], r["check_duration"], r["hanafail"], r["chkfail"],
            r["chkdown"]) == ("DOWN", "HANA", "0", "1", "1", "1"), r
    assert r["last_chk"] == "Detected 3 consecutive errors, last one was: Wrong http response"
    assert r["check_desc"] == "Health analyze"

    # fail-check: one failed check of three (fully up: UP 2/3), logged as a check.
    assert [request(port, "fc", "/status/500") for _ in range(2)] == [500, 500]
    wait_until(lambda: lines(udp_log, "server fc/s1 failed"), 3)
    assert lines(udp_log, "server fc/s1 failed") == [
        'Health check for server fc/s1 failed, reason: Health analyze, info: "Detected 2 '
        'consecutive errors, last one was: Wrong http response", status: 2/3 UP.']
    assert (row("fc")["status"], row("fc")["check_health"]) == ("UP 2/3", "3")

    # sudden-death: one failed check from DOWN, then DOWN at the next errors.
    assert [request(port, "sd", "/status/502") for _ in range(2)] == [502, 502]
    wait_until(lambda: row("sd")["status"] == "UP 1/3", 3)
    assert row("sd")["hanafail"] == "1"
    assert [request(port, "sd", "/status/504") for _ in range(2)] == [504, 504]
    wait_until(lambda: lines(udp_log, "sd/s1 is DOWN"), 3)
    assert row("sd")["hanafail"] == "2"

    # A success ends a run of errors; 4xx, 501 and 505 are the client's, not the server's.
    # Each answer is the origin's: a server taken down on the way would answer 503 from sluice.
    paths = ("/status/503", "/", "/status/503", "/status/404", "/status/501", "/status/505",
             "/status/503", "/")
    assert [request(port, "ok", p) for p in paths] == [503, 200, 503, 404, 501, 505, 503, 200]
    assert row("ok")["status"] == "UP" and row("ok")["hanafail"] == "0"
    assert not lines(udp_log, "ok/s1")
    assert [request(port, "ok", "/status/503") for _ in range(2)] == [503, 503]
    wait_until(lambda: lines(udp_log, "ok/s1 is DOWN"), 3)
    assert "Detected 2 consecutive errors" in lines(udp_log, "ok/s1 is DOWN")[0]


def test_layer7_error_kinds(cfg, sluice, origin, udp_log, short_tmp):
    """How each failed response is named: a server timeout, a close before the response (a read
    error for HAProxy 3.5's HTTP/1 layer, as a reset is), an invalid response."""
    sock = short_tmp / "stats.sock"
    port = free_port()
    srv = f"127.0.0.1:{origin.port} check inter 10s observe layer7 error-limit 1 on-error mark-down"
    text = http_head(sock, udp_log.port, port) + "".join(
        f"backend {b}\n    option httpchk GET /\n    timeout server 300ms\n    server s1 {srv}\n"
        for b in ("tout", "close", "junk"))
    sluice(cfg(text), wait_ports=[port], wait_unix=[sock])
    wait_until(lambda: all(stat_row(show_stat(str(sock)), b, "s1")["check_status"] == "L7OK"
                           for b in ("tout", "close", "junk")), 5)
    assert request(port, "tout", "/slow?ms=1500") == 504
    assert request(port, "close", "/close") == 502
    assert request(port, "junk", "/garbage") == 502
    for be, what in (("tout", "Read timeout (http)"), ("close", "Read error (http)"),
                     ("junk", "Invalid http response (headers)")):
        wait_until(lambda: lines(udp_log, f"{be}/s1 is DOWN"), 3)
        assert f'last one was: {what}". ' in lines(udp_log, f"{be}/s1 is DOWN")[0], udp_log.texts()


def test_layer4_and_fastinter(cfg, sluice, servers, origin, udp_log, short_tmp):
    """layer4: refused connections are errors (each attempt, retries included); the check,
    aimed elsewhere by `port`, passes. on-error fastinter only brings the next check forward."""
    sock = short_tmp / "stats.sock"
    port = free_port()
    echo = servers.echo()
    closed = free_port()   # reserved by the harness: nothing listens there
    fi_port = free_port()
    text = logged_head(sock, udp_log.port, port, "l4", global_extra="    max-spread-checks 100ms\n") + f"""backend l4
    retries 1
    server s1 127.0.0.1:{closed} check port {echo.port} inter 10s init-state fully-up observe layer4 error-limit 4 on-error mark-down
listen fi
    mode http
    bind 127.0.0.1:{fi_port}
    option httpchk GET /check
    server s1 127.0.0.1:{origin.port} check inter 10s fastinter 200 init-state fully-up observe layer7 error-limit 2 on-error fastinter
"""
    sluice(cfg(text), wait_ports=[port, fi_port], wait_unix=[sock])
    wait_until(lambda: stat_row(show_stat(str(sock)), "l4", "s1")["check_status"] == "L4OK", 5)

    def tcp_try() -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
            c.settimeout(5)
            assert c.recv(10) == b""   # closed: no server could be reached

    tcp_try()   # two refused attempts (retries 1)
    assert stat_row(show_stat(str(sock)), "l4", "s1")["status"] == "UP"
    tcp_try()   # four: the limit
    wait_until(lambda: lines(udp_log, "l4/s1 is DOWN"), 3)
    # The session that failed may still count as active when the line is written.
    assert re.fullmatch(
        'Server l4/s1 is DOWN, reason: Health analyze, info: "Detected 4 consecutive errors, last '
        'one was: L4 unsuccessful connection". 0 active and 0 backup servers left. [01] sessions '
        'active, 0 requeued, 0 remaining in queue.', lines(udp_log, "l4/s1 is DOWN")[0])

    wait_until(lambda: origin.paths().count("/check") == 1, 5, message=lambda: f"{origin.paths()}")
    checks = origin.paths().count("/check")
    for _ in range(2):
        request(fi_port, "x", "/status/503")
    # The next check comes within fastinter, not after inter (10s); the server stays UP.
    wait_until(lambda: origin.paths().count("/check") > checks, 2)
    r = stat_row(show_stat(str(sock)), "fi", "s1")
    assert (r["status"], r["hanafail"], r["check_status"]) == ("UP", "1", "L7OK"), r
    assert not lines(udp_log, "fi/s1")

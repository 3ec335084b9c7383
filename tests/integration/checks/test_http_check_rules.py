"""`option httpchk` and its http-check rules (send, expect on the status, a field or the body,
connect for a second request, disable-on-404, send-state), read with sluice's HTTP parser: the
requests and the `option log-health-checks` lines are HAProxy 3.5's for the same servers
(this file passes unchanged against it)."""
from __future__ import annotations

import socket

from sluice_harness import TcpServer, wait_until

from checks_util import health_lines, row


def answer(response: bytes):
    def serve(c: socket.socket, srv) -> None:
        c.settimeout(2)
        got = b""
        try:
            while b"\r\n\r\n" not in got:
                d = c.recv(4096)
                if not d:
                    break
                got += d
        except OSError:
            pass
        srv.add_result(got)
        c.sendall(response)
    return serve


OK = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b, c\r\n\r\nhello"
NOT_FOUND = b"HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nnop"


def test_http_expects(cfg, sluice, servers, udp_log, short_tmp):
    ok = servers.add(TcpServer(answer(OK)))
    nf = servers.add(TcpServer(answer(NOT_FOUND)))
    junk = servers.add(TcpServer(answer(b"garbage\r\n\r\n")))
    got = health_lines(cfg, sluice, udp_log, short_tmp, {
        "plain": ("", ok.port),
        "status404": ("", nf.port),
        "body": ("    http-check expect string world", ok.port),
        "rbody": ("    http-check expect rstring ^hel", ok.port),
        "hdr": ("    http-check expect hdr name x-a value c", ok.port),
        "nohdr": ("    http-check expect hdr name x-b", ok.port),
        "fhdr": ("    http-check expect fhdr name x-a value c", ok.port),
        "notstatus": ("    http-check expect ! status 200", ok.port),
        "onerror": ('    http-check expect status 200 comment mine on-error "e %[srv_name]"', nf.port),
        "disable404": ("    http-check disable-on-404", nf.port),
        "junk": ("", junk.port),
        "twice": ("    http-check connect\n    http-check send meth HEAD uri /h\n"
                  "    http-check expect status 200\n    http-check connect\n"
                  "    http-check send meth GET uri /g ver HTTP/1.1 hdr host x\n"
                  "    http-check expect status 200", ok.port),
        "vars": ("    http-check set-var(check.u) str(/v)\n"
                 "    http-check send uri-lf %[var(check.u)]\n"
                 "    http-check unset-var(check.u)\n"
                 '    http-check expect status 200 on-success "%[var(check.u,gone)]"', ok.port),
    }, option="option httpchk")
    passed = "succeeded, reason: Layer7 check passed, code: 200, check duration: Nms, status: 1/1 UP."
    down = ", check duration: Nms, status: 0/1 DOWN."
    wrong_ok = f'failed, reason: Layer7 wrong status, code: 200, info: "OK"{down}'
    want = {
        "plain": passed,
        "status404": f'failed, reason: Layer7 wrong status, code: 404, info: "Not Found"{down}',
        "body": f'failed, reason: Layer7 invalid response, info: "HTTP content check did not match"{down}',
        "rbody": passed,
        "hdr": passed,
        "nohdr": wrong_ok,
        "fhdr": wrong_ok,   # fhdr takes "b, c" whole
        "notstatus": wrong_ok,
        "onerror": f'failed, reason: Layer7 wrong status, code: 404, info: "e s1 comment: mine"{down}',
        "disable404": ("conditionally succeeded, reason: Layer7 check conditionally passed, code: 404, "
                       "check duration: Nms, status: 1/1 UP."),
        "junk": f"failed, reason: Socket error{down}",
        "twice": passed,
        "vars": ('succeeded, reason: Layer7 check passed, code: 200, info: "gone", check duration: '
                 "Nms, status: 1/1 UP."),
    }
    for name, tail in want.items():
        assert got[name] == f"Health check for server {name}/s1 {tail}", (name, got[name])
    assert ok.results[0] == b"OPTIONS / HTTP/1.0\r\n\r\n"
    assert b"HEAD /h HTTP/1.0\r\n\r\n" in ok.results
    assert b"OPTIONS /v HTTP/1.0\r\n\r\n" in ok.results   # the variable step's value
    assert b"GET /g HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n" in ok.results


def test_send_state_and_nolb(cfg, sluice, servers, udp_log, short_tmp):
    """send-state tells the server its state; disable-on-404 puts a server that answers 404 in
    NOLB (UP, no new traffic) until it answers 2xx again."""
    ok = servers.add(TcpServer(answer(OK)))
    nf = servers.add(TcpServer(answer(NOT_FOUND)))
    health_lines(cfg, sluice, udp_log, short_tmp, {
        "be": ("    http-check send-state\n    http-check disable-on-404", nf.port),
        "st": ("    http-check send-state", ok.port),
    }, option="option httpchk")
    sock = short_tmp / "stats.sock"
    wait_until(lambda: row(sock, "s1")["status"] == "NOLB", 3)
    assert row(sock, "s1")["check_status"] == "L7OKC"
    req = ok.results[0].decode()
    # The counter starts at 0 while the server is UP (init-state none): "UP 0/1".
    assert req.startswith("OPTIONS / HTTP/1.0\r\nx-haproxy-server-state: UP 0/1; address=127.0.0.1; "
                          f"port={ok.port}; name=st/s1; node="), req
    assert req.endswith("; weight=1/1; scur=0/0; qcur=0\r\n\r\n"), req

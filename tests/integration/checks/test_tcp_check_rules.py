"""`option tcp-check` with its rules, and `option log-health-checks`: each outcome's line as
HAProxy 3.5 writes it for the same configuration (check durations aside), and what show stat
says. The fake servers speak first (a banner), answer PING with +PONG, or stay silent."""
from __future__ import annotations

import socket
import time

from sluice_harness import TcpServer, free_port, slow_factor, wait_until

from checks_util import health_lines, row


def banner(c: socket.socket, _srv) -> None:
    c.sendall(b"+OK ready\r\n")
    time.sleep(0.3)


def pong(c: socket.socket, srv) -> None:
    c.settimeout(2)
    try:
        d = c.recv(100)
    except OSError:
        return
    srv.add_result(d)
    c.sendall(b"+PONG\r\n" if d.startswith(b"PING") else b"-ERR\r\n")
    time.sleep(0.1)


def silent(c: socket.socket, _srv) -> None:
    time.sleep(2)


def test_expect_outcomes(cfg, sluice, servers, udp_log, short_tmp):
    b = servers.add(TcpServer(banner))
    p = servers.add(TcpServer(pong))
    s = servers.add(TcpServer(silent))
    refused = free_port()
    got = health_lines(cfg, sluice, udp_log, short_tmp, {
        "nomatch": ("    tcp-check expect string NOPE", b.port),
        "unwanted": ("    tcp-check expect ! string +OK", b.port),
        "regex": ("    tcp-check expect rstring ^-ERR", b.port),
        "rbinary": ("    tcp-check expect rbinary ^2B4F4B", b.port),
        "binary": ("    tcp-check expect binary 2b4f4c", b.port),
        "commented": ("    tcp-check comment mycomment\n    tcp-check expect string NOPE", b.port),
        "pingpong": ("    tcp-check send PING\\r\\n\n    tcp-check expect string +PONG", p.port),
        "binsend": ("    tcp-check send-binary 50494e470d0a\n    tcp-check expect string +PONGX", p.port),
        "connport": ("    tcp-check connect port " + str(refused) + " comment second", b.port),
        "initial": ("    tcp-check expect string +OK", refused),
        "timeout": ("    tcp-check expect string +OK tout-status L4TOUT", s.port),
        "formats": ('    tcp-check send-lf "PING %[srv_name]\\r\\n"\n'
                    '    tcp-check expect string +PONG on-success "yay %[srv_name]" ok-status L6OK',
                    p.port),
        "onerror": ('    tcp-check expect string NOPE on-error "oops %[res.payload(0,3)]" '
                    "error-status L6RSP", b.port),
        "connectonly": (f"    tcp-check connect port {b.port}", b.port),
    })
    ok7 = 'succeeded, reason: Layer7 check passed, code: 0, info: "(tcp-check)", check duration: Nms, status: 1/1 UP.'
    invalid = "failed, reason: Layer7 invalid response, info: "
    down = ", check duration: Nms, status: 0/1 DOWN."
    want = {
        "nomatch": f"{invalid}\"TCPCHK did not match content 'NOPE' at step 1\"{down}",
        "unwanted": f"{invalid}\"TCPCHK matched unwanted content '+OK' at step 1\"{down}",
        "regex": f'{invalid}"TCPCHK did not match content (regex) at step 1"{down}',
        "rbinary": ok7,
        "binary": f'{invalid}"TCPCHK did not match content (binary) at step 1"{down}',
        "commented": f"{invalid}\"TCPCHK did not match content 'NOPE' at step 2 comment: mycomment\"{down}",
        "pingpong": ok7,
        "binsend": f"{invalid}\"TCPCHK did not match content '+PONGX' at step 2\"{down}",
        "connport": ('failed, reason: Layer4 connection problem, info: "ECONNREFUSED returned by OS '
                     f"(Connection refused) at step 1 of tcp-check (connect port {refused}) comment: "
                     f"'second'\"{down}"),
        "initial": ('failed, reason: Layer4 connection problem, info: "ECONNREFUSED returned by OS '
                    f'(Connection refused) at initial connection step of tcp-check"{down}'),
        "timeout": ("failed, reason: Layer4 timeout, info: \" at step 1 of tcp-check (expect string "
                    f"'+OK')\"{down}"),
        "formats": 'succeeded, reason: Layer6 check passed, info: "yay s1", check duration: Nms, status: 1/1 UP.',
        "onerror": f'failed, reason: Layer6 invalid response, info: "oops +OK"{down}',
        "connectonly": 'succeeded, reason: Layer4 check passed, info: "(tcp-check)", check duration: Nms, status: 1/1 UP.',
    }
    for name, tail in want.items():
        assert got[name] == f"Health check for server {name}/s1 {tail}", (name, got[name])
    assert b"PING s1\r\n" in p.results, p.results


def test_state_lines_and_stats(cfg, sluice, servers, udp_log, short_tmp):
    """With log-health-checks the state change says no reason (the check's line did); show
    stat carries the check's status and text."""
    b = servers.add(TcpServer(banner))
    health_lines(cfg, sluice, udp_log, short_tmp, {"be": ("    tcp-check expect string NOPE", b.port)})
    sock = short_tmp / "stats.sock"
    wait_until(lambda: row(sock, "s1")["status"] == "DOWN", 5)
    r = row(sock, "s1")
    assert r["check_status"] == "L7RSP"
    assert r["last_chk"] == "TCPCHK did not match content 'NOPE' at step 1"
    msg = udp_log.wait_for(lambda m: "Server be/s1 is DOWN" in m)
    assert msg.strip() == ("Server be/s1 is DOWN. 0 active and 0 backup servers left. "
                           "0 sessions active, 0 requeued, 0 remaining in queue."), msg
    # Later identical failures add no line: the counter is already at 0.
    time.sleep(1.0 * slow_factor())
    assert len([m for m in udp_log.texts() if m.startswith("Health check for server be/s1")]) == 1


def close_kind(c: socket.socket, srv) -> None:
    """Records what the check sent and how it closed: "reset" or "fin"."""
    c.settimeout(2)
    try:
        got = c.recv(100)
        rest = c.recv(100)
        srv.add_result((got, "fin" if rest == b"" else "more"))
    except ConnectionResetError:
        srv.add_result((b"", "reset"))
    except OSError:
        pass


def test_checks_reset_unless_linger(cfg, sluice, servers, udp_log, short_tmp):
    """A check's connection ends with a reset, as HAProxy 3.5's do; `connect linger` ends it
    with a FIN (seen from the server as HAProxy 3.5 does it)."""
    rst = servers.add(TcpServer(close_kind))
    fin = servers.add(TcpServer(close_kind))
    health_lines(cfg, sluice, udp_log, short_tmp, {
        "rst": (f"    tcp-check connect port {rst.port}\n    tcp-check send foo", rst.port),
        "fin": (f"    tcp-check connect port {fin.port} linger\n    tcp-check send foo", fin.port),
    })
    wait_until(lambda: rst.results and fin.results, 3)
    assert rst.results[0][1] == "reset", rst.results
    assert fin.results[0] == (b"foo", "fin"), fin.results


def test_variables_and_port_expression(cfg, sluice, servers, udp_log, short_tmp):
    """set-var, set-var-fmt and unset-var steps keep check.* variables for one check (each
    check starts without them); a connect's port may be an expression, and one that gives no
    port leaves the check's own."""
    echo = servers.echo()
    refused = free_port()
    got = health_lines(cfg, sluice, udp_log, short_tmp, {
        "vars": (f"    tcp-check set-var(check.port) int({echo.port})\n"
                 '    tcp-check set-var-fmt(check.greet) "HELLO %[srv_name]"\n'
                 "    tcp-check connect port var(check.port)\n"
                 '    tcp-check send-lf "%[var(check.greet)] %[var(check.seen,none)]\\r\\n"\n'
                 "    tcp-check set-var(check.seen) str(yes)\n"
                 '    tcp-check expect string "HELLO s1 none"\n'
                 "    tcp-check unset-var(check.greet)\n"
                 '    tcp-check send-lf "%[var(check.greet,gone)]\\r\\n"\n'
                 "    tcp-check expect string gone", refused),
        "fallback": ("    tcp-check set-var(check.p) str(nope)\n"
                     "    tcp-check connect port var(check.p)\n"
                     "    tcp-check send x\n    tcp-check expect string x", echo.port),
    })
    ok7 = ('succeeded, reason: Layer7 check passed, code: 0, info: "(tcp-check)", check '
           'duration: Nms, status: 1/1 UP.')
    assert got == {"vars": f"Health check for server vars/s1 {ok7}",
                   "fallback": f"Health check for server fallback/s1 {ok7}"}, got
    # Later checks (every 300ms) start without the last one's variables: none fails.
    time.sleep(1.0 * slow_factor())
    assert not [m for m in udp_log.texts() if "failed" in m], udp_log.texts()

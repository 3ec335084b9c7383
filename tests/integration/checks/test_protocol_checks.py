"""The protocol checks (`option redis-check`, `smtpchk`, `pgsql-check`, `mysql-check`,
`ldap-check`, `ssl-hello-chk`) against fake servers that speak the first bytes of each protocol:
what the check sends, and the `option log-health-checks` line of each outcome, as HAProxy 3.5
sends and writes them for the same servers (checked side by side when this test was written:
it passes unchanged with HAProxy 3.5 as SLUICE_BIN)."""
from __future__ import annotations

import socket
import struct
import time

from sluice_harness import TcpServer

from checks_util import health_lines


def read_burst(c: socket.socket, first: float) -> bytes:
    """What the check sends next: waits up to `first` seconds for its first bytes, then reads
    until it pauses (or closes)."""
    c.settimeout(first)
    got = b""
    try:
        while True:
            d = c.recv(4096)
            if not d:
                break
            got += d
            c.settimeout(0.05)
    except OSError:
        pass
    return got


def replies(*answers: bytes, banner: bytes = b""):
    """A server that sends `banner`, then answers each burst the check sends with the next
    answer; it then records what else comes within 0.15 s and closes (a check that waits for
    more than it was given ends on that close)."""
    def serve(c: socket.socket, srv) -> None:
        if banner:
            c.sendall(banner)
        for a in answers:
            srv.add_result(read_burst(c, 2.0))
            c.sendall(a)
        srv.add_result(read_burst(c, 0.15))
    return serve


MYSQL_GREETING = (b"\x0a5.7.0\x00" + b"\x01\x00\x00\x00" + b"abcdefgh\x00" + b"\xff\xf7\x21\x02\x00"
                  + b"\x00" * 13 + b"ijklmnopqrst\x00")


def mysql_packet(payload: bytes, seq: int = 0) -> bytes:
    return len(payload).to_bytes(3, "little") + bytes([seq]) + payload


def test_protocol_checks(cfg, sluice, servers, udp_log, short_tmp):
    srv = {
        "redis_ok": replies(b"+PONG\r\n"),
        "redis_err": replies(b"-ERR auth required\r\n"),
        "smtp_ok": replies(b"250-mail.example hello\r\n250 SIZE 100\r\n", b"221 bye\r\n",
                           banner=b"220 mail.example ESMTP ready\r\n"),
        "smtp_ehlo": replies(b"250 hi\r\n", b"221 bye\r\n", banner=b"220 ready\r\n"),
        "smtp_bad": replies(banner=b"554 go away\r\n"),
        "pg_ok": replies(b"R\0\0\0\x08\0\0\0\0"),
        "pg_err": replies(b"E\0\0\0\x20SFATAL\0Mno such user\0\0"),
        "ldap_ok": replies(b"0\x0c\x02\x01\x01a\x07\x0a\x01\x00\x04\x00\x04\x00"),
        "ldap_bad": replies(b"0\x0c\x02\x01\x01a\x07\x0a\x01\x31\x04\x00\x04\x00"),
        "ssl_ok": replies(b"\x16\x03\x01\x00\x04\x02\x00\x00\x00"),
        "ssl_bad": replies(b"HTTP/1.0 400 Bad\r\n\r\n"),
        "my_ok": replies(banner=mysql_packet(MYSQL_GREETING)),
        "my_err": replies(banner=mysql_packet(b"\xff\x15\x04#28000Access denied")),
        "my_user": replies(mysql_packet(b"\x00\x00\x00\x02\x00\x00\x00", 2),
                           banner=mysql_packet(MYSQL_GREETING)),
        "my_pre": replies(mysql_packet(b"\x00\x00\x00\x02\x00\x00\x00", 2),
                          banner=mysql_packet(MYSQL_GREETING)),
        "my_plain": replies(mysql_packet(b"\x00\x00\x00\x02\x00\x00\x00", 2),
                            banner=mysql_packet(MYSQL_GREETING)),
    }
    fakes = {name: servers.add(TcpServer(fn)) for name, fn in srv.items()}
    options = {
        "redis_ok": "option redis-check", "redis_err": "option redis-check",
        "smtp_ok": "option smtpchk", "smtp_ehlo": "option smtpchk EHLO me.example",
        "smtp_bad": "option smtpchk",
        "pg_ok": "option pgsql-check user bob", "pg_err": "option pgsql-check user bob",
        "ldap_ok": "option ldap-check", "ldap_bad": "option ldap-check",
        "ssl_ok": "option ssl-hello-chk", "ssl_bad": "option ssl-hello-chk",
        "my_ok": "option mysql-check", "my_err": "option mysql-check",
        "my_user": "option mysql-check user bob post-41",
        "my_pre": "option mysql-check user bob pre-41",
        "my_plain": "option mysql-check user bob",
    }
    got = health_lines(cfg, sluice, udp_log, short_tmp,
                       {name: (f"    {options[name]}", fakes[name].port) for name in srv},
                       option="")
    ok = "succeeded, reason: Layer7 check passed, code: "
    down = ", check duration: Nms, status: 0/1 DOWN."
    up = ", check duration: Nms, status: 1/1 UP."
    want = {
        "redis_ok": f'{ok}0, info: "Redis server is ok"{up}',
        "redis_err": f'failed, reason: Layer7 wrong status, code: 0, info: "-ERR auth required"{down}',
        "smtp_ok": f'{ok}221, info: "bye"{up}',
        "smtp_ehlo": f'{ok}221, info: "bye"{up}',
        "smtp_bad": f'failed, reason: Layer7 wrong status, code: 554, info: "go away"{down}',
        "pg_ok": f'{ok}0, info: "PostgreSQL server is ok"{up}',
        "pg_err": f'failed, reason: Layer7 invalid response, info: "FATAL"{down}',
        "ldap_ok": f'{ok}0, info: "Success"{up}',
        "ldap_bad": ('failed, reason: Layer7 wrong status, code: 49, info: "See RFC: '
                     f'http://tools.ietf.org/html/rfc4511#section-4.1.9"{down}'),
        "ssl_ok": f"succeeded, reason: Layer6 check passed{up}",
        "ssl_bad": f"failed, reason: Layer6 invalid response{down}",
        "my_ok": f'{ok}0, info: "5.7.0"{up}',
        "my_err": f'failed, reason: Layer7 wrong status, code: 1045, info: "#28000Access denied"{down}',
        "my_user": f'{ok}0, info: "5.7.0"{up}',
        "my_pre": f'{ok}0, info: "5.7.0"{up}',
        "my_plain": f'{ok}0, info: "5.7.0"{up}',
    }
    for name, tail in want.items():
        assert got[name] == f"Health check for server {name}/s1 {tail}", (name, got[name])

    # What the checks sent.
    assert fakes["redis_ok"].results[0] == b"*1\r\n$4\r\nPING\r\n"
    assert fakes["smtp_ok"].results[:2] == [b"HELO localhost\r\n", b"QUIT\r\n"]
    assert fakes["smtp_ehlo"].results[0] == b"EHLO me.example\r\n"
    assert fakes["pg_ok"].results[0] == b"\x00\x00\x00\x12\x00\x03\x00\x00user\x00bob\x00\x00"
    assert fakes["ldap_ok"].results[0] == bytes.fromhex("300c020101600702010304008000")
    hello = fakes["ssl_ok"].results[0]
    assert hello[:11] == bytes.fromhex("1603000079010000750300"), hello
    assert abs(struct.unpack("!I", hello[11:15])[0] - time.time()) < 60   # the hello's time
    assert hello[15:43] == b"HAPROXYSSLCHK\nHAPROXYSSLCHK\n"
    assert len(hello) == 126 and hello.endswith(b"\x00\x3a\x01\x00")
    login = fakes["my_user"].results[0]
    assert login == bytes.fromhex("250000010082000000800001" "21" + "00" * 23) + b"bob\x00\x00" + \
        bytes.fromhex("0100000001"), login.hex()
    # post-41 is the default; pre-41 logs in with the protocol before 4.1 (HAProxy 3.5's bytes).
    assert fakes["my_plain"].results[0] == login, fakes["my_plain"].results[0].hex()
    assert fakes["my_pre"].results[0] == bytes.fromhex("0a00000100800000") + b"\x01bob\x00\x00" + \
        bytes.fromhex("0100000001"), fakes["my_pre"].results[0].hex()

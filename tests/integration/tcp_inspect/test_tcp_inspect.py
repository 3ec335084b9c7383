"""TCP content inspection: tcp-request content rules and use_backend on the client's first
bytes (req.len, req.ssl_sni, req.ssl_hello_type), for TLS pass-through routing by SNI.

What HAProxy 2.6 does side by side, and these tests expect:
  * a rule whose fetch may still change (a partial ClientHello, a req.len below its bound)
    waits for more bytes, at most inspect-delay; then the rules judge once more on what is
    there, and use_backend after them, on the same bytes;
  * the server connection starts once the backend is chosen, and the bytes read while
    inspecting reach it unchanged;
  * Tw in the log is the inspection time; a client that closes during inspection still goes
    to its backend (its bytes and FIN forwarded, `--`); `timeout client` first: `cR`.
The ClientHellos are made by Python's ssl module (a real TLS client) and sent as raw bytes, so
that the test knows exactly what the server must receive.
"""
from __future__ import annotations

import socket
import ssl
import struct
import subprocess
import time

import pytest

from sluice_harness import (TcpServer, cli, free_port, line_of, parse_show_stat, run_sluice,
                            slow_factor, stat_int, stat_row, wait_until, write_config)


class FirstBytesServer(TcpServer):
    """Records what each connection sent until EOF (or `quiet` seconds without a byte), then
    answers its name and closes. results: the bytes of each connection."""

    def __init__(self, name: str, quiet: float = 0.5):
        self.name = name
        self.quiet = quiet
        super().__init__(self._record)

    def _record(self, conn: socket.socket, _srv) -> None:
        conn.settimeout(self.quiet)
        data = b""
        try:
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
        except (socket.timeout, OSError):
            pass
        self.add_result(data)
        try:
            conn.sendall(self.name.encode())
        except OSError:
            pass


@pytest.fixture
def backends(servers):
    return {n: servers.add(FirstBytesServer(n)) for n in ("a", "b", "dflt")}


def client_hello(server_name: str | None) -> bytes:
    """The first flight of a real TLS client (Python's ssl) for `server_name`."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(incoming, outgoing, server_hostname=server_name)
    with pytest.raises(ssl.SSLWantReadError):
        obj.do_handshake()
    return outgoing.read()


def config(stats: str, frontend: str, backends: dict, extra: str = "") -> str:
    return f"""
global
    stats socket {stats} level admin
defaults
    mode tcp
    log stdout format raw local0
    option tcplog
    timeout connect 2s
    timeout client 10s
    timeout server 10s
{extra}
frontend fe
{frontend}
    default_backend be_dflt
backend be_a
    server s 127.0.0.1:{backends['a'].port}
backend be_b
    server s 127.0.0.1:{backends['b'].port}
backend be_dflt
    server s 127.0.0.1:{backends['dflt'].port}
"""


SNI_FRONTEND = """
    bind 127.0.0.1:{port}
    tcp-request inspect-delay 5s
    tcp-request content accept if {{ req_ssl_hello_type 1 }}
    use_backend be_a if {{ req_ssl_sni -i a.example.com }}
    use_backend be_b if {{ req.ssl_sni -m end .b.example.com }}
"""

REJECT_NON_TLS = """
    bind 127.0.0.1:{port}
    tcp-request inspect-delay {delay}
    tcp-request content reject unless {{ req_ssl_hello_type 1 }}
"""


def send(port: int, chunks: list[bytes], pause: float = 0.0, shut: bool = False,
         timeout: float = 5.0) -> tuple[bytes, float]:
    """Sends `chunks` with `pause` between them (optionally half-closing after), reads to EOF.
    Returns (what came back, seconds from connect to EOF)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    start = time.monotonic()
    try:
        for i, c in enumerate(chunks):
            if i:
                time.sleep(pause)
            s.sendall(c)
        if shut:
            s.shutdown(socket.SHUT_WR)
        got = b""
        while True:
            try:
                d = s.recv(65536)
            except ConnectionResetError:
                break
            if not d:
                break
            got += d
        return got, time.monotonic() - start
    finally:
        s.close()


def log_line(s, needle: str = " fe ") -> str:
    return wait_until(lambda: next((l for l in s.stdout().splitlines() if needle in l), None), 5,
                      message=lambda: f"log line with {needle!r}\n{s.describe()}")


def timers(line: str) -> list[int]:
    """Tw/Tc/Tt of a tcplog line."""
    return [int(x) for x in line.split()[4].split("/")]


@pytest.fixture
def stats(short_tmp):
    return str(short_tmp / "stats.sock")


def test_routes_by_sni_and_forwards_the_hello_unchanged(cfg, sluice, backends, stats):
    port = free_port()
    s = sluice(cfg(config(stats, SNI_FRONTEND.format(port=port), backends)), wait_ports=[port])
    cases = [("a.example.com", "a"), ("A.Example.COM", "a"), ("x.b.example.com", "b"),
             ("b.example.com", "dflt"), (None, "dflt")]
    for name, expect in cases:
        hello = client_hello(name)
        # In three pieces: the record header alone, most of the hello, the rest: the rules
        # must wait for the whole handshake message before judging.
        got, _ = send(port, [hello[:3], hello[3:200], hello[200:]], pause=0.05, shut=True)
        assert got == expect.encode(), (name, got)
        assert backends[expect].results[-1] == hello, name
    assert [len(backends[n].results) for n in ("a", "b", "dflt")] == [2, 1, 2]
    wait_until(lambda: s.stdout().count(" fe ") == len(cases), 5, message=s.describe)
    lines = [l for l in s.stdout().splitlines() if " fe " in l]
    assert [l.split()[4 - 1] for l in lines] == ["be_a/s", "be_a/s", "be_b/s", "be_dflt/s",
                                                 "be_dflt/s"], lines
    # Tw: the time spent waiting for the rest of the hello (two pauses of 50 ms).
    assert all(timers(l)[0] >= 80 for l in lines), lines
    fe = stat_row(parse_show_stat(cli(stats, "show stat"))[1], "fe", "FRONTEND")
    assert stat_int(fe, "bin") == sum(len(r) for b in backends.values() for r in b.results)


def test_openssl_s_client_is_routed_by_servername(cfg, sluice, backends, stats):
    port = free_port()
    sluice(cfg(config(stats, SNI_FRONTEND.format(port=port), backends)), wait_ports=[port])
    for name, expect in [("a.example.com", "a"), ("www.b.example.com", "b")]:
        # The backend answers plain text: s_client fails the handshake and exits.
        subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{port}", "-servername",
                        name], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=10 * slow_factor())
        got = wait_until(lambda: backends[expect].results and backends[expect].results[-1], 5,
                         message=f"the hello at backend {expect}")
        assert got[:1] == b"\x16" and name.encode() in got
    assert not backends["dflt"].results


def test_non_tls_rejected_at_once(cfg, sluice, backends, stats):
    port = free_port()
    fe = REJECT_NON_TLS.format(port=port, delay="5s")
    s = sluice(cfg(config(stats, fe, backends)), wait_ports=[port])
    got, took = send(port, [b"GET / HTTP/1.0\r\n\r\n"])
    assert got == b""
    assert took < 2    # not after the 5 s inspect-delay: not TLS is known from the first byte
    line = log_line(s)
    assert " fe fe/<NOSRV> -1/-1/" in line and " 0 PR " in line, line
    assert stat_int(stat_row(parse_show_stat(cli(stats, "show stat"))[1], "fe", "FRONTEND"),
                    "dreq") == 1
    assert sum(b.connections for b in backends.values()) == 0
    # A TLS client still passes.
    hello = client_hello("a.example.com")
    assert send(port, [hello], shut=True)[0] == b"dflt"
    assert backends["dflt"].results == [hello]


def test_inspect_delay_expiry_goes_to_the_default_backend(cfg, sluice, backends, stats):
    port = free_port()
    fe = SNI_FRONTEND.format(port=port).replace("5s", "300ms")
    s = sluice(cfg(config(stats, fe, backends)), wait_ports=[port])
    got, took = send(port, [], timeout=5)   # says nothing; the backend closes after 0.5 s quiet
    assert got == b"dflt"
    assert took >= 0.3
    line = log_line(s)
    assert " fe be_dflt/s " in line and " -- " in line, line
    tw, tc, tt = timers(line)
    assert 280 <= tw < 2000 * slow_factor(), line
    assert tc >= 0 and tt >= tw, line


def test_inspect_delay_expiry_rejects_when_the_rules_say_so(cfg, sluice, backends, stats):
    port = free_port()
    fe = REJECT_NON_TLS.format(port=port, delay="300ms")
    s = sluice(cfg(config(stats, fe, backends)), wait_ports=[port])
    got, took = send(port, [b"\x16\x03\x01"])   # a hello that never completes
    # The delay counts from the worker's loop clock at accept, in whole milliseconds, and the
    # timer fires on the wheel's tick: a run measured 297.9 ms from the client's side.
    assert got == b"" and 0.28 <= took < 3 * slow_factor()
    line = log_line(s)
    assert " fe fe/<NOSRV> -1/-1/" in line and " PR " in line, line
    assert timers(line)[2] >= 290, line


def test_client_closing_during_inspection_still_reaches_its_backend(cfg, sluice, backends, stats):
    port = free_port()
    s = sluice(cfg(config(stats, SNI_FRONTEND.format(port=port), backends)), wait_ports=[port])
    got, took = send(port, [b"\x16\x03\x01\x00"], shut=True)
    assert got == b"dflt" and took < 4    # judged on the FIN, not after the 5 s delay
    assert backends["dflt"].results == [b"\x16\x03\x01\x00"]
    line = log_line(s)
    assert " fe be_dflt/s " in line and " -- " in line, line


def test_timeout_client_while_inspecting(cfg, sluice, backends, stats):
    port = free_port()
    fe = SNI_FRONTEND.format(port=port) + "    timeout client 200ms\n"
    s = sluice(cfg(config(stats, fe, backends)), wait_ports=[port])
    got, took = send(port, [])
    assert got == b"" and took < 3
    line = log_line(s)
    # As HAProxy 2.6: judged, routed to the default backend, closed there without a server.
    assert " fe be_dflt/<NOSRV> -1/-1/" in line and " cR " in line, line
    assert sum(b.connections for b in backends.values()) == 0


def test_client_reset_while_inspecting(cfg, sluice, backends, stats):
    port = free_port()
    s = sluice(cfg(config(stats, SNI_FRONTEND.format(port=port), backends)), wait_ports=[port])
    c = socket.create_connection(("127.0.0.1", port), timeout=5)
    c.sendall(b"\x16\x03\x01")
    time.sleep(0.1)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.close()   # a reset
    line = log_line(s)
    # As HAProxy 2.6: judged on what came, routed, closed at the backend without a server.
    assert " fe be_dflt/<NOSRV> -1/-1/" in line and " CR " in line, line
    assert sum(b.connections for b in backends.values()) == 0


def test_req_len_waits_for_enough_bytes(cfg, sluice, backends, stats):
    port = free_port()
    fe = f"""
    bind 127.0.0.1:{port}
    tcp-request inspect-delay 2s
    tcp-request content accept if {{ req.len ge 10 }}
    tcp-request content reject
"""
    s = sluice(cfg(config(stats, fe, backends)), wait_ports=[port])
    got, took = send(port, [b"12345", b"6789012"], pause=0.2, shut=True)
    assert got == b"dflt" and took < 1.8
    assert backends["dflt"].results == [b"123456789012"]
    got, took = send(port, [b"12345"])
    assert got == b"" and took >= 1.9
    wait_until(lambda: " PR " in s.stdout(), 5, message=s.describe)
    assert backends["dflt"].connections == 1


def test_without_inspect_delay_the_rules_judge_at_once(cfg, sluice, backends, stats):
    port = free_port()
    fe = SNI_FRONTEND.format(port=port).replace("    tcp-request inspect-delay 5s\n", "")
    s = sluice(cfg(config(stats, fe, backends)), wait_ports=[port])
    c = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        # Nothing sent: nothing to wait for, the default backend gets the connection now.
        wait_until(lambda: backends["dflt"].connections == 1, 2,
                   message=lambda: f"the connection at the default backend\n{s.describe()}")
    finally:
        c.close()


def test_use_backend_on_first_bytes_without_content_rules(cfg, sluice, backends, stats):
    """No content rule reading the bytes: use_backend judges what has arrived when the session
    starts (the fast path); a client whose hello is there by then is routed by its name."""
    port = free_port()
    fe = f"""
    bind 127.0.0.1:{port}
    use_backend be_a if {{ req.len gt 0 }}
"""
    sluice(cfg(config(stats, fe, backends)), wait_ports=[port])
    assert send(port, [], timeout=5)[0] == b"dflt"


@pytest.mark.parametrize("where, mode, rc_want", [("tcp-request connection reject if", "tcp", 0),
                                                  ("tcp-request content reject if", "http", 1),
                                                  ("use_backend be_a if", "http", 1)])
def test_payload_fetches_refused_where_they_cannot_work(tmp_path, where, mode, rc_want):
    """Before the client's bytes are read (a connection rule), HAProxy warns that the ACL will
    never match; an HTTP frontend's rules never see the raw bytes, which sluice refuses."""
    path = write_config(tmp_path, f"""
        defaults
            mode {mode}
            timeout client 1s
            timeout server 1s
            timeout connect 1s
        frontend fe
            bind 127.0.0.1:{free_port()}
            {where} {{ req_ssl_sni -i a.example.com }}
            default_backend be_a
        backend be_a
            server s 127.0.0.1:1
        """)
    rc, _, err = run_sluice(["-c", "-f", str(path)])
    assert rc == rc_want, err
    line = line_of(path, "req_ssl_sni")
    assert f"[{path}:{line}]" in err and "req_ssl_sni" in err, err
    if rc_want == 0:
        assert "[WARNING]" in err and "will never match in 'tcp-request connection'" in err, err


def hello_parts(hello: bytes) -> dict[str, str]:
    """What req.ssl_* read from a ClientHello, computed here independently of sluice (hex
    upper-case, as the hex converter writes it; "-" for no value)."""
    body = hello[9:]                       # record header (5) and handshake header (4)
    at = 2 + 32
    at += 1 + body[at]                     # session id
    n = struct.unpack("!H", body[at:at + 2])[0]
    suites = body[at + 2:at + 2 + n]
    at += 2 + n
    at += 1 + body[at]                     # compression methods
    end = at + 2 + struct.unpack("!H", body[at:at + 2])[0]
    at += 2
    exts = {}
    while at < end:
        t, n = struct.unpack("!HH", body[at:at + 4])
        exts.setdefault(t, body[at + 4:at + 4 + n])
        at += 4 + n
    shares, ks = exts.get(51), b""
    if shares:
        i = 2
        while i < len(shares):
            group, n = struct.unpack("!HH", shares[i:i + 4])
            ks += struct.pack("!H", group)
            i += 4 + n
    lst = lambda t: exts[t][2:].hex().upper() if t in exts else "-"
    return {"cl": suites.hex().upper(), "sa": lst(13), "sg": lst(10),
            "ks": ks.hex().upper() or "-", "ec": str(int(10 in exts)),
            "st": "0" if 35 not in exts else ("1" if not exts[35] else "2")}


def test_client_hello_lists(cfg, sluice, backends):
    port = free_port()
    s = sluice(cfg(f"""
global
    log stdout format raw local0
defaults
    mode tcp
    log global
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend fe
    bind 127.0.0.1:{port}
    tcp-request inspect-delay 2s
    tcp-request content set-var(sess.cl) req.ssl_cipherlist,hex
    tcp-request content set-var(sess.sa) req.ssl_sigalgs,hex
    tcp-request content set-var(sess.sg) req.ssl_supported_groups,hex
    tcp-request content set-var(sess.ks) req.ssl_keyshare_groups,hex
    tcp-request content set-var(sess.ec) req.ssl_ec_ext
    tcp-request content set-var(sess.st) req.ssl_st_ext
    tcp-request content accept if {{ req.ssl_hello_type 1 }}
    log-format "cl=%[var(sess.cl)] sa=%[var(sess.sa)] sg=%[var(sess.sg)] ks=%[var(sess.ks)] ec=%[var(sess.ec)] st=%[var(sess.st)]"
    default_backend be
backend be
    server s 127.0.0.1:{backends["dflt"].port}
"""), wait_ports=[port])
    hello = client_hello("a.example.com")
    send(port, [hello[:3], hello[3:]], pause=0.05, shut=True)
    want = hello_parts(hello)
    line = log_line(s, "cl=")
    got = dict(item.split("=", 1) for item in line.split())
    assert got == want, (got, want)

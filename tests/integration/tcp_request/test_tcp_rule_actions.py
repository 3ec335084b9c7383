"""tcp-request session / content and tcp-response content rule actions, run by sluice with real
clients and servers, checked against what HAProxy 3.5 does with the same configuration (its
log lines and what the client receives were compared by hand):

  * session rules run once the connection is accepted: their variables and set-src show in
    the log line (%[var(sess.x)], %ci); a session reject or silent-drop closes the connection
    without a log line;
  * content rules set variables on the client's bytes, reject (PR, the frontend in place of
    the backend), or silent-drop (nothing sent, PR);
  * WAIT_END holds the session until inspect-delay is over; HTTP accepts a complete HTTP/1
    request head and waits for one;
  * tcp-response content rules judge the server's first bytes: close ends the session without
    forwarding them (`--`), reject is PD; with tcp-response inspect-delay, WAIT_END holds the
    response until the delay is over;
  * the rules of a named defaults section run before the proxy's own.
"""
from __future__ import annotations

import socket
import time

import pytest

from sluice_harness import TcpServer, free_port, wait_until


class ReplyServer(TcpServer):
    """Reads what the client sends (until `quiet` seconds without a byte or EOF), records it,
    answers `prefix` + what it got, then waits for the client to close."""

    def __init__(self, prefix: bytes = b"hello:", quiet: float = 0.3):
        self.prefix = prefix
        self.quiet = quiet
        super().__init__(self._serve)

    def _serve(self, conn: socket.socket, _srv) -> None:
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
            conn.sendall(self.prefix + data)
            conn.settimeout(5)
            conn.recv(100)
        except OSError:
            pass


def exchange(port: int, data: bytes, chunks_pause: float = 0.0, split: int = 0,
             timeout: float = 5.0) -> tuple[bytes, str, float]:
    """Sends `data` (in two pieces at `split` when set), half-closes, and reads until EOF, a
    reset or `timeout`. Returns (bytes received, how it ended: eof|reset|timeout, seconds)."""
    start = time.monotonic()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    except ConnectionResetError:   # reset at once (silent-drop), before connect() returned
        return b"", "reset", time.monotonic() - start
    got, end = b"", "eof"
    try:
        try:
            if split:
                s.sendall(data[:split])
                time.sleep(chunks_pause)
                s.sendall(data[split:])
            elif data:
                s.sendall(data)
            s.shutdown(socket.SHUT_WR)
        except OSError:   # reset before we were done
            return got, "reset", time.monotonic() - start
        while True:
            try:
                d = s.recv(65536)
            except ConnectionResetError:
                end = "reset"
                break
            except socket.timeout:
                end = "timeout"
                break
            if not d:
                break
            got += d
    finally:
        s.close()
    return got, end, time.monotonic() - start


def first_reply(port: int, data: bytes) -> bytes:
    """Sends `data` without closing, returns the first bytes received."""
    c = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        c.sendall(data)
        return c.recv(100)
    finally:
        c.close()


def config(frontend: str, backend: str, server_port: int, extra: str = "") -> str:
    return f"""
global
    log stdout format raw local0
defaults
    mode tcp
    log global
    timeout connect 2s
    timeout client 5s
    timeout server 5s
{extra}
frontend fe
    bind 127.0.0.1:{{port}}
    log-format "%ci %ft %b/%s %Tw/%Tc/%Tt %B %ts sa=%[var(sess.a)] tb=%[var(txn.b)] tr=%[var(txn.r)]"
{frontend}
    default_backend be
backend be
{backend}
    server s 127.0.0.1:{server_port}
"""


def start(cfg, sluice, text: str):
    port = free_port()
    s = sluice(cfg(text.replace("{port}", str(port))), wait_ports=[port])
    return s, port


def lines(s, count: int) -> list[str]:
    """The traffic log lines of frontend fe, once there are `count` of them."""
    def get():
        return [l for l in s.stdout().splitlines() if " fe " in l and not l.startswith("Proxy ")]
    wait_until(lambda: len(get()) >= count, 5, message=s.describe)
    return get()


def timers(line: str) -> list[int]:
    return [int(x) for x in line.split()[3].split("/")]


@pytest.fixture
def server(servers):
    return servers.add(ReplyServer())


def test_session_and_content_variables_and_set_src_in_the_log(cfg, sluice, server):
    s, port = start(cfg, sluice, config("""
    tcp-request session set-var(sess.a) str(s1)
    tcp-request session set-src ipv4(10.1.2.3)
    tcp-request inspect-delay 3s
    tcp-request content set-var(txn.b) req.len
    tcp-request content reject if { src 127.0.0.1 }
    tcp-request content accept if { req.len ge 5 }
""", "", server.port))
    got, end, _ = exchange(port, b"hello")
    assert (got, end) == (b"hello:hello", "eof")
    assert server.results == [b"hello"]
    [line] = lines(s, 1)
    # The rule on src sees the rewritten address and does not match.
    assert line.startswith("10.1.2.3 fe be/s "), line
    assert line.endswith(" -- sa=s1 tb=5 tr=-"), line


def test_content_reject_and_silent_drop(cfg, sluice, server):
    s, port = start(cfg, sluice, config("""
    tcp-request inspect-delay 3s
    tcp-request content silent-drop if { req.payload(0,4) -m str drop }
    tcp-request content reject if { req.payload(0,3) -m str rej }
    tcp-request content accept if { req.len ge 4 }
""", "", server.port))
    got, end, _ = exchange(port, b"rej!")
    assert (got, end) == (b"", "eof")
    got, end, _ = exchange(port, b"drop", timeout=2)
    assert got == b"" and end in ("reset", "timeout")   # nothing sent; the reset may not arrive
    assert server.connections == 0
    first, second = lines(s, 2)
    assert " fe fe/<NOSRV> -1/-1/" in first and " 0 PR " in first, first
    assert " fe fe/<NOSRV> -1/-1/" in second and " 0 PR " in second, second


def test_session_reject_and_silent_drop_are_not_logged(cfg, sluice, server):
    s, port = start(cfg, sluice, config("""
    tcp-request session silent-drop if { src_port 1:1023 }
    tcp-request session reject
""", "", server.port))
    got, end, _ = exchange(port, b"x")
    # A FIN; a reset when the client's byte arrives after the close, as with HAProxy.
    assert got == b"" and end in ("eof", "reset")
    time.sleep(0.2)
    assert lines(s, 0) == [] and server.connections == 0
    s2, port2 = start(cfg, sluice, config("    tcp-request session silent-drop\n", "", server.port))
    got, end, _ = exchange(port2, b"x")
    assert (got, end) == (b"", "reset")   # no stream yet: a plain reset, as HAProxy
    time.sleep(0.2)
    assert lines(s2, 0) == []


def test_wait_end_holds_the_session_for_inspect_delay(cfg, sluice, server):
    s, port = start(cfg, sluice, config("""
    tcp-request inspect-delay 500ms
    tcp-request content accept if WAIT_END
""", "", server.port))
    # The client keeps its side open (its FIN would make the bytes final at once).
    assert first_reply(port, b"abc") == b"hello:abc"
    [line] = lines(s, 1)
    assert timers(line)[0] >= 450, line   # Tw: the inspect-delay


def test_http_acl_accepts_a_complete_request_head(cfg, sluice, server):
    s, port = start(cfg, sluice, config("""
    tcp-request inspect-delay 3s
    tcp-request content accept if HTTP
    tcp-request content reject
""", "", server.port))
    req = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"
    got, end, _ = exchange(port, req, chunks_pause=0.2, split=10)
    assert (got, end) == (b"hello:" + req, "eof")
    got, end, took = exchange(port, b"\x16\x03\x01\x00\x05hello")
    assert (got, end) == (b"", "eof") and took < 2.5   # not HTTP: known at once
    # Each session logs when it ends; the first may end after the second began: by content.
    both = lines(s, 2)
    first = next((l for l in both if " fe be/s " in l), None)
    second = next((l for l in both if " fe fe/<NOSRV> " in l), None)
    assert first and timers(first)[0] >= 150, both
    assert second and " PR " in second, both


@pytest.mark.parametrize("reply,want,term", [
    (b"cl", b"", "--"),          # close: the server's bytes are not forwarded
    (b"rj", b"", "PD"),
    (b"ok", b"ok-x", "--"),
])
def test_response_rules(cfg, sluice, servers, reply, want, term):
    srv = servers.add(ReplyServer(prefix=b""))
    s, port = start(cfg, sluice, config("", """
    tcp-response content set-var(txn.r) res.payload(0,2)
    tcp-response content close if { res.payload(0,2) -m str cl }
    tcp-response content reject if { res.payload(0,2) -m str rj }
""", srv.port))
    got, end, _ = exchange(port, reply + b"-x")
    assert (got, end) == (want, "eof")
    [line] = lines(s, 1)
    assert f" {term} " in line and line.endswith(f" tr={reply.decode()}"), line


def test_response_wait_end_holds_the_response(cfg, sluice, server):
    s, port = start(cfg, sluice, config("", """
    tcp-response inspect-delay 400ms
    tcp-response content accept if WAIT_END
""", server.port))
    # The client keeps its side open: the server does not close, and the response waits for
    # the delay (a server's FIN would make the bytes final at once).
    start_t = time.monotonic()
    assert first_reply(port, b"abc") == b"hello:abc"
    assert time.monotonic() - start_t >= 0.35


def test_named_defaults_rules_run_first(cfg, sluice, server):
    text = config("    tcp-request content set-var(txn.b) str(own)\n", "", server.port,
                  extra="")
    text = text.replace("defaults\n", "defaults d\n").replace(
        "frontend fe\n", "    tcp-request content set-var(txn.b) str(fromdefaults)\n"
        "    tcp-request content set-var(sess.a) var(txn.b)\nfrontend fe from d\n").replace(
        "\nbackend be\n", "\ndefaults plain\n    mode tcp\n    timeout connect 2s\n"
        "    timeout client 5s\n    timeout server 5s\nbackend be from plain\n")
    s, port = start(cfg, sluice, text)
    got, _, _ = exchange(port, b"x")
    assert got == b"hello:x"
    [line] = lines(s, 1)
    assert line.endswith(" sa=fromdefaults tb=own tr=-"), line

"""h1-case-adjust: the heads sent to clients (option h1-case-adjust-bogus-client) and to
servers (option h1-case-adjust-bogus-server) spell the listed field names as configured;
everything else keeps the lower-case names HAProxy sends. The configuration checks and the
file's format are HAProxy 3.5's."""
from __future__ import annotations

import socket
import threading

from sluice_harness import HTTP_DEFAULTS, free_port, run_sluice


def raw_server():
    """A server that records the request head it gets and answers with mixed-case names."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    heads: list[bytes] = []

    def serve():
        srv.settimeout(10)
        try:
            while True:
                c, _ = srv.accept()
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = c.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                heads.append(data)
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Mixed-Case: v\r\n"
                          b"Connection: close\r\n\r\nok")
                c.close()
        except OSError:
            pass
    threading.Thread(target=serve, daemon=True).start()
    return srv, heads


def exchange(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Client-Hdr: 1\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := c.recv(4096):
            data += chunk
    return data


def test_case_adjust_on_both_sides(cfg, sluice, tmp_path):
    srv, heads = raw_server()
    names = tmp_path / "names.txt"
    names.write_text("# spellings for old peers\n\n  x-client-hdr   X-CLIENT-Hdr  \n")
    port, plain = free_port(), free_port()
    sluice(cfg(f"""
global
    h1-case-adjust content-length Content-Length
    h1-case-adjust x-mixed-case X-Mixed-CASE
    h1-case-adjust-file {names}
{HTTP_DEFAULTS}
frontend bogus
    bind 127.0.0.1:{port}
    option h1-case-adjust-bogus-client
    default_backend be
frontend plain
    bind 127.0.0.1:{plain}
    default_backend lower
backend be
    option h1-case-adjust-bogus-server
    server s 127.0.0.1:{srv.getsockname()[1]}
backend lower
    server s 127.0.0.1:{srv.getsockname()[1]}
"""), wait_ports=[port, plain])
    try:
        got = exchange(port)
        assert b"\r\nContent-Length: 2\r\n" in got and b"\r\nX-Mixed-CASE: v\r\n" in got, got
        assert b"\r\nconnection: close\r\n" in got, got   # not listed: lower case
        assert b"\r\nX-CLIENT-Hdr: 1\r\n" in heads[-1] and b"\r\nhost: x\r\n" in heads[-1], heads
        got = exchange(plain)
        assert b"\r\ncontent-length: 2\r\n" in got and b"\r\nx-mixed-case: v\r\n" in got, got
        assert b"\r\nx-client-hdr: 1\r\n" in heads[-1], heads   # no option: lower case
    finally:
        srv.close()


def test_case_adjust_configuration_errors(cfg, tmp_path):
    def check(text):
        return run_sluice(["-c", "-f", str(cfg(text, "c.cfg"))])[2]
    assert "<from> and <to> must not differ except the case" in check(
        "global\n    h1-case-adjust content-length Content-Type\n")
    assert "'h1-case-adjust' expects <from> and <to> as argument." in check(
        "global\n    h1-case-adjust content-length\n")
    assert "duplicate entry 'x-a'" in check("global\n    h1-case-adjust x-a X-A\n    h1-case-adjust x-a x-A\n")
    bad = tmp_path / "bad.txt"
    bad.write_text("x-a X-A\nlonely\n")
    assert f"h1-headers-case-adjust-file '{bad}' : expect <to> at line 2." in check(
        f"global\n    h1-case-adjust-file {bad}\n")
    assert "h1-headers-case-adjust-file '/nonexistent/f': failed to open file." in check(
        "global\n    h1-case-adjust-file /nonexistent/f\n")
    assert "h1-case-adjust-bogus-client' ignored because backend 'b' has no frontend capability." in check(
        f"{HTTP_DEFAULTS}\nbackend b\n    option h1-case-adjust-bogus-client\n")

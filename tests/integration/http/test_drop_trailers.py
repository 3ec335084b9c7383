"""option http-drop-request-trailers (backend) and http-drop-response-trailers (frontend): the
trailer fields of chunked messages are not forwarded, the body and its end are; without the
options they pass (lower-cased, like head fields)."""
from __future__ import annotations

import socket
import threading

from sluice_harness import HTTP_DEFAULTS, free_port

REQUEST = (b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
           b"5\r\nhello\r\n0\r\nX-Req-Trailer: r\r\n\r\n")
RESPONSE = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            b"2\r\nok\r\n0\r\nX-Res-Trailer: s\r\n\r\n")


def chunked_server():
    """Answers each request with RESPONSE once the request's last chunk arrived; keeps what
    it received."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    got: list[bytes] = []

    def serve():
        srv.settimeout(10)
        try:
            while True:
                c, _ = srv.accept()
                with c:
                    data = b""
                    while not data.endswith(b"\r\n\r\n") or b"\r\n0\r\n" not in data:
                        chunk = c.recv(4096)
                        if not chunk:
                            break
                        data += chunk
                    got.append(data)
                    c.sendall(RESPONSE)
        except OSError:
            pass
    threading.Thread(target=serve, daemon=True).start()
    return srv, got


def exchange(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(REQUEST)
        data = b""
        while chunk := c.recv(4096):
            data += chunk
    return data


def test_trailers_pass_or_are_dropped(cfg, sluice):
    srv, got = chunked_server()
    keep, drop = free_port(), free_port()
    sluice(cfg(f"""
{HTTP_DEFAULTS}
frontend keep
    bind 127.0.0.1:{keep}
    default_backend plain
frontend drop
    bind 127.0.0.1:{drop}
    option http-drop-response-trailers
    default_backend dropping
backend plain
    server s 127.0.0.1:{srv.getsockname()[1]}
backend dropping
    option http-drop-request-trailers
    server s 127.0.0.1:{srv.getsockname()[1]}
"""), wait_ports=[keep, drop])
    try:
        answer = exchange(keep)
        assert got[-1].endswith(b"5\r\nhello\r\n0\r\nx-req-trailer: r\r\n\r\n"), got[-1]
        assert answer.endswith(b"2\r\nok\r\n0\r\nx-res-trailer: s\r\n\r\n"), answer
        answer = exchange(drop)
        assert got[-1].endswith(b"5\r\nhello\r\n0\r\n\r\n"), got[-1]
        assert answer.endswith(b"2\r\nok\r\n0\r\n\r\n"), answer
    finally:
        srv.close()


def test_pretend_keepalive_hides_the_close_from_the_server(cfg, sluice):
    heads: list[bytes] = []
    closed: list[bool] = []
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()

    def one(c: socket.socket) -> None:
        with c:
            data = b""
            while b"\r\n\r\n" not in data:
                data += c.recv(4096)
            heads.append(data.lower())
            c.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
            c.settimeout(5)
            try:
                closed.append(c.recv(10) == b"")   # sluice closes its side after it
            except ConnectionResetError:
                closed.append(True)                # (a reset is a close too)
            except OSError:
                closed.append(False)               # still open after 5 s

    def serve():
        srv.settimeout(10)
        try:
            while True:
                c, _ = srv.accept()
                threading.Thread(target=one, args=(c,), daemon=True).start()
        except OSError:
            pass
    threading.Thread(target=serve, daemon=True).start()
    plain, pretend = free_port(), free_port()
    sluice(cfg(f"""
{HTTP_DEFAULTS}
frontend plain
    bind 127.0.0.1:{plain}
    option http-server-close
    default_backend be
frontend pretend
    bind 127.0.0.1:{pretend}
    option http-server-close
    option http-pretend-keepalive
    default_backend be
backend be
    server s 127.0.0.1:{srv.getsockname()[1]}
"""), wait_ports=[plain, pretend])
    try:
        for port, version in ((plain, b"1.1"), (pretend, b"1.1"), (pretend, b"1.0")):
            with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
                c.sendall(b"GET / HTTP/" + version + b"\r\nHost: x\r\n\r\n")
                assert c.recv(4096).startswith(b"HTTP/1.1 200")
        assert b"\r\nconnection: close\r\n" in heads[0], heads[0]
        assert b"connection:" not in heads[1], heads[1]
        assert b"\r\nconnection: keep-alive\r\n" in heads[2], heads[2]
        # The server connection is closed after each response all the same.
        from sluice_harness import wait_until
        wait_until(lambda: len(closed) == 3, 5, message="three server connections closed")
        assert closed == [True, True, True], closed
    finally:
        srv.close()

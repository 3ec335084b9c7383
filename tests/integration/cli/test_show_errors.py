"""`show errors` (spec cli-and-stats.md 5): the last invalid request of each frontend and the
last invalid response of each backend, whichever thread saw them, with a printable dump."""
import re

from cli_util import start_with_admin_socket
from sluice_harness import cli, connect, free_port, local_listener, recv_all

HEADER = re.compile(r"^Total events captured on \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d\.\d{3}\] : (\d+)$")


def start(cfg, sluice, short_tmp, server_port, extra=""):
    port = free_port()
    _, sock = start_with_admin_socket(cfg, sluice, short_tmp, extra_global="    nbthread 2", body=f"""
frontend fe
    mode http
    bind 127.0.0.1:{port}
    {extra}
    default_backend be

backend be
    mode http
    server s1 127.0.0.1:{server_port}
""")
    return port, sock


def test_invalid_request_and_response(cfg, sluice, short_tmp):
    srv = local_listener()
    port, sock = start(cfg, sluice, short_tmp, srv.getsockname()[1])
    assert cli(sock, "show errors").startswith("Total events captured on [")
    assert HEADER.match(cli(sock, "show errors").split("\n")[0]).group(1) == "0"

    with connect(port) as c:
        c.sendall(b"GET /a b HTTP/1.1\r\nHost: x\r\n\r\n")
        assert recv_all(c).startswith(b"HTTP/1.1 400 ")
    with connect(port) as c:
        c.sendall(b"GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
        conn, _ = srv.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n")
            c.settimeout(5)
            assert c.recv(13) == b"HTTP/1.1 502 "
    srv.close()

    text = cli(sock, "show errors")
    lines = text.split("\n")
    assert HEADER.match(lines[0]).group(1) == "2", text
    assert lines[1] == " "
    assert re.match(r"^\[[^]]+\] frontend fe \(#\d+\): invalid request$", lines[2]), text
    assert re.match(r"^  backend <NONE> \(#-1\), server <NONE> \(#-1\), event #0, "
                    r"src 127\.0\.0\.1:\d+$", lines[3]), text
    assert lines[4] == "  len 30, invalid HTTP version :"
    assert lines[5:9] == ["  ", "  00000  GET /a b HTTP/1.1\\r\\n", "  00019  Host: x\\r\\n",
                          "  00028  \\r\\n"], text
    assert lines[9] == " "
    assert re.match(r"^\[[^]]+\] backend be \(#\d+\): invalid response$", lines[10]), text
    assert re.match(r"^  frontend fe \(#\d+\), server s1 \(#1\), event #1, ", lines[11]), text
    assert lines[14] == "  00000  HTTP/1.1 2000 OK\\r\\n"
    assert text.endswith("\n\n") and "\n\n" not in text[:-2]

    only_res = cli(sock, "show errors be response")
    assert "invalid response" in only_res and "invalid request" not in only_res
    only_req = cli(sock, "show errors -1 request")
    assert "invalid request" in only_req and "invalid response" not in only_req
    assert "invalid" not in cli(sock, "show errors fe response")
    assert cli(sock, "show errors nope") == "No such proxy.\n\n"


def test_relaxed_request_is_still_recorded(cfg, sluice, short_tmp):
    """What accept-unsafe-violations-in-http-request lets through is recorded all the same, as
    HAProxy does."""
    srv = local_listener()
    port, sock = start(cfg, sluice, short_tmp, srv.getsockname()[1],
                       extra="option accept-unsafe-violations-in-http-request")
    with connect(port) as c:
        c.sendall(b"GET /caf\xc3\xa9 HTTP/1.1\r\nHost: x\r\n\r\n")
        conn, _ = srv.accept()
        with conn:
            assert conn.recv(65536).startswith(b"GET /caf\xc3\xa9 ")
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
            c.settimeout(5)
            assert c.recv(15) == b"HTTP/1.1 200 OK"
    srv.close()
    text = cli(sock, "show errors fe")
    assert "invalid request" in text and "  00000  GET /caf\\xc3\\xa9 HTTP/1.1\\r\\n" in text, text

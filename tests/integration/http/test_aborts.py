"""Transactions that end badly in the middle (http1.md 6.3, 6.4; cli-and-stats.md counters):
what the client receives, the log line's termination state, and what `show stat` counts. As in
HAProxy, a server that closes or resets in the data phase is one server abort (srv_abrt) and one
response error (eresp, which includes those aborts); a server timeout in the data phase (sD) is
an abort only; a timeout is blamed on the side sluice was waiting for."""
import socket

from sluice_harness import (TcpServer, cli, free_port, parse_show_stat, recv_head, stat_int, stat_row,
                            wait_until)
from hutil import Conn, preamble

COUNTERS = ("srv_abrt", "eresp", "cli_abrt")


def _config(port, server_port, log_port, sock, timeouts=""):
    return preamble(glob=f"log 127.0.0.1:{log_port} format raw local0\n"
                         f"stats socket {sock} level admin",
                    defaults="log global\noption httplog", timeouts=timeouts) + f"""frontend fe
    bind 127.0.0.1:{port}
    default_backend be
backend be
    server s1 127.0.0.1:{server_port}
"""


def _start(sluice, cfg, udp_log, short_tmp, server_port, timeouts=""):
    port, sock = free_port(), short_tmp / "s.sock"
    sluice(cfg(_config(port, server_port, udp_log.port, sock, timeouts)), wait_ports=[port],
           wait_unix=[sock])
    return port, sock


def _counters(sock):
    rows = parse_show_stat(cli(str(sock), "show stat"))[1]
    return tuple({k: stat_int(stat_row(rows, "be", sv), k) for k in COUNTERS}
                 for sv in ("BACKEND", "s1"))


def _expect_counters(sock, **want):
    full = {k: 0 for k in COUNTERS} | want
    wait_until(lambda: _counters(sock) == (full, full),
               message=lambda: f"backend and server counters {full}, have {_counters(sock)}")


def _log_tail(udp_log, needle):
    """The line's `status bytes - - tsc` fields."""
    line = udp_log.wait_for(lambda m: needle in m).rstrip("\n")
    fields = line.split()
    i = fields.index("-")   # %CC
    return fields[i - 2], fields[i + 2], line


def test_server_close_mid_body_is_one_abort_and_one_response_error(cfg, sluice, origin, udp_log,
                                                                   short_tmp):
    port, sock = _start(sluice, cfg, udp_log, short_tmp, origin.port)
    origin.script("/cut", b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc", close=True)
    with Conn(port) as c:
        c.send(b"GET /cut HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.read_to_eof() == b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nabc"
    status, tsc, line = _log_tail(udp_log, "/cut")
    assert (status, tsc) == ("200", "SD--"), line
    _expect_counters(sock, srv_abrt=1, eresp=1)


def test_server_close_mid_chunk_is_one_abort_and_one_response_error(cfg, sluice, origin,
                                                                    udp_log, short_tmp):
    port, sock = _start(sluice, cfg, udp_log, short_tmp, origin.port)
    origin.script("/cutchunk", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                               b"3\r\nabc\r\n10\r\nabc", close=True)
    with Conn(port) as c:
        c.send(b"GET /cutchunk HTTP/1.1\r\nHost: a\r\n\r\n")
        got = c.read_to_eof()
    # What arrived is delivered (chunk boundaries may differ), never a last chunk.
    head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
    assert got.startswith(head + b"3\r\nabc\r\n") and b"\r\n0\r\n" not in got, got
    status, tsc, line = _log_tail(udp_log, "/cutchunk")
    assert (status, tsc) == ("200", "SD--"), line
    _expect_counters(sock, srv_abrt=1, eresp=1)


def test_server_timeout_mid_body_is_an_abort_only(cfg, sluice, short_tmp, udp_log):
    def stall(conn, _srv):
        recv_head(conn)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc")
        conn.recv(1)   # until sluice gives up on it
    with TcpServer(stall) as srv:
        port, sock = _start(sluice, cfg, udp_log, short_tmp, srv.port,
                            "timeout connect 2s\ntimeout client 5s\ntimeout server 300ms")
        with Conn(port) as c:
            c.send(b"GET /stall HTTP/1.1\r\nHost: a\r\n\r\n")
            assert c.read_to_eof().endswith(b"\r\n\r\nabc")
        status, tsc, line = _log_tail(udp_log, "/stall")
        assert (status, tsc) == ("200", "sD--"), line
        _expect_counters(sock, srv_abrt=1)


def test_reset_in_body_without_length_is_a_server_abort(cfg, sluice, origin, udp_log, short_tmp):
    # The body runs to the server's close: a FIN ends it normally, a RST may have cut it. The
    # client still gets every byte that arrived, then the close; the log and counters say SD.
    port, sock = _start(sluice, cfg, udp_log, short_tmp, origin.port)
    origin.script("/rst", b"HTTP/1.1 200 OK\r\n\r\nbody until the close", reset=True)
    with Conn(port) as c:
        c.send(b"GET /rst HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.read_to_eof() == (b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n"
                                   b"body until the close")
    status, tsc, line = _log_tail(udp_log, "/rst")
    assert (status, tsc) == ("200", "SD--"), line
    _expect_counters(sock, srv_abrt=1, eresp=1)


def test_fin_in_body_without_length_is_a_normal_end(cfg, sluice, origin, udp_log, short_tmp):
    port, sock = _start(sluice, cfg, udp_log, short_tmp, origin.port)
    origin.script("/fin", b"HTTP/1.1 200 OK\r\n\r\nbody until the close", close=True)
    with Conn(port) as c:
        c.send(b"GET /fin HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.read_to_eof().endswith(b"\r\n\r\nbody until the close")
    status, tsc, line = _log_tail(udp_log, "/fin")
    assert (status, tsc) == ("200", "----"), line
    _expect_counters(sock)


def test_server_answering_early_then_closing_during_upload(cfg, sluice, short_tmp, udp_log):
    # The server rejects an upload without reading it and closes: the client gets the answer,
    # and the upload it was still sending makes the transaction a server abort.
    def early(conn, _srv):
        recv_head(conn)
        conn.sendall(b"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 3\r\n"
                     b"Connection: close\r\n\r\nbig")
        conn.shutdown(socket.SHUT_WR)
        conn.recv(1)   # sluice's next body bytes; the close that follows resets them
    with TcpServer(early) as srv:
        port, sock = _start(sluice, cfg, udp_log, short_tmp, srv.port)
        with Conn(port) as c:
            c.send(b"POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: 10000000\r\n\r\n")
            r = c.response()
            assert (r.status, r.body) == (413, b"big"), r
            try:
                for _ in range(500):
                    c.send(b"x" * 10000)
            except OSError:
                pass   # sluice closed the connection once the server was gone
        status, tsc, line = _log_tail(udp_log, "/up")
        assert (status, tsc) == ("413", "SD--"), line
        _expect_counters(sock, srv_abrt=1, eresp=1)


def _classes(sock):
    rows = parse_show_stat(cli(str(sock), "show stat"))[1]
    names = ("hrsp_1xx", "hrsp_2xx", "hrsp_5xx", "hrsp_other")
    return {(px, sv): tuple(stat_int(stat_row(rows, px, sv), k) for k in names)
            for px, sv in (("fe", "FRONTEND"), ("be", "BACKEND"), ("be", "s1"))}


def test_status_classes_count_what_each_side_sent(cfg, sluice, origin, udp_log, short_tmp):
    # Frontend and backend count the status the client got; the server's row counts the
    # response heads the server sent, interim ones included (HAProxy's http_wait_for_response),
    # and never a page sluice generated for it.
    port, sock = _start(sluice, cfg, udp_log, short_tmp, origin.port)
    with Conn(port) as c:
        c.send(b"POST /continue HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n"
               b"Content-Length: 3\r\n\r\nabc")
        assert c.response().status == 100
        assert c.response().status == 200
    with Conn(port) as c:
        c.send(b"GET /close HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.response().status == 502
    #               1xx 2xx 5xx other
    want = {("fe", "FRONTEND"): (0, 1, 1, 0),
            ("be", "BACKEND"): (0, 1, 1, 0),
            ("be", "s1"): (1, 1, 0, 0)}
    wait_until(lambda: _classes(sock) == want,
               message=lambda: f"status classes {want}, have {_classes(sock)}")


def test_slow_reading_client_is_a_client_timeout(cfg, sluice, origin, udp_log, short_tmp):
    # sluice stops reading the server while the client does not take the response: the server
    # is not idle by its own doing, so `timeout server` (shorter here) must not fire; the
    # client's timeout does, and the abort is the client's.
    port, sock = _start(sluice, cfg, udp_log, short_tmp, origin.port,
                        "timeout connect 2s\ntimeout client 1s\ntimeout server 300ms")
    c = socket.create_connection(("127.0.0.1", port))
    try:
        c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        c.sendall(b"GET /big?n=50000000 HTTP/1.1\r\nHost: a\r\n\r\n")
        status, tsc, line = _log_tail(udp_log, "/big")   # nothing read meanwhile
    finally:
        c.close()
    assert (status, tsc) == ("200", "cD--"), line
    _expect_counters(sock, cli_abrt=1)

"""Server maxconn with the backend queue: a session that finds every server full waits (qcur),
is served as soon as a slot frees, and is closed when `timeout queue` expires."""
import socket
import time

from sluice_harness import (DEFAULTS, EchoServer, cli, connect, free_port, show_stat, stat_row,
                            wait_closed, wait_until)


def conf(port, sock, echo_port, queue_timeout):
    return f"""
global
    nbthread 2
    stats socket {sock} level admin
{DEFAULTS}
listen px
    bind 127.0.0.1:{port}
    timeout queue {queue_timeout}
    server s1 127.0.0.1:{echo_port} maxconn 1
"""


def backend_row(sock):
    return stat_row(show_stat(str(sock)), "px", "BACKEND")


def test_queued_session_is_served_when_a_slot_frees(cfg, sluice, short_tmp):
    with EchoServer() as echo:
        port, sock = free_port(), short_tmp / "s.sock"
        sluice(cfg(conf(port, sock, echo.port, "5s")), wait_ports=[port], wait_unix=[sock])
        first, second = queue_one(port, sock)
        second.settimeout(0.3)
        try:
            second.recv(1)
            raise AssertionError("the queued session must not reach the full server")
        except socket.timeout:
            pass
        assert echo.connections == 1
        first.close()
        second.settimeout(5)
        assert second.recv(1) == b"2"
        row = backend_row(sock)
        assert row["qcur"] == "0" and row["qmax"] == "1", row
        second.close()


def test_timeout_queue_closes_the_waiting_client(cfg, sluice, short_tmp):
    with EchoServer() as echo:
        port, sock = free_port(), short_tmp / "s.sock"
        sluice(cfg(conf(port, sock, echo.port, "400ms")), wait_ports=[port], wait_unix=[sock])
        first = connect(port)
        first.sendall(b"1")
        assert first.recv(1) == b"1"
        second = connect(port)
        t0 = time.monotonic()
        closed = wait_closed(second, timeout=5)
        assert 0.3 <= closed - t0 < 3, closed - t0
        assert echo.connections == 1
        assert backend_row(sock)["qcur"] == "0"
        first.close()


def queue_one(port, sock):
    """A first session holding s1's only slot, and a second one waiting in the queue."""
    first = connect(port)
    first.sendall(b"1")
    assert first.recv(1) == b"1"
    second = connect(port)
    second.sendall(b"2")
    wait_until(lambda: backend_row(sock)["qcur"] == "1", 5, message="second session queued")
    return first, second


def test_raised_server_maxconn_serves_the_queue_at_once(cfg, sluice, short_tmp):
    # HAProxy dequeues when `set maxconn server` raises the limit; the first session stays
    # open (and `timeout queue` is long), so only the new limit can let the second one in.
    with EchoServer() as echo:
        port, sock = free_port(), short_tmp / "s.sock"
        sluice(cfg(conf(port, sock, echo.port, "30s")), wait_ports=[port], wait_unix=[sock])
        first, second = queue_one(port, sock)
        assert cli(str(sock), "set maxconn server px/s1 2") == "\n"
        second.settimeout(10)
        assert second.recv(1) == b"2"
        assert backend_row(sock)["qcur"] == "0"
        first.close()
        second.close()


def test_server_leaving_maintenance_serves_the_queue(cfg, sluice, short_tmp):
    # A server that becomes usable takes the waiting sessions (HAProxy's process_srv_queue on
    # a server coming up), whatever thread made the change.
    with EchoServer() as echo, EchoServer() as spare:
        port, sock = free_port(), short_tmp / "s.sock"
        text = conf(port, sock, echo.port, "30s") + \
            f"    server s2 127.0.0.1:{spare.port} maxconn 1 disabled\n"
        sluice(cfg(text), wait_ports=[port], wait_unix=[sock])
        first, second = queue_one(port, sock)
        assert cli(str(sock), "set server px/s2 state ready") == "\n"
        second.settimeout(10)
        assert second.recv(1) == b"2"
        assert spare.connections == 1
        first.close()
        second.close()

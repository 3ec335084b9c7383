"""SIGUSR1 in HTTP mode: idle keep-alive connections close at once, a request in flight gets its
response (with connection: close) and then its connection closes, and the process exits."""
import signal

from sluice_harness import free_port, wait_until
from hutil import Conn, config


def test_soft_stop_closes_idle_and_finishes_busy(cfg, sluice, origin):
    port = free_port()
    s = sluice(cfg(config(port, origin.port)), wait_ports=[port])
    with Conn(port) as idle, Conn(port) as busy:
        idle.send(b"GET /first HTTP/1.1\r\nHost: a\r\n\r\n")
        assert idle.response().status == 200
        busy.send(b"GET /slow?ms=500 HTTP/1.1\r\nHost: a\r\n\r\n")
        wait_until(lambda: "/slow" in origin.paths(), 5, message="the slow request at the origin")
        s.signal(signal.SIGUSR1)
        assert idle.closed_within(2), "an idle keep-alive connection closes at soft stop"
        r = busy.response()
        assert r.status == 200, r
        assert r.header_all("connection") == ["close"], r
        assert busy.closed_within(2), "the busy connection closes after its response"
    assert s.wait_exit(timeout=5) == 0, s.describe()

"""Connection management (http1.md section 3): client keep-alive, pipelining, server connection
reuse (http-reuse), http-server-close / httpclose, timeout http-keep-alive and http-request."""
import signal
import threading
import time

import pytest

from sluice_harness import free_port, time_wait_towards, wait_until
from hutil import Conn, config, conn_is_open, error_page, preamble, wait_conn_closed


def _start(sluice, cfg, origin, **kw):
    port = free_port()
    sluice(cfg(config(port, origin.port, **kw)), wait_ports=[port])
    return port


def _get(c, path="/", extra=b""):
    c.send(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: a\r\n" + extra + b"\r\n")
    return c.response()


def test_client_keep_alive_several_requests(cfg, sluice, origin):
    port = _start(sluice, cfg, origin)
    with Conn(port) as c:
        for i in range(5):
            r = _get(c, f"/k{i}")
            assert r.status == 200 and r.body == b"hello\n", r
            assert r.header("connection") is None, r
        assert c.still_open(0.2)
    reqs = origin.wait_requests(5)
    assert [r.path for r in reqs] == [f"/k{i}" for i in range(5)]
    assert origin.connection_count() == 1, "one server connection for one keep-alive client"


def test_v65_pipelining(cfg, sluice, origin):
    port = _start(sluice, cfg, origin)
    with Conn(port) as c:
        c.send(b"GET /1 HTTP/1.1\r\nHost: a\r\n\r\n"
               b"GET /2 HTTP/1.1\r\nHost: a\r\n\r\n"
               b"GET /3 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
               b"GET /4 HTTP/1.1\r\nHost: a\r\n\r\n")
        rs = [c.response() for _ in range(3)]
        assert [r.header("x-req") for r in rs] == ["1", "2", "3"], rs
        assert all(r.status == 200 and r.body == b"hello\n" for r in rs), rs
        assert rs[2].header_all("connection") == ["close"], rs[2]
        assert c.closed_within(3)
    time.sleep(0.1)
    assert [r.path for r in origin.requests()] == ["/1", "/2", "/3"]


def test_pipelined_posts_with_bodies(cfg, sluice, origin):
    port = _start(sluice, cfg, origin)
    with Conn(port) as c:
        c.send(b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc"
               b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nde\r\n0\r\n\r\n"
               b"GET /echo HTTP/1.1\r\nHost: a\r\n\r\n")
        r1, r2, r3 = c.response(), c.response(), c.response()
    assert r1.body == b"POST /echo HTTP/1.1\r\nhost: a\r\ncontent-length: 3\r\n\r\nabc"
    assert r2.body == (b"POST /echo HTTP/1.1\r\nhost: a\r\ntransfer-encoding: chunked\r\n\r\n"
                       b"2\r\nde\r\n0\r\n\r\n")
    assert r3.body == b"GET /echo HTTP/1.1\r\nhost: a\r\n\r\n"


# -- http-reuse --------------------------------------------------------------------------------

def test_reuse_safe_default(cfg, sluice, origin):
    # 3.6 (v): the first request of a client connection opens a new server connection; a later
    # one takes an idle connection, here the one left by the first client.
    port = _start(sluice, cfg, origin)
    with Conn(port) as a:
        assert _get(a).status == 200
        assert _get(a).status == 200
    assert origin.connection_count() == 1
    with Conn(port) as b:
        assert _get(b).status == 200
        assert origin.connection_count() == 2, "safe: a first request gets a new connection"
        assert _get(b).status == 200
        assert _get(b).status == 200
    assert origin.connection_count() == 2


def test_reuse_always_first_request_takes_idle(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, be="http-reuse always")
    with Conn(port) as a:
        assert _get(a).status == 200
    time.sleep(0.1)
    with Conn(port) as b:
        r = _get(b)
        assert r.status == 200
        assert r.header("x-conn") == "1" and r.header("x-req") == "2", r
    assert origin.connection_count() == 1


def test_reuse_safe_first_request_does_not_take_idle(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, be="http-reuse safe")
    with Conn(port) as a:
        assert _get(a).status == 200
    time.sleep(0.1)
    with Conn(port) as b:
        assert _get(b).header("x-conn") == "2"
    assert origin.connection_count() == 2


@pytest.mark.parametrize("mode,first_of_b", [("aggressive", "1"), ("safe", "2")])
def test_reuse_first_request_and_safe_connections(cfg, sluice, origin, mode, first_of_b):
    # a connection that carried two requests is "safe": aggressive gives it to a client's first
    # request, safe does not (3.6)
    port = _start(sluice, cfg, origin, be=f"http-reuse {mode}")
    with Conn(port) as a:
        assert _get(a).header("x-conn") == "1"
        assert _get(a).header("x-conn") == "1"
    time.sleep(0.1)
    with Conn(port) as b:
        assert _get(b).header("x-conn") == first_of_b


def test_reuse_aggressive_does_not_give_idle_to_first_request(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, be="http-reuse aggressive")
    with Conn(port) as a:
        assert _get(a).header("x-conn") == "1"     # one request: idle, not safe
    time.sleep(0.1)
    with Conn(port) as b:
        assert _get(b).header("x-conn") == "2"


def test_reuse_never_private_connections(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, be="http-reuse never")
    with Conn(port) as a:
        assert _get(a).header("x-conn") == "1"
        assert _get(a).header("x-conn") == "1"
    # the private connection is closed with its client session
    wait_conn_closed(origin, 1)
    with Conn(port) as b:
        r1, r2 = _get(b), _get(b)
        assert (r1.header("x-conn"), r2.header("x-conn")) == ("2", "2")
        with Conn(port) as c:
            assert _get(c).header("x-conn") == "3", "never: no sharing between clients"
    assert origin.connection_count() == 3


# -- connection modes ------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["fe", "be"])
def test_http_server_close(cfg, sluice, origin, where):
    port = _start(sluice, cfg, origin, **{where: "option http-server-close"})
    with Conn(port) as c:
        for i in range(3):
            r = _get(c)
            assert r.status == 200 and r.header("connection") is None, r
        assert c.still_open(0.2), "the client side stays persistent"
    reqs = origin.wait_requests(3)
    for req in reqs:
        assert req.header_all("connection") == ["close"], req.head
    assert origin.connection_count() == 3
    for conn in origin.connections():
        wait_conn_closed(origin, conn.id)


def test_httpclose_in_frontend(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, fe="option httpclose")
    with Conn(port) as c:
        r = _get(c)
        assert r.status == 200 and r.header_all("connection") == ["close"], r
        assert c.closed_within(3)
    req = origin.wait_requests(1)[0]
    assert req.header("connection") is None, req.head     # server side unaffected
    time.sleep(0.1)
    assert conn_is_open(origin, req.conn_id)


def test_httpclose_in_backend(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, be="option httpclose")
    with Conn(port) as c:
        r1, r2 = _get(c), _get(c)
        assert r1.header("connection") is None and r2.status == 200, r1
    reqs = origin.wait_requests(2)
    assert [r.header("connection") for r in reqs] == ["close", "close"]
    assert origin.connection_count() == 2
    wait_conn_closed(origin, 1)
    wait_conn_closed(origin, 2)


def test_httpclose_in_listen_closes_both(cfg, sluice, origin):
    port = free_port()
    sluice(cfg(preamble() + f"""listen app
    bind 127.0.0.1:{port}
    option httpclose
    server s1 127.0.0.1:{origin.port}
"""), wait_ports=[port])
    with Conn(port) as c:
        r = _get(c)
        assert r.status == 200 and r.header_all("connection") == ["close"], r
        assert c.closed_within(3)
    req = origin.wait_requests(1)[0]
    assert req.header_all("connection") == ["close"], req.head
    wait_conn_closed(origin, req.conn_id)


def test_last_connection_option_wins(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, be="option http-server-close\noption http-keep-alive")
    with Conn(port) as c:
        _get(c)
        _get(c)
    assert origin.connection_count() == 1
    assert all(r.header("connection") is None for r in origin.requests())


# -- timeouts ---------------------------------------------------------------------------------

def test_timeout_http_keep_alive_silent_close(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, defaults="timeout http-keep-alive 300ms")
    with Conn(port) as c:
        assert _get(c).status == 200
        # closed silently (no 408), well before timeout client (5 s)
        assert c.closed_within(3.5)


def test_timeout_http_keep_alive_not_applied_inside_request(cfg, sluice, origin):
    # a request that is slowly sent after the first byte is covered by http-request (here
    # unset: timeout client), not by http-keep-alive
    port = _start(sluice, cfg, origin, defaults="timeout http-keep-alive 300ms")
    with Conn(port) as c:
        assert _get(c).status == 200
        c.send(b"GET / HTTP/1.1\r\n")
        time.sleep(0.6)
        c.send(b"Host: a\r\n\r\n")
        assert c.response().status == 200


def test_timeout_http_request_408_on_silent_connection(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, defaults="timeout http-request 300ms")
    with Conn(port) as c:
        assert c.read_to_eof(4) == error_page(408)
    assert origin.connection_count() == 0


def test_timeout_http_request_408_on_partial_request(cfg, sluice, origin):
    port = _start(sluice, cfg, origin, defaults="timeout http-request 300ms")
    with Conn(port) as c:
        c.send(b"GET / HTTP/1.1\r\nHost: a\r\n")
        assert c.read_to_eof(4) == error_page(408)
    assert origin.bytes_received() == 0


def test_timeout_http_request_silent_close_between_requests(cfg, sluice, origin):
    # 3.4: expiry while waiting for a second request with nothing received: silent close
    port = _start(sluice, cfg, origin, defaults="timeout http-request 300ms")
    with Conn(port) as c:
        assert _get(c).status == 200
        assert c.closed_within(3.5)


def test_timeout_http_request_counts_from_end_of_previous_response(cfg, sluice, origin):
    # 3.4: on a keep-alive connection http-request runs from the end of the previous response,
    # not from the next request's first byte
    port = _start(sluice, cfg, origin,
                  defaults="timeout http-request 1s\ntimeout http-keep-alive 5s")
    with Conn(port) as c:
        assert _get(c).status == 200
        t0 = time.monotonic()
        time.sleep(0.7)
        c.send(b"GET /2 HT")
        assert c.read_to_eof(4) == error_page(408)
        elapsed = time.monotonic() - t0
        assert elapsed < 1.5, f"408 after {elapsed:.2f}s: timer started at the first byte"


def test_crlf_while_idle_is_not_a_request(cfg, sluice, origin):
    # 3.4: CR/LF received while idle do not count as a request; keep-alive still expires
    port = _start(sluice, cfg, origin, defaults="timeout http-keep-alive 300ms")
    with Conn(port) as c:
        assert _get(c).status == 200
        c.send(b"\r\n")
        assert c.closed_within(3.5)


def test_http10_keep_alive_client(cfg, sluice, origin):
    # 3.1/3.2: HTTP/1.0 is persistent with Connection: keep-alive, and is told so
    port = _start(sluice, cfg, origin)
    with Conn(port) as c:
        for _ in range(2):
            c.send(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            r = c.response()
            assert r.status == 200 and r.header_all("connection") == ["keep-alive"], r
        assert c.still_open(0.2)
    reqs = origin.wait_requests(2)
    assert [r.head for r in reqs] == [b"GET / HTTP/1.0\r\nconnection: keep-alive\r\n\r\n"] * 2


@pytest.mark.parametrize("reuse", ["safe", "always"])
def test_queued_request_is_served_when_the_server_slot_frees(cfg, sluice, origin, reuse):
    # server maxconn 1: a second request waits in the backend queue while the first holds the
    # slot, then goes out when it is released; with http-reuse always it takes the idle
    # connection the first one left (no event of its own will ever wake it).
    port = _start(sluice, cfg, origin, be=f"http-reuse {reuse}", server="maxconn 1",
                  defaults="timeout queue 5s")
    with Conn(port) as a, Conn(port) as b:
        a.send(b"GET /slow?ms=300 HTTP/1.1\r\nHost: a\r\n\r\n")
        wait_until(lambda: len(origin.requests()) >= 1, 5, message="the first request at the origin")
        b.send(b"GET /second HTTP/1.1\r\nHost: a\r\n\r\n")
        ra = a.response()
        rb = b.response()
        assert ra.status == 200 and rb.status == 200, (ra, rb)
    assert origin.paths() == ["/slow", "/second"], origin.paths()
    if reuse == "always":
        assert origin.connection_count() == 1


# -- closing server connections ----------------------------------------------------------------

def test_idle_server_connections_closed_by_sluice_are_reset(cfg, sluice, origin):
    # sluice closes these first (the origin keeps them alive): a FIN would leave each of sluice's
    # ephemeral ports in TIME_WAIT for a minute; HAProxy resets such connections, and so does
    # sluice. Connections the server closed itself are closed normally (see the next test).
    port = free_port()
    s = sluice(cfg(config(port, origin.port)), wait_ports=[port])
    before = time_wait_towards(origin.port)
    for i in range(3):
        with Conn(port) as c:
            assert _get(c, f"/r{i}").status == 200
    wait_until(lambda: origin.connection_count() == 3, 5, message="three server connections")
    assert len(origin.open_connections()) == 3, "parked in sluice's idle pool"
    s.signal(signal.SIGUSR1)   # soft stop closes the idle pool
    assert s.wait_exit(timeout=5) == 0, s.describe()
    for conn in origin.connections():
        wait_conn_closed(origin, conn.id)
        assert conn.peer_reset, f"connection {conn.id} was closed with a FIN, not a reset"
    assert time_wait_towards(origin.port) == before


def test_server_connection_closed_by_the_server_is_not_reset(cfg, sluice, origin):
    # A close-delimited answer ends with the origin's FIN: sluice then closes normally (it is not
    # the one that would hold a TIME_WAIT).
    origin.script("/eof", b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end", close=True)
    port = _start(sluice, cfg, origin)
    with Conn(port) as c:
        c.send(b"GET /eof HTTP/1.1\r\nHost: a\r\n\r\n")
        r = c.response()
        assert r.status == 200 and r.body == b"until the end", r
    wait_until(lambda: origin.connection_count() == 1, 5, message="one server connection")
    conn = origin.connections()[0]
    wait_conn_closed(origin, conn.id)
    assert not conn.peer_reset


def test_last_response_survives_a_client_that_keeps_sending(cfg, sluice, origin):
    # sluice sends the end of the last response with MSG_MORE so that the FIN rides with it.
    # A client still sending after its "Connection: close" leaves unread input, and close()
    # then resets instead of sending a FIN: the corked response must have left before that
    # (shutdown() first), so the client still reads all of it. The client here sends one byte
    # at a time from another thread for the whole exchange, so bytes keep arriving at any point.
    port = _start(sluice, cfg, origin)
    for i in range(10):
        with Conn(port) as c:
            c.send(b"GET /k HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            stop = threading.Event()

            def trickle():
                while not stop.is_set():
                    try:
                        c.send(b"x")
                    except OSError:
                        return
            t = threading.Thread(target=trickle, daemon=True)
            t.start()
            try:
                got = c.read_to_eof()
            finally:
                stop.set()
                t.join(5)
            assert got.startswith(b"HTTP/1.1 200") and got.endswith(b"\r\n\r\nhello\n"), (i, got)

"""Responses from the origin: framing, normalisation, and the 502 for invalid ones (http1.md
2.6, 3.5 and vectors 75-82)."""
import pytest

from hutil import Conn, conn_is_open, error_page, wait_conn_closed


def _get(c, path, extra=b""):
    c.send(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: a\r\n" + extra + b"\r\n")


def test_names_lower_cased_and_body_forwarded(proxy):
    port, origin = proxy
    with Conn(port) as c:
        _get(c, "/")
        r = c.response()
    assert r.head.startswith(b"HTTP/1.1 200 OK\r\n"), r
    assert r.names() == ["content-type", "content-length", "x-conn", "x-req"], r
    assert r.body == b"hello\n"


def test_chunked_response_rechunked_with_trailer(proxy):
    port, origin = proxy
    with Conn(port) as c:
        _get(c, "/chunked?trailer=1")
        r = c.response()
        assert r.status == 200 and r.chunked, r
        assert r.body == b"hello world0123456789"
        assert r.header("content-length") is None
        for line in r.raw_body.split(b"\r\n"):
            assert b";" not in line, r.raw_body   # extensions dropped
        assert b"0005" not in r.raw_body and b"\r\na\r\n" not in r.raw_body, r.raw_body
        # 1.3, 4.3: trailer names are lower-cased like head names
        assert r.trailers == [("x-trailer", "t1")], r.raw_body
        # still persistent
        _get(c, "/")
        assert c.response().status == 200


def test_v75_response_with_te_and_cl(proxy):
    port, origin = proxy
    with Conn(port) as c:
        _get(c, "/tecl")
        r = c.response()
        assert r.status == 200 and r.chunked, r
        assert r.header("content-length") is None, r
        assert r.body == b"hello"
        # client connection stays open, the server connection is not reused
        conn_id = origin.requests()[0].conn_id
        wait_conn_closed(origin, conn_id)
        _get(c, "/")
        assert c.response().status == 200


@pytest.mark.parametrize("name,raw", [
    ("two-cl", b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok"),
    ("nul", b"HTTP/1.1 200 OK\r\nX-A: 1\x002\r\nContent-Length: 2\r\n\r\nok"),
    ("status-2000", b"HTTP/1.1 2000 OK\r\nContent-Length: 2\r\n\r\nok"),
    ("te-gzip", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nok"),
    ("te-gzip-chunked", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
     b"5\r\nGZIP!\r\n0\r\n\r\n"),
    ("te-identity-chunked", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity, chunked\r\n\r\n"
     b"2\r\nok\r\n0\r\n\r\n"),
    ("te-two-fields", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n"
     b"\r\n2\r\nok\r\n0\r\n\r\n"),
    ("bad-name", b"HTTP/1.1 200 OK\r\nX A: 1\r\nContent-Length: 2\r\n\r\nok"),
    ("bad-cl", b"HTTP/1.1 200 OK\r\nContent-Length: 2x\r\n\r\nok"),
    ("101-without-upgrade", b"HTTP/1.1 101 Switching Protocols\r\n\r\n"),
    ("101-fields", b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-F%d: %d\r\n" % (i, i) for i in range(100))
     + b"Content-Length: 2\r\n\r\nok"),
])
def test_v76_invalid_response_is_502_and_client_stays(proxy, name, raw):
    port, origin = proxy
    origin.script(f"/r/{name}", raw, close=True)
    with Conn(port) as c:
        _get(c, f"/r/{name}")
        r = c.response()
        assert r.raw == error_page(502), r
        _get(c, "/")
        assert c.response().status == 200
    assert origin.paths() == [f"/r/{name}", "/"]


@pytest.mark.parametrize("name,body", [
    ("bad-size", b"zz\r\n"),
    ("huge-size", b"10000000000000\r\nab"),
    ("101-trailers", b"2\r\nok\r\n0\r\n" + b"".join(b"X-T%d: %d\r\n" % (i, i) for i in range(101))
     + b"\r\n"),
])
def test_body_error_with_head_unsent_is_502_and_client_stays(proxy, name, body):
    # 2.5, 1.5: the head and the bad chunk come in one segment, so nothing was sent to the
    # client yet: a 502 as for a bad head (2.6), logged as such, client connection kept
    port, origin = proxy
    origin.script(f"/b/{name}", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body)
    with Conn(port) as c:
        _get(c, f"/b/{name}")
        r = c.response()
        assert r.raw == error_page(502), r
        _get(c, "/")
        assert c.response().status == 200


def test_v76_garbage_status_line_is_502(proxy):
    port, origin = proxy
    with Conn(port) as c:
        _get(c, "/garbage")
        assert c.response().raw == error_page(502)
        _get(c, "/")
        assert c.response().status == 200


def test_v77_204_with_content_length(proxy):
    port, origin = proxy
    with Conn(port) as c:
        _get(c, "/204cl")
        r = c.response()
        assert r.raw == b"HTTP/1.1 204 No Content\r\n\r\n", r
        _get(c, "/")
        r = c.response()
        assert r.status == 200 and r.body == b"hello\n", r


def test_v78_response_without_length(proxy):
    port, origin = proxy
    with Conn(port) as c:
        _get(c, "/nolength")
        r = c.response()   # body read to EOF
        assert r.status == 200 and r.header_all("connection") == ["close"], r
        assert r.body == b"body without length\n"
        assert c.eof


def test_v79_server_closes_without_answering_is_502(proxy):
    port, origin = proxy
    with Conn(port) as c:
        _get(c, "/close")
        assert c.response().raw == error_page(502)
        _get(c, "/")
        assert c.response().status == 200


def test_v80_reused_connection_closed_by_server_closes_client_silently(proxy):
    port, origin = proxy
    with Conn(port) as c:
        _get(c, "/")
        assert c.response().status == 200
        existing = {x.id for x in origin.open_connections()}
        _get(c, "/close")
        origin.wait_requests(2)
        reqs = origin.requests()
        if reqs[1].conn_id not in existing:
            pytest.fail(f"the second request did not reuse a connection: {reqs!r}")
        assert c.closed_within(3), "expected a silent close"


def test_v82_empty_reason_gets_standard_one(proxy):
    port, origin = proxy
    origin.script("/raw/x", b"HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok")
    with Conn(port) as c:
        _get(c, "/raw/x")
        r = c.response()
    assert r.head == b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n", r
    assert r.body == b"ok"


def test_http2_version_in_status_line_becomes_http11(proxy):
    port, origin = proxy
    origin.script("/raw/v2", b"HTTP/2.0 200 OK\r\nContent-Length: 2\r\n\r\nok")
    with Conn(port) as c:
        _get(c, "/raw/v2")
        r = c.response()
    assert r.head.startswith(b"HTTP/1.1 200 OK\r\n"), r


def test_http10_server_response_to_http11_client(proxy):
    # 3.2 (v): a HTTP/1.1 client of a HTTP/1.0 server gets HTTP/1.0 ... connection: keep-alive
    port, origin = proxy
    origin.script("/raw/h10", b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", close=True)
    with Conn(port) as c:
        _get(c, "/raw/h10")
        r = c.response()
        assert r.head.startswith(b"HTTP/1.0 200 OK\r\n"), r
        assert r.header_all("connection") == ["keep-alive"], r
        _get(c, "/")
        assert c.response().status == 200


def test_server_connection_close_not_propagated(proxy):
    # 3.1: a server's Connection: close is not propagated to the client.
    port, origin = proxy
    origin.script("/raw/sclose", b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                  close=True)
    with Conn(port) as c:
        _get(c, "/raw/sclose")
        r = c.response()
        assert r.status == 200 and r.header("connection") is None, r
        _get(c, "/")
        assert c.response().status == 200


def test_excess_bytes_after_body_discarded(proxy):
    # 2.6: bytes after the end of a response body are discarded, server connection closed.
    port, origin = proxy
    origin.script("/raw/excess", b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA")
    with Conn(port) as c:
        _get(c, "/raw/excess")
        r = c.response()
        assert r.body == b"ok", r
        wait_conn_closed(origin, origin.requests()[0].conn_id)
        _get(c, "/")
        r = c.response()
        assert r.status == 200 and r.body == b"hello\n", r


def test_interim_103_forwarded(proxy):
    port, origin = proxy
    origin.script("/raw/103", b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n"
                              b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    with Conn(port) as c:
        _get(c, "/raw/103")
        r1 = c.response()
        assert r1.status == 103 and r1.header("link") == "</s.css>; rel=preload", r1
        r2 = c.response()
        assert r2.status == 200 and r2.body == b"ok", r2


def test_head_response_keeps_length(proxy):
    port, origin = proxy
    with Conn(port) as c:
        c.send(b"HEAD /big?n=1000 HTTP/1.1\r\nHost: a\r\n\r\n")
        r = c.response("HEAD")
        assert r.status == 200 and r.header("content-length") == "1000", r
        _get(c, "/")
        r = c.response()
        assert r.status == 200 and r.body == b"hello\n", r


def test_304_keeps_content_length(proxy):
    port, origin = proxy
    origin.script("/raw/304", b"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n")
    with Conn(port) as c:
        _get(c, "/raw/304")
        r = c.response()
        assert r.status == 304 and r.header("content-length") == "10", r
        _get(c, "/")
        r = c.response()
        assert r.status == 200 and r.body == b"hello\n", r


def test_status_codes_passed_through(proxy):
    port, origin = proxy
    with Conn(port) as c:
        for code in (201, 301, 404, 500, 503):
            _get(c, f"/status/{code}")
            r = c.response()
            assert r.status == code and r.body == f"status {code}\n".encode(), r


def test_v72_client_connection_close_not_propagated(proxy):
    port, origin = proxy
    with Conn(port) as c:
        _get(c, "/", b"Connection: close\r\n")
        r = c.response()
        assert r.status == 200 and r.header_all("connection") == ["close"], r
        assert c.closed_within(3)
    req = origin.wait_requests(1)[0]
    assert req.header("connection") is None, req.head
    # the server connection stays pooled
    import time
    time.sleep(0.2)
    assert conn_is_open(origin, req.conn_id)


def test_interim_response_forwarded_to_http10_client(proxy):
    # decision 0.6: 1xx responses are forwarded to HTTP/1.0 clients too
    port, origin = proxy
    origin.script("/raw/103b", b"HTTP/1.1 103 Early Hints\r\nLink: </a.js>\r\n\r\n"
                               b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    with Conn(port) as c:
        c.send(b"GET /raw/103b HTTP/1.0\r\n\r\n")
        r1 = c.response()
        assert r1.status == 103 and r1.header("link") == "</a.js>", r1
        r2 = c.response()
        assert r2.status == 200 and r2.body == b"ok" and r2.header_all("connection") == ["close"], r2

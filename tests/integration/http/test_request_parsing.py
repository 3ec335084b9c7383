"""Request parsing and smuggling defences: the vectors of http1.md section 7 against one sluice.

Rejected vectors: the exact error page of 5.2, the connection closed, and not one byte of the
request at the origin (checked with a barrier request, see hutil.assert_nothing_reached).
Accepted vectors: the exact request head the origin received (normalisations of 1.2-2.5)."""
import re

import pytest

from hutil import (BARRIER, Conn, assert_nothing_reached, error_page, exchange, request,
                   wait_conn_closed)

H = b"Host: a\r\n"
P = b"POST / HTTP/1.1\r\nHost: a\r\n"
TE = b"Transfer-Encoding: chunked\r\n"


def _rejected(n, raw, status=400):
    return pytest.param(raw, status, id=f"v{n}")


REJECTED = [
    _rejected("04-leading-sp", b" GET / HTTP/1.1\r\n" + H + b"\r\n"),
    _rejected("04-leading-ctl", b"\x01GET / HTTP/1.1\r\n" + H + b"\r\n"),
    _rejected("05-bare-cr", b"GET / HTTP/1.1\rHost: a\r\n\r\n"),
    _rejected("05-bare-cr-header", b"GET / HTTP/1.1\r\nHost: a\rX: 1\r\n\r\n"),
    _rejected("08-bad-method", b"GE[T / HTTP/1.1\r\n" + H + b"\r\n"),
    _rejected("09-pri", b"PRI / HTTP/1.1\r\n" + H + b"\r\n"),
    _rejected("11-version-1.10", b"GET / HTTP/1.10\r\n" + H + b"\r\n"),
    _rejected("11-version-lower", b"GET / http/1.1\r\n" + H + b"\r\n"),
    _rejected("11-version-rtsp", b"GET / RTSP/1.0\r\n" + H + b"\r\n"),
    _rejected("11-version-11.1", b"GET / HTTP/11.1\r\n" + H + b"\r\n"),
    _rejected("12-http09", b"GET /\r\n\r\n"),
    _rejected("13-trailing-sp", b"GET / HTTP/1.1 \r\n" + H + b"\r\n"),
    _rejected("17-two-hosts", b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"),
    _rejected("18-host-comma", b"GET / HTTP/1.1\r\nHost: a,b\r\n\r\n"),
    _rejected("18-host-slash", b"GET / HTTP/1.1\r\nHost: a/b\r\n\r\n"),
    _rejected("18-host-userinfo", b"GET / HTTP/1.1\r\nHost: u@a\r\n\r\n"),
    _rejected("18-host-space", b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n"),
    _rejected("21-get-asterisk", b"GET * HTTP/1.1\r\n" + H + b"\r\n"),
    _rejected("23-absolute-host-mismatch", b"GET http://a/x HTTP/1.1\r\nHost: b\r\n\r\n"),
    _rejected("24-absolute-port-mismatch", b"GET https://a:8443/ HTTP/1.1\r\n" + H + b"\r\n"),
    _rejected("25-authority-with-get", b"GET a:80 HTTP/1.1\r\n" + H + b"\r\n"),
    _rejected("25-bare-word", b"GET foo HTTP/1.1\r\n" + H + b"\r\n"),
    _rejected("27-connect-no-port", b"CONNECT a HTTP/1.1\r\nHost: a\r\n\r\n"),
    _rejected("27-connect-path", b"CONNECT / HTTP/1.1\r\nHost: a\r\n\r\n"),
    _rejected("27-connect-absolute", b"CONNECT http://a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n"),
    _rejected("28-connect-host-mismatch", b"CONNECT a:443 HTTP/1.1\r\nHost: b:443\r\n\r\n"),
    _rejected("29-connect-with-body",
              b"CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\nContent-Length: 5\r\n\r\nhello"),
    _rejected("30-fragment", b"GET /a#b HTTP/1.1\r\n" + H + b"\r\n"),
    _rejected("30-8bit-uri", b"GET /\xe9 HTTP/1.1\r\n" + H + b"\r\n"),
    _rejected("31-ctl-uri", b"GET /\x01 HTTP/1.1\r\n" + H + b"\r\n"),
    _rejected("31-del-uri", b"GET /\x7f HTTP/1.1\r\n" + H + b"\r\n"),
    _rejected("31-nul-uri", b"GET /a\x00b HTTP/1.1\r\n" + H + b"\r\n"),
    _rejected("31-space-uri", b"GET /a b HTTP/1.1\r\n" + H + b"\r\n"),
    # decision 0.5: bare LF and obs-fold are rejected by default
    _rejected("03-bare-lf", b"GET / HTTP/1.1\nHost: a\nX-A: 1\n\n"),
    _rejected("03-bare-lf-one-line", b"GET / HTTP/1.1\r\nHost: a\nX-A: 1\r\n\r\n"),
    _rejected("33-obs-fold", b"GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n 2\r\n\r\n"),
    _rejected("33-obs-fold-tab", b"GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n\t2\r\n\r\n"),
    _rejected("34-fold-first-line", b"GET / HTTP/1.1\r\n X-A: 1\r\nHost: a\r\n\r\n"),
    _rejected("35-sp-before-colon", b"GET / HTTP/1.1\r\nHost: a\r\nX-A : 1\r\n\r\n"),
    _rejected("35-tab-before-colon", b"GET / HTTP/1.1\r\nHost: a\r\nX-A\t: 1\r\n\r\n"),
    _rejected("35-empty-name", b"GET / HTTP/1.1\r\nHost: a\r\n: 1\r\n\r\n"),
    _rejected("35-no-colon", b"GET / HTTP/1.1\r\nHost: a\r\nX-A\r\n\r\n"),
    _rejected("36-paren-in-name", b"GET / HTTP/1.1\r\nHost: a\r\nX(A: 1\r\n\r\n"),
    _rejected("36-8bit-name", b"GET / HTTP/1.1\r\nHost: a\r\nX-\xe9: 1\r\n\r\n"),
    _rejected("38-nul-value", b"GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\x002\r\n\r\n"),
    _rejected("40-101-fields",
              b"GET / HTTP/1.1\r\nHost: a\r\n"
              + b"".join(b"X-F%d: %d\r\n" % (i, i) for i in range(100)) + b"\r\n"),
    _rejected("41-uri-20000", b"GET /" + b"u" * 20000 + b" HTTP/1.1\r\n" + H + b"\r\n", 414),
    _rejected("42-value-15400", b"GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + b"v" * 15400
              + b"\r\n\r\n", 431),
    _rejected("42-uri-16000", b"GET /" + b"u" * 16000 + b" HTTP/1.1\r\n" + H + b"\r\n", 431),
    _rejected("44-cl-differ", P + b"Content-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"),
    _rejected("44-cl-list-differ", P + b"Content-Length: 3,4\r\n\r\nabcd"),
    _rejected("45-cl-plus", P + b"Content-Length: +3\r\n\r\nabc"),
    _rejected("45-cl-minus", P + b"Content-Length: -1\r\n\r\nabc"),
    _rejected("45-cl-hex", P + b"Content-Length: 0x3\r\n\r\nabc"),
    _rejected("45-cl-two-numbers", P + b"Content-Length: 3 4\r\n\r\nabc"),
    _rejected("45-cl-trailing-comma", P + b"Content-Length: 3,\r\n\r\nabc"),
    _rejected("45-cl-empty", P + b"Content-Length: \r\n\r\nabc"),
    _rejected("45-cl-decimal", P + b"Content-Length: 3.0\r\n\r\nabc"),
    _rejected("45-cl-vt", P + b"Content-Length: 3\x0b\r\n\r\nabc"),
    _rejected("45-cl-overflow", P + b"Content-Length: 99999999999999999999\r\n\r\nabc"),
    # decision 0.5: Content-Length together with Transfer-Encoding is a 400
    _rejected("48-cl-then-te", P + b"Content-Length: 3\r\n" + TE + b"\r\n3\r\nabc\r\n0\r\n\r\n"),
    _rejected("48-te-then-cl", P + TE + b"Content-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
    _rejected("49-gzip-chunked", P + b"Transfer-Encoding: gzip, chunked\r\n\r\n"
              b"3\r\nabc\r\n0\r\n\r\n", 422),
    _rejected("50-chunked-gzip", P + b"Transfer-Encoding: chunked, gzip\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
    _rejected("50-gzip", P + b"Transfer-Encoding: gzip\r\n\r\nabc"),
    _rejected("50-identity", P + b"Transfer-Encoding: identity\r\n\r\nabc"),
    _rejected("50-xchunked", P + b"Transfer-Encoding: xchunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
    _rejected("50-chunked-twice", P + b"Transfer-Encoding: chunked, chunked\r\n\r\n"
              b"3\r\nabc\r\n0\r\n\r\n"),
    _rejected("50-two-te-fields", P + TE + TE + b"\r\n3\r\nabc\r\n0\r\n\r\n"),
    _rejected("50-te-empty", P + b"Transfer-Encoding: \r\n\r\n"),
    _rejected("50-te-empty-element", P + b"Transfer-Encoding: chunked,\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
    _rejected("50-te-vt", P + b"Transfer-Encoding: \x0bchunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
    _rejected("50-te-folded", P + b"Transfer-Encoding:\r\n chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
    _rejected("51-te-sp-before-colon", P + b"Transfer-Encoding : chunked\r\n\r\n"
              b"3\r\nabc\r\n0\r\n\r\n"),
    _rejected("54-http10-get-cl", b"GET / HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc", 413),
    _rejected("54-http10-head-cl", b"HEAD / HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc", 413),
    _rejected("54-http10-delete-cl", b"DELETE / HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc", 413),
    _rejected("54-http10-get-chunked", b"GET / HTTP/1.0\r\n" + TE + b"\r\n3\r\nabc\r\n0\r\n\r\n",
              413),
    _rejected("58-size-0x", P + TE + b"\r\n0x3\r\nabc\r\n0\r\n\r\n"),
    _rejected("58-size-leading-sp", P + TE + b"\r\n 3\r\nabc\r\n0\r\n\r\n"),
    _rejected("58-size-negative", P + TE + b"\r\n-3\r\nabc\r\n0\r\n\r\n"),
    _rejected("58-size-empty", P + TE + b"\r\n\r\nabc\r\n0\r\n\r\n"),
    _rejected("58-size-2^52", P + TE + b"\r\n10000000000000\r\nabc\r\n0\r\n\r\n"),
    _rejected("59-ext-open-quote", P + TE + b"\r\n3;n=\"v\r\nabc\r\n0\r\n\r\n"),
    _rejected("59-ext-backslash", P + TE + b"\r\n3;n=a\\b\r\nabc\r\n0\r\n\r\n"),
    _rejected("59-ext-bare-lf", P + TE + b"\r\n3;n=v\nabc\r\n0\r\n\r\n"),
    _rejected("59-size-bare-lf", P + TE + b"\r\n3\nabc\r\n0\r\n\r\n"),
    _rejected("60-data-bare-lf", P + TE + b"\r\n3\r\nabc\n0\r\n\r\n"),
    _rejected("60-data-too-long", P + TE + b"\r\n3\r\nabcd\r\n0\r\n\r\n"),
    _rejected("62-trailer-bad-name", P + TE + b"\r\n3\r\nabc\r\n0\r\nX T: 1\r\n\r\n"),
    _rejected("63-last-chunk-bare-lf", P + TE + b"\r\n3\r\nabc\r\n0\n\n"),
    _rejected("67-websocket-no-key",
              b"GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
              b"Sec-WebSocket-Version: 13\r\n\r\n"),
    _rejected("67-websocket-short-key",
              b"GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
              b"Sec-WebSocket-Key: c2hvcnQ=\r\n\r\n"),
]


@pytest.mark.parametrize("raw,status", REJECTED)
def test_rejected_vector(proxy, raw, status):
    port, origin = proxy
    got = exchange(port, raw)
    assert got == error_page(status), f"sent {raw[:200]!r}"
    assert_nothing_reached(origin, port)


@pytest.mark.parametrize("raw,status", [
    pytest.param(b"GET / HTTP/1.1\r\nHost: a\r\nX-A : 1\r\n\r\n", 400, id="v35"),
    pytest.param(P + b"Content-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400, id="v44"),
    pytest.param(P + b"Transfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", 422,
                 id="v49"),
])
def test_rejected_vector_fed_byte_by_byte(proxy, raw, status):
    # 1.1: the result does not depend on how the bytes are split across reads. (Only errors in
    # the head: a chunk error arriving after the head was forwarded is an abort, vector 81.)
    port, origin = proxy
    with Conn(port) as c:
        for i in range(len(raw)):
            try:
                c.send(raw[i:i + 1])
            except OSError:
                break   # sluice may close as soon as it has seen the error
        got = c.read_to_eof()
    assert got == error_page(status)
    assert_nothing_reached(origin, port)


def test_header_block_limit_is_15360_wire_bytes(proxy):
    # 1.5 / decision 0.4b: a head of exactly 15360 bytes fits; one byte more is a 431.
    port, origin = proxy
    base = b"GET / HTTP/1.1\r\nHost: a\r\nX-Pad: \r\n\r\n"
    fits = base.replace(b"X-Pad: ", b"X-Pad: " + b"p" * (15360 - len(base)))
    assert len(fits) == 15360
    r = request(port, fits)
    assert r.status == 200, r
    assert origin.wait_requests(1)[0].header("x-pad") == "p" * (15360 - len(base))
    origin.reset()
    over = base.replace(b"X-Pad: ", b"X-Pad: " + b"p" * (15361 - len(base)))
    assert exchange(port, over) == error_page(431)
    assert_nothing_reached(origin, port)


def test_leading_crlf_does_not_count_toward_head_limit(proxy):
    # 1.1: CR/LF before the request line are skipped in any number, so 20000 of them are no 431
    port, origin = proxy
    r = request(port, b"\r\n" * 10000 + b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
    assert r.status == 200, r
    assert origin.wait_requests(1)[0].head == b"GET / HTTP/1.1\r\nhost: a\r\n\r\n"


def test_100_fields_accepted(proxy):
    port, origin = proxy
    raw = (b"GET / HTTP/1.1\r\nHost: a\r\n"
           + b"".join(b"X-F%d: %d\r\n" % (i, i) for i in range(99)) + b"\r\n")
    assert request(port, raw).status == 200
    req = origin.wait_requests(1)[0]
    assert len(req.headers) == 100


def test_uri_of_15000_accepted(proxy):
    port, origin = proxy
    path = "/" + "u" * 15000
    assert request(port, f"GET {path} HTTP/1.1\r\nHost: a\r\n\r\n".encode()).status == 200
    assert origin.wait_requests(1)[0].target == path


def test_after_a_400_pipelined_input_is_discarded(proxy):
    port, origin = proxy
    got = exchange(port, b"GET / HTTP/1.1 \r\nHost: a\r\n\r\nGET /second HTTP/1.1\r\nHost: a\r\n\r\n")
    assert got == error_page(400)
    assert_nothing_reached(origin, port)


def test_h2_preface_after_a_request_is_405(proxy):
    # vector 70: the preface on a later request of an H1 connection: 405 and close.
    port, origin = proxy
    with Conn(port) as c:
        c.send(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.response().status == 200
        c.send(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        assert c.read_to_eof() == error_page(405)
    assert [r.path for r in origin.requests()] == ["/"]


# ----------------------------------------------------------------------------------------------
# Accepted vectors: what the origin receives
# ----------------------------------------------------------------------------------------------

def _forwarded(proxy, raw, method="GET"):
    port, origin = proxy
    r = request(port, raw, method)
    assert r.status == 200, r
    reqs = origin.wait_requests(1)
    assert len(reqs) == 1, reqs
    return r, reqs[0]


@pytest.mark.parametrize("raw,head", [
    pytest.param(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n", b"GET / HTTP/1.1\r\nhost: a\r\n\r\n", id="v01"),
    pytest.param(b"\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", b"GET / HTTP/1.1\r\nhost: a\r\n\r\n",
                 id="v02-leading-crlf"),
    pytest.param(b"GET\t/\tHTTP/1.1\r\nHost: a\r\n\r\n", b"GET / HTTP/1.1\r\nhost: a\r\n\r\n",
                 id="v06-tabs"),
    pytest.param(b"GET  /  HTTP/1.1\r\nHost: a\r\n\r\n", b"GET / HTTP/1.1\r\nhost: a\r\n\r\n",
                 id="v06-spaces"),
    pytest.param(b"get / HTTP/1.1\r\nHost: a\r\n\r\n", b"get / HTTP/1.1\r\nhost: a\r\n\r\n",
                 id="v07-lower-method"),
    pytest.param(b"FOO / HTTP/1.1\r\nHost: a\r\n\r\n", b"FOO / HTTP/1.1\r\nhost: a\r\n\r\n",
                 id="v07-unknown-method"),
    pytest.param(b"GET / HTTP/1.2\r\nHost: a\r\n\r\n", b"GET / HTTP/1.1\r\nhost: a\r\n\r\n",
                 id="v10-1.2"),
    pytest.param(b"GET / HTTP/2.0\r\nHost: a\r\n\r\n", b"GET / HTTP/1.1\r\nhost: a\r\n\r\n",
                 id="v10-2.0"),
    pytest.param(b"GET / HTTP/3.0\r\nHost: a\r\n\r\n", b"GET / HTTP/1.1\r\nhost: a\r\n\r\n",
                 id="v10-3.0"),
    pytest.param(b"GET / HTTP/1.1\r\n\r\n", b"GET / HTTP/1.1\r\n\r\n", id="v15-no-host"),
    pytest.param(b"GET / HTTP/1.1\r\nHost: a\r\nHost: A\r\n\r\n", b"GET / HTTP/1.1\r\nhost: a\r\n\r\n",
                 id="v16-equal-hosts"),
    pytest.param(b"GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n", b"GET / HTTP/1.1\r\nhost: [::1]:80\r\n\r\n",
                 id="v19-ipv6-host"),
    pytest.param(b"GET / HTTP/1.1\r\nHost: a:80x\r\n\r\n", b"GET / HTTP/1.1\r\nhost: a:80x\r\n\r\n",
                 id="v19-bad-port"),
    pytest.param(b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", b"OPTIONS * HTTP/1.1\r\nhost: a\r\n\r\n",
                 id="v20-options-asterisk"),
    pytest.param(b"GET http://a:80/x HTTP/1.1\r\nHost: a:80\r\n\r\n",
                 b"GET http://a/x HTTP/1.1\r\nhost: a\r\n\r\n", id="v22-default-port"),
    pytest.param(b"GET http://a HTTP/1.1\r\nHost: a\r\n\r\n",
                 b"GET http://a/ HTTP/1.1\r\nhost: a\r\n\r\n", id="v22-empty-path"),
    pytest.param(b"GET /\"<>{}|\\^` HTTP/1.1\r\nHost: a\r\n\r\n",
                 b"GET /\"<>{}|\\^` HTTP/1.1\r\nhost: a\r\n\r\n", id="v32-odd-uri-chars"),
    pytest.param(b"GET / HTTP/1.1\r\nHost: a\r\nX_A: 1\r\n\r\n",
                 b"GET / HTTP/1.1\r\nhost: a\r\nx_a: 1\r\n\r\n", id="v37-underscore"),
    pytest.param(b"GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\x012\r\nX-B: 1\x7f2\r\nX-C: caf\xe9\r\n\r\n",
                 b"GET / HTTP/1.1\r\nhost: a\r\nx-a: 1\x012\r\nx-b: 1\x7f2\r\nx-c: caf\xe9\r\n\r\n",
                 id="v39-odd-value-bytes"),
    pytest.param(b"GET / HTTP/1.1\r\nHOST: a\r\nX-Mixed-Case:   v  \r\n\r\n",
                 b"GET / HTTP/1.1\r\nhost: a\r\nx-mixed-case: v\r\n\r\n",
                 id="lowercase-and-trim"),
    pytest.param(b"GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\nX-A: 2\r\n\r\n",
                 b"GET / HTTP/1.1\r\nhost: a\r\nx-a: 1\r\nx-a: 2\r\n\r\n", id="duplicates-kept"),
])
def test_accepted_vector_forwarded_head(proxy, raw, head):
    _, req = _forwarded(proxy, raw)
    assert req.head == head


def test_v14_http10_client(proxy):
    port, origin = proxy
    with Conn(port) as c:
        c.send(b"GET / HTTP/1.0\r\n\r\n")
        r = c.response()
        assert r.status == 200 and r.version == "HTTP/1.1", r
        assert r.header_all("connection") == ["close"], r
        assert c.closed_within(3)
    req = origin.wait_requests(1)[0]
    assert req.head == b"GET / HTTP/1.0\r\nconnection: keep-alive\r\n\r\n"


def test_v19_empty_host(proxy):
    _, req = _forwarded(proxy, b"GET / HTTP/1.1\r\nHost:\r\n\r\n")
    assert req.header_all("host") == [""]


@pytest.mark.parametrize("cl", [b"3, 3", b"3,3", b"0003"])
def test_v43_v46_content_length_normalised(proxy, cl):
    _, req = _forwarded(proxy, P + b"Content-Length: " + cl + b"\r\n\r\nabc")
    assert req.head == b"POST / HTTP/1.1\r\nhost: a\r\ncontent-length: 3\r\n\r\n"
    assert req.raw_body == b"abc"


def test_v43_equal_cl_fields_merged(proxy):
    _, req = _forwarded(proxy, P + b"Content-Length: 3\r\nContent-Length: 3\r\n\r\nabc")
    assert req.header_all("content-length") == ["3"]
    assert req.body == b"abc"


def test_v47_huge_content_length_waits_for_body(proxy):
    port, origin = proxy
    from sluice_harness import wait_until
    with Conn(port) as c:
        c.send(P + b"Content-Length: 18446744073709551615\r\n\r\nabc")
        wait_until(lambda: b"abc" in origin.raw(), 5,
                   message=lambda: f"the head and first bytes at the origin: {origin.raw()!r}")
    assert b"content-length: 18446744073709551615\r\n" in origin.raw()


def test_v52_transfer_underscore_is_not_te(proxy):
    _, req = _forwarded(proxy, P + b"Transfer_Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc")
    assert req.header("transfer_encoding") == "chunked"
    assert req.header("content-length") == "3"
    assert not req.chunked and req.body == b"abc"


def test_v55_http11_get_with_body_forwarded(proxy):
    _, req = _forwarded(proxy, b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc")
    assert req.head == b"GET / HTTP/1.1\r\nhost: a\r\ncontent-length: 3\r\n\r\n"
    assert req.body == b"abc"


def test_v56_no_length_means_no_body(proxy):
    port, origin = proxy
    with Conn(port) as c:
        c.send(P + b"\r\nabc\r\n")
        assert c.response().status == 200
        # "abc" is the next request line: no version -> 400, close
        assert c.read_to_eof() == error_page(400)
    reqs = origin.requests()
    assert [r.method for r in reqs] == ["POST"] and reqs[0].body == b""


_CHUNK_LINE = re.compile(rb"^(0|[1-9A-F][0-9A-F]*)\r\n$")


def _assert_rechunked(req, body):
    assert req.chunked and req.body == body, req
    assert req.header_all("transfer-encoding") == ["chunked"]
    assert req.header("content-length") is None
    # every size line upper-case hex, no leading zero, no extension
    raw = req.raw_body
    pos = 0
    while True:
        eol = raw.index(b"\n", pos) + 1
        line = raw[pos:eol]
        assert _CHUNK_LINE.match(line), f"size line {line!r} in {raw!r}"
        size = int(line, 16)
        if size == 0:
            break
        pos = eol + size + 2
    assert raw[eol:] == b"\r\n", raw


@pytest.mark.parametrize("chunks,body", [
    (b"A\r\n0123456789\r\n0\r\n\r\n", b"0123456789"),
    (b"a\r\n0123456789\r\n0\r\n\r\n", b"0123456789"),
    (b"0003\r\nabc\r\n0\r\n\r\n", b"abc"),
    (b"3 \t\r\nabc\r\n0\r\n\r\n", b"abc"),
    (b"3;n=v\r\nabc\r\n0\r\n\r\n", b"abc"),
    (b"3;n=\"v a\"\r\nabc\r\n0\r\n\r\n", b"abc"),
    (b"3 ;n=v\r\nabc\r\n0\r\n\r\n", b"abc"),
    (b"0000000000003\r\nabc\r\n00\r\n\r\n", b"abc"),
    (b"3\r\nabc\r\n0;last=1\r\n\r\n", b"abc"),
    (b"1\r\na\r\n1\r\nb\r\n1\r\nc\r\n0\r\n\r\n", b"abc"),
], ids=["A", "a", "0003", "sp-tab", "ext", "quoted-ext", "sp-ext", "zeros", "last-ext", "many"])
def test_v57_request_rechunked(proxy, chunks, body):
    _, req = _forwarded(proxy, P + TE + b"\r\n" + chunks)
    _assert_rechunked(req, body)


@pytest.mark.parametrize("te", [b"ChUnKeD", b"chunked "])
def test_te_spellings_accepted(proxy, te):
    _, req = _forwarded(proxy, P + b"Transfer-Encoding: " + te + b"\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
    _assert_rechunked(req, b"abc")


@pytest.mark.parametrize("trailer", [b"X-T: 1", b"Content-Length: 5"])
def test_v61_trailers_forwarded(proxy, trailer):
    _, req = _forwarded(proxy, P + TE + b"\r\n3\r\nabc\r\n0\r\n" + trailer + b"\r\n\r\n")
    name, value = trailer.decode().split(": ")
    assert [(n.lower(), v) for n, v in req.trailers] == [(name.lower(), value)]
    assert req.body == b"abc"


def test_v53_http10_chunked_post(proxy):
    port, origin = proxy
    with Conn(port) as c:
        c.send(b"POST / HTTP/1.0\r\nConnection: keep-alive\r\n" + TE + b"\r\n3\r\nabc\r\n0\r\n\r\n")
        r = c.response()
        assert r.status == 200, r
        assert r.header_all("connection") == ["close"], r
        assert c.closed_within(3)
    req = origin.wait_requests(1)[0]
    assert req.version == "HTTP/1.0" and req.chunked and req.body == b"abc"
    # and that server connection is closed after the response
    wait_conn_closed(origin, req.conn_id)


def test_v68_upgrade_without_connection_upgrade_removed(proxy):
    _, req = _forwarded(proxy, b"GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\n\r\n")
    assert req.head == b"GET / HTTP/1.1\r\nhost: a\r\n\r\n"


def test_v69_h2c_upgrade_becomes_plain(proxy):
    _, req = _forwarded(proxy, b"GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, HTTP2-Settings\r\n"
                                b"Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n")
    assert req.header("upgrade") is None, req.head
    assert req.header_all("connection") == ["HTTP2-Settings"], req.head
    assert req.header("http2-settings") == "AAMAAABkAAQCAAAAAAIAAAAA"


def test_v71_hop_by_hop_fields(proxy):
    _, req = _forwarded(proxy, b"GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, X-A\r\nX-A: 1\r\n"
                                b"Keep-Alive: timeout=5\r\nProxy-Connection: keep-alive\r\n"
                                b"TE: trailers, deflate\r\n\r\n")
    assert req.header_all("connection") == ["X-A"], req.head
    assert req.header("x-a") == "1"
    assert req.header("keep-alive") == "timeout=5"
    assert req.header("proxy-connection") == "keep-alive"
    assert req.header_all("te") == ["trailers"], req.head


def test_te_without_trailers_dropped(proxy):
    _, req = _forwarded(proxy, b"GET / HTTP/1.1\r\nHost: a\r\nTE: deflate\r\n\r\n")
    assert req.head == b"GET / HTTP/1.1\r\nhost: a\r\n\r\n"


def test_connection_tokens_other_than_close_kept(proxy):
    # 3.2: `CLOSE, foo` -> `connection: foo`; and the client connection is then closed
    port, origin = proxy
    with Conn(port) as c:
        c.send(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: CLOSE, foo\r\n\r\n")
        r = c.response()
        assert r.status == 200 and r.header_all("connection") == ["close"], r
        assert c.closed_within(3)
    req = origin.wait_requests(1)[0]
    assert req.header_all("connection") == ["foo"], req.head


def test_barrier_sanity(proxy):
    # The helper every rejection test relies on sees a request that does reach the origin.
    port, origin = proxy
    assert request(port, b"GET /x HTTP/1.1\r\nHost: a\r\n\r\n").status == 200
    with pytest.raises(AssertionError):
        assert_nothing_reached(origin, port)
    assert BARRIER.startswith(b"GET /barrier ")

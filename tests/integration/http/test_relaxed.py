"""option accept-unsafe-violations-in-http-request (http1.md 1.7 and decision 0.5): the relaxed
vectors of section 7 are forwarded; everything else stays strict."""
import pytest

import sluice_harness as h
from http_origin import HttpOrigin
from hutil import Conn, assert_nothing_reached, config, error_page, exchange, request


@pytest.fixture(scope="module")
def relaxed_module(tmp_path_factory):
    origin = HttpOrigin()
    tmp = tmp_path_factory.mktemp("relaxed")
    port = h.free_port()
    s = h.Sluice(tmp / "run")
    s.start(h.write_config(tmp, config(port, origin.port,
                                       fe="option accept-unsafe-violations-in-http-request")))
    try:
        s.wait_listening(port)
        yield port, s, origin
    finally:
        s.kill()
        origin.stop()


@pytest.fixture
def relaxed(relaxed_module):
    port, s, origin = relaxed_module
    if not s.running():
        pytest.fail(f"the module's sluice is not running\n{s.describe()}")
    origin.reset()
    return port, origin


def _forwarded(relaxed, raw):
    port, origin = relaxed
    r = request(port, raw)
    assert r.status == 200, r
    reqs = origin.wait_requests(1)
    assert len(reqs) == 1, reqs
    return r, reqs[0]


@pytest.mark.parametrize("raw,head", [
    pytest.param(b"GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n", b"GET /a#b HTTP/1.1\r\nhost: a\r\n\r\n",
                 id="v30-fragment"),
    pytest.param(b"GET /\xe9 HTTP/1.1\r\nHost: a\r\n\r\n", b"GET /\xe9 HTTP/1.1\r\nhost: a\r\n\r\n",
                 id="v30-8bit"),
    pytest.param(b"GET / HTTP/1.1\r\nHost: a\r\nX(A: 1\r\nX-B: 2\r\n\r\n",
                 b"GET / HTTP/1.1\r\nhost: a\r\nx-b: 2\r\n\r\n", id="v36-bad-name-dropped"),
    pytest.param(b"GET / HTTP/1.1\r\nHost: a\r\nX-\xe9: 1\r\n\r\n",
                 b"GET / HTTP/1.1\r\nhost: a\r\n\r\n", id="v36-8bit-name-dropped"),
    pytest.param(b"GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\x002\r\n\r\n",
                 b"GET / HTTP/1.1\r\nhost: a\r\nx-a: 1\x002\r\n\r\n", id="v38-nul-value"),
    pytest.param(b"GET http://a/x HTTP/1.1\r\nHost: b\r\n\r\n",
                 b"GET http://a/x HTTP/1.1\r\nhost: b\r\n\r\n", id="v23-authority-not-checked"),
    pytest.param(b"GET / HTTP/1.1\nHost: a\nX-A: 1\n\n",
                 b"GET / HTTP/1.1\r\nhost: a\r\nx-a: 1\r\n\r\n", id="v03-bare-lf"),
    pytest.param(b"GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n 2\r\n\r\n",
                 b"GET / HTTP/1.1\r\nhost: a\r\nx-a: 1 2\r\n\r\n", id="v33-obs-fold"),
    pytest.param(b"GET / HTTP/1.1\r\n X-F: 0\r\nHost: a\r\n\r\n",
                 b"GET / HTTP/1.1\r\nhost: a\r\n\r\n", id="v34-first-line-fold-dropped"),
])
def test_relaxed_vector_forwarded(relaxed, raw, head):
    _, req = _forwarded(relaxed, raw)
    assert req.head == head


@pytest.mark.parametrize("version", [b"HTTP/1.10", b"RTSP/1.0", b"http/1.1"])
def test_v11_odd_versions_forwarded_in_close_mode(relaxed, version):
    port, origin = relaxed
    with Conn(port) as c:
        c.send(b"GET / " + version + b"\r\nHost: a\r\n\r\n")
        r = c.response()
        assert r.status == 200, r
        assert c.closed_within(3), "a non-1.1 version is served in close mode"
    req = origin.wait_requests(1)[0]
    assert req.request_line == b"GET / " + version


def test_v12_http09_forwarded_as_http10(relaxed):
    port, origin = relaxed
    with Conn(port) as c:
        c.send(b"GET /x\r\n\r\n")
        r = c.response()
        assert r.status == 200, r
        assert c.closed_within(3)
    assert origin.wait_requests(1)[0].request_line == b"GET /x HTTP/1.0"


def test_v67_websocket_without_key_passes(relaxed):
    port, origin = relaxed
    with Conn(port) as c:
        c.send(b"GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
        assert c.response().status == 101
        c.send(b"tunnel")
        assert c.read_exact(6) == b"tunnel"


def test_v28_connect_host_not_compared(relaxed):
    port, origin = relaxed
    with Conn(port) as c:
        c.send(b"CONNECT a:443 HTTP/1.1\r\nHost: b:443\r\n\r\n")
        assert c.response("CONNECT").status == 200
        c.send(b"x")
        assert c.read_exact(1) == b"x"


@pytest.mark.parametrize("raw,status", [
    pytest.param(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
                 b"3\r\nabc\r\n0\r\n\r\n", 400, id="v48-cl-te"),
    pytest.param(b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, id="v17-two-hosts"),
    pytest.param(b"GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400, id="v18-bad-host"),
    pytest.param(b"GET / HTTP/1.1\r\nHost: a\r\n: 1\r\n\r\n", 400, id="v35-empty-name"),
    pytest.param(b"GET /a\x00b HTTP/1.1\r\nHost: a\r\n\r\n", 400, id="v31-nul-uri"),
    pytest.param(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
                 400, id="v44-cl-differ"),
    pytest.param(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
                 b"3\r\nabc\r\n0\r\n\r\n", 422, id="v49-gzip-chunked"),
    pytest.param(b"POST /x\r\n\r\n", 400, id="v12-http09-post"),
])
def test_still_strict(relaxed, raw, status):
    port, origin = relaxed
    assert exchange(port, raw) == error_page(status)
    assert_nothing_reached(origin, port)


def test_strict_and_relaxed_frontends_on_one_thread_keep_their_own_rules(cfg, sluice, origin):
    # Finished transactions leave their parsers to the next ones on the same worker thread; a
    # parser used by the relaxed frontend must be strict again for the strict one, and back.
    relaxed_port, strict_port = h.free_port(), h.free_port()
    sluice(cfg(config(relaxed_port, origin.port, fe="option accept-unsafe-violations-in-http-request",
                      extra=f"frontend strict\n    bind 127.0.0.1:{strict_port}\n"
                            "    default_backend be\n")),
           wait_ports=[relaxed_port, strict_port])
    raw = b"GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n"
    for _ in range(3):
        assert request(relaxed_port, raw).status == 200
        assert exchange(strict_port, raw) == error_page(400)
    assert origin.paths() == ["/a#b"] * 3

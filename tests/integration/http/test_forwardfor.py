"""option forwardfor [except <net>] [header <name>] [if-none] (http1.md 4.1)."""
from sluice_harness import free_port
from hutil import Conn, config


def _run(sluice, cfg, origin, headers=b"", **kw):
    port = free_port()
    sluice(cfg(config(port, origin.port, **kw)), wait_ports=[port])
    with Conn(port) as c:
        c.send(b"GET / HTTP/1.1\r\nHost: a\r\n" + headers + b"\r\n")
        assert c.response().status == 200
    return origin.wait_requests(1)[0]


def test_forwardfor_appended_after_existing_fields(cfg, sluice, origin):
    req = _run(sluice, cfg, origin, b"X-Forwarded-For: 1.2.3.4\r\nX-Other: z\r\n",
               fe="option forwardfor")
    assert req.head == (b"GET / HTTP/1.1\r\nhost: a\r\nx-forwarded-for: 1.2.3.4\r\nx-other: z\r\n"
                        b"x-forwarded-for: 127.0.0.1\r\n\r\n")


def test_forwardfor_in_backend(cfg, sluice, origin):
    req = _run(sluice, cfg, origin, be="option forwardfor")
    assert req.header_all("x-forwarded-for") == ["127.0.0.1"]


def test_forwardfor_in_both_added_once(cfg, sluice, origin):
    req = _run(sluice, cfg, origin, fe="option forwardfor", be="option forwardfor")
    assert req.header_all("x-forwarded-for") == ["127.0.0.1"]


def test_forwardfor_in_defaults(cfg, sluice, origin):
    req = _run(sluice, cfg, origin, defaults="option forwardfor")
    assert req.header_all("x-forwarded-for") == ["127.0.0.1"]


def test_forwardfor_except_matching_network(cfg, sluice, origin):
    req = _run(sluice, cfg, origin, fe="option forwardfor except 127.0.0.0/8")
    assert req.header("x-forwarded-for") is None, req.head


def test_forwardfor_except_other_network(cfg, sluice, origin):
    req = _run(sluice, cfg, origin, fe="option forwardfor except 10.0.0.0/8")
    assert req.header_all("x-forwarded-for") == ["127.0.0.1"]


def test_forwardfor_except_host_address(cfg, sluice, origin):
    req = _run(sluice, cfg, origin, fe="option forwardfor except 127.0.0.1")
    assert req.header("x-forwarded-for") is None, req.head


def test_forwardfor_header_name(cfg, sluice, origin):
    req = _run(sluice, cfg, origin, fe="option forwardfor header X-Client")
    assert req.header("x-forwarded-for") is None, req.head
    assert req.head.endswith(b"x-client: 127.0.0.1\r\n\r\n"), req.head


def test_forwardfor_backend_header_name_wins(cfg, sluice, origin):
    req = _run(sluice, cfg, origin, fe="option forwardfor header X-Fe",
               be="option forwardfor header X-Be")
    assert req.header_all("x-be") == ["127.0.0.1"] and req.header("x-fe") is None, req.head


def test_forwardfor_if_none_keeps_client_value(cfg, sluice, origin):
    req = _run(sluice, cfg, origin, b"X-Client: 9.9.9.9\r\n",
               fe="option forwardfor header X-Client if-none")
    assert req.header_all("x-client") == ["9.9.9.9"], req.head


def test_forwardfor_if_none_adds_when_absent(cfg, sluice, origin):
    req = _run(sluice, cfg, origin, fe="option forwardfor if-none")
    assert req.header_all("x-forwarded-for") == ["127.0.0.1"]


def test_forwardfor_if_none_needs_every_side(cfg, sluice, origin):
    # if-none is honoured only when every side that has the option says if-none
    req = _run(sluice, cfg, origin, b"X-Forwarded-For: 9.9.9.9\r\n",
               fe="option forwardfor if-none", be="option forwardfor")
    assert req.header_all("x-forwarded-for") == ["9.9.9.9", "127.0.0.1"], req.head


def test_forwardfor_on_every_keep_alive_request(cfg, sluice, origin):
    port = free_port()
    sluice(cfg(config(port, origin.port, fe="option forwardfor")), wait_ports=[port])
    with Conn(port) as c:
        for _ in range(3):
            c.send(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
            assert c.response().status == 200
    assert [r.header_all("x-forwarded-for") for r in origin.wait_requests(3)] == [["127.0.0.1"]] * 3

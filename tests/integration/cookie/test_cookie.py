"""Cookie-based server persistence and `capture cookie`, checked on the wire and in the
httplog line (%CC %CS and the cookie flags of %tsc). Every expectation was taken from HAProxy
3.5 with the same configuration; the tests pass against it too (SLUICE_BIN pointing at a
wrapper that runs `haproxy -db "$@"`)."""
from __future__ import annotations

import re
import socket

import pytest

from http_origin import HttpOrigin
from cookie_util import dyn, get as _get
from sluice_harness import free_port

LOG = re.compile(r"\] fe fe/(?P<s>\S+) \S+ (?P<st>-?\d+) \d+ (?P<cc>\S+) (?P<cs>\S+) "
                 r"(?P<tsc>\S{4}) .* \"(?P<req>[^\"]*)\"$")


@pytest.fixture
def origins():
    os_ = [HttpOrigin(), HttpOrigin()]
    yield os_
    for o in os_:
        o.stop()


def _cfg(port, origins, log_port, body, a_opts="cookie A", b_opts="cookie B"):
    return f"""
global
    log 127.0.0.1:{log_port} format raw local0
defaults
    mode http
    log global
    option httplog
    timeout connect 2s
    timeout client 5s
    timeout server 5s
listen fe
    bind 127.0.0.1:{port}
{body}
    server a 127.0.0.1:{origins[0].port} {a_opts}
    server b 127.0.0.1:{origins[1].port} {b_opts}
"""


def _start(sluice, cfg, origins, udp_log, body, **kw):
    port = free_port()
    sluice(cfg(_cfg(port, origins, udp_log.port, body, **kw)), wait_ports=[port])
    return port


def _hdrs(headers, name):
    return [v for n, v in headers if n == name]


def _log(udp_log, path):
    msg = udp_log.wait_for(lambda m: f"{path} HTTP/1.1\"" in m)
    m = LOG.search(msg.rstrip("\n"))
    assert m, msg
    return m.groupdict()


def _seen(origin, path):
    """The Cookie field the origin got for `path` (None: no request, "" no field)."""
    for r in origin.requests():
        if r.target.startswith(path):
            return r.header("cookie") or ""
    return None


def test_insert_indirect(cfg, sluice, origins, udp_log):
    port = _start(sluice, cfg, origins, udp_log, "    cookie SRV insert indirect nocache\n"
                  "    capture cookie SRV len 10")
    st, h = _get(port, "/n1")
    assert st == 200
    srv = "A" if _seen(origins[0], "/n1") is not None else "B"
    assert _hdrs(h, "set-cookie") == [f"SRV={srv}; path=/"]
    assert _hdrs(h, "cache-control") == []   # no freshness nor validator: not cacheable
    f = _log(udp_log, "/n1")
    assert (f["cc"], f["cs"], f["tsc"]) == ("-", "-", "--NI")
    # A valid cookie: that server, the cookie hidden from it, nothing inserted.
    st, h = _get(port, "/v1", cookie="x=1; SRV=B; y=2")
    assert _seen(origins[1], "/v1") == "x=1; y=2"
    assert _hdrs(h, "set-cookie") == []
    f = _log(udp_log, "/v1")
    assert (f["s"], f["cc"], f["tsc"]) == ("b", "SRV=B", "--VN")
    st, h = _get(port, "/v2", cookie="SRV=A")
    assert _seen(origins[0], "/v2") == ""
    assert _log(udp_log, "/v2")["tsc"] == "--VN"
    # Unknown and empty values are invalid; a cacheable response gets cache-control: private.
    st, h = _get(port, "/hdr?Expires=Thu&p=i1", cookie="SRV=Z")
    assert _hdrs(h, "cache-control") == ["private"]
    assert _log(udp_log, "p=i1")["tsc"] == "--II"
    _get(port, "/i2", cookie="SRV=")
    assert _log(udp_log, "/i2")["tsc"] == "--II"
    # The server's own persistence cookie is deleted (direct access) and captured.
    st, h = _get(port, "/hdr?Set-Cookie=SRV%3Dfoo&p=d", cookie="SRV=A")
    assert _hdrs(h, "set-cookie") == []
    f = _log(udp_log, "p=d")
    assert (f["cs"], f["tsc"]) == ("SRV=foo", "--VD")


def test_insert_postonly_and_attributes(cfg, sluice, origins, udp_log):
    port = _start(sluice, cfg, origins, udp_log,
                  "    cookie SRV insert postonly httponly secure domain .example.com "
                  "domain .foo.org attr SameSite=Lax")
    st, h = _get(port, "/g")
    assert _hdrs(h, "set-cookie") == []
    assert _log(udp_log, "/g")["tsc"] == "--NN"
    st, h = _get(port, "/p", method="POST")
    (c,) = _hdrs(h, "set-cookie")
    assert re.fullmatch(r"SRV=[AB]; path=/; domain=\.example\.com; domain=\.foo\.org; HttpOnly; "
                        r"Secure; SameSite=Lax", c), c
    assert _log(udp_log, "/p")["tsc"] == "--NI"


def test_rewrite_and_prefix(cfg, sluice, origins, udp_log):
    port = _start(sluice, cfg, origins, udp_log, "    cookie SRV rewrite")
    st, h = _get(port, "/hdr?Set-Cookie=SRV%3Dfoo%3B%20path%3D%2F&p=r1", cookie="SRV=A")
    assert _hdrs(h, "set-cookie") == ["SRV=A; path=/"]
    assert _seen(origins[0], "/hdr") == "SRV=A"
    assert _log(udp_log, "p=r1")["tsc"] == "--VR"
    _get(port, "/r2", cookie="SRV=B~xyz")
    assert _log(udp_log, "/r2")["tsc"] == "--IN"


def test_prefix(cfg, sluice, origins, udp_log):
    port = _start(sluice, cfg, origins, udp_log, "    cookie SRV prefix")
    _get(port, "/p1", cookie="a=1; SRV=B~xyz; b=2")
    assert _seen(origins[1], "/p1") == "a=1; SRV=xyz; b=2"
    assert _log(udp_log, "/p1")["tsc"] == "--VN"
    st, h = _get(port, "/hdr?Set-Cookie=SRV%3Dfoo&p=p2", cookie="SRV=A")
    assert _hdrs(h, "set-cookie") == ["SRV=A~foo"]
    assert _log(udp_log, "p=p2")["tsc"] == "--VR"


def test_no_mode_persists_without_flags(cfg, sluice, origins, udp_log):
    port = _start(sluice, cfg, origins, udp_log, "    cookie SRV")
    for i in range(3):
        _get(port, f"/m{i}", cookie="SRV=B")
        assert _seen(origins[1], f"/m{i}") == "SRV=B"
        assert _log(udp_log, f"/m{i}")["tsc"] == "----"


@pytest.mark.parametrize("extra,path,server,tsc", [
    ("", "/x", "b", "--DI"),
    ("    option persist", "/x", "a", "--DN"),
    ("    force-persist if { path /fp }", "/fp", "a", "--DN"),
])
def test_down_server(cfg, sluice, origins, udp_log, extra, path, server, tsc):
    port = _start(sluice, cfg, origins, udp_log, "    cookie SRV insert indirect\n" + extra,
                  a_opts="cookie A disabled")
    st, h = _get(port, path, cookie="SRV=A")
    assert st == 200
    f = _log(udp_log, path)
    assert (f["s"], f["tsc"]) == (server, tsc)


def test_ignore_persist(cfg, sluice, origins, udp_log):
    port = _start(sluice, cfg, origins, udp_log,
                  "    cookie SRV insert indirect\n    ignore-persist if { path /ip }")
    for i in range(2):
        st, h = _get(port, "/ip", cookie="SRV=B")
        assert _hdrs(h, "set-cookie") == []
    f = _log(udp_log, "/ip")
    assert f["tsc"] == "--UN"


def test_persist_redispatch_when_refused(cfg, sluice, origins, udp_log):
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    dead_port = dead.getsockname()[1]   # bound, not listening: refused
    try:
        port = free_port()
        text = _cfg(port, origins, udp_log.port,
                    "    cookie SRV insert indirect\n    option persist\n    option redispatch\n"
                    "    retries 1\n    timeout connect 500ms").replace(
            f"127.0.0.1:{origins[0].port} cookie A", f"127.0.0.1:{dead_port} cookie A disabled")
        sluice(cfg(text), wait_ports=[port])
        st, h = _get(port, "/rd", cookie="SRV=A")
        assert st == 200
        assert _hdrs(h, "set-cookie") == ["SRV=B; path=/"]
        f = _log(udp_log, "/rd")
        assert (f["s"], f["tsc"]) == ("b", "--DI")
    finally:
        dead.close()


def test_maxidle_dates(cfg, sluice, origins, udp_log):
    port = _start(sluice, cfg, origins, udp_log, "    cookie SRV insert indirect maxidle 30m maxlife 2h")
    st, h = _get(port, "/d1")
    (c,) = _hdrs(h, "set-cookie")
    m = re.fullmatch(r"SRV=([AB])\|([A-Za-z0-9+/]{5})\|([A-Za-z0-9+/]{5}); path=/", c)
    assert m, c
    # A date too old has expired: load balanced again, logged E.
    _get(port, "/d2", cookie=f"SRV={m.group(1)}|aaaaa")
    assert _log(udp_log, "/d2")["tsc"] == "--EI"
    # Without a date the cookie is valid and its dates are set (U: updated).
    st, h = _get(port, "/d3", cookie="SRV=A")
    assert _log(udp_log, "/d3")["tsc"] == "--VU"
    assert re.fullmatch(r"SRV=A\|[A-Za-z0-9+/]{5}\|[A-Za-z0-9+/]{5}; path=/", _hdrs(h, "set-cookie")[0])


def test_dynamic_cookie(cfg, sluice, origins, udp_log):
    port = _start(sluice, cfg, origins, udp_log,
                  "    cookie SRV insert dynamic\n    dynamic-cookie-key mykey", a_opts="", b_opts="")
    _get(port, "/dy", cookie=None)
    st, h = _get(port, "/dy2")
    (c,) = _hdrs(h, "set-cookie")
    want = {f"SRV={dyn('mykey', o.port)}; path=/" for o in origins}
    assert c in want, (c, want)
    value = c.split(";")[0].split("=", 1)[1]
    _get(port, "/dy3", cookie=f"SRV={value}")
    assert _log(udp_log, "/dy3")["tsc"] == "--VN"

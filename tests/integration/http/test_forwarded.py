"""`option forwarded` (RFC 7239) and `option originalto`: the fields the server gets, their
parameters and quoting (IPv6, ports, obfuscated identifiers from expressions), a client's own
Forwarded field extended, the order beside x-forwarded-for, `except`, a wildcard bind, and the
configuration messages. The expected bytes are HAProxy 3.5-dev5's (this file passes with
SLUICE_BIN pointing at a wrapper that runs it with -db)."""
from __future__ import annotations

import socket


from sluice_harness import HTTP_DEFAULTS, config_refused, free_port, has_ipv6_loopback, run_sluice

SHOW = ('http-request return status 200 content-type text/plain lf-string '
        '"fwd=[%[req.fhdr(forwarded)]] xo=[%[req.hdr(x-original-to)]] xo2=[%[req.hdr(x-orig)]]\\n"')


def get(port: int, path: str, headers: str = "Host: www.x\r\n", host: str = "127.0.0.1") -> bytes:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as c:
        c.settimeout(5)
        c.connect((host, port))
        c.sendall(f"GET {path} HTTP/1.1\r\n{headers}Connection: close\r\n\r\n".encode())
        got = b""
        while d := c.recv(65536):
            got += d
    return got.partition(b"\r\n\r\n")[2]


def test_forwarded_parameters(cfg, sluice):
    port, echo = free_port(), free_port()
    v6 = has_ipv6_loopback()
    text = f"""
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{port}
    {f"bind [::1]:{port}" if v6 else ""}
    use_backend b2 if {{ path /2 }}
    use_backend b3 if {{ path /3 }}
    use_backend b4 if {{ path /4 }}
    use_backend b5 if {{ path /5 }}
    default_backend b1
backend b1
    option forwarded
    server e 127.0.0.1:{echo}
backend b2
    option forwarded proto host by by_port for for_port
    server e 127.0.0.1:{echo}
backend b3
    option forwarded host-expr str(h.example) by-expr str(_hidden) for-expr str(_anon) by_port-expr str(_p) for_port-expr int(99)
    server e 127.0.0.1:{echo}
backend b4
    option forwarded proto
    option originalto
    server e 127.0.0.1:{echo}
backend b5
    option originalto header X-Orig except 127.0.0.0/8
    option forwarded for_port
    server e 127.0.0.1:{echo}
listen echo
    bind 127.0.0.1:{echo}
    {SHOW}
"""
    s = sluice(cfg(text), wait_ports=[port, echo])
    assert get(port, "/1") == b"fwd=[proto=http;for=127.0.0.1] xo=[] xo2=[]\n"
    got = get(port, "/2")
    assert got.startswith(b'fwd=[proto=http;host="www.x";by="127.0.0.1:%d";for="127.0.0.1:'
                          % port), got
    assert get(port, "/3") == b'fwd=[host="h.example";by="_hidden:_p";for="_anon:99"] xo=[] xo2=[]\n'
    assert get(port, "/4") == b"fwd=[proto=http] xo=[127.0.0.1] xo2=[]\n"
    # A port without its node: left out, with HAProxy's warning; the field stays, empty. The
    # destination is in `except`: no X-Orig.
    assert get(port, "/5") == b"fwd=[] xo=[] xo2=[]\n"
    assert ("'option forwarded' : 'for_port-expr' will be ignored because both 'for' and "
            "'for-expr' are unset") in s.stderr()
    # No Host: an empty quoted host.
    assert get(port, "/2", headers="").startswith(b'fwd=[proto=http;host="";by=')
    # The client's own Forwarded field gets one more element.
    got = get(port, "/1", headers="Host: x\r\nForwarded: for=1.1.1.1\r\n")
    assert got == b"fwd=[for=1.1.1.1,proto=http;for=127.0.0.1] xo=[] xo2=[]\n", got
    if v6:
        got = get(port, "/2", host="::1")
        assert got.startswith(b'fwd=[proto=http;host="www.x";by="[::1]:%d";for="[::1]:' % port), got


def test_order_and_wildcard_bind(cfg, sluice, origin):
    port = free_port()
    text = f"""
{HTTP_DEFAULTS}
frontend f
    bind :{port}
    option forwardfor
    option originalto
    default_backend b
backend b
    option forwarded
    option forwardfor header x-b
    server o 127.0.0.1:{origin.port}
"""
    sluice(cfg(text), wait_ports=[port])
    raw = get(port, "/echo", headers="Host: h\r\nForwarded: for=9.9.9.9\r\nforwarded: by=1.2.3.4\r\n")
    head = raw.split(b"\r\n\r\n")[0].lower().split(b"\r\n")
    fields = [l for l in head if l.split(b":")[0] in (b"forwarded", b"x-b", b"x-original-to",
                                                      b"x-forwarded-for")]
    # The last Forwarded field extended; then the backend's x-forwarded-for name, then the
    # address the client really reached (the bind is a wildcard).
    assert fields == [b"forwarded: for=9.9.9.9", b"forwarded: by=1.2.3.4,proto=http;for=127.0.0.1",
                      b"x-b: 127.0.0.1", b"x-original-to: 127.0.0.1"], head


def test_configuration_messages(cfg):
    base = f"{HTTP_DEFAULTS}\nbackend s\n"
    config_refused(cfg(base + "    option forwarded foo\n"),
                   "'option forwarded' only supports optional values: 'proto', 'host', "
                   "'host-expr', 'by', 'by-expr', 'by_port', 'by_port-expr', 'for', 'for-expr', "
                   "'for_port' and 'for_port-expr'.")
    config_refused(cfg(base + "    option forwarded host-expr\n"),
                   "'host-expr' expects <expr> as argument.")
    config_refused(cfg(base + "    option forwarded for-expr nosuchfetch\n"),
                   "failed to parse 'option forwarded' expression 'nosuchfetch' in : unknown "
                   "fetch method 'nosuchfetch'")
    config_refused(cfg(base + "    option originalto foo\n"),
                   "'option originalto' only supports optional values: 'except' and 'header'.")
    config_refused(cfg(base + "    option originalto except\n"),
                   "'option originalto except' expects <address>[/mask] as argument.")
    config_refused(cfg(base + "    option originalto header\n"),
                   "'option originalto header' expects <header_name> as argument.")
    rc, _, err = run_sluice(["-c", "-f", str(cfg(f"{HTTP_DEFAULTS}\nfrontend s\n    bind :1\n"
                                                  "    option forwarded\n"))])
    assert rc == 0 and "'option forwarded' ignored because frontend 's' has no backend " \
                       "capability." in err, err
    rc, _, err = run_sluice(["-c", "-f", str(cfg(f"{HTTP_DEFAULTS.replace('mode http', 'mode tcp')}"
                                                  "\nbackend s\n    option forwarded\n"
                                                  "    option originalto\n"))])
    assert rc == 0 and "'option forwarded' ignored for backend 's' as it requires HTTP mode." in err
    assert "'option originalto' ignored for backend 's' as it requires HTTP mode." in err

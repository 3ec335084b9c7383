"""The stats page's admin actions and access rules without a browser, byte for byte: `stats
admin if|unless <cond>` and the POSTed form (Content-Length, chunked, `Expect: 100-continue`),
the 303 answers and their codes, `stats http-request` rules (deny, auth through a userlist,
allow) and the configuration errors. The expected bytes and texts are HAProxy 3.5-dev5's (this
file passes with SLUICE_BIN pointing at a wrapper that runs it with -db)."""
from __future__ import annotations

import base64
import socket


import sluice_harness as h
from clients import exchange
from sluice_harness import HTTP_DEFAULTS, config_refused, free_port
from stats_layout import SERVER_STATES


def redirect(location: str) -> bytes:
    """HAProxy's answer to a POST (the requests here say `Connection: close`)."""
    return (b"HTTP/1.1 303 See Other\r\ncache-control: no-cache\r\ncontent-type: text/plain\r\n"
            b"content-length: 0\r\nlocation: " + location.encode() + b"\r\nconnection: close\r\n"
            b"\r\n")


def post(port: int, body: str, extra: str = "") -> bytes:
    return exchange(port, f"POST /stats HTTP/1.1\r\nHost: t\r\n{extra}Content-Type: "
                          f"application/x-www-form-urlencoded\r\nContent-Length: {len(body)}\r\n"
                          f"Connection: close\r\n\r\n{body}".encode())


def head_of(raw: bytes) -> bytes:
    return raw.partition(b"\r\n\r\n")[0] + b"\r\n\r\n"


def test_admin_actions_by_post(layout):
    lay = layout("    stats admin if { src 127.0.0.1 }\n")
    b = "%23" + lay.iid("app_be")
    done = redirect("/stats;st=DONE")
    # Content-Length: two servers to maintenance, the backend by its id.
    got = post(lay.sport, f"s=web1&s=web4&action=maint&b={b}")
    assert got == done, got
    lay.wait_status("web1", "MAINT")
    lay.wait_status("web4", "MAINT")
    assert lay.status("web2") == "DOWN"
    # Chunked, the backend by its name: back to ready.
    body = "s=web4&action=ready&b=app_be"
    got = exchange(lay.sport, (f"POST /stats HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n"
                               f"Connection: close\r\n\r\n5\r\n{body[:5]}\r\n{len(body) - 5:x}\r\n"
                               f"{body[5:]}\r\n0\r\n\r\n").encode())
    assert got == done, got
    lay.wait_status("web4", "no check")
    # `Expect: 100-continue`: the client is told to send its body, then answered.
    body = "s=web1&action=ready&b=app_be"
    with socket.create_connection(("127.0.0.1", lay.sport), timeout=5) as c:
        c.sendall(f"POST /stats HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: "
                  f"{len(body)}\r\nConnection: close\r\n\r\n".encode())
        first = c.recv(4096)
        assert first == b"HTTP/1.1 100 Continue\r\n\r\n", first
        c.sendall(body.encode())
        got = b""
        while d := c.recv(65536):
            got += d
    assert got == done, got
    lay.wait_status("web1", "UP")
    # The result page shows the banner.
    page = h.http_get(lay.sport, "/stats;st=DONE")
    assert b"Action processed successfully." in page, page[:3000]


def test_admin_codes(layout):
    lay = layout("    stats admin if TRUE\n")

    def code(body: str) -> bytes:
        got = post(lay.sport, body)
        assert got.startswith(b"HTTP/1.1 303 See Other\r\n"), got
        return got.split(b"location: /stats;st=", 1)[1].split(b"\r\n", 1)[0]

    assert code("") == b"NONE"
    assert code("action=maint&b=app_be") == b"NONE"
    assert code("s=nosuch&action=maint&b=app_be") == b"ERRP"
    assert code("s=web1&action=nosuch&b=app_be") == b"ERRP"
    assert code("s=web1&action=maint&b=nosuch") == b"ERRP"
    assert code("s=web1&s=nosuch&action=drain&b=app_be") == b"PART"
    lay.wait_status("web1", "DRAIN")
    assert code("s=web1&action=ready&b=app_be") == b"DONE"
    lay.wait_status("web1", "UP")
    for server, status in SERVER_STATES.items():
        assert lay.status(server) == status, server


def test_admin_denied_without_its_condition(layout):
    lay = layout("    stats admin if FALSE\n")
    got = post(lay.sport, "s=web1&action=maint&b=app_be")
    assert got == redirect("/stats;st=DENY"), got
    assert lay.status("web1") == "UP"
    # The page without admin rights has no form.
    page = h.http_get(lay.sport, "/stats")
    assert b'type="checkbox"' not in page and b'method="post"' not in page.lower(), page[:2000]


UNAUTHORIZED = (b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 112\r\ncache-control: no-cache\r\n"
                b"content-type: text/html\r\nwww-authenticate: Basic realm=\"%s\"\r\n"
                b"connection: close\r\n\r\n")


def get(port: int, path: str, auth: str | None = None) -> bytes:
    hdr = ""
    if auth is not None:
        hdr = "Authorization: Basic " + base64.b64encode(auth.encode()).decode() + "\r\n"
    return exchange(port, f"GET {path} HTTP/1.1\r\nHost: t\r\n{hdr}Connection: close\r\n\r\n"
                          .encode())


def test_stats_http_request_rules(cfg, sluice, origin):
    port, port2 = free_port(), free_port()
    text = f"""
{HTTP_DEFAULTS}
userlist ops
    user alice insecure-password wonder
listen stats
    bind 127.0.0.1:{port}
    stats uri /stats
    stats http-request deny if {{ path_beg /stats/private }}
    stats http-request allow if {{ path_beg /stats/open }}
    stats http-request auth realm Operators unless {{ http_auth(ops) }}
    server o 127.0.0.1:{origin.port}
listen stats2
    bind 127.0.0.1:{port2}
    stats uri /s
    stats http-request auth
"""
    sluice(cfg(text), wait_ports=[port, port2])
    got = get(port, "/stats")
    assert head_of(got) == UNAUTHORIZED % b"Operators", got
    assert get(port, "/stats", "alice:wonder").startswith(b"HTTP/1.1 200 OK\r\n")
    assert get(port, "/stats", "alice:nope").startswith(b"HTTP/1.1 401 ")
    assert get(port, "/stats/private", "alice:wonder").startswith(b"HTTP/1.1 403 Forbidden\r\n")
    assert get(port, "/stats/open").startswith(b"HTTP/1.1 200 OK\r\n")
    # The rules only see the page's requests: others go to the server.
    got = get(port, "/other")
    assert got.startswith(b"HTTP/1.1 200 OK\r\n") and b"Statistics Report" not in got, got
    # `stats http-request auth` without a realm: the page's realm, not the proxy's name.
    assert head_of(get(port2, "/s")) == UNAUTHORIZED % b"HAProxy Statistics"


def test_stats_rules_configuration_errors(cfg):
    base = f"{HTTP_DEFAULTS}\nlisten s\n    bind 127.0.0.1:{free_port()}\n    stats uri /st\n"
    config_refused(cfg(base + "    stats auth a:b\n    stats http-request deny if FALSE\n"),
                   "proxy 's': stats 'auth'/'realm' and 'http-request' can't be used at the same "
                   "time.")
    config_refused(cfg(base + "    stats realm R\n    stats http-request allow\n"),
                   "proxy 's': stats 'auth'/'realm' and 'http-request' can't be used at the same "
                   "time.")
    path = cfg(base + "    stats admin\n")
    config_refused(path, f"parsing [{path}:{h.line_of(path, 'stats admin')}] : 'stats admin' "
                         "requires either 'if' or 'unless' followed by a condition.")
    path = cfg(HTTP_DEFAULTS + "    stats admin if TRUE\n")
    config_refused(path, "'stats admin' not allowed in 'defaults' section.")
    path = cfg(HTTP_DEFAULTS + "    stats http-request deny\n")
    config_refused(path, "'stats' not allowed in 'defaults' section.")

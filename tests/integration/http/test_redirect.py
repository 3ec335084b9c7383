"""The `redirect` keyword and the options of redirects (keyword and http-request action alike),
as HAProxy 3.5 answers them: plain-text targets for the keyword (log-format for the action),
prefix and scheme with the request's path and query, drop-query, keep-query, append-slash
(after the query when one is kept, as HAProxy does), ignore-empty, set-cookie, set-cookie-fmt,
clear-cookie, codes, the order against http-request rules and in a backend, and HAProxy's
messages for mistakes. The expected answers are HAProxy 3.5-dev5's (this file passes with
SLUICE_BIN pointing at a wrapper that runs it with -db)."""
from __future__ import annotations

import socket

from sluice_harness import HTTP_DEFAULTS, config_refused, free_port


def ask(port: int, target: str, headers: str = "Host: ex.com\r\n", version: str = "1.1") -> dict:
    """Status, and the location, set-cookie and cache-control fields of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(f"GET {target} HTTP/{version}\r\n{headers}Connection: close\r\n\r\n".encode())
        got = b""
        while d := c.recv(65536):
            got += d
    head = got.split(b"\r\n\r\n", 1)[0].decode().split("\r\n")
    out = {"status": int(head[0].split(" ")[1])}
    for line in head[1:]:
        name, _, value = line.partition(":")
        if name.lower() in ("location", "set-cookie", "cache-control"):
            out[name.lower()] = value.strip()
    return out


def test_redirect_keyword(cfg, sluice):
    port = free_port()
    sluice(cfg(f"""
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{port}
    redirect prefix /new code 301 if {{ path_beg /a }}
    redirect prefix / drop-query append-slash if {{ path_beg /b }}
    redirect prefix https://x.example set-cookie SEEN=1 if {{ path_beg /c }}
    redirect location /loc clear-cookie SEEN if {{ path_beg /d }}
    redirect scheme https if {{ path_beg /e }}
    redirect location /kq keep-query if {{ path_beg /f }}
    redirect location /lf%[path] if {{ path_beg /j }}
    redirect prefix /p append-slash if {{ path_beg /q }}
    http-request redirect location /hr if {{ path_beg /i }}
    redirect location /after-hr if {{ path_beg /i }}
    default_backend b
backend b
    redirect location /inbe code 303 if {{ path_beg /zbe }}
    http-request return status 200 content-type text/plain string fallthrough if !{{ path_beg /zbe }}
"""), wait_ports=[port])
    assert ask(port, "/a/x?q=1") == {"status": 301, "location": "/new/a/x?q=1"}
    nc = {"cache-control": "no-cache"}
    assert ask(port, "/b/x?q=1") == {"status": 302, "location": "/b/x/", **nc}
    assert ask(port, "/b/x/?q") == {"status": 302, "location": "/b/x/", **nc}
    assert ask(port, "/b") == {"status": 302, "location": "/b/", **nc}
    assert ask(port, "/c?z") == {"status": 302, "location": "https://x.example/c?z",
                                 "set-cookie": "SEEN=1; path=/;", **nc}
    assert ask(port, "/d") == {"status": 302, "location": "/loc",
                               "set-cookie": "SEEN; path=/; Max-Age=0;", **nc}
    assert ask(port, "/e/y?k=v") == {"status": 302, "location": "https://ex.com/e/y?k=v", **nc}
    assert ask(port, "/e/y", headers="", version="1.0")["location"] == "https:///e/y"
    assert ask(port, "/f?x=1")["location"] == "/kq?x=1"
    assert ask(port, "/f")["location"] == "/kq"
    # The keyword's target is plain text, never a log-format string.
    assert ask(port, "/j/k?z")["location"] == "/lf%[path]"
    # append-slash without drop-query: after the query, as HAProxy writes it.
    assert ask(port, "/q/x?k=1")["location"] == "/p/q/x?k=1/"
    assert ask(port, "/q/x/")["location"] == "/p/q/x/"
    # http-request rules run first, wherever they are written.
    assert ask(port, "/i")["location"] == "/hr"
    assert ask(port, "/zbe/1") == {"status": 303, "location": "/inbe", **nc}
    assert ask(port, "/zz")["status"] == 200


def test_redirect_action_options(cfg, sluice):
    port = free_port()
    sluice(cfg(f"""
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{port}
    http-request redirect location /k keep-query set-cookie-fmt A=%[path] if {{ path_beg /k }}
    http-request redirect location %[req.hdr(x-to)] ignore-empty if {{ path_beg /i }}
    http-request redirect prefix /p keep-query clear-cookie B=x if {{ path_beg /p }}
    http-request redirect location /lf%[path] code 308 set-cookie C if {{ path_beg /l }}
    default_backend b
backend b
    http-request return status 200 content-type text/plain string fallthrough
"""), wait_ports=[port])
    assert ask(port, "/k/1?q=2") == {"status": 302, "location": "/k?q=2", "set-cookie": "A=/k/1; path=/;",
                                     "cache-control": "no-cache"}
    # ignore-empty: an empty location leaves the rule out.
    assert ask(port, "/i") == {"status": 200}
    assert ask(port, "/i?a=b", headers="Host: ex.com\r\nx-to: /dest\r\n")["location"] == "/dest"
    assert ask(port, "/p/x?y")["set-cookie"] == "B=x; path=/; Max-Age=0;"
    assert ask(port, "/p/x?y")["location"] == "/p/p/x?y"
    assert ask(port, "/l/z") == {"status": 308, "location": "/lf/l/z", "set-cookie": "C; path=/;"}


def test_redirect_errors(cfg):
    cases = [
        ("redirect location /x foo", "error detected in frontend 'f' while parsing redirect rule : "
         "expects 'code', 'prefix', 'location', 'scheme', 'set-cookie', 'set-cookie-fmt', 'clear-cookie', "
         "'drop-query', 'keep-query', 'ignore-empty' or 'append-slash' (was 'foo')."),
        ("redirect code 305 location /x", "error detected in frontend 'f' while parsing redirect rule : "
         "'code': unsupported HTTP code '305' (must be one of 301, 302, 303, 307 or 308)."),
        ("redirect location", "error detected in frontend 'f' while parsing redirect rule : missing "
         "argument for 'location'."),
        ("redirect", "error detected in frontend 'f' while parsing redirect rule : redirection type "
         "expected ('prefix', 'location', or 'scheme')."),
        ("redirect location /x if foo", "error detected in frontend 'f' while parsing redirect rule : "
         "error in condition: no such ACL : 'foo'."),
        ("http-request redirect location /x set-cookie", "error detected in frontend 'f' while parsing "
         "'http-request redirect' rule : missing argument for 'set-cookie'."),
        ("http-request redirect", "error detected in frontend 'f' while parsing 'http-request redirect' "
         "rule : redirection type expected ('prefix', 'location', or 'scheme')."),
    ]
    for rule, message in cases:
        path = cfg(f"""
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{free_port()}
    {rule}
""")
        config_refused(path, message)
    path = cfg(f"""
{HTTP_DEFAULTS}
    redirect prefix /d
frontend f
    bind 127.0.0.1:{free_port()}
""")
    config_refused(path, "'redirect' not allowed in 'defaults' section.")


def test_redirect_to_https_unless_ssl_fc(cfg, sluice):
    # The most common redirect of real configurations. sluice's connections are never TLS (it
    # has no TLS transport yet), so ssl_fc is false and a plain-HTTP frontend redirects.
    port, port2 = free_port(), free_port()
    sluice(cfg(f"""
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{port}
    http-request return status 200 if {{ ssl_fc }} || {{ ssl_bc }}
    redirect scheme https code 301 if !{{ ssl_fc }}
frontend g
    bind 127.0.0.1:{port2}
    http-request redirect scheme https unless {{ ssl_fc }}
"""), wait_ports=[port, port2])
    got = ask(port, "/a?b=1")
    assert got["status"] == 301 and got["location"] == "https://ex.com/a?b=1", got
    got = ask(port2, "/c")
    assert got["status"] == 302 and got["location"] == "https://ex.com/c", got

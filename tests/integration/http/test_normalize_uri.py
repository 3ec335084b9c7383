"""`http-request normalize-uri`, which HAProxy 3.5 only loads with `expose-experimental-
directives`: the normalizers applied to what the rules and the server see, a strict one
answering 400, and the refusal without the global keyword. The answers are HAProxy
3.5-dev5's (this file passes with SLUICE_BIN pointing at a wrapper that runs it with -db)."""
from __future__ import annotations

from clients import exchange
from sluice_harness import HTTP_DEFAULTS, config_refused, free_port

SHOW = 'http-request return status 200 content-type text/plain lf-string "[%[url]]\\n"'


def test_normalizers(cfg, sluice):
    port = free_port()
    text = f"""
global
    expose-experimental-directives
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{port}
    http-request normalize-uri path-merge-slashes
    http-request normalize-uri path-strip-dot
    http-request normalize-uri path-strip-dotdot full
    http-request normalize-uri percent-decode-unreserved
    http-request normalize-uri percent-to-uppercase strict if {{ path_beg /strict }}
    http-request normalize-uri query-sort-by-name
    {SHOW}
"""
    sluice(cfg(text), wait_ports=[port])

    def url(target: str) -> bytes:
        got = exchange(port, f"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                       .encode())
        return got.partition(b"\r\n\r\n")[2] if got.startswith(b"HTTP/1.1 200") else got[:12]

    assert url("/a//b/./c/../../d/%7e%41?z=1&b=2&a") == b"[/a/d/~A?a&b=2&z=1]\n"
    assert url("/../x/%2f") == b"[/x/%2f]\n"
    assert url("/strict/%aa") == b"[/strict/%AA]\n"
    assert url("/strict/%zz") == b"HTTP/1.1 400"


def test_needs_expose_experimental_directives(cfg):
    path = cfg(f"{HTTP_DEFAULTS}\nfrontend f\n    bind 127.0.0.1:{free_port()}\n"
               "    http-request normalize-uri path-merge-slashes\n")
    config_refused(path, "'normalize-uri' action is experimental, must be allowed via a global "
                         "'expose-experimental-directives'")

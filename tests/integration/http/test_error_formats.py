"""http-error replies whose payload or fields are log-format strings (lf-string, lf-file, hdr
<fmt>), rendered for each answer with what the stream knows then, as HAProxy 3.5 renders them:
the request as the rules left it, its variables, the addresses, the backend and the status
being answered (%ST). Passes with SLUICE_BIN pointing at HAProxy 3.5 -db."""
from __future__ import annotations

import socket

from sluice_harness import HTTP_DEFAULTS, config_refused, free_port


def ask(port: int, req: str) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(req.encode())
        got = b""
        while d := c.recv(65536):
            got += d
    return got.decode()


def get(port: int, path: str, host: str = "foo") -> str:
    return ask(port, f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n")


def test_log_format_error_pages(cfg, sluice, tmp_path):
    (tmp_path / "page.txt").write_text("file %[path] %[var(txn.x)]\n", newline="")
    p1, p2 = free_port(), free_port()
    sluice(cfg(f"""
{HTTP_DEFAULTS}
frontend f1
    bind 127.0.0.1:{p1}
    http-request set-var(txn.x) str(hello)
    http-request deny if {{ path_beg /d }}
    http-error status 503 content-type text/plain lf-string "host=%[req.hdr(host)] path=%[path] ci=%ci st=%ST %[var(txn.x)] %[be_name]"
    http-error status 403 content-type text/plain lf-string "denied %[path] %[req.body]" hdr x-h "%[req.hdr(host)]" hdr x-lit lit
    default_backend empty
backend empty
frontend f2
    bind 127.0.0.1:{p2}
    http-request set-var(txn.x) str(from-f2)
    http-request deny deny_status 404
    http-error status 404 content-type text/html lf-file {tmp_path}/page.txt
"""), wait_ports=[p1, p2])
    # A 503 from the backend (no server): the request has left the rules; the page still
    # sees it, its variables and the backend.
    got = get(p1, "/abc")
    head, body = got.split("\r\n\r\n", 1)
    assert head.startswith("HTTP/1.1 503 Service Unavailable\r\n")
    assert "content-type: text/plain" in head.lower()
    assert body == "host=foo path=/abc ci=127.0.0.1 st=503 hello empty"
    assert f"content-length: {len(body)}" in head.lower()
    # A deny answered while the rules run: fields first, each rendered; the body is read.
    got = ask(p1, "POST /d HTTP/1.1\r\nHost: bar\r\nContent-Length: 3\r\nConnection: close\r\n\r\nxyz")
    head, body = got.split("\r\n\r\n", 1)
    assert head.startswith("HTTP/1.1 403 Forbidden\r\n")
    lines = head.lower().split("\r\n")
    assert "x-h: bar" in lines and "x-lit: lit" in lines
    assert body == "denied /d xyz"
    # Each answer is rendered anew.
    assert get(p1, "/zz", host="other").endswith("host=other path=/zz ci=127.0.0.1 st=503 hello empty")
    # lf-file: the file is a log-format string.
    got = get(p2, "/q")
    head, body = got.split("\r\n\r\n", 1)
    assert head.startswith("HTTP/1.1 404 Not Found\r\n")
    assert "content-type: text/html" in head.lower()
    assert body == "file /q from-f2\n"


def test_log_format_error_page_mistakes(cfg):
    cases = [
        ('http-error status 503 content-type text/plain lf-string "%[nosuchfetch]"',
         "http-error : failed to parse sample expression <nosuchfetch]> : unknown fetch method 'nosuchfetch'"),
        ('http-error status 503 content-type text/plain lf-string',
         "http-error : 'lf-string' expects <fmt> as argument"),
        ('http-error status 503 lf-string "x%[path]"',
         "http-error : a content type must be defined with a log-format payload"),
        ('http-error status 503 content-type text/plain lf-file /nonexist',
         "http-error : error opening file '/nonexist'"),
    ]
    for line, message in cases:
        config_refused(cfg(f"{HTTP_DEFAULTS}\nfrontend f\n    bind 127.0.0.1:1\n    {line}\n"), message)

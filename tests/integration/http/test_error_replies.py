"""http-errors sections, errorfiles, errorloc*, http-error and the http reply options errorfile
and errorfiles, as HAProxy 3.5 answers them: a later line overrides an earlier one for its
status, a section's file is sent as written, errorloc redirects, http-error builds a reply
(hdr fields first, as a return rule's). Passes with SLUICE_BIN pointing at HAProxy 3.5 -db."""
from __future__ import annotations

import socket

from sluice_harness import HTTP_DEFAULTS, config_refused, free_port

F403 = "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nX-Custom: yes\r\n\r\ncustom 403\n"
A403 = "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n\r\nfile-A"


def raw(port: int, path: str) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(f"GET {path} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n".encode())
        got = b""
        while d := c.recv(65536):
            got += d
    return got.decode()


def test_error_replies(cfg, sluice, tmp_path):
    (tmp_path / "403.http").write_text(F403, newline="")
    (tmp_path / "a403.http").write_text(A403, newline="")
    p1, p2, p3 = free_port(), free_port(), free_port()
    sluice(cfg(f"""
{HTTP_DEFAULTS}
http-errors myerrs
    errorfile 403 {tmp_path}/403.http
    errorfile 404 {tmp_path}/403.http
frontend f1
    bind 127.0.0.1:{p1}
    errorfile 403 {tmp_path}/a403.http
    errorfiles myerrs
    http-request deny
frontend f2
    bind 127.0.0.1:{p2}
    errorfiles myerrs
    errorfile 403 {tmp_path}/a403.http
    errorloc302 404 http://err.example/404
    errorloc303 405 /m405
    http-request deny deny_status 404 if {{ path_beg /d404 }}
    http-request deny deny_status 405 if {{ path_beg /d405 }}
    http-request deny errorfiles myerrs if {{ path_beg /ef }}
    http-request deny deny_status 503 errorfile {tmp_path}/403.http if {{ path_beg /eff }}
    http-request deny
frontend f3
    bind 127.0.0.1:{p3}
    http-error status 403 content-type text/plain string "he-403" hdr X-A b
    http-error status 404
    http-request deny if {{ path_beg /d }}
    http-request deny deny_status 404 if {{ path_beg /n }}
"""), wait_ports=[p1, p2, p3])
    assert raw(p1, "/").endswith("\r\n\r\ncustom 403\n")        # errorfiles came last
    assert raw(p2, "/").endswith("\r\n\r\nfile-A")              # errorfile came last
    assert raw(p2, "/d404").startswith(
        "HTTP/1.1 302 Found\r\ncache-control: no-cache\r\ncontent-length: 0\r\n"
        "location: http://err.example/404\r\n")
    assert raw(p2, "/d405").startswith("HTTP/1.1 303 See Other\r\n")
    assert raw(p2, "/ef").endswith("\r\n\r\ncustom 403\n")
    # An http reply's errorfile is sent as written, whatever deny_status says.
    assert raw(p2, "/eff").startswith("HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nx-custom: yes\r\n")
    assert raw(p3, "/d") == ("HTTP/1.1 403 Forbidden\r\nx-a: b\r\ncontent-length: 6\r\n"
                             "content-type: text/plain\r\nconnection: close\r\n\r\nhe-403")
    assert raw(p3, "/n") == "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


def test_error_reply_mistakes(cfg, tmp_path):
    (tmp_path / "403.http").write_text(F403, newline="")
    cases = [
        (f"http-errors myerrs\n    errorfile 403 {tmp_path}/403.http\n    foo bar\n",
         "unknown keyword 'foo' in 'http-errors' section"),
        (f"http-errors myerrs\n    errorfile 403 {tmp_path}/403.http\nhttp-errors myerrs\n",
         "http-errors section 'myerrs' already exists (declared at "),
        ("http-errors\n", "missing name for http-errors section."),
        ("frontend f2\n    bind 127.0.0.1:1\n    errorfiles nosuch\n",
         "proxy 'f2': unknown http-errors section 'nosuch' (at "),
        ("frontend f2\n    bind 127.0.0.1:1\n    errorfiles\n", "errorfiles : expects <name> as argument."),
        ("frontend f2\n    bind 127.0.0.1:1\n    http-error status 999 string x\n",
         "http-error : Unexpected status code '999'"),
        ("frontend f2\n    bind 127.0.0.1:1\n    errorloc 999 /x\n", "errorloc : status code '999' not handled."),
        ("frontend f2\n    bind 127.0.0.1:1\n    errorloc 404\n",
         "errorloc : expects <status_code> and <url> as arguments."),
        ("frontend f2\n    bind 127.0.0.1:1\n    http-request deny errorfiles nosuch\n",
         "Proxy 'f2': unknown http-errors section 'nosuch' referenced by an http reply ."),
        ("frontend f2\n    bind 127.0.0.1:1\n    http-request deny errorfile /nonexist\n",
         "error detected in frontend 'f2' while parsing 'http-request deny' rule : error opening file '/nonexist'."),
    ]
    for body, message in cases:
        config_refused(cfg(f"{HTTP_DEFAULTS}\n{body}"), message)

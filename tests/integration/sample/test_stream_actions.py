"""The HTTP rule actions on the stream, on real requests: captures (`declare capture`,
`http-request capture ... len|id`, `http-response capture`, capture-req, capture.req.hdr) and
their place in option httplog's {a|b}, set-log-level, set-timeout, set-src / set-dst and their
ports. HAProxy 3.5-dev5 gives the same headers and log lines for the same configurations and
requests (checked side by side when this was written)."""
from __future__ import annotations

import http.client
import re
import socket

from sluice_harness import HTTP_DEFAULTS, free_port, wait_until


def lines_of(s, needle: str, mark: str = " f b/s ") -> list[str]:
    """The log lines with `needle` and `mark` (by default those of the frontend `f`, not the
    echo frontend's)."""
    return [ln for ln in s.stdout().splitlines() if needle in ln and mark in ln]


def level(line: str) -> int:
    """The syslog level of a `format short` line: its <PRI> modulo 8."""
    m = re.match(r"^<(\d+)>", line)
    assert m, line
    return int(m.group(1)) % 8


def wait_line(s, needle: str, mark: str = " f b/s ") -> str:
    wait_until(lambda: lines_of(s, needle, mark), timeout=5)
    return lines_of(s, needle, mark)[0]


def get(port: int, path: str, headers: dict[str, str] | None = None,
        timeout: float = 5) -> http.client.HTTPResponse:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path, headers=headers or {})
        r = c.getresponse()
        r.body = r.read()
        return r
    finally:
        c.close()


def capture_config(port: int, echo: int) -> str:
    return f"""global
  log stdout format short local0
""" + HTTP_DEFAULTS + f"""  log global
  option httplog
frontend f
  bind 127.0.0.1:{port}
  capture request header Host len 5
  declare capture request len 4
  http-request capture req.hdr(x-a) len 3
  declare capture response len 10
  capture response header X-S len 3
  http-request capture req.hdr(x-b) id 1
  http-request set-var(txn.c) req.hdr(x-c),capture-req(3)
  declare capture request len 2
  http-request set-var(txn.p) path
  http-request set-header x-seen %[capture.req.hdr(1)]-%[var(txn.c)]-%[req.hdr(x-c),capture-req(9)]
  http-request set-log-level err if {{ path /err }}
  http-request set-log-level silent if {{ path /silent }}
  http-response set-log-level debug if {{ var(txn.p) -m str /debug }}
  http-after-response set-log-level warning if {{ var(txn.p) -m str /warn }}
  http-response capture res.hdr(x-r) id 0
  http-after-response set-header x-cap %[capture.res.hdr(0)]
  default_backend b
backend b
  server s 127.0.0.1:{echo}
frontend echo
  bind 127.0.0.1:{echo}
  http-request return status 200 content-type text/plain lf-string "seen=%[req.hdr(x-seen)]" hdr x-r resp-value-long hdr x-s srv
"""


def test_captures_in_headers_and_log(sluice):
    """Every capture slot of a frontend, header captures and declared ones, in the order of
    the configuration: `{examp|bval|abc|cv} {resp-value|srv}`, as HAProxy 3.5 logs it."""
    port, echo = free_port(), free_port()
    s = sluice(capture_config(port, echo), wait_ports=[port, echo])
    r = get(port, "/a", {"Host": "example.com", "x-a": "abcdef", "x-b": "bvalue",
                         "x-c": "cvalue"})
    assert r.status == 200
    # capture.req.hdr(1) is cut to the declared 4; capture-req passes its sample on whole,
    # and a slot that does not exist gives no sample.
    assert r.body == b"seen=bval-cvalue-"
    assert r.getheader("x-cap") == "resp-value"
    line = wait_line(s, '"GET /a HTTP/1.1"')
    assert level(line) == 6
    assert re.match(r"^<\d+>127\.0\.0\.1:\d+ \[.*\] f b/s \S+ 200 \d+ - - ---- \S+ 0/0 "
                    r"\{examp\|bval\|abc\|cv\} \{resp-value\|srv\} \"GET /a HTTP/1\.1\"$", line), line
    # A request that fills only the header capture logs empty slots for the others.
    get(port, "/b", {"Host": "h"})
    line = wait_line(s, '"GET /b HTTP/1.1"')
    assert "{h|||} {resp-value|srv}" in line, line


def test_set_log_level(sluice):
    """The traffic line goes out at the level the last set-log-level rule chose (request,
    response or after-response), or not at all for `silent`."""
    port, echo = free_port(), free_port()
    s = sluice(capture_config(port, echo), wait_ports=[port, echo])
    for path in ("/err", "/silent", "/debug", "/warn", "/last"):
        assert get(port, path).status == 200
    wait_line(s, '"GET /last HTTP/1.1"')
    assert level(wait_line(s, '"GET /err HTTP/1.1"')) == 3
    assert level(wait_line(s, '"GET /debug HTTP/1.1"')) == 7
    assert level(wait_line(s, '"GET /warn HTTP/1.1"')) == 4
    assert level(wait_line(s, '"GET /last HTTP/1.1"')) == 6
    # Silent: the echo frontend logged its side, the proxy's frontend nothing.
    assert lines_of(s, '"GET /silent HTTP/1.1"') == []
    assert [ln for ln in s.stdout().splitlines() if '"GET /silent HTTP/1.1"' in ln]


def address_config(port: int, echo: int) -> str:
    return f"""global
  log stdout format raw local0
""" + HTTP_DEFAULTS + f"""frontend f
  bind 127.0.0.1:{port}
  log global
  log-format "%ci:%cp %fi:%fp [%[src]:%[src_port] %[dst]:%[dst_port]] %{{+Q}}r"
  option forwardfor
  http-request set-header x-before %[src]:%[src_port]/%[dst]:%[dst_port]
  http-request set-src req.hdr(x-src) if {{ req.hdr(x-src) -m found }}
  http-request set-src-port req.hdr(x-sport) if {{ req.hdr(x-sport) -m found }}
  http-request set-dst req.hdr(x-dst) if {{ req.hdr(x-dst) -m found }}
  http-request set-dst-port req.hdr(x-dport) if {{ req.hdr(x-dport) -m found }}
  http-request set-header x-after %[src]:%[src_port]/%[dst]:%[dst_port]
  default_backend b
backend b
  balance source
  server s 127.0.0.1:{echo}
frontend echo
  bind 127.0.0.1:{echo}
  http-request return status 200 content-type text/plain lf-string "%[req.hdr(x-before)] %[req.hdr(x-after)] xff=%[req.hdr(x-forwarded-for)]"
"""


def test_set_src_and_dst(sluice):
    """set-src, set-src-port, set-dst, set-dst-port change what the src/dst fetches, the log's
    %ci:%cp and %fi:%fp, and option forwardfor see, for this request only: the next request
    on the same connection has the connection's addresses again (HAProxy 3.5 alike)."""
    port, echo = free_port(), free_port()
    s = sluice(address_config(port, echo), wait_ports=[port, echo])
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        c.request("GET", "/1", headers={"x-src": "10.1.2.3", "x-sport": "99",
                                         "x-dst": "10.9.9.9", "x-dport": "77"})
        r = c.getresponse()
        body = r.read().decode()
        cport = c.sock.getsockname()[1]
        assert body == (f"127.0.0.1:{cport}/127.0.0.1:{port} 10.1.2.3:99/10.9.9.9:77 "
                        f"xff=10.1.2.3")
        c.request("GET", "/2")
        r = c.getresponse()
        body = r.read().decode()
        assert body == (f"127.0.0.1:{cport}/127.0.0.1:{port} 127.0.0.1:{cport}/127.0.0.1:{port} "
                        f"xff=127.0.0.1")
    finally:
        c.close()
    assert wait_line(s, '"GET /1 HTTP/1.1"', "") == (
        '10.1.2.3:99 10.9.9.9:77 [10.1.2.3:99 10.9.9.9:77] "GET /1 HTTP/1.1"')
    line = wait_line(s, '"GET /2 HTTP/1.1"', "")
    assert line.startswith("127.0.0.1:") and f" 127.0.0.1:{port} " in line, line
    # IPv6 keeps the port; what is no address changes nothing; ports keep their low 16 bits.
    body = get(port, "/3", {"x-src": "::1", "x-dst": "bad", "x-dport": "70000"}).body.decode()
    after = body.split(" ")[1]
    assert re.fullmatch(r"::1:\d+/127\.0\.0\.1:4464", after), body
    assert body.endswith("xff=::1")


def test_set_timeout_server(sluice):
    """set-timeout server replaces the backend's 10s for this request: a server that never
    answers gets a 504 (sH) once the rule's timeout strikes, long before the client gives up."""
    port = free_port()
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        cfg = f"""global
  log stdout format raw local0
""" + HTTP_DEFAULTS + f"""  log global
  option httplog
listen f
  bind 127.0.0.1:{port}
  http-request set-timeout server 200ms if {{ path /short }}
  http-request set-timeout server req.hdr(x-t) if {{ path /expr }}
  server s 127.0.0.1:{silent.getsockname()[1]}
"""
        s = sluice(cfg, wait_ports=[port])
        assert get(port, "/short", timeout=8).status == 504
        assert " sH-- " in wait_line(s, '"GET /short HTTP/1.1"', " f f/s ")
        assert get(port, "/expr", {"x-t": "150"}, timeout=8).status == 504
        assert " sH-- " in wait_line(s, '"GET /expr HTTP/1.1"', " f f/s ")
    finally:
        silent.close()


def test_errors_name_the_line(tmp_path):
    """What sluice refuses with HAProxy's words and file:line."""
    from sluice_harness import run_sluice, write_config
    cases = [
        ("  http-request capture req.hdr(host) id 0\n",
         "Proxy 'f': unable to find capture id '0' referenced by http-request capture rule."),
        ("  declare capture request len 0\n", "sluice.cfg:{n}] : length must be > 0"),
        ("  http-request set-log-level foo\n",
         "error detected in frontend 'f' while parsing 'http-request set-log-level' rule : "
         "expects exactly 1 argument (log level name or 'silent')."),
        ("  http-request set-timeout server 3s\n",
         "error detected in frontend 'f' while parsing 'http-request set-timeout' rule : 'f' has "
         "no backend capability."),
        ("  http-request do-resolve(txn.ip,dns) hdr(host)\n",
         "'http-request do-resolve' is not supported by sluice yet (it needs DNS resolvers)."),
    ]
    for extra, want in cases:
        text = HTTP_DEFAULTS + "frontend f\n  bind 127.0.0.1:1\n" + extra
        path = write_config(tmp_path, text)
        n = text.count("\n")
        rc, _, err = run_sluice(["-c", "-f", str(path)])
        assert rc != 0, extra
        assert want.format(n=n) in err, (extra, err)

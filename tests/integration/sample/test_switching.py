"""use_backend with a format and use-server, on real requests. HAProxy 3.5 gives the same
answers to the same configuration (checked by hand when this was written): a format naming no
backend ends the rules with default_backend (the rules after it are not tried); a use-server
name that is no server ends the use-server rules (load balancing decides); a use-server
server that is down lets the next rule decide; an HTTP frontend sent to a TCP backend by a
format is closed without an answer."""
from __future__ import annotations

import http.client
import socket

from sluice_harness import HTTP_DEFAULTS, free_port, recv_all


def config(port: int, tport: int, s: list[int]) -> str:
    servers = "\n".join(f"frontend srv{i}\n  bind 127.0.0.1:{p}\n"
                        f"  http-request return status 200 content-type text/plain lf-string \"%[fe_name]\""
                        for i, p in enumerate(s, 1))
    return HTTP_DEFAULTS + f"""frontend f
  bind 127.0.0.1:{port}
  use_backend %[req.hdr(x-be),lower]
  use_backend b2 if {{ path_beg /b2 }}
  default_backend b1
backend b1
  balance roundrobin
  use-server %[req.hdr(x-srv)] if {{ req.hdr(x-srv) -m found }}
  use-server s3 if {{ path_beg /s3 }}
  use-server s2 if {{ path_beg /s }}
  server s1 127.0.0.1:{s[0]}
  server s2 127.0.0.1:{s[1]}
  server s3 127.0.0.1:{s[2]} disabled
backend b2
  http-request return status 200 content-type text/plain string b2
backend t1
  mode tcp
  server t 127.0.0.1:{s[0]}
frontend t
  mode tcp
  bind 127.0.0.1:{tport}
  use_backend tb_%[dst_port]
  default_backend t1
backend tb_{tport}
  mode tcp
  use-server t1 if {{ dst_port 1 }}
  use-server t%[dst_port,sub({tport}),add(2)] if {{ src 127.0.0.0/8 }}
  server t1 127.0.0.1:{s[0]}
  server t2 127.0.0.1:{s[1]}
{servers}
"""


def get(port: int, path: str = "/", **headers) -> str:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        c.request("GET", path, headers={k.replace("_", "-"): v for k, v in headers.items()})
        return c.getresponse().read().decode()
    finally:
        c.close()


def test_use_backend_and_use_server_formats(sluice):
    port, tport = free_port(), free_port()
    s = [free_port() for _ in range(3)]
    sluice(config(port, tport, s), wait_ports=[port, tport, *s])
    # The rendered name chooses the backend.
    assert get(port, "/", x_be="B2") == "b2"
    # A name that is no backend: default_backend, without trying the rules after it (/b2).
    assert {get(port, "/b2", x_be="nosuch") for _ in range(4)} == {"srv1", "srv2"}
    assert {get(port, "/b2") for _ in range(4)} == {"srv1", "srv2"}   # empty name: the same
    # An HTTP request sent to a TCP backend by a format: closed without an answer.
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Be: t1\r\n\r\n")
        assert recv_all(c, timeout=5) == b""
    # use-server: the named server, every time.
    assert {get(port, "/", x_srv="s2") for _ in range(4)} == {"srv2"}
    # A server that is down lets the next rules decide (s3, then s2 for /s...).
    assert {get(port, "/s", x_srv="s3") for _ in range(4)} == {"srv2"}
    assert {get(port, "/s3") for _ in range(4)} == {"srv2"}
    # A name that is no server ends the use-server rules: load balancing.
    assert {get(port, "/s", x_srv="nosuch") for _ in range(4)} == {"srv1", "srv2"}
    # No rule matches: load balancing.
    assert {get(port, "/") for _ in range(4)} == {"srv1", "srv2"}


def test_tcp_use_backend_and_use_server_formats(sluice):
    port, tport = free_port(), free_port()
    s = [free_port() for _ in range(3)]
    sluice(config(port, tport, s), wait_ports=[port, tport, *s])
    # tb_<port> is chosen by the format, and its second use-server rule names t2.
    seen = set()
    for _ in range(4):
        with socket.create_connection(("127.0.0.1", tport), timeout=5) as c:
            c.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            seen.add(recv_all(c, timeout=5).split(b"\r\n\r\n", 1)[1])
    assert seen == {b"srv2"}

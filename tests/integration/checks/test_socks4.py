"""`socks4 <addr>:<port>` on a server: its connections go through that SOCKS4 proxy (HTTP and
TCP), the checks too with `check-via-socks4` or a tcp-check `connect via-socks4`; a proxy that
refuses or closes is a connection failure with HAProxy 3.5's error codes and texts. This file
passes unchanged against HAProxy 3.5 (a -db wrapper as SLUICE_BIN)."""
from __future__ import annotations

import re
import socket

from fake_servers import Socks4Proxy
from sluice_harness import free_port, recv_exact, wait_until

from checks_util import request


def socks_request(port: int) -> bytes:
    """The CONNECT request for 127.0.0.1:port, with HAProxy's user id."""
    return b"\x04\x01" + port.to_bytes(2, "big") + socket.inet_aton("127.0.0.1") + b"HAProxy\x00"


def test_socks4_traffic_and_checks(cfg, sluice, servers, origin, udp_log, short_tmp):
    ok = servers.add(Socks4Proxy())
    deny = servers.add(Socks4Proxy("deny"))
    close = servers.add(Socks4Proxy("close"))
    echo = servers.echo()
    port, tcp_port = free_port(), free_port()
    o = origin.port
    text = f"""
global
    max-spread-checks 100ms
    log 127.0.0.1:{udp_log.port} format raw local0
defaults
    mode http
    log global
    retries 0
    timeout connect 1s
    timeout client 5s
    timeout server 5s
    timeout check 1s
frontend fe
    bind 127.0.0.1:{port}
    log-format "ERR %[bc_err] %[bc_err_name] '%[bc_err_str]' %ST %tsc"
    use_backend %[req.hdr(x-be)]
backend ok
    option httpchk GET /chk
    server s1 127.0.0.1:{o} socks4 127.0.0.1:{ok.port} check check-via-socks4 inter 10s
backend deny
    server s1 127.0.0.1:{o} socks4 127.0.0.1:{deny.port}
backend close
    server s1 127.0.0.1:{o} socks4 127.0.0.1:{close.port}
backend tc
    mode tcp
    option log-health-checks
    option tcp-check
    tcp-check connect via-socks4
    tcp-check send PING
    tcp-check expect string PING
    server s1 127.0.0.1:{echo.port} socks4 127.0.0.1:{deny.port} check inter 10s
listen tcp
    mode tcp
    bind 127.0.0.1:{tcp_port}
    server s1 127.0.0.1:{echo.port} socks4 127.0.0.1:{ok.port}
"""
    sluice(cfg(text), wait_ports=[port, tcp_port])
    # The check went through the proxy, which was asked for the server.
    wait_until(lambda: "/chk" in origin.paths(), 5)
    assert request(port, "ok", "/hello") == 200
    assert origin.paths().count("/hello") == 1
    assert ok.results[:2] == [socks_request(o), socks_request(o)], ok.results
    # TCP: the client's bytes flow once the proxy has let the connection through.
    with socket.create_connection(("127.0.0.1", tcp_port), timeout=5) as c:
        c.sendall(b"hello")
        assert recv_exact(c, 5) == b"hello"
    assert socks_request(echo.port) in ok.results
    # Refused, or closed without an answer: the connection failed (retries 0: a 503).
    assert request(port, "deny", "/") == 503
    assert request(port, "close", "/") == 503
    wait_until(lambda: len([m for m in udp_log.texts() if m.startswith("ERR 4")]) == 2, 3)
    # Each session logs when it ends, on its own thread: by content, not arrival order.
    errs = sorted(m.strip() for m in udp_log.texts() if m.startswith("ERR 4"))
    assert errs == ["ERR 40 SOCKS4_RECV 'SOCKS4 Proxy read error during handshake' 503 SC--",
                    "ERR 41 SOCKS4_DENY 'SOCKS4 Proxy deny the request' 503 SC--"], errs
    assert socks_request(o) in deny.results and close.results == [socks_request(o)]
    # A tcp-check connect via-socks4 through a proxy that refuses: a socket error.
    wait_until(lambda: [m for m in udp_log.texts() if "server tc/s1" in m], 5)
    line = next(m.strip() for m in udp_log.texts() if "server tc/s1" in m)
    assert re.sub(r"duration: \d+ms", "duration: Nms", line) == (
        'Health check for server tc/s1 failed, reason: Socket error, info: "SOCKS4 Proxy deny the '
        'request at step 1 of tcp-check (connect)", check duration: Nms, status: 0/2 DOWN.'), line
    assert socks_request(echo.port) in deny.results

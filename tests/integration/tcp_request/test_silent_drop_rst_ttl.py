"""`silent-drop rst-ttl <ttl>` (tcp-request connection|session|content, http-request,
http-response): instead of silencing the connection (TCP repair: the client hears nothing),
the proxy resets it with the IP TTL set to <ttl>, so that the reset clears the state of the
firewalls and NAT devices within that many hops without reaching a client further away. On
loopback the reset arrives whatever the TTL: the test reads the TTL of the reset itself, with
a packet socket on `lo` (root only; skipped otherwise). The configuration messages are HAProxy
3.5's. This file passes unchanged against HAProxy 3.5 (a -db wrapper as SLUICE_BIN)."""
from __future__ import annotations

import ctypes
import socket
import struct
import time

import pytest

from sluice_harness import HTTP_DEFAULTS, DEFAULTS, config_refused, free_port, slow_factor


# A classic BPF filter keeping IPv4 TCP segments with RST set (frames of lo: a 14-byte Ethernet
# header), so that the traffic of tests running beside this one cannot fill the socket's
# queue and push the resets out.
RST_FILTER = [
    (0x28, 0, 0, 12),       # ldh [12]: the EtherType
    (0x15, 0, 8, 0x0800),   # IPv4, else drop
    (0x30, 0, 0, 23),       # ldb [23]: the IP protocol
    (0x15, 0, 6, 6),        # TCP, else drop
    (0x28, 0, 0, 20),       # ldh [20]: flags and fragment offset
    (0x45, 4, 0, 0x1FFF),   # a fragment: drop
    (0xB1, 0, 0, 14),       # x = the IP header's length
    (0x50, 0, 0, 27),       # ldb [x + 27]: the TCP flags
    (0x45, 0, 1, 0x04),     # RST: keep, else drop
    (0x06, 0, 0, 0xFFFF),
    (0x06, 0, 0, 0),
]


def packet_socket():
    try:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    except (PermissionError, AttributeError, OSError) as e:
        pytest.skip(f"no packet socket to read the reset's TTL ({e})")
    code = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *i) for i in RST_FILTER))
    prog = struct.pack("HL", len(RST_FILTER), ctypes.addressof(code))
    s.setsockopt(socket.SOL_SOCKET, 26, prog)   # SO_ATTACH_FILTER
    s.bind(("lo", 0))
    s.settimeout(0.2)
    # What came before the filter was attached.
    s.setblocking(False)
    try:
        while s.recv(65536):
            pass
    except BlockingIOError:
        pass
    s.settimeout(0.2)
    return s


def reset_ttls(sniffer, port: int, until: float) -> list[int]:
    """The TTLs of the IPv4 TCP resets sent from `port` on lo, read until `until`."""
    ttls = []
    while time.monotonic() < until:
        try:
            frame = sniffer.recv(65536)
        except socket.timeout:
            continue
        if len(frame) < 14 + 20 + 20 or frame[12:14] != b"\x08\x00":
            continue
        ip = frame[14:]
        ihl = (ip[0] & 0x0F) * 4
        if ip[9] != 6 or len(ip) < ihl + 14:
            continue
        src_port = struct.unpack("!H", ip[ihl:ihl + 2])[0]
        if src_port == port and ip[ihl + 13] & 0x04:
            ttls.append(ip[8])
    return ttls


def dropped(port: int, request: bytes, sniffer) -> tuple[str, list[int]]:
    """Sends `request`, returns how the connection ended and the resets' TTLs."""
    end = "eof"
    try:
        c = socket.create_connection(("127.0.0.1", port), timeout=1.5)
    except ConnectionResetError:
        end = "reset"
    else:
        with c:
            try:
                c.sendall(request)
                if c.recv(100):
                    end = "data"
            except ConnectionResetError:
                end = "reset"
            except socket.timeout:
                end = "timeout"
    return end, reset_ttls(sniffer, port, time.monotonic() + 0.5 * slow_factor())


def test_the_reset_carries_the_ttl(cfg, sluice, echo):
    ports = [free_port() for _ in range(5)]
    text = f"""
{HTTP_DEFAULTS}
frontend conn
    mode tcp
    bind 127.0.0.1:{ports[0]}
    tcp-request connection silent-drop rst-ttl 7
    default_backend be
frontend sess
    mode tcp
    bind 127.0.0.1:{ports[1]}
    tcp-request session silent-drop rst-ttl 9
    default_backend be
frontend content
    mode tcp
    bind 127.0.0.1:{ports[2]}
    tcp-request inspect-delay 2s
    tcp-request content silent-drop rst-ttl 11 if {{ req.len gt 0 }}
    default_backend be
frontend req
    bind 127.0.0.1:{ports[3]}
    http-request silent-drop rst-ttl 13 if {{ path /drop }}
    http-request return status 200 content-type text/plain string ok
frontend plain
    bind 127.0.0.1:{ports[4]}
    http-request silent-drop
backend be
    mode tcp
    server s 127.0.0.1:{echo.port}
"""
    sluice(cfg(text), wait_ports=ports)
    sniffer = packet_socket()
    with sniffer:
        get = b"GET /drop HTTP/1.1\r\nHost: x\r\n\r\n"
        for port, ttl in zip(ports[:4], (7, 9, 11, 13)):
            end, ttls = dropped(port, get, sniffer)
            # The proxy's reset first; what the client sent after it may draw the kernel's own
            # resets (the default TTL) from the closed socket.
            assert end == "reset" and ttls and ttls[0] == ttl, (port, end, ttls)
        # Without rst-ttl the client hears nothing (TCP repair, which root may use); its own
        # close later draws an ordinary reset, which is why no TTL is checked here.
        end, _ = dropped(ports[4], get, sniffer)
        assert end == "timeout", end


def test_http_response_silent_drop_rst_ttl(cfg, sluice, origin):
    port = free_port()
    text = f"""
{HTTP_DEFAULTS}
frontend f
    bind 127.0.0.1:{port}
    http-response silent-drop rst-ttl 21
    default_backend be
backend be
    server s 127.0.0.1:{origin.port}
"""
    sluice(cfg(text), wait_ports=[port])
    with packet_socket() as sniffer:
        end, ttls = dropped(port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", sniffer)
    assert end == "reset" and ttls and ttls[0] == 21, (end, ttls)


@pytest.mark.parametrize("rule, message", [
    ("http-request silent-drop rst-ttl",
     "error detected in frontend 'f' while parsing 'http-request silent-drop' rule : missing "
     "rst-ttl value"),
    ("http-response silent-drop rst-ttl 300",
     "error detected in frontend 'f' while parsing 'http-response silent-drop' rule : valid "
     "rst-ttl values are [1-255]"),
    ("http-request silent-drop rst-ttl x",
     "error detected in frontend 'f' while parsing 'http-request silent-drop' rule : invalid "
     "character starting at 'x' (value 1-255 expected)"),
    ("tcp-request connection silent-drop rst-ttl 0", "valid rst-ttl values are [1-255]"),
    ("tcp-request connection silent-drop rst-ttl 12abc",
     "invalid character starting at 'abc' (value 1-255 expected)"),
    ("tcp-request session silent-drop rst-ttl", "missing rst-ttl value"),
    ("tcp-request content silent-drop rst-ttl 9 foo",
     "'tcp-request content silent-drop' only accepts 'if' or 'unless', in frontend 'f' (got "
     "'foo')"),
])
def test_bad_rst_ttl_values(cfg, rule, message):
    path = cfg(f"{DEFAULTS}\nfrontend f\n    mode http\n    bind 127.0.0.1:{free_port()}\n"
               f"    {rule}\n")
    config_refused(path, message)

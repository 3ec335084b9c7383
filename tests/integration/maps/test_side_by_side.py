"""Side by side with Debian's HAProxy 2.6, which knows these features: the same configuration
and the same requests (and CLI commands) on both, the answers compared. Maps and their CLI,
redirects, http-errors sections, userlists and cookie persistence. Skipped where haproxy is
not installed (the suite must not need it)."""
from __future__ import annotations

import base64
import socket
import tempfile
import time

import pytest

from side_by_side import debian_haproxy, run_proxy
from sluice_harness import cli, free_port

pytestmark = pytest.mark.skipif(debian_haproxy() is None, reason="Debian's haproxy is not installed")

DEFAULTS = """defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
"""


def request(port: int, target: str = "/", headers: str = "Host: ex.com\r\n") -> tuple[int, dict, bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(f"GET {target} HTTP/1.1\r\n{headers}Connection: close\r\n\r\n".encode())
        data = b""
        while chunk := c.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    fields: dict = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        fields.setdefault(name.lower(), []).append(value.strip())
    return int(lines[0].split(" ")[1]), fields, body


def both(text: str, port: int, drive) -> dict:
    """What drive(port) returned with sluice and with HAProxy 2.6, on the same text."""
    got = {}
    with tempfile.TemporaryDirectory(prefix="sbs") as tmp:
        for proxy in ("sluice", debian_haproxy()):
            results: list = []
            run_proxy(proxy, text, tmp, port, lambda p: results.append(drive(p)))
            got[proxy] = results[0]
    return got


def same(got: dict):
    """Both answered alike; returns sluice's answers (for the checks that they say something)."""
    (a, b) = got.values()
    assert a == b, f"sluice: {a}\nhaproxy 2.6: {b}"
    return a


def test_maps_and_their_cli(tmp_path):
    hosts = tmp_path / "hosts.map"
    hosts.write_text("example.com be_a\n.example.org be_org\nexample.net be_net\n")
    prefixes = tmp_path / "prefix.map"
    prefixes.write_text("/api be_api\n/api/v2 be_api2\n/static be_static\n")
    nets = tmp_path / "nets.map"
    nets.write_text("10.0.0.0/8 ten\n127.0.0.0/8 loop\n127.0.0.1 exact\n")
    nums = tmp_path / "num.map"
    nums.write_text("1 one\n20 twenty\n")
    regs = tmp_path / "reg.map"
    regs.write_text("^/u/([0-9]+)$ user\n^/g/ group\n")
    port = free_port()
    sock = tmp_path / "s.sock"
    text = f"""
global
    stats socket {sock} level admin
{DEFAULTS}
frontend f
    bind 127.0.0.1:{port}
    http-request return status 200 content-type text/plain lf-string "str=%[req.hdr(host),map_str({hosts},none)] dom=%[req.hdr(host),map_dom({hosts},none)] beg=%[path,map_beg({prefixes},none)] ip=%[src,map_ip({nets},none)] int=%[req.hdr(x-n),map_int({nums},none)] reg=%[path,map_reg({regs},none)] end=%[req.hdr(host),map_end({hosts},none)] sub=%[path,map_sub({prefixes},none)]"
"""

    def drive(p: int):
        out = []
        for target, host, n in [("/api/v2/x", "example.com", "20"), ("/static/a", "a.example.org", "1"),
                                ("/u/12", "example.net", "3"), ("/g/x", "other", "x"),
                                ("/xapi", "www.example.com", "20")]:
            out.append(request(p, target, f"Host: {host}\r\nX-N: {n}\r\n")[2])
        # Changes from the CLI, then the same requests.
        out.append(cli(sock, f"add map {hosts} new.com be_new"))
        out.append(cli(sock, f"set map {prefixes} /api be_api_moved"))
        out.append(cli(sock, f"del map {nums} 20"))
        out.append(cli(sock, f"del map {nums} nope"))
        out.append(cli(sock, f"get map {prefixes} /api/v2/x"))
        out.append(request(p, "/api/x", "Host: new.com\r\nX-N: 20\r\n")[2])
        out.append(cli(sock, f"clear map {hosts}"))
        out.append(request(p, "/", "Host: example.com\r\n")[2])
        return out

    got = same(both(text, port, drive))
    assert got[0].startswith(b"str=be_a dom=be_a beg=be_api2 ip=exact int=twenty"), got
    assert got[10] == b"str=be_new dom=be_new beg=be_api_moved ip=exact int=none reg=none end=be_new sub=be_api_moved", got


def test_redirects(tmp_path):
    port = free_port()
    text = f"""
{DEFAULTS}
frontend f
    bind 127.0.0.1:{port}
    redirect location /moved code 301 if {{ path /old }}
    redirect prefix https://new.example drop-query if {{ path_beg /p/ }}
    redirect prefix /pre append-slash if {{ path_beg /slash }}
    redirect scheme https code 308 if {{ path /s }}
    redirect location /c set-cookie SEEN=1 if {{ path /cookie }}
    redirect location /c clear-cookie OLD= if {{ path /clear }}
    http-request redirect code 303 location /see-other if {{ path /see }}
    http-request return status 200 if {{ path /other }}
"""

    def drive(p: int):
        out = []
        for target in ["/old", "/p/x?a=1", "/slash/x", "/s?q=1", "/cookie", "/clear", "/see", "/other"]:
            status, fields, _ = request(p, target)
            out.append((target, status, fields.get("location"), fields.get("set-cookie"),
                        fields.get("cache-control")))
        return out

    got = same(both(text, port, drive))
    assert got[0][1:3] == (301, ["/moved"]) and got[4][3], got


def test_http_errors_sections(tmp_path):
    e403 = tmp_path / "403.http"
    e403.write_bytes(b"HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: 9\r\n\r\nno, sorry")
    e503 = tmp_path / "503.http"
    e503.write_bytes(b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\ncontent-length: 4\r\n\r\nbusy")
    port = free_port()
    text = f"""
{DEFAULTS}
http-errors site
    errorfile 403 {e403}
    errorfile 503 {e503}
frontend f
    bind 127.0.0.1:{port}
    errorfiles site 503
    http-request deny errorfiles site if {{ path /deny }}
    http-request deny deny_status 403 if {{ path /plain-deny }}
    http-request return status 503 errorfiles site if {{ path /ret }}
    default_backend empty
backend empty
"""

    def drive(p: int):
        out = []
        for target in ["/deny", "/plain-deny", "/ret", "/none"]:
            status, fields, body = request(p, target)
            out.append((target, status, fields.get("content-type"), body))
        return out

    got = same(both(text, port, drive))
    assert got[0][3] == b"no, sorry" and got[2][3] == b"busy", got


def test_userlists_and_http_auth(tmp_path):
    port = free_port()
    # An SHA-512 crypt(3) hash of "secret" (`openssl passwd -6 -salt saltsalt secret`).
    sha512 = ("$6$saltsalt$TVLlQcbpFVof5W3Yz4DTP6gRstiNuHwwTt6GLc1E5n0U0aDehy0S5knV8wiOQSpT0Y77v"
              "wPZN.Pq.H91p5hVO1")
    text = f"""
{DEFAULTS}
userlist users
    group admins users alice
    user alice password {sha512}
    user bob insecure-password hunter2
frontend f
    bind 127.0.0.1:{port}
    http-request auth realm Private if {{ path_beg /private }} !{{ http_auth(users) }}
    http-request deny if {{ path_beg /admin }} !{{ http_auth_group(users) admins }}
    http-request return status 200 content-type text/plain lf-string "hi %[http_auth_group(users)]"
"""

    def auth(user: str, password: str) -> str:
        return "Authorization: Basic " + base64.b64encode(f"{user}:{password}".encode()).decode() + "\r\n"

    def drive(p: int):
        out = []
        for target, extra in [("/private", ""), ("/private", auth("alice", "secret")),
                              ("/private", auth("alice", "wrong")), ("/private", auth("bob", "hunter2")),
                              ("/admin", auth("bob", "hunter2")), ("/admin", auth("alice", "secret"))]:
            status, fields, body = request(p, target, "Host: ex.com\r\n" + extra)
            out.append((target, status, fields.get("www-authenticate"), body if status == 200 else b""))
        return out

    got = same(both(text, port, drive))
    assert [g[1] for g in got] == [401, 200, 401, 200, 403, 200], got


def test_cookie_persistence(tmp_path):
    # Two servers that say who they are: the cookie must pin a client to one of them.
    servers, ports = [], []
    import threading

    def serve(ls: socket.socket, name: bytes):
        ls.settimeout(30)
        try:
            while True:
                c, _ = ls.accept()
                with c:
                    data = b""
                    while b"\r\n\r\n" not in data:
                        chunk = c.recv(4096)
                        if not chunk:
                            break
                        data += chunk
                    c.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\n" + name)
        except OSError:
            pass

    for name in (b"s1", b"s2"):
        ls = socket.socket()
        ls.bind(("127.0.0.1", 0))
        ls.listen(16)
        servers.append(ls)
        ports.append(ls.getsockname()[1])
        threading.Thread(target=serve, args=(ls, name), daemon=True).start()
    port = free_port()
    text = f"""
{DEFAULTS}
frontend f
    bind 127.0.0.1:{port}
    default_backend be
backend be
    balance roundrobin
    cookie SRV insert indirect nocache httponly
    server s1 127.0.0.1:{ports[0]} cookie one
    server s2 127.0.0.1:{ports[1]} cookie two
"""

    def drive(p: int):
        out = []
        for cookie in ["", "SRV=two", "SRV=one", "SRV=bogus", "other=1; SRV=two"]:
            status, fields, body = request(p, "/", "Host: ex.com\r\n" + (f"Cookie: {cookie}\r\n" if cookie else ""))
            out.append((cookie, status, fields.get("set-cookie"), fields.get("cache-control"),
                        body if cookie and "bogus" not in cookie else b""))
        return out

    try:
        got = same(both(text, port, drive))
        assert got[0][2] and got[1][4] == b"s2" and got[2][4] == b"s1", got
    finally:
        for ls in servers:
            ls.close()

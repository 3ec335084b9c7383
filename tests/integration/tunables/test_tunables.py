"""HAProxy tunables that change behaviour: tune.http.maxhdr (400 over it), tune.http.logurilen
(the logged request line), option dontlog-normal, option socket-stats (listener rows), server
`id` (show stat's sid) and -L ($HAPROXY_LOCALPEER). Expected values were measured on HAProxy 3.5."""
import itertools
import socket
import subprocess

import pytest

from sluice_harness import free_port, run_sluice, short_tmpdir, show_stat, sluice_bin

MAXREWRITE_STATUS = 431


def request(port, head: str) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(head.encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return data.split(b"\r\n")[0].decode()


def get_with_fields(port, n_fields: int) -> str:
    """A request with n_fields header fields, Host included."""
    extra = "".join(f"X{i}: v\r\n" for i in range(n_fields - 1))
    return request(port, f"GET / HTTP/1.1\r\nHost: a\r\n{extra}\r\n")


def config(port, log_port, glob="", fe=""):
    return f"""
global
    log 127.0.0.1:{log_port} format raw local0
{glob}
defaults
    mode http
    log global
    option httplog
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend f
    bind 127.0.0.1:{port}
{fe}
    http-request return status 500 content-type text/plain string bad if {{ path /fail }}
    http-request return status 200 content-type text/plain string ok
"""


# The limit is computed by proxy::http_limits() (proxy/http_limits.h), which
# H1Connection::start_codecs() uses.
def test_maxhdr_counts_the_start_line(cfg, sluice, udp_log):
    # HAProxy 3.5 with maxhdr 5: Host + 3 fields pass, Host + 4 is a 400.
    port = free_port()
    sluice(cfg(config(port, udp_log.port, "    tune.http.maxhdr 5")), wait_ports=[port])
    assert " 200 " in get_with_fields(port, 4)
    assert " 400 " in get_with_fields(port, 5)


def test_logurilen_cuts_the_logged_request_line(cfg, sluice, udp_log):
    port = free_port()
    sluice(cfg(config(port, udp_log.port, "    tune.http.logurilen 20")), wait_ports=[port])
    assert " 200 " in request(port, "GET /abcdefghijklmnopqrstuvwxyz HTTP/1.1\r\nHost: a\r\n\r\n")
    msg = udp_log.wait_for(lambda m: "GET /" in m)
    # HAProxy 3.5 logs "GET /abcdefghijklmno": 20 bytes.
    assert '"GET /abcdefghijklmno"' in msg, msg


def test_logurilen_zero_logs_an_empty_request_line(cfg, sluice, udp_log):
    port = free_port()
    sluice(cfg(config(port, udp_log.port, "    tune.http.logurilen 0")), wait_ports=[port])
    assert " 200 " in request(port, "GET /zero HTTP/1.1\r\nHost: a\r\n\r\n")
    msg = udp_log.wait_for(lambda m: " f f/<NOSRV> " in m)
    # HAProxy 3.5: "" (the line cut to nothing), not "<BADREQ>".
    assert msg.rstrip().endswith('""'), msg


def test_maxrewrite_bounds_the_request_head(cfg, sluice, udp_log):
    # tune.bufsize 16384 less tune.maxrewrite 8192: a head of about 9,000 bytes is refused,
    # the same head passes with the default maxrewrite (1024).
    head = "GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + "b" * 9000 + "\r\n\r\n"
    port, port2 = free_port(), free_port()
    sluice(cfg(config(port, udp_log.port, "    tune.bufsize 16384\n    tune.maxrewrite 8192")),
           wait_ports=[port])
    sluice(cfg(config(port2, udp_log.port, "    tune.bufsize 16384"), name="default.cfg"),
           wait_ports=[port2])
    assert " {} ".format(MAXREWRITE_STATUS) in request(port, head)
    assert " 200 " in request(port2, head)


def test_cookielen_bounds_a_captured_cookie(cfg, sluice, udp_log, origin):
    port = free_port()
    text = f"""
global
    log 127.0.0.1:{udp_log.port} format raw local0
    tune.http.cookielen 10
defaults
    mode http
    log global
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend f
    bind 127.0.0.1:{port}
    capture cookie sid len 200
    log-format "ck=%CC"
    default_backend b
backend b
    server s 127.0.0.1:{origin.port}
"""
    sluice(cfg(text), wait_ports=[port])
    assert " 200 " in request(port, "GET / HTTP/1.1\r\nHost: a\r\nCookie: sid=0123456789abcdef\r\n\r\n")
    msg = udp_log.wait_for(lambda m: "ck=" in m)
    # HAProxy 3.5 keeps the first 10 bytes of "sid=0123456789abcdef".
    assert msg.rstrip().endswith("ck=sid=012345"), msg


def test_dontlog_normal_logs_errors_only(cfg, sluice, udp_log):
    port = free_port()
    sluice(cfg(config(port, udp_log.port, fe="    option dontlog-normal")), wait_ports=[port])
    assert " 200 " in request(port, "GET /ok HTTP/1.1\r\nHost: a\r\n\r\n")
    assert " 500 " in request(port, "GET /fail HTTP/1.1\r\nHost: a\r\n\r\n")
    msg = udp_log.wait_for(lambda m: "GET /fail" in m)
    assert " 500 " in msg, msg
    assert not [m for m in udp_log.texts() if "GET /ok" in m]


def test_socket_stats_and_server_ids(cfg, sluice, udp_log):
    port = free_port()
    sock = short_tmpdir() + "/s.sock"
    text = config(port, udp_log.port, f"    stats socket {sock} level admin",
                  "    option socket-stats\n    bind 127.0.0.1:" + str(free_port()) + " name second")
    text += """
backend b
    server s1 127.0.0.1:1
    server s2 127.0.0.1:2 id 1
    server s3 127.0.0.1:3
"""
    sluice(cfg(text), wait_ports=[port], wait_unix=[sock])
    rows = show_stat(sock)
    listeners = [r for r in rows if r["pxname"] == "f" and r["type"] == "3"]
    assert [r["svname"] for r in listeners] == ["sock-1", "second"], rows
    assert all(r["status"] == "OPEN" for r in listeners)
    request(port, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
    rows = show_stat(sock)
    assert [r["stot"] for r in rows if r["svname"] == "sock-1"] == ["1"]
    sids = {r["svname"]: r["sid"] for r in rows if r["pxname"] == "b" and r["type"] == "2"}
    assert sids == {"s1": "2", "s2": "1", "s3": "4"}, sids   # HAProxy 3.5 numbers them so


def test_dash_L_sets_the_local_peer(cfg):
    path = cfg('global\n    .notice "lp=$HAPROXY_LOCALPEER"\n')
    out = subprocess.run([sluice_bin(), "-c", "-L", "node7", "-f", str(path)],
                         capture_output=True, text=True, timeout=20)
    assert out.returncode == 0, out.stderr
    assert "'lp=node7'" in out.stderr, out.stderr
    path = cfg("global\n    localpeer other\n", "twice.cfg")
    out = subprocess.run([sluice_bin(), "-c", "-L", "node7", "-f", str(path)],
                         capture_output=True, text=True, timeout=20)
    assert out.returncode != 0
    assert "'localpeer' ignored since it is already set by using the '-L' command line argument." in out.stderr


def glitch_config(port, log_port, threshold=None):
    glob = f"    tune.h1.fe.glitches-threshold {threshold}" if threshold is not None else ""
    return config(port, log_port, glob, "    option accept-unsafe-violations-in-http-request\n"
                  "    http-request return status 200 content-type text/plain "
                  "lf-string \"g=%[fc_glitches]\" if { path_beg /g }")


def glitchy(i: int) -> bytes:
    # A field name with a forbidden byte: let through by accept-unsafe-violations-in-http-request,
    # and one glitch for HAProxy 3.5.
    return b"GET /g%d HTTP/1.1\r\nHost: a\r\nX(a): 1\r\n\r\n" % i


def read_response(f) -> tuple[bytes, dict[str, str], bytes] | None:
    """One response from a keep-alive connection's file: status line, fields (lower-case
    names), body (Content-Length). None when the connection ended first."""
    status = f.readline()
    if not status:
        return None
    fields = {}
    while (line := f.readline()) not in (b"\r\n", b""):
        k, _, v = line.decode().partition(":")
        fields[k.strip().lower()] = v.strip()
    return status, fields, f.read(int(fields.get("content-length", "0")))


def keepalive_answers(port, requests: list[bytes]) -> tuple[list[str], bool]:
    """Sends the requests one after the other on one connection; the bodies of the answers and
    whether the last one said `connection: close`."""
    bodies, closing = [], False
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        f = s.makefile("rb")
        for req in requests:
            try:
                s.sendall(req)
            except OSError:
                break
            r = read_response(f)
            if r is None:
                break
            closing = closing or r[1].get("connection", "").lower() == "close"
            bodies.append(r[2].decode())
    return bodies, closing


def test_glitches_are_counted_and_bound_the_connection(cfg, sluice, udp_log):
    # Measured on HAProxy 3.5: one glitch per request that had one; without a threshold the
    # connection goes on; with 3, the request that makes 2 glitches says `connection: close`.
    ports = [free_port() for _ in range(3)]
    sluice(cfg(glitch_config(ports[0], udp_log.port)), wait_ports=[ports[0]])
    plain = b"GET /g HTTP/1.1\r\nHost: a\r\n\r\n"
    assert keepalive_answers(ports[0], [glitchy(0), plain, glitchy(1)]) == (["g=1", "g=1", "g=2"], False)
    sluice(cfg(glitch_config(ports[1], udp_log.port, 3), name="t3.cfg"), wait_ports=[ports[1]])
    assert keepalive_answers(ports[1], [glitchy(i) for i in range(4)]) == (["g=1", "g=2"], True)
    # A threshold of 1: the first glitch closes the connection without an answer.
    sluice(cfg(glitch_config(ports[2], udp_log.port, 1), name="t1.cfg"), wait_ports=[ports[2]])
    assert keepalive_answers(ports[2], [glitchy(0), plain]) == ([], False)
    assert keepalive_answers(ports[2], [plain, plain]) == (["g=0", "g=0"], False)


def test_glitches_threshold_values(cfg):
    # HAProxy 3.5 reads "x" as 0 (atoi); sluice's tunables take strict integers.
    for bad in ("-1",) if "haproxy" in sluice_bin() else ("x", "-1", "3x"):
        path = cfg(f"global\n    tune.h1.fe.glitches-threshold {bad}\n")
        rc, _, err = run_sluice(["-c", "-f", str(path)])
        assert rc != 0 and "'tune.h1.fe.glitches-threshold' expects a positive numeric value." in err, err


def test_server_glitches_stop_the_reuse_of_a_server_connection(cfg, sluice, udp_log, servers):
    # Each response has a field name with a forbidden byte, which
    # accept-unsafe-violations-in-http-response lets through: one glitch on its server
    # connection (bc_glitches). Measured on HAProxy 3.5 with http-reuse always: without a
    # threshold the connection serves on; with n, it is closed after the response that makes
    # n - 1 glitches, and the next request opens another.
    from fake_servers import TcpServer, request_heads

    counter = itertools.count(1)

    def answer(c, srv):
        body = b"c%d" % next(counter)
        for _ in request_heads(c):
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nX(bad): 1\r\n\r\n%s"
                      % (len(body), body))

    origin = servers.add(TcpServer(answer))
    got = {}
    for threshold in (0, 3):
        port = free_port()
        glob = f"    tune.h1.be.glitches-threshold {threshold}" if threshold else ""
        sluice(cfg(f"""
global
{glob}
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend f
    bind 127.0.0.1:{port}
    http-response set-header x-bg %[bc_glitches]
    default_backend b
backend b
    http-reuse always
    option accept-unsafe-violations-in-http-response
    server s 127.0.0.1:{origin.port}
""", name=f"be{threshold}.cfg"), wait_ports=[port])
        rows = []
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            f = s.makefile("rb")
            for i in range(4):
                s.sendall(b"GET /%d HTTP/1.1\r\nHost: a\r\n\r\n" % i)
                status, fields, body = read_response(f)
                assert b" 200 " in status
                rows.append((fields.get("x-bg"), body))
        got[threshold] = rows
    # The counts, and which responses shared a server connection (the body names it).
    conns = {t: [r[1] for r in rows] for t, rows in got.items()}
    assert [r[0] for r in got[0]] == ["1", "2", "3", "4"] and len(set(conns[0])) == 1, got
    assert [r[0] for r in got[3]] == ["1", "2", "1", "2"], got
    assert conns[3][0] == conns[3][1] != conns[3][2] == conns[3][3], got

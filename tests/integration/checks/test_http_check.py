"""HTTP health checks: option httpchk, http-check send / expect."""
from sluice_harness import free_port, wait_until

from checks_util import HttpServer, config, row


def test_httpchk_against_nginx(cfg, sluice, nginx, short_tmp, udp_log):
    port, sock = free_port(), short_tmp / "stats.sock"
    srv = f"    server web 127.0.0.1:{nginx.port} check inter 200ms"
    sluice(cfg(config(port, sock, srv, "    option httpchk GET /", udp_log.port)),
           wait_ports=[port], wait_unix=[sock])
    wait_until(lambda: row(sock, "web")["check_status"] == "L7OK", timeout=3)
    # UP 0/3 after the first pass (the counter starts at 0, as in HAProxy 3.5), UP after rise.
    wait_until(lambda: row(sock, "web")["status"] == "UP", timeout=3)
    r = row(sock, "web")
    assert r["check_code"] == "200"
    assert r["check_desc"] == "Layer7 check passed"


def test_default_request_and_500_goes_down(cfg, sluice, servers, short_tmp, udp_log):
    port, sock = free_port(), short_tmp / "stats.sock"
    bad = servers.add(HttpServer(status="500 Internal Server Error"))
    good = servers.add(HttpServer())
    srv = (f"    server bad 127.0.0.1:{bad.port} check inter 200ms\n"
           f"    server good 127.0.0.1:{good.port} check inter 200ms")
    sluice(cfg(config(port, sock, srv, "    option httpchk", udp_log.port)),
           wait_ports=[port], wait_unix=[sock])
    wait_until(lambda: row(sock, "bad")["status"] == "DOWN", timeout=3)
    r = row(sock, "bad")
    assert r["check_status"] == "L7STS"
    assert r["check_code"] == "500"
    assert r["last_chk"] == "Internal Server Error"
    msg = udp_log.wait_for(lambda m: "Server be/bad is DOWN" in m)
    assert ('reason: Layer7 wrong status, code: 500, info: "Internal Server Error", check duration: '
            in msg), msg
    wait_until(lambda: row(sock, "good")["check_status"] == "L7OK", timeout=3)
    # The default request of `option httpchk`.
    assert good.results[0].startswith(b"OPTIONS / HTTP/1.0\r\n"), good.results[0]


def test_http_check_send_and_expect_string(cfg, sluice, servers, short_tmp):
    port, sock = free_port(), short_tmp / "stats.sock"
    alive = servers.add(HttpServer(body="status: alive\n"))
    dead = servers.add(HttpServer(body="status: maintenance\n"))
    srv = (f"    server a 127.0.0.1:{alive.port} check inter 200ms\n"
           f"    server d 127.0.0.1:{dead.port} check inter 200ms")
    extra = ("    option httpchk\n"
             "    http-check send meth GET uri /health ver HTTP/1.1 hdr Host svc.example\n"
             "    http-check expect string alive")
    sluice(cfg(config(port, sock, srv, extra)), wait_ports=[port], wait_unix=[sock])
    wait_until(lambda: row(sock, "d")["status"] == "DOWN", timeout=3)
    assert row(sock, "d")["check_status"] == "L7RSP"
    wait_until(lambda: row(sock, "a")["check_status"] == "L7OK", timeout=3)
    wait_until(lambda: row(sock, "a")["status"] == "UP", timeout=3)
    req = alive.results[0]
    assert req.startswith(b"GET /health HTTP/1.1\r\n"), req
    # Field names go lower-case and HTTP/1.1 asks for the close, as HAProxy 3.5 writes them.
    assert req == b"GET /health HTTP/1.1\r\nhost: svc.example\r\nconnection: close\r\n\r\n", req


def test_expect_status_and_rstatus(cfg, sluice, servers, short_tmp):
    port, sock = free_port(), short_tmp / "stats.sock"
    s404 = servers.add(HttpServer(status="404 Not Found"))
    srv = f"    server s 127.0.0.1:{s404.port} check inter 200ms"
    sluice(cfg(config(port, sock, srv, "    option httpchk\n    http-check expect status 404")),
           wait_ports=[port], wait_unix=[sock])
    wait_until(lambda: row(sock, "s")["check_status"] == "L7OK", timeout=3)
    assert row(sock, "s")["check_code"] == "404"


def test_garbage_is_a_socket_error(cfg, sluice, servers, short_tmp):
    """An answer that is not HTTP: HAProxy 3.5 reports a socket error (SOCKERR), no words."""
    from sluice_harness import TcpServer

    def junk(conn, _srv):
        conn.recv(4096)
        conn.sendall(b"SSH-2.0-OpenSSH_9.0\r\n")

    port, sock = free_port(), short_tmp / "stats.sock"
    j = servers.add(TcpServer(junk))
    sluice(cfg(config(port, sock, f"    server j 127.0.0.1:{j.port} check inter 200ms",
                      "    option httpchk")), wait_ports=[port], wait_unix=[sock])
    wait_until(lambda: row(sock, "j")["status"] == "DOWN", timeout=3)
    assert row(sock, "j")["check_status"] == "SOCKERR"

"""TCP (connect) health checks: DOWN within fall x inter, back UP within rise x inter, no
client errors in between, show stat fields and the state-change log lines."""
import threading
import time

from sluice_harness import (EchoServer, TcpServer, echo_roundtrip, free_port, refused_port,
                            stat_int, wait_until)

from checks_util import config, row

INTER = 0.2   # seconds


def test_killed_server_goes_down_and_comes_back(cfg, sluice, servers, short_tmp, udp_log):
    port, sock = free_port(), short_tmp / "stats.sock"
    s1, s2 = servers.echo(), servers.echo()
    s1_port = s1.port
    srv = (f"    server s1 127.0.0.1:{s1.port} check inter 200ms rise 2 fall 2\n"
           f"    server s2 127.0.0.1:{s2.port} check inter 200ms rise 2 fall 2")
    sluice(cfg(config(port, sock, srv, "    retries 3\n    option redispatch", udp_log.port)),
           wait_ports=[port], wait_unix=[sock])
    wait_until(lambda: row(sock, "s1")["status"] == "UP" and row(sock, "s2")["status"] == "UP",
               timeout=3)
    r = row(sock, "s1")
    assert r["check_status"] == "L4OK"
    assert r["check_rise"] == "2" and r["check_fall"] == "2" and r["check_health"] == "3"
    assert r["chkdown"] == "0" and r["chkfail"] == "0"

    # Clients keep going through the whole DOWN/UP cycle and must never see an error. The kill
    # itself happens between two of their exchanges: one in flight on s1 at that instant would
    # lose its server mid-request, which no proxy can hide (a connection that succeeded is not
    # retried); what is tested is that every connection after it is retried or redispatched.
    errors, done, count = [], threading.Event(), [0]
    pause, idle = threading.Event(), threading.Event()

    def traffic():
        i = 0
        while not done.is_set():
            if pause.is_set():
                idle.set()
                time.sleep(0.005)
                continue
            idle.clear()
            payload = f"{i}\n".encode()
            try:
                if echo_roundtrip(port, payload) != payload:
                    errors.append(f"bad echo {i}")
            except OSError as e:
                errors.append(repr(e))
            i += 1
            count[0] = i
            time.sleep(0.005)

    t = threading.Thread(target=traffic, daemon=True)
    t.start()
    try:
        time.sleep(0.2)
        pause.set()
        wait_until(idle.is_set, timeout=5, message="the client between two exchanges")
        s1.stop()
        pause.clear()
        killed = time.monotonic()
        wait_until(lambda: row(sock, "s1")["status"] == "DOWN", timeout=5)
        took = time.monotonic() - killed
        # fall x inter, plus one interval of phase and a margin for a loaded machine.
        assert took < 2 * INTER + INTER + 1.0, f"DOWN after {took:.2f}s"
        r = row(sock, "s1")
        assert r["check_status"] == "L4CON"
        # HAProxy 3.5 writes the errno by its name (2.6 wrote "Connection refused").
        assert r["last_chk"] == "ECONNREFUSED returned by OS (Connection refused)"
        assert r["chkdown"] == "1"
        assert stat_int(r, "chkfail") >= 1
        assert stat_int(r, "lastchg") <= 1
        assert r["check_health"] == "0"
        msg = udp_log.wait_for(lambda m: "Server be/s1 is DOWN" in m)
        assert ('reason: Layer4 connection problem, info: "ECONNREFUSED returned by OS (Connection refused)", check duration: '
                in msg), msg
        assert "1 active and 0 backup servers left." in msg, msg
        assert "sessions active, 0 requeued, 0 remaining in queue." in msg, msg

        revived = servers.add(EchoServer(port=s1_port))
        back = time.monotonic()
        wait_until(lambda: row(sock, "s1")["status"] == "UP", timeout=5)
        took = time.monotonic() - back
        assert took < 2 * INTER + INTER + 1.0, f"UP after {took:.2f}s"
        msg = udp_log.wait_for(lambda m: "Server be/s1 is UP" in m)
        assert "reason: Layer4 check passed, check duration: " in msg, msg
        assert "2 active and 0 backup servers online." in msg, msg
        # It takes traffic again.
        wait_until(lambda: revived.bytes_received > 0, timeout=5)
        r = row(sock, "s1")
        assert r["chkdown"] == "1"
        assert r["check_status"] == "L4OK"
    finally:
        done.set()
        t.join(timeout=10)
    assert count[0] > 5
    assert not errors, errors[:5]


def test_down_server_gets_no_new_connections(cfg, sluice, servers, short_tmp):
    """The service port works, the check port is refused: DOWN, and no traffic reaches it."""
    port, sock = free_port(), short_tmp / "stats.sock"
    s1, s2 = servers.echo(), servers.echo()
    srv = (f"    server s1 127.0.0.1:{s1.port} check port {refused_port()} inter 100ms\n"
           f"    server s2 127.0.0.1:{s2.port} check inter 100ms")
    sluice(cfg(config(port, sock, srv)), wait_ports=[port], wait_unix=[sock])
    wait_until(lambda: row(sock, "s1")["status"] == "DOWN", timeout=3)
    for i in range(20):
        assert echo_roundtrip(port, f"{i}\n".encode()) == f"{i}\n".encode()
    assert s1.bytes_received == 0
    assert s2.connections >= 20


def test_status_strings_while_rising(cfg, sluice, servers, short_tmp):
    """A DOWN server seen by a slow-rising check shows `DOWN x/rise`, with a long interval
    between checks so the intermediate state is observable."""
    port, sock = free_port(), short_tmp / "stats.sock"
    dead = refused_port()
    s2 = servers.echo()
    srv = (f"    server s1 127.0.0.1:{dead} check inter 100ms fastinter 3s rise 3 fall 2\n"
           f"    server s2 127.0.0.1:{s2.port}")
    sluice(cfg(config(port, sock, srv)), wait_ports=[port], wait_unix=[sock])
    wait_until(lambda: row(sock, "s1")["status"] == "DOWN", timeout=3)
    assert row(sock, "s2")["status"] == "no check"
    assert row(sock, "s2")["check_status"] == ""
    # Bring it back: the first good check gives DOWN 1/3, the next is 3 s (fastinter) away.
    srv1 = servers.add(TcpServer(port=dead))
    wait_until(lambda: row(sock, "s1")["status"] == "DOWN 1/3", timeout=3)
    r = row(sock, "s1")
    assert r["check_status"] == "L4OK" and r["check_health"] == "1"
    # The check's connection completed in the kernel; the fake server's accept thread may
    # count it a moment later.
    wait_until(lambda: srv1.connections >= 1, timeout=3, message="the check's connection")


def test_check_requires_a_port(cfg, tmp_path):
    from sluice_harness import run_sluice
    path = cfg("""
listen l
    bind 127.0.0.1:8443
    server s9 127.0.0.1 check
""")
    rc, _out, err = run_sluice(["-c", "-f", str(path)])
    assert rc != 0
    assert "proxy 'l': server 's9' has neither service port nor check port." in err

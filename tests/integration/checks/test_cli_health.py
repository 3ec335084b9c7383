"""The CLI drives a checked server: `disable health` stops its checks and shows `no check`,
`enable health` resumes them, `set server ... health down|up` forces the verdict."""
from sluice_harness import cli, echo_roundtrip, free_port, stat_int, wait_until

from checks_util import config, row


def test_cli_health_commands_drive_the_checker(cfg, sluice, servers, short_tmp):
    port, sock = free_port(), short_tmp / "stats.sock"
    s1, s2 = servers.echo(), servers.echo()
    # A long interval: the forced verdict must not be overturned by a check during the test;
    # init-state up: one passing check makes them fully UP.
    srv = (f"    server s1 127.0.0.1:{s1.port} check inter 3s rise 2 fall 2 init-state up\n"
           f"    server s2 127.0.0.1:{s2.port} check inter 3s rise 2 fall 2 init-state up")
    sluice(cfg(config(port, sock, srv)), wait_ports=[port], wait_unix=[sock])
    wait_until(lambda: row(sock, "s1")["status"] == "UP", timeout=3)

    assert cli(str(sock), "set server be/s1 health down").strip() == ""
    wait_until(lambda: row(sock, "s1")["status"].startswith("DOWN"), timeout=3)
    before = stat_int(row(sock, "s1"), "stot")
    for _ in range(6):
        assert echo_roundtrip(port) == b"ping\n"
    # Sessions, not connections: the checks themselves also connect to the echo server.
    assert stat_int(row(sock, "s1"), "stot") == before, "a forced-DOWN server takes no traffic"

    assert cli(str(sock), "set server be/s1 health up").strip() == ""
    wait_until(lambda: row(sock, "s1")["status"] == "UP", timeout=3)
    for _ in range(6):
        assert echo_roundtrip(port) == b"ping\n"
    assert stat_int(row(sock, "s1"), "stot") > before

    assert cli(str(sock), "disable health be/s1").strip() == ""
    wait_until(lambda: row(sock, "s1")["status"] == "no check", timeout=3)
    assert row(sock, "s1")["check_status"] == ""
    # show servers state still says a check is configured (2), not enabled (no 4), and keeps
    # its last result: status 6 (L4OK), result 3 (passed), health 3 (rise 2 + fall 2 - 1).
    state = [l.split() for l in cli(str(sock), "show servers state be").splitlines()
             if l and not l.startswith("#") and len(l.split()) > 13 and l.split()[3] == "s1"]
    assert state and state[0][10:14] == ["6", "3", "3", "2"], state
    assert cli(str(sock), "enable health be/s1").strip() == ""
    wait_until(lambda: row(sock, "s1")["status"] == "UP" and row(sock, "s1")["check_status"] == "L4OK",
               timeout=5)


def test_cli_moves_the_check_and_the_agent(cfg, sluice, servers, short_tmp):
    """`set server ... check-port|check-addr|agent-port|agent-addr|agent-send` move the next
    checks (answers and show servers state as HAProxy 3.5's; its 3.5-dev build refuses a valid
    check-addr, sluice takes it)."""
    from checks_util import AcceptRecorder
    from sluice_harness import TcpServer

    port, sock = free_port(), short_tmp / "stats.sock"
    s1 = servers.echo()
    moved = servers.add(AcceptRecorder())
    got: list[bytes] = []

    def agent(c, _srv):
        c.settimeout(0.05)
        try:
            got.append(c.recv(100))
        except OSError:
            pass
        c.sendall(b"up\n")

    a1 = servers.add(TcpServer(agent))
    a2 = servers.add(TcpServer(agent))
    srv = (f"    server s1 127.0.0.1:{s1.port} check inter 100 agent-check agent-port {a1.port} "
           f"agent-inter 100\n    server s2 127.0.0.1:{s1.port}")
    sluice(cfg(config(port, sock, srv)), wait_ports=[port], wait_unix=[sock])
    assert cli(str(sock), f"set server be/s1 check-port {moved.port}").strip() == ""
    wait_until(lambda: len(moved.times) >= 2, 3)
    assert cli(str(sock), "set server be/s1 check-port x").strip() == "provided port is not an integer"
    assert cli(str(sock), "set server be/s1 check-port 70000").strip() == "provided port is invalid"
    assert cli(str(sock), "set server be/s1 check-addr nohost").strip() == "invalid addr 'nohost'"
    assert cli(str(sock), "set server be/s1 check-addr 127.0.0.1").strip() == ""
    assert cli(str(sock), f"set server be/s1 agent-port {a2.port}").strip() == ""
    assert cli(str(sock), "set server be/s1 agent-send hello\\n").strip() == ""
    wait_until(lambda: a2.connections >= 1 and any(g.startswith(b"hello") for g in got), 3)
    assert cli(str(sock), "set server be/s2 check-port 80").strip() == \
        "health checks are not enabled on this server"
    assert cli(str(sock), "set server be/s2 agent-send x").strip() == \
        "agent checks are not enabled on this server."
    state = [l.split() for l in cli(str(sock), "show servers state be").splitlines()
             if len(l.split()) > 20 and l.split()[3] == "s1"][0]
    assert state[-4:] == [str(moved.port), "127.0.0.1", "-", str(a2.port)], state
    # A check stopped by `disable health|agent` is "not enabled" for these commands, as in
    # HAProxy 3.5 (agent-addr/agent-port without the period agent-send's sentence has).
    assert cli(str(sock), "disable health be/s1").strip() == ""
    assert cli(str(sock), "set server be/s1 check-port 80").strip() == \
        "health checks are not enabled on this server"
    assert cli(str(sock), "disable agent be/s1").strip() == ""
    for cmd, answer in [("agent-port 80", "agent checks are not enabled on this server"),
                        ("agent-addr 127.0.0.2", "agent checks are not enabled on this server"),
                        ("agent-send x", "agent checks are not enabled on this server."),
                        ("agent up", "agent checks are not enabled on this server.")]:
        assert cli(str(sock), f"set server be/s1 {cmd}").strip() == answer, cmd
    assert cli(str(sock), "enable agent be/s1").strip() == ""
    assert cli(str(sock), "set server be/s1 agent-port 80").strip() == ""

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

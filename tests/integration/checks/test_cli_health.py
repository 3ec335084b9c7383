"""The CLI drives a checked server: `disable health` stops its checks and shows `no check`,
`enable health` resumes them, `set server ... health down|up` forces the verdict."""
from sluice_harness import cli, echo_roundtrip, free_port, wait_until

from checks_util import config, row


def test_cli_health_commands_drive_the_checker(cfg, sluice, servers, short_tmp):
    port, sock = free_port(), short_tmp / "stats.sock"
    s1, s2 = servers.echo(), servers.echo()
    srv = (f"    server s1 127.0.0.1:{s1.port} check inter 200ms rise 2 fall 2\n"
           f"    server s2 127.0.0.1:{s2.port} check inter 200ms rise 2 fall 2")
    sluice(cfg(config(port, sock, srv)), wait_ports=[port], wait_unix=[sock])
    wait_until(lambda: row(sock, "s1")["status"] == "UP", timeout=3)

    assert cli(str(sock), "set server be/s1 health down").strip() == ""
    wait_until(lambda: row(sock, "s1")["status"].startswith("DOWN"), timeout=3)
    before = s1.connections
    for _ in range(6):
        assert echo_roundtrip(port) == b"ping\n"
    assert s1.connections == before, "a forced-DOWN server takes no traffic"
    # The real checks succeed again: the server climbs back UP by itself (rise 2).
    wait_until(lambda: row(sock, "s1")["status"] == "UP", timeout=5)

    assert cli(str(sock), "disable health be/s1").strip() == ""
    wait_until(lambda: row(sock, "s1")["status"] == "no check", timeout=3)
    assert row(sock, "s1")["check_status"] == ""
    assert cli(str(sock), "enable health be/s1").strip() == ""
    wait_until(lambda: row(sock, "s1")["status"] == "UP" and row(sock, "s1")["check_status"] == "L4OK",
               timeout=3)

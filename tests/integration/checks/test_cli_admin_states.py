"""How `set server ... health stopping` and `state maint|ready` (and their `disable/enable
server` aliases) move a checked server (spec cli-and-stats 3.5 and 5, checklist 11)."""
import time

from sluice_harness import cli, free_port, stat_int, wait_until

from checks_util import config, row


def _start(cfg, sluice, servers, short_tmp, inter="10s"):
    port, sock = free_port(), short_tmp / "stats.sock"
    s1 = servers.echo()
    # A long interval: once the first check has passed, no other check runs during the test,
    # so what the test sees is what the CLI command did.
    srv = f"    server s1 127.0.0.1:{s1.port} check inter {inter} rise 2 fall 3"
    sluice(cfg(config(port, sock, srv)), wait_ports=[port], wait_unix=[sock])
    # The first check (within one interval, spread) would undo the forced state; wait for it.
    cli(str(sock), "set server be/s1 health up")
    wait_until(lambda: row(sock, "s1")["check_status"] == "L4OK", timeout=20)
    cli(str(sock), "set server be/s1 health up")
    wait_until(lambda: row(sock, "s1")["status"] == "UP", timeout=3)
    return port, sock


def test_health_stopping_is_nolb_at_the_top(cfg, sluice, servers, short_tmp):
    port, sock = _start(cfg, sluice, servers, short_tmp)
    before = row(sock, "s1")
    assert cli(str(sock), "set server be/s1 health stopping") == "\n"
    wait_until(lambda: row(sock, "s1")["status"] != "UP", timeout=3)
    r = row(sock, "s1")
    # rise + fall - 1 = 4: NOLB without a progress counter, and not a DOWN transition.
    assert r["status"] == "NOLB", r["status"]
    assert r["check_health"] == "4"
    assert r["chkdown"] == before["chkdown"]
    # A stopping server takes no new load-balanced connections: the backend has none left.
    assert row(sock, "BACKEND")["status"] == "DOWN"
    lines = cli(str(sock), "show servers state be").split("\n")
    assert lines[2].split()[5] == "3", lines   # srv_op_state 3 = stopping
    assert cli(str(sock), "set server be/s1 health up") == "\n"
    wait_until(lambda: row(sock, "s1")["status"] == "UP", timeout=3)


def test_maint_counts_a_down_and_ready_restarts_at_rise(cfg, sluice, servers, short_tmp):
    port, sock = _start(cfg, sluice, servers, short_tmp)
    before = stat_int(row(sock, "s1"), "chkdown")
    assert cli(str(sock), "set server be/s1 state maint") == "\n"
    wait_until(lambda: row(sock, "s1")["status"] == "MAINT", timeout=3)
    r = row(sock, "s1")
    assert stat_int(r, "chkdown") == before + 1, r
    assert r["check_status"] == ""
    assert cli(str(sock), "set server be/s1 state ready") == "\n"
    # health = rise: UP, one failure from DOWN (x = health - rise + 1, y = fall).
    r = row(sock, "s1")
    assert r["status"] == "UP 1/3", r["status"]
    assert r["check_health"] == "2"
    # A second maintenance counts again; the deprecated aliases behave the same.
    assert cli(str(sock), "disable server be/s1") == "\n"
    assert stat_int(row(sock, "s1"), "chkdown") == before + 2
    assert cli(str(sock), "enable server be/s1") == "\n"
    assert row(sock, "s1")["status"] == "UP 1/3"
    # Maintenance of a server already in maintenance is no new transition.
    cli(str(sock), "set server be/s1 state maint")
    cli(str(sock), "set server be/s1 state maint")
    assert stat_int(row(sock, "s1"), "chkdown") == before + 3

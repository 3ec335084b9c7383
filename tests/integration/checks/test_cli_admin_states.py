"""How `set server ... health stopping` and `state maint|ready` (and their `disable/enable
server` aliases) move a checked server (spec cli-and-stats 3.5 and 5, checklist 11)."""

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


def test_admin_changes_are_logged(cfg, sluice, servers, short_tmp, udp_log):
    # HAProxy 2.6's lines and levels for the same commands (syslog <pri> = local0 x 8 + level).
    port, sock = free_port(), short_tmp / "stats.sock"
    s1, s2 = servers.echo(), servers.echo()
    srv = (f"    server s1 127.0.0.1:{s1.port} check inter 200ms rise 2 fall 3\n"
           f"    server s2 127.0.0.1:{s2.port} check inter 200ms rise 2 fall 3")
    sluice(cfg(config(port, sock, srv, log_port=udp_log.port)), wait_ports=[port], wait_unix=[sock])
    wait_until(lambda: row(sock, "s1")["check_status"] == "L4OK", timeout=5)
    left = ". 1 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue."
    online = ". 1 active and 0 backup servers online. 0 sessions requeued, 0 total in queue."
    expected = [
        ("set server be/s1 state maint", 129, "Server be/s1 is going DOWN for maintenance" + left),
        ("set server be/s1 state ready", 133, "Server be/s1 is UP/READY (leaving forced maintenance)."),
        ("set server be/s1 state drain", 133, "Server be/s1 enters drain state" + online),
        ("set server be/s1 state ready", 133, "Server be/s1 is UP (leaving forced drain)."),
        ("set server be/s1 state drain", 133, "Server be/s1 enters drain state" + online),
        ("set server be/s1 state maint", 133, "Server be/s1 is going DOWN for maintenance" + left),
        ("set server be/s1 state drain", 133, "Server be/s1 is UP/DRAIN (leaving forced maintenance)."),
        (None, 133, "Server be/s1 remains in forced drain mode."),
        ("set server be/s1 state ready", 133, "Server be/s1 is UP (leaving forced drain)."),
        ("disable server be/s1", 129, "Server be/s1 is going DOWN for maintenance" + left),
        ("enable server be/s1", 133, "Server be/s1 is UP/READY (leaving forced maintenance)."),
    ]
    seen = 0   # messages already matched: the same line comes back more than once

    def next_line(text):
        for i, m in enumerate(udp_log.texts()[seen:], seen):
            if m.rstrip("\n").endswith(text):
                return i, m
        return None

    for cmd, pri, text in expected:
        if cmd:
            assert cli(str(sock), cmd) == "\n", cmd
        if text:
            i, msg = wait_until(lambda t=text: next_line(t), timeout=3,
                                message=lambda t=text: f"{t!r} in {udp_log.texts()[seen:]!r}")
            assert msg.startswith(f"<{pri}>"), msg
            seen = i + 1
    n = len([m for m in udp_log.texts() if "Server be/s1" in m])
    assert n == len([e for e in expected if e[2]]), "\n".join(udp_log.texts())

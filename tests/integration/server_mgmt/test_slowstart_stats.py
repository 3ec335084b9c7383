"""Slow start shows in `show stat` (spec cli-and-stats.md 3.4): `throttle` is the slow-start
percentage while the server warms up, `weight` its effective weight, and the BACKEND `weight`
the sum of the effective weights. The steps are HAProxy 2.6's for weight 10 and slowstart 4s
(measured: throttle 6/31/56, weight 1/4/6, backend 11/14/16)."""
import time

from sluice_harness import DEFAULTS, cli, free_port, parse_show_stat, stat_row, wait_until

# (throttle, server weight, backend weight) at 0, 1, 2 and 3 whole seconds.
STEPS = [("6", "1", "11"), ("31", "4", "14"), ("56", "6", "16"), ("81", "9", "19")]


def test_slowstart_in_show_stat(cfg, sluice, servers, short_tmp):
    e1, e2 = servers.echo(), servers.echo()
    port, admin = free_port(), str(short_tmp / "admin.sock")
    sluice(cfg(f"""
global
    stats socket {admin} level admin
{DEFAULTS}
listen be
    bind 127.0.0.1:{port}
    balance roundrobin
    server s1 127.0.0.1:{e1.port} weight 10
    server s2 127.0.0.1:{e2.port} weight 10 slowstart 4s
"""), wait_ports=[port], wait_unix=[admin])

    def read():
        _, rows = parse_show_stat(cli(admin, "show stat"))
        s2, be = stat_row(rows, "be", "s2"), stat_row(rows, "be", "BACKEND")
        return s2["throttle"], s2["weight"], be["weight"]

    assert read() == ("", "10", "20"), "no slow start at start-up"
    assert cli(admin, "set server be/s2 state maint").strip() == ""
    assert cli(admin, "set server be/s2 state ready").strip() == ""
    # No traffic: the values shown must move on with time alone.
    seen = [read()]
    deadline = time.monotonic() + 8
    while seen[-1][0] != "" and time.monotonic() < deadline:
        time.sleep(0.1)
        v = read()
        if v != seen[-1]:
            seen.append(v)
    assert seen[0] == STEPS[0], seen
    assert seen[-1] == ("", "10", "20"), seen
    ramp = seen[:-1]
    assert all(v in STEPS for v in ramp), seen
    assert [STEPS.index(v) for v in ramp] == sorted(STEPS.index(v) for v in ramp), seen
    assert len(ramp) >= 3, f"too few steps seen: {seen}"
    wait_until(lambda: read() == ("", "10", "20"), timeout=2)

"""Server management through the stats socket against real traffic (spec cli-and-stats.md
section 5, checklist items 9-22 and 30): drain and maintenance under load, weights, address
changes, maxconn, and the permission checks."""
import socket
import threading
import time

from sluice_harness import (cli, connect, echo_roundtrip, parse_show_info, parse_show_stat,
                            recv_exact, stat_row, wait_until)


def status(setup, srv):
    _, rows = parse_show_stat(cli(setup.admin, "show stat"))
    return stat_row(rows, "be", srv)


def servers_state(setup):
    lines = cli(setup.admin, "show servers state be").splitlines()
    header = lines[1].split()[1:]
    return {r.split()[3]: dict(zip(header, r.split())) for r in lines[2:] if r}


class Load:
    """Short echo round trips from a thread until stopped; counts successes and failures."""

    def __init__(self, port):
        self.port = port
        self.ok = 0
        self.errors = []
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        i = 0
        while not self._stop.is_set():
            payload = f"req {i}\n".encode()
            try:
                got = echo_roundtrip(self.port, payload)
                if got != payload:
                    self.errors.append(f"bad echo {got!r}")
                else:
                    self.ok += 1
            except (OSError, AssertionError) as e:
                self.errors.append(repr(e))
            i += 1

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join(timeout=10)

    def wait_more(self, n):
        start = self.ok
        wait_until(lambda: self.ok >= start + n or self.errors, timeout=20)


def long_conn_on(setup, echo):
    """Opens connections until one lands on `echo`; returns it (others closed)."""
    others = []
    try:
        for _ in range(10):
            before = echo.connections
            s = connect(setup.port)
            s.sendall(b"hello\n")
            assert recv_exact(s, 6) == b"hello\n"
            if echo.connections > before:
                return s
            others.append(s)
        raise AssertionError("no connection reached the wanted server")
    finally:
        for o in others:
            o.close()


def still_echoes(s, text=b"still here\n"):
    s.sendall(text)
    return recv_exact(s, len(text)) == text


def test_drain_and_maint_under_load(mgmt):                 # checklist 9, 10, 11
    held = long_conn_on(mgmt, mgmt.e1)
    with Load(mgmt.port) as load:
        load.wait_more(20)
        for state, shown in (("drain", "DRAIN"), ("maint", "MAINT")):
            assert cli(mgmt.admin, f"set server be/s1 state {state}") == "\n"
            assert status(mgmt, "s1")["status"] == shown
            # A connection whose server was picked just before the command may still be
            # connecting, or not yet accepted by the echo server's thread: let those land first.
            load.wait_more(5)
            before = mgmt.e1.connections
            load.wait_more(40)
            # No new connection reached the drained server; the established one still works.
            assert mgmt.e1.connections == before, state
            assert still_echoes(held)
        assert cli(mgmt.admin, "set server be/s1 state ready") == "\n"
        assert status(mgmt, "s1")["status"] == "no check"
        before = mgmt.e1.connections
        load.wait_more(40)
        assert mgmt.e1.connections > before
    assert not load.errors, load.errors[:5]
    assert load.ok > 100
    held.close()


def test_servers_state_reflects_admin_state(mgmt):         # checklist 30
    assert cli(mgmt.admin, "set server be/s1 state maint") == "\n"
    assert cli(mgmt.admin, "set server be/s2 state drain") == "\n"
    st = servers_state(mgmt)
    assert (st["s1"]["srv_admin_state"], st["s1"]["srv_op_state"]) == ("1", "0")
    assert (st["s2"]["srv_admin_state"], st["s2"]["srv_op_state"]) == ("8", "2")
    assert cli(mgmt.admin, "enable server be/s1") == "\n"
    assert cli(mgmt.admin, "set server be/s2 state ready") == "\n"
    st = servers_state(mgmt)
    assert st["s1"]["srv_admin_state"] == "0" and st["s2"]["srv_admin_state"] == "0"
    assert cli(mgmt.admin, "disable server be/s2") == "\n"
    assert status(mgmt, "s2")["status"] == "MAINT"


def test_weight_changes_distribution(mgmt):                # checklist 14
    def spread(n):
        a, b = mgmt.e1.connections, mgmt.e2.connections
        for i in range(n):
            assert echo_roundtrip(mgmt.port, b"w\n") == b"w\n"
        return mgmt.e1.connections - a, mgmt.e2.connections - b

    d1, d2 = spread(40)
    assert abs(d1 - d2) <= 4, (d1, d2)
    assert cli(mgmt.admin, "set server be/s2 weight 3") == "\n"
    assert cli(mgmt.admin, "get weight be/s2") == "3 (initial 1)\n\n"
    assert status(mgmt, "s2")["weight"] == "3"
    assert servers_state(mgmt)["s2"]["srv_uweight"] == "3"
    d1, d2 = spread(80)
    assert d1 + d2 == 80
    assert 2.0 <= d2 / max(d1, 1) <= 4.5, (d1, d2)
    assert cli(mgmt.admin, "set weight be/s2 0") == "\n"
    d1, d2 = spread(10)
    assert (d1, d2) == (10, 0)
    assert cli(mgmt.admin, "set server be/s2 weight 300") == \
        "Absolute weight can only be between 0 and 256 inclusive.\n\n"      # checklist 15


def test_set_server_addr_moves_new_connections(mgmt):      # checklist 16
    held = long_conn_on(mgmt, mgmt.e1)
    p1, p3 = mgmt.e1.port, mgmt.e3.port
    assert cli(mgmt.admin, f"set server be/s1 addr 127.0.0.1 port {p3}") == \
        f"port changed from '{p1}' to '{p3}' by 'stats socket command'\n\n"
    assert cli(mgmt.admin, f"set server be/s1 addr 127.0.0.1 port {p3}") == "nothing changed\n\n"
    assert cli(mgmt.admin, "set server be/s2 state maint") == "\n"
    before1, before3 = mgmt.e1.connections, mgmt.e3.connections
    for _ in range(10):
        assert echo_roundtrip(mgmt.port, b"a\n") == b"a\n"
    assert mgmt.e1.connections == before1
    assert mgmt.e3.connections == before3 + 10
    assert still_echoes(held)          # established connections stay where they are
    held.close()
    assert status(mgmt, "s1")["addr"] == f"127.0.0.1:{p3}"
    st = servers_state(mgmt)["s1"]
    assert (st["srv_addr"], st["srv_port"]) == ("127.0.0.1", str(p3))
    # An address nobody listens on: the change is taken, new connections fail over it.
    assert cli(mgmt.admin, "set server be/s1 addr 127.0.0.2") == \
        "IP changed from '127.0.0.1' to '127.0.0.2' by 'stats socket command'\n\n"
    assert cli(mgmt.admin, "set server be/s1 addr 127.0.0.2") == "nothing changed\n\n"
    assert cli(mgmt.admin, "set server be/s1 addr foo") == "Invalid addr 'foo'\n\n"


def test_set_maxconn_server_limits_concurrency(mgmt):
    assert cli(mgmt.admin, "set maxconn server be/s1 2") == "\n"
    assert status(mgmt, "s1")["slim"] == "2"
    conns = []
    try:
        for i in range(6):
            s = connect(mgmt.port)
            s.sendall(b"x\n")
            assert recv_exact(s, 2) == b"x\n"
            conns.append(s)
        assert mgmt.e1.active <= 2 and mgmt.e1.active + mgmt.e2.active == 6
        assert cli(mgmt.admin, "set maxconn server be/s1 0") == "\n"
        assert status(mgmt, "s1")["slim"] == ""
        before = mgmt.e1.connections
        for i in range(4):
            s = connect(mgmt.port)
            s.sendall(b"y\n")
            assert recv_exact(s, 2) == b"y\n"
            conns.append(s)
        assert mgmt.e1.connections > before
    finally:
        for s in conns:
            s.close()
    assert cli(mgmt.admin, "set maxconn server be/s1 x") == \
        "maxconn string empty or preceded by garbage\n\n"


def test_set_maxconn_frontend_and_global(mgmt):            # checklist 19, 20
    assert cli(mgmt.admin, "set maxconn frontend fe 500") == "\n"
    _, rows = parse_show_stat(cli(mgmt.admin, "show stat"))
    assert stat_row(rows, "fe", "FRONTEND")["slim"] == "500"
    assert cli(mgmt.admin, "set maxconn frontend nope 5") == "No such frontend.\n\n"
    assert cli(mgmt.admin, "set maxconn frontend fe -1") == "Value out of range.\n\n"
    info = parse_show_info(cli(mgmt.admin, "show info"))
    hard = int(info["Hard_maxconn"])
    assert cli(mgmt.admin, f"set maxconn global {hard + 1}") == "Value out of range.\n\n"
    assert cli(mgmt.admin, "set maxconn global 50") == "\n"
    assert parse_show_info(cli(mgmt.admin, "show info"))["Maxconn"] == "50"
    assert cli(mgmt.admin, "set maxconn global 0") == "\n"
    assert parse_show_info(cli(mgmt.admin, "show info"))["Maxconn"] == str(hard)
    assert echo_roundtrip(mgmt.port) == b"ping\n"


def test_frontend_maxconn_one_still_serves(mgmt):
    assert cli(mgmt.admin, "set maxconn frontend fe 1") == "\n"
    for _ in range(5):
        assert echo_roundtrip(mgmt.port) == b"ping\n"
    assert cli(mgmt.admin, "set maxconn frontend fe 100") == "\n"


def test_health_without_checks(mgmt):                      # checklist 17, 18
    assert cli(mgmt.admin, "set server be/s1 health down") == "\n"
    assert status(mgmt, "s1")["status"] == "DOWN"
    assert servers_state(mgmt)["s1"]["srv_op_state"] == "0"
    before = mgmt.e1.connections
    for _ in range(6):
        assert echo_roundtrip(mgmt.port) == b"ping\n"
    assert mgmt.e1.connections == before
    assert cli(mgmt.admin, "set server be/s1 health up") == "\n"
    assert status(mgmt, "s1")["status"] == "no check"
    assert cli(mgmt.admin, "set server be/s1 health sideways") == \
        "'set server <srv> health' expects 'up', 'stopping', or 'down'.\n\n"
    assert cli(mgmt.admin, "disable health be/s1") == "\n"
    row = status(mgmt, "s1")
    assert row["status"] == "no check" and row["check_status"] == ""
    assert cli(mgmt.admin, "enable health be/s1") == \
        "Health check was not configured on this server, cannot enable.\n\n"


def test_errors_and_resolution(mgmt):                      # checklist 12, 13
    assert cli(mgmt.admin, "set server be/s1 state foo") == \
        "'set server <srv> state' expects 'ready', 'drain' and 'maint'.\n\n"
    assert cli(mgmt.admin, "set server be/x state ready") == "No such server.\n\n"
    assert cli(mgmt.admin, "set server x/s1 state ready") == "No such backend.\n\n"
    assert cli(mgmt.admin, "set server be state ready") == "Require 'backend/server'.\n\n"
    assert cli(mgmt.admin, "set server be/s1 bogus").startswith("usage: set server <backend>/")
    assert cli(mgmt.admin, "get weight #3/#1") in ("1 (initial 1)\n\n", "No such backend.\n\n")
    assert cli(mgmt.admin, "set server be/#2 weight 50") == "\n"
    assert cli(mgmt.admin, "get weight be/s2") == "50 (initial 1)\n\n"


def test_permission_denied_below_admin(mgmt):              # checklist 22
    for cmd in ("set server be/s1 state maint", "set weight be/s1 5", "disable server be/s1",
                "set maxconn server be/s1 1", "set maxconn frontend fe 1",
                "set maxconn global 1", "set server be/s1 addr 127.0.0.9", "enable health be/s1"):
        assert cli(mgmt.operator, cmd) == "Permission denied\n\n", cmd
    row = status(mgmt, "s1")
    assert row["status"] == "no check" and row["weight"] == "1"
    assert row["addr"] == f"127.0.0.1:{mgmt.e1.port}"
    assert cli(mgmt.operator, "get weight be/s1") == "1 (initial 1)\n\n"
    assert cli(mgmt.admin, "user;set server be/s1 state maint") == "\nPermission denied\n\n"
    assert status(mgmt, "s1")["status"] == "no check"


def test_show_servers_state_says_which_ids_were_forced(cfg, sluice, short_tmp):
    from sluice_harness import DEFAULTS, free_port
    sock = short_tmp / "s.sock"
    sluice(cfg(f"""
global
    stats socket {sock} level admin
{DEFAULTS}
backend forced
    id 40
    server a 127.0.0.1:1 id 7
    server b 127.0.0.1:2
backend auto
    server c 127.0.0.1:3
"""), wait_unix=[sock])
    rows = [l.split() for l in cli(sock, "show servers state").splitlines()[2:] if l]
    # bk_f_forced_id and srv_f_forced_id, the 16th and 17th columns.
    got = {r[3]: (r[0], r[15], r[16]) for r in rows}
    assert got == {"a": ("40", "1", "1"), "b": ("40", "1", "0"), "c": (got["c"][0], "0", "0")}, rows
